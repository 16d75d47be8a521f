# claw_memory.session.write: the persist path.
# MIT license
#
# A mid-turn batch is one write to the small `.log.pending` file; the batch that completes
# the turn moves the pending records and itself into the `.log` with one append, and the
# pending file stays, stale (pending.py says how that is recognised), until the next turn's
# first batch rewrites it from its start. Index entries wait in RAM (`State.lag`) and reach
# the `.idx` every few turns, when the session leaves the cache, before compaction and on
# close: littlefs copies a file's partly filled last block on every reopen-append, so fewer
# appends to the big files save flash wear.

from .. import fsutil, jsonraw, text
from .._compat import EIO, const, dumps
from ..core import FINAL, TOOL_CALL, TOOL_RESULTS, USER
from ..messages import classify
from . import format as fmt_
from .state import pending

LAG_MAX = const(2000)  # bytes of unindexed entries kept in RAM before the .idx is appended
_NEST_MAX = const(32)  # brackets in a record above which its nesting is checked
TAIL = const(8192)  # bytes of log after its text index's end before the persist path indexes them
_PCOPY = const(1024)  # bytes of a pending turn kept in RAM as written (State.pcopy)


def encode(records, max_chars, max_record_bytes):
    """Validate a whole batch; returns [(line bytes, type)]. Raises ValueError."""
    if not isinstance(records, (list, tuple)) or not records:
        raise ValueError("a persist batch needs at least one record")
    out = []
    for n, rec in enumerate(records):
        if not isinstance(rec, (list, tuple)) or len(rec) != 3:
            raise ValueError("record %d: expected (type, message_json, text)" % n)
        kind, message, txt = rec
        if not isinstance(kind, int) or isinstance(kind, bool) or kind not in (USER, FINAL, TOOL_CALL, TOOL_RESULTS):
            raise ValueError("record %d: type must be 1..4" % n)
        if message:
            line = raw_record(n, kind, message, max_record_bytes)
        elif txt:
            if kind not in (USER, FINAL):
                raise ValueError("record %d: tool records need message JSON" % n)
            body = text.clean(txt, max_chars)
            if not body:
                raise ValueError("record %d: text is empty after dropping invalid UTF-8" % n)
            role = "user" if kind == USER else "assistant"
            line = ('{"role":"%s","content":%s}' % (role, dumps(body))).encode()
        else:
            raise ValueError("record %d: needs message JSON or text" % n)
        out.append((line, kind))
    return out


def raw_record(n, kind, message, max_record_bytes):
    """A record's raw JSON as one line, checked against its type. Raises ValueError."""
    raw = text.clean_bytes(text.to_bytes(message))
    # Raw CR/LF can only be whitespace between JSON tokens; one record is one line.
    if b"\n" in raw or b"\r" in raw:
        raw = raw.replace(b"\r", b" ").replace(b"\n", b" ")
    obj = jsonraw.json_value(raw)
    if len(raw) > max_record_bytes:
        fitted = _fit(obj, max_record_bytes) if obj is not None else None
        if fitted is None:
            raise ValueError(
                "record %d: %d bytes of JSON, more than %d" % (n, len(raw), max_record_bytes)
            )
        raw, obj = fitted, jsonraw.json_value(fitted)
    if obj is not None and raw.count(b"[") + raw.count(b"{") > _NEST_MAX:
        try:  # json.loads is not recursive, dumps is: a record every request would fail on
            dumps(obj)
        except RuntimeError:
            raise ValueError("record %d: JSON nested too deeply" % n)
    if kind == TOOL_RESULTS:
        if not isinstance(obj, list) or not all(isinstance(m, dict) for m in obj):
            raise ValueError("record %d: tool results must be a JSON array of objects" % n)
    elif not isinstance(obj, dict):
        raise ValueError("record %d: message must be a JSON object" % n)
    elif not classify(obj)[0]:
        raise ValueError("record %d: message needs role user, assistant or tool" % n)
    return raw


_CUT = "\u2026 [cut: %d more bytes did not fit the session record]"


