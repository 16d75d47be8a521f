# claw_memory.session.plan: what the first pass over a streamed history decides and keeps
# for the later passes (session.stream).
# MIT license
#
# Per message: whether it is sent (messages.pair_tools' rule: a tool call goes with all its
# results or not at all), its bytes on the wire; per record: whether it goes out as stored
# (flat), and for the first of them where their messages are; the wire text of the first
# converted messages, so that later passes need not parse and convert them again.

from array import array

from .._compat import const
from ..messages import call_ids
from ..wire import ANTHROPIC, ANTHROPIC_ROUND, FLAT_ASSISTANT, FLAT_USER, dumped, frames
from .flatmsg import NAMES, tool_id, wire_length

_SPANS = const(512)  # flat messages whose parts are kept after the first pass (6 ints each)
_TEXTS = const(2048)  # bytes of converted messages kept after the first pass
_CODES = {"user": FLAT_USER, "assistant": FLAT_ASSISTANT}  # roles of kept texts


class Plan:
    """What the first pass learnt for one backend."""

    def __init__(self, backend, records):
        self.backend = backend
        self.frames = frames(backend)  # of its flat messages
        self.flags = bytearray()  # per message: sent
        self.verdicts = bytearray(records)  # per record: goes out as stored (a flat record)
        self.spans = array("i")  # record number and flat message, for the first _SPANS
        self.counts = bytearray(records)  # per record: its converted messages
        self.head = b""  # the summary message, on the wire
        # Converted messages' wire text (up to _TEXTS bytes), one blob: message number, role
        # code and end offset per message in `tix`.
        self.tbuf = bytearray()
        self.tix = array("i")
        self.length = 0
        self.done = False

    def remember(self, n, role, text):
        # A user or assistant message's (tool results are sized in their call's group).
        if len(self.tbuf) + len(text) <= _TEXTS:
            self.tbuf += text
            self.tix.extend((n, _CODES.get(role, 0), len(self.tbuf)))

    def text(self, n):
        """(role, wire text) kept for message n, or None."""
        tix = self.tix
        for k in range(0, len(tix), 3):
            if tix[k] == n:
                start = tix[k - 1] if k else 0
                return NAMES[tix[k + 1]] if tix[k + 1] else None, memoryview(self.tbuf)[start : tix[k + 2]]
            if tix[k] > n:
                break
        return None

    def keep(self, i, msgs):
        if len(self.spans) + 6 * len(msgs) <= 6 * _SPANS:
            for d in msgs:
                self.spans.append(i)
                self.spans.extend(d[:5])


def step(n, msg, backend, plan, group, total, items):
    """One message of the first pass: decided now, or held in a tool-call group until the
    group ends. Returns (group, total, items)."""
    role, d, m = msg
    flags = plan.flags
    flags.append(0)
    if group is not None:
        if role == "tool":
            if d is not None:
                length = wire_length(plan.frames, d)
            else:
                length = len(dumped(m, backend, backend == ANTHROPIC))
            group[3].append((n, m.get("tool_call_id") if d is None else tool_id(d), length))
            return group, total, items
        total, items = close(group, flags, total, items, backend)
        group = None
    if role == "tool":
        return None, total, items  # a result whose call is not right before it
    ids = call_ids(m) if m is not None and role == "assistant" else ()
    if d is not None:
        k, length = 1, wire_length(plan.frames, d)
    else:
        text = dumped(m, backend)
        # One item, however many wire messages it became (Responses: reasoning, text, calls):
        # the commas between them are in `text` already.
        k = 1 if text else 0
        length = len(text)
        plan.remember(n, role, text)
    if ids:
        return [n, ids, (length, k), []], total, items
    if k:
        flags[n] = 1
        total += length
        items += k
    return None, total, items


def close(group, flags, total, items, backend):
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
            total += len(ANTHROPIC_ROUND[0]) + len(ANTHROPIC_ROUND[1]) + sum(kept) + len(kept) - 1
            items += 1
        else:
            total += sum(kept)
            items += len(kept)
    return total, items
