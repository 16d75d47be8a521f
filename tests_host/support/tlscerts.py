"""Throwaway certificates for the TLS tests, made at test time with `cryptography` (EC P-256,
valid from yesterday for 30 days), so that nothing long-lived is committed:

- `ca` (PEM) / `ca_der`: the test CA;
- `server_cert` + `server_key`: signed by it, for 127.0.0.1 and localhost;
- `other_cert` + `other_key`: signed by it, for other.example only (wrong host name);
- `wrong_ca`: another CA that signed nothing here;
- `evil_cert` + `evil_key`: self-signed, CN=evil.example.
"""

import datetime
import ipaddress
import os
import ssl
import types

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID


def _name(cn):
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, cn)])


def _cert(subject, key, issuer, issuer_key, ca=False, sans=()):
    now = datetime.datetime.now(datetime.timezone.utc)
    b = (
        x509.CertificateBuilder()
        .subject_name(_name(subject))
        .issuer_name(_name(issuer))
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(days=1))
        .not_valid_after(now + datetime.timedelta(days=30))
        .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True)
    )
    if sans:
        b = b.add_extension(x509.SubjectAlternativeName(list(sans)), critical=False)
    return b.sign(issuer_key, hashes.SHA256())


def _key():
    return ec.generate_private_key(ec.SECP256R1())


def make(directory):
    """Write the certificates into `directory`; returns their paths as attributes."""
    ca_key, wrong_key, server_key, other_key, evil_key = (_key() for _ in range(5))
    ca = _cert("claw test CA", ca_key, "claw test CA", ca_key, ca=True)
    files = {
        "ca": ca,
        "wrong_ca": _cert("wrong CA", wrong_key, "wrong CA", wrong_key, ca=True),
        "server_cert": _cert(
            "localhost", server_key, "claw test CA", ca_key,
            sans=[x509.DNSName("localhost"), x509.IPAddress(ipaddress.ip_address("127.0.0.1"))],
        ),
        "other_cert": _cert("other.example", other_key, "claw test CA", ca_key,
                            sans=[x509.DNSName("other.example")]),
        "evil_cert": _cert("evil.example", evil_key, "evil.example", evil_key, ca=True,
                           sans=[x509.DNSName("evil.example")]),
    }
    out = {}
    for name, cert in files.items():
        out[name] = os.path.join(directory, name + ".pem")
        with open(out[name], "wb") as f:
            f.write(cert.public_bytes(serialization.Encoding.PEM))
    out["ca_der"] = os.path.join(directory, "ca.der")
    with open(out["ca_der"], "wb") as f:
        f.write(ca.public_bytes(serialization.Encoding.DER))
    for name, key in (("server_key", server_key), ("other_key", other_key), ("evil_key", evil_key)):
        out[name] = os.path.join(directory, name + ".pem")
        with open(out[name], "wb") as f:
            f.write(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                      serialization.NoEncryption()))
    return types.SimpleNamespace(**out)


def server_context(cert, key):
    """A server-side SSLContext for LLMServer(ssl=...)."""
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(cert, key)
    return ctx


def damaged(pem):
    """The first certificate of these PEM bytes with one base64 character gone: its base64
    is cut (binascii's "incorrect padding"), as one damaged block of a CA bundle."""
    lines = pem.split(b"\n")
    i = [ln.strip() for ln in lines].index(b"-----BEGIN CERTIFICATE-----") + 2
    lines[i] = lines[i][1:]
    return b"\n".join(lines)


def bad_bundle(good):
    """A CA bundle of PEM bytes: a damaged block (bad base64), a block of valid base64 that is
    no certificate, the certificates of `good`, then a block cut short (no END line). The
    blocks start at lines 1, 4 and 7 and after `good`."""
    junk = b"-----BEGIN CERTIFICATE-----\naGVsbG8gd29ybGQ=\n-----END CERTIFICATE-----\n"
    cut = b"-----BEGIN CERTIFICATE-----\nMIIB\n"
    head = b"-----BEGIN CERTIFICATE-----\nQUJD\nUJD\n-----END CERTIFICATE-----\n"
    return head + junk + good.rstrip(b"\n") + b"\n" + cut
