# claw_memory.session.stream: the history a request sends, streamed from flash into the
# request body (the protocol of transport.Body: json_length / json_chunks).
# MIT license
#
# Records whose bytes are already what the wire wants (a flat user/assistant message, flat
# tool results re-framed for the backend) are copied from the files through one buffer;
# the others (tool calls, content blocks, another backend's records) are parsed and
# converted one at a time. Pairing of tool calls with their results follows
# messages.pair_tools without holding the messages: a first pass (json_length) decides, per
# message, whether it is sent and counts the bytes; later passes (json_chunks, once per LLM
# call of the request) write them. `messages()` gives the same history as dicts.

from .._compat import const
from ..fsutil import Nothing
from ..core import FINAL, USER, backend_format
from ..messages import call_ids, classify, degrade, pair_tools
from ..wire import ANTHROPIC, RESPONSES, dump, to_wire
from . import flat
from . import format as fmt_
from .state import read
from .window import records

_BUF = const(2048)
_ROLES = (b"user", b"assistant", b"tool")
_TOOL_KEYS = (b"role", b"tool_call_id", b"content", b"is_error")
_GROUP = b'{"role":"user","content":['  # Anthropic: the results of one round in one message
_ERROR = b"Error: "


class History:
    """A session's history for one request: the summary of the records left out by the token
    budget (a system message), then the records from the window's start. A streamed element
    for transport.Body; `messages()` gives it as dicts. Made by Sessions.history()."""

    def __init__(self, snap, first, summary, backend, limit, note):
        self.snap = snap
        self.first = first  # the first record sent
        self.summary = summary  # the summary message's content, None when nothing is left out
        self.backend = backend
        self.limit = limit
        self._note = note
        self._plan = None  # (backend, flags per message, length)

    def __len__(self):
        """Records sent (the summary not counted)."""
        return self.snap.total - self.first

    def messages(self, backend=None):
        """The history as message dicts in their stored shape (the summary first), degraded
        for `backend` (default: the one it was made for), unpaired tool calls and results
        left out: what json_chunks() writes, before the wire conversion."""
        it = self._each(backend or self.backend, None)
        try:
            out = pair_tools([m for role, fields, m in it])
        finally:
            it.close()  # its files, should the list fail half way
        if self.summary is not None:
            out.insert(0, {"role": "system", "content": self.summary})
        return out

    def json_length(self, backend):
        return self._plan_for(backend)[3]

    def json_chunks(self, backend):
        """The wire messages of `backend`, as JSON texts separated by commas (byte pieces;
        each piece is valid until the next one is taken)."""
        return self._write(backend, self._plan_for(backend))

    # -- messages ----------------------------------------------------------------------------

    def _each(self, backend, rd, scanned=None):
        """(role, flat fields or None, dict or None) of every message from the window's
        start, after degradation. With a Reader `rd`, records that can go out as stored are
        scanned (their verdict added to `scanned`), or, given the verdicts of an earlier pass
        (bytes), scanned again without the checks; without `rd` every record is parsed."""
        snap = self.snap
        cur = backend_format(backend)
        damaged = 0
        first = self.first
        with open(snap.log + ".idx", "rb") if snap.count > first else Nothing() as idx, \
                open(snap.log, "rb") if snap.logged > first else Nothing() as lf, \
                open(snap.log + fmt_.PEND, "rb") if snap.pend else Nothing() as pf:
            it = records(snap, first, idx)
            try:
                for i, in_pend, off, ln, kind, fmt in it:
                    planning = isinstance(scanned, bytearray)
                    if planning:
                        scanned.append(0)
                    mism = cur and fmt and cur != fmt
                    if mism and kind != USER and kind != FINAL:
                        continue
                    f = pf if in_pend else lf
                    if not 0 < ln <= self.limit + 1:
                        damaged += 1
                        continue
                    if rd is not None:
                        objs = None
                        if planning:
                            rd.open(f, off, ln)
                            objs = flat.scan(rd, True)
                            if objs is not None and rd.ends_line() and _sendable(objs) and (
                                    not (mism and kind == FINAL) or _degrades_to_itself(objs)):
                                scanned[-1] = 1
                            else:
                                objs = None
                        elif scanned[i - first]:
                            rd.open(f, off, ln)
                            objs = flat.scan(rd, False)
                            if objs is None:
                                raise OSError(5, "session history changed while it was sent")
                        if objs is not None:
                            for o in objs:
                                yield o[b"role"][2].decode(), o, None
                            continue
                    obj = read(f, off, ln, self.limit)
                    if obj is None or not classify(obj)[0]:
                        damaged += 1
                        continue
                    if mism and kind == FINAL:
                        obj = degrade(obj) if isinstance(obj, dict) else None
                        if obj is None:
                            continue
                    if isinstance(obj, list):
                        for m in obj:
                            if isinstance(m, dict):
                                yield m.get("role"), None, m
                    else:
                        yield obj.get("role"), None, obj
            finally:
                it.close()
        if damaged and not isinstance(scanned, bytes):  # said once per request
            self._note("%s: %d damaged record(s) skipped in replay" % (snap.log, damaged))

    # -- the request body --------------------------------------------------------------------

    def _plan_for(self, backend):
        p = self._plan
        if p is None or p[0] != backend:
            p = self._plan = (backend,) + self._make_plan(backend)
        return p

    def _make_plan(self, backend):
        """(flags, verdicts, length): whether each message is sent (pair_tools' rule),
        whether each record goes out as stored, and the byte count json_chunks writes."""
        flags = bytearray()
        scanned = bytearray()
        total = items = 0
        if self.summary is not None:
            total += len(self._summary(backend))
            items += 1
        group = None  # [call's number, ids, (its length, wire items), [(n, id, length)]]
        it = self._each(backend, flat.Reader(_BUF), scanned)
        try:
            for n, msg in enumerate(it):
                group, total, items = _step(n, msg, backend, flags, group, total, items)
        finally:
            it.close()
        if group is not None:
            total, items = _close(group, flags, total, items, backend)
        return flags, bytes(scanned), total + max(items - 1, 0)

    def _summary(self, backend):
        return b",".join(dump(w).encode() for w in
                         to_wire({"role": "system", "content": self.summary}, backend))

    def _write(self, backend, plan):
        flags = plan[1]
        sep = False  # a comma before the next item
        if self.summary is not None:
            yield self._summary(backend)
            sep = True
        grouped = backend == ANTHROPIC
        in_group = False
        rd = flat.Reader(_BUF)
        it = self._each(backend, rd, plan[2])
        try:
            for n, (role, fields, m) in enumerate(it):
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
                for p in _parts(backend, fields, m, block):
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


