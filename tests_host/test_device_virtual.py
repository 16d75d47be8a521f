"""Device tests and the CLI's --port commands through real mpremote against the virtual
board (the unix port behind a pseudo-terminal, its flash in an image file)."""

import json
import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from claw_memory_cli import hosttools, main  # noqa: E402
from tools.virtual_board import VirtualBoard  # noqa: E402

DEV_ROOT = "/flash/cli"


def test_device_scripts_on_the_virtual_board():
    r = subprocess.run([sys.executable, "-m", "tools.device_test", "--virtual"], cwd=ROOT,
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stdout + r.stderr
    for step in ("dev_conversation.py: PASS", "soft-reset: ok", "dev_after_reboot.py: PASS",
                 "dev_inspect.py: PASS", "dev_cleanup.py: PASS"):
        assert step in r.stdout, r.stdout


@pytest.fixture(scope="module")
def board(tmp_path_factory):
    image = str(tmp_path_factory.mktemp("vb") / "board.img")
    with VirtualBoard(image, host_path=False) as b:
        assert main.main(["deploy", "--port", b.port, "--source"]) == 0
        code = ("import claw_memory\n"
                "m = claw_memory.open(%r, extract=False)\n"
                "sid = m.chats.session_id('web', 'u1')\n"
                "m.sessions.persist(sid, [(1, None, 'hello board')])\n"
                "m.sessions.persist(sid, [(2, None, 'hello host')], turn_completed=True)\n"
                "m.store.store('User owns an ESP32', 'hardware')\n"
                "m.close()\n"
                "print('SEEDED')\n") % DEV_ROOT
        r = subprocess.run([hosttools.find("mpremote"), "connect", b.port, "resume", "exec", code],
                           capture_output=True, text=True, timeout=60)
        assert "SEEDED" in r.stdout, r.stdout + r.stderr
        yield b


def _cli(capsys, *argv):
    rc = main.main(list(argv))
    cap = capsys.readouterr()
    return rc, cap.out, cap.err


def test_cli_reads_the_board(board, capsys):
    rc, out, err = _cli(capsys, "inspect", "--port", board.port, "--device-root", DEV_ROOT, "--json")
    assert rc == 0, err
    data = json.loads(out)
    assert data["root"] == "%s:%s" % (board.port, DEV_ROOT)
    assert [h["text"] for h in data["sessions"][0]["history"]] == ["hello board", "hello host"]
    assert [i["content"] for i in data["items"]] == ["User owns an ESP32"]
    rc, out, err = _cli(capsys, "stats", "--port", board.port, "--device-root", DEV_ROOT, "--json")
    assert rc == 0 and {l["layer"] for l in json.loads(out)["layers"]} >= {"sessions", "long-term"}
    rc, out, err = _cli(capsys, "verify", "--port", board.port, "--device-root", DEV_ROOT)
    assert rc == 0 and "nothing to repair" in out
    rc, out, err = _cli(capsys, "repair", "--port", board.port, "--device-root", DEV_ROOT, "--json")
    assert rc == 0 and json.loads(out)["repaired"] == []


def test_cli_export_and_import_with_the_board(board, capsys, tmp_path):
    bundle = str(tmp_path / "board.jsonl")
    rc, out, err = _cli(capsys, "export", "--port", board.port, "--device-root", DEV_ROOT, "-o", bundle)
    assert rc == 0, err
    rc, out, err = _cli(capsys, "import", bundle, "--port", board.port, "--device-root", "/flash/copy")
    assert rc == 0, err
    rc, out, err = _cli(capsys, "inspect", "--port", board.port, "--device-root", "/flash/copy", "--json")
    data = json.loads(out)
    assert [h["text"] for h in data["sessions"][0]["history"]] == ["hello board", "hello host"]
    rc, out, err = _cli(capsys, "import", bundle, "--port", board.port, "--device-root", "/flash/copy")
    assert rc == 1 and "--replace" in err
    rc, out, err = _cli(capsys, "import", bundle, "--port", board.port, "--device-root", "/flash/copy", "--replace")
    assert rc == 0, err
    r = subprocess.run([hosttools.find("mpremote"), "connect", board.port, "resume", "exec",
                        "import os; print(sorted(os.listdir('/flash/copy')))"], capture_output=True, text=True,
                       timeout=60)
    assert r.stdout.strip() == "['memory', 'sessions']", r.stdout


def test_cli_board_errors_are_clear(capsys):
    rc, out, err = _cli(capsys, "inspect", "--port", "/dev/nonexistent-board", "--device-root", "/")
    assert rc == 3 and "mpremote failed" in err


def test_deploy_installs_a_ca_bundle_the_clients_find(board, capsys):
    rc, out, err = _cli(capsys, "deploy", "--port", board.port, "--ca-only", "--ca-common")
    assert rc == 0, err
    assert "installed certs/ca.pem" in out and "8 root(s)" in out
    code = ("from claw_memory import certs\n"
            "p = certs._default_ca('openai')\n"
            "print('CA', p, sum(1 for _ in certs.ders(p)), certs.tls_context('https://x', p) is not None)\n")
    r = subprocess.run([hosttools.find("mpremote"), "connect", board.port, "resume", "exec", code],
                       capture_output=True, text=True, timeout=60)
    assert "CA /flash/certs/ca.pem 8 True" in r.stdout, r.stdout + r.stderr
