# claw_memory.llm.answer: an HTTP answer read from a MicroPython stream (under transport.py's
# POST), and the checks both runtimes make of an answer: its size, no redirect.
# MIT license
#
# Every limit holds while reading, so a hostile or broken server gets an LLMError, never a
# MemoryError: asyncio's Stream.readline() would hold a line of any length, so lines are read
# in pieces of at most 4 KiB and refused one byte past their limit.

from .._compat import const

_READ = const(4096)
_HEAD_MAX = const(16384)  # bytes of status line and headers (and of a chunked body's trailers)
_CHUNK_LINE = const(1024)  # bytes of a chunk size line, its extensions and CRLF included


class _Fail(Exception):
    """A broken or refused HTTP answer (a redirect, one over its size on either runtime);
    transport.post() makes it an LLMError naming the client and the URL."""

    def __init__(self, message, kind="network", status=None):
        super().__init__(message)
        self.kind = kind
        self.status = status


async def _answer(reader, max_answer):
    """(status, body) of an HTTP answer read from a MicroPython stream, every limit enforced
    while reading: nothing longer than the limit is ever held (asyncio's readline() would
    hold a line of any length)."""
    r = _In(reader)
    line = await r.line(_HEAD_MAX, "answer headers")
    parts = line.split(None, 2)
    if len(parts) < 2 or not parts[0].startswith(b"HTTP/") or not parts[1].isdigit():
        if not line:
            raise _Fail("connection closed before an answer")
        raise _Fail("not an HTTP answer: %r" % line[:60])
    r.status = status = int(parts[1])
    length = location = None
    chunked = False
    seen = len(line)
    while True:
        line = await r.line(_HEAD_MAX - seen, "answer headers", _HEAD_MAX)
        seen += len(line)
        if not line:
            raise _Fail("connection closed in the answer's headers")
        if line in (b"\r\n", b"\n"):
            break
        k, _, v = line.partition(b":")
        k = k.strip().lower()
        if k == b"content-length":
            v = v.strip()
            if not v.isdigit():
                raise _Fail("bad Content-Length %r" % v[:20], "malformed", status)
            length = int(v)
        elif k == b"transfer-encoding" and b"chunked" in v.lower():
            chunked = True
        elif k == b"location":
            location = str(v.strip(), "utf-8", "replace")
    _no_redirect(status, location)
    if chunked:
        data = await _chunked(r, max_answer)
    elif length is not None:
        _limit(length, max_answer, status)
        data = await r.exactly(length)
    else:
        data = await r.to_eof(max_answer)
    return status, data


def _no_redirect(status, location):
    # Only base_url is contacted: a redirect would take the API key and the conversation
    # elsewhere (CPython's aiohttp keeps x-api-key on another origin).
    if 300 <= status < 400:
        raise _Fail("HTTP %d: redirect to %s not followed, only base_url is contacted"
                    % (status, location or "(no Location)"), "http", status)


def _limit(n, max_answer, status):
    if n > max_answer:
        raise _Fail("answer over %d bytes" % max_answer, "malformed", status)


class _In:
    """The answer's stream read in pieces of at most 4 KiB: lines refused as soon as they
    pass their limit, the body into a buffer of its final size."""

    def __init__(self, stream):
        self.s = stream
        self.buf = b""  # read past the last line: the start of what comes next
        self.pos = 0
        self.status = None

    async def line(self, limit, what, total=None):
        """The next line, its b"\n" included, of at most `limit` bytes (b"" at the end of the
        stream, the rest without b"\n" when it ends inside a line)."""
        while True:
            i = self.buf.find(b"\n", self.pos)
            if i >= 0 and i - self.pos < limit:
                line = self.buf[self.pos : i + 1]
                self.pos = i + 1
                return line
            if i >= 0 or len(self.buf) - self.pos >= limit:
                raise _Fail("%s over %d bytes" % (what, limit if total is None else total),
                            "malformed", self.status)
            chunk = await self.s.read(_READ)
            if not chunk:
                line = self.buf[self.pos :]
                self.buf, self.pos = b"", 0
                return line
            self.buf = self.buf[self.pos :] + chunk
            self.pos = 0

    def _rest(self):
        rest = self.buf[self.pos :]
        self.buf, self.pos = b"", 0
        return rest

    async def exactly(self, n):
        # readinto a buffer of the final size: Stream.readexactly() grows a bytes object
        # chunk by chunk (a copy per chunk).
        rest = self._rest()
        buf = bytearray(n)
        mv = memoryview(buf)
        pos = min(len(rest), n)
        mv[:pos] = rest[:pos]
        self.buf = rest[pos:]  # more than n bytes were read ahead (a chunk's CRLF...)
        while pos < n:
            k = await self.s.readinto(mv[pos:])
            if k == 0:
                raise _Fail("connection closed before the answer was complete")
            if k:  # None: the TLS layer has no whole record yet
                pos += k
        return buf

    async def to_eof(self, max_answer):
        out = bytearray(self._rest())
        while True:
            _limit(len(out), max_answer, self.status)
            # never more than one byte past the limit: an endless body is refused, not held
            chunk = await self.s.read(min(_READ, max_answer + 1 - len(out)))
            if not chunk:
                return out
            out += chunk


async def _chunked(r, max_answer):
    out = bytearray()
    while True:
        line = await r.line(_CHUNK_LINE, "a chunk size line")
        if not line:
            raise _Fail("connection closed before the answer was complete")
        try:
            n = int(line.split(b";", 1)[0].strip(), 16)
        except ValueError:
            n = -1
        if n < 0:
            raise _Fail("bad chunk size %r" % line[:20], "malformed", r.status)
        if not n:
            break
        _limit(len(out) + n, max_answer, r.status)
        out += await r.exactly(n)
        if await r.exactly(2) != b"\r\n":
            raise _Fail("no CRLF after a chunk", "malformed", r.status)
    # the trailers (header lines, bounded as the headers are), up to the empty line; the
    # body is complete, so a stream that ends here is no error
    seen = 0
    while True:
        line = await r.line(_HEAD_MAX - seen, "answer trailers", _HEAD_MAX)
        seen += len(line)
        if line in (b"", b"\r\n", b"\n"):
            return out
