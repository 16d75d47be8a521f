"""`claw-memory --version` and `claw-memory doctor`."""

import subprocess
import sys

import claw_memory
from claw_memory_cli import hosttools, main


def test_version(capsys):
    try:
        main.main(["--version"])
    except SystemExit as e:
        assert e.code == 0
    assert capsys.readouterr().out.strip() == "claw-memory " + claw_memory.__version__


def test_doctor_reports_every_tool_with_versions(capsys):
    rc = main.main(["doctor"])
    out = capsys.readouterr().out
    for tool in ("micropython", "mpy-cross", "mpremote", "esptool"):
        assert tool in out
    assert rc == 0, out
    assert "MicroPython" in out and "mpy-cross" in out


def test_doctor_says_what_is_missing(monkeypatch, capsys):
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
