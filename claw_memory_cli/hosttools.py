"""Finding the host tools: the unix-port micropython, mpy-cross, mpremote, esptool."""

import os
import shutil
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def find(name, env=None):
    """Path of a tool: $ENV override, else beside this Python (the venv), else on PATH."""
    if env and os.environ.get(env):
        return os.environ[env]
    here = os.path.join(os.path.dirname(sys.executable), name)
    if os.path.exists(here):
        return here
    return shutil.which(name)


def package_modules():
    """Repository-relative paths of every module of claw_memory, subpackages included."""
    out = []
    pkg = os.path.join(ROOT, "claw_memory")
    for dirpath, dirnames, files in os.walk(pkg):
        dirnames[:] = sorted(d for d in dirnames if d != "__pycache__")
        for name in sorted(files):
            if name.endswith(".py"):
                out.append(os.path.relpath(os.path.join(dirpath, name), ROOT).replace(os.sep, "/"))
    return sorted(out)


def micropython():
    """The unix-port binary: $MICROPYTHON, else the one beside this Python, else PATH; None
    when there is none."""
    return find("micropython", "MICROPYTHON")


def version(cmd):
    """First line a tool prints about its version, or None when it cannot run."""
    try:
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return None
    text = (out.stdout or out.stderr).strip()
    if out.returncode != 0 or not text:
        return None
    return text.splitlines()[0]


# sys.version is the Python language level (3.4.0); the port's own version is in
# sys.implementation, with the .mpy version it loads.
_MP_VERSION = (
    "import sys\n"
    "v = sys.implementation.version\n"
    "n = '.'.join(str(x) for x in v[:3]) + ('-' + v[3] if len(v) > 3 and v[3] else '')\n"
    "m = getattr(sys.implementation, '_mpy', 0)\n"
    "print('MicroPython %s (unix port, .mpy %d.%d)' % (n, m & 0xff, m >> 8 & 3))"
)


def doctor():
    """[(tool, path or None, version or None, what it is for)]"""
    rows = []
    mp = micropython()
    rows.append(("micropython", mp, mp and version([mp, "-c", _MP_VERSION]),
                 "unix port: tests, demo, virtual board"))
    for tool, arg, purpose in (
        ("mpy-cross", "--version", "compiles .mpy for xtensawin (deploy, size check)"),
        ("mpremote", "version", "talks to a board (inspect --port, deploy, device tests)"),
        ("esptool", "version", "writes firmware to an ESP32-S3 (flash)"),
    ):
        path = find(tool)
        rows.append((tool, path, path and version([path, arg]), purpose))
    try:
        from importlib.metadata import version as dist_version

        rows.append(("rich", "python package", "rich " + dist_version("rich"),
                     "tables and progress bars on a terminal"))
    except Exception:  # noqa: BLE001 -- not installed: plain output
        rows.append(("rich", None, None, "tables and progress bars on a terminal"))
    return rows
