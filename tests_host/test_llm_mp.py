"""claw_memory.llm and the reference agent under the MicroPython unix port with
micropython-lib's real aiohttp, against the loopback servers of llm_server.py (http, and
https with throwaway certificates from tlscerts.py).

These tests need a micropython-lib checkout: set CLAW_MPLIB to it (see README, "Tests"). They
are skipped, with that reason, when it is not set. Each test runs tests_host/support/llm_probe_mp.py
in a fresh micropython process and checks what the client returned, what the server received,
and that no file descriptor was left open.
"""

import json
import os
import socket
import subprocess
import time

import pytest

import tlscerts
from llm_server import LLMServer

from claw_memory_cli import hosttools

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SUPPORT = os.path.join(ROOT, "tests_host", "support")
MPLIB = os.path.abspath(os.environ["CLAW_MPLIB"]) if os.environ.get("CLAW_MPLIB") else ""
AIOHTTP = os.path.join(MPLIB, "python-ecosys", "aiohttp") if MPLIB else ""
BACKENDS = ("openai", "anthropic", "openai_responses")

if not MPLIB:
    pytest.skip(
        "CLAW_MPLIB is not set: these tests run the LLM clients under the MicroPython unix port "
        "with micropython-lib's aiohttp; set CLAW_MPLIB=/path/to/micropython-lib to run them",
        allow_module_level=True,
    )
if not os.path.isfile(os.path.join(AIOHTTP, "aiohttp", "__init__.py")):
    pytest.fail("CLAW_MPLIB=%s has no python-ecosys/aiohttp/aiohttp" % MPLIB, pytrace=False)


def probe(tmp_path, steps, heap="4M", timeout=60, aiohttp=True):
    """Run the steps in one micropython process; returns (results, end)."""
    plan = tmp_path / ("plan%d.json" % time.monotonic_ns())
    plan.write_text(json.dumps({"steps": steps}))
    env = dict(os.environ)
    path = [ROOT, SUPPORT]
    path += ([AIOHTTP] if aiohttp else []) + [".frozen"]
    env["MICROPYPATH"] = os.pathsep.join(path)
    r = subprocess.run([hosttools.micropython(), "-X", "heapsize=" + heap,
                        os.path.join(SUPPORT, "llm_probe_mp.py"), str(plan)],
                       capture_output=True, text=True, timeout=timeout, env=env, cwd=str(tmp_path))
    out = r.stdout.splitlines()
    results = [json.loads(line[6:]) for line in out if line.startswith("PROBE ")]
    end = [json.loads(line[10:]) for line in out if line.startswith("PROBE-END ")]
    assert r.returncode == 0 and end, "probe failed (exit %d)\n%s\n%s" % (
        r.returncode, r.stdout, r.stderr)
    return results, end[0]


def url_for(srv, backend):
    return srv.anthropic_url if backend == "anthropic" else srv.openai_url


def step(srv, backend, **kw):
    kw.setdefault("api_key", "sk-test")
    kw.setdefault("timeout", 5)
    s = {"do": "chat", "backend": backend}
    for k in ("messages", "system", "tools", "stream", "lie"):
        if k in kw:
            s[k] = kw.pop(k)
    if "base_url" not in kw:
        kw["base_url"] = url_for(srv, backend)
    s["kw"] = kw
    return s


def no_leak(end):
    assert end["fds_after"] == end["fds_before"], "file descriptors leaked: %r" % end


@pytest.fixture(scope="module")
def certs(tmp_path_factory):
    return tlscerts.make(str(tmp_path_factory.mktemp("certs")))


@pytest.fixture
def srv():
    with LLMServer() as s:
        yield s


@pytest.fixture
def tls_srv(certs):
    with LLMServer(ssl=tlscerts.server_context(certs.server_cert, certs.server_key)) as s:
        yield s


TOOLS = [{"name": "memory_store", "description": "Store a memory.",
          "schema": {"type": "object", "properties": {"content": {"type": "string"}}}}]


# -- round trips -----------------------------------------------------------------------------


