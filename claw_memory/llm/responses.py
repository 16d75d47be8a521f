# claw_memory.llm.responses: the OpenAI Responses API client (`/responses`, stateless).
# MIT license

from ..core import Reply, ToolCall, answer_raw, args_text, calls_raw
from ..wire import RESPONSES
from .base import _Bad, _Client, _dict, _fill_ids, _tool_defs, _wire


class OpenAIResponses(_Client):
    """OpenAI Responses API (`/responses`), stateless: `store` is false and each request
    carries the whole history. `reasoning_effort` ("low", "medium", ...) is for reasoning
    models only; with it the encrypted reasoning is kept and replayed within a turn."""

    backend = "openai_responses"
    path = "/responses"

    def __init__(
        self,
        base_url="https://api.openai.com/v1",
        model="gpt-4o-mini",
        api_key=None,
        timeout=60,
        max_tokens=1024,
        headers=None,
        reasoning_effort=None,
        ca=None,
        insecure=False,
        log=None,
    ):
        super().__init__(base_url, model, api_key, timeout, max_tokens, headers, ca, insecure, log)
        self.reasoning_effort = reasoning_effort

    def _request(self, system, messages, tools):
        return _responses_body(system, messages, tools, self.model, self.max_tokens,
                               self.reasoning_effort) + (self._bearer(),)

    def _reply(self, obj):
        return _from_responses(obj)


def _responses_body(system, messages, tools, model, max_tokens, reasoning_effort=None):
    head = {"model": model, "max_output_tokens": max_tokens, "store": False}
    if system:
        head["instructions"] = system
    if reasoning_effort:
        head["reasoning"] = {"effort": reasoning_effort}
        head["include"] = ["reasoning.encrypted_content"]
    defs = _tool_defs(tools)
    if defs:
        head["tools"] = [
            {"type": "function", "name": n, "description": d, "parameters": s}
            for n, d, s in defs
        ]
    return head, "input", _wire(messages, RESPONSES)


def _from_responses(obj):
    """A Responses API answer -> Reply. `raw` is ESP-Claw's record shape: an OpenAI chat
    assistant message; with tool calls it also keeps the raw output under
    `_claw_provider_state` so that the next request can replay it verbatim."""
    err = obj.get("error")
    if err:
        raise _Bad("error: %s" % (_dict(err).get("message") or err))
    status = obj.get("status")
    if status == "failed":
        raise _Bad("status failed")
    output = obj.get("output")
    if not isinstance(output, list):
        raise _Bad("output is not a list")
    texts = []
    calls = []
    for i, item in enumerate(output):
        if not isinstance(item, dict):
            raise _Bad("output item %d is not an object" % i)
        kind = item.get("type")
        if kind == "message":
            for part in item.get("content") or ():
                part = _dict(part)
                key = {"output_text": "text", "refusal": "refusal"}.get(part.get("type"))
                if key and isinstance(part.get(key), str):
                    texts.append(part[key])
        elif kind == "function_call":
            if not isinstance(item.get("name"), str) or not item["name"]:
                raise _Bad("function_call %d has no name" % i)
            item["arguments"] = args_text(item.get("arguments"))
            calls.append(item)
    _fill_ids(calls, "call_id")
    text = "".join(texts)
    reason = _dict(obj.get("incomplete_details")).get("reason")
    if status == "incomplete" and not text and not calls:
        raise _Bad("incomplete (%s)" % reason)
    stop = reason if status == "incomplete" and reason else status
    tcs = [ToolCall(c["call_id"], c["name"], c["arguments"]) for c in calls]
    if not tcs:
        return Reply(text, tcs, answer_raw(RESPONSES, text), stop)
    return Reply(text, tcs, calls_raw(RESPONSES, text, tcs, output), stop)
