# claw_memory.llm.certs: CA bundles and SSL contexts for the LLM clients.
# MIT license
#
# The clients verify the server by default: CERT_REQUIRED, the host name checked (mbedTLS
# does it when given the server name, which asyncio.open_connection passes), and a CA bundle
# from `ca=` (a path, or PEM/DER bytes), else /certs/ca.pem on the board (CPython: the system
# store). No bundle for an https URL is an error that says how to get one, never a silent
# downgrade; only an explicit insecure=True turns verification off, and says so through `log`.
# A damaged certificate in the bundle is skipped (logged with its place), on CPython too.
#
# RAM: the bundle is read one certificate at a time and loaded as DER (mbedTLS in some builds
# cannot parse PEM). mbedTLS keeps the parsed roots outside the GC heap (about 2.8 KB each on
# the unix port); keep the bundle to the roots the board needs.

from .._compat import ENOENT, MICROPYTHON, const

DEFAULT_CA = "/certs/ca.pem"
# ESP32 firmware mounts its filesystem at "/"; the virtual board and some ports at /flash.
CA_PATHS = (DEFAULT_CA, "/flash/certs/ca.pem")
_BEGIN = b"-----BEGIN CERTIFICATE-----"
_END = b"-----END CERTIFICATE-----"
_LINE = const(128)  # bytes of a bundle's line read at a time (PEM writes 64 a line)
_BLOCK = const(16384)  # bytes of one certificate's base64 at most (a root has 1-3 KiB)


def tls_context(url, ca=None, insecure=False, log=None, name="llm"):
    """The SSL context for requests to `url`: None for http://. For https:// one that
    verifies the server against `ca` (a path, or PEM/DER bytes), or without verification
    when `insecure` (logged). ValueError when no CA bundle can be found."""
    if url.partition("://")[0].lower() != "https":
        return None
    if insecure:
        if log:
            log("%s: TLS certificate verification is OFF (insecure=True): anyone on the "
                "network path can pose as %s and read the API key" % (name, url))
        return _unverified()
    if ca is None:
        ca = _default_ca(name)
    return _verifying(ca, log, name)


def _default_ca(name):
    if not MICROPYTHON:
        return None  # the system's trust store
    import os

    for path in CA_PATHS:
        try:
            os.stat(path)
            return path
        except OSError:
            pass
    raise ValueError(
        "%s: https needs a CA bundle to verify the server, and there is none at %s: pass "
        "ca='/path/ca.pem' (or the PEM bytes), or install one with `claw-memory deploy "
        "--port PORT --ca-only --ca-common` (or --ca-for HOST); insecure=True skips "
        "verification (the API key can then be read by anyone on the way)" % (name, DEFAULT_CA)
    )


if MICROPYTHON:

    def _ssl():
        try:
            import ssl
        except ImportError:  # firmware without micropython-lib's ssl wrapper
            import tls as ssl
        return ssl

    def _unverified():
        ssl = _ssl()
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
        ctx.verify_mode = ssl.CERT_NONE
        return ctx

    def _verifying(ca, log, name):
        return _trusting(ca, log, name, _new)

    def _new(der):
        # mbedTLS in some builds (the unix port tested here) cannot parse PEM: every
        # certificate is loaded as DER, one at a time (the context accumulates them).
        ssl = _ssl()
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
        ctx.load_verify_locations(cadata=der)
        ctx.verify_mode = ssl.CERT_REQUIRED
        return ctx

else:
    import ssl as _cssl

    def _unverified():
        ctx = _cssl.create_default_context()
        ctx.check_hostname = False
        ctx.verify_mode = _cssl.CERT_NONE
        return ctx

    def _verifying(ca, log, name):
        if ca is None:
            return _cssl.create_default_context()  # the system's trust store
        return _trusting(ca, log, name, lambda der: _cssl.create_default_context(cadata=der))


def _trusting(ca, log, name, new):
    """The context `new(der)` makes from the first usable certificate of the bundle `ca`, with
    every other usable one added. A damaged one (bad base64, cut short, refused by the TLS
    library) is skipped and logged with where it is: one bad block must not disable every
    client. ValueError, naming the bundle, when none is usable."""
    ctx = None
    for where, der in blocks(ca):
        try:
            if not isinstance(der, bytes):
                raise der
            if ctx is None:
                ctx = new(der)
            else:
                ctx.load_verify_locations(cadata=der)
        except (ValueError, OSError) as e:
            if log:
                log("%s: CA bundle %s: %s skipped: %s" % (name, _what(ca), where,
                                                         str(e) or type(e).__name__))
    if ctx is None:
        raise ValueError("%s: no usable certificate in the CA bundle %s" % (name, _what(ca)))
    return ctx


def _what(ca):
    return ca if isinstance(ca, str) else "(%d bytes)" % len(ca)


def ders(ca):
    """The DER bytes of each readable certificate of a CA bundle (see blocks)."""
    for _, der in blocks(ca):
        if isinstance(der, bytes):
            yield der


def blocks(ca):
    """(where, DER bytes) for each certificate of a CA bundle (a path, or bytes: PEM with any
    number of certificates, or one DER certificate), one at a time; for a PEM block that
    cannot be read, (where, the ValueError). `where` is "certificate N (line L)"."""
    if isinstance(ca, str):
        try:
            f = open(ca, "rb")
        except OSError as e:
            raise OSError(e.args[0] if e.args else ENOENT, "CA bundle %s cannot be read: %s" % (ca, e))
        with f:
            yield from _pem(f)
    elif _BEGIN in ca:
        import io

        yield from _pem(io.BytesIO(bytes(ca)))
    else:
        yield "certificate 1", bytes(ca)


def _pem(f):
    import binascii

    b64 = None
    n = at = 0
    i = 0  # whole lines before this piece
    while True:
        # in pieces: MicroPython's readline() holds a line of any length (a damaged bundle
        # may have one), readline(n) allocates n bytes whatever the line
        piece = f.readline(_LINE)
        if not piece:
            break
        line = piece.strip()
        if line == _BEGIN:
            if b64 is not None:
                yield _where(n, at), ValueError("no END line")
            n += 1
            at = i + 1
            b64 = bytearray()
        elif line == _END and b64 is not None:
            try:
                der = binascii.a2b_base64(b64)
            except ValueError as e:  # binascii.Error is one
                der = ValueError("bad base64: %s" % e)
            yield _where(n, at), der
            b64 = None
        elif b64 is not None:
            b64 += line
            if len(b64) > _BLOCK:  # no root is that large: the rest of the block is skipped
                yield _where(n, at), ValueError("over %d bytes of base64" % _BLOCK)
                b64 = None
        if piece.endswith(b"\n"):
            i += 1
    if b64 is not None:
        yield _where(n, at), ValueError("cut short: no END line")


def _where(n, line):
    return "certificate %d (line %d)" % (n, line)
