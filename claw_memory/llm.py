# claw_memory: LLM clients (OpenAI chat completions, OpenAI Responses, Anthropic messages)
# over aiohttp.
# MIT license
#
# Each client turns the history (messages of any of the three backends, and streamed
# elements: see transport.Body) into its wire shape, POSTs it through transport.py (verified
# TLS, streamed body, no leaked socket) and turns the answer into a Reply whose `raw` is the
# record the session layer persists. The shape conversions are the module-level functions
# below the clients.

import json

from . import certs, transport
from ._compat import const, dumps, ticks_ms
from .messages import as_dict, text_of
from .text import clean, surrogates
from .transport import LLMError, streamed
from .wire import ANTHROPIC, OPENAI, RESPONSES, STATE, args_text, convert, to_wire

_SNIPPET = const(200)  # characters of a non-JSON error body quoted in a message


def _wire(messages, backend):
    # The history in the backend's request shape; streamed elements (the session layer's
    # history, already in that shape) pass as they are, between the runs of messages.
    out = []
    run = []
    for m in messages:
        if streamed(m):
            out += convert(run, backend)
            run = []
            out.append(m)
        else:
            run.append(m)
    return out + convert(run, backend)


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
    shape, ready to be persisted and replayed."""

    def __init__(self, text, tool_calls, raw, stop):
        self.text = text
        self.tool_calls = tool_calls
        self.raw = raw
        self.stop = stop

    def __repr__(self):
        return "Reply(%r, %r, stop=%r)" % (self.text, self.tool_calls, self.stop)


class _Bad(Exception):
    """The answer's JSON does not have the expected shape."""


def _tool_defs(tools):
    """(name, description, schema dict) for each tool object (or dict)."""
    out = []
    for t in tools or ():
        if isinstance(t, dict):
            name, desc, schema = t.get("name"), t.get("description"), t.get("schema")
        else:
            name, desc, schema = t.name, t.description, t.schema
        if isinstance(schema, (str, bytes)):
            try:
                schema = json.loads(schema)
            except ValueError:
                raise ValueError("tool %s: schema is not valid JSON" % name)
        if not schema:
            schema = {"type": "object", "properties": {}}
        out.append((name, desc or "", schema))
    return out


def _fill_ids(calls, key):
    """Give tool calls without an id one (some compatible servers omit it), so that their
    results can still be paired with them when the history is replayed."""
    for i, c in enumerate(calls):
        if not c.get(key):
            c[key] = "call_%x_%d" % (ticks_ms() & 0xFFFFFFF, i)


def _exc(e):
    msg = str(e)
    return type(e).__name__ + (": " + msg if msg else "")


def _decode(data):
    try:
        return str(data, "utf-8")
    except UnicodeError:
        return clean(data)  # invalid UTF-8 dropped


def _check(name, status, text):
    """The parsed JSON body of a 2xx answer; LLMError otherwise."""
    obj = None
    try:
        obj = json.loads(surrogates(text))
    except (ValueError, RuntimeError):  # RuntimeError: nesting too deep
        pass
    if not 200 <= status < 300:
        msg = None
        if isinstance(obj, dict):
            err = obj.get("error")
            if isinstance(err, dict):
                msg = err.get("message")
            elif isinstance(err, str):
                msg = err
            if not msg and isinstance(obj.get("message"), str):
                msg = obj["message"]
        if not isinstance(msg, str) or not msg:
            msg = text[:_SNIPPET] or "(empty body)"
        raise LLMError("%s: HTTP %d: %s" % (name, status, msg), "http", status)
    if obj is None:
        raise LLMError(
            "%s: malformed response: body is not JSON: %r" % (name, text[:_SNIPPET]),
            "malformed",
            status,
        )
    if not isinstance(obj, dict):
        raise LLMError(
            "%s: malformed response: body is not a JSON object" % name, "malformed", status
        )
    return obj


