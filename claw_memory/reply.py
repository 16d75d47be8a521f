# claw_memory.reply: what an LLM's `chat()` returns and raises (docs/CONTRACT.md), for the
# real clients (claw_memory.llm) and for any stand-in (tests, an offline model): both build
# the same `raw` records here, so a stand-in's turns are persisted and replayed exactly as a
# real client's. Apart from core: the memory itself never needs them (an open memory does not
# hold them).
# MIT license

import json

from ._compat import const, dumps, ticks_ms
from .core import RESPONSES, STATE, args_text, backend_format


# (answer, tool call) stop reasons of backend formats 1 OpenAI, 2 Anthropic, 3 Responses
_STOPS = const((("stop", "tool_calls"), ("end_turn", "tool_use"), ("completed", "completed")))
_ids = 0


class LLMError(Exception):
    """A chat request failed. `kind` is "http", "timeout", "network", "tls" or "malformed";
    `status` is the HTTP status when there was one."""

    def __init__(self, message, kind, status=None):
        super().__init__(message)
        self.kind = kind
        self.status = status


class ToolCall:
    """A tool the model wants run; `arguments` is always JSON text."""

    def __init__(self, id, name, arguments):
        self.id = id
        self.name = name
        self.arguments = arguments

    def __repr__(self):
        return "ToolCall(%r, %r, %r)" % (self.id, self.name, self.arguments)


class Reply:
    """The model's answer. `raw` is the assistant message as JSON text in the backend's own
    shape, ready to be persisted and replayed.

    `Reply.answer(backend, text)` and `Reply.calls(backend, calls, text="")` build the reply
    the real client of `backend` returns for such an answer (for an offline stand-in)."""

    def __init__(self, text, tool_calls, raw, stop):
        self.text = text
        self.tool_calls = tool_calls
        self.raw = raw
        self.stop = stop

    def __repr__(self):
        return "Reply(%r, %r, stop=%r)" % (self.text, self.tool_calls, self.stop)

    @classmethod
    def answer(cls, backend, text):
        """A final answer."""
        return cls(text, [], answer_raw(backend, text), _STOPS[_format(backend) - 1][0])

    @classmethod
    def calls(cls, backend, calls, text=""):
        """Tool calls: each a ToolCall, or a (name, arguments) pair (arguments a dict or JSON
        text; the call gets a fresh id). `text` is what the model said alongside."""
        f = _format(backend)
        out = []
        for c in calls:
            if isinstance(c, ToolCall):
                cid, name, args = c.id, c.name, args_text(c.arguments)
            else:
                cid, name, args = new_call_id(), c[0], args_text(c[1])
            if f == 2:  # the Anthropic client reads `input` objects and re-encodes them
                args = dumps(_args_object(args))
            out.append(ToolCall(cid, name, args))
        if not out:
            raise ValueError("Reply.calls: no tool call")
        return cls(text, out, calls_raw(backend, text, out), _STOPS[f - 1][1])


def _format(backend):
    f = backend_format(backend)
    if not f:
        raise ValueError("unknown LLM backend: %r" % (backend,))
    return f


def _args_object(text):
    try:
        obj = json.loads(text)
    except ValueError:
        obj = None
    if not isinstance(obj, dict):
        raise ValueError("tool call arguments are not a JSON object: %r" % (text[:60],))
    return obj


def new_call_id(n=None):
    """An id for a tool call that came without one (unique within a run)."""
    global _ids
    if n is None:
        _ids += 1
        n = _ids
    return "call_%x_%d" % (ticks_ms() & 0xFFFFFFF, n)


def answer_raw(backend, text):
    """The record of a final answer, as the client of `backend` stores it."""
    if _format(backend) == 3:  # as the Responses client has always stored it
        return dumps({"role": "assistant", "content": text})
    # ESP-Claw's key order: the session layer streams such a record as it is stored
    return '{"role":"assistant","content":%s}' % dumps(text)


def calls_raw(backend, text, calls, output=None):
    """The record of an answer with tool calls (ToolCall list), as the client of `backend`
    stores it. Responses: `output` is the raw output to replay (default: the calls as
    function_call items, after a message with `text`)."""
    f = _format(backend)
    if f == 2:
        blocks = [{"type": "text", "text": text}] if text else []
        for c in calls:
            blocks.append({"type": "tool_use", "id": c.id, "name": c.name,
                           "input": _args_object(c.arguments)})
        return dumps({"role": "assistant", "content": blocks})
    wire = [{"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments}}
            for c in calls]
    if f == 1:
        out = {"role": "assistant", "content": text or None}
        out["tool_calls"] = wire
        return dumps(out)
    if output is None:
        output = [{"type": "message", "role": "assistant",
                   "content": [{"type": "output_text", "text": text}]}] if text else []
        output += [{"type": "function_call", "call_id": c.id, "name": c.name,
                    "arguments": c.arguments} for c in calls]
    return dumps({"role": "assistant", "content": text or None, "tool_calls": wire,
                  STATE: {"backend": RESPONSES, "output": output}})
