# claw_memory.session.window: which records a request sends under the token budget, and the
# summary message that stands for the older ones (ESP-Claw's "line B", §6.9 in docs/DESIGN.md).
# MIT license
#
# Line B parses the whole history and counts the tokens of every message's text. Here the
# cost of a record comes from its length in the index (no read), the window never starts
# inside a tool exchange (it starts at a user record), and the newest turn is sent whole even
# when it alone is over the budget (line B could send the summary alone).

from io import BytesIO

from .. import jsonraw, text
from ..fsutil import Nothing
from .._compat import EIO, const, dumps
from ..core import FINAL, TOOL_RESULTS, USER
from ..messages import degrade
from ..wire import RECORD_HEADS
from . import format as fmt_
from .state import pending_file, read

_OVERHEAD = const(4)  # tokens per message (line B's CLAW_MEMORY_SESSION_WINDOW_MSG_OVERHEAD)
_LINES = const(20)  # summary lines at most
_LINE_CHARS = const(64)  # characters of text per summary line
_WHOLE = const(4096)  # records up to this size are parsed for their summary line
_PEEK = const(512)  # bytes of a bigger record's text read for its summary line
_WIN = const(256)  # index entries start() keeps for the request's passes (2.5 KiB at most)
_PEND_RAM = const(1024)  # bytes of a pending turn a snapshot keeps for the request's passes
SUMMARY_HEAD = "# Early conversation (summarized to fit the context budget)\n"


def cost(ln):
    """Tokens counted for a record of `ln` stored bytes, without reading it: a token per 3
    bytes, line B's count for CJK text (1 token a character) and above its count for any
    other text (4 characters a token), JSON keys and tool arguments included."""
    return _OVERHEAD + (ln + 2) // 3


class Snapshot:
    """A session's records at one moment (the index prefix, the unindexed entries, the
    pending records): what a request sends stays put while the turn appends to the files."""

    def __init__(self, log, st):
        self.log = log
        self.count = st.count
        self.lag = bytes(st.lag)
        pend = []
        # The pending file's bytes up to its last record, when they are few (a turn's user
        # message, as a rule): the request's passes read them from here, not from the file
        # (each open looks its name up: on FAT with thousands of sessions, hundreds of KiB)
        self.pbuf = self.phead = None
        if st.pend:
            with pending_file(log, st) as f:
                recs = fmt_.pending_records(f)[0][: st.pend]
                end = recs[-1][2] + recs[-1][3] if recs else 0
                f.seek(0)
                if end <= _PEND_RAM:
                    self.pbuf = f.read(end)
                else:  # (its header: the passes read the file only while it is this turn's)
                    self.phead = fmt_.read_pending_head(f)
            # the record's JSON and newline: after the 2-digit prefix
            pend = [(kind, fmt, off + 2, ln - 2) for kind, fmt, off, ln in recs]
        self.pend = pend
        self.logged = self.count + len(self.lag) // fmt_.ENT
        self.total = self.logged + len(pend)
        # The newest index entries, as start() read them (at most _WIN, from `wfirst` on): the
        # request's passes take them from here instead of opening the index again (each
        # open looks its name up in the folder)
        self.win = None
        self.wfirst = self.count


_FOREIGN = (b"", b"\x02\x03", b"\x01\x03", b"\x01\x02")


def foreign(cur):
    """The backend formats (bytes) of the records that are another backend's for a request
    of backend format `cur` (a record or a request of format 0 is anyone's)."""
    return _FOREIGN[cur]


def records(snap, i0, end=None, theirs=None, limit=0, bad=None):
    """(i, file, offset, length, type, backend) of records i0..end-1 of a snapshot (to its
    end by default), each with its file (the log or the pending file, opened here and closed
    with the generator). With `theirs` (foreign() of a request's backend format), only those
    the request may send: not another backend's tool traffic, nor of an impossible length
    (over `limit` bytes; counted in bad[0])."""
    if end is None:
        end = snap.total
    kept = snap.wfirst <= i0  # (the entries from i0 on are in RAM)
    with open(snap.log + fmt_.IDX, "rb") if snap.count > i0 and not kept else Nothing() as idx, \
            open(snap.log, "rb") if snap.logged > i0 else Nothing() as lf, \
            _pending_file(snap) if snap.pend and end > snap.logged else Nothing() as pf:
        for src, f in ((_ram(snap.win, snap.wfirst, i0, snap.count) if kept
                        else fmt_.entries(idx, snap.count, i0) if snap.count > i0 else (), lf),
                       (_ram(snap.lag, snap.count, max(i0, snap.count), snap.logged), lf),
                       (_pending(snap, i0), pf)):
            for i, off, ln, kind, fmt in src:
                if i >= end:
                    return
                if theirs is not None:
                    if kind != USER and kind != FINAL and fmt in theirs:
                        continue  # another backend's tool traffic
                    if not 0 < ln <= limit:
                        bad[0] += 1
                        continue
                yield i, f, off, ln, kind, fmt


def _ram(buf, first, i0, end):
    # (i, offset, length, type, backend) of records i0..end-1 from index entries in RAM, the
    # first of `buf` record `first`'s: those start() kept, or the logged ones not indexed yet
    for i in range(i0, end):
        off, ln, kind, fmt = fmt_.unpack(buf, (i - first) * fmt_.ENT)
        yield i, off, ln, kind, fmt


