# An offline LLM for tests, the demo and the virtual board: it answers from a script.
# MIT license

from claw_memory._compat import dumps
from claw_memory.reply import LLMError, Reply, ToolCall
from claw_memory.wire import convert, dump


def say(text, backend="openai"):
    """A final answer."""
    if backend == "anthropic":
        raw = {"role": "assistant", "content": [{"type": "text", "text": text}]}
    else:
        raw = {"role": "assistant", "content": text}
    return Reply(text, [], dumps(raw), "stop")


def call(name, args=None, call_id=None, backend="openai", text=""):
    """A tool call (`args` a dict, or a raw string to send malformed arguments)."""
    call_id = call_id or "call_" + name
    arguments = args if isinstance(args, str) else dumps(args or {})
    if backend == "anthropic":
        blocks = [{"type": "text", "text": text}] if text else []
        blocks.append({"type": "tool_use", "id": call_id, "name": name,
                       "input": args if isinstance(args, dict) else {}})
        raw = {"role": "assistant", "content": blocks}
    else:
        raw = {"role": "assistant", "content": text or None, "tool_calls": [
            {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}]}
    return Reply(text, [ToolCall(call_id, name, arguments)], dumps(raw), "tool_calls")


class ScriptedLLM:
    """Each chat() takes the next step: a Reply, a str (a final answer), an exception to
    raise, or a function(system, messages, tools) returning one of those. Every call is
    recorded in `calls` as {"system","messages","tools"}, the messages as dicts.

    It takes the history streamed, as the real clients do, and checks every streamed element:
    the bytes it writes must be what its messages() give converted to the backend's wire
    shape (AssertionError otherwise), so every agent test also checks the streamed body."""

    streams_history = True

    def __init__(self, steps=(), backend="openai"):
        self.steps = list(steps)
        self.backend = backend
        self.calls = []

    def add(self, *steps):
        self.steps += list(steps)

    async def chat(self, system, messages, tools=None):
        messages = expand(messages, self.backend)
        self.calls.append({"system": system, "messages": list(messages),
                           "tools": [t.name for t in tools or ()]})
        if not self.steps:
            raise LLMError("the script has no more answers", "malformed")
        step = self.steps.pop(0)
        if callable(step) and not isinstance(step, (Reply, BaseException)):
            step = step(system, messages, tools)
        if isinstance(step, BaseException):
            raise step
        if isinstance(step, str):
            step = say(step, self.backend)
        return step


def expand(messages, backend):
    """Messages with each streamed element replaced by its messages(), after checking that
    its bytes are those of its messages on `backend`'s wire."""
    out = []
    for m in messages:
        if isinstance(m, dict):
            out.append(m)
            continue
        msgs = m.messages(backend)
        want = b",".join(dump(w).encode() for w in convert(msgs, backend))
        got = b"".join(bytes(c) for c in m.json_chunks(backend))
        if got != want or m.json_length(backend) != len(got):
            raise AssertionError("streamed history differs from its messages on %s:\n%r\n%r"
                                 % (backend, got, want))
        out += msgs
    return out
