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

from .. import fsutil, jsonraw, text
from .._compat import const, dumps
from ..core import FINAL, TOOL_CALL, TOOL_RESULTS, USER
from ..messages import classify, visible_text
from ..terms import index_hash, terms
from . import format as fmt_
from . import tix
from .state import kind

TEXT_MAX = const(8192)  # bytes of a record's text indexed and shown
_PARSE_MAX = const(16384)  # bytes of a record parsed whole at most (read_record)
# The history search tool: its calls and results are not searched (after a few searches the
# copies of a hit in its results, and the calls holding the query's words, pushed the record
# that said it out of the answer)
_SEARCH = const("memory_search")
_CHUNK = const(1024)  # bytes of text whose terms are made at once
_SKIP = ("id", "type", "role", "tool_call_id", "tool_use_id", "call_id", "is_error",
         "_claw_provider_state")
ROLES = {USER: "user", FINAL: "assistant", TOOL_CALL: "assistant", TOOL_RESULTS: "tool"}


def record_text(obj, k):
    """The searchable text of a record of type `k` (`obj`: parsed, or a str: the first
    bytes of a record too big to parse): the visible text of user and assistant messages;
    the values of a tool call (the tool's name, its arguments) or of a tool result, without
    their keys, ids and type tags (arguments and results that are JSON text are read as
    JSON: a key like "city" or "pet" says nothing of one call); the search tool's own calls
    and results say nothing."""
    if isinstance(obj, str):
        return obj
    if k == USER or k == FINAL:
        return visible_text(obj.get("content")) if isinstance(obj, dict) else ""
    parts = []
    _values(obj, parts, [TEXT_MAX], 0)
    return "\n".join(parts)


def shown_text(obj, k):
    """A record's text as a search hit shows it: the visible text of a message; a tool
    call's text, names and arguments as the model wrote them; the tool results' contents."""
    if isinstance(obj, str) or k == USER or k == FINAL:
        return record_text(obj, k)
    if k == TOOL_RESULTS:
        items = obj if isinstance(obj, list) else [obj]
        return "\n".join(visible_text(m.get("content")) for m in items if isinstance(m, dict))
    parts = []
    content = obj.get("content")
    if isinstance(content, str) and content:
        parts.append(content)
    for c in obj.get("tool_calls") or ():
        fn = c.get("function") if isinstance(c, dict) else None
        if isinstance(fn, dict):
            parts += [fn.get("name") or "", fn.get("arguments") or ""]
    if isinstance(content, list):
        for b in content:
            if isinstance(b, dict) and b.get("type") == "text" and isinstance(b.get("text"), str):
                parts.append(b["text"])
            elif isinstance(b, dict) and b.get("type") == "tool_use":
                parts += [str(b.get("name") or ""), dumps(b.get("input"))]
    return "\n".join(p for p in parts if isinstance(p, str))


def _values(v, out, left, depth):
    if left[0] <= 0 or depth > 8:
        return
    if isinstance(v, dict) and (v.get("name") == _SEARCH or v.get("action") == _SEARCH):
        return  # (the search tool's calls and results: its query, copies of its hits)
    if isinstance(v, str):
        if v[:1] in ("{", "[") and v[-1:] in ("}", "]"):
            parsed = jsonraw.foreign(v.encode())
            if parsed is not None:
                _values(parsed, out, left, depth + 1)
                return
        if v:
            out.append(v[: left[0]])
            left[0] -= len(v)
    elif isinstance(v, (int, float)) and not isinstance(v, bool):
        out.append(str(v))
    elif isinstance(v, list):
        for x in v:
            _values(x, out, left, depth + 1)
    elif isinstance(v, dict):
        for key, x in v.items():
            if key not in _SKIP:
                _values(x, out, left, depth + 1)


def hashes(txt):
    """The index hashes of a text's terms (its first TEXT_MAX bytes), repeats kept."""
    out = []
    for chunk in _chunks(txt):
        for t in terms(chunk):
            out.append(index_hash(t))
    return out


def counts(txt, qh):
    """([how often each of the hashes `qh` occurs, at most 4], how many terms) in a text's
    first TEXT_MAX bytes: what a query checks a record with, without a list of its terms."""
    tf = [0] * len(qh)
    n = 0
    for chunk in _chunks(txt):
        for t in terms(chunk):
            n += 1
            h = index_hash(t)
            if h in qh:
                i = qh.index(h)
                tf[i] = min(tf[i] + 1, 4)
    return tf, n


def _chunks(txt):
    # A text's first TEXT_MAX bytes in pieces of about _CHUNK, cut after a separator (a space,
    # punctuation) so that no term is split (a piece with none, a long CJK run, is cut on a
    # character boundary: one bigram less): the terms of one piece at a time are in RAM.
    b = text.to_bytes(txt) if isinstance(txt, str) else txt
    end = min(len(b), TEXT_MAX)
    i = 0
    while i < end:
        j = min(i + _CHUNK, end)
        if j < end:
            k = j
            while k > i and (b[k - 1] >= 128 or 48 <= b[k - 1] <= 57 or 65 <= b[k - 1] <= 90
                             or 97 <= b[k - 1] <= 122):
                k -= 1
            if k > i:
                j = k
            else:
                while j > i and b[j] & 0xC0 == 0x80:
                    j -= 1
        yield b[i:j]
        i = j


