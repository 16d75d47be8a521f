# claw_memory.llm.clients: the three clients, each with its request body and its answer
# parser: OpenAI chat completions, Anthropic messages (tool_use), OpenAI Responses.
# MIT license

from .._compat import dumps
from ..core import args_text
from ..reply import Reply, ToolCall, answer_raw, calls_raw
from ..messages import text_of
from ..wire import ANTHROPIC, OPENAI, RESPONSES, args_obj
from ..messages import as_dict
from .base import _Bad, _Client, _fill_ids, _tool_defs, _wire
from .transport import MAX_ANSWER

# -- OpenAI chat completions -----------------------------------------------------------------


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
        max_answer=MAX_ANSWER,
    ):
        super().__init__(base_url, model, api_key, timeout, max_tokens, headers, ca, insecure, log,
                         max_answer)

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


# -- Anthropic messages ----------------------------------------------------------------------


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
        max_answer=MAX_ANSWER,
    ):
        super().__init__(base_url, model, api_key, timeout, max_tokens, headers, ca, insecure, log,
                         max_answer)
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
        for b in uses:  # (replayed as stored: Anthropic refuses an `input` that is no object)
            b["input"] = args_obj(b.get("input"))
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


# -- OpenAI Responses ------------------------------------------------------------------------


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
        max_answer=MAX_ANSWER,
    ):
        super().__init__(base_url, model, api_key, timeout, max_tokens, headers, ca, insecure, log,
                         max_answer)
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
        raise _Bad("error: %s" % (as_dict(err).get("message") or err))
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
                part = as_dict(part)
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
    reason = as_dict(obj.get("incomplete_details")).get("reason")
    if status == "incomplete" and not text and not calls:
        raise _Bad("incomplete (%s)" % reason)
    stop = reason if status == "incomplete" and reason else status
    tcs = [ToolCall(c["call_id"], c["name"], c["arguments"]) for c in calls]
    if not tcs:
        return Reply(text, tcs, answer_raw(RESPONSES, text), stop)
    return Reply(text, tcs, calls_raw(RESPONSES, text, tcs, output), stop)
