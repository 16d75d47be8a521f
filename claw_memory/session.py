# claw_memory: session history, an append-only JSON-lines .log with ESP-Claw's binary .idx.
# MIT license
#
# Files per session (names as ESP-Claw's): `s_<safe>_<fnv1a32>.log` holds one compact JSON
# record and "\n" per record; `.log.idx` is an 8-byte header `<IHH` (magic "CHDX", version 1,
# entry size 10) followed by `<IIBB` entries (offset, length with "\n", type 1..4, backend
# 0..3); `.log.blocked` (empty) marks a session over the size limit; `.log.pending` (ours)
# holds the records of the turn in progress. docs/FORMAT.md has the details.
#
# Durability: every persist is durable when it returns (one append, closed). An index never
# points past its log. On open everything is repaired instead of wiped: a torn tail is
# ignored, bad or dangling index entries are dropped, complete records the index lacks are
# re-indexed from the log, and the pending file is reconciled with the log. Compaction
# writes both files as `.tmp` and commits them together through a journal (fsutil.commit).
#
# RAM: the index is streamed in chunks, records are read one at a time by offset, and
# compaction copies record by record through one small buffer.

import struct

from . import fsutil, text
from ._compat import const, dumps, ilistdir
from .text import fnv1a32
from .core import FINAL, TOOL_CALL, TOOL_RESULTS, USER, SessionBlocked, backend_format

_HEADER = b"CHDX\x01\x00\x0a\x00"  # struct.pack("<IHH", 0x58444843, 1, 10)
_HDR = const(8)
_ENT = const(10)
_CHUNK = const(64)  # index entries read per chunk
_COPY = const(1024)  # compaction copy buffer
_SAFE_MAX = const(24)
_ID_MAX = const(512)
_CACHE_MAX = const(4)
_PAGE_LIMIT_MAX = const(50)
_PAGE_RECORD_MAX = const(65536)
_PAGE_TEXT_MAX = const(32768)
_LAG_MAX = const(2000)  # bytes of unindexed entries kept in RAM before the .idx is appended
_PEND = ".pending"
_CLOSER = b"\x00\n"  # ends a torn tail before the next append

SIZE_LIMIT = const(153600)

# ESP-Claw's CLAW_MEMORY_SESSION_SIZE_WARNING, whole and without the five stray spaces its
# C line continuation put after "sending" (DESIGN.md, deliberate difference 5).
BLOCK_TEXT = (
    "Session history is still too large after compaction. Please create a new conversation "
    "by sending the command `/session new [name]`, and delete the old session by "
    "`/session delete <name>` due to limited storage space."
)


def _id_bytes(session_id, allow_empty=False):
    if isinstance(session_id, str):
        b = text.to_bytes(session_id)
    elif isinstance(session_id, (bytes, bytearray)):
        b = bytes(session_id)
    else:
        raise ValueError("session id must be text")
    if not b and not allow_empty:
        raise ValueError("session id is empty")
    if len(b) > _ID_MAX:
        raise ValueError("session id longer than %d bytes" % _ID_MAX)
    return b


def file_name(session_id):
    """`s_<safe>_<fnv1a32 hex>.log` exactly as ESP-Claw names a session's history."""
    b = _id_bytes(session_id, allow_empty=True)
    safe = bytearray()
    for c in b[:_SAFE_MAX]:
        ok = 48 <= c <= 57 or 65 <= c <= 90 or 97 <= c <= 122 or c in (45, 95)
        safe.append(c if ok else 95)
    return "s_%s_%08x.log" % (safe.decode() if safe else "default", fnv1a32(b))


def classify(obj):
    """(record type, backend format) derived from a record's JSON, (0, 0) if it is none."""
    if isinstance(obj, list):
        return (TOOL_RESULTS, 0) if all(isinstance(m, dict) for m in obj) else (0, 0)
    if not isinstance(obj, dict):
        return 0, 0
    role = obj.get("role")
    if role == "user":
        return USER, 0
    if role == "tool":
        return TOOL_RESULTS, 0
    if role != "assistant":
        return 0, 0
    state = obj.get("_claw_provider_state")  # ESP-Claw's OpenAI Responses records
    if isinstance(state, dict) and state.get("backend") == "openai_responses":
        return (TOOL_CALL if obj.get("tool_calls") else FINAL), 3
    if obj.get("tool_calls"):
        return TOOL_CALL, 1
    content = obj.get("content")
    if isinstance(content, list):
        for block in content:
            if isinstance(block, dict) and block.get("type") == "tool_use":
                return TOOL_CALL, 2
        return FINAL, 2
    return FINAL, 1 if "reasoning_content" in obj else 0


