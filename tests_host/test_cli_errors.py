"""Every CLI error is one line on stderr (`claw-memory: ...`) with a documented exit code (1
failed or no data root, 2 usage, 3 a tool or board missing), never a traceback: every
subcommand against a file, a missing path, an unwritable output and a missing @file."""

import os
import subprocess
import sys

import pytest

import claw_memory
from claw_memory_cli import main

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CODES = (1, 2, 3)


def _cli(*argv, cwd=None):
    env = dict(os.environ)
    env.pop("CLAW_PORT", None)
    return subprocess.run([sys.executable, "-m", "claw_memory_cli.main"] + list(argv), cwd=cwd,
                          env=env, capture_output=True, text=True, timeout=120,
                          stdin=subprocess.DEVNULL)


@pytest.fixture(scope="module")
def paths(tmp_path_factory):
    base = tmp_path_factory.mktemp("errors")
    f = base / "a_file.txt"
    f.write_text("not a data root\n")
    root = base / "root"
    mem = claw_memory.open(str(root), extract=False)
    mem.sessions.persist(mem.chats.session_id("web", "u"), [(1, None, "hi")], turn_completed=True)
    mem.close()
    bundle = base / "b.jsonl"
    assert _cli("export", str(root), "-o", str(bundle)).returncode == 0
    ro = base / "readonly"
    ro.mkdir()
    os.chmod(str(ro), 0o500)
    return {"file": str(f), "missing": str(base / "no" / "such"), "root": str(root),
            "bundle": str(bundle), "nofile": str(base / "nofile.txt"), "ro": str(ro), "base": str(base)}


def _cases(p):
    f, miss, root, bundle, ro = p["file"], p["missing"], p["root"], p["bundle"], p["ro"]
    unwritable = os.path.join(f, "out.jsonl")  # below a file: not writable, even for root
    cases = []
    for cmd in ("init", "inspect", "stats", "context", "verify", "repair", "wipe", "export", "import"):
        extra = {"export": ["-o", os.path.join(p["base"], "x.jsonl")], "wipe": ["--yes"]}.get(cmd, [])
        for what, path in (("a file", f), ("a missing path", miss)):
            if cmd == "import":
                cases.append(("import, bundle is %s" % what, ["import", path, os.path.join(p["base"], "t")]))
                cases.append(("import, target is %s" % what, ["import", bundle, path if what == "a file"
                                                              else os.path.join(f, "t")]))
            elif not (cmd == "init" and what == "a missing path"):  # init creates a missing one
                cases.append(("%s on %s" % (cmd, what), [cmd, path] + extra))
    cases += [
        ("export below a file", ["export", root, "-o", unwritable]),
        ("export to a missing folder", ["export", root, "-o", os.path.join(miss, "b.jsonl")]),
        ("export to a read-only folder", ["export", root, "-o", os.path.join(ro, "b.jsonl")]),
        ("export onto a folder", ["export", root, "-o", ro]),
        ("init in a read-only folder", ["init", os.path.join(ro, "new")]),
        ("init below a file", ["init", os.path.join(f, "new")]),
        ("import below a file", ["import", bundle, os.path.join(f, "new")]),
        ("context with a missing @file", ["context", root, "--system", "@" + p["nofile"]]),
        ("context with a folder as @file", ["context", root, "--system", "@" + ro]),
        ("context, unknown session", ["context", root, "--session", "nosuch"]),
        ("search, unknown session", ["search", root, "kiwi", "--session", "nosuch"]),
        ("flash a missing image", ["flash", miss, "--dry-run"]),
        ("flash a file that is no image", ["flash", f, "--dry-run"]),
        ("deploy to a file as port", ["deploy", "-p", f]),
        ("deploy to a missing port", ["deploy", "-p", miss]),
        ("doctor with a missing port", ["doctor", "-p", miss]),
        ("inspect a missing port", ["inspect", "-p", miss]),
        ("demo kept in a file", ["demo", "--keep", f]),
        ("import into a file as port", ["import", bundle, "-p", f]),
        ("why on a file", ["why", f, "mem-1"]),
        ("why on a missing path", ["why", miss, "mem-1"]),
        ("why without an id", ["why", root]),
        ("why of an id the records do not hold", ["why", root, "mem-1-0001"]),
    ]
    return cases


