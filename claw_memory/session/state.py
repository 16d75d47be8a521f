# claw_memory.session.state: what is known about one session, and reading its records.
# MIT license

from .. import jsonraw
from .._compat import EIO, const
from ..messages import classify
from . import format as fmt_

_PIECE = const(1024)  # bytes a long record is read by
_KEEP = const(64)  # bytes of a string kept when a long record is classified


class State:
    """A session after open/repair. Records live in three places, in order: indexed in the
    .idx file, appended to the log but not yet indexed (`lag`), and the unfinished turn in
    the pending file."""

    def __init__(self, log_size, count, end, torn, idx_size):
        self.log_size = log_size  # -1: no .log
        self.idx_size = idx_size  # -1: no .idx
        self.count = count  # entries in the .idx file
        self.end = end  # end offset of the last indexed record
        self.torn = torn  # bytes after the last complete line
        self.lag = bytearray()  # entries of logged records not yet in the .idx
        self.lag_turns = 0
        self.pend = 0  # records in the pending file
        self.pend_size = -1  # the size of its header and records, -1 when there is none
        # The pending file's size, -1 when there is none: more than pend_size when it was
        # rewritten in place over a longer one, >= 0 with pend_size -1 when it is stale (its
        # records logged; the next mid-turn persist rewrites it).
        self.pend_file = -1
        # The pending file's bytes up to its last record as this program wrote them, when at
        # most 1 KiB (write.append_pending): read from here instead of the file while they
        # are as long as the records (pend_size); let go when the files are checked again
        # after another write (Sessions._open: another writer may have rewritten the turn as
        # long). Each read of the file looks its name up.
        self.pcopy = None
        self.early = None  # summary lines of the oldest records (window.summary's cache)
        self.checked = None  # (first record, verdicts) of the last request: records checked
        self.done = False  # the pending records were just logged (after_turn marks the file stale)
        self.tix_end = -1  # where the log's text index ends, -1: not known
        # fsutil.writes when the files were last found as this state says (or written by
        # it; -1: never), and whether no block marker was found since: while the count has
        # not moved, neither is looked up again (Sessions._open, blocked)
        self.seen = -1
        self.nb = False

    def records(self):
        return self.count + len(self.lag) // fmt_.ENT + self.pend


def each(log, st):
    """(offset, length, type, backend) of every logged record: indexed ones, then lag."""
    if st.count:
        with open(log + fmt_.IDX, "rb") as f:
            for i, off, ln, kind, fmt in fmt_.entries(f, st.count):
                yield off, ln, kind, fmt
    for j in range(0, len(st.lag), fmt_.ENT):
        yield fmt_.unpack(st.lag, j)


def pending(log, st):
    """(type, backend, JSON bytes) of the unfinished turn's records."""
    if st.pend:
        with pending_file(log, st) as f:
            yield from fmt_.pending_bodies(f, st.pend)


def pending_file(log, st):
    """The unfinished turn's pending file, open for reading at its start: the bytes this
    program wrote (st.pcopy) while they are as long as its records, else the file."""
    cp = st.pcopy
    if cp is not None and len(cp) == st.pend_size:
        from io import BytesIO

        return BytesIO(cp)
    return open(log + fmt_.PEND, "rb")


def read(f, off, ln, limit):
    """Parsed record at (off, ln) of an open log, or None when it is damaged or longer than
    `limit` bytes of JSON."""
    if not 0 < ln <= limit + 1:
        return None
    f.seek(off)
    raw = f.read(ln)
    if len(raw) != ln or raw[-1] != 10:
        return None
    return jsonraw.json_value(raw)


def kind(f, off, ln, limit, first=b""):
    """(type, backend) of the record at (off, ln) of an open file, (0, 0) when it is none
    (`first`: its first bytes, when read). One up to `limit` bytes is parsed whole; a longer
    one (ESP-Claw writes records of any size) is parsed from a copy with its long strings
    cut, read by pieces: what makes a record's type (keys, roles, block types) is short."""
    if ln <= limit + 1:
        return classify(jsonraw.json_value(fmt_.line_bytes(f, off, ln, first)))
    return classify(jsonraw.json_value(_cut_strings(f, off, ln)))


def _cut_strings(f, off, ln):
    """The JSON text at (off, ln) with each string over _KEEP bytes written as "x"."""
    out = bytearray()
    buf = bytearray(_PIECE)
    mv = memoryview(buf)
    f.seek(off)
    left = ln
    s = None  # the open string's body so far (None: cut), when inside one
    inside = esc = False
    while left:
        k = f.readinto(mv[: min(left, _PIECE)])
        if not k:
            raise OSError(EIO, "session file shrank while reading")
        left -= k
        i = 0
        while i < k:
            if not inside:
                j = buf.find(b'"', i, k)
                out += mv[i : k if j < 0 else j + 1]
                if j < 0:
                    break
                inside, s, i = True, bytearray(), j + 1
                continue
            if esc:  # the byte a backslash at the end of the last piece escapes
                stop, esc = i + 1, False
            else:
                q = buf.find(b'"', i, k)
                b = buf.find(b"\\", i, k if q < 0 else q)
                if b >= 0:  # an escape first: copied whole (its byte may be in the next piece)
                    stop = min(b + 2, k)
                    esc = b + 1 == k
                elif q >= 0:
                    stop = q
                else:
                    stop = k
            if s is not None:
                s += mv[i:stop]
                if len(s) > _KEEP:
                    s = None
            i = stop
            if i < k and buf[i] == 34 and not esc:  # its closing quote
                out += b"x" if s is None else s
                out += b'"'
                inside = False
                i += 1
    return out
