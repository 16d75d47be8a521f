"""Talking to a board through mpremote (a real one, or the virtual board)."""

import os
import subprocess

from . import hosttools
from .ui import EXIT_TOOL, CliError


def mpremote():
    path = hosttools.find("mpremote")
    if not path:
        raise CliError("mpremote not found: run python3 tools/dev.py setup", EXIT_TOOL)
    return path


def run(port, *args, timeout=120):
    """Run `mpremote connect PORT resume <args>`; returns stdout. `resume` keeps the board's
    state (no soft reset between commands)."""
    cmd = [mpremote(), "connect", port, "resume"] + list(args)
    try:
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        raise CliError("the board on %s did not answer within %d s" % (port, timeout), EXIT_TOOL)
    if out.returncode != 0:
        msg = (out.stderr or out.stdout).strip().splitlines()
        raise CliError("mpremote failed on %s: %s" % (port, msg[-1] if msg else "exit %d" % out.returncode),
                       EXIT_TOOL)
    return out.stdout


def exec_code(port, code, timeout=120):
    """Run Python code on the board; returns what it printed."""
    return run(port, "exec", code, timeout=timeout)


def device_root(port, root=None):
    """The data root on the board: the given one, else what claw_memory chooses there."""
    if root:
        return root
    out = exec_code(port, "import claw_memory.paths as p\nprint(p.data_root())").strip().splitlines()
    if not out:
        raise CliError("could not ask the board for its data root (is claw_memory deployed?)")
    return out[-1].strip()


def pull(port, root, dest):
    """Copy the board's sessions/ and memory/ into the local folder `dest`."""
    os.makedirs(dest, exist_ok=True)
    base = root.rstrip("/")
    listing = exec_code(port, "import os\nprint(os.listdir(%r))" % (root or "/"))
    for name in ("sessions", "memory"):
        if "'%s'" % name in listing:
            run(port, "fs", "cp", "-r", ":%s/%s" % (base, name), dest + "/")


def makedirs(port, path):
    """Create a directory and its parents on the board."""
    exec_code(port, "import os\np = ''\nfor part in %r.strip('/').split('/'):\n"
                    " p += '/' + part\n try:\n  os.mkdir(p)\n except OSError:\n  pass" % path)


def push(port, src, dest):
    """Copy the local folder `src` to `dest` on the board (a new directory)."""
    run(port, "fs", "cp", "-r", src, ":" + dest, timeout=600)
