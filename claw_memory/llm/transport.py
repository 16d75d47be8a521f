# claw_memory.llm.transport: the HTTP(S) POST under the LLM clients, on micropython-lib's
# aiohttp (board, unix port) or on CPython's aiohttp.
# MIT license
#
# - TLS with the SSL context of certs.py (the server verified unless insecure=True).
# - The body is written in pieces with a known Content-Length (Body): a history streamed
#   from flash is never held whole in RAM.
# - Every path closes its socket. On MicroPython, aiohttp's request_raw() returns nothing
#   when it fails after connecting (TLS handshake, a timeout while connecting), so the socket
#   is caught where asyncio.open_connection() wraps it (_Sock) and closed in a finally. One
#   window is MicroPython's own: open_connection() does not close the socket when connect()
#   fails at once (no route, e.g. Wi-Fi down); the ESP32's socket finaliser closes it at the
#   next garbage collection, the unix port's socket has none.
# - The answer: read on MicroPython by answer.py, every limit held while reading; no runtime
#   follows a redirect.

import asyncio

from .._compat import MICROPYTHON, const, dumps
from ..reply import LLMError
from ..wire import dump
from .answer import _answer, _Fail, _limit, _no_redirect

MAX_ANSWER = const(16384)  # bytes of an answer read at most by default (README: why)
_PIECE = const(2048)  # small body parts are joined up to this size before a write
_READ = const(4096)  # bytes of a CPython answer read at a time
_QUOTE = const(200)  # characters of an aiohttp error quoted in a message
_LOOPBACK = ("127.0.0.1", "localhost", "::1", "[::1]")


def aiohttp_module():
    """The aiohttp module; ImportError that says how to install it when it is missing."""
    try:
        import aiohttp
    except ImportError:
        if MICROPYTHON:
            raise ImportError("aiohttp is not installed: `mpremote mip install aiohttp`, or freeze it")
        raise ImportError("aiohttp is not installed: pip install aiohttp")
    return aiohttp


def split_url(url):
    """(scheme, host, port, path) of an http(s) URL; ValueError for anything else."""
    scheme, sep, rest = url.partition("://")
    scheme = scheme.lower()
    if not sep or scheme not in ("http", "https"):
        raise ValueError("not an http:// or https:// URL: %r" % (url,))
    host, _, path = rest.partition("/")
    port = 443 if scheme == "https" else 80
    if host.startswith("["):  # [v6]:port
        if MICROPYTHON:  # its request_raw() splits the host at the first ":"
            raise ValueError("micropython-lib's aiohttp cannot reach an IPv6 address literal: %r"
                             % (url,))
        end = host.find("]")
        tail = host[end + 1 :]
        if end < 0 or (tail and not tail.startswith(":")):
            raise ValueError("bad host in URL: %r" % (url,))
        host, tail = host[: end + 1], tail[1:]
    else:
        host, _, tail = host.partition(":")
    if tail:
        if not tail.isdigit() or not 0 < int(tail) < 65536:
            raise ValueError("bad port in URL: %r" % (url,))
        port = int(tail)
    if not host:
        raise ValueError("no host in URL: %r" % (url,))
    return scheme, host, port, "/" + path


def cleartext(url):
    """True when `url` is plain http to a host other than this machine."""
    scheme, host, _, _ = split_url(url)
    return scheme == "http" and host.lower() not in _LOOPBACK


# -- the request body ----------------------------------------------------------------------


def streamed(x):
    """True for a streamed history element (see Body)."""
    return not isinstance(x, dict) and hasattr(x, "json_chunks")


class BodyError(ValueError):
    """A streamed history element wrote other bytes than it announced."""