def _fit(obj, limit):
    """The record's JSON with its longest strings cut until it fits `limit` bytes, each cut
    marked (a tool result or an answer too big for one record keeps its place in the
    history, its call and result still paired), or None when strings are not what is big."""
    for _ in range(8):
        raw = dumps(obj).encode()
        over = len(raw) - limit
        if over <= 0:
            return raw
        ref = _longest(obj, None)
        if ref is None:
            return None
        box, key = ref[1], ref[2]
        b = text.to_bytes(box[key])
        kept = text.cut_bytes(box[key], max(len(b) - over - 96, 0))
        box[key] = kept + _CUT % (len(b) - len(text.to_bytes(kept)))
    return None


def _longest(obj, best):
    """(length, container, key) of the longest string inside obj (best so far: `best`)."""
    items = obj.items() if isinstance(obj, dict) else enumerate(obj) if isinstance(obj, list) else ()
    for k, v in items:
        if isinstance(v, str):
            if best is None or len(v) > best[0]:
                best = (len(v), obj, k)
        elif isinstance(v, (dict, list)):
            best = _longest(v, best)
    return best


def append_pending(log, st, lines, fmt, in_place):
    """Write a mid-turn batch after the pending records, or from the file's start (header
    first) when the turn has none yet. A stale file is rewritten: in place when `in_place`
    (FAT: its data and directory sector, where a new file also writes the FAT), else by a
    truncating open (littlefs: an in-place write would copy the stale rest into new blocks);
    a stale rest after the new end is cut off by PEND_END."""
    data = b"".join(fmt_.pending_line(kind, fmt, line) for line, kind in lines)
    at = st.pend_size
    if at < 0:
        data = fmt_.pending_head(max(st.log_size, 0)) + data
        at = 0
    end = at + len(data)
    # (made before the write: after it, a MemoryError would report records on flash as not)
    cp = st.pcopy
    cp = (None if end > _PCOPY else data if at == 0
          else cp + data if cp is not None and len(cp) == at else None)
    path = log + fmt_.PEND
    if st.pend_file < 0 or (at == 0 and not in_place):
        fsutil.write_file(path, data)  # (littlefs commits it at close: a cut leaves the old)
        st.pend_file = end
    else:
        fsutil.write_at(path, at, data + fmt_.PEND_END if end < st.pend_file else data)
        st.pend_file = max(st.pend_file, end)
    st.pend += len(lines)
    st.pend_size = end
    st.pcopy = cp


class Moved(OSError):
    """A file does not end where the session's state says (another program wrote it since
    it was checked): nothing was written."""


def append_turn(log, st, lines, fmt):
    """One append moves the pending records and this batch into the log: when it returns,
    the turn is on flash. Returns its index entries, for logged(). Moved, nothing written,
    when the log does not end where `st` says (the caller opens the session again)."""
    ents = bytearray()
    # The pending records are read between the writes: buffered, so that FAT (one sector
    # buffer shared by all open files) writes the log's last sector once, not once a record.
    out = fsutil.Buffered(None, max(st.pend_size, 0) + sum(len(ln) + 1 for ln, k in lines) + 2)

    def write(f, pos):
        # (the end the append found costs no look-up: a check of `st` a Sessions takes as
        # true while nothing of the program wrote, sessions._open)
        if pos != max(st.log_size, 0):
            raise Moved(EIO, "%s changed underneath" % log)
        out.f = f
        if st.torn:
            # A NUL can never be part of valid JSON: the torn fragment stays a line that does
            # not parse, even when only its newline was missing.
            out.write(fmt_.CLOSER)
            pos += len(fmt_.CLOSER)
        for kind, kfmt, body in pending(log, st):
            out.write(body)
            out.write(b"\n")
            ents.extend(fmt_.entry(pos, len(body) + 1, kind, kfmt))
            pos += len(body) + 1
        for line, kind in lines:
            out.write(line)
            out.write(b"\n")
            ents.extend(fmt_.entry(pos, len(line) + 1, kind, fmt))
            pos += len(line) + 1
        out.flush()
        st.end = pos

    fsutil.append(log, write)
    return ents


