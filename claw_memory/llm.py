# claw_memory: LLM clients (OpenAI chat completions, Anthropic messages) over aiohttp.
# MIT license

import asyncio
import json

from ._compat import const, dumps, ticks_ms
from .text import clean

_SNIPPET = const(200)  # characters of a non-JSON error body quoted in a message


class LLMError(Exception):
    """A chat request failed. `kind` is "http", "timeout", "network" or "malformed";
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


def _args_text(args):
    if args is None:
        return "{}"
    if isinstance(args, str):
        return args
    return dumps(args)


def _args_obj(args):
    """Tool arguments as an object; Anthropic rejects any other `input`."""
    if isinstance(args, str):
        try:
            args = json.loads(args)
        except ValueError:
            return {}
    return args if isinstance(args, dict) else {}


def _text_of(content):
    """Joined text of a content that is a str, None or a list of blocks/parts."""
    if isinstance(content, str):
        return content
    parts = []
    if isinstance(content, list):
        for b in content:
            if isinstance(b, dict) and b.get("type") == "text" and isinstance(b.get("text"), str):
                parts.append(b["text"])
    return "".join(parts)


def _dict(x):
    return x if isinstance(x, dict) else {}


def _result_text(m):
    c = m.get("content")
    if c is None:
        return ""
    return c if isinstance(c, str) else dumps(c)


def _fill_ids(calls, key):
    """Give tool calls without an id one (some compatible servers omit it), so that their
    results can still be paired with them when the history is replayed."""
    for i, c in enumerate(calls):
        if not c.get(key):
            c[key] = "call_%x_%d" % (ticks_ms() & 0xFFFFFFF, i)


async def _post(name, url, headers, body, timeout):
    """POST `body` (str), return (status, text). Transport failures become LLMError."""
    import aiohttp  # lazily: the rest of the module works without it

    async def go():
        async with aiohttp.ClientSession() as s:
            async with s.post(url, data=body, headers=headers) as r:
                return r.status, await r.read()

    try:
        status, data = await asyncio.wait_for(go(), timeout)
    except asyncio.TimeoutError:  # before OSError: it is one on CPython 3.11+
        raise LLMError("%s: no answer within %g s" % (name, timeout), "timeout")
    except MemoryError:
        raise
    except OSError as e:
        raise LLMError("%s: cannot reach %s: %s" % (name, url, _exc(e)), "network")
    except Exception as e:
        # CPython: aiohttp.ClientError that is no OSError (dropped connection, bad HTTP);
        # MicroPython: ValueError on TLS failures, IndexError/ValueError on a broken
        # status line.
        raise LLMError("%s: request to %s failed: %s" % (name, url, _exc(e)), "network")
    return status, clean(data)


def _exc(e):
    msg = str(e)
    return type(e).__name__ + (": " + msg if msg else "")


def _check(name, status, text):
    """The parsed JSON body of a 2xx answer; LLMError otherwise."""
    obj = None
    try:
        obj = json.loads(text)
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

    def __init__(self, base_url, model, api_key, timeout, max_tokens, headers):
        self.base_url = base_url.rstrip("/")
        self.model = model
        self.api_key = api_key
        self.timeout = timeout
        self.max_tokens = max_tokens
        self.headers = headers or {}

    async def chat(self, system, messages, tools=None):
        """One request; returns a Reply or raises LLMError."""
        name = self.backend
        try:
            url, headers, body = self._request(system, messages, tools)
        except (KeyError, IndexError, TypeError, AttributeError) as e:
            raise ValueError("%s: cannot convert the history: %s" % (name, _exc(e)))
        for k in self.headers:
            # replace, whatever the spelling: a header must not be sent twice
            for old in [h for h in headers if h.lower() == k.lower()]:
                del headers[old]
            headers[k] = self.headers[k]
        status, text = await _post(name, url, headers, dumps(body), self.timeout)
        obj = _check(name, status, text)
        try:
            return self._reply(obj)
        except _Bad as e:
            raise LLMError("%s: malformed response: %s" % (name, e), "malformed", status)
        except (KeyError, IndexError, TypeError, ValueError, AttributeError) as e:
            raise LLMError("%s: malformed response: %s" % (name, _exc(e)), "malformed", status)


class OpenAI(_Client):
    """OpenAI-compatible chat completions."""

    backend = "openai"

    def __init__(
        self,
        base_url="https://api.openai.com/v1",
        model="gpt-4o-mini",
        api_key=None,
        timeout=60,
        max_tokens=1024,
        headers=None,
    ):
        super().__init__(base_url, model, api_key, timeout, max_tokens, headers)

    def _request(self, system, messages, tools):
        msgs = [{"role": "system", "content": system}] if system else []
        for m in messages:
            msg = _to_openai(m)
            if msg:
                msgs.append(msg)
        body = {"model": self.model, "max_tokens": self.max_tokens, "messages": msgs}
        defs = _tool_defs(tools)
        if defs:
            body["tools"] = [
                {"type": "function", "function": {"name": n, "description": d, "parameters": s}}
                for n, d, s in defs
            ]
        headers = {"Content-Type": "application/json"}
        if self.api_key:
            headers["Authorization"] = "Bearer " + self.api_key
        return self.base_url + "/chat/completions", headers, body

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
            out.append(ToolCall(c["id"], fn["name"], _args_text(fn.get("arguments"))))
        stop = choice.get("finish_reason")
        return Reply(_text_of(msg.get("content")), out, dumps(msg), stop)


def _to_openai(m):
    """A history message as OpenAI wants it: role/content/tool_calls/tool_call_id only (some
    servers reject extra fields such as reasoning_content)."""
    role = m.get("role")
    content = m.get("content")
    if role == "user":
        return {"role": "user", "content": content if content is not None else ""}
    if role == "tool":
        text = _result_text(m)
        if m.get("is_error"):
            text = "Error: " + text
        return {"role": "tool", "tool_call_id": m.get("tool_call_id") or "", "content": text}
    if role != "assistant":
        return None  # no other role survives in the neutral history
    calls = []
    for c in m.get("tool_calls") or ():
        if not isinstance(c, dict):
            continue
        fn = _dict(c.get("function"))
        calls.append(
            {
                "id": c.get("id") or "",
                "type": "function",
                "function": {
                    "name": fn.get("name") or "",
                    "arguments": _args_text(fn.get("arguments")),
                },
            }
        )
    if isinstance(content, list):
        for b in content:
            if isinstance(b, dict) and b.get("type") == "tool_use":
                calls.append(
                    {
                        "id": b.get("id") or "",
                        "type": "function",
                        "function": {
                            "name": b.get("name") or "",
                            "arguments": _args_text(b.get("input")),
                        },
                    }
                )
    text = _text_of(content)
    out = {"role": "assistant", "content": text if text or not calls else None}
    if calls:
        out["tool_calls"] = calls
    return out


class Anthropic(_Client):
    """Anthropic messages API with tool_use."""

    backend = "anthropic"

    def __init__(
        self,
        base_url="https://api.anthropic.com",
        model="claude-3-5-haiku-latest",
        api_key=None,
        timeout=60,
        max_tokens=1024,
        headers=None,
        version="2023-06-01",
    ):
        super().__init__(base_url, model, api_key, timeout, max_tokens, headers)
        self.version = version

    def _request(self, system, messages, tools):
        body = {"model": self.model, "max_tokens": self.max_tokens}
        if system:
            body["system"] = system
        body["messages"] = _to_anthropic(messages)
        defs = _tool_defs(tools)
        if defs:
            body["tools"] = [{"name": n, "description": d, "input_schema": s} for n, d, s in defs]
        headers = {"Content-Type": "application/json", "anthropic-version": self.version}
        if self.api_key:
            headers["x-api-key"] = self.api_key
        return self.base_url + "/v1/messages", headers, body

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
        calls = [ToolCall(b["id"], b["name"], _args_text(b.get("input"))) for b in uses]
        raw = dumps({"role": "assistant", "content": content})
        return Reply("".join(texts), calls, raw, obj.get("stop_reason"))


def _blocks(content):
    if isinstance(content, list):
        return content
    if content:
        return [{"type": "text", "text": content if isinstance(content, str) else dumps(content)}]
    return []


def _to_anthropic(messages):
    """Neutral history -> Anthropic messages: tool results folded into user turns, OpenAI
    assistant messages turned into blocks, and same-role neighbours merged (the API wants
    user and assistant to alternate)."""
    conv = []
    for m in messages:
        if not isinstance(m, dict):
            continue
        role = m.get("role")
        content = m.get("content")
        if role == "tool":
            block = {
                "type": "tool_result",
                "tool_use_id": m.get("tool_call_id") or "",
                "content": _result_text(m),
                "is_error": bool(m.get("is_error")),
            }
            conv.append(("user", [block]))
        elif role == "user":
            conv.append(("user", content if content is not None else ""))
        elif role == "assistant":
            blocks = list(content) if isinstance(content, list) else _blocks(content)
            for c in m.get("tool_calls") or ():
                fn = _dict(c.get("function")) if isinstance(c, dict) else None
                if fn is not None:
                    blocks.append(
                        {
                            "type": "tool_use",
                            "id": c.get("id") or "",
                            "name": fn.get("name") or "",
                            "input": _args_obj(fn.get("arguments")),
                        }
                    )
            if blocks:  # the API rejects an empty assistant turn
                conv.append(("assistant", blocks))
    out = []
    for role, content in conv:
        if out and out[-1]["role"] == role:
            prev = out[-1]
            # a new list: never mutate the caller's messages
            prev["content"] = _blocks(prev["content"]) + _blocks(content)
        else:
            out.append({"role": role, "content": content})
    return out


def from_config(kind, **kw):
    """A client for a backend name ("openai" or "anthropic", or ESP-Claw's
    "*_compatible" names); keyword arguments go to its constructor."""
    if kind in ("openai", "openai_compatible"):
        return OpenAI(**kw)
    if kind in ("anthropic", "anthropic_compatible"):
        return Anthropic(**kw)
    raise ValueError("unknown LLM backend: %r" % (kind,))