@pytest.mark.parametrize("backend", BACKENDS)
def test_round_trip_with_tool_calls(srv, tmp_path, backend):
    srv.reply("Let me store that.", tool_calls=[{"id": "c1", "name": "memory_store",
                                                 "arguments": {"content": "tea ü"}}])
    srv.reply("Stored.")
    (first,), end = probe(tmp_path, [step(srv, backend, tools=TOOLS)])
    assert first["ok"], first
    assert first["text"] == "Let me store that."
    assert first["calls"][0][:2] == ["c1", "memory_store"]
    assert json.loads(first["calls"][0][2]) == {"content": "tea ü"}
    raw = json.loads(first["raw"])
    assert raw["role"] == "assistant"
    history = [{"role": "user", "content": "remember tea"}, raw,
               {"role": "tool", "tool_call_id": "c1", "content": '{"ok":true}', "is_error": False}]
    (second,), end2 = probe(tmp_path, [step(srv, backend, tools=TOOLS, messages=history)])
    assert second["ok"] and second["text"] == "Stored." and second["calls"] == []
    no_leak(end)
    no_leak(end2)
    req = srv.requests[1]
    assert req.headers["content-length"] == str(len(req.text.encode()))
    if backend == "anthropic":
        assert req.headers["x-api-key"] == "sk-test"
        assert req.body["messages"][2]["content"][0]["tool_use_id"] == "c1"
    else:
        assert req.headers["authorization"] == "Bearer sk-test"
    if backend == "openai":
        assert req.body["messages"][3] == {"role": "tool", "tool_call_id": "c1",
                                           "content": '{"ok":true}'}
    if backend == "openai_responses":
        assert req.path == "/v1/responses" and req.body["store"] is False
        kinds = [i.get("type", i.get("role")) for i in req.body["input"]]
        assert kinds == ["user", "message", "function_call", "function_call_output"]
        assert req.body["input"][2]["call_id"] == "c1"
        assert req.body["input"][3] == {"type": "function_call_output", "call_id": "c1",
                                        "output": '{"ok":true}'}
        assert req.body["tools"][0]["name"] == "memory_store"


def test_core_builders_give_the_reply_the_client_gives(srv, tmp_path):
    # Under MicroPython (no key order in its dicts): the same text, calls and stop, the same
    # record once parsed, and a plain answer byte for byte (the history streams it as stored).
    cases = [("Noted.", []), ("Gr\u00fc\u00dfe \"quoted\"", []),
             ("", [["call_a", "memory_store", '{"content":"likes tea"}']]),
             ("Let me look.", [["call_b", "profile_read", '{"name":"user"}'], ["call_c", "memory_list", "{}"]])]
    steps = []
    for backend in BACKENDS:
        for text, calls in cases:
            srv.reply(text, tool_calls=[{"id": i, "name": n, "arguments": a} for i, n, a in calls])
            steps += [{"do": "build", "backend": backend, "text": text, "calls": calls},
                      step(srv, backend, tools=TOOLS)]
    results, end = probe(tmp_path, steps)
    no_leak(end)
    for n in range(0, len(results), 2):
        want, got = results[n], results[n + 1]
        backend = steps[n]["backend"]
        assert got["ok"] and (got["text"], got["calls"], got["stop"]) == (
            want["text"], want["calls"], want["stop"]), (backend, got, want)
        if not want["calls"]:
            assert got["raw"] == want["raw"], backend
        elif backend == "openai_responses":  # the ids and status a real server adds
            g, w = json.loads(got["raw"]), json.loads(want["raw"])
            for item in g["_claw_provider_state"]["output"]:
                for k in ("id", "status"):
                    item.pop(k, None)
                for part in item.get("content") or ():
                    part.pop("annotations", None)
            assert g == w, backend
        else:
            assert json.loads(got["raw"]) == json.loads(want["raw"]), backend


def test_a_callers_header_replaces_the_clients_own_whatever_its_case(srv, tmp_path):
    # micropython-lib's aiohttp writes every key of the headers dict: one spelling only
    steps = []
    for backend in BACKENDS:
        own = "X-API-KEY" if backend == "anthropic" else "AUTHORIZATION"
        srv.reply("ok")
        steps.append(step(srv, backend, headers={own: "Bearer mine"}))
    results, end = probe(tmp_path, steps)
    assert all(r["ok"] for r in results), results
    for backend, req in zip(BACKENDS, srv.requests):
        own = "x-api-key" if backend == "anthropic" else "authorization"
        assert [v for k, v in req.header_items if k.lower() == own] == ["Bearer mine"], req.header_items


@pytest.mark.parametrize("backend", BACKENDS)
def test_big_answer_of_100_kb(srv, tmp_path, backend):
    text = ("0123456789abcdeé" * 6400)[:100000]
    srv.reply(text)
    (r,), end = probe(tmp_path, [step(srv, backend, max_answer=131072)])
    assert r["ok"], r
    assert r["text"] == text
    no_leak(end)


# -- errors ----------------------------------------------------------------------------------