def _entries(f, count, start=0):
    """Yield (i, offset, length, type, backend) for index entries start..count-1."""
    buf = bytearray(_ENT * _CHUNK)
    f.seek(_HDR + _ENT * start)
    i = start
    while i < count:
        k = min(_CHUNK, count - i)
        if f.readinto(memoryview(buf)[: k * _ENT]) != k * _ENT:
            raise OSError(5, "session index shrank while reading")
        for j in range(k):
            off, ln, t, fmt = struct.unpack_from("<IIBB", buf, j * _ENT)
            yield i, off, ln, t, fmt
            i += 1


def _whole_index(path):
    if not path.endswith(".idx.tmp"):
        return False
    n = fsutil.size(path)
    if n < _HDR or (n - _HDR) % _ENT:
        return False
    with open(path, "rb") as f:
        return f.read(_HDR) == _HEADER


def _whole_pending(path):
    with open(path, "rb") as f:
        head = f.readline(24)
    return head.startswith(b"P ") and head.endswith(b"\n") and head[2:-1].isdigit()


def visible_text(value):
    """The text a chat UI shows for a message's content (ESP-Claw's UI extraction)."""
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        parts = [visible_text(v) for v in value]
        return "\n".join(p for p in parts if p)
    if isinstance(value, dict):
        kind = value.get("type")
        if kind is None or kind in ("text", "output_text", "message"):
            inner = value.get("content")
            if inner is None:
                inner = value.get("text")
            return visible_text(inner)
    return ""


def _call_ids(msg):
    """Ids of the tool calls an assistant message makes (OpenAI or Anthropic shape)."""
    ids = []
    for call in msg.get("tool_calls") or ():
        if isinstance(call, dict) and call.get("id"):
            ids.append(call["id"])
    content = msg.get("content")
    if isinstance(content, list):
        for block in content:
            if isinstance(block, dict) and block.get("type") == "tool_use" and block.get("id"):
                ids.append(block["id"])
    return ids


def _pair_tools(msgs):
    """Drop tool calls without all their results and results without their call: an LLM API
    rejects either, and a power cut or a compaction can leave one behind."""
    out = []
    i = 0
    n = len(msgs)
    while i < n:
        m = msgs[i]
        role = m.get("role")
        ids = _call_ids(m) if role == "assistant" else ()
        if role == "tool":
            i += 1  # a result whose call is not right before it
            continue
        if not ids:
            out.append(m)
            i += 1
            continue
        j = i + 1
        while j < n and msgs[j].get("role") == "tool":
            j += 1
        results = [r for r in msgs[i + 1 : j] if r.get("tool_call_id") in ids]
        answered = [r.get("tool_call_id") for r in results]
        if all(c in answered for c in ids):
            out.append(m)
            out += results
        i = j
    return out


def _degrade(obj):
    """A final answer of the other backend as plain text, or None (ESP-Claw §6.3 step 5)."""
    content = obj.get("content")
    if isinstance(content, str):
        return obj
    if isinstance(content, list):
        joined = "".join(
            b.get("text", "")
            for b in content
            if isinstance(b, dict) and b.get("type") == "text" and isinstance(b.get("text"), str)
        )
        if joined:
            return {"role": "assistant", "content": joined}
    return None


class _State:
    # What is known about a session after open/repair. Records live in three places, in
    # order: indexed in the .idx file, appended to the log but not yet indexed (`lag`), and
    # the unfinished turn in the pending file.
    def __init__(self, log_size, count, end, torn, idx_size):
        self.log_size = log_size  # -1: no .log
        self.idx_size = idx_size  # -1: no .idx
        self.count = count  # entries in the .idx file
        self.end = end  # end offset of the last indexed record
        self.torn = torn  # bytes after the last complete line
        self.lag = bytearray()  # entries of logged records not yet in the .idx
        self.lag_turns = 0
        self.pend = 0  # records in the pending file
        self.pend_size = -1  # its size, -1 when there is none

    def records(self):
        return self.count + len(self.lag) // _ENT + self.pend


class _Plan:
    # What open/repair found and would change.
    def __init__(self):
        self.log_size = -1
        self.idx_size = -1
        self.prefix = 0  # leading index entries kept as they are
        self.drop = None  # set of entry numbers < prefix to drop (deep check only)
        self.end = 0
        self.tail = bytearray()  # entries re-indexed from the log
        self.torn = 0
        self.dropped = 0  # unparsable records skipped
        self.idx_dropped = 0  # index entries discarded
        self.rebuilt = False  # index header was bad: rebuilt from the log

    def report(self):
        return {
            "records": self.prefix - len(self.drop or ()) + len(self.tail) // _ENT,
            "reindexed": len(self.tail) // _ENT,
            "dropped": self.dropped + len(self.drop or ()),
            "index_entries_dropped": self.idx_dropped,
            "torn_tail_bytes": self.torn,
            "rebuilt_index": self.rebuilt,
        }


