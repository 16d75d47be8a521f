# claw_memory.session.indexer: what a record says (its searchable text and terms), and the
# text index of a log or archive segment kept up to date (session/tix.py has the format).
# MIT license
#
# An index is brought up to date by appending blocks for the records after its last one
# (`catch_up`), read line by line from the file (bounded pieces) and parsed one at a time, so
# that indexing needs a few KiB of heap whatever the file's size. An index that no longer
# matches its file, or that a cut left torn, is written again from the start (`update`).
# The persist path catches the log's index up when enough bytes wait (write.flush_index);
# a search catches up what is left.

from .. import fsutil, text
from .._compat import const
from ..core import FINAL, TOOL_CALL, TOOL_RESULTS, USER
from ..messages import visible_text
from ..terms import index_hash, terms
from . import format as fmt_
from . import tix
from .state import kind

TEXT_MAX = const(8192)  # bytes of a record's text indexed and shown
_SKIP = ("id", "type", "role", "tool_call_id", "tool_use_id", "call_id", "_claw_provider_state")
ROLES = {USER: "user", FINAL: "assistant", TOOL_CALL: "assistant", TOOL_RESULTS: "tool"}


def record_text(obj, k):
    """The searchable text of a parsed record of type `k`: the visible text of user and
    assistant messages; every string of a tool call or tool result (names, arguments,
    output) but its ids and type tags."""
    if k == USER or k == FINAL:
        return visible_text(obj.get("content")) if isinstance(obj, dict) else ""
    parts = []
    _strings(obj, parts, [TEXT_MAX])
    return "\n".join(parts)


def _strings(v, out, left):
    if left[0] <= 0:
        return
    if isinstance(v, str):
        if v:
            out.append(v[: left[0]])
            left[0] -= len(v)
    elif isinstance(v, list):
        for x in v:
            _strings(x, out, left)
    elif isinstance(v, dict):
        for key, x in v.items():
            if key not in _SKIP:
                _strings(x, out, left)


def hashes(txt):
    """The index hashes of a text's terms (its first TEXT_MAX bytes), repeats kept."""
    b = text.to_bytes(txt) if isinstance(txt, str) else txt
    return [index_hash(t) for t in terms(b[:TEXT_MAX])]


def read_record(f, off, ln, limit):
    """(type, text) of the record at (off, ln) of an open file, (0, "") when it is none. A
    record over `limit` bytes (ESP-Claw writes records of any size) is typed from a copy with
    its long strings cut, and its text is its first TEXT_MAX bytes as they are."""
    if ln <= 1:
        return 0, ""
    f.seek(off)
    if ln <= limit + 1:
        raw = f.read(ln)
        if len(raw) != ln or raw[-1] != 10:
            return 0, ""
        obj = text.json_value(raw)
        k = kind_of(obj)
        return k, record_text(obj, k) if k else ""
    k = kind(f, off, ln, limit)[0]
    if not k:
        return 0, ""
    f.seek(off)
    return k, text.clean(f.read(TEXT_MAX))


def kind_of(obj):
    from ..messages import classify

    return classify(obj)[0]


def scan(path, start, end=-1):
    """(offset, length) of every whole line of a file from `start` (to `end`), each followed
    by (its end, 0): where a block may end."""
    with open(path, "rb") as f:
        f.seek(start)
        pos = start
        while end < 0 or pos < end:
            n, nl, _ = fmt_.next_line(f, end)
            if not nl:
                return
            yield pos, n
            pos += n
            yield pos, 0


def covered(path, size, f_data):
    """Where the index of `path` ends in it (0: none), or -1 when it must be written again
    (stale, torn, not an index)."""
    if fsutil.size(path + fmt_.TIX) < 0:
        return 0
    blks, _ = tix.blocks(path + fmt_.TIX, size, f_data)
    if blks is None:
        return -1
    return blks[-1].end if blks else 0