@pytest.mark.parametrize("backend", BACKENDS)
def test_http_errors(srv, tmp_path, backend):
    srv.error(401, "Incorrect API key provided")
    srv.error(500, "The server had an error")
    srv.error(502, body="<html>" + "x" * 500 + "</html>")
    srv.error(503, body="")
    rs, end = probe(tmp_path, [step(srv, backend)] * 4)
    assert [(r["kind"], r["status"]) for r in rs] == [
        ("http", 401), ("http", 500), ("http", 502), ("http", 503)]
    assert "Incorrect API key provided" in rs[0]["msg"] and backend in rs[0]["msg"]
    assert "The server had an error" in rs[1]["msg"]
    assert "<html>xxx" in rs[2]["msg"] and "</html>" not in rs[2]["msg"]
    no_leak(end)


PATHS = {"openai": "/v1/chat/completions", "anthropic": "/v1/messages",
         "openai_responses": "/v1/responses"}


def test_no_redirect_is_followed_and_the_key_stays_home(tmp_path):
    # Issue 24 item 5 under MicroPython (micropython-lib's aiohttp writes the request, our
    # transport reads the answer): every backend, every redirect status.
    with LLMServer() as home, LLMServer() as other:
        other.fallback = LLMServer.spec_reply("the other host's answer")
        steps, want = [], []
        for backend in BACKENDS:
            for status in (301, 302, 303, 307, 308):
                target = other.url + PATHS[backend]
                home.redirect(status, target)
                steps.append(step(home, backend, api_key="sk-secret"))
                want.append((status, target))
        rs, end = probe(tmp_path, steps)
        assert len(home.requests) == len(steps)
        assert other.requests == []  # neither the key nor the conversation went there
    for r, (status, target) in zip(rs, want):
        assert (r["kind"], r["status"]) == ("http", status), r
        assert "redirect to %s not followed" % target in r["msg"], r
    no_leak(end)


@pytest.mark.parametrize("backend", BACKENDS)
def test_garbage_and_wrong_shapes_are_malformed(srv, tmp_path, backend):
    srv.garbage(b"\xff\xfe<<not json at all>>")
    srv.json({"unexpected": True})
    srv.json([1, 2])
    rs, end = probe(tmp_path, [step(srv, backend)] * 3)
    assert [r["kind"] for r in rs] == ["malformed"] * 3, rs
    assert "not JSON" in rs[0]["msg"]
    assert "not a JSON object" in rs[2]["msg"]
    no_leak(end)


def test_an_answer_of_thousands_of_nested_arrays_is_malformed_not_a_memory_error(srv, tmp_path):
    # 16 KB within max_answer whose parse needs about 0.5 MB (MicroPython allocates for each
    # level): the server's fault, an LLMError; a heap short for a big answer stays a
    # MemoryError (test_a_memory_error_is_not_disguised_as_a_network_error)
    srv.garbage(b"[" * 8000 + b"]" * 8000)
    (r,), end = probe(tmp_path, [step(srv, "openai")], heap="512K")
    assert (r.get("type"), r.get("kind")) == ("LLMError", "malformed"), r
    assert "not JSON (or too deeply nested)" in r["msg"], r
    no_leak(end)


@pytest.mark.parametrize("backend", BACKENDS)
def test_slow_server_times_out_and_the_next_request_works(srv, tmp_path, backend):
    srv.delay(5)
    srv.reply("fast")
    t = time.monotonic()
    rs, end = probe(tmp_path, [step(srv, backend, timeout=0.5), step(srv, backend)])
    assert time.monotonic() - t < 4
    assert (rs[0]["kind"], rs[0]["status"]) == ("timeout", None)
    assert "no answer within 0.5 s" in rs[0]["msg"]
    assert rs[1]["ok"] and rs[1]["text"] == "fast"
    no_leak(end)


@pytest.mark.parametrize("backend", BACKENDS)
def test_dropped_and_cut_connections_are_network_errors(srv, tmp_path, backend):
    srv.drop()
    srv.truncate(b'{"choices": [', length=5000)
    s = socket.socket()
    s.bind(("127.0.0.1", 0))  # bound, never listening: connections are refused
    refused = "http://127.0.0.1:%d" % s.getsockname()[1]
    try:
        rs, end = probe(tmp_path, [step(srv, backend), step(srv, backend),
                                   step(srv, backend, base_url=refused)])
    finally:
        s.close()
    assert [r["kind"] for r in rs] == ["network"] * 3, rs
    assert "closed before" in rs[0]["msg"]
    assert "before the answer was complete" in rs[1]["msg"]
    assert "cannot reach" in rs[2]["msg"]
    no_leak(end)


# -- raw HTTP answers: close-delimited, chunked, broken ----------------------------------------


