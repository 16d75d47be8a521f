# The LLM clients' pieces that need no network, under the unix port without aiohttp on the
# path (tests_host/test_llm_mp.py runs them with micropython-lib's aiohttp): the clear error
# when aiohttp is missing, CA bundles and SSL contexts, the streamed request body, and the
# OpenAI Responses records in the session history.
import json
import os

from flashsim import mount
from mptest import eq, ok, raises
from streamed_history import LyingHistory, StreamedHistory

from claw_memory import llm, wire
from claw_memory.llm import certs, transport
from claw_memory.core import FINAL, TOOL_CALL, TOOL_RESULTS, USER
from claw_memory.messages import classify
from claw_memory.session import Sessions

BACKENDS = ("openai", "anthropic", "openai_responses")

# A public root from certifi (ISRG Root X2), as test data.
ROOT_PEM = b"""# Label: "ISRG Root X2"
-----BEGIN CERTIFICATE-----
MIICGzCCAaGgAwIBAgIQQdKd0XLq7qeAwSxs6S+HUjAKBggqhkjOPQQDAzBPMQsw
CQYDVQQGEwJVUzEpMCcGA1UEChMgSW50ZXJuZXQgU2VjdXJpdHkgUmVzZWFyY2gg
R3JvdXAxFTATBgNVBAMTDElTUkcgUm9vdCBYMjAeFw0yMDA5MDQwMDAwMDBaFw00
MDA5MTcxNjAwMDBaME8xCzAJBgNVBAYTAlVTMSkwJwYDVQQKEyBJbnRlcm5ldCBT
ZWN1cml0eSBSZXNlYXJjaCBHcm91cDEVMBMGA1UEAxMMSVNSRyBSb290IFgyMHYw
EAYHKoZIzj0CAQYFK4EEACIDYgAEzZvVn4CDCuwJSvMWSj5cz3es3mcFDR0HttwW
+1qLFNvicWDEukWVEYmO6gbf9yoWHKS5xcUy4APgHoIYOIvXRdgKam7mAHf7AlF9
ItgKbppbd9/w+kHsOdx1ymgHDB/qo0IwQDAOBgNVHQ8BAf8EBAMCAQYwDwYDVR0T
AQH/BAUwAwEB/zAdBgNVHQ4EFgQUfEKWrt5LSDv6kviejM9ti6lyN5UwCgYIKoZI
zj0EAwMDaAAwZQIwe3lORlCEwkSHRhtFcP9Ymd70/aTSVaYgLXTWNLxBo1BfASdW
tL4ndQavEi51mI38AjEAi/V3bNTIZargCyzuFJ0nN6T5U6VR5CmD1/iQMVtCnwr1
/q4AaOeMSQ+2b1tbFfLn
-----END CERTIFICATE-----
"""


def test_missing_aiohttp_is_a_clear_error_at_construction():
    for backend in BACKENDS:
        e = raises(ImportError, llm.from_config, backend, base_url="http://127.0.0.1:9")
        eq(str(e), "aiohttp is not installed: `mpremote mip install aiohttp`, or freeze it",
           backend)


def test_ca_bundle_from_pem_or_der_one_certificate_at_a_time():
    ders = list(certs.ders(ROOT_PEM + b"junk\n" + ROOT_PEM.replace(b"\n", b"\r\n")))
    eq(len(ders), 2, "two certificates, CRLF too")
    ok(ders[0] == ders[1] and ders[0][0] == 0x30, "DER sequence")
    eq(list(certs.ders(ders[0])), [ders[0]], "DER bytes are one certificate")
    mount("lfs2", "/flash", blocks=64)
    path = "/flash/ca.pem"
    with open(path, "wb") as f:
        f.write(ROOT_PEM * 3)
    eq(len(list(certs.ders(path))), 3, "from a file")
    ok(certs.tls_context("https://api.example.com", path) is not None, "verifying context")
    e = raises(OSError, lambda: list(certs.ders("/nonexistent/ca.pem")))
    ok("/nonexistent/ca.pem" in str(e), "names the missing bundle")