def _parts(backend, fields, m, block):
    """The wire text of one message: bytes, and (start, end) spans of the record's file.
    `block`: an Anthropic tool result's block alone (it goes into its round's message)."""
    if fields is None:
        ws = to_wire(m, backend)
        if block:
            return [dump(ws[0]["content"][0]).encode()]
        return [b",".join(dump(w).encode() for w in ws)]
    role = fields[b"role"][2]
    content = fields.get(b"content")
    span = (content[0], content[1]) if content is not None and content[0] >= 0 else None
    if role != b"tool":
        return [b'{"role":"%s","content":"' % role, span, b'"}']
    tid = fields.get(b"tool_call_id")
    tid = b'"%s"' % tid[2] if tid is not None and tid[0] >= 0 else b'""'
    err = fields.get(b"is_error")
    err = err is not None and err[2] == b"true"
    if backend == ANTHROPIC:
        out = [b'{"type":"tool_result","tool_use_id":%s,"content":"' % tid]
    elif backend == RESPONSES:
        out = [b'{"type":"function_call_output","call_id":%s,"output":"' % tid]
    else:
        out = [b'{"role":"tool","tool_call_id":%s,"content":"' % tid]
    if err and backend != ANTHROPIC:
        out.append(_ERROR)
    if span is not None:
        out.append(span)
    if backend == ANTHROPIC:
        out.append(b'","is_error":%s}' % (b"true" if err else b"false"))
    else:
        out.append(b'"}')
    return out


def _length(backend, fields, m, block):
    n = 0
    for p in _parts(backend, fields, m, block):
        if isinstance(p, tuple):
            n += p[1] - p[0]
        elif p:
            n += len(p)
    return n


def _step(n, msg, backend, flags, group, total, items):
    """One message of the first pass: decided now, or held in a tool-call group until the
    group ends. Returns (group, total, items)."""
    role, fields, m = msg
    flags.append(0)
    if group is not None:
        if role == "tool":
            group[3].append((n, _tool_id(fields, m),
                             _length(backend, fields, m, backend == ANTHROPIC)))
            return group, total, items
        total, items = _close(group, flags, total, items, backend)
        group = None
    if role == "tool":
        return None, total, items  # a result whose call is not right before it
    ids = call_ids(m) if m is not None and role == "assistant" else ()
    k = 1 if fields is not None else len(to_wire(m, backend))
    if ids:
        return [n, ids, (_length(backend, fields, m, False), k), []], total, items
    if k:
        flags[n] = 1
        total += _length(backend, fields, m, False)
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


def _tool_id(fields, m):
    if fields is None:
        return m.get("tool_call_id")
    v = fields.get(b"tool_call_id")
    return v[2].decode() if v is not None and v[0] >= 0 else None


def _degrades_to_itself(objs):
    # Another backend's final answer: a message of string content is kept as it is.
    if len(objs) != 1:
        return False
    c = objs[0].get(b"content")
    return c is not None and c[0] >= 0


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
