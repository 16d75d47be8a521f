"""Device tests and the CLI's --port commands through real mpremote against the virtual
board (the unix port behind a pseudo-terminal, its flash in an image file)."""

import json
import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

import claw_memory  # noqa: E402
import claw_memory.session  # noqa: E402
from claw_memory_cli import hosttools, main  # noqa: E402
from tools.virtual_board import VirtualBoard  # noqa: E402

DEV_ROOT = "/flash/cli"
pytestmark = pytest.mark.slow  # deploys and device scripts over a serial link: the slow tier


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


def _mp(board, code):
    r = subprocess.run([hosttools.find("mpremote"), "connect", board.port, "resume", "exec", code],
                       capture_output=True, text=True, timeout=60)
    return r.stdout.replace("\r\n", "\n")


def test_cli_reads_the_board(board, capsys):
    rc, out, err = _cli(capsys, "inspect", "--port", board.port, "--device-root", DEV_ROOT, "--json")
    assert rc == 0, err
    data = json.loads(out)
    assert data["root"] == "%s:%s" % (board.port, DEV_ROOT)
    assert data["sessions"][0]["id"] == "chat:web:u1:default_01"
    assert [h["text"] for h in data["sessions"][0]["history"]] == ["hello board", "hello host"]
    assert [i["content"] for i in data["items"]] == ["User owns an ESP32"]
    # the board transfer says what it does (one status line when not on a terminal)
    assert "reading 11 files" in err and "from %s:%s" % (board.port, DEV_ROOT) in err, err
    rc, out, err = _cli(capsys, "stats", "-p", board.port, "--device-root", DEV_ROOT, "--json")
    data = json.loads(out)
    assert rc == 0 and {l["layer"] for l in data["layers"]} >= {"sessions", "long-term"}
    assert [s["id"] for s in data["sessions"]] == ["chat:web:u1:default_01"]
    rc, out, err = _cli(capsys, "verify", "--port", board.port, "--device-root", DEV_ROOT)
    assert rc == 0 and "nothing to repair" in out
    rc, out, err = _cli(capsys, "repair", "--port", board.port, "--device-root", DEV_ROOT, "--json")
    assert rc == 0 and json.loads(out)["repaired"] == []


def test_claw_port_names_the_board(board, capsys, monkeypatch):
    monkeypatch.setenv("CLAW_PORT", board.port)
    rc, out, err = _cli(capsys, "inspect", "--device-root", DEV_ROOT, "--json")
    assert rc == 0, err
    assert json.loads(out)["root"] == "%s:%s" % (board.port, DEV_ROOT)
    rc, out, err = _cli(capsys, "export", "--device-root", DEV_ROOT, "-o", "-")
    assert rc == 0 and json.loads(out.splitlines()[0])["type"] == "header"


def test_cli_export_and_import_with_the_board(board, capsys, tmp_path):
    bundle = str(tmp_path / "board.jsonl")
    rc, out, err = _cli(capsys, "export", "--port", board.port, "--device-root", DEV_ROOT, "-o", bundle)
    assert rc == 0, err
    rc, out, err = _cli(capsys, "import", bundle, "--port", board.port, "--device-root", "/flash/copy")
    assert rc == 0, err
    assert "writing" in err and "/flash/copy" in err, err
    rc, out, err = _cli(capsys, "inspect", "--port", board.port, "--device-root", "/flash/copy", "--json")
    data = json.loads(out)
    assert [h["text"] for h in data["sessions"][0]["history"]] == ["hello board", "hello host"]
    rc, out, err = _cli(capsys, "import", bundle, "--port", board.port, "--device-root", "/flash/copy")
    assert rc == 1 and "--replace" in err
    rc, out, err = _cli(capsys, "import", bundle, "--port", board.port, "--device-root", "/flash/copy", "--replace")
    assert rc == 0, err
    assert _mp(board, "import os; print(sorted(os.listdir('/flash/copy')))").strip() == "['memory', 'search', 'sessions']"


def test_board_commands_that_remove_files_refuse_a_root_with_the_users_files(board, capsys, tmp_path):
    bundle = str(tmp_path / "b.jsonl")
    assert _cli(capsys, "export", "--port", board.port, "--device-root", DEV_ROOT, "-o", bundle)[0] == 0
    root = "/flash/mine"
    assert _cli(capsys, "init", "-p", board.port, "--device-root", root)[0] == 0
    _mp(board, "f = open(%r, 'w'); f.write('mine'); f.close()" % (root + "/memory/notes.txt"))
    ls = "import os; print(sorted(os.listdir(%r)), sorted(os.listdir(%r)))" % (root + "/memory", root + "/sessions")
    before = _mp(board, ls)
    assert "notes.txt" in before
    for argv in (["import", bundle, "--replace"], ["wipe", "--yes"]):
        rc, out, err = _cli(capsys, *argv[:1], *argv[1:], "-p", board.port, "--device-root", root)
        assert rc == 1 and "memory/notes.txt is not claw_memory's" in err, (argv, err)
    assert _mp(board, ls) == before, "nothing deleted"


