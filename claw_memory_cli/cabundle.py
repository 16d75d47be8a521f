"""CA bundles for the board, built from certifi's roots (Mozilla's list).

The LLM clients on the board verify the server against `/certs/ca.pem` (see README, "TLS").
`claw-memory deploy` writes that file from:

- `--ca-for HOST[:PORT]`: the root that HOST's certificate chains to, found by connecting to
  it from this computer (verified against certifi);
- `--ca-common`: COMMON_ROOTS, a short list of roots that large API hosts commonly chain to.
  It is a guess made without network access: no host was checked against it;
- `--ca FILE`: certificates of your own (PEM), e.g. for a proxy or a local server.

Keep the bundle small: every root costs the board RAM while a client exists.
"""

import re
import socket
import ssl

from .ui import EXIT_TOOL, CliError

# Not checked against the live hosts (no network where this was written): Let's Encrypt,
# Google Trust Services, DigiCert, Amazon, Sectigo and Microsoft roots.
COMMON_ROOTS = (
    "ISRG Root X1",
    "ISRG Root X2",
    "GTS Root R1",
    "GTS Root R4",
    "DigiCert Global Root G2",
    "Amazon Root CA 1",
    "USERTrust RSA Certification Authority",
    "Microsoft RSA Root Certificate Authority 2017",
)

_CERT = re.compile(r"-----BEGIN CERTIFICATE-----\r?\n.*?-----END CERTIFICATE-----", re.S)
_LABEL = re.compile(r'^# Label: "(.*)"\s*$', re.M)


def certifi_path():
    try:
        import certifi
    except ImportError:
        raise CliError("certifi is not installed: pip install certifi (or use --ca FILE)", EXIT_TOOL)
    return certifi.where()


def roots(path=None):
    """{label: PEM} of a certifi-style bundle (each certificate after its `# Label:` line)."""
    with open(path or certifi_path(), encoding="ascii") as f:
        text = f.read()
    out = {}
    labels = list(_LABEL.finditer(text))
    for i, m in enumerate(labels):
        end = labels[i + 1].start() if i + 1 < len(labels) else len(text)
        cert = _CERT.search(text, m.end(), end)
        if cert:
            out[m.group(1)] = cert.group(0)
    return out


def pem_certs(text):
    """The PEM certificates in a text."""
    return [m.group(0) for m in _CERT.finditer(text)]


def bundle(names, path=None):
    """A PEM bundle of the named roots, each after a `# Label:` line."""
    known = roots(path)
    missing = [n for n in names if n not in known]
    if missing:
        raise CliError("not in the CA store: %s" % ", ".join(missing))
    return "".join('# Label: "%s"\n%s\n' % (n, known[n]) for n in names)


def _der_chain(sock):
    get = getattr(sock, "get_verified_chain", None)  # Python 3.13+
    if get is None:
        get = getattr(getattr(sock, "_sslobj", None), "get_verified_chain", None)
    if get is None:
        raise CliError("this Python cannot read a server's certificate chain: use --ca FILE")
    import _ssl

    # 3.13+: DER bytes; 3.10-3.12 (private): _ssl.Certificate objects
    return [c if isinstance(c, bytes) else c.public_bytes(_ssl.ENCODING_DER) for c in get()]


def root_for(host, path=None, timeout=10):
    """(label, PEM) of the root that `host` ("name" or "name:port") chains to, from the
    store `path` (certifi by default). CliError when it cannot be reached or verified."""
    name, _, port = host.partition(":")
    store = path or certifi_path()
    ctx = ssl.create_default_context(cafile=store)
    try:
        with socket.create_connection((name, int(port or 443)), timeout=timeout) as raw:
            with ctx.wrap_socket(raw, server_hostname=name) as s:
                anchor = _der_chain(s)[-1]
    except (OSError, ValueError) as e:
        raise CliError("cannot verify %s against %s: %s" % (host, store, e))
    for label, pem in roots(store).items():
        if ssl.PEM_cert_to_DER_cert(pem) == anchor:
            return label, pem
    raise CliError("%s chains to a root that is not in %s" % (host, store))


def build(common=False, hosts=(), files=(), path=None):
    """(PEM text, [labels]) of a bundle: COMMON_ROOTS, the roots of `hosts`, and the
    certificates of `files`; each certificate once."""
    parts = []
    if common:
        parts += [(n, pem_certs(bundle([n], path))[0]) for n in COMMON_ROOTS]
    for h in hosts:
        parts.append(root_for(h, path))
    for fn in files:
        try:
            with open(fn, encoding="ascii") as f:
                certs = pem_certs(f.read())
        except (OSError, UnicodeError) as e:
            raise CliError("cannot read %s: %s" % (fn, e))
        if not certs:
            raise CliError("%s holds no PEM certificate" % fn)
        parts += [("%s #%d" % (fn, i + 1), c) for i, c in enumerate(certs)]
    seen = set()
    text = []
    labels = []
    for label, pem in parts:
        der = ssl.PEM_cert_to_DER_cert(pem)
        if der in seen:
            continue
        seen.add(der)
        labels.append(label)
        text.append('# Label: "%s"\n%s\n' % (label, pem))
    return "".join(text), labels
