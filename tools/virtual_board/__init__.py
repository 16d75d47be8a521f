r"""A virtual ESP32 board: the MicroPython unix port behind a pseudo-terminal, for mpremote.

The device tests (`tests_device/`) run on a real board through `mpremote`. This module lets
the same mpremote commands run in CI: it opens a pty pair, offers the slave side as the
board's serial port, and bridges the master side to a child `micropython` (unix port) whose
LittleFS lives in a host image file (`fileflash.py` beside this module, 4096-byte blocks), mounted
at `/flash`. Every program/erase reaches the image file at once, so everything on `/flash`
survives soft resets, hard resets, crashes and restarts of the bridge.

Shell (repo root, inside the venv)::

    python -m tools.virtual_board --image /tmp/board.img --link /tmp/ttyCLAW &
    mpremote connect /tmp/ttyCLAW cp -r claw_memory :lib/
    mpremote connect /tmp/ttyCLAW run tests_device/some_test.py
    mpremote connect /tmp/ttyCLAW resume exec "import claw_memory"
    kill %1                               # SIGINT/SIGTERM/SIGHUP: stop, remove the link

It prints the pty path (`/dev/pts/N`) on stdout once the board is booted. The pty path and
the link both serve: with mpremote 1.29.0 a 133 KB `fs cp` through the link took 0.9-1.1
times as long as through the pty path (`mpremote connect $(readlink /tmp/ttyCLAW) ...`). Options: `--heap 2M` (micropython heap;
default the unix port's), `--blocks 512` (size of a new image, x 4096 bytes),
`--no-host-path` (keep the repo root and the CLI's MicroPython runtime off the board's
sys.path, to test what was deployed), `--micropython PATH`, `--trace FILE` (log all traffic).

Python::

    from tools.virtual_board import VirtualBoard
    with VirtualBoard("/tmp/board.img") as board:   # start(): returns once booted
        subprocess.run(["mpremote", "connect", board.port, "exec", "print(1)"], timeout=20)
    # board.port, board.pid (current child), board.reboots (child restarts so far),
    # board.wait_ready(timeout) after a reset, board.error, board.stop() (kills the child,
    # closes the pty, removes the link; also done by the with-block)

`python -m tools.virtual_board` needs no `tools/__init__.py`: run from the repo root,
`tools` is a namespace package (this package's `__main__.py` is the command line). One bridge per image (the image is flock()ed).

What the board is (boot step, run by `micropython -i -c ...` at every start):

* `/flash` is the image (created and formatted when missing or empty; a corrupt image is
  not reformatted: the board then stays down and `start()` raises with the error), the cwd
  is `/flash` (so mpremote's `:file` is `/flash/file`), and `sys.path` is
  `['', '.frozen', '/flash/lib', <repo root>, <claw_memory_cli/runtime>, <this folder>]`, so `cp -r pkg :lib/` and
  `mip install` (target `/flash/lib`) install importable packages that win over the repo.
* `/flash/boot.py` runs at every boot and `/flash/main.py` when booting into the friendly
  REPL, in the REPL's globals, as on a board (errors are printed; Ctrl-C interrupts them).
* `machine` is replaced in `sys.modules` by a shim whose `reset()` exits with code 90,
  which the bridge treats as a hard reset, so `mpremote reset` works.

Unix-port behaviour found by running it under a pty, and what the bridge does about it:

* It has the board REPL (pyexec): friendly REPL, Ctrl-A raw REPL (`raw REPL; CTRL-B to
  exit\r\n>`), raw-paste mode (`R\x01`, 128-byte window), Ctrl-B, Ctrl-E paste mode. The
  bridge passes all of that through unchanged.
* Soft reset: Ctrl-D on an empty line (friendly or raw REPL), `machine.soft_reset()` and an
  uncaught `sys.exit()` make the unix port *exit* (after `OK\r\n` in the raw REPL). The
  bridge turns every exit of the child, crashes included, into a reboot: it writes
  `MPY: soft reboot\r\n`, starts a fresh micropython on the same image, runs the boot step
  and returns to the REPL mode the board was in. After mpremote's Ctrl-A Ctrl-D it therefore
  sees `OK`, `soft reboot`, then the raw REPL banner, as from a board. A soft reset is a new
  process: RAM (globals, sys.modules, open files) is gone, /flash is not. Data written to a
  file that was never closed is lost, as on a board (littlefs caches it until close/flush).
  A hard reset (exit code 90) writes no banner and comes back in the friendly REPL. Input
  that arrives during a reboot into the raw REPL is held and delivered once the new process
  is at its prompt; booting into the friendly REPL, it reaches boot.py and main.py at once
  (a `main.py` that calls `input()` reads the console, as on a board).
* Banners: at start (and after Ctrl-B) this unix port prints `MicroPython <version> on
  <date>; linux [GCC ...] version`, `Type "help()" for more information.` and `>>> `; older
  unix ports print `Use Ctrl-D to exit, Ctrl-E for paste mode` instead, and both are
  recognised. The bridge swallows the banner when rebooting into the raw REPL (a board
  prints only the raw REPL banner there) and passes it through otherwise, which is what
  mpremote's `repl` and `mount` expect (they look for `\nMicroPython ` after a reboot).
* Ctrl-C: the unix port interrupts code only through SIGINT, and in raw-paste mode it does
  not even switch its tty out of raw mode, so a tty with ISIG would not help (and would turn
  every 0x03 in `mpremote mount`'s binary protocol into a signal). The child's pty is fully
  raw; when a 0x03 arrives from the host while the child has its SIGINT handler installed
  (`/proc/PID/status` SigCgt: it is installed only while code runs with Ctrl-C enabled),
  the bridge sends SIGINT instead of the byte, which raises KeyboardInterrupt as on a board.
  At the REPL and under `micropython.kbd_intr(-1)` the byte is passed on as data.
* Line endings: the unix port writes `\n` for `print` where a board writes `\r\n`. The bridge
  adds the `\r` in the friendly REPL and in boot output (terminals show lines properly) and
  passes raw-REPL traffic byte for byte, so `mpremote exec`/`fs cat` output ends lines with
  `\n` (text-mode readers see no difference).
* Output nobody reads is buffered (64 KB) and dropped after a second without progress, like
  a board's USB serial with no host, so the child never blocks on a port nobody opened.

Limitations: it is the unix port, not an ESP32: `sys.platform` is 'linux', no `Pin`,
`network` or `esp32`, a different heap (`--heap`), 64-bit ints and speed. `/` is the host's
filesystem (VfsPosix): only `/flash` is the board's flash (`mpremote df` lists both), so
tests must not write outside `/flash`. `sys.exit()` inside boot.py/main.py ends only that
file (the port runs with `-i`). The boot step cannot be interrupted. A Ctrl-C that races
the very end of a program (the handler is being removed) can kill the child, which then
simply reboots. Linux only (pty, TIOCSCTTY, `/proc`).
"""