def _raw_server(answers):
    """A one-shot-per-connection TCP server answering each request with the next raw bytes."""
    import threading

    lst = socket.socket()
    lst.bind(("127.0.0.1", 0))
    lst.listen(8)
    got = []

    def serve():
        for data in answers:
            conn, _ = lst.accept()
            with conn:
                buf = b""
                while b"\r\n\r\n" not in buf:
                    buf += conn.recv(4096)
                head, _, rest = buf.partition(b"\r\n\r\n")
                n = int([h for h in head.split(b"\r\n") if h.lower().startswith(b"content-length:")][0]
                        .split(b":")[1])
                while len(rest) < n:
                    rest += conn.recv(65536)
                got.append((head, rest))
                try:
                    conn.sendall(data)
                except OSError:  # the client stopped reading (an answer it refused)
                    pass
        lst.close()

    threading.Thread(target=serve, daemon=True).start()
    return "http://127.0.0.1:%d/v1" % lst.getsockname()[1], got


def test_raw_http_answers(tmp_path):
    ok = json.dumps({"choices": [{"message": {"role": "assistant", "content": "hi there"},
                                  "finish_reason": "stop"}]}).encode()
    half = len(ok) // 2
    chunked = b"%x\r\n%s\r\n%x;ext=1\r\n%s\r\n0\r\n\r\n" % (half, ok[:half], len(ok) - half, ok[half:])
    answers = [
        b"HTTP/1.0 200 OK\r\nContent-Type: application/json\r\n\r\n" + ok,  # until EOF
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n" + chunked,
        b"HTTP/1.0 200 OK\r\ncontent-length: 9999999\r\n\r\n{}",  # over max_answer
        b"garbage\r\n\r\n",
        b"HTTP/1.0 200 OK\r\nContent-Length: x\r\n\r\n{}",
        b"HTTP/1.0 200 OK\r\nContent-Length: 2\r\n",  # closed inside the headers
    ]
    url, got = _raw_server(answers)
    rs, end = probe(tmp_path, [step(None, "openai", base_url=url)] * len(answers))
    assert rs[0]["ok"] and rs[0]["text"] == "hi there"
    assert rs[1]["ok"] and rs[1]["text"] == "hi there"
    assert rs[2]["kind"] == "malformed" and "answer over 16384 bytes" in rs[2]["msg"]
    assert rs[3]["kind"] == "network" and "not an HTTP answer" in rs[3]["msg"]
    assert rs[4]["kind"] == "malformed" and "bad Content-Length" in rs[4]["msg"]
    assert rs[5]["kind"] == "network" and "in the answer's headers" in rs[5]["msg"]
    head = got[0][0].decode()
    assert head.startswith("POST /v1/chat/completions HTTP/1.0\r\n")
    assert "\r\nHost: 127.0.0.1:%s\r\n" % url.split(":")[2].split("/")[0] in head + "\r\n"
    assert "Connection: close" in head and "User-Agent: claw_memory" in head
    assert json.loads(got[0][1])["messages"][-1] == {"role": "user", "content": "hi"}
    no_leak(end)


def _ok_answer(size):
    """An OpenAI answer of exactly `size` bytes (its text is "x" * something)."""
    shape = '{"choices":[{"message":{"role":"assistant","content":"%s"},"finish_reason":"stop"}]}'
    return (shape % ("x" * (size - len(shape % "")))).encode()


def _chunks(body, size=1000):
    return b"".join(b"%x\r\n%s\r\n" % (len(body[i:i + size]), body[i:i + size])
                    for i in range(0, len(body), size))


def _head(size, status=b"HTTP/1.1 200 OK\r\n", more=b""):
    """A status line, headers and the empty line: `size` bytes in all (padded by X-Pad)."""
    fixed = status + more + b"X-Pad: \r\n" + b"\r\n"
    return status + more + b"X-Pad: " + b"p" * (size - len(fixed)) + b"\r\n\r\n"