def update(path, limit, end=-1):
    """Bring the index of `path` up to `end` (-1: the file's end): blocks appended for the
    records after its last one, or the whole index written again when it no longer matches
    the file. Returns where the index now ends."""
    size = fsutil.size(path)
    if end < 0 or end > size:
        end = size
    ipath = path + fmt_.TIX
    if size <= 0:
        fsutil.remove(ipath)
        return 0
    with open(path, "rb") as f:
        at = covered(path, size, f)
        if 0 <= at and at >= end:
            return at
        if at < 0 or fsutil.size(ipath) < 0:
            def write(out):
                out.write(tix.MAGIC)
                index(out, f, path, 0, end, limit)

            fsutil.replace(ipath, write)
        else:
            def more(fo, pos):
                out = fsutil.Buffered(fo)
                index(out, f, path, at, end, limit)
                out.flush()

            fsutil.append(ipath, more)
    return end


def index(out, f, path, start, end, limit):
    """Write blocks for the records of `path` (open as `f`) in [start, end) to `out`."""
    bld = tix.Builder()
    resume = start  # where the block being built may end
    for off, ln in scan(path, start, end):
        if not ln:
            resume = off
            continue
        k, txt = read_record(f, off, ln, limit)
        if not k:
            continue
        hs = hashes(txt)
        if not bld.room(len(hs)):
            out.write(bld.block(resume, tix.probe(f, resume, bld.start)))
        bld.add(off, ln, k, hs)
    if len(bld):
        out.write(bld.block(resume, tix.probe(f, resume, bld.start)))


def records(path, limit):
    """(offset, length, type) of every record of an indexed file, from its text index (made
    or brought up to date first)."""
    update(path, limit)
    blks, _ = tix.blocks(path + fmt_.TIX)
    with open(path + fmt_.TIX, "rb") as f:
        for b in blks or ():
            yield from b.records(f)


def remap(log, new_log, moves, cut, out, aout, limit):
    """The text index of a compacted log, from the old log's (which must cover it whole):
    `moves` gives (old offset, length, new offset or -1 when dropped) of every record of the
    old log in order. Blocks after `cut` get a new record table and probe, their postings
    copied, or refiltered without the records compaction dropped; blocks before it go to the
    archive segment's index `aout` as they are (the segment is the log's first `cut` bytes);
    a block across `cut` is indexed again from its records. Writes to the Buffered `out` and
    `aout` (None: no archive); False when the old index does not name the log's records
    (what was written is of no use: the caller drops it)."""
    blks, _ = tix.blocks(log + fmt_.TIX)
    if blks is None:
        return False
    mv = iter(moves)
    m = next(mv, None)
    with open(log, "rb") as f, open(log + fmt_.TIX, "rb") as fi, open(new_log, "rb") as fn:
        for b in blks:
            if b.end <= cut:
                if aout is not None:
                    aout.copy(fi, b.pos, tix.BH + b.body)
                while m is not None and m[0] < b.end:
                    m = next(mv, None)
                continue
            dls = b.head(fi)[0]
            new = tix.Builder()
            arch = tix.Builder() if b.start < cut else None
            renum = bytearray(b.n)  # old ordinal -> new, 255: dropped
            end = 0
            for j, (off, ln, k) in enumerate(b.records(fi)):
                while m is not None and m[0] < off:
                    m = next(mv, None)
                if m is None or m[0] != off or m[1] != ln:
                    return False
                to = m[2]
                m = next(mv, None)
                renum[j] = 255 if to < 0 else len(new)
                if arch is not None:  # a block across the cut: its records indexed again
                    if off < cut or to >= 0:
                        got, txt = read_record(f, off, ln, limit)
                        (arch if off < cut else new).add(off if off < cut else to, ln, k,
                                                         hashes(txt) if got == k else ())
                elif to >= 0:
                    new.record(to, ln, k, dls[j])
                if to >= 0:
                    end = to + ln
            if arch is not None and len(arch) and aout is not None:
                aout.write(arch.block(cut, tix.probe(f, cut, arch.start)))
            if not len(new):
                continue
            prb = tix.probe(fn, end, new.start)
            if arch is not None:
                out.write(new.block(end, prb))
            elif len(new) == b.n:
                size = b.postings_size(fi)
                out.write(new.frame(end, prb, b.bits, size))
                out.copy(fi, b.dir, size)
                out.write(new.recs)
            else:
                size = b.postings_size(fi)
                fi.seek(b.dir)
                posts = tix.refilter(fi.read(size), b.bits, renum)
                out.write(new.frame(end, prb, b.bits, len(posts)))
                out.write(posts)
                out.write(new.recs)
    return True