import argparse
import fcntl
import os
import re
import select
import signal
import subprocess
import sys
import termios
import threading
import time

from claw_memory_cli import hosttools

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
# The board's own modules (fileflash) and, on the host path, the repository and the
# MicroPython modules the CLI ships (scripted_llm, flashsim).
RUNTIME = os.path.join(ROOT, "claw_memory_cli", "runtime")

SOFT_REBOOT = b"MPY: soft reboot\r\n"
RAW_BANNER = b"raw REPL; CTRL-B to exit\r\n"
# Last line of the friendly REPL banner: this port's, and older unix ports' readline REPL.
FRIENDLY_BANNERS = (b'Type "help()" for more information.', b"Use Ctrl-D to exit")
HARD_RESET_EXIT = 90  # exit code of the machine.reset() shim

_MAX_PENDING = 64 * 1024  # output buffered for the host before the child is paused
_STALL_DROP = 1.0  # seconds without the host reading before buffered output is dropped

_BOOT = """\
def _vb_boot(g):
    import sys, os, micropython, fileflash
    micropython.kbd_intr(-1)
    try:
        try:
            fileflash.mount(%(image)r, "/flash", %(blocks)d)
            os.chdir("/flash")
        except Exception as e:
            print("virtual board: cannot mount", %(image)r)
            sys.print_exception(e)
            print(%(noflash)r)
            return
        rest = [p for p in sys.path if p not in ("", ".frozen", "/flash/lib")]
        sys.path.clear()
        sys.path.extend(["", ".frozen", "/flash/lib"])
        if %(host_path)r:
            sys.path.extend(rest)
        import machine as real

        class Machine:
            def __getattr__(self, name):
                return getattr(real, name)

            def __repr__(self):
                return "<module 'machine'>"

            def reset(self):
                raise SystemExit(%(hard)d)

        sys.modules["machine"] = Machine()
    finally:
        micropython.kbd_intr(3)
    for name in ("boot.py", "main.py") if %(main)r else ("boot.py",):
        try:
            os.stat(name)
        except OSError:
            continue
        try:
            with open(name) as f:
                code = compile(f.read(), name, "exec")
            exec(code, g)
        except SystemExit:
            pass  # ends this file only (the port runs with -i)
        except (Exception, KeyboardInterrupt) as e:
            sys.print_exception(e)


try:
    _vb_boot(globals())
finally:
    del _vb_boot
    print(%(sentinel)r)
"""