def test_every_limit_is_enforced_while_reading_at_its_exact_edge(tmp_path):
    # Issue 24 item 8: each limit of the answer reader, one byte under (or at) it and one
    # byte over, and lines or bodies that never end, in a heap far smaller than them: an
    # LLMError "malformed" every time, never a MemoryError (asyncio's readline() held a line
    # of any length). The limits: 16 KiB of status line + headers (transport._HEAD_MAX), the
    # same for a chunked body's trailers, 1 KiB per chunk size line (_CHUNK_LINE), and the
    # answer body (max_answer: the 16 KiB default, and a smaller one set by the caller).
    small = 4096
    ok_small, ok_default = _ok_answer(small), _ok_answer(16384)
    endless = b"y" * (2 << 20)  # 2 MiB: twice the heap of the probe
    te = b"Transfer-Encoding: chunked\r\n"
    one = _chunks(ok_small[:small - 1]) + b"1\r\n}\r\n"
    size = b"%x;" % small

    def size_line(n):  # the chunk size with an extension: n bytes in all
        return size + b"e" * (n - len(size) - 2) + b"\r\n"

    cases = [  # (name, answer, max_answer, ok)
        ("head at 16384", _head(16384, more=b"Content-Length: %d\r\n" % small) + ok_small, small, True),
        ("head at 16385", _head(16385, more=b"Content-Length: %d\r\n" % small) + ok_small, small, False),
        ("endless header line", b"HTTP/1.1 200 OK\r\nX-Big: " + endless, small, False),
        ("endless status line", b"HTTP/1.1 200 " + endless, small, False),
        ("chunk size line at 1024", _head(100, more=te) + size_line(1024) + ok_small + b"\r\n0\r\n\r\n", small, True),
        ("chunk size line at 1025", _head(100, more=te) + size_line(1025) + ok_small + b"\r\n0\r\n\r\n", small, False),
        ("endless chunk size line", _head(100, more=te) + b"1" + endless, small, False),
        ("no CRLF after a chunk", _head(100, more=te) + b"2\r\n{}" + endless, small, False),
        ("trailers at 16384", _head(100, more=te) + one + b"0\r\n" + _head(16384, status=b""), small, True),
        ("trailers at 16385", _head(100, more=te) + one + b"0\r\n" + _head(16385, status=b""), small, False),
        ("endless trailer", _head(100, more=te) + one + b"0\r\nX-T: " + endless, small, False),
        ("Content-Length at the default", _head(100, more=b"Content-Length: 16384\r\n") + ok_default, None, True),
        ("Content-Length over the default", _head(100, more=b"Content-Length: 16385\r\n") + ok_default + b" ", None, False),
        ("Content-Length at max_answer", _head(100, more=b"Content-Length: %d\r\n" % small) + ok_small, small, True),
        ("Content-Length over max_answer", _head(100, more=b"Content-Length: %d\r\n" % (small + 1)) + ok_small + b" ", small, False),
        ("bad chunk size", _head(100, more=te) + b"zz\r\n" + ok_small + b"\r\n0\r\n\r\n", small, False),
        ("chunked at max_answer", _head(100, more=te) + one + b"0\r\n\r\n", small, True),
        ("chunked over max_answer", _head(100, more=te) + one + b"1\r\n \r\n0\r\n\r\n", small, False),
        ("to the end at the default", _head(100) + ok_default, None, True),
        ("to the end over the default", _head(100) + ok_default + b" ", None, False),
        ("to the end at max_answer", _head(100) + ok_small, small, True),
        ("to the end over max_answer", _head(100) + ok_small + b" ", small, False),
        ("endless body", _head(100) + endless, None, False),
        ("endless body, chunked", _head(100, more=te) + _chunks(endless, 4000), None, False),
    ]
    url, got = _raw_server([c[1] for c in cases])
    steps = []
    for _, _, limit, _ in cases:
        kw = {"base_url": url} if limit is None else {"base_url": url, "max_answer": limit}
        steps.append(step(None, "openai", **kw))
    rs, end = probe(tmp_path, steps, heap="1M")
    for (name, _, limit, good), r in zip(cases, rs):
        if good:
            assert r["ok"] and r["text"].strip("x") == "", (name, r)
            continue
        assert (r.get("type"), r.get("kind")) == ("LLMError", "malformed"), (name, r)
        over = {"head": "answer headers over 16384 bytes", "endless h": "answer headers over 16384",
                "endless s": "answer headers over 16384", "chunk size": "a chunk size line over 1024",
                "endless c": "a chunk size line over 1024", "no CRLF": "no CRLF after a chunk",
                "trailers": "answer trailers over 16384", "endless t": "answer trailers over 16384",
                "bad chunk": "bad chunk size"}
        want = next((v for k, v in over.items() if name.startswith(k)),
                    "answer over %d bytes" % (limit or 16384))
        assert want in r["msg"], (name, r)
    no_leak(end)


def test_a_memory_error_is_not_disguised_as_a_network_error(srv, tmp_path):
    # An answer the caller allowed (max_answer) but the heap cannot hold: MemoryError, as
    # post() promises, so the agent sees the heap is short, not a "network" failure
    srv.reply("m" * 300000)
    (r,), end = probe(tmp_path, [step(srv, "openai", max_answer=1 << 20)], heap="256K")
    assert r["type"] == "MemoryError", r
    no_leak(end)


# -- TLS -------------------------------------------------------------------------------------