class Body:
    """A JSON object `head` plus an array under `key` whose items are dicts (encoded here by
    wire.dump) or streamed elements. A streamed element `h` stands for zero or more items
    already in the backend's wire shape: `h.json_length(backend)` bytes, written by
    `h.json_chunks(backend)` (bytes pieces) as JSON texts separated by commas, without
    brackets; they are written verbatim in place. `length` is the byte count of the whole
    body and `pieces()` yields it; joined, the pieces are exactly the body."""

    def __init__(self, head, key, items, backend):
        self.backend = backend
        self.error = None
        h = dumps(head)
        start = (h[:-1] + "," if len(h) > 2 else "{") + '"' + key + '":['
        parts = []
        run = bytearray(start.encode())
        first = True
        for it in items:
            if streamed(it):
                n = it.json_length(backend)
                if not n:
                    continue
                if not first:
                    run += b","
                parts.append(bytes(run))
                parts.append((it, n))
                run = bytearray()
            else:
                if not first:
                    run += b","
                run += dump(it).encode()
            first = False
        run += b"]}"
        parts.append(bytes(run))
        self._parts = parts
        self.length = sum(len(p) if isinstance(p, bytes) else p[1] for p in parts)

    def pieces(self):
        """The body, in pieces of bytes (small ones joined up to 2 KiB)."""
        buf = bytearray()
        for p in self._parts:
            if isinstance(p, bytes):
                chunks = (p,)
                n = None
            else:
                chunks = p[0].json_chunks(self.backend)
                n = p[1]
            got = 0
            try:
                for c in chunks:
                    got += len(c)
                    if n is not None and got > n:
                        break
                    if len(buf) + len(c) <= _PIECE:
                        buf += c
                        continue
                    if buf:
                        yield bytes(buf)
                        buf = bytearray()
                    if len(c) <= _PIECE:
                        buf += c
                    else:
                        yield c if isinstance(c, bytes) else bytes(c)
            finally:
                if hasattr(chunks, "close"):
                    chunks.close()  # its files, when the request stops half way
            if n is not None and got != n:
                self.error = BodyError(
                    "streamed history: json_length(%r) said %d bytes, json_chunks gave %s"
                    % (self.backend, n, got if got < n else "more")
                )
                raise self.error
        if buf:
            yield bytes(buf)


# -- the POST ------------------------------------------------------------------------------


async def post(name, url, headers, body, tls, timeout, max_answer=MAX_ANSWER):
    """POST `body` (a Body) to `url`; returns (status, answer bytes). Every failure is an
    LLMError (kind timeout, tls, network, malformed), except BodyError and MemoryError."""
    aiohttp = aiohttp_module()
    headers = {k: v for k, v in headers.items() if k.lower() != "content-length"}
    headers["Content-Length"] = str(body.length)
    sock = None
    if MICROPYTHON:
        # request_raw() sends only these headers (not the session's); its Host has no port.
        scheme, host, port, _ = split_url(url)
        default = port == (443 if scheme == "https" else 80)
        _default(headers, "Host", host if default else "%s:%d" % (host, port))
        _default(headers, "Connection", "close")
        _default(headers, "User-Agent", "claw_memory")
        sock = _Sock(tls)
        go = _post_mp(aiohttp, url, headers, body, sock, max_answer)
    else:
        go = _post_cpython(aiohttp, url, headers, body, tls, max_answer)
    try:
        return await asyncio.wait_for(go, timeout)
    except asyncio.TimeoutError:  # before OSError: it is one on CPython 3.11+
        raise LLMError("%s: no answer within %g s" % (name, timeout), "timeout")
    except (MemoryError, LLMError, BodyError):
        raise
    except _Fail as e:
        raise LLMError("%s: %s (%s)" % (name, e, url), e.kind, e.status)
    except Exception as e:
        if body.error is not None:  # CPython's aiohttp wraps what the body raised
            raise body.error
        why = _tls_failure(e, tls, sock)
        if why:
            hint = " (the server's certificate is not trusted for this host: check the CA bundle)"
            raise LLMError("%s: TLS connection to %s refused: %s%s" % (
                name, url, _exc(e), hint if why == "cert" else ""), "tls")
        if not MICROPYTHON and isinstance(e, aiohttp.ClientResponseError):
            # CPython: its parser refused the answer (a line over its limit, a bad chunk);
            # its message quotes kilobytes of what it refused
            raise LLMError("%s: malformed answer from %s: %s" % (name, url, _exc(e)[:_QUOTE]),
                           "malformed")
        if isinstance(e, OSError):
            raise LLMError("%s: cannot reach %s: %s" % (name, url, _exc(e)), "network")
        # CPython: aiohttp.ClientError that is no OSError (dropped connection, bad HTTP).
        raise LLMError("%s: request to %s failed: %s" % (name, url, _exc(e)), "network")
    finally:
        if sock is not None:
            sock.close()  # also when wait_for cancelled the request