_LONE_LF = re.compile(rb"(?<!\r)\n")

# child states
_BOOTING = 0  # boot code running; output streamed until the sentinel
_BANNER = 1  # after the sentinel: waiting for the friendly REPL banner and prompt
_ENTER_RAW = 2  # Ctrl-A sent; waiting for the raw REPL banner
_RUNNING = 3  # at the REPL; everything passes through


def find_micropython():
    """The unix-port binary: $MICROPYTHON, else the one beside this Python, else PATH."""
    found = hosttools.micropython()
    if not found:
        raise FileNotFoundError(
            "no MicroPython unix port found (set MICROPYTHON=/path/to/micropython)")
    return found


def _raw_attrs(fd):
    a = termios.tcgetattr(fd)
    a[0] = 0  # iflag: no CR/NL mapping, no XON/XOFF, no parity
    a[1] = 0  # oflag: no output processing
    a[2] = (a[2] & ~(termios.CSIZE | termios.PARENB)) | termios.CS8 | termios.CREAD
    a[3] = 0  # lflag: no echo, no line editing, no signals
    a[6][termios.VMIN] = 1
    a[6][termios.VTIME] = 0
    termios.tcsetattr(fd, termios.TCSANOW, a)


def _child_setup():
    # Runs in the child between fork and exec: own session, pty as controlling terminal so
    # that closing the master (stop, or the bridge dying) hangs it up.
    os.setsid()
    fcntl.ioctl(0, termios.TIOCSCTTY, 0)


