"""The CA bundle for the board (`claw-memory deploy --ca-common / --ca-for / --ca`), from
certifi's roots, and `claw-memory demo --llm openai_responses` against a loopback server."""

import json
import ssl

import certifi
import pytest

import tlscerts
from llm_server import LLMServer

from claw_memory.llm import certs as mcerts
from claw_memory_cli import board, cabundle, main
from claw_memory_cli.ui import CliError


@pytest.fixture(scope="module")
def certs(tmp_path_factory):
    return tlscerts.make(str(tmp_path_factory.mktemp("certs")))


def _ders(text):
    return [ssl.PEM_cert_to_DER_cert(p) for p in cabundle.pem_certs(text)]


def test_common_roots_come_from_certifi_and_load(tmp_path):
    text = cabundle.bundle(cabundle.COMMON_ROOTS)
    assert len(_ders(text)) == len(cabundle.COMMON_ROOTS) == 8
    assert len(text) < 16384
    for name in cabundle.COMMON_ROOTS:
        assert '# Label: "%s"\n-----BEGIN CERTIFICATE-----' % name in text
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    ctx.load_verify_locations(cadata=text)
    assert ctx.cert_store_stats()["x509_ca"] == 8
    # the board's reader gets the same certificates
    p = tmp_path / "ca.pem"
    p.write_text(text)
    assert list(mcerts.ders(str(p))) == _ders(text)
    with pytest.raises(CliError, match="not in the CA store: Nope Root"):
        cabundle.bundle(["ISRG Root X1", "Nope Root"])
    assert len(cabundle.roots()) > 100 and cabundle.certifi_path() == certifi.where()


def test_the_boards_reader_skips_what_is_not_a_certificate(tmp_path):
    # comments, a stray END line without its BEGIN, blank lines: only the certificates count
    text = cabundle.bundle(["ISRG Root X1", "ISRG Root X2"])
    messy = "# a hand-edited bundle\n-----END CERTIFICATE-----\n\n" + text + "\n-----END CERTIFICATE-----\n"
    p = tmp_path / "messy.pem"
    p.write_text(messy)
    assert list(mcerts.ders(str(p))) == _ders(text)
    assert list(mcerts.ders(messy.encode())) == _ders(text)


def _store(tmp_path, certs):
    """certifi's roots plus the test CA."""
    store = tmp_path / "store.pem"
    with open(certifi.where()) as f, open(certs.ca) as g:
        store.write_text(f.read() + '\n# Label: "claw test CA"\n' + g.read())
    return str(store)


def test_root_for_a_host_is_the_anchor_of_its_verified_chain(tmp_path, certs):
    store = _store(tmp_path, certs)
    good = tlscerts.server_context(certs.server_cert, certs.server_key)
    evil = tlscerts.server_context(certs.evil_cert, certs.evil_key)
    with LLMServer(ssl=good) as srv, LLMServer(ssl=evil) as bad:
        label, pem = cabundle.root_for("127.0.0.1:%d" % srv.port, store)
        assert label == "claw test CA"
        with open(certs.ca) as f:
            assert _ders(pem) == _ders(f.read())
        with pytest.raises(CliError, match="cannot verify 127.0.0.1:%d" % bad.port):
            cabundle.root_for("127.0.0.1:%d" % bad.port, store)
        with pytest.raises(CliError, match="cannot verify"):
            cabundle.root_for("127.0.0.1:%d" % srv.port)  # certifi alone: test CA unknown
        text, labels = cabundle.build(True, ["127.0.0.1:%d" % srv.port], [certs.ca], store)
    assert labels == list(cabundle.COMMON_ROOTS) + ["claw test CA"]  # the file's copy: a duplicate
    assert len(_ders(text)) == 9


def test_build_reads_files_and_refuses_bad_ones(tmp_path, certs):
    text, labels = cabundle.build(files=[certs.ca, certs.wrong_ca])
    assert labels == ["%s #1" % certs.ca, "%s #1" % certs.wrong_ca] and len(_ders(text)) == 2
    empty = tmp_path / "empty.pem"
    empty.write_text("nothing here")
    with pytest.raises(CliError, match="holds no PEM certificate"):
        cabundle.build(files=[str(empty)])
    with pytest.raises(CliError, match="cannot read"):
        cabundle.build(files=[str(tmp_path / "missing.pem")])


def test_deploy_ca_only_installs_the_bundle(monkeypatch, capsys, certs):
    from claw_memory_cli import deploy

    installed = []
    monkeypatch.setattr(deploy, "_install_ca", lambda port, text: installed.append((port, text)))
    monkeypatch.setattr(board, "Board", lambda port: pytest.fail("the package must not be deployed"))
    rc = main.main(["deploy", "--port", "P", "--ca-only", "--ca-common", "--ca", certs.ca, "--json"])
    out = json.loads(capsys.readouterr().out)
    assert rc == 0
    assert out.get("method") is None and out["ca"]["path"] == "certs/ca.pem"
    assert out["ca"]["roots"] == list(cabundle.COMMON_ROOTS) + ["%s #1" % certs.ca]
    assert [p for p, _ in installed] == ["P"] and len(_ders(installed[0][1])) == 9
    assert main.main(["deploy", "--port", "P", "--ca-only"]) == 2
    assert "--ca-only needs" in capsys.readouterr().err


def test_demo_accepts_openai_responses(monkeypatch, tmp_path, capsys):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    assert main.main(["demo", "--llm", "openai_responses"]) == 1
    assert "set OPENAI_API_KEY" in capsys.readouterr().err
    monkeypatch.setenv("OPENAI_API_KEY", "sk-demo")
    with LLMServer() as srv:
        srv.fallback = LLMServer.spec_reply('{"intent":"none","memories":[]}')
        rc = main.main(["demo", "--llm", "openai_responses", "--base-url", srv.openai_url,
                        "--model", "m", "--keep", str(tmp_path / "demo")])
    out = capsys.readouterr().out
    assert rc == 0, out
    assert "openai_responses at %s" % srv.openai_url in out
    assert srv.requests and {r.path for r in srv.requests} == {"/v1/responses"}
    assert all(r.headers["authorization"] == "Bearer sk-demo" for r in srv.requests)