def _default(headers, name, value):
    low = name.lower()
    if not any(k.lower() == low for k in headers):
        headers[name] = value


def _exc(e):
    msg = str(e).strip()
    return type(e).__name__ + (": " + msg if msg else "")


def _tls_failure(e, tls, sock):
    """"cert" for a certificate that did not verify, "tls" for another TLS failure, else ""."""
    if tls is None:
        return ""
    if MICROPYTHON:
        # mbedTLS, while request_raw() handshakes: a failed verification is a ValueError,
        # other TLS errors an OSError with a negative (mbedTLS) code.
        if sock.sent:
            return ""
        if isinstance(e, ValueError):
            return "cert"
        code = e.args[0] if isinstance(e, OSError) and e.args else 0
        return "tls" if isinstance(code, int) and code < 0 else ""
    import ssl

    aiohttp = aiohttp_module()
    if isinstance(e, (ssl.CertificateError, aiohttp.ClientConnectorCertificateError)):
        return "cert"
    return "tls" if isinstance(e, (ssl.SSLError, aiohttp.ClientSSLError)) else ""


class _Sock:
    """Passed to micropython-lib's aiohttp as `ssl=`, for http:// too: asyncio's
    open_connection() hands it the socket it connected, before anything else can fail.
    It wraps it with the real SSL context (or keeps it as is for http), and `close()`
    closes whatever was made, whatever failed where."""

    def __init__(self, ctx):
        self.ctx = ctx
        self.sent = False  # the request head went out (TLS handshake done)
        self._socks = []

    def wrap_socket(self, sock, server_side=False, do_handshake_on_connect=True,
                    server_hostname=None):
        self._socks.append(sock)
        if self.ctx is None:
            return sock
        s = self.ctx.wrap_socket(sock, server_hostname=server_hostname,
                                 do_handshake_on_connect=do_handshake_on_connect)
        self._socks.append(s)
        return s

    def close(self):
        while self._socks:  # the TLS socket first, then the plain one (closing is idempotent)
            try:
                self._socks.pop().close()
            except OSError:
                pass


async def _post_mp(aiohttp, url, headers, body, sock, max_answer):
    # request_raw(is_handshake=True) connects, writes the request line and the headers
    # (no body: we send Content-Length ourselves) and returns the stream.
    reader, writer = await aiohttp.ClientSession().request_raw(
        "POST", url, headers=headers, ssl=sock, is_handshake=True
    )
    sock.sent = True
    pieces = body.pieces()
    try:
        for piece in pieces:
            writer.write(piece)
            await writer.drain()
    finally:
        pieces.close()  # MicroPython closes an abandoned generator (and its files) never
    return await _answer(reader, max_answer)


async def _post_cpython(aiohttp, url, headers, body, tls, max_answer):
    async def stream():
        pieces = body.pieces()
        try:
            for piece in pieces:
                yield piece
        finally:
            pieces.close()

    kw = {"ssl": tls} if tls is not None else {}
    # no aiohttp timeouts (its defaults: 30 s to connect, 300 s in all): wait_for is the limit
    async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout()) as s:
        async with s.post(url, data=stream(), headers=headers, allow_redirects=False, **kw) as r:
            out = bytearray()
            _no_redirect(r.status, r.headers.get("Location"))
            if r.content_length is not None:
                _limit(r.content_length, max_answer, r.status)
            async for chunk in r.content.iter_chunked(_READ):
                out += chunk
                _limit(len(out), max_answer, r.status)
            return r.status, out