class VirtualBoard:
    """A micropython child on a pty, restarted on every exit, with its flash in `image`."""

    def __init__(self, image, link=None, micropython=None, heap=None, blocks=512,
                 host_path=True, trace=None):
        self.image = os.path.abspath(image)
        self.link = link
        self.micropython = micropython or find_micropython()
        self.heap = heap
        self.blocks = blocks
        self.host_path = host_path
        self.trace = trace
        self.port = None
        self.reboots = -1  # child starts after the first
        self.boot_output = b""  # the last boot's output (for error messages)
        self._sentinel = "<virtual-board-booted-%d-%d>" % (os.getpid(), id(self))
        self._sentinel_b = self._sentinel.encode() + b"\n"
        self._noflash = "<virtual-board-no-flash-%d-%d>" % (os.getpid(), id(self))
        self._noflash_b = self._noflash.encode()
        self._thread = None
        self._stopping = False
        self._ready = threading.Event()
        self.error = None  # why the board stopped booting (it cannot mount its image)
        self._image_lock = None
        self._proc = None
        self._child_fd = None
        self._host_fd = self._host_slave = None
        self._wake_r = self._wake_w = None
        self._state = _BOOTING
        self._mode_raw = False  # REPL mode, kept across soft reboots
        self._buf = b""  # child output being matched during boot
        self._held = b""  # host input held while the child boots
        self._to_child = b""
        self._to_host = b""
        self._host_stall = None
        self._last_byte = b""
        self._tail = b""
        self._started_at = 0.0
        self._quick_failures = 0

    # -- public ---------------------------------------------------------------------------

    def start(self, timeout=30):
        """Open the pty, boot the board, return once it is at its REPL."""
        # One board per image: a second bridge on the same file would corrupt it.
        self._image_lock = open(self.image, "ab")  # an empty new file is formatted at boot
        try:
            fcntl.flock(self._image_lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            self._image_lock.close()
            self._image_lock = None
            raise RuntimeError("image %s is in use by another virtual board" % self.image)
        self._host_fd, self._host_slave = os.openpty()
        _raw_attrs(self._host_slave)
        os.set_blocking(self._host_fd, False)
        self.port = os.ttyname(self._host_slave)
        if self.link:
            if os.path.islink(self.link):
                os.unlink(self.link)
            os.symlink(self.port, self.link)
        self._wake_r, self._wake_w = os.pipe()
        self._spawn(friendly=True)
        self._thread = threading.Thread(target=self._loop, name="virtual-board", daemon=True)
        self._thread.start()
        if not self.wait_ready(timeout):
            out = self.boot_output.decode("utf-8", "replace")
            why = self.error or "virtual board did not boot in %ss" % timeout
            self.stop()
            raise RuntimeError("%s; output:\n%s" % (why, out))
        return self

    @property
    def pid(self):
        """Process id of the current micropython child (changes at every reboot)."""
        proc = self._proc
        return proc.pid if proc is not None else None

    def wait_ready(self, timeout=30):
        """Wait until the board is at its REPL again (after a reboot); True if it is, False
        after `timeout` seconds or when it cannot boot (see `error`)."""
        end = time.monotonic() + timeout
        while not self._ready.wait(min(0.05, max(0.0, end - time.monotonic()))):
            if self.error or time.monotonic() >= end:
                return False
        return True

    def stop(self):
        """Stop the bridge, kill the micropython child, close the pty, remove the link."""
        self._stopping = True
        if self._wake_w is not None:
            try:
                os.write(self._wake_w, b"x")
            except OSError:
                pass
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(5)
        self._kill_child()
        for fd in (self._host_fd, self._host_slave, self._wake_r, self._wake_w):
            if fd is not None:
                try:
                    os.close(fd)
                except OSError:
                    pass
        self._host_fd = self._host_slave = self._wake_r = self._wake_w = None
        if self._image_lock is not None:
            self._image_lock.close()
            self._image_lock = None
        if self.link and os.path.islink(self.link) and os.readlink(self.link) == self.port:
            os.unlink(self.link)

    def __enter__(self):
        if self._thread is None:
            self.start()
        return self

    def __exit__(self, *exc):
        self.stop()

    # -- child ----------------------------------------------------------------------------

    def _spawn(self, friendly):
        self.reboots += 1
        self._ready.clear()
        self._state = _BOOTING
        self._mode_raw = not friendly
        self._buf = b""
        self.boot_output = b""
        master, slave = os.openpty()
        # A raw line, like a UART: no signals, echo, line editing or CR/LF mapping. (With ISIG
        # the tty would turn every 0x03 into SIGINT, also in mpremote mount's binary data.)
        _raw_attrs(slave)
        code = _BOOT % {
            "image": self.image,
            "blocks": self.blocks,
            "host_path": bool(self.host_path),
            "hard": HARD_RESET_EXIT,
            "noflash": self._noflash,
            "main": bool(friendly),
            "sentinel": self._sentinel,
        }
        cmd = [self.micropython]
        if self.heap:
            cmd += ["-X", "heapsize=" + str(self.heap)]
        cmd += ["-i", "-c", code]
        env = dict(os.environ)
        env["MICROPYPATH"] = os.pathsep.join([".frozen", ROOT, RUNTIME, HERE])
        try:
            self._proc = subprocess.Popen(cmd, stdin=slave, stdout=slave, stderr=slave,
                                          cwd=ROOT, env=env, close_fds=True,
                                          preexec_fn=_child_setup)
        finally:
            os.close(slave)
        os.set_blocking(master, False)
        self._child_fd = master
        self._to_child = b""
        self._started_at = time.monotonic()

    def _kill_child(self):
        proc, self._proc = self._proc, None
        if proc is not None and proc.poll() is None:
            try:
                os.killpg(proc.pid, signal.SIGTERM)
            except OSError:
                pass
            try:
                proc.wait(2)
            except subprocess.TimeoutExpired:
                try:
                    os.killpg(proc.pid, signal.SIGKILL)
                except OSError:
                    pass
                proc.wait()
        if self._child_fd is not None:
            try:
                os.close(self._child_fd)
            except OSError:
                pass
            self._child_fd = None
        return proc

    def _child_exited(self):
        proc = self._proc
        try:
            code = proc.wait(2)
        except subprocess.TimeoutExpired:
            code = None  # closed its terminal but still running: treat as a crash
        self._kill_child()
        if self._stopping:
            return
        if code != HARD_RESET_EXIT:
            if code is not None and code < 0:
                self._emit(b"\r\n[virtual board: micropython died of signal %d]\r\n" % -code)
            self._emit(SOFT_REBOOT)
        if time.monotonic() - self._started_at < 1.0 and self._state != _RUNNING:
            # It died while booting: back off rather than spin (a board would boot-loop).
            self._quick_failures += 1
            time.sleep(min(0.2 * self._quick_failures, 2.0))
        else:
            self._quick_failures = 0
        self._spawn(friendly=code == HARD_RESET_EXIT or not self._mode_raw)

    def _executing(self):
        """True while the child runs code with its Ctrl-C handler installed: the unix port
        installs its SIGINT handler only for that, and resets SIGINT to the default at the
        REPL and under micropython.kbd_intr(-1)."""
        try:
            with open("/proc/%d/status" % self._proc.pid) as f:
                for line in f:
                    if line.startswith("SigCgt:"):
                        return bool(int(line.split()[1], 16) & (1 << (signal.SIGINT - 1)))
        except (OSError, ValueError):
            pass
        return False

    # -- data paths -----------------------------------------------------------------------

    def _log(self, what, data):
        if self.trace is not None:
            self.trace.write("%.3f %s %r\n" % (time.monotonic(), what, data))
            self.trace.flush()

    def _emit(self, data):
        """Queue bytes for the host."""
        if data:
            self._to_host += data
            self._last_byte = data[-1:]

    def _emit_cooked(self, data):
        """Queue child output for the host, with the \r a board puts before each \n."""
        if not data:
            return
        out = _LONE_LF.sub(b"\r\n", data)
        if self._last_byte == b"\r" and data[:1] == b"\n":
            out = out[1:]  # its \r ended the previous chunk
        self._emit(out)

    def _from_host(self, data):
        self._log("host>", data)
        while data:
            i = data.find(b"\x03")
            if i < 0:
                chunk, data = data, b""
            else:
                chunk, data = data[:i], data[i + 1 :]
            self._send_child(chunk)
            if i >= 0:
                if self._proc is not None and self._executing():
                    self._log("SIGINT", b"")
                    try:
                        os.kill(self._proc.pid, signal.SIGINT)
                    except OSError:
                        pass
                else:
                    self._send_child(b"\x03")

    def _send_child(self, data):
        if not data:
            return
        # Into the friendly REPL, boot.py and main.py run before the prompt and read the
        # console as on a board (main.py's input() gets the keys; what it leaves, the REPL
        # reads). Into the raw REPL (mpremote's soft reset) input waits for the raw prompt.
        if (self._state == _RUNNING or not self._mode_raw) and not self._held:
            self._to_child += data
        else:
            self._held += data

    def _from_child(self, data):
        self._log("child>", data)
        if self._state == _RUNNING:
            self._track_mode(data)
            return
        self._buf += data
        self.boot_output = (self.boot_output + data)[-8192:]
        if self._state == _BOOTING:
            if self._noflash_b in self._buf:
                # Without its flash the board would run on the host's filesystem: stay down.
                self.error = "virtual board cannot mount %s" % self.image
                self._emit_cooked(self._buf.split(self._noflash_b)[0])
                self._emit(b"\r\n[%s; stopped]\r\n" % self.error.encode())
                self._buf = b""
                self._kill_child()
                return
            i = self._buf.find(self._sentinel_b)
            if i < 0:
                # stream boot output, keeping back what could be the start of the sentinel
                keep = 0
                for n in range(min(len(self._buf), len(self._sentinel_b) - 1), 0, -1):
                    tail = self._buf[-n:]
                    if self._sentinel_b.startswith(tail) or self._noflash_b.startswith(tail):
                        keep = n
                        break
                self._emit_cooked(self._buf[: len(self._buf) - keep])
                self._buf = self._buf[len(self._buf) - keep :]
                return
            self._emit_cooked(self._buf[:i])
            self._buf = self._buf[i + len(self._sentinel_b) :]
            self._state = _BANNER
        if self._state == _BANNER:
            # the banner follows the sentinel; its first prompt ends it
            i = self._buf.find(b">>> ")
            if i < 0:
                return
            end = i + 4
            if not self._mode_raw:
                self._emit_cooked(self._buf[:end])
                self._buf = self._buf[end:]
                self._booted()
                return
            start = self._buf.rfind(b"MicroPython ", 0, i)
            self._emit_cooked(self._buf[: max(start, 0)])
            self._buf = self._buf[end:]
            self._to_child += b"\x01"
            self._state = _ENTER_RAW
        if self._state == _ENTER_RAW:
            i = self._buf.find(RAW_BANNER + b">")
            if i < 0:
                return
            self._emit(self._buf[i:])
            self._buf = b""
            self._booted()

    def _booted(self):
        self._state = _RUNNING
        self._tail = b""
        rest, self._buf = self._buf, b""
        held, self._held = self._held, b""
        self._to_child += held
        self._ready.set()
        if rest:
            self._track_mode(rest)

    def _track_mode(self, data):
        window = self._tail + data
        r = window.rfind(RAW_BANNER)
        f = max(window.rfind(b) for b in FRIENDLY_BANNERS)
        was_raw = self._mode_raw
        if r >= 0 or f >= 0:
            self._mode_raw = r > f
        self._tail = window[-40:]
        if was_raw and self._mode_raw:
            self._emit(data)
        else:
            self._emit_cooked(data)

    def _loop(self):
        try:
            while not self._stopping:
                self._step()
        except Exception as e:  # keep the reason visible; the port just goes quiet otherwise
            sys.stderr.write("virtual board: bridge failed: %r\n" % (e,))
            raise

    def _step(self):
        child = self._child_fd
        rlist = [self._wake_r, self._host_fd]
        if child is not None and len(self._to_host) < _MAX_PENDING:
            rlist.append(child)
        wlist = []
        if self._to_host:
            wlist.append(self._host_fd)
        if self._to_child and child is not None:
            wlist.append(child)
        r, w, _ = select.select(rlist, wlist, [], 0.25)
        if self._stopping:
            return
        if self._wake_r in r:
            os.read(self._wake_r, 64)
        if self._host_fd in r:
            try:
                data = os.read(self._host_fd, 4096)
            except (BlockingIOError, InterruptedError):
                data = b""
            if data:
                self._from_host(data)
        if child is not None and child in r:
            try:
                data = os.read(child, 4096)
            except (BlockingIOError, InterruptedError):
                data = None
            except OSError:  # EIO: the child closed its terminal, i.e. exited
                data = b""
            if data:
                self._from_child(data)
            elif data == b"":
                self._child_exited()
                return
        if self._to_child and self._child_fd is not None:
            try:
                n = os.write(self._child_fd, self._to_child)
                self._to_child = self._to_child[n:]
            except (BlockingIOError, InterruptedError):
                pass
            except OSError:
                pass  # child gone; the read side notices
        if self._to_host:
            try:
                n = os.write(self._host_fd, self._to_host)
                self._to_host = self._to_host[n:]
                self._host_stall = None
            except (BlockingIOError, InterruptedError):
                now = time.monotonic()
                if self._host_stall is None:
                    self._host_stall = now
                elif now - self._host_stall > _STALL_DROP:
                    self._to_host = b""  # nobody is reading: drop, as a board's USB does
                    self._host_stall = None


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python -m tools.virtual_board",
                                 description="Serve a virtual MicroPython board on a pty.")
    ap.add_argument("--image", required=True, help="flash image file (created when missing)")
    ap.add_argument("--link", help="create this symlink to the pty (e.g. /tmp/ttyCLAW)")
    ap.add_argument("--micropython", help="unix-port binary (default: $MICROPYTHON, venv, PATH)")
    ap.add_argument("--heap", help="micropython heap size, e.g. 2M")
    ap.add_argument("--blocks", type=int, default=512, help="4096-byte blocks of a new image")
    ap.add_argument("--no-host-path", action="store_true",
                    help="leave the repo root and the CLI's runtime modules off the board's sys.path")
    ap.add_argument("--trace", help="append a log of the traffic to this file")
    args = ap.parse_args(argv)
    trace = open(args.trace, "a") if args.trace else None
    board = VirtualBoard(args.image, link=args.link, micropython=args.micropython,
                         heap=args.heap, blocks=args.blocks, host_path=not args.no_host_path,
                         trace=trace)

    def on_signal(signum, frame):
        raise KeyboardInterrupt

    # Installed explicitly: a shell's background job inherits SIGINT ignored.
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, on_signal)
    status = 0
    try:
        board.start()
        print(board.port, flush=True)
        sys.stderr.write("virtual board on %s; Ctrl-C to stop\n" % (args.link or board.port))
        while board._thread.is_alive():
            board._thread.join(1)
        status = 1  # the bridge thread failed (its error is on stderr)
    except KeyboardInterrupt:
        pass
    except RuntimeError as e:
        sys.stderr.write("%s\n" % e)
        status = 1
    finally:
        board.stop()
    return status
