# claw_memory.session.stream: the history a request sends, streamed from flash into the
# request body (the protocol of transport.Body: json_length / json_chunks).
# MIT license
#
# Records whose bytes are already what the wire wants (a flat user/assistant message, flat
# tool results re-framed for the backend) are copied from the files through one buffer;
# the others (tool calls, content blocks, another backend's records) are parsed and
# converted one at a time. Pairing of tool calls with their results follows
# messages.pair_tools without holding the messages: a first pass (json_length) scans the
# records, decides per message whether it is sent, counts the bytes and keeps where the
# copied parts are (a few ints per message); later passes (json_chunks, once per LLM call of
# the request) copy them. `messages()` gives the same history as dicts.

from array import array

from .._compat import const
from ..core import FINAL, TOOL_CALL, USER, backend_format
from ..fsutil import Nothing
from ..messages import call_ids, classify, degrade, pair_tools
from ..wire import ANTHROPIC, RESPONSES, dump, to_wire
from . import flat
from . import format as fmt_
from .state import read
from . import window
from .window import records

_BUF = const(1024)
_SPANS = const(512)  # flat messages whose parts are kept after the first pass (6 ints each)
_TEXTS = const(2048)  # bytes of converted messages kept after the first pass
_ROLES = (b"user", b"assistant", b"tool")
_TOOL_KEYS = (b"role", b"tool_call_id", b"content", b"is_error")
_GROUP = b'{"role":"user","content":['  # Anthropic: the results of one round in one message
_ERROR = b"Error: "
# A flat message: (code, id start, id end, content start, content end), -1 when absent.
_USER = const(1)
_ASSISTANT = const(2)
_TOOL = const(3)
_TOOL_ERROR = const(4)
_NAMES = ("", "user", "assistant", "tool", "tool")
_CODES = {"user": _USER, "assistant": _ASSISTANT, "tool": _TOOL}


