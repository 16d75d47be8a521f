# claw_memory.session.stream: the history a request sends, streamed from flash into the
# request body (the protocol of transport.Body: json_length / json_chunks).
# MIT license
#
# Records whose bytes are already what the wire wants (flat messages, session.flatmsg) are
# copied from the files through one buffer; the others (tool calls, content blocks, another
# backend's records) are parsed and converted one at a time. Pairing of tool calls with their
# results follows messages.pair_tools without holding the messages: a first pass
# (json_length) scans the records, decides per message whether it is sent, counts the bytes
# and keeps where the copied parts are (a few ints per message, session.plan); later passes
# (json_chunks, once per LLM call of the request) copy them. `messages()` gives the same
# history as dicts.

from .._compat import EIO, const
from ..core import FINAL, TOOL_CALL, backend_format
from ..messages import classify, degrade, pair_tools
from ..wire import ANTHROPIC, ANTHROPIC_ROUND, dumped
from . import flat
from . import window
from .flatmsg import NAMES, again, quick, scanned, wire_parts
from .plan import Plan, close, step
from .state import read
from .window import foreign, records

_BUF = const(1024)


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
        self._plan = None  # Plan of the first pass

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

    def messages(self, backend=None, summary=True):
        """The history as message dicts in their stored shape (the summary first, unless
        `summary=False`), degraded for `backend` (default: the one it was made for), unpaired
        tool calls and results left out: what json_chunks() writes, before the wire conversion."""
        it = self._parsed(backend or self.backend)
        try:
            out = pair_tools(list(it))
        finally:
            it.close()  # its files, should the list fail half way
        line_b = self.summary if summary else None
        if line_b is not None:
            out.insert(0, {"role": "system", "content": line_b})
        return out

    def json_length(self, backend):
        return self._plan_for(backend).length

    def json_chunks(self, backend):
        """The wire messages of `backend`, as JSON texts separated by commas (byte pieces;
        each piece is valid until the next one is taken)."""
        return self._write(backend, self._plan_for(backend))

    # -- the records, one generator per pass ---------------------------------------------------
    # Each yields the messages from the window's start after degradation: as dicts
    # (_parsed), or as (role, flat message or None, dict or wire text or None) (_scanned,
    # _again).

    def _records(self, theirs, bad):
        """The records from the window's start that may be sent (`theirs`: window.foreign of
        the backend; records of an impossible length counted in bad[0])."""
        return records(self.snap, self.first, None, theirs, self.limit + 1, bad)

    def _dicts(self, f, off, ln, kind, degraded, bad):
        """The messages of a record parsed (`degraded`: another backend's answer, as text),
        none when it is damaged (counted in bad[0]) or has no text."""
        obj = read(f, off, ln, self.limit)
        if obj is None or not classify(obj)[0]:  # a record: a message, or a list of them
            bad[0] += 1
            return ()
        if degraded:
            obj = degrade(obj) if isinstance(obj, dict) else None
            if obj is None:
                return ()
        return obj if isinstance(obj, list) else (obj,)

    def _damaged(self, bad):
        if bad[0]:  # said once per request
            self._note("%s: %d damaged record(s) skipped in replay" % (self.snap.log, bad[0]))

    def _parsed(self, backend):
        """Every message as a dict (messages())."""
        theirs = foreign(backend_format(backend))
        bad = [0]
        it = self._records(theirs, bad)
        try:
            for i, f, off, ln, kind, fmt in it:
                for m in self._dicts(f, off, ln, kind, kind == FINAL and fmt in theirs, bad):
                    yield m
        finally:
            it.close()
        self._damaged(bad)

    def _scanned(self, rd, plan):
        """The first pass: flat records are read through `rd` (their messages as flat
        messages) and `plan` learns them; the others are parsed."""
        theirs = foreign(backend_format(plan.backend))
        first = self.first
        t0, tv = self._st.checked or (0, b"")
        bad = [0]
        it = self._records(theirs, bad)
        try:
            for i, f, off, ln, kind, fmt in it:
                degraded = kind == FINAL and fmt in theirs
                out = None
                if kind != TOOL_CALL:  # a tool call is never flat (its calls are nested)
                    # a record checked by an earlier request of this session is only taken
                    # apart (the log is rewritten only with a new State)
                    rd.open(f, off, ln)
                    out = quick(rd, not (t0 <= i < t0 + len(tv) and tv[i - t0]))
                    if out is None:  # not in the usual key order: scanned
                        rd.open(f, off, ln)
                        out = scanned(rd)
                    if out is not None and degraded and (len(out) != 1 or out[0][3] < 0):
                        out = None  # another backend's answer that is no plain text
                if out is not None:
                    plan.verdicts[i - first] = 1
                    plan.keep(i, out)
                    for d in out:
                        yield NAMES[d[0]], d, None
                    continue
                ms = self._dicts(f, off, ln, kind, degraded, bad)
                for m in ms:
                    yield m.get("role"), None, m
                plan.counts[i - first] = min(len(ms), 255)
        finally:
            it.close()
        self._damaged(bad)

    def _again(self, rd, plan):
        """A later pass: what the first pass kept (flat messages' places, converted messages'
        wire text) is used, the rest read again."""
        theirs = foreign(backend_format(plan.backend))
        first = self.first
        sp = plan.spans
        k = 0  # cursor in plan.spans
        n = 0  # messages yielded
        bad = [0]
        it = self._records(theirs, bad)
        try:
            for i, f, off, ln, kind, fmt in it:
                if plan.verdicts[i - first]:
                    if k < len(sp) and sp[k] == i:
                        out = []
                        while k < len(sp) and sp[k] == i:
                            out.append(tuple(sp[k + 1 : k + 6]))
                            k += 6
                        rd.use(f)
                    else:  # beyond what the first pass kept: scan again, unchecked
                        out = again(rd, f, off, ln)
                    for d in out:
                        yield NAMES[d[0]], d, None
                    n += len(out)
                    continue
                c = plan.counts[i - first]
                kept = [plan.text(j) for j in range(n, n + c)]
                if None not in kept:
                    for t in kept:  # converted in the first pass: kept
                        yield t[0], None, t[1]
                    n += c
                    continue
                ms = self._dicts(f, off, ln, kind, kind == FINAL and fmt in theirs, bad)
                for m in ms:
                    yield m.get("role"), None, m
                n += len(ms)
        finally:
            it.close()

    # -- the request body --------------------------------------------------------------------

    def _plan_for(self, backend):
        p = self._plan
        if p is None or p.backend != backend:
            p = self._plan = Plan(backend, len(self))
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
        it = self._scanned(flat.Reader(_BUF), plan)
        try:
            for n, msg in enumerate(it):
                group, total, items = step(n, msg, backend, plan, group, total, items)
        finally:
            it.close()
        if group is not None:
            total, items = close(group, plan.flags, total, items, backend)
        plan.length = total + max(items - 1, 0)
        plan.done = True
        self._st.checked = (self.first, plan.verdicts)  # trusted by the next request

    def _summary(self, backend):
        return dumped({"role": "system", "content": self.summary}, backend)

    def _write(self, backend, plan):
        flags = plan.flags
        sep = False  # a comma before the next item
        if plan.head:
            yield plan.head
            sep = True
        grouped = backend == ANTHROPIC
        in_group = False
        frs = plan.frames
        rd = flat.Reader(_BUF)
        it = self._again(rd, plan)
        try:
            for n, (role, d, m) in enumerate(it):
                if n >= len(flags):
                    raise OSError(EIO, "session history changed while it was sent")
                if not flags[n]:
                    continue
                block = grouped and role == "tool"
                if in_group and not block:
                    yield ANTHROPIC_ROUND[1]
                    in_group = False
                if in_group:
                    yield b","
                else:
                    if sep:
                        yield b","
                    if block:
                        yield ANTHROPIC_ROUND[0]
                        in_group = True
                if d is not None:
                    for p in wire_parts(frs, d):
                        if isinstance(p, tuple):
                            for c in rd.copy(p[0], p[1]):
                                yield c
                        elif p:
                            yield p
                else:  # converted: in the first pass and kept, or now
                    p = m if isinstance(m, memoryview) else dumped(m, backend, block)
                    if p:
                        yield p
                sep = True
        finally:
            it.close()
        if in_group:
            yield ANTHROPIC_ROUND[1]
