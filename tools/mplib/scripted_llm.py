# An offline LLM for tests, the demo and the virtual board: it answers from a script.
# MIT license

from claw_memory._compat import dumps
from claw_memory.llm import LLMError, Reply, ToolCall


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
    recorded in `calls` as {"system","messages","tools"}."""

    def __init__(self, steps=(), backend="openai"):
        self.steps = list(steps)
        self.backend = backend
        self.calls = []

    def add(self, *steps):
        self.steps += list(steps)

    async def chat(self, system, messages, tools=None):
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