def _pending_records(path, limit):
    """[(kind, fmt, offset, line length)] of a pending file's complete records, whether its
    last line was torn, and its header's log offset (None when the header is unusable)."""
    recs = []
    torn = False
    with open(path, "rb") as f:
        head = f.readline(24)
        if not (head.startswith(b"P ") and head.endswith(b"\n") and head[2:-1].isdigit()):
            return recs, True, None
        l0 = int(head[2:-1])
        pos = len(head)
        while True:
            line = f.readline(limit)
            if not line:
                break
            if line[-1] != 10:
                torn = True  # cut while appending: that persist was not acknowledged
                break
            if len(line) > 3 and 49 <= line[0] <= 52 and 48 <= line[1] <= 51:
                recs.append((line[0] - 48, line[1] - 48, pos, len(line)))
            else:
                torn = True  # garbage: rewrite the file without it
            pos += len(line)
    return recs, torn, l0


class Sessions:
    """Session histories under one directory (the data root's `sessions/`).

    A turn's records reach flash as they are persisted: mid-turn batches go to the small
    `.log.pending` file, and the batch that completes the turn moves the whole turn into the
    `.log` with one append. Index entries are appended every `index_every` completed turns,
    when the session leaves the cache, before compaction and on `close()`; after a power cut
    the few records the index lacks are re-indexed from the log. Both keep flash wear low:
    littlefs copies a file's partly filled last block on every reopen-append, so fewer
    appends to the big files is what saves program/erase operations (docs/PERFORMANCE.md)."""

    def __init__(self, directory, max_message_chars=4096, max_record_bytes=65536,
                 size_limit=SIZE_LIMIT, index_every=4, log=None):
        if max_message_chars < 1:
            raise ValueError("max_message_chars must be positive")
        if index_every < 1:
            raise ValueError("index_every must be positive")
        self.dir = directory
        self.max_message_chars = max_message_chars
        self.max_record_bytes = max_record_bytes
        self.size_limit = size_limit
        self.index_every = index_every
        self._log = log
        self._cache = {}
        self._order = []

    # -- names ----------------------------------------------------------------------------

    def path(self, session_id):
        """Path of the session's `.log` (`.idx`, `.pending`, `.blocked` sit beside it)."""
        _id_bytes(session_id)
        return self.dir + "/" + file_name(session_id)

    # -- batch encoding -------------------------------------------------------------------

    def _encode(self, records):
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
                line = self._raw_record(n, kind, message)
            elif txt:
                if kind not in (USER, FINAL):
                    raise ValueError("record %d: tool records need message JSON" % n)
                body = text.clean(txt, self.max_message_chars)
                if not body:
                    raise ValueError("record %d: text is empty after dropping invalid UTF-8" % n)
                role = "user" if kind == USER else "assistant"
                line = ('{"role":"%s","content":%s}' % (role, dumps(body))).encode()
            else:
                raise ValueError("record %d: needs message JSON or text" % n)
            out.append((line, kind))
        return out

    def _raw_record(self, n, kind, message):
        raw = text.clean_bytes(text.to_bytes(message))
        # Raw CR/LF can only be whitespace between JSON tokens; one record is one line.
        if b"\n" in raw or b"\r" in raw:
            raw = raw.replace(b"\r", b" ").replace(b"\n", b" ")
        if len(raw) > self.max_record_bytes:
            raise ValueError(
                "record %d: %d bytes of JSON, more than %d" % (n, len(raw), self.max_record_bytes)
            )
        obj = text.json_value(raw)
        if kind == TOOL_RESULTS:
            if not isinstance(obj, list) or not all(isinstance(m, dict) for m in obj):
                raise ValueError("record %d: tool results must be a JSON array of objects" % n)
        elif not isinstance(obj, dict):
            raise ValueError("record %d: message must be a JSON object" % n)
        elif not classify(obj)[0]:
            raise ValueError("record %d: message needs role user, assistant or tool" % n)
        return raw

    # -- open and repair ------------------------------------------------------------------

    def _analyse(self, log, deep=False):
        """Inspect the .log/.idx pair without writing; returns a _Plan."""
        idx = log + ".idx"
        for p in (log, idx, log + _PEND):
            if fsutil.is_dir(p):
                raise OSError(21, "session file is a directory: " + p)
        plan = _Plan()
        plan.log_size = fsutil.size(log)
        plan.idx_size = fsutil.size(idx)
        log_size = max(plan.log_size, 0)
        count = 0
        if plan.idx_size >= _HDR:
            with open(idx, "rb") as f:
                if f.read(_HDR) == _HEADER:
                    count = (plan.idx_size - _HDR) // _ENT
                    plan.prefix, plan.end = self._valid_prefix(f, log, count, log_size)
                else:
                    plan.rebuilt = True
        elif plan.idx_size >= 0 or plan.log_size > 0:
            plan.rebuilt = True  # no usable index: every record comes from the log scan
        plan.idx_dropped = count - plan.prefix
        if deep and plan.prefix:
            plan.drop = self._unparsable(log, idx, plan.prefix)
        if plan.log_size > plan.end:
            self._scan_tail(log, plan)
        return plan

    def _valid_prefix(self, f, log, count, log_size):
        """Leading index entries that are well-formed and inside the log, in order."""
        end = 0
        good = 0
        for i, off, ln, t, fmt in _entries(f, count):
            if not (1 <= t <= 4 and fmt <= 3 and ln > 0 and off >= end and off + ln <= log_size):
                break
            end = off + ln
            good = i + 1
        # The last kept record must end with its newline; walk back past any that do not.
        if good:
            with open(log, "rb") as lf:
                while good:
                    f.seek(_HDR + _ENT * (good - 1))
                    off, ln = struct.unpack("<II", f.read(8))
                    lf.seek(off + ln - 1)
                    if lf.read(1) == b"\n":
                        end = off + ln
                        break
                    good -= 1
                else:
                    end = 0
        return good, end

    def _unparsable(self, log, idx, count):
        """Entries whose record is not one JSON record line (records over the replay bound
        are only checked for their newline: they are not damaged, just not replayed)."""
        bad = set()
        with open(idx, "rb") as f, open(log, "rb") as lf:
            for i, off, ln, t, fmt in _entries(f, count):
                if ln > self.max_record_bytes + 1:
                    lf.seek(off + ln - 1)
                    if lf.read(1) != b"\n":
                        bad.add(i)
                elif not classify(self._read(lf, off, ln))[0]:
                    bad.add(i)
        return bad

    def _scan_tail(self, log, plan):
        """Index the complete records between the last indexed one and the end of the log."""
        limit = self.max_record_bytes + 1
        pos = plan.end
        with open(log, "rb") as f:
            f.seek(pos)
            while pos < plan.log_size:
                line = f.readline(limit)
                n = len(line)
                if not n:
                    break
                if line[-1] != 10:
                    if pos + n >= plan.log_size:
                        plan.torn = n  # a record cut by a power loss: ignored
                        break
                    while line and line[-1] != 10:  # over-long line: skip it whole
                        line = f.readline(limit)
                        n += len(line)
                    if pos + n >= plan.log_size and (not line or line[-1] != 10):
                        plan.torn = n  # it runs to the end of the log: a torn tail
                        break
                    plan.dropped += 1
                    pos += n
                    continue
                kind, fmt = classify(text.json_value(line))
                if kind:
                    plan.tail += struct.pack("<IIBB", pos, n, kind, fmt)
                elif line.strip():
                    plan.dropped += 1
                pos += n

    def _apply(self, log, plan):
        """Write what `_analyse` planned; returns the resulting _State."""
        idx = log + ".idx"
        if plan.log_size < 0:
            if plan.idx_size >= 0:
                fsutil.remove(idx)  # an index without its log describes nothing
            return _State(-1, 0, 0, 0, -1)
        kept = plan.prefix - len(plan.drop or ())
        tail_n = len(plan.tail) // _ENT
        exact = plan.idx_size == _HDR + _ENT * plan.prefix
        if plan.rebuilt or plan.drop or not exact:

            def write(out):
                out.write(_HEADER)
                if plan.prefix:
                    with open(idx, "rb") as f:
                        self._copy_entries(f, out, plan.prefix, plan.drop)
                out.write(plan.tail)

            fsutil.replace(idx, write)
        elif tail_n:
            fsutil.append(idx, plan.tail)
        end = plan.end
        if tail_n:
            off, ln = struct.unpack_from("<II", plan.tail, len(plan.tail) - _ENT)
            end = off + ln
        return _State(plan.log_size, kept + tail_n, end, plan.torn, fsutil.size(idx))

    def _copy_entries(self, f, out, count, drop):
        buf = bytearray(_ENT * _CHUNK)
        f.seek(_HDR)
        i = 0
        while i < count:
            k = min(_CHUNK, count - i)
            mv = memoryview(buf)[: k * _ENT]
            f.readinto(mv)
            if drop:
                for j in range(k):
                    if i + j not in drop:
                        out.write(mv[j * _ENT : (j + 1) * _ENT])
            else:
                out.write(mv)
            i += k

    def _settle_pending(self, log):
        """Reconcile the pending file with the log after a power cut; returns (records, size).

        The pending file's header holds the log size when the turn started, where the
        completing append begins. If that append reached the log (wholly or in part), the
        records found there complete are dropped from the pending file, so that nothing is
        both logged and pending; a torn last pending line (an unacknowledged persist) is
        dropped too."""
        pend = log + _PEND
        if fsutil.size(pend) < 0:
            return 0, -1
        recs, torn, l0 = _pending_records(pend, self.max_record_bytes + 4)
        log_size = max(fsutil.size(log), 0)
        if l0 is None:
            fsutil.remove(pend)
            self._note("%s: unreadable pending file removed" % pend)
            return 0, -1
        done = 0
        if log_size > l0 and recs:
            done = self._logged(log, pend, l0, log_size, recs)
        if done == len(recs):
            fsutil.remove(pend)
            return 0, -1
        if done or torn or log_size != l0:

            def write(out):
                out.write(b"P %d\n" % log_size)
                with open(pend, "rb") as f:
                    for k, fmt, off, ln in recs[done:]:
                        f.seek(off)
                        out.write(f.read(ln))

            fsutil.replace(pend, write)
        return len(recs) - done, fsutil.size(pend)

    def _logged(self, log, pend, l0, log_size, recs):
        """How many leading pending records the log holds complete from offset l0."""
        done = 0
        with open(log, "rb") as lf, open(pend, "rb") as pf:
            pos = l0
            lf.seek(pos)
            head = lf.read(len(_CLOSER))
            if head == _CLOSER:
                pos += len(_CLOSER)  # what closed a torn tail before the append
            elif head[:1] == b"\n":
                pos += 1
            for k, fmt, off, ln in recs:
                body = ln - 3  # the JSON without the 2-digit prefix and the newline
                if pos + body > log_size:
                    break
                pf.seek(off + 2)
                lf.seek(pos)
                if lf.read(body) != pf.read(body):
                    break
                if lf.read(1) != b"\n":
                    break  # without its newline the record is a torn tail, not logged
                pos += body + 1
                done += 1
        return done

    def _open(self, log):
        """The session's state, repairing the files first when needed (cached)."""
        st = self._cache.get(log)
        if st is not None:
            if (
                fsutil.size(log) == st.log_size
                and fsutil.size(log + ".idx") == st.idx_size
                and fsutil.size(log + _PEND) == st.pend_size
            ):
                return st
            self._forget(log)
        self._settle(log)
        pend, pend_size = self._settle_pending(log)
        plan = self._analyse(log)
        st = self._apply(log, plan)
        st.pend, st.pend_size = pend, pend_size
        if plan.dropped or plan.idx_dropped or plan.torn or plan.tail or plan.rebuilt:
            self._note("repaired %s: %s" % (log, plan.report()))
        self._remember(log, st)
        return st

    def _settle(self, log):
        # Leftovers of a compaction (journal) or of an index rewrite: a lone `.idx.tmp` whose
        # index is gone is adopted when whole; a lone `.log.tmp` never is. A pending file
        # rewritten by _settle_pending and cut inside FAT's remove-then-rename is adopted
        # when its header is whole.
        fsutil.recover([log, log + ".idx"], journal=log + ".commit", valid=_whole_index)
        fsutil.recover([log + _PEND], valid=_whole_pending)

    def _remember(self, log, st):
        if log not in self._cache:
            self._order.append(log)
        self._cache[log] = st
        if len(self._order) > _CACHE_MAX:
            old = self._order.pop(0)
            try:
                self._flush_index(old, self._cache.pop(old))
            except OSError as e:  # harmless: its unindexed records are re-indexed on open
                self._note("index of %s not flushed: %r" % (old, e))

    def _forget(self, log):
        self._cache.pop(log, None)
        if log in self._order:
            self._order.remove(log)

    def _flush_index(self, log, st):
        """Append the entries of logged-but-unindexed records to the .idx."""
        if not st.lag and st.idx_size >= 0:
            return
        data = st.lag if st.idx_size >= 0 else _HEADER + st.lag
        fsutil.append(log + ".idx", data)
        st.idx_size = max(st.idx_size, 0) + len(data)
        st.count += len(st.lag) // _ENT
        st.lag = bytearray()
        st.lag_turns = 0

    def _note(self, msg):
        if self._log:
            self._log(msg)

    def _read(self, f, off, ln):
        """Parsed record at (off, ln), or None when it is damaged or over the size bound."""
        if not 0 < ln <= self.max_record_bytes + 1:
            return None
        f.seek(off)
        raw = f.read(ln)
        if len(raw) != ln or raw[-1] != 10:
            return None
        return text.json_value(raw)

    def _each(self, log, st):
        """(offset, length, type, backend) of every logged record: indexed ones, then lag."""
        if st.count:
            with open(log + ".idx", "rb") as f:
                for i, off, ln, kind, fmt in _entries(f, st.count):
                    yield off, ln, kind, fmt
        for j in range(0, len(st.lag), _ENT):
            yield struct.unpack_from("<IIBB", st.lag, j)

    def _pending(self, log, st):
        """(type, backend, JSON bytes) of the unfinished turn's records."""
        if not st.pend:
            return
        with open(log + _PEND, "rb") as f:
            f.readline(24)
            for _ in range(st.pend):
                line = f.readline(self.max_record_bytes + 4)
                if len(line) < 4:
                    raise OSError(5, "pending file changed while reading")
                yield line[0] - 48, line[1] - 48, line[2:-1]

    # -- public API -----------------------------------------------------------------------

    def persist(self, session_id, records, turn_completed=False, backend="openai"):
        """Durably record a batch of (type, message_json, text) records. Returns the block
        warning when this batch completed a turn that left the session over the limit.

        ValueError: a bad batch (nothing written). SessionBlocked: the session is blocked."""
        log = self.path(session_id)
        lines = self._encode(records)
        fmt = backend_format(backend)
        if fsutil.exists(log + ".blocked"):
            raise SessionBlocked(1, BLOCK_TEXT)
        fsutil.makedirs(self.dir)
        st = self._open(log)
        try:
            if not turn_completed:
                data = b"".join(b"%d%d" % (kind, fmt) + line + b"\n" for line, kind in lines)
                if st.pend_size < 0:
                    data = b"P %d\n" % max(st.log_size, 0) + data
                fsutil.append(log + _PEND, data)
                st.pend += len(lines)
                st.pend_size = max(st.pend_size, 0) + len(data)
                return None
            self._complete_turn(log, st, lines, fmt)
        except BaseException:
            self._forget(log)
            raise
        if st.log_size > self.size_limit:
            return self._compact(log, st)
        return None

    def _complete_turn(self, log, st, lines, fmt):
        # One append moves the pending records and this batch into the log.
        ents = bytearray()

        def write(f, pos):
            if st.torn:
                # A NUL can never be part of valid JSON: the torn fragment stays a line that
                # does not parse, even when only its newline was missing.
                fsutil.write_all(f, _CLOSER)
                pos += len(_CLOSER)
            for kind, kfmt, body in self._pending(log, st):
                fsutil.write_all(f, body + b"\n")
                ents.extend(struct.pack("<IIBB", pos, len(body) + 1, kind, kfmt))
                pos += len(body) + 1
            for line, kind in lines:
                fsutil.write_all(f, line + b"\n")
                ents.extend(struct.pack("<IIBB", pos, len(line) + 1, kind, fmt))
                pos += len(line) + 1
            st.end = pos

        fsutil.append(log, write)
        st.log_size = st.end
        st.torn = 0
        if st.pend_size >= 0:
            fsutil.remove(log + _PEND)
            st.pend, st.pend_size = 0, -1
        st.lag += ents
        st.lag_turns += 1
        if st.idx_size < 0 or st.lag_turns >= self.index_every or len(st.lag) > _LAG_MAX:
            self._flush_index(log, st)

    def flush(self):
        """Bring every cached session's index up to date (also done by `close`)."""
        for log in self._order:
            self._flush_index(log, self._cache[log])

    def close(self):
        """Flush the indexes; the files are then exactly ESP-Claw's format."""
        self.flush()
        self._cache = {}
        self._order = []

    def messages(self, session_id, backend="openai", file=None):
        """History as LLM messages, in file order: tool-result arrays flattened into tool
        messages, records of the other backend degraded to text, unpaired tool calls and
        results left out. [] when there is none. (`file`: a session by its file name.)"""
        log = self._target(session_id, file)
        st = self._open(log)
        cur = backend_format(backend)
        out = []
        skipped = 0

        def add(obj, kind, fmt):
            if cur and fmt and cur != fmt:
                if kind != USER and kind != FINAL:
                    return
                if kind == FINAL:
                    obj = _degrade(obj)
                    if obj is None:
                        return
            if isinstance(obj, list):
                out.extend(m for m in obj if isinstance(m, dict))
            else:
                out.append(obj)

        if st.log_size > 0:
            with open(log, "rb") as lf:
                for off, ln, kind, fmt in self._each(log, st):
                    obj = self._read(lf, off, ln)
                    if obj is None or not classify(obj)[0]:
                        skipped += 1
                    else:
                        add(obj, kind, fmt)
        for kind, fmt, body in self._pending(log, st):
            obj = text.json_value(body)
            if obj is None or not classify(obj)[0]:
                skipped += 1
            else:
                add(obj, kind, fmt)
        if skipped:
            self._note("%s: %d damaged record(s) skipped in replay" % (log, skipped))
        return _pair_tools(out)

    def page(self, session_id, before=0, limit=20):
        """A page of visible user/assistant text for chat UIs, newest page by default:
        {"total","revision","next_before","has_more","messages":[{"seq","role","text"}]}."""
        if not isinstance(limit, int) or not 1 <= limit <= _PAGE_LIMIT_MAX:
            raise ValueError("limit must be 1..%d" % _PAGE_LIMIT_MAX)
        if not isinstance(before, int) or before < 0:
            raise ValueError("before must be a non-negative integer")
        log = self.path(session_id)
        st = self._open(log)
        # Visible records: user and final answers, logged first, then the pending turn's.
        total = 0
        for off, ln, kind, fmt in self._each(log, st):
            total += kind == USER or kind == FINAL
        logged = total
        for kind, fmt, body in self._pending(log, st):
            total += kind == USER or kind == FINAL
        end = before if 0 < before < total else total
        start = max(0, end - limit)
        picked = []
        ordinal = 0
        for off, ln, kind, fmt in self._each(log, st):
            if kind == USER or kind == FINAL:
                if start <= ordinal < end:
                    picked.append((ordinal, kind, off, ln))
                ordinal += 1
        for kind, fmt, body in self._pending(log, st):
            if kind == USER or kind == FINAL:
                if start <= ordinal < end:
                    picked.append((ordinal, kind, -1, body))
                ordinal += 1
        msgs = []
        used = 0
        with open(log, "rb") if logged else _Nothing() as lf:
            for ordinal, kind, off, ln in reversed(picked):
                if off < 0:
                    obj = text.json_value(ln)
                elif ln > _PAGE_RECORD_MAX + 1:
                    obj = {"content": "[message too large to show]"}  # not the whole page
                else:
                    obj = self._read(lf, off, ln)
                txt = visible_text(obj.get("content")) if isinstance(obj, dict) else ""
                n = len(txt.encode())
                if msgs and used + n > _PAGE_TEXT_MAX:
                    start = ordinal + 1
                    break
                used += n
                msgs.append({"seq": ordinal + 1, "role": "user" if kind == USER else "assistant",
                             "text": txt})
        msgs.reverse()
        return {"total": total, "revision": total, "next_before": start, "has_more": start > 0,
                "messages": msgs}

    def records(self, session_id=None, file=None):
        """(type, backend, JSON bytes) of every record, logged then pending, in order; damaged
        records (not a chat record, over the size bound) are skipped. For export and inspection."""
        log = self._target(session_id, file)
        st = self._open(log)
        if st.log_size > 0:
            with open(log, "rb") as lf:
                for off, ln, kind, fmt in self._each(log, st):
                    if 0 < ln <= self.max_record_bytes + 1:
                        lf.seek(off)
                        raw = lf.read(ln)
                        if len(raw) == ln and raw[-1] == 10 and classify(text.json_value(raw))[0]:
                            yield kind, fmt, raw[:-1]
        for kind, fmt, body in self._pending(log, st):
            if classify(text.json_value(body))[0]:
                yield kind, fmt, body

    def blocked(self, session_id):
        return fsutil.exists(self.path(session_id) + ".blocked")

    def delete(self, session_id):
        """Remove the session's files; True if any existed."""
        log = self.path(session_id)
        self._forget(log)
        found = False
        # Journal and temp files first (a journal would resurrect them), the block marker last.
        for suffix in (".commit", ".tmp", ".idx.tmp", _PEND + ".tmp", _PEND, "", ".idx",
                       ".blocked"):
            found = fsutil.remove(log + suffix) or found
        return found

    def stat(self, session_id):
        """{"file","bytes","records","pending","blocked"} of one session (after repair)."""
        return self._stat(self.path(session_id))

    def _stat(self, log):
        st = self._open(log)
        return {"file": log.rsplit("/", 1)[-1], "bytes": max(st.log_size, 0),
                "records": st.records(), "pending": st.pend,
                "blocked": fsutil.exists(log + ".blocked")}

    def list(self):
        """Every session under the directory, as `stat` reports it, by file name."""
        names = []
        if fsutil.is_dir(self.dir):
            for name, is_dir in ilistdir(self.dir):
                if name.endswith(_PEND):
                    name = name[: -len(_PEND)]  # a first turn not completed yet
                if not is_dir and name.startswith("s_") and name.endswith(".log"):
                    if name not in names:
                        names.append(name)
        names.sort()
        return [self._stat(self.dir + "/" + name) for name in names]

    def verify(self, session_id=None, file=None):
        """What `repair` would do, without writing: a report dict."""
        log = self._target(session_id, file)
        st = self._cache.get(log)
        if st is not None:
            self._flush_index(log, st)
        return self._analyse(log, deep=True).report()

    def repair(self, session_id=None, file=None):
        """Check every record and repair the files; returns the report of what was done."""
        log = self._target(session_id, file)
        st = self._cache.get(log)
        if st is not None:
            self._flush_index(log, st)
        self._forget(log)
        self._settle(log)
        pend, pend_size = self._settle_pending(log)
        plan = self._analyse(log, deep=True)
        st = self._apply(log, plan)
        st.pend, st.pend_size = pend, pend_size
        self._remember(log, st)
        rep = plan.report()
        rep["pending"] = pend
        return rep

    def restore(self, file, records, blocked=False):
        """Create a session from (type, backend, message JSON) records, written as they are
        (for import; the session must not exist). Raises ValueError for a bad record."""
        log = self._target(None, file)
        if fsutil.exists(log) or fsutil.exists(log + _PEND):
            raise ValueError("session %s already exists" % file)
        data = bytearray()
        ents = bytearray(_HEADER)
        for n, (kind, fmt, message) in enumerate(records):
            if (not isinstance(kind, int) or not isinstance(fmt, int) or kind not in (1, 2, 3, 4)
                    or fmt not in (0, 1, 2, 3)):
                raise ValueError("record %d: bad type or backend" % n)
            raw = self._raw_record(n, kind, message)
            ents += struct.pack("<IIBB", len(data), len(raw) + 1, kind, fmt)
            data += raw + b"\n"
        fsutil.makedirs(self.dir)
        fsutil.write_file(log, data)
        fsutil.write_file(log + ".idx", ents)
        if blocked:
            fsutil.write_file(log + ".blocked", b"")
        self._forget(log)

    def _target(self, session_id, file):
        if file is not None:
            if "/" in file or not file.startswith("s_") or not file.endswith(".log"):
                raise ValueError("not a session file name: %r" % file)
            return self.dir + "/" + file
        return self.path(session_id)

    # -- compaction -----------------------------------------------------------------------

    def _compact(self, log, st):
        """Drop old tool traffic once the log is over the limit; block if that is not enough.
        Keeps every user and final record, the tool records of the newest completed turn that
        used tools, and an unfinished last turn."""
        idx = log + ".idx"
        last_tool = None
        start = 0
        done = tools = False
        n = 0
        for off, ln, kind, fmt in self._each(log, st):
            if kind == USER and n > 0:
                if done and tools:
                    last_tool = (start, n)
                start, done, tools = n, False, False
            if kind == FINAL:
                done = True
            elif kind == TOOL_CALL or kind == TOOL_RESULTS:
                tools = True
            n += 1
        if done and tools:
            last_tool = (start, n)
        open_from = n if done else start

        def keep(i, kind):
            return (kind == USER or kind == FINAL or i >= open_from
                    or (last_tool is not None and last_tool[0] <= i < last_tool[1]))

        planned = kept = i = 0
        for off, ln, kind, fmt in self._each(log, st):
            if keep(i, kind):
                planned += ln
                kept += 1
            i += 1
        if planned > self.size_limit:
            self._flush_index(log, st)
            fsutil.write_file(log + ".blocked", b"")
            self._note("%s: blocked, %d bytes after compaction" % (log, planned))
            return BLOCK_TEXT
        buf = bytearray(_COPY)
        pos = i = 0
        with open(log, "rb") as lf, open(log + ".tmp", "wb") as out, open(idx + ".tmp", "wb") as iout:
            iout.write(_HEADER)
            for off, ln, kind, fmt in self._each(log, st):
                if keep(i, kind):
                    lf.seek(off)
                    left = ln
                    while left:
                        got = lf.readinto(memoryview(buf)[: min(left, _COPY)])
                        if not got:
                            raise OSError(5, "session log shrank during compaction")
                        out.write(memoryview(buf)[:got])
                        left -= got
                    iout.write(struct.pack("<IIBB", pos, ln, kind, fmt))
                    pos += ln
                i += 1
        self._forget(log)
        fsutil.commit(log + ".commit", [log, idx])
        new = _State(pos, kept, pos, 0, _HDR + _ENT * kept)
        new.pend, new.pend_size = st.pend, st.pend_size
        self._remember(log, new)
        self._note("%s: compacted to %d bytes, %d records" % (log, pos, kept))
        return None


class _Nothing:
    # Stands in for a file that is not needed.
    def __enter__(self):
        return None

    def __exit__(self, *exc):
        return False