class _Client:
    backend = ""
    path = ""
    streams_history = True  # the agent hands the history over streamed (transport.Body)
    max_answer = transport.MAX_ANSWER  # bytes of an answer read at most

    def __init__(self, base_url, model, api_key, timeout, max_tokens, headers, ca, insecure,
                 log):
        transport.aiohttp_module()  # a clear ImportError now, not a failed chat later
        transport.split_url(base_url)  # ValueError for anything but http(s)://host[:port]
        self.base_url = base_url.rstrip("/")
        self.model = model
        self.api_key = api_key
        self.timeout = timeout
        self.max_tokens = max_tokens
        self.headers = headers or {}
        self.log = log
        self.tls = certs.tls_context(self.base_url, ca, insecure, log, self.backend)
        if api_key and log and transport.cleartext(self.base_url):
            log("%s: the API key goes to %s over plain http" % (self.backend, self.base_url))

    async def chat(self, system, messages, tools=None):
        """One request; returns a Reply or raises LLMError."""
        name = self.backend
        try:
            head, key, items, headers = self._request(system, messages, tools)
            body = transport.Body(head, key, items, name)
        except (KeyError, IndexError, TypeError, AttributeError) as e:
            raise ValueError("%s: cannot convert the history: %s" % (name, _exc(e)))
        for k in self.headers:
            # replace, whatever the spelling: a header must not be sent twice
            for old in [h for h in headers if h.lower() == k.lower()]:
                del headers[old]
            headers[k] = self.headers[k]
        status, data = await transport.post(name, self.base_url + self.path, headers, body,
                                            self.tls, self.timeout, self.max_answer)
        text = _decode(data)
        data = None  # RAM: the bytes go before the text is parsed
        obj = _check(name, status, text)
        text = None
        try:
            return self._reply(obj)
        except _Bad as e:
            raise LLMError("%s: malformed response: %s" % (name, e), "malformed", status)
        except (KeyError, IndexError, TypeError, ValueError, AttributeError) as e:
            raise LLMError("%s: malformed response: %s" % (name, _exc(e)), "malformed", status)

    def _bearer(self):
        headers = {"Content-Type": "application/json"}
        if self.api_key:
            headers["Authorization"] = "Bearer " + self.api_key
        return headers


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
        if out:
            raw = dumps(to_wire(msg, OPENAI)[0])
        else:
            raw = '{"role":"assistant","content":%s}' % dumps(text)
        return Reply(text, out, raw, stop)


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
            raw = '{"role":"assistant","content":%s}' % dumps(text)
        return Reply(text, calls, raw, obj.get("stop_reason"))


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


# -- request bodies: (head, key of the message array, its items) ------------------------------


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


def _anthropic_body(system, messages, tools, model, max_tokens):
    head = {"model": model, "max_tokens": max_tokens}
    if system:
        head["system"] = system
    defs = _tool_defs(tools)
    if defs:
        head["tools"] = [{"name": n, "description": d, "input_schema": s} for n, d, s in defs]
    return head, "messages", _wire(messages, ANTHROPIC)


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


def request_body(backend, system, messages, tools=None, model="model", max_tokens=1024):
    """The exact JSON body (bytes) a client of `backend` would POST for this request, built
    here without a network or aiohttp (`claw-memory context --request`)."""
    make = {OPENAI: _openai_body, ANTHROPIC: _anthropic_body, RESPONSES: _responses_body}.get(backend)
    if make is None:
        raise ValueError("unknown LLM backend: %r" % (backend,))
    head, key, items = make(system, messages, tools, model, max_tokens)
    return b"".join(transport.Body(head, key, items, backend).pieces())


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
        return Reply(text, tcs, dumps({"role": "assistant", "content": text}), stop)
    raw = {
        "role": "assistant",
        "content": text or None,
        "tool_calls": [
            {"id": c.id, "type": "function",
             "function": {"name": c.name, "arguments": c.arguments}}
            for c in tcs
        ],
        STATE: {"backend": "openai_responses", "output": output},
    }
    return Reply(text, tcs, dumps(raw), stop)


def from_config(kind, **kw):
    """A client for a backend name ("openai", "anthropic", "openai_responses", or ESP-Claw's
    "*_compatible" names); keyword arguments go to its constructor."""
    if kind in ("openai", "openai_compatible"):
        return OpenAI(**kw)
    if kind in ("anthropic", "anthropic_compatible"):
        return Anthropic(**kw)
    if kind == "openai_responses":
        return OpenAIResponses(**kw)
    raise ValueError("unknown LLM backend: %r" % (kind,))