def logged(st, ents):
    """The state after append_turn (apart from it: a MemoryError here is no failed append).
    The index entries `ents` wait in `st.lag` (after_turn)."""
    st.log_size = st.end
    st.torn = 0
    st.lag += ents
    st.lag_turns += 1
    st.done = st.pend_size >= 0  # the pending records are now logged: the file is stale


def after_turn(log, st, index_every):
    """What follows a logged turn: the pending file is stale (nothing written), and the
    index entries reach the .idx every `index_every` turns (True when they did: the text
    index may follow). A failure here loses nothing (the next open removes a stale pending
    file and indexes the log's tail)."""
    if st.done:
        st.pend, st.pend_size = 0, -1
        st.pcopy = None
        st.done = False
    if st.idx_size < 0 or st.lag_turns >= index_every or len(st.lag) > LAG_MAX:
        flush_index(log, st)
        return True
    return False


def flush_text(log, st, limit, force=True):
    """Bring the log's text index up to the log's end: always (`force`), or when at least
    TAIL bytes wait (a search reads fewer itself)."""
    if st.log_size <= 0 or (not force and 0 <= st.tix_end and st.log_size - st.tix_end < TAIL):
        return
    from . import indexer

    if not force and st.tix_end < 0:
        with open(log, "rb") as f:
            st.tix_end = indexer.covered(log, st.log_size, f)
        if 0 <= st.tix_end and st.log_size - st.tix_end < TAIL:
            return
    st.tix_end = indexer.update(log, limit, st.log_size)


def clear_stale(log, st):
    """Before the log is rewritten: a stale pending file's header would then point into other
    records, so it is made to hold none, in place (removing it would move the directory
    entries the rewrite's commit writes on FAT, and FAT's directory sector is its weak spot)."""
    if st.pend_size < 0 and st.pend_file >= 0:
        data = fmt_.pending_head(max(st.log_size, 0)) + fmt_.PEND_END
        fsutil.write_at(log + fmt_.PEND, 0, data)
        st.pend_file = max(st.pend_file, len(data))


def drop_stale(log, st, check=False, limit=0):
    """On close: a stale pending file of a cached session goes; with `check` (written since
    `st` was checked: another open may have begun a turn in it) only when the log holds
    every record it has (`limit`: max_record_bytes)."""
    if st.pend_size < 0 and st.pend_file >= 0:
        if check:
            from .pending import Pending

            p = Pending(log, limit)
            if p.recs is None or p.logged < len(p.recs):
                return
        fsutil.remove(log + fmt_.PEND)
        st.pend_file = -1


def flush_index(log, st):
    """Append the entries of logged-but-unindexed records to the .idx. When the files are no
    longer what `st` describes (another Sessions on the same root wrote this session), the
    entries are dropped instead: the next open indexes those records from the log."""
    if not st.lag:
        return  # (never an index without records: a session only read has no files)
    if st.seen != fsutil.writes and (fsutil.size(log + fmt_.IDX) != st.idx_size
                                     or fsutil.size(log) != st.log_size):
        st.lag = bytearray()
        st.lag_turns = 0
        return
    data = st.lag if st.idx_size >= 0 else fmt_.HEADER + st.lag
    empty = bytearray()  # (made before the append: after it, nothing may fail to allocate)

    def put(f, start):
        if start != max(st.idx_size, 0):  # (as append_turn's check)
            raise Moved(EIO, "%s changed underneath" % log)
        fsutil.write_all(f, data)

    try:
        fsutil.append(log + fmt_.IDX, put)
    except Moved:
        st.lag = empty
        st.lag_turns = 0
        st.seen = -1  # (what `st` says of the index is not so: looked up at the next use)
        return
    st.idx_size = max(st.idx_size, 0) + len(data)
    st.count += len(st.lag) // fmt_.ENT
    st.lag = empty
    st.lag_turns = 0
