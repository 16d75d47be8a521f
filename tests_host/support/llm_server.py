"""A scripted loopback LLM server for the client tests (OpenAI, OpenAI Responses and
Anthropic APIs), over http or https.

It listens on 127.0.0.1 (a free port) with CPython's aiohttp.web and answers
`POST /v1/chat/completions` (OpenAI: base_url `srv.openai_url`, i.e. http://127.0.0.1:PORT/v1),
`POST /v1/responses` (OpenAI Responses: base_url `srv.openai_url` too) and `POST /v1/messages`
(Anthropic: base_url `srv.anthropic_url`, i.e. http://127.0.0.1:PORT). `LLMServer(ssl=ctx)`
serves https with that server-side `ssl.SSLContext` (`srv.url` then starts with https://).

Script the answers, in order; each request takes the next one:

    srv.reply("hello")                                   # a text answer
    srv.reply("", tool_calls=[("memory_store", {"content": "x"})])   # (name, args) or
    srv.reply(tool_calls=[{"id": "c1", "name": "t", "arguments": "{}"}])  # dicts (args str|dict)
    srv.reply("hi", stop="length", message_extra={"reasoning_content": "..."})
    srv.error(401, "bad key")            # rendered in the called API's error shape
    srv.error(502, body="<html>oops")    # or any body, verbatim
    srv.json({"choices": []})            # any JSON body (wrong shapes)
    srv.garbage(b"\\xff not json")       # 200, Content-Type application/json, these bytes
    srv.drop()                           # close the connection without an answer
    srv.truncate(b"{...", length=1000)   # 200 with Content-Length 1000, these bytes, then close
    srv.delay(2.0)                       # sleep 2 s, then answer "late" (reply kwargs allowed)
    srv.redirect(307, "http://other/v1/messages")   # that status with a Location header
    every method also takes delay=seconds

A reply spec is rendered in the shape of the endpoint that was called, so one script serves
every backend (`reasoning="..."` adds a Responses reasoning item with that encrypted
content; `stop="length"` makes a Responses answer "incomplete"). With the queue empty the server uses `srv.fallback` (a spec made with
`LLMServer.spec_reply(...)` etc., or a callable `fn(recorded_request) -> spec`), else it
answers HTTP 500 "llm_server: nothing scripted".

Every request is recorded in `srv.requests`, whatever its method and path (a client that
followed a redirect is seen, also when it turned the POST into a GET), as a `Recorded`
(method, path, headers with lower-case names, body parsed from JSON or None, text).

Running it:

    async with LLMServer() as srv:        # inside an event loop
        ...
    with LLMServer() as srv:              # sync code: its own loop in a background thread;
        asyncio.run(client.chat(...))     # other threads and processes can call it too
    srv = LLMServer(); srv.start_background(); ...; srv.stop_background()
    await srv.start(); ...; await srv.stop()

Delayed answers are cut short when the server stops, so stopping is always quick.
"""

import asyncio
import collections
import json
import threading
import time

from aiohttp import web

OPENAI_PATH = "/v1/chat/completions"
RESPONSES_PATH = "/v1/responses"
ANTHROPIC_PATH = "/v1/messages"


class Recorded:
    """One request the server received."""

    def __init__(self, method, path, headers, text, header_items=()):
        self.method = method
        self.path = path
        self.headers = headers
        self.header_items = list(header_items)  # as sent: a header sent twice is there twice
        self.text = text
        try:
            self.body = json.loads(text)
        except ValueError:
            self.body = None

    @property
    def api(self):
        if self.path == ANTHROPIC_PATH:
            return "anthropic"
        return "openai_responses" if self.path == RESPONSES_PATH else "openai"

    def __repr__(self):
        return "Recorded(%s %s %s)" % (self.method, self.path, self.text[:200])


class _Spec:
    def __init__(self, kind, delay=0.0, **kw):
        self.kind = kind
        self.delay = delay
        self.kw = kw