def test_verify_and_repair_agree_on_the_board(board, capsys):
    root = "/flash/damaged"
    rc, out, err = _cli(capsys, "init", "-p", board.port, "--device-root", root)
    assert rc == 0 and "created a full data root at %s:%s" % (board.port, root) in out, err
    out = _mp(board, (
        "import claw_memory\n"
        "m = claw_memory.open(%r, extract=False)\n"
        "for n in range(3):\n"
        "    m.sessions.persist('chat:a:b:default_01', [(1, None, 'q%%d' %% n)])\n"
        "    m.sessions.persist('chat:a:b:default_01', [(2, None, 'a%%d' %% n)], turn_completed=True)\n"
        "m.store.store('User has a dog', 'pets')\n"
        "m.close()\n"
        "with open(%r, 'w') as f:\n    f.write('{not json')\n"
        "f = open(%r, 'ab'); f.write(b'\\x01\\x02\\x03'); f.close()\n"
        "print('DAMAGED')") % (root, root + "/memory/memory_index.json",
                               root + "/sessions/" + claw_memory.session.file_name("chat:a:b:default_01") + ".idx"))
    assert "DAMAGED" in out, out
    rc, out, err = _cli(capsys, "verify", "-p", board.port, "--device-root", root, "--json")
    problems = json.loads(out)["problems"]
    assert rc == 1 and len(problems) == 2, problems
    assert any("memory_index.json: corrupt" in p for p in problems)
    assert any(p.endswith(".idx: rewritten by repair (a torn or extra index entry)") for p in problems)
    rc, out, err = _cli(capsys, "repair", "-p", board.port, "--device-root", root, "--json")
    data = json.loads(out)
    assert rc == 0 and data["repaired"] == problems and data["not_repaired"] == [], data
    rc, out, err = _cli(capsys, "verify", "-p", board.port, "--device-root", root)
    assert rc == 0 and "nothing to repair" in out


def test_wipe_on_the_board(board, capsys):
    root = "/flash/towipe"
    assert _cli(capsys, "init", "-p", board.port, "--device-root", root)[0] == 0
    _mp(board, "import claw_memory\nm = claw_memory.open(%r, extract=False)\n"
               "m.sessions.persist(m.chats.session_id('w', 'x'), [(1, None, 'hi')], turn_completed=True)\n"
               "m.close()" % root)
    rc, out, err = _cli(capsys, "wipe", "-p", board.port, "--device-root", root, "--layer", "sessions")
    assert rc == 2 and "pass --yes" in err
    rc, out, err = _cli(capsys, "wipe", "-p", board.port, "--device-root", root, "--layer", "sessions", "--yes")
    assert rc == 0 and "wiped the sessions layer of %s:%s: 4 files" % (board.port, root) in out, out
    assert _mp(board, "import os; print(os.listdir(%r))" % (root + "/sessions")).strip() == "[]"
    assert _mp(board, "import os; print(os.listdir(%r))" % (root + "/search")).strip() == "[]"
    rc, out, err = _cli(capsys, "wipe", "-p", board.port, "--device-root", root, "-y")
    assert rc == 0 and "wiped every layer" in out
    assert _mp(board, "import os; print(sorted(os.listdir(%r)), os.listdir(%r))" % (
        root, root + "/memory")).strip() == "['memory', 'search', 'sessions'] []"


def test_a_memory_kept_open_on_the_board_sees_what_board_commands_changed(board, capsys):
    # A memory the board's program keeps open takes its sessions' files as it checked them
    # until the library writes; the CLI's board commands write and remove with plain file
    # calls in the same interpreter, so they move the library's count themselves: the open
    # memory then sees the wiped session, neither its old turns nor an I/O error.
    root = "/flash/kept"
    assert _cli(capsys, "init", "-p", board.port, "--device-root", root)[0] == 0
    out = _mp(board, "import claw_memory\nKEPT = claw_memory.open(%r, extract=False)\n"
                     "SID = KEPT.chats.session_id('w', 'x')\n"
                     "KEPT.sessions.persist(SID, [(1, None, 'hi'), (2, None, 'yo')], turn_completed=True)\n"
                     "print(len(KEPT.sessions.messages(SID)))" % root)
    assert out.strip() == "2", out
    rc, out, err = _cli(capsys, "wipe", "-p", board.port, "--device-root", root, "--layer", "sessions", "--yes")
    assert rc == 0, err
    out = _mp(board, "print(KEPT.sessions.messages(SID))\n"
                     "KEPT.sessions.persist(SID, [(1, None, 'again')], turn_completed=True)\n"
                     "print([m['content'] for m in KEPT.sessions.messages(SID)])\nKEPT.close()")
    assert out.split("\n")[:2] == ["[]", "['again']"], out


