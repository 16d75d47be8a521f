# claw_memory.llm.anthropic: the Anthropic messages API client, with tool_use.
# MIT license

from .._compat import dumps
from ..core import Reply, ToolCall, answer_raw, args_text
from ..wire import ANTHROPIC
from .base import _Bad, _Client, _fill_ids, _tool_defs, _wire


class Anthropic(_Client):
    """Anthropic messages API with tool_use."""

    backend = "anthropic"
    path = "/v1/messages"

    def __init__(
        self,
        base_url="https://api.anthropic.com",
        model="claude-3-5-haiku-latest",
        api_key=None,
        timeout=60,
        max_tokens=1024,
        headers=None,
        version="2023-06-01",
        ca=None,
        insecure=False,
        log=None,
    ):
        super().__init__(base_url, model, api_key, timeout, max_tokens, headers, ca, insecure, log)
        self.version = version

    def _request(self, system, messages, tools):
        headers = {"Content-Type": "application/json", "anthropic-version": self.version}
        if self.api_key:
            headers["x-api-key"] = self.api_key
        return _anthropic_body(system, messages, tools, self.model, self.max_tokens) + (headers,)

    def _reply(self, obj):
        content = obj.get("content")
        if not isinstance(content, list):
            err = obj.get("error")
            if isinstance(err, dict):
                err = err.get("message")
            raise _Bad("content is not a list" + (" (error: %s)" % err if err else ""))
        texts = []
        uses = []
        for i, b in enumerate(content):
            if not isinstance(b, dict):
                raise _Bad("content block %d is not an object" % i)
            kind = b.get("type")
            if kind == "text":
                if not isinstance(b.get("text"), str):
                    raise _Bad("text block %d has no text" % i)
                texts.append(b["text"])
            elif kind == "tool_use":
                if not isinstance(b.get("name"), str) or not b["name"]:
                    raise _Bad("tool_use block %d has no name" % i)
                uses.append(b)
        _fill_ids(uses, "id")
        calls = [ToolCall(b["id"], b["name"], args_text(b.get("input"))) for b in uses]
        text = "".join(texts)
        if calls:  # the blocks as they came (thinking blocks go back within the turn)
            raw = dumps({"role": "assistant", "content": content})
        else:  # an answer: its text, a record the history streams as it is stored
            raw = answer_raw(ANTHROPIC, text)
        return Reply(text, calls, raw, obj.get("stop_reason"))


def _anthropic_body(system, messages, tools, model, max_tokens):
    head = {"model": model, "max_tokens": max_tokens}
    if system:
        head["system"] = system
    defs = _tool_defs(tools)
    if defs:
        head["tools"] = [{"name": n, "description": d, "input_schema": s} for n, d, s in defs]
    return head, "messages", _wire(messages, ANTHROPIC)