@pytest.mark.parametrize("backend", BACKENDS)
def test_tls_with_the_right_ca_works(tls_srv, certs, tmp_path, backend):
    for _ in range(3):
        tls_srv.reply("secure hello")
    rs, end = probe(tmp_path, [
        step(tls_srv, backend, ca=certs.ca),  # PEM file
        step(tls_srv, backend, ca_file_bytes=certs.ca),  # PEM bytes
        step(tls_srv, backend, ca_file_bytes=certs.ca_der),  # DER bytes
    ])
    assert [r.get("text") for r in rs] == ["secure hello"] * 3, rs
    assert url_for(tls_srv, backend).startswith("https://127.0.0.1:")
    assert len(tls_srv.requests) == 3
    assert end["log"] == []
    no_leak(end)


def test_a_damaged_certificate_in_the_bundle_is_skipped(tls_srv, certs, tmp_path):
    # Issue 24 item 11 with mbedTLS: the bundle's good certificate still verifies the server
    with open(certs.ca, "rb") as f:
        ca = f.read()
    bundle = tmp_path / "bundle.pem"
    bundle.write_bytes(tlscerts.bad_bundle(ca))
    tls_srv.fallback = LLMServer.spec_reply("secure hello")
    rs, end = probe(tmp_path, [step(tls_srv, b, ca=str(bundle)) for b in BACKENDS])
    assert [r.get("text") for r in rs] == ["secure hello"] * 3, rs
    assert len(end["log"]) == 9 and all(str(bundle) in ln for ln in end["log"]), end["log"]
    no_leak(end)


def test_a_bundle_with_endless_lines_is_read_in_bounded_pieces(tls_srv, certs, tmp_path):
    # A damaged bundle may hold a line of any length (asyncio aside, a file's readline()
    # holds it whole): 2 MiB lines, outside a block and inside one, in a 512 KiB heap
    with open(certs.ca, "rb") as f:
        ca = f.read()
    bundle = tmp_path / "long.pem"
    endless = b"A" * (2 << 20)
    bundle.write_bytes(b"# " + endless + b"\n-----BEGIN CERTIFICATE-----\n" + endless
                       + b"\n-----END CERTIFICATE-----\n" + ca)
    tls_srv.fallback = LLMServer.spec_reply("secure hello")
    (r,), end = probe(tmp_path, [step(tls_srv, "openai", ca=str(bundle))], heap="512K")
    assert r.get("text") == "secure hello", r
    assert end["log"] == ["openai: CA bundle %s: certificate 1 (line 2) skipped: over 16384 bytes "
                          "of base64" % bundle], end["log"]
    no_leak(end)


def test_tls_refuses_wrong_ca_self_signed_and_wrong_host_and_sends_nothing(certs, tmp_path):
    evil_ctx = tlscerts.server_context(certs.evil_cert, certs.evil_key)
    other_ctx = tlscerts.server_context(certs.other_cert, certs.other_key)
    good_ctx = tlscerts.server_context(certs.server_cert, certs.server_key)
    with LLMServer(ssl=good_ctx) as good, LLMServer(ssl=evil_ctx) as evil, \
            LLMServer(ssl=other_ctx) as other:
        for s in (good, evil, other):
            s.fallback = LLMServer.spec_reply("should never be read")
        steps = []
        for backend in BACKENDS:
            steps += [
                step(good, backend, ca=certs.wrong_ca),  # signed by a CA we do not trust
                step(evil, backend, ca=certs.ca),  # self-signed evil.example
                step(evil, backend, ca=certs.evil_cert),  # trusted, but not for 127.0.0.1
                step(other, backend, ca=certs.ca),  # our CA, other host name
            ]
        rs, end = probe(tmp_path, steps)
        assert [r["kind"] for r in rs] == ["tls"] * len(steps), rs
        assert all("TLS connection to https://127.0.0.1:" in r["msg"] for r in rs)
        assert "not correctly signed" in rs[0]["msg"]
        assert "CN" in rs[2]["msg"] and "CN" in rs[3]["msg"]
        # no request, so no Authorization / x-api-key header, ever reached a server
        assert good.requests == [] and evil.requests == [] and other.requests == []
    no_leak(end)


def test_insecure_skips_verification_and_warns(certs, tmp_path):
    with LLMServer(ssl=tlscerts.server_context(certs.evil_cert, certs.evil_key)) as evil:
        evil.fallback = LLMServer.spec_reply("unverified hello")
        rs, end = probe(tmp_path, [step(evil, b, insecure=True) for b in BACKENDS])
        assert [r.get("text") for r in rs] == ["unverified hello"] * 3, rs
        assert len(evil.requests) == 3
    assert len(end["log"]) == 3
    for backend, line in zip(BACKENDS, end["log"]):
        assert line.startswith(backend + ": TLS certificate verification is OFF (insecure=True)")
    no_leak(end)