def test_cli_board_errors_are_clear(board, capsys):
    # a port that does not exist
    rc, out, err = _cli(capsys, "inspect", "--port", "/dev/nonexistent-board", "--device-root", "/")
    assert rc == 3 and "no board at /dev/nonexistent-board: that serial port does not exist" in err
    # a port another program holds
    import serial

    with serial.Serial(board.port, exclusive=True):
        rc, out, err = _cli(capsys, "inspect", "-p", board.port, "--device-root", DEV_ROOT)
    assert rc == 3 and "cannot open %s: it is in use by another program" % board.port in err, err
    # a device root that is not there, or is not a data root
    rc, out, err = _cli(capsys, "inspect", "-p", board.port, "--device-root", "/flash/nope")
    assert rc == 1 and "no data root at %s:/flash/nope: no such folder on the board" % board.port in err
    assert "claw-memory init -p %s --device-root /flash/nope" % board.port in err
    rc, out, err = _cli(capsys, "stats", "-p", board.port, "--device-root", "/flash/lib")
    assert rc == 1 and "no data root at %s:/flash/lib: it has no sessions/ or memory/" % board.port in err
    rc, out, err = _cli(capsys, "repair", "-p", board.port, "--device-root", "/flash/nope")
    assert rc == 1 and "no data root" in err
    assert "nope" not in _mp(board, "import os; print(os.listdir('/flash'))"), "nothing created"


def test_a_board_without_the_library(tmp_path, capsys):
    with VirtualBoard(str(tmp_path / "bare.img"), host_path=False) as bare:
        rc, out, err = _cli(capsys, "inspect", "-p", bare.port)
        assert rc == 3, err
        assert "claw_memory is not installed (or not completely) on the board at %s" % bare.port in err
        assert "claw-memory deploy -p %s" % bare.port in err
        rc, out, err = _cli(capsys, "init", "-p", bare.port, "--device-root", "/flash/x")
        assert rc == 3 and "claw-memory deploy" in err
        rc, out, err = _cli(capsys, "doctor", "-p", bare.port)
        assert rc == 1 and "MISSING  board        claw_memory does not import on %s" % bare.port in out
        assert "`claw-memory deploy -p %s`" % bare.port in out and "WARNING" not in out
        # reading a data root does not need the library on the board
        _mp(bare, "import os\nos.mkdir('/flash/r')\nos.mkdir('/flash/r/sessions')")
        rc, out, err = _cli(capsys, "inspect", "-p", bare.port, "--device-root", "/flash/r", "--json")
        assert rc == 0 and json.loads(out)["sessions"] == []


def _lib(board):
    out = _mp(board, "import os\n"
                     "def w(p, r):\n"
                     "    for e in os.ilistdir(p):\n"
                     "        if e[1] & 0x4000:\n"
                     "            w(p + '/' + e[0], r + e[0] + '/')\n"
                     "        else:\n"
                     "            print(r + e[0])\n"
                     "w('lib/claw_memory', '')")
    return sorted(out.split())


def test_deploy_replaces_the_package(board, capsys, monkeypatch):
    py = sorted(m[len("claw_memory/"):] for m in hosttools.package_modules())
    assert _lib(board) == py, "the fixture deployed the sources"
    # a previous layout: flat modules where the packages are now, and a stray file
    _mp(board, "for n in ('session.py', 'store.py', 'old_module.mpy'):\n"
               "    open('lib/claw_memory/' + n, 'w').write('VALUE = 1\\n')\n"
               "open('lib/claw_memory.py', 'w').write('x = 1\\n')")
    rc, out, err = _cli(capsys, "deploy", "-p", board.port, "--json")
    assert rc == 0, err
    data = json.loads(out)
    assert data["method"] == "mpy" and data["version"] == claw_memory.__version__
    assert data["file"].endswith("lib/claw_memory/__init__.mpy")
    assert _lib(board) == [m[:-3] + ".mpy" for m in py], "exactly the deployed set: no .py, no old layout"
    assert "writing 37 files" in err or "writing %d files" % len(py) in err
    assert "claw_memory.py" not in _mp(board, "import os; print(os.listdir('lib'))")
    # the check reads the version back: a board that does not run the deployed one fails
    monkeypatch.setattr(claw_memory, "__version__", "9.9.9")
    rc, out, err = _cli(capsys, "deploy", "-p", board.port, "--source")
    assert rc == 1 and "the board runs claw_memory 0.1.0, not the deployed 9.9.9" in err, err
    assert _lib(board) == py, "--source after .mpy: only the .py files"


