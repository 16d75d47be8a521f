# claw_memory.llm.certs: CA bundles and SSL contexts for the LLM clients.
# MIT license
#
# The clients verify the server by default: CERT_REQUIRED, the host name checked (mbedTLS
# does it when given the server name, which asyncio.open_connection passes), and a CA bundle
# from `ca=` (a path, or PEM/DER bytes), else /certs/ca.pem on the board (CPython: the system
# store). No bundle for an https URL is an error that says how to get one, never a silent
# downgrade; only an explicit insecure=True turns verification off, and says so through `log`.
#
# RAM: the bundle is read one certificate at a time and loaded as DER (mbedTLS in some builds
# cannot parse PEM). mbedTLS keeps the parsed roots outside the GC heap (about 2.8 KB each on
# the unix port); keep the bundle to the roots the board needs.

from .._compat import ENOENT, MICROPYTHON

DEFAULT_CA = "/certs/ca.pem"
# ESP32 firmware mounts its filesystem at "/"; the virtual board and some ports at /flash.
CA_PATHS = (DEFAULT_CA, "/flash/certs/ca.pem")
_BEGIN = b"-----BEGIN CERTIFICATE-----"
_END = b"-----END CERTIFICATE-----"


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
        # mbedTLS in some builds (the unix port tested here) cannot parse PEM: every
        # certificate is loaded as DER, one at a time (the context accumulates them).
        ssl = _ssl()
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
        n = 0
        for i, der in enumerate(ders(ca)):
            try:
                ctx.load_verify_locations(cadata=der)
                n += 1
            except (ValueError, OSError) as e:
                if log:
                    log("%s: CA bundle: certificate %d skipped: %s" % (name, i + 1, e))
        if not n:
            raise ValueError("%s: no usable certificate in the CA bundle %s" % (name, _what(ca)))
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
            return _cssl.create_default_context()
        if isinstance(ca, str):
            return _cssl.create_default_context(cafile=ca)
        data = bytes(ca)
        return _cssl.create_default_context(
            cadata=data.decode("ascii") if _BEGIN in data else data
        )


def _what(ca):
    return ca if isinstance(ca, str) else "(%d bytes)" % len(ca)


def ders(ca):
    """The DER bytes of each certificate of a CA bundle (a path, or bytes: PEM with any
    number of certificates, or one DER certificate), one at a time."""
    if isinstance(ca, str):
        try:
            f = open(ca, "rb")
        except OSError as e:
            raise OSError(e.args[0] if e.args else ENOENT, "CA bundle %s cannot be read: %s" % (ca, e))
        with f:
            yield from _pem(f)
    elif _BEGIN in ca:
        yield from _pem(bytes(ca).split(b"\n"))
    else:
        yield bytes(ca)


def _pem(lines):
    import binascii

    b64 = None
    for line in lines:
        line = line.strip()
        if line == _BEGIN:
            b64 = bytearray()
        elif line == _END and b64 is not None:
            yield binascii.a2b_base64(b64)
            b64 = None
        elif b64 is not None:
            b64 += line
