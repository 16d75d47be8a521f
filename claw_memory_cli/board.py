"""Talking to a board (a real one, or the virtual board) over its serial REPL.

`Board` keeps one connection open for a whole command, through mpremote's serial transport
(the pinned mpremote package), without a soft reset (as `mpremote resume`), so that a
transfer can report its progress in bytes and the errors say what is wrong. `mip` still runs
the mpremote command line.
"""

import ast
import os
import subprocess

from . import guard, hosttools
from .ui import EXIT_PROBLEMS, EXIT_TOOL, CliError, Progress, plural

_CHUNK = 2048  # bytes per read round trip (mpremote's own cp uses 256)
_REMOVE_BATCH = 32  # paths a removal round trip sends
_WCHUNK = 2048  # bytes per write statement (mpremote uses 256)


def mpremote():
    path = hosttools.find("mpremote")
    if not path:
        raise CliError("mpremote not found: run python3 tools/dev.py setup", EXIT_TOOL)
    return path


def resolve_port(port):
    """`auto` (as in mpremote): the first USB serial port; any other name as it is."""
    if port != "auto":
        return port
    import serial.tools.list_ports

    for p in sorted(serial.tools.list_ports.comports()):
        if p.vid is not None and p.pid is not None:
            return p.device
    raise CliError("no board found: no USB serial port is there (plug the board in, or give "
                   "-p PORT)", EXIT_TOOL)


def check_port(port):
    """A clear error for a serial port that is not there (before mpremote says 'in use')."""
    if port.startswith("/") and not os.path.exists(port):
        raise CliError("no board at %s: that serial port does not exist (is the board plugged in? "
                       "`mpremote connect list` lists the ports)" % port, EXIT_TOOL)
    if os.path.isfile(port) or os.path.isdir(port):
        raise CliError("no board at %s: it is a %s, not a serial port (`mpremote connect list` "
                       "lists the ports)" % (port, "file" if os.path.isfile(port) else "folder"), EXIT_TOOL)


def run(port, *args, timeout=120):
    """Run `mpremote connect PORT resume <args>`; returns stdout."""
    port = resolve_port(port)
    check_port(port)
    cmd = [mpremote(), "connect", port, "resume"] + list(args)
    try:
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        raise CliError("the board on %s did not answer within %d s" % (port, timeout), EXIT_TOOL)
    if out.returncode != 0:
        msg = (out.stderr or out.stdout).strip().splitlines()
        raise CliError("mpremote %s failed on %s: %s" % (args[0], port, msg[-1] if msg else
                                                         "exit %d" % out.returncode), EXIT_TOOL)
    return out.stdout


_LISTING = """
import os
def _walk(p, rel):
    print(repr(("d", rel)))
    for e in os.ilistdir(p):
        full = p + "/" + e[0]
        if e[1] & 0x4000:
            _walk(full, rel + "/" + e[0])
        else:
            print(repr(("f", rel + "/" + e[0], e[3] if len(e) > 3 and e[3] >= 0 else os.stat(full)[6])))
def _listing(root):
    try:
        os.stat(root)
    except OSError:
        print("NONE")
        return
    base = root.rstrip("/")
    for name in %r:
        try:
            if os.stat(base + "/" + name)[0] & 0x4000:
                _walk(base + "/" + name, name)
        except OSError:
            pass
    print("END")
_listing(%r)
"""


def listing_script(root):
    """The MicroPython script that prints the listing of the data root `root`'s folders."""
    return _LISTING % (guard.TOPS, root)


# Run before each write or removal: a memory the board's program keeps open (the REPL's,
# main.py's after an interrupt) takes its sessions' files as it checked them until the
# library writes (claw_memory/session/sessions.py, _open); these writes are not the
# library's, so they move its count themselves.
_WROTE = "import sys\n_m = sys.modules.get('claw_memory.fsutil')\nif _m:\n _m.writes += 1\n"

_RMTREE = """
import os
def rmtree(p):
    try:
        mode = os.stat(p)[0]
    except OSError:
        return
    if mode & 0x4000:
        for e in os.ilistdir(p):
            rmtree(p + "/" + e[0])
        os.rmdir(p)
    else:
        os.remove(p)
"""