def test_tls_context_rules():
    logs = []
    eq(certs.tls_context("http://127.0.0.1:8080", None, log=logs.append), None, "http: no TLS")
    eq(certs.tls_context("http://x", b"garbage"), None, "http ignores the CA")
    ctx = certs.tls_context("HTTPS://api.example.com", ROOT_PEM)
    ok(ctx is not None, "https with a PEM bundle")
    eq(logs, [], "nothing logged")
    e = raises(ValueError, certs.tls_context, "https://api.example.com", b"\x30\x03\x02\x01\x00",
               log=logs.append, name="openai")
    ok("no usable certificate" in str(e) and str(e).startswith("openai:"), str(e))
    eq(len(logs), 1, "the unusable certificate is logged")
    ok("certificate 1 skipped" in logs[0], logs[0])
    e = raises(ValueError, certs.tls_context, "https://api.example.com", b"no certificate here")
    ok("no usable certificate" in str(e), str(e))
    if not any(_exists(p) for p in certs.CA_PATHS):  # no bundle installed on this machine
        e = raises(ValueError, certs.tls_context, "https://api.example.com", name="anthropic")
        msg = str(e)
        for part in ("anthropic: https needs a CA bundle", certs.DEFAULT_CA, "ca=",
                     "claw-memory deploy", "insecure=True"):
            ok(part in msg, "%r in %r" % (part, msg))
    logs = []
    ok(certs.tls_context("https://evil.example", None, insecure=True, log=logs.append)
       is not None, "insecure context")
    eq(len(logs), 1, "insecure is logged")
    ok("verification is OFF" in logs[0] and "https://evil.example" in logs[0], logs[0])


def test_a_damaged_certificate_is_skipped_and_logged_with_its_place():
    # Issue 24 item 11: one damaged base64 block made every https client fail with a bare
    # "incorrect padding". Blocks: bad base64 (line 1), valid base64 that is no certificate
    # (line 5), the root (its BEGIN on line 9), one cut short by the end of the file (line 23).
    bad = (b"-----BEGIN CERTIFICATE-----\nQUJD\nUJD\n-----END CERTIFICATE-----\n"
           b"-----BEGIN CERTIFICATE-----\naGVsbG8gd29ybGQ=\n-----END CERTIFICATE-----\n")
    cut = b"-----BEGIN CERTIFICATE-----\nMIIB\n"
    mount("lfs2", "/flash", blocks=64)
    path = "/flash/bundle.pem"
    with open(path, "wb") as f:
        f.write(bad + ROOT_PEM + cut)
    logs = []
    ok(certs.tls_context("https://api.example.com", path, log=logs.append, name="openai")
       is not None, "the usable certificate is trusted")
    eq([ln.split(" skipped: ")[0] for ln in logs],
       ["openai: CA bundle /flash/bundle.pem: certificate %d (line %d)" % p
        for p in ((1, 1), (2, 5), (4, 23))], "each bad one, where it is")
    ok("incorrect padding" in logs[0] and "cut short" in logs[2], logs)
    eq(len(list(certs.ders(path))), 2, "ders: the blocks whose base64 reads")
    with open(path, "wb") as f:
        f.write(cut + bad + cut)  # the first cut short by the next BEGIN
    logs = []
    e = raises(ValueError, certs.tls_context, "https://api.example.com", path, log=logs.append)
    eq(str(e), "llm: no usable certificate in the CA bundle /flash/bundle.pem", "names the file")
    eq([ln.split(": ")[2] for ln in logs],
       ["certificate %d (line %d) skipped" % p for p in ((1, 1), (2, 3), (3, 7), (4, 10))],
       "every bad one logged")
    ok("no END line" in logs[0], logs[0])
    os.remove(path)


def _exists(path):
    try:
        os.stat(path)
        return True
    except OSError:
        return False


def test_split_url():
    eq(transport.split_url("https://api.openai.com/v1"), ("https", "api.openai.com", 443, "/v1"), "")
    eq(transport.split_url("HTTP://127.0.0.1:8080"), ("http", "127.0.0.1", 8080, "/"), "port")
    e = raises(ValueError, transport.split_url, "http://[::1]:81/x")  # aiohttp cannot
    ok("IPv6" in str(e), str(e))
    for bad in ("ftp://x", "api.openai.com", "http://", "http://h:0", "http://h:x", "https://h:99999"):
        raises(ValueError, transport.split_url, bad)
    ok(transport.cleartext("http://192.168.1.5/v1") and not transport.cleartext("http://localhost:1"),
       "cleartext")
    ok(not transport.cleartext("https://api.openai.com"), "https is not cleartext")


HISTORY = [
    {"role": "user", "content": "Remember I like tea \u00fc."},
    {"role": "assistant", "content": None, "tool_calls": [
        {"id": "call_1", "type": "function",
         "function": {"name": "memory_store", "arguments": '{"content":"tea"}'}}]},
    {"role": "tool", "tool_call_id": "call_1", "content": '{"ok":true}', "is_error": False},
    {"role": "assistant", "content": "Noted."},
    {"role": "user", "content": "And coffee?"},
]