def test_every_subcommand_fails_with_one_line_and_a_documented_code(paths, capsys, monkeypatch):
    monkeypatch.delenv("CLAW_PORT", raising=False)
    root_user = os.geteuid() == 0  # root writes into a read-only folder: those cases succeed
    bad = []
    for name, argv in _cases(paths):
        try:
            rc = main.main(argv)
        except BaseException as e:  # noqa: BLE001 -- a traceback is what the test looks for
            rc, err = None, ["%s: %s" % (type(e).__name__, e)]
        else:
            err = capsys.readouterr().err.strip().splitlines()
        if rc not in CODES or len(err) != 1 or not err[0].startswith("claw-memory: "):
            if not (rc == 0 and root_user and "read-only" in name):
                bad.append("%s: exit %s, stderr %r" % (name, rc, err))
    assert not bad, "\n".join(bad)


def test_doctor_takes_the_board_from_claw_port(paths, capsys, monkeypatch):
    # As every board command: $CLAW_PORT names the board when -p does not. (Before, doctor
    # said all was well with a board that was not there.)
    monkeypatch.setenv("CLAW_PORT", paths["missing"])
    rc = main.main(["doctor"])
    err = capsys.readouterr().err.strip().splitlines()
    assert rc in CODES and rc != 0 and len(err) == 1 and paths["missing"] in err[0], (rc, err)


def test_the_console_script_says_it_in_one_line_too(paths):
    r = _cli("export", paths["root"], "-o", os.path.join(paths["file"], "b.jsonl"))
    assert r.returncode == 1 and r.stderr.count("\n") == 1 and r.stderr.startswith("claw-memory: ")
    assert "cannot write the bundle to %s" % os.path.join(paths["file"], "b.jsonl") in r.stderr


def test_errors_name_the_users_path_and_the_cli_command(paths, capsys):
    root = paths["root"]
    assert main.main(["context", root, "--session", "nosuch"]) == 1
    err = capsys.readouterr().err
    assert err == "claw-memory: no session 'nosuch' in %s (`claw-memory inspect %s` lists them)\n" % (
        root, root), err
    assert "tmp" not in err.replace(paths["base"], "") and "inspect.sessions()" not in err
    # (a search of a session that is not there: not "(none)", which reads as no match)
    assert main.main(["search", root, "kiwi", "--session", "nosuch"]) == 1
    assert capsys.readouterr().err == err


def test_a_file_the_reading_commands_cannot_read_is_named_in_the_users_root(tmp_path, capsys):
    # export named the temporary copy it read (/tmp/claw-export-...), not the user's file
    root = tmp_path / "root"
    mem = claw_memory.open(str(root), extract=False)
    sid = mem.chats.session_id("web", "u")
    mem.sessions.persist(sid, [(1, None, "hi")], turn_completed=True)
    log = mem.sessions.path(sid)
    mem.close()
    os.remove(log)
    os.mkdir(log)  # a session file that cannot be read
    want = os.path.join(str(root), "sessions", os.path.basename(log))
    for argv in (["inspect", str(root)], ["stats", str(root)],
                 ["export", str(root), "-o", str(tmp_path / "b.jsonl")]):
        assert main.main(argv) == 1, argv
        err = capsys.readouterr().err
        assert err.startswith("claw-memory: ") and want in err and "claw-" not in err[13:], (argv, err)
    records = root / "memory" / "memory_records.jsonl"
    os.mkdir(records)  # and the store's journal
    for cmd in ("inspect", "verify", "repair"):
        assert main.main([cmd, str(root)]) == 1, cmd
        err = capsys.readouterr().err
        assert str(records) in err and "claw-" not in err[13:], (cmd, err)


def test_demo_against_an_endpoint_that_does_not_answer_stops_at_once(tmp_path, monkeypatch, capsys):
    import socket

    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()  # nothing listens there: connection refused, as without network
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    rc = main.main(["demo", "--llm", "openai", "--base-url", "http://127.0.0.1:%d/v1" % port,
                    "--model", "m", "--keep", str(tmp_path)])
    cap = capsys.readouterr()
    assert rc == 1, cap.err
    err = cap.err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("claw-memory: the demo stopped: openai at http://127.0.0.1")
    assert cap.out.count("[Ada]") == 1, "the first turn that fails ends it"
