# claw_memory.llm.base: what the three LLM clients share: the request (convert the history,
# POST it through transport.py), the checks of the answer, and the tool definitions.
# MIT license
#
# Each client turns the history (messages of any of the three backends, and streamed
# elements: see transport.Body) into its wire shape, POSTs it through transport.py (verified
# TLS, streamed body, no leaked socket) and turns the answer into a Reply whose `raw` is the
# record the session layer persists (built by core's answer_raw / calls_raw, as an offline
# stand-in's). clients.py has each client with its request body and its answer parser.

import json

from .._compat import const
from ..reply import LLMError, new_call_id
from ..jsonraw import surrogates
from ..text import clean
from ..wire import convert
from . import certs, transport
from .transport import streamed

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
    """Give tool calls without an id, or with one that is not text, one (some compatible
    servers omit it; an id of another type, stored and replayed, would have every later
    request of the session refused), so that their results pair with them on replay."""
    for i, c in enumerate(calls):
        if not isinstance(c.get(key), str) or not c[key]:
            c[key] = new_call_id(i)


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
    except (ValueError, RuntimeError):  # RuntimeError: nesting too deep (CPython)
        pass
    except MemoryError:
        from ..jsontail import bloated  # (after a failure only)

        if not bloated(text):  # (a heap too small for the answer: the caller's to see)
            raise
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
            "%s: malformed response: body is not JSON (or too deeply nested): %r"
            % (name, text[:_SNIPPET]),
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

    def __init__(self, base_url, model, api_key, timeout, max_tokens, headers, ca, insecure,
                 log, max_answer):
        transport.aiohttp_module()  # a clear ImportError now, not a failed chat later
        transport.split_url(base_url)  # ValueError for anything but http(s)://host[:port]
        self.base_url = base_url.rstrip("/")
        self.model = model
        self.api_key = api_key
        self.timeout = timeout
        self.max_tokens = max_tokens
        self.headers = headers or {}
        self.log = log
        self.max_answer = max_answer  # bytes of an answer read at most (transport.MAX_ANSWER)
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