def _body(backend, items):
    b = transport.Body({"model": "m", "n": 1}, "messages", items, backend)
    data = b"".join(b.pieces())
    eq(len(data), b.length, "Content-Length is the body's length")
    return data


def test_body_streamed_elements_are_written_verbatim_and_byte_identical():
    for backend in BACKENDS:
        plain = StreamedHistory(HISTORY).wire(backend)
        want = _body(backend, plain)
        obj = json.loads(want)
        eq(obj["messages"], plain, backend)
        eq(obj["model"], "m", "head fields")
        eq(_body(backend, [StreamedHistory(HISTORY)]), want, "%s: the history streamed" % backend)
        for k in range(len(plain) + 1):
            # the first k wire items streamed, an empty element, then the rest as dicts
            got = _body(backend, [_Wire(plain[:k]), _Wire([])] + plain[k:])
            eq(got, want, "%s: %d streamed" % (backend, k))
    eq(json.loads(_body("openai", [_Wire([])])), {"model": "m", "n": 1, "messages": []},
       "only an empty element")


class _Wire(StreamedHistory):
    # A streamed element holding wire items as they are.
    def wire(self, backend):
        return self.messages


def test_body_head_with_percent_signs_and_empty_head():
    b = transport.Body({"instructions": "100% sure, %s %d"}, "input", [{"a": 1}], "x")
    eq(json.loads(b"".join(b.pieces())), {"instructions": "100% sure, %s %d", "input": [{"a": 1}]},
       "percent signs")
    b = transport.Body({}, "input", [], "x")
    eq(b"".join(b.pieces()), b'{"input":[]}', "empty head")


def test_body_big_streamed_element_is_not_joined():
    big = StreamedHistory([{"role": "user", "content": "x" * 20000}], piece=5000)
    b = transport.Body({"model": "m"}, "messages", [big], "openai")
    sizes = [len(p) for p in b.pieces()]
    ok(max(sizes) <= 5000 + 2048, "pieces stay small: %r" % sizes)
    eq(sum(sizes), b.length, "length")


def test_body_element_that_lies_about_its_length():
    for delta in (1, -1):
        b = transport.Body({"model": "m"}, "messages", [LyingHistory(HISTORY, delta)], "openai")
        e = raises(transport.BodyError, lambda: b"".join(b.pieces()))
        ok("json_length" in str(e) and b.error is e, str(e))


def test_responses_records_in_the_session_history():
    reply = llm.clients._from_responses({"status": "completed", "output": [
        {"type": "reasoning", "id": "rs_1", "summary": [], "encrypted_content": "gAAA"},
        {"type": "message", "role": "assistant",
         "content": [{"type": "output_text", "text": "Storing."}]},
        {"type": "function_call", "id": "fc_1", "call_id": "call_9", "name": "memory_store",
         "arguments": '{"content":"tea"}'}]})
    raw = json.loads(reply.raw)
    eq(classify(raw), (TOOL_CALL, 3), "Responses tool call")
    final = llm.clients._from_responses({"status": "completed", "output": [
        {"type": "message", "content": [{"type": "output_text", "text": "Done."}]}]})
    eq(classify(json.loads(final.raw)), (FINAL, 0), "a Responses final answer is plain text")
    mount("lfs2", "/flash", blocks=64)
    s = Sessions("/flash/sessions")
    try:
        sid = "chat:web:responses"
        s.persist(sid, [(USER, None, "Remember tea")], backend="openai_responses")
        s.persist(sid, [(TOOL_CALL, reply.raw, None),
                        (TOOL_RESULTS, json.dumps([{"role": "tool", "tool_call_id": "call_9",
                                                    "content": "ok", "is_error": False}]), None)],
                  backend="openai_responses")
        s.persist(sid, [(FINAL, final.raw, "Done.")], True, backend="openai_responses")
        mine = s.messages(sid, "openai_responses")
        eq([m["role"] for m in mine], ["user", "assistant", "tool", "assistant"], "own backend")
        eq(mine[1]["_claw_provider_state"]["output"][2]["call_id"], "call_9", "raw output kept")
        for other in ("openai", "anthropic"):
            eq(s.messages(sid, other), [{"role": "user", "content": "Remember tea"},
                                        {"role": "assistant", "content": "Done."}], other)
        # replayed to the Responses client: the kept output goes back verbatim
        items = wire.convert(mine, "openai_responses")
        eq([i.get("type", i.get("role")) for i in items],
           ["user", "reasoning", "message", "function_call", "function_call_output", "assistant"],
           "input items")
        eq(items[3]["id"], "fc_1", "verbatim")
    finally:
        s.close()