def _pending_file(snap):
    if snap.pbuf is not None:
        return BytesIO(snap.pbuf)
    f = open(snap.log + fmt_.PEND, "rb")
    # The turn may have completed and the next one begun the file again (another request of
    # the session, under asyncio): its bytes are then no longer these records'. The header
    # names the log's size at the turn's start: another turn's names a longer log.
    if fmt_.read_pending_head(f) != snap.phead:
        f.close()
        raise OSError(EIO, "%s: the pending turn was logged meanwhile" % snap.log)
    return f


def _pending(snap, i0):
    # (i, offset, length, type, backend) of the pending file's records
    for i in range(max(i0, snap.logged), snap.total):
        kind, fmt, off, ln = snap.pend[i - snap.logged]
        yield i, off, ln, kind, fmt


def _newest_first(snap):
    """(i, type, length) of every record, newest first."""
    i = snap.total
    for kind, fmt, off, ln in reversed(snap.pend):
        i -= 1
        yield i, kind, ln
    lag = snap.lag
    for j in range(len(lag) - fmt_.ENT, -1, -fmt_.ENT):
        i -= 1
        off, ln, kind, fmt = fmt_.unpack(lag, j)
        yield i, kind, ln
    if snap.count:
        win = bytearray(fmt_.ENT * min(snap.count, _WIN))
        at = len(win)
        try:
            with open(snap.log + fmt_.IDX, "rb") as f:
                for i, off, ln, kind, fmt in fmt_.entries_back(f, snap.count):
                    if at:
                        at -= fmt_.ENT
                        win[at : at + fmt_.ENT] = fmt_.entry(off, ln, kind, fmt)
                    yield i, kind, ln
        finally:  # (also when start() stops early: what was read is kept)
            if at < len(win):
                snap.win = memoryview(win)[at:]
                snap.wfirst = snap.count - (len(win) - at) // fmt_.ENT


def start(snap, budget, limit):
    """The first record a request sends: 0 when everything fits `budget` tokens (or the
    budget is 0: no limit), else the oldest user record from which the rest fits, or the
    newest user record when not even its turn fits. Records over `limit` bytes of JSON are
    never sent: they cost nothing and are no start."""
    if not budget:
        return 0
    used = 0
    first = snap.total  # the oldest record within the budget
    found = -1
    over = False
    it = _newest_first(snap)
    try:
        for i, kind, ln in it:
            if ln > limit + 1:
                continue
            if not over:
                used += cost(ln)
                if used <= budget:
                    first = i
                    if kind == USER:
                        found = i
                    continue
                over = True
                if found >= 0:
                    break
            if kind == USER:  # nothing fits: the newest turn goes whole
                found = i
                break
    finally:
        it.close()  # its index file
    if not over:
        return 0
    return found if found >= 0 else first


def summary(snap, st, first, cur, limit):
    """The content of the message that stands for records [0, first): the text of the first
    20 user/assistant messages (64 characters each) and how many records it leaves out, as
    line B writes it. The lines are cached on the session's State (as their JSON text)."""
    cache = st.early  # [backend format, records read, lines, their JSON array's body]
    if cache is None or cache[0] != cur or cache[1] > first:
        cache = [cur, 0, 0, ""]
    upto, n, body = cache[1], cache[2], cache[3]
    if n < _LINES and upto < first:
        theirs = foreign(cur)
        it = records(snap, upto, first)
        try:
            for i, f, off, ln, kind, fmt in it:
                if n >= _LINES:
                    break
                upto = i + 1
                line = _line(f, off, ln, kind, fmt in theirs, limit)
                if line is not None:
                    body += ("," if body else "") + dumps(line)
                    n += 1
        finally:
            it.close()  # its files
        cache[1], cache[2], cache[3] = upto, n, body
    if cache[1] <= first:
        st.early = cache
    if first > n:
        note = dumps("\u2026 %d earlier / tool messages omitted" % (first - n))
        body += ("," if body else "") + note
    return SUMMARY_HEAD + "[" + body + "]"


def _line(f, off, ln, kind, mism, limit):
    """`role: text` of one record for the summary, or None (tool results, other backends'
    tool traffic (`mism`: another backend's record), damaged records)."""
    if kind == TOOL_RESULTS:
        return None
    if mism and kind != USER and kind != FINAL:
        return None
    if ln <= _WHOLE:
        obj = read(f, off, ln, limit)
    else:
        obj = _head(f, off, ln)
    if not isinstance(obj, dict):
        return None
    if mism and kind == FINAL:
        obj = degrade(obj)
        if obj is None:
            return None
    role = obj.get("role")
    if role != "user" and role != "assistant":
        return None
    c = obj.get("content")
    t = None
    if isinstance(c, str):
        t = c
    elif isinstance(c, list):
        for p in c:
            if isinstance(p, dict) and isinstance(p.get("text"), str):
                t = p["text"]
                break
            if isinstance(p, str):
                t = p
                break
    return "%s: %s" % (role, t[:_LINE_CHARS] if t else "[no text]")


def _head(f, off, ln):
    """A big record's role and the start of its text, without reading all of it: a
    {"role","content"} dict when it begins as a plain message, else None."""
    f.seek(off)
    raw = f.read(_PEEK)
    for lead, kind, role in RECORD_HEADS:
        if raw.startswith(lead):
            body = raw[len(lead):]
            for cut in range(8):  # back off a cut escape or character
                v = jsonraw.json_value(b'"' + body[: len(body) - cut] + b'"')
                if isinstance(v, str):
                    return {"role": role, "content": v}
    return None
