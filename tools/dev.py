#!/usr/bin/env python3
"""One entry point for a fresh machine: set up the virtualenv, then run the demo or the tests.

    python3 tools/dev.py demo [demo options]   # sets up .venv if needed, runs the offline demo
    python3 tools/dev.py test [pytest options] # sets up .venv if needed, runs the whole suite
    python3 tools/dev.py test -m "not slow"    # the fast tier only

`test` runs pytest on every core (pytest-xdist: `-n auto --dist worksteal`; the collector puts
the slow tier first, so the long tests start at once and the short ones fill in around them);
give `-n N` to choose the number of workers, `-n 0` to run in this process.

Set-up installs the pinned `dev` extra of pyproject.toml into `.venv` and is skipped when
pyproject.toml has not changed since the last install, so a second run starts at once.
"""

import hashlib
import os
import subprocess
import sys
import venv

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
VENV = os.path.join(ROOT, ".venv")
STAMP = os.path.join(VENV, ".claw-memory-installed")


def _bin(name):
    return os.path.join(VENV, "Scripts" if os.name == "nt" else "bin", name)


def _digest():
    with open(os.path.join(ROOT, "pyproject.toml"), "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def setup():
    if sys.version_info < (3, 10):
        sys.exit("claw-memory needs Python 3.10 or newer (this is %s)" % sys.version.split()[0])
    want = _digest()
    try:
        with open(STAMP) as f:
            if f.read().strip() == want and os.path.exists(_bin("python")):
                return
    except OSError:
        pass
    if not os.path.exists(_bin("python")):
        print("dev: creating virtualenv in .venv", flush=True)
        venv.EnvBuilder(with_pip=True).create(VENV)
    print("dev: installing pinned development tools (pip install -e '.[dev]')", flush=True)
    pip = [_bin("python"), "-m", "pip", "install", "--disable-pip-version-check", "-q"]
    subprocess.run(pip + ["-e", ROOT + "[dev]"], check=True)
    with open(STAMP, "w") as f:
        f.write(want)


def _parallel(rest):
    """xdist's options, unless the caller gave their own."""
    if any(a == "-n" or a.startswith(("-n", "--numprocesses", "--dist")) for a in rest):
        return []
    if "no:xdist" in rest:
        return []
    return ["-n", "auto", "--dist", "worksteal"]


def main(argv):
    if not argv or argv[0] not in ("setup", "demo", "test", "doctor"):
        sys.exit("usage: python3 tools/dev.py setup|demo|test|doctor [options]")
    setup()
    cmd, rest = argv[0], argv[1:]
    if cmd == "setup":
        return 0
    env = dict(os.environ)
    env["PATH"] = os.path.dirname(_bin("python")) + os.pathsep + env.get("PATH", "")
    if cmd == "test":
        args = [_bin("python"), "-m", "pytest"] + _parallel(rest) + rest
    else:
        args = [_bin("claw-memory"), cmd] + rest
    return subprocess.run(args, cwd=ROOT, env=env).returncode


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