def test_https_without_a_ca_is_a_clear_error_at_construction(tmp_path):
    rs, end = probe(tmp_path, [
        {"do": "client", "backend": b, "kw": {"api_key": "k"}} for b in BACKENDS
    ] + [{"do": "client", "backend": "openai", "kw": {"ca": str(tmp_path / "missing.pem")}}])
    for r in rs[:3]:
        assert r["type"] == "ValueError", r
        assert "https needs a CA bundle" in r["msg"] and "/certs/ca.pem" in r["msg"]
        assert "ca=" in r["msg"] and "claw-memory deploy" in r["msg"]
    assert rs[3]["type"] == "OSError" and "missing.pem" in rs[3]["msg"]


def test_ca_bundle_heap_cost(tmp_path, certs):
    """Loading a CA bundle keeps only the SSL context object in MicroPython's heap, whatever
    the bundle's size: mbedTLS holds the parsed certificates in the C heap. The figures are
    in docs/PRIVACY.md ("TLS")."""
    import certifi

    from claw_memory_cli import cabundle

    default = tmp_path / "common.pem"
    default.write_text(cabundle.bundle(cabundle.COMMON_ROOTS))
    rs = []
    for ca in (certs.ca, str(default), certifi.where()):
        (r,), end = probe(tmp_path, [{"do": "ca_heap", "ca": ca}], heap="1M")
        assert r["ok"] and end["log"] == [], (r, end)
        rs.append(r)
    print("CA heap cost (unix port): %s" % json.dumps(rs))
    assert [r["certs"] for r in rs[:2]] == [1, len(cabundle.COMMON_ROOTS)]
    assert rs[2]["certs"] > 100
    assert rs[0]["gc_kept"] == rs[1]["gc_kept"] == rs[2]["gc_kept"] < 4096, rs
    assert 1000 < rs[2]["c_heap"] / rs[2]["certs"] < 8000, rs  # KiB-scale per root


# -- the streamed request body ---------------------------------------------------------------

HISTORY = [
    {"role": "user", "content": "Remember I like tea ü."},
    {"role": "assistant", "content": None, "tool_calls": [
        {"id": "call_1", "type": "function",
         "function": {"name": "memory_store", "arguments": '{"content":"tea"}'}}]},
    {"role": "tool", "tool_call_id": "call_1", "content": '{"ok":true}', "is_error": False},
    {"role": "assistant", "content": "Noted."},
    {"role": "user", "content": "And coffee?"},
]


@pytest.mark.parametrize("backend", BACKENDS)
def test_streamed_history_body_is_byte_identical(srv, tmp_path, backend):
    for _ in range(4):
        srv.reply("ok")
    rs, end = probe(tmp_path, [
        step(srv, backend, messages=HISTORY, tools=TOOLS),
        step(srv, backend, messages=HISTORY, tools=TOOLS, stream=len(HISTORY)),  # all streamed
        step(srv, backend, messages=HISTORY, tools=TOOLS, stream=4),  # streamed + a dict
        step(srv, backend, messages=HISTORY[-1:], tools=TOOLS, stream=0),  # empty element
    ])
    assert all(r["ok"] for r in rs), rs
    assert [r.get("same_body") for r in rs] == [None, True, True, True]
    texts = [r.text for r in srv.requests]
    assert texts[0] == texts[1] == texts[2]
    assert json.loads(texts[3])[{"openai_responses": "input"}.get(backend, "messages")][-1][
        "content"] == "And coffee?"
    no_leak(end)


def test_streamed_element_that_lies_about_its_length_fails_cleanly(srv, tmp_path):
    srv.fallback = LLMServer.spec_reply("ok")
    rs, end = probe(tmp_path, [step(srv, "openai", messages=HISTORY, stream=2, lie=True)])
    assert rs[0]["type"] == "BodyError" and "json_length" in rs[0]["msg"], rs
    no_leak(end)


# -- many failures, no leak ------------------------------------------------------------------