def human(n):
    for unit in ("bytes", "KiB", "MiB"):
        if n < 1024 or unit == "MiB":
            return ("%d %s" % (n, unit)) if unit == "bytes" else "%.1f %s" % (n, unit)
        n /= 1024.0


class Board:
    """One connection to the board on `port` (use as a context manager)."""

    def __init__(self, port):
        self.port = port
        self.t = None

    def __enter__(self):
        self.port = resolve_port(self.port)
        check_port(self.port)
        from mpremote.transport import TransportError
        from mpremote.transport_serial import SerialTransport

        try:
            self.t = SerialTransport(self.port, baudrate=115200)
        except TransportError:
            raise CliError("cannot open %s: it is in use by another program (a serial monitor, "
                           "mpremote, another claw-memory) or you may not open it (on Linux: "
                           "the dialout group)" % self.port, EXIT_TOOL)
        try:
            self.t.enter_raw_repl(soft_reset=False)
        except (TransportError, OSError):
            self.close()
            raise CliError("the device on %s does not answer with a MicroPython REPL (is "
                           "MicroPython flashed? press RESET and try again)" % self.port, EXIT_TOOL)
        return self

    def __exit__(self, *exc):
        self.close()

    def close(self):
        if self.t is None:
            return
        try:
            if self.t.in_raw_repl:
                self.t.exit_raw_repl()
        except OSError:
            pass
        try:
            self.t.close()
        except OSError:
            pass
        self.t = None

    def exec(self, code, timeout=30):
        """Run code on the board; returns what it printed. A traceback raises CliError
        (exit 3 when it is claw_memory that is missing, else 1)."""
        from mpremote.transport import TransportError

        try:
            out, err = self.t.exec_raw(code, timeout=timeout)
        except TransportError as e:
            raise CliError("the board on %s stopped answering: %s" % (self.port, e), EXIT_TOOL)
        if err:
            raise board_error(self.port, err.decode("utf-8", "replace"))
        return out.decode("utf-8", "replace").replace("\r\n", "\n")

    def soft_reset(self):
        """Restart MicroPython (what a fresh import needs); the files stay."""
        self.t.enter_raw_repl(soft_reset=True)

    def listing(self, root):
        """(dirs, [(path, size)]) of the data root's folders (`guard.TOPS`) under `root`
        (paths relative to it), or None when `root` does not exist on the board."""
        return parse_listing(self.exec(listing_script(root), timeout=600))

    def read(self, path, step=None):
        """The bytes of a file on the board; `step(n)` after every chunk."""
        self.exec("f=open(%r,'rb')\nr=f.read" % path)
        data = bytearray()
        while True:
            chunk = ast.literal_eval(self.exec("print(repr(r(%d)))" % _CHUNK).strip())
            if not chunk:
                break
            data += chunk
            if step:
                step(len(chunk))
        self.exec("f.close()")
        return bytes(data)

    def write(self, path, data, step=None):
        """Write a file on the board (replacing it); `step(n)` after every chunk."""
        self.exec(_WROTE + "f=open(%r,'wb')\nw=f.write" % path)
        for i in range(0, len(data), _WCHUNK):
            chunk = data[i:i + _WCHUNK]
            self.exec("w(%r)" % chunk)
            if step:
                step(len(chunk))
        self.exec("f.close()")

    def makedirs(self, path):
        """Create a directory and its parents on the board."""
        self.exec(_WROTE + "import os\np = %r\nfor part in %r.split('/'):\n p = p + part if p in ('', '/') "
                  "else p + '/' + part\n try:\n  os.mkdir(p)\n except OSError:\n  pass"
                  % ("/" if path.startswith("/") else "", path.strip("/")))

    def rmtree(self, path):
        """Remove a file or a directory tree on the board (nothing when it is not there)."""
        self.exec(_WROTE + _RMTREE + "rmtree(%r)" % path, timeout=120)

    def pull(self, root, dest, where):
        """Copy the folders of the data root `root` on the board (`guard.TOPS`: the text
        indexes too, derived) into the folder `dest`, showing progress; CliError (exit 1)
        when there is no data root."""
        listing = self.listing(root)
        if listing is None or not listing[0]:
            why = "no such folder on the board" if listing is None else "it has no sessions/ or memory/"
            raise CliError("no data root at %s: %s (pass --device-root, or create one with "
                           "`claw-memory init -p %s --device-root %s`)" % (where, why, self.port, root))
        dirs, files = listing
        base = root.rstrip("/")
        for d in dirs:
            os.makedirs(os.path.join(dest, *d.split("/")), exist_ok=True)
        total = sum(size for _, size in files)
        with Progress(total, "reading", nbytes=True, status="reading %s (%s) from %s" % (
                plural(len(files), "file"), human(total), where)) as bar:
            for path, size in files:
                data = self.read(base + "/" + path, step=lambda n, p=path: bar.step(p, n))
                with open(os.path.join(dest, *path.split("/")), "wb") as f:
                    f.write(data)
            bar.done()
        return listing

    def push(self, src, dest, where):
        """Copy the local folder `src` to the new directory `dest` on the board, showing
        progress."""
        files, dirs = [], []
        for dirpath, dirnames, names in os.walk(src):
            dirnames.sort()
            rel = os.path.relpath(dirpath, src).replace(os.sep, "/")
            rel = "" if rel == "." else rel
            dirs.append(rel)
            files += [(rel + "/" + n if rel else n, os.path.join(dirpath, n)) for n in sorted(names)]
        for d in dirs:
            self.makedirs(dest + "/" + d if d else dest)
        total = sum(os.path.getsize(p) for _, p in files)
        with Progress(total, "writing", nbytes=True, status="writing %s (%s) to %s" % (
                plural(len(files), "file"), human(total), where)) as bar:
            for rel, path in files:
                with open(path, "rb") as f:
                    self.write(dest + "/" + rel, f.read(), step=lambda n, r=rel: bar.step(r, n))
            bar.done()

    def remove(self, paths, dirs=()):
        """Remove files, then the (emptied) directories, deepest first; _REMOVE_BATCH paths
        a round trip (the board compiles each as source: thousands at once would not fit)."""
        paths = list(paths)
        dirs = sorted(dirs, key=len, reverse=True)
        for i in range(0, len(paths), _REMOVE_BATCH):
            self.exec(_WROTE + "import os\nfor p in %r:\n try:\n  os.remove(p)\n except OSError:\n  pass"
                      % paths[i:i + _REMOVE_BATCH], timeout=120)
        for i in range(0, len(dirs), _REMOVE_BATCH):
            self.exec("import os\nfor p in %r:\n try:\n  os.rmdir(p)\n except OSError:\n  pass"
                      % dirs[i:i + _REMOVE_BATCH], timeout=120)