class History:
    """A session's history for one request: the summary of the records left out by the token
    budget (a system message), then the records from the window's start. A streamed element
    for transport.Body; `messages()` gives it as dicts. Made by Sessions.history()."""

    def __init__(self, snap, first, st, backend, limit, note):
        self.snap = snap
        self.first = first  # the first record sent
        self._st = st  # the session's State: summary lines, records checked before
        self.backend = backend
        self.limit = limit
        self._note = note
        self._plan = None  # _Plan of the first pass

    @property
    def summary(self):
        """The content of the message that stands for the records left out by the token
        budget, None when nothing is left out (made when asked: it is not kept)."""
        if not self.first:
            return None
        return window.summary(self.snap, self._st, self.first, backend_format(self.backend), self.limit)

    def __len__(self):
        """Records sent (the summary not counted)."""
        return self.snap.total - self.first

    def messages(self, backend=None):
        """The history as message dicts in their stored shape (the summary first), degraded
        for `backend` (default: the one it was made for), unpaired tool calls and results
        left out: what json_chunks() writes, before the wire conversion."""
        it = self._each(backend or self.backend, None, None)
        try:
            out = pair_tools([m for role, d, m in it])
        finally:
            it.close()  # its files, should the list fail half way
        summary = self.summary
        if summary is not None:
            out.insert(0, {"role": "system", "content": summary})
        return out

    def json_length(self, backend):
        return self._plan_for(backend).length

    def json_chunks(self, backend):
        """The wire messages of `backend`, as JSON texts separated by commas (byte pieces;
        each piece is valid until the next one is taken)."""
        return self._write(backend, self._plan_for(backend))

    # -- messages ----------------------------------------------------------------------------

    def _each(self, backend, rd, plan):
        """(role, flat message or None, dict or None) of every message from the window's
        start, after degradation. With a Reader `rd`, records that can go out as stored are
        scanned and `plan` learns them (first pass), or `plan` says where they are (later
        passes); without `rd` every record is parsed."""
        snap = self.snap
        cur = backend_format(backend)
        damaged = 0
        first = self.first
        later = plan is not None and plan.done
        t0, tv = self._st.checked or (0, b"")
        k = 0  # cursor in plan.spans
        n = 0  # messages yielded
        with open(snap.log + ".idx", "rb") if snap.count > first else Nothing() as idx, \
                open(snap.log, "rb") if snap.logged > first else Nothing() as lf, \
                open(snap.log + fmt_.PEND, "rb") if snap.pend else Nothing() as pf:
            it = records(snap, first, idx)
            try:
                for i, in_pend, off, ln, kind, fmt in it:
                    if plan is not None and not later:
                        plan.verdicts.append(0)
                        plan.counts.append(0)
                    elif later and not plan.verdicts[i - first]:
                        c = plan.counts[i - first]
                        kept = [plan.text(j) for j in range(n, n + c)]
                        if None not in kept:
                            for t in kept:  # converted in the first pass: kept
                                yield t[0], None, t[1]
                            n += c
                            continue
                    mism = cur and fmt and cur != fmt
                    if mism and kind != USER and kind != FINAL:
                        continue
                    f = pf if in_pend else lf
                    if not 0 < ln <= self.limit + 1:
                        damaged += 1
                        continue
                    # a tool call is never flat (its calls are nested): parsed at once
                    if rd is not None and kind != TOOL_CALL:
                        out = None
                        if not later:
                            rd.open(f, off, ln)
                            # a record checked by an earlier request of this session is
                            # only taken apart (the log is rewritten only with a new State)
                            out = _quick(rd, not (t0 <= i < t0 + len(tv) and tv[i - t0]))
                            if out is None:
                                rd.open(f, off, ln)
                                objs = flat.scan(rd, True)
                                if objs is not None and rd.ends_line() and _sendable(objs):
                                    out = [_flat(o) for o in objs]
                            if out is not None and mism and kind == FINAL and (
                                    len(out) != 1 or out[0][3] < 0):
                                out = None  # another backend's answer that is no plain text
                            if out is not None:
                                plan.verdicts[-1] = 1
                                plan.keep(i, out)
                        elif plan.verdicts[i - first]:
                            sp = plan.spans
                            if k < len(sp) and sp[k] == i:
                                out = []
                                while k < len(sp) and sp[k] == i:
                                    out.append(tuple(sp[k + 1 : k + 6]))
                                    k += 6
                                rd.use(f)
                            else:  # beyond what the first pass kept: scan again, unchecked
                                rd.open(f, off, ln)
                                objs = flat.scan(rd, False)
                                if objs is None:
                                    raise OSError(5, "session history changed while it was sent")
                                out = [_flat(o) for o in objs]
                        if out is not None:
                            for d in out:
                                yield _NAMES[d[0]], d, None
                            n += len(out)
                            continue
                    obj = read(f, off, ln, self.limit)
                    if obj is None or not classify(obj)[0]:
                        damaged += 1
                        continue
                    if mism and kind == FINAL:
                        obj = degrade(obj) if isinstance(obj, dict) else None
                        if obj is None:
                            continue
                    c = 0
                    for m in obj if isinstance(obj, list) else (obj,):
                        if isinstance(m, dict):
                            yield m.get("role"), None, m
                            c += 1
                    n += c
                    if plan is not None and not later:
                        plan.counts[-1] = min(c, 255)
            finally:
                it.close()
        if damaged and not later:  # said once per request
            self._note("%s: %d damaged record(s) skipped in replay" % (snap.log, damaged))

    # -- the request body --------------------------------------------------------------------

    def _plan_for(self, backend):
        p = self._plan
        if p is None or p.backend != backend:
            p = self._plan = _Plan(backend)
            self._first_pass(p)
        return p

    def _first_pass(self, plan):
        """Whether each message is sent (pair_tools' rule), and the byte count json_chunks
        writes."""
        backend = plan.backend
        total = items = 0
        if self.first:
            plan.head = self._summary(backend)
            total += len(plan.head)
            items += 1
        group = None  # [call's number, ids, (its length, wire items), [(n, id, length)]]
        it = self._each(backend, flat.Reader(_BUF), plan)
        try:
            for n, msg in enumerate(it):
                group, total, items = _step(n, msg, backend, plan, group, total, items)
        finally:
            it.close()
        if group is not None:
            total, items = _close(group, plan.flags, total, items, backend)
        plan.length = total + max(items - 1, 0)
        plan.done = True
        self._st.checked = (self.first, plan.verdicts)  # trusted by the next request

    def _summary(self, backend):
        return b",".join(dump(w).encode() for w in
                         to_wire({"role": "system", "content": self.summary}, backend))

    def _write(self, backend, plan):
        flags = plan.flags
        sep = False  # a comma before the next item
        if plan.head:
            yield plan.head
            sep = True
        grouped = backend == ANTHROPIC
        in_group = False
        rd = flat.Reader(_BUF)
        it = self._each(backend, rd, plan)
        try:
            for n, (role, d, m) in enumerate(it):
                if n >= len(flags):
                    raise OSError(5, "session history changed while it was sent")
                if not flags[n]:
                    continue
                block = grouped and role == "tool"
                if in_group and not block:
                    yield b"]}"
                    in_group = False
                if in_group:
                    yield b","
                else:
                    if sep:
                        yield b","
                    if block:
                        yield _GROUP
                        in_group = True
                text = m if d is None and isinstance(m, memoryview) else None
                for p in (text,) if text is not None else _parts(backend, d, m, block):
                    if isinstance(p, tuple):
                        for c in rd.copy(p[0], p[1]):
                            yield c
                    elif p:
                        yield p
                sep = True
        finally:
            it.close()
        if in_group:
            yield b"]}"


