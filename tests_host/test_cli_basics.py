"""`claw-memory --version` and `claw-memory doctor`."""

import subprocess
import sys

import pytest

import claw_memory
from claw_memory_cli import hosttools, main


def test_version(capsys):
    try:
        main.main(["--version"])
    except SystemExit as e:
        assert e.code == 0
    assert capsys.readouterr().out.strip() == "claw-memory " + claw_memory.__version__


def test_doctor_reports_every_tool_with_versions(capsys, monkeypatch):
    monkeypatch.delenv("CLAW_PORT", raising=False)  # (a board would be surveyed too)
    rc = main.main(["doctor"])
    out = capsys.readouterr().out
    for tool in ("micropython", "mpy-cross", "mpremote", "esptool"):
        assert tool in out
    assert rc == 0, out
    assert "MicroPython" in out and "mpy-cross" in out


def test_doctor_says_what_is_missing(monkeypatch, capsys):
    monkeypatch.delenv("CLAW_PORT", raising=False)
    monkeypatch.setenv("MICROPYTHON", "/nonexistent/micropython")
    monkeypatch.setattr(hosttools, "find", lambda name, env=None: (
        "/nonexistent/micropython" if name == "micropython" else None))
    rc = main.main(["doctor"])
    out = capsys.readouterr().out
    assert rc == 1
    assert out.count("MISSING") == 4
    assert "tools/dev.py setup" in out


def test_console_script_runs():
    r = subprocess.run([sys.executable, "-m", "claw_memory_cli.main", "--version"],
                       capture_output=True, text=True)
    assert r.returncode == 0 and claw_memory.__version__ in r.stdout


def _all_actions(parser, path="claw-memory"):
    import argparse

    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from _all_actions(sub, path + " " + name)
        elif not isinstance(action, argparse._HelpAction):
            yield path, action


def test_every_option_and_argument_has_help():
    seen = 0
    for where, action in _all_actions(main.build_parser()):
        assert action.help, "%s %s has no help text" % (where, action.option_strings or action.dest)
        seen += 1
    assert seen > 50


def test_port_options_have_a_short_form_and_an_environment_variable():
    text = main.build_parser()._subparsers._group_actions[0].choices["inspect"].format_help()
    assert "-p PORT, --port PORT" in text and "CLAW_PORT" in text


def test_doctor_shows_the_unix_port_micropython_version(capsys, monkeypatch):
    monkeypatch.delenv("CLAW_PORT", raising=False)
    main.main(["doctor", "--json"])
    rows = {r["tool"]: r for r in __import__("json").loads(capsys.readouterr().out)}
    ver = rows["micropython"]["version"]
    assert ver.startswith("MicroPython 1.") and ".mpy 6." in ver, ver
    assert "3.4.0" not in ver
    assert rows["rich"]["version"].startswith("rich ")


def _big_root(tmp_path):
    mem = claw_memory.open(str(tmp_path / "root"), extract=False)
    for n in range(200):  # 180 KB of history in 5 sessions (each under the 150 KiB limit)
        mem.sessions.persist("chat:x:y:s%d" % (n % 5), [(1, None, "message %d " % n + "x" * 900)],
                             turn_completed=True)
    mem.close()
    return str(tmp_path / "root")


def test_a_closed_pipe_ends_quietly(tmp_path):
    root = _big_root(tmp_path)
    for args in (["inspect", root, "--json", "--last", "0"], ["export", root, "-o", "-"]):
        p = subprocess.Popen([sys.executable, "-m", "claw_memory_cli.main"] + args,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        p.stdout.readline()
        p.stdout.close()  # as `| head -1` does
        err = p.stderr.read().decode()
        p.wait(60)
        assert "Traceback" not in err and "BrokenPipe" not in err and not err, err
        assert p.returncode == 141, "not 1 (problems found): 128 + SIGPIPE, as cat or git"
    r = subprocess.run("set -o pipefail; cat /dev/zero | head -c 1 >/dev/null; echo $?", shell=True,
                       executable="bash", capture_output=True, text=True)
    assert r.stdout.strip() == "141", "what the usual tools give"


def test_rich_tables_on_a_terminal_plain_text_and_json_otherwise(tmp_path, capsys, monkeypatch):
    import json

    from claw_memory_cli import ui

    root = _big_root(tmp_path)
    assert main.main(["stats", root]) == 0
    plain = capsys.readouterr().out
    assert "== per layer" in plain and "\u2500" not in plain, "plain text into a pipe"
    monkeypatch.setattr(ui, "_tty", lambda stream: True)
    assert main.main(["stats", root]) == 0
    cap = capsys.readouterr()
    assert "\u2500" in cap.out and "== per layer" not in cap.out, "a rich table on a terminal"
    assert "sessions" in cap.out and "skills" in cap.out
    assert main.main(["stats", root, "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["layers"][0]["layer"] == "sessions", "--json stays JSON"


def test_progress_on_a_terminal_and_one_status_line_otherwise(capsys, monkeypatch):
    from claw_memory_cli import ui

    with ui.Progress(3000, "reading", nbytes=True, status="reading 2 files (2.9 KiB) from X") as bar:
        bar.step("a", 1000)
        bar.step("b", 2000)
        bar.done()
    err = capsys.readouterr().err
    assert err == "reading 2 files (2.9 KiB) from X\n"
    monkeypatch.setattr(ui, "_tty", lambda stream: True)
    with ui.Progress(3000, "reading", nbytes=True, status="reading 2 files (2.9 KiB) from X") as bar:
        bar.step("a", 1000)
        bar.step("b", 2000)
        bar.done()
    err = capsys.readouterr().err
    assert "reading 2 files" in err and "3.0/3.0 kB" in err and "\u2501" in err


def test_port_before_the_command_and_short_version(capsys, tmp_path):
    rc = main.main(["-p", "/dev/nonexistent-board", "inspect"])
    assert rc == 3 and "no board at /dev/nonexistent-board" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main.main(["-p", "/dev/a", "inspect", "-p", "/dev/b"])
    assert "two ports" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main.main(["-p", "/dev/a", "demo"])
    assert "demo takes no board" in capsys.readouterr().err
    with pytest.raises(SystemExit) as e:
        main.main(["-V"])
    assert e.value.code == 0 and capsys.readouterr().out.startswith("claw-memory ")


def test_counts_are_said_in_words(tmp_path, capsys):
    import claw_memory

    mem = claw_memory.open(str(tmp_path / "r"), extract=False)
    mem.sessions.persist(mem.chats.session_id("web", "u"), [(1, None, "hi")], turn_completed=True)
    mem.close()
    assert main.main(["export", str(tmp_path / "r"), "-o", str(tmp_path / "b.jsonl")]) == 0
    assert ": 1 session (1 record), 0 items, 1 chat map" in capsys.readouterr().out