def read_record(f, off, ln, limit):
    """(type, record) of the record at (off, ln) of an open file, (0, None) when it is none:
    the record parsed; one over _PARSE_MAX bytes (or `limit`: ESP-Claw writes records of any
    size) is typed from a copy with its long strings cut, and its text is the start of its
    first "content" string (else its first TEXT_MAX bytes): only TEXT_MAX bytes of a
    record's text are indexed and shown, and a 24 KiB tool result parsed whole, copied as
    text and cut ran a board's heap out in a search."""
    if ln <= 1:
        return 0, None
    f.seek(off)
    if ln <= min(limit, _PARSE_MAX) + 1:
        raw = f.read(ln)
        if len(raw) != ln or raw[-1] != 10:
            return 0, None
        obj = jsonraw.json_value(raw)
        k = classify(obj)[0]
        return k, obj if k else None
    k = kind(f, off, ln, min(limit, _PARSE_MAX))[0]
    if not k:
        return 0, None
    f.seek(off)
    raw = f.read(TEXT_MAX)
    i = raw.find(b'"content":"', 0, 512)  # (its text: the start of its first content string)
    if i >= 0:
        raw = raw[i + 11 :]
        for cut in range(8):  # back off a cut escape or character
            v = jsonraw.json_value(b'"' + raw[: len(raw) - cut] + b'"')
            if isinstance(v, str):
                return k, v
    return k, text.clean(raw)


def scan(f, start, end=-1):
    """(offset, length) of every whole line of an open file from `start` (to `end`), each
    followed by (its end, 0): where a block may end. The caller may read `f` elsewhere
    between them."""
    pos = start
    while end < 0 or pos < end:
        f.seek(pos)
        n, nl, _ = fmt_.next_line(f, end)
        if not nl:
            return
        yield pos, n
        pos += n
        yield pos, 0


def covered(path, size, f_data):
    """Where the index of `path` ends in it (0: none), or -1 when it must be written again
    (stale, torn, not an index)."""
    if fsutil.size(fmt_.tix(path)) < 0:
        return 0
    blks, _ = tix.blocks(fmt_.tix(path), size, f_data)
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
    ipath = fmt_.tix(path)
    if size <= 0:
        fsutil.remove(ipath)
        return 0
    with open(path, "rb") as f:
        at = covered(path, size, f)
        missing = at == 0 and fsutil.size(ipath) < 0  # (covered() > 0: it is there)
        if missing:
            fsutil.makedirs(ipath.rpartition("/")[0])  # (a Sessions of its own: Layout makes it)
            try:  # (an earlier build's beside the file; as compact.compact asks)
                beside = fsutil.size(path + fmt_.TIX) >= 0
            except OSError:  # (unreadable: left out, as adopt drops one it cannot copy)
                beside = False
            if beside:
                # (loaded only then: as .mpy its bytecode takes heap a rebuild needs)
                from .adopt import adopt

                if adopt(path, ipath):  # (moved in)
                    at = covered(path, size, f)
                    missing = False
        if 0 <= at and at >= end:
            return at
        if at < 0 or missing:
            def write(out):
                out.write(tix.MAGIC)
                index(out, f, 0, end, limit)

            fsutil.replace(ipath, write)
            from .tixmerge import settle_file

            settle_file(path, None, f)  # (written again whole: its blocks merged)
        else:
            # (an append opens the index for writing, a flash write even of nothing: at every
            # search when only lines that are no record follow the index)
            for off, ln in scan(f, at, end):
                if ln and read_record(f, off, ln, limit)[0]:
                    break
            else:
                return end

            def more(fo, pos):
                out = fsutil.Buffered(fo)
                index(out, f, at, end, limit)
                out.flush()

            fsutil.append(ipath, more)
    return end


def index(out, f, start, end, limit):
    """Write blocks for the records of the open file `f` in [start, end) to `out`."""
    bld = tix.Builder()
    resume = start  # where the block being built may end
    for off, ln in scan(f, start, end):
        if not ln:
            resume = off
            continue
        k, rec = read_record(f, off, ln, limit)
        if not k:
            continue
        hs = hashes(record_text(rec, k))
        if not bld.room(len(hs)):
            out.write(bld.block(resume, tix.probe(f, resume, bld.start)))
        bld.add(off, ln, k, hs)
    if len(bld):
        out.write(bld.block(resume, tix.probe(f, resume, bld.start)))


def records(path, limit):
    """(offset, length, type) of every record of an indexed file, from its text index (made
    or brought up to date first; a damaged one is made again, and the records go on after
    the last one given); none when the file is gone."""
    after = 0
    for _ in range(2):
        update(path, limit)
        blks, _ = tix.blocks(fmt_.tix(path))
        if not blks:
            return
        try:
            with open(fmt_.tix(path), "rb") as f:
                for b in blks:
                    for r in b.records(f):  # (a block's whole table checked first)
                        if r[0] >= after:
                            after = r[0] + r[1]
                            yield r
            return
        except (ValueError, IndexError):
            fsutil.remove(fmt_.tix(path))  # (derived: made again from the file)
