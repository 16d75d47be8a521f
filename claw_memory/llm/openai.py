# claw_memory.llm.openai: the OpenAI-compatible chat completions client.
# MIT license

from ..core import Reply, ToolCall, answer_raw, args_text, calls_raw
from ..messages import text_of
from ..wire import OPENAI
from .base import _Bad, _Client, _fill_ids, _tool_defs, _wire


class OpenAI(_Client):
    """OpenAI-compatible chat completions."""

    backend = "openai"
    path = "/chat/completions"

    def __init__(
        self,
        base_url="https://api.openai.com/v1",
        model="gpt-4o-mini",
        api_key=None,
        timeout=60,
        max_tokens=1024,
        headers=None,
        ca=None,
        insecure=False,
        log=None,
    ):
        super().__init__(base_url, model, api_key, timeout, max_tokens, headers, ca, insecure, log)

    def _request(self, system, messages, tools):
        return _openai_body(system, messages, tools, self.model, self.max_tokens) + (self._bearer(),)

    def _reply(self, obj):
        choices = obj.get("choices")
        if not isinstance(choices, list) or not choices:
            err = obj.get("error")
            if isinstance(err, dict):
                err = err.get("message")
            raise _Bad("no choices" + (" (error: %s)" % err if err else ""))
        choice = choices[0]
        msg = choice.get("message") if isinstance(choice, dict) else None
        if not isinstance(msg, dict):
            raise _Bad("choices[0].message is not an object")
        calls = msg.get("tool_calls") or []
        if not isinstance(calls, list):
            raise _Bad("tool_calls is not a list")
        out = []
        for i, c in enumerate(calls):
            fn = c.get("function") if isinstance(c, dict) else None
            if not isinstance(fn, dict) or not isinstance(fn.get("name"), str) or not fn["name"]:
                raise _Bad("tool call %d has no function name" % i)
        _fill_ids(calls, "id")
        for c in calls:
            fn = c["function"]
            out.append(ToolCall(c["id"], fn["name"], args_text(fn.get("arguments"))))
        stop = choice.get("finish_reason")
        text = text_of(msg.get("content"))
        # The record is the message in request shape (role, content, tool_calls: no
        # reasoning_content, refusal...), so replay sends it as it is stored; a plain answer
        # keeps ESP-Claw's key order, which the session layer streams without parsing.
        raw = calls_raw(OPENAI, text, out) if out else answer_raw(OPENAI, text)
        return Reply(text, out, raw, stop)


def _openai_body(system, messages, tools, model, max_tokens):
    msgs = ([{"role": "system", "content": system}] if system else []) + _wire(messages, OPENAI)
    head = {"model": model, "max_tokens": max_tokens}
    defs = _tool_defs(tools)
    if defs:
        head["tools"] = [
            {"type": "function", "function": {"name": n, "description": d, "parameters": s}}
            for n, d, s in defs
        ]
    return head, "messages", msgs