class LLMServer:
    def __init__(self, host="127.0.0.1", port=0, ssl=None):
        self.host = host
        self.port = port
        self.ssl = ssl
        self.requests = []
        self.fallback = None
        self._queue = collections.deque()
        self._lock = threading.Lock()
        self._runner = None
        self._closing = None
        self._thread = None
        self._loop = None
        self._seq = 0

    # -- addresses -------------------------------------------------------------------

    @property
    def url(self):
        return "%s://%s:%d" % ("https" if self.ssl else "http", self.host, self.port)

    @property
    def openai_url(self):
        return self.url + "/v1"

    @property
    def anthropic_url(self):
        return self.url

    # -- script ----------------------------------------------------------------------

    @staticmethod
    def spec_reply(text="", tool_calls=(), stop=None, message_extra=None, delay=0.0,
                   reasoning=None):
        return _Spec(
            "reply", delay, text=text, tool_calls=list(tool_calls), stop=stop, extra=message_extra,
            reasoning=reasoning,
        )

    @staticmethod
    def spec_error(status, message=None, body=None, delay=0.0):
        return _Spec("error", delay, status=status, message=message, body=body)

    @staticmethod
    def spec_json(obj, status=200, delay=0.0):
        return _Spec("raw", delay, status=status, data=json.dumps(obj).encode())

    @staticmethod
    def spec_garbage(data, status=200, content_type="application/json", delay=0.0):
        if isinstance(data, str):
            data = data.encode()
        return _Spec("raw", delay, status=status, data=data, content_type=content_type)

    @staticmethod
    def spec_redirect(status, location, delay=0.0):
        return _Spec("redirect", delay, status=status, location=location)

    @staticmethod
    def spec_drop(delay=0.0):
        return _Spec("drop", delay)

    @staticmethod
    def spec_truncate(data, length, delay=0.0):
        return _Spec("truncate", delay, data=data, length=length)

    def push(self, spec):
        with self._lock:
            self._queue.append(spec)
        return self

    def reply(self, text="", tool_calls=(), stop=None, message_extra=None, delay=0.0,
              reasoning=None):
        return self.push(self.spec_reply(text, tool_calls, stop, message_extra, delay, reasoning))

    def error(self, status, message=None, body=None, delay=0.0):
        return self.push(self.spec_error(status, message, body, delay))

    def json(self, obj, status=200, delay=0.0):
        return self.push(self.spec_json(obj, status, delay))

    def garbage(self, data, status=200, content_type="application/json", delay=0.0):
        return self.push(self.spec_garbage(data, status, content_type, delay))

    def drop(self, delay=0.0):
        return self.push(self.spec_drop(delay))

    def redirect(self, status, location, delay=0.0):
        return self.push(self.spec_redirect(status, location, delay))

    def truncate(self, data, length, delay=0.0):
        return self.push(self.spec_truncate(data, length, delay))

    def delay(self, seconds, text="late", **kw):
        return self.push(self.spec_reply(text, delay=seconds, **kw))

    def pending(self):
        with self._lock:
            return len(self._queue)

    def last(self):
        return self.requests[-1]

    def wait_requests(self, n, timeout=5.0):
        """Block until at least `n` requests arrived (for other threads/processes)."""
        end = time.monotonic() + timeout
        while len(self.requests) < n:
            if time.monotonic() > end:
                raise TimeoutError(
                    "llm_server: %d requests after %g s" % (len(self.requests), timeout)
                )
            time.sleep(0.01)
        return self.requests[:n]

    # -- rendering -------------------------------------------------------------------

    def _next_id(self):
        with self._lock:
            self._seq += 1
            return self._seq

    def _calls(self, spec, prefix):
        out = []
        for c in spec.kw["tool_calls"]:
            if isinstance(c, dict):
                cid, name, args = c.get("id"), c["name"], c.get("arguments", {})
            else:
                cid, (name, args) = None, c
            out.append((cid or "%s%d" % (prefix, self._next_id()), name, args))
        return out

    def _openai(self, spec, req):
        calls = self._calls(spec, "call_")
        msg = {"role": "assistant", "content": spec.kw["text"] or (None if calls else "")}
        if calls:
            msg["tool_calls"] = [
                {
                    "id": cid,
                    "type": "function",
                    "function": {
                        "name": name,
                        "arguments": args
                        if isinstance(args, str)
                        else json.dumps(args, ensure_ascii=False),
                    },
                }
                for cid, name, args in calls
            ]
        msg.update(spec.kw["extra"] or {})
        stop = spec.kw["stop"] or ("tool_calls" if calls else "stop")
        return {
            "id": "chatcmpl-%d" % self._next_id(),
            "object": "chat.completion",
            "created": int(time.time()),
            "model": (req.body or {}).get("model", "test"),
            "choices": [{"index": 0, "message": msg, "finish_reason": stop}],
            "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
        }

    def _anthropic(self, spec, req):
        calls = self._calls(spec, "toolu_")
        content = [{"type": "text", "text": spec.kw["text"]}] if spec.kw["text"] else []
        for cid, name, args in calls:
            content.append(
                {
                    "type": "tool_use",
                    "id": cid,
                    "name": name,
                    "input": json.loads(args) if isinstance(args, str) else args,
                }
            )
        stop = spec.kw["stop"] or ("tool_use" if calls else "end_turn")
        return {
            "id": "msg_%d" % self._next_id(),
            "type": "message",
            "role": "assistant",
            "model": (req.body or {}).get("model", "test"),
            "content": content,
            "stop_reason": stop,
            "stop_sequence": None,
            "usage": {"input_tokens": 10, "output_tokens": 5},
        }

    def _responses(self, spec, req):
        calls = self._calls(spec, "call_")
        output = []
        if spec.kw.get("reasoning"):
            output.append({"type": "reasoning", "id": "rs_%d" % self._next_id(), "summary": [],
                           "encrypted_content": spec.kw["reasoning"]})
        if spec.kw["text"]:
            output.append({
                "type": "message", "id": "msg_%d" % self._next_id(), "status": "completed",
                "role": "assistant",
                "content": [{"type": "output_text", "text": spec.kw["text"], "annotations": []}],
            })
        for cid, name, args in calls:
            output.append({
                "type": "function_call", "id": "fc_%d" % self._next_id(), "call_id": cid,
                "name": name, "status": "completed",
                "arguments": args if isinstance(args, str) else json.dumps(args, ensure_ascii=False),
            })
        obj = {
            "id": "resp_%d" % self._next_id(),
            "object": "response",
            "created_at": int(time.time()),
            "status": "completed",
            "model": (req.body or {}).get("model", "test"),
            "output": output,
            "usage": {"input_tokens": 10, "output_tokens": 5, "total_tokens": 15},
        }
        if spec.kw["stop"]:
            obj["status"] = "incomplete"
            obj["incomplete_details"] = {"reason": "max_output_tokens"}
        return obj

    def _error_body(self, spec, req):
        if spec.kw["body"] is not None:
            body = spec.kw["body"]
            return body if isinstance(body, bytes) else str(body).encode()
        msg = spec.kw["message"] or "error %d" % spec.kw["status"]
        if req.api == "anthropic":
            obj = {"type": "error", "error": {"type": "api_error", "message": msg}}
        else:
            obj = {"error": {"message": msg, "type": "api_error", "code": None}}
        return json.dumps(obj).encode()

    # -- serving ---------------------------------------------------------------------

    async def _handle(self, request):
        text = (await request.read()).decode("utf-8", "replace")
        headers = {k.lower(): v for k, v in request.headers.items()}
        rec = Recorded(request.method, request.path, headers, text, request.headers.items())
        self.requests.append(rec)
        with self._lock:
            spec = self._queue.popleft() if self._queue else None
        if spec is None:
            spec = self.fallback(rec) if callable(self.fallback) else self.fallback
        if spec is None:
            spec = self.spec_error(500, "llm_server: nothing scripted")
        if spec.delay:
            try:
                await asyncio.wait_for(self._closing.wait(), spec.delay)
                raise web.HTTPServiceUnavailable(text="llm_server: stopping")
            except asyncio.TimeoutError:
                pass
        if spec.kind == "drop":
            request.transport.close()
            raise asyncio.CancelledError()
        if spec.kind == "truncate":
            resp = web.StreamResponse(status=200, headers={"Content-Type": "application/json"})
            resp.content_length = spec.kw["length"]
            await resp.prepare(request)
            await resp.write(spec.kw["data"])
            await asyncio.sleep(0.05)
            request.transport.close()
            raise asyncio.CancelledError()
        if spec.kind == "redirect":
            return web.Response(status=spec.kw["status"], headers={"Location": spec.kw["location"]},
                                text="moved to %s" % spec.kw["location"])
        if spec.kind == "raw":
            return web.Response(
                status=spec.kw["status"],
                body=spec.kw["data"],
                content_type=spec.kw.get("content_type", "application/json"),
            )
        if spec.kind == "error":
            return web.Response(
                status=spec.kw["status"],
                body=self._error_body(spec, rec),
                content_type="application/json",
            )
        render = {"anthropic": self._anthropic, "openai_responses": self._responses}
        obj = render.get(rec.api, self._openai)(spec, rec)
        return web.json_response(obj, dumps=lambda o: json.dumps(o, ensure_ascii=False))

    async def start(self):
        self._closing = asyncio.Event()
        app = web.Application()
        app.router.add_post(OPENAI_PATH, self._handle)
        app.router.add_post(ANTHROPIC_PATH, self._handle)
        app.router.add_post(RESPONSES_PATH, self._handle)
        app.router.add_route("*", "/{tail:.*}", self._handle)  # recorded too: see `requests`
        self._runner = web.AppRunner(app, access_log=None, shutdown_timeout=1.0)
        await self._runner.setup()
        site = web.TCPSite(self._runner, self.host, self.port, ssl_context=self.ssl)
        await site.start()
        self.port = self._runner.addresses[0][1]
        return self

    async def stop(self):
        if self._runner is not None:
            self._closing.set()
            await self._runner.cleanup()
            self._runner = None

    async def __aenter__(self):
        return await self.start()

    async def __aexit__(self, *exc):
        await self.stop()

    # -- background thread -----------------------------------------------------------

    def start_background(self):
        """Run the server on its own event loop in a daemon thread; returns once it listens."""
        ready = threading.Event()
        failure = []

        def main():
            loop = asyncio.new_event_loop()
            self._loop = loop
            try:
                loop.run_until_complete(self.start())
            except BaseException as e:  # report to the caller instead of dying silently
                failure.append(e)
                ready.set()
                loop.close()
                return
            ready.set()
            loop.run_forever()
            loop.run_until_complete(self.stop())
            loop.close()

        self._thread = threading.Thread(target=main, name="llm_server", daemon=True)
        self._thread.start()
        ready.wait(10)
        if failure:
            raise failure[0]
        if not ready.is_set():
            raise RuntimeError("llm_server: did not start within 10 s")
        return self

    def stop_background(self):
        if self._thread is None:
            return
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(10)
        self._thread = None

    def __enter__(self):
        return self.start_background()

    def __exit__(self, *exc):
        self.stop_background()