def parse_listing(out):
    """Board.listing's answer from what _LISTING printed: one line a folder or file, as it is
    walked (the board never holds the listing: a list of thousands of sessions' files did not
    fit in a board's heap); CliError when it did not finish."""
    dirs, files = [], []
    done = False
    for line in out.splitlines():
        line = line.strip()
        if line == "NONE":
            return None
        if line == "END":
            done = True
        elif line.startswith("("):
            e = ast.literal_eval(line)
            if e[0] == "d":
                dirs.append(e[1])
            else:
                files.append((e[1], e[2]))
    if not done:
        raise CliError("the board's listing did not finish: %s" % out.strip()[-200:])
    return dirs, files


def board_error(port, traceback):
    """The CliError for a traceback from the board."""
    lines = [l for l in traceback.strip().splitlines() if l.strip()]
    last = lines[-1] if lines else "error"
    if "ImportError" in last and "claw_memory" in last:
        return CliError("claw_memory is not installed (or not completely) on the board at %s (%s): "
                        "run `claw-memory deploy -p %s`" % (port, last, port), EXIT_TOOL)
    return CliError("the board at %s failed: %s" % (port, last), EXIT_PROBLEMS)


def device_root(b, root=None):
    """The data root on the board: the given one, else what claw_memory picks there."""
    if root:
        return root
    out = b.exec("import claw_memory.paths as p\nprint(p.data_root())").strip().splitlines()
    if not out:
        raise CliError("could not ask the board on %s for its data root" % b.port, EXIT_TOOL)
    return out[-1].strip()