class _Plan:
    """What the first pass learnt for one backend."""

    def __init__(self, backend):
        self.backend = backend
        self.flags = bytearray()  # per message: sent
        self.verdicts = bytearray()  # per record: goes out as stored (a flat record)
        self.spans = array("i")  # record number and flat message, for the first _SPANS
        self.counts = bytearray()  # per record: its messages
        self.head = b""  # the summary message, on the wire
        # Converted messages' wire text (up to _TEXTS bytes), one blob: message number, role
        # code and end offset per message in `tix`.
        self.tbuf = bytearray()
        self.tix = array("i")
        self.length = 0
        self.done = False

    def remember(self, n, role, text):
        if len(self.tbuf) + len(text) <= _TEXTS and (role != "tool" or self.backend != ANTHROPIC):
            self.tbuf += text
            self.tix.extend((n, _CODES.get(role, 0), len(self.tbuf)))

    def text(self, n):
        """(role, wire text) kept for message n, or None."""
        tix = self.tix
        for k in range(0, len(tix), 3):
            if tix[k] == n:
                start = tix[k - 1] if k else 0
                return _NAMES[tix[k + 1]] if tix[k + 1] else None, memoryview(self.tbuf)[start : tix[k + 2]]
            if tix[k] > n:
                break
        return None

    def keep(self, i, msgs):
        if len(self.spans) + 6 * len(msgs) <= 6 * _SPANS:
            for d in msgs:
                self.spans.append(i)
                self.spans.extend(d[:5])


_HEADS = ((b'{"role":"user","content":"', _USER), (b'{"role":"assistant","content":"', _ASSISTANT))
_TOOL_HEAD = b'{"role":"tool","tool_call_id":"'
_TOOL_MID = b',"content":"'
_TOOL_ERR = b',"is_error":'


def _quick(rd, check):
    """The flat messages of a record in the usual key order (ours, and cJSON's), checked,
    without a general scan; None when it is not in that shape (scan it then)."""
    if not rd.need(1):
        return None
    if rd.buf[rd.pos] == 91:  # [: tool results
        rd.pos += 1
        out = []
        while True:
            if not _lit(rd, _TOOL_HEAD):
                return None
            t = rd.string(check)
            if t is None or t[2] is None or b"\\" in t[2] or not _lit(rd, _TOOL_MID):
                return None
            c = rd.string(check)
            if c is None or not _lit(rd, _TOOL_ERR):
                return None
            if _lit(rd, b"false}"):
                code = _TOOL
            elif _lit(rd, b"true}"):
                code = _TOOL_ERROR
            else:
                return None
            out.append((code, t[0], t[1], c[0], c[1], t[2]))
            if _lit(rd, b"]"):
                break
            if not _lit(rd, b","):
                return None
    else:
        for head, code in _HEADS:
            if _lit(rd, head):
                break
        else:
            return None
        c = rd.string(check)
        if c is None or c[1] <= c[0] or not _lit(rd, b"}"):
            return None
        out = [(code, -1, -1, c[0], c[1], None)]
    return out if rd.peek() == -1 and rd.ends_line() else None


def _lit(rd, b):
    # The next bytes are `b` (then consumed).
    n = len(b)
    if not rd.need(n) or rd.buf[rd.pos : rd.pos + n] != b:
        return False
    rd.pos += n
    return True


def _flat(o):
    """A flat message from the scanned fields: (code, id start, id end, content start,
    content end, id bytes or None)."""
    role = o[b"role"][2]
    c = o.get(b"content")
    cs, ce = (c[0], c[1]) if c is not None and c[0] >= 0 else (-1, -1)
    if role == b"user":
        return _USER, -1, -1, cs, ce, None
    if role == b"assistant":
        return _ASSISTANT, -1, -1, cs, ce, None
    t = o.get(b"tool_call_id")
    ids, ide, tid = (t[0], t[1], t[2]) if t is not None and t[0] >= 0 else (-1, -1, None)
    err = o.get(b"is_error")
    code = _TOOL_ERROR if err is not None and err[2] == b"true" else _TOOL
    return code, ids, ide, cs, ce, tid


_U = (b'{"role":"user","content":"', b'"}')
_A = (b'{"role":"assistant","content":"', b'"}')
_T = {  # per backend: before the id, between id and content, after the content
    "openai": (b'{"role":"tool","tool_call_id":"', b'","content":"', b'"}'),
    RESPONSES: (b'{"type":"function_call_output","call_id":"', b'","output":"', b'"}'),
    ANTHROPIC: (b'{"type":"tool_result","tool_use_id":"', b'","content":"', b'","is_error":false}'),
}
_T_ERR = b'","is_error":true}'