def test_deploy_with_mip_removes_what_mip_did_not_install(board, capsys, monkeypatch):
    # mpremote mip needs the network for aiohttp: stand in for it. Like mip, the stand-in
    # overwrites the files of package.json (here they are already there) and names each one.
    from claw_memory_cli import deploy

    py = sorted(m[len("claw_memory/"):] for m in hosttools.package_modules())
    assert _lib(board) == py
    _mp(board, "open('lib/claw_memory/session.py', 'w').write('OLD = 1\\n')\n"
               "open('lib/claw_memory/store/old.mpy', 'w').write('')")
    calls = []

    def fake_mip(port, *args, timeout=120):
        calls.append(args)
        return "Installing %s to /flash/lib\n" % args[-1] + "".join(
            "Installing: /flash/lib/claw_memory/%s\n" % m for m in py) + "Installing: /flash/lib/aiohttp/__init__.py\n"

    monkeypatch.setattr(deploy.board, "run", fake_mip)
    rc, out, err = _cli(capsys, "deploy", "-p", board.port, "--mip", "--json")
    assert rc == 0, err
    assert calls == [("mip", "install", os.path.join(ROOT, "package.json"))]
    data = json.loads(out)
    assert data["method"] == "mip" and data["version"] == claw_memory.__version__
    assert _lib(board) == py, "the old layout's files are gone"


def test_deploy_installs_a_ca_bundle_the_clients_find(board, capsys):
    rc, out, err = _cli(capsys, "deploy", "-p", board.port, "--ca-only", "--ca-common")
    assert rc == 0, err
    assert "installed certs/ca.pem" in out and "8 root(s)" in out
    code = ("from claw_memory.llm import certs\n"
            "p = certs._default_ca('openai')\n"
            "print('CA', p, sum(1 for _ in certs.ders(p)), certs.tls_context('https://x', p) is not None)\n")
    r = subprocess.run([hosttools.find("mpremote"), "connect", board.port, "resume", "exec", code],
                       capture_output=True, text=True, timeout=60)
    assert "CA /flash/certs/ca.pem 8 True" in r.stdout, r.stdout + r.stderr


def test_doctor_warns_of_a_py_beside_its_mpy_and_deploy_removes_it(board, capsys, tmp_path):
    # A mip install over a deployed .mpy set writes .py files beside the .mpy ones, and
    # MicroPython imports the .py: doctor -p says so, the next deploy makes the set exact again.
    mpy = sorted(m[len("claw_memory/"):-3] + ".mpy" for m in hosttools.package_modules())
    assert _cli(capsys, "deploy", "-p", board.port)[0] == 0
    assert _lib(board) == mpy
    rc, out, err = _cli(capsys, "doctor", "-p", board.port)
    assert rc == 0 and "WARNING" not in out, out + err
    assert "claw_memory %s from /flash/lib/claw_memory/__init__.mpy (%s)" % (
        claw_memory.__version__, board.port) in out
    r = subprocess.run([hosttools.find("mpremote"), "connect", board.port, "mip", "install",
                        os.path.join(ROOT, "package-lite.json")], cwd=str(tmp_path),
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    with open(os.path.join(ROOT, "package-lite.json")) as f:
        lite = sorted(u[0][len("claw_memory/"):] for u in json.load(f)["urls"])
    assert _lib(board) == sorted(mpy + lite), "mip wrote the LITE .py files beside the .mpy"
    rc, out, err = _cli(capsys, "doctor", "-p", board.port)
    assert rc == 1, out
    for f in lite:
        assert "WARNING  /flash/lib/claw_memory/%s is beside /flash/lib/claw_memory/%s.mpy" % (
            f, f[:-3]) in out, out
    assert out.count("WARNING") == len(lite)
    assert "%d module(s) on %s shadow their .mpy" % (len(lite), board.port) in out
    assert "claw_memory %s from /flash/lib/claw_memory/__init__.py" % claw_memory.__version__ in out
    rc, out, err = _cli(capsys, "doctor", "-p", board.port, "--json")
    row = [r for r in json.loads(out) if r["tool"] == "board"][0]
    assert rc == 1 and len(row["shadowed"]) == len(lite) and row["file"].endswith("__init__.py")
    assert _cli(capsys, "deploy", "-p", board.port)[0] == 0
    assert _lib(board) == mpy, "the deploy removed every .py the mip install left"
    rc, out, err = _cli(capsys, "doctor", "-p", board.port)
    assert rc == 0 and "WARNING" not in out and "__init__.mpy" in out, out
    assert _cli(capsys, "deploy", "-p", board.port, "--source")[0] == 0  # as the fixture left it