def test_no_fd_leaked_across_a_mix_of_failures(srv, certs, tmp_path):
    with LLMServer(ssl=tlscerts.server_context(certs.server_cert, certs.server_key)) as tls, \
            LLMServer(ssl=tlscerts.server_context(certs.evil_cert, certs.evil_key)) as evil:
        srv.delay(5)
        srv.drop()
        srv.truncate(b"{", length=100)
        srv.error(401, "bad key")
        srv.garbage(b"<html>")
        srv.reply("x" * 16000)
        tls.delay(5)
        tls.drop()
        tls.reply("fine")
        # each step takes the next scripted answer of its server
        steps = [step(srv, "openai", timeout=0.3),
                 step(srv, "anthropic"), step(srv, "openai_responses"), step(srv, "openai"),
                  step(srv, "anthropic"), step(srv, "openai_responses"),
                  step(tls, "openai", ca=certs.ca, timeout=0.3), step(tls, "anthropic", ca=certs.ca),
                  step(tls, "openai_responses", ca=certs.ca),
                  step(evil, "openai", ca=certs.ca), step(tls, "openai", ca=certs.wrong_ca),
                  step(tls, "openai", ca=certs.ca, base_url="https://127.0.0.1:1/v1"),
                  step(srv, "openai", ca=certs.ca, base_url="https://127.0.0.1:%d/v1" % srv.port)]
        rs, end = probe(tmp_path, steps)
    kinds = [r.get("kind") if not r["ok"] else "ok" for r in rs]
    assert kinds == ["timeout", "network", "network", "http", "malformed", "ok",
                     "timeout", "network", "ok", "tls", "tls", "network", "tls"], rs
    assert "not trusted for this host" in rs[9]["msg"]
    assert "not trusted" not in rs[12]["msg"]  # https to an http server: no certificate at all
    no_leak(end)


# -- the reference agent, end to end ---------------------------------------------------------


@pytest.mark.parametrize("backend", BACKENDS)
def test_session_history_streamed_from_flash_is_the_history_parsed(srv, tmp_path, backend):
    # Under MicroPython with micropython-lib's aiohttp: the Session History element (records
    # copied from the files) and the same history as dicts put the same bytes on the wire.
    srv.fallback = LLMServer.spec_reply("ok")
    steps = [{"do": "history", "backend": backend, "root": "sessions", "tokens": t,
              "kw": {"base_url": url_for(srv, backend), "api_key": "k", "timeout": 5}}
             for t in (0, 6144, 60)]
    results, end = probe(tmp_path, steps, heap="8M")
    assert all(r["ok"] for r in results), results
    assert [r["summary"] for r in results] == [False, False, True]
    reqs = srv.requests
    assert len(reqs) == 6
    for k in range(0, 6, 2):
        assert reqs[k].text == reqs[k + 1].text, k
    assert end["fds_after"] == end["fds_before"], "no file or socket left open"


@pytest.mark.parametrize("backend", BACKENDS)
def test_reference_agent_end_to_end(srv, tmp_path, backend):
    root = tmp_path / "root"
    srv.reply("", tool_calls=[("memory_store", {"content": "User plays the cello", "tags": "music"})])
    srv.reply("I will remember the cello.")
    srv.reply("", tool_calls=[("memory_recall", {"summary_labels": ["music"]})])
    srv.reply("You play the cello.")
    (r,), end = probe(tmp_path, [{"do": "agent", "backend": backend, "root": "root",
                                  "requests": ["Remember: I play the cello",
                                               "What instrument do I play?"],
                                  "kw": {"base_url": url_for(srv, backend), "api_key": "k",
                                         "timeout": 5}}], heap="8M")
    assert r["answers"] == ["I will remember the cello.", "You play the cello."], (r, end)
    assert [m["role"] for m in r["history"]] == ["user", "assistant", "tool", "assistant"] * 2
    # The third request carried the first turn as history, in this backend's wire shape.
    body = srv.requests[2].body
    if backend == "openai_responses":
        kinds = [i.get("type") or i["role"] for i in body["input"]]
        assert kinds == ["user", "function_call", "function_call_output", "assistant", "user"]
        assert body["input"][1]["id"].startswith("fc_")  # the raw output item, replayed as is
        assert "Long-term Memory" in body["instructions"]
    elif backend == "openai":
        assert [m["role"] for m in body["messages"]] == [
            "system", "user", "assistant", "tool", "assistant", "user"]
    else:
        assert [m["role"] for m in body["messages"]] == [
            "user", "assistant", "user", "assistant", "user"]
    recalled = json.dumps(srv.requests[3].body)
    assert "User plays the cello" in recalled
    # On disk: ESP-Claw's index with the backend format of every record.
    idx = next(p for p in (root / "sessions").iterdir() if p.name.endswith(".log.idx"))
    raw = idx.read_bytes()
    formats = [raw[8 + 10 * i + 9] for i in range((len(raw) - 8) // 10)]
    assert formats == [{"openai": 1, "anthropic": 2, "openai_responses": 3}[backend]] * 8
    no_leak(end)