def _parts(backend, d, m, block):
    """The wire text of one message: bytes, and (start, end) spans of the record's file.
    `block`: an Anthropic tool result's block alone (it goes into its round's message)."""
    if d is None:
        ws = to_wire(m, backend)
        if block:
            return [dump(ws[0]["content"][0]).encode()]
        return [b",".join(dump(w).encode() for w in ws)]
    code = d[0]
    content = (d[3], d[4]) if d[3] >= 0 else None
    if code == _USER or code == _ASSISTANT:
        head, tail = _U if code == _USER else _A
        return [head, content, tail]
    tid = (d[1], d[2]) if d[1] >= 0 else None
    head, mid, tail = _T.get(backend) or _T["openai"]
    if code == _TOOL_ERROR:
        if backend == ANTHROPIC:
            tail = _T_ERR
        else:
            mid += _ERROR  # APIs without an error flag read it in the text
    return [head, tid, mid, content, tail]


def _length(backend, d, block):
    """Bytes of a flat message on the wire (what _parts gives, counted without it)."""
    code = d[0]
    n = d[4] - d[3] if d[3] >= 0 else 0
    if code == _USER or code == _ASSISTANT:
        return n + (_UN if code == _USER else _AN)
    n += d[2] - d[1] if d[1] >= 0 else 0
    head, mid, tail = _T.get(backend) or _T["openai"]
    n += len(head) + len(mid) + len(tail)
    if code == _TOOL_ERROR:
        n += len(_T_ERR) - len(tail) if backend == ANTHROPIC else len(_ERROR)
    return n


_UN = len(_U[0]) + len(_U[1])
_AN = len(_A[0]) + len(_A[1])


def _step(n, msg, backend, plan, group, total, items):
    """One message of the first pass: decided now, or held in a tool-call group until the
    group ends. Returns (group, total, items)."""
    role, d, m = msg
    flags = plan.flags
    flags.append(0)
    if group is not None:
        if role == "tool":
            if d is not None:
                length = _length(backend, d, True)
            else:
                w = to_wire(m, backend)
                length = len(dump(w[0]["content"][0] if backend == ANTHROPIC else w[0]).encode())
            group[3].append((n, _tool_id(d, m), length))
            return group, total, items
        total, items = _close(group, flags, total, items, backend)
        group = None
    if role == "tool":
        return None, total, items  # a result whose call is not right before it
    ids = call_ids(m) if m is not None and role == "assistant" else ()
    if d is not None:
        k, length = 1, _length(backend, d, False)
    else:
        ws = to_wire(m, backend)
        text = b",".join(dump(w).encode() for w in ws)
        # One item, however many wire messages it became (Responses: reasoning, text, calls):
        # the commas between them are in `text` already.
        k = 1 if ws else 0
        length = len(text)
        plan.remember(n, role, text)
    if ids:
        return [n, ids, (length, k), []], total, items
    if k:
        flags[n] = 1
        total += length
        items += k
    return None, total, items


def _close(group, flags, total, items, backend):
    """Settle a tool call and the results after it: all of it sent when every call has its
    result (the results for other calls left out), else none of it."""
    n, ids, (length, k), results = group
    answered = [rid for rn, rid, rl in results if rid in ids]
    for c in ids:
        if c not in answered:
            return total, items
    flags[n] = 1
    total += length
    items += k
    kept = [rl for rn, rid, rl in results if rid in ids]
    for rn, rid, rl in results:
        if rid in ids:
            flags[rn] = 1
    if kept:
        if backend == ANTHROPIC:
            total += len(_GROUP) + 2 + sum(kept) + len(kept) - 1
            items += 1
        else:
            total += sum(kept)
            items += len(kept)
    return total, items


def _tool_id(d, m):
    if d is None:
        return m.get("tool_call_id")
    return d[5].decode() if d[5] is not None else None


def _sendable(objs):
    """Whether flat objects can go out re-framed: user/assistant messages of a non-empty
    string content and nothing else; tool results of string or null fields (an id without
    escapes) and a true/false/null error flag."""
    for o in objs:
        role = o.get(b"role")
        if role is None or role[0] < 0 or role[2] not in _ROLES:
            return False
        if role[2] != b"tool":
            c = o.get(b"content")
            if len(o) != 2 or c is None or c[0] < 0 or c[1] <= c[0]:
                return False
            continue
        for k in o:
            if k not in _TOOL_KEYS:
                return False
        v = o.get(b"tool_call_id")
        if v is not None and (v[0] < 0 and v[2] != b"null" or v[0] >= 0 and (v[2] is None or b"\\" in v[2])):
            return False
        v = o.get(b"content")
        if v is not None and v[0] < 0 and v[2] != b"null":
            return False
        v = o.get(b"is_error")
        if v is not None and v[2] not in (b"true", b"false", b"null"):
            return False
    return True
