"""The virtual board (tools/virtual_board/) driven by the real mpremote CLI.

A unix-port micropython behind a pty, with its LittleFS in a host image file, must look like
a board to mpremote: exec, fs cp/cat/mkdir/ls, cp -r into :lib/, run, mount, Ctrl-C,
soft-reset and reset, and /flash surviving every reboot while RAM does not.
"""

import os
import shutil
import signal
import subprocess
import sys
import time

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

from tools.virtual_board import VirtualBoard  # noqa: E402

CALL_TIMEOUT = 20  # seconds for one mpremote call; a hang fails the test


def _mpremote():
    here = os.path.join(os.path.dirname(sys.executable), "mpremote")
    if os.path.exists(here):
        return here
    found = shutil.which("mpremote")
    if not found:
        pytest.skip("mpremote not installed (python3 tools/dev.py test installs it)")
    return found


def mpremote(board, *args, check=True, timeout=CALL_TIMEOUT, port=None):
    cmd = [_mpremote(), "connect", port or board.port, *args]
    try:
        r = subprocess.run(cmd, capture_output=True, timeout=timeout, cwd=board.workdir)
    except subprocess.TimeoutExpired as e:
        pytest.fail("hung: %s\nstdout: %r\nstderr: %r" % (cmd[2:], e.stdout, e.stderr))
    out = r.stdout.decode("utf-8", "replace").replace("\r\n", "\n")
    if check and r.returncode != 0:
        pytest.fail("mpremote %s failed (%d)\n%s\n%s" % (
            " ".join(args), r.returncode, out, r.stderr.decode("utf-8", "replace")))
    r.out = out
    return r


@pytest.fixture(scope="module")
def board(tmp_path_factory):
    work = tmp_path_factory.mktemp("vboard")
    with VirtualBoard(str(work / "flash.img")) as b:
        b.workdir = str(work)
        yield b
    assert b.pid is None


def wait_reboot(board, reboots, timeout=10):
    """Wait until the board has restarted since `reboots` and is at its REPL again."""
    deadline = time.monotonic() + timeout
    while board.reboots == reboots:
        if time.monotonic() > deadline:
            pytest.fail("the board did not reboot")
        time.sleep(0.02)
    assert board.wait_ready(max(0.1, deadline - time.monotonic())), board.error
    assert board.reboots == reboots + 1


def write(board, rel, data):
    path = os.path.join(board.workdir, rel)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as f:
        f.write(data.encode() if isinstance(data, str) else data)
    return path


def make_package(board, name):
    write(board, name + "/__init__.py", "from .sub import VALUE\ndef hello():\n    return 'hi from %s'\n" % name)
    write(board, name + "/sub.py", "VALUE = 1234\n")


def test_exec_and_board_layout(board):
    r = mpremote(board, "exec", "print(1+1)")
    assert r.out == "2\n"
    r = mpremote(board, "exec", "import os, sys; print(os.getcwd()); print(sys.path[:3])")
    assert r.out == "/flash\n['', '.frozen', '/flash/lib']\n"


def test_fs_cp_and_cat(board):
    text = "first line\nzweite Zeile \u00fc\n\ttabbed\n"
    write(board, "notes.txt", text)
    mpremote(board, "fs", "cp", "notes.txt", ":")
    assert mpremote(board, "fs", "cat", ":notes.txt").out == text
    # binary content with the control bytes the REPL protocol uses comes back intact
    blob = bytes(range(256)) * 8 + b"\x03\x04\x01\x02\r\n\x05A\x01"
    write(board, "blob.bin", blob)
    mpremote(board, "fs", "cp", "blob.bin", ":blob.bin")
    mpremote(board, "fs", "cp", ":blob.bin", "blob.back")
    with open(os.path.join(board.workdir, "blob.back"), "rb") as f:
        assert f.read() == blob


def test_fs_mkdir_and_ls(board):
    mpremote(board, "fs", "mkdir", ":data")
    write(board, "d.txt", "x")
    mpremote(board, "fs", "cp", "d.txt", ":data/d.txt")
    ls = mpremote(board, "fs", "ls", ":").out
    assert " data/" in ls
    assert "1 d.txt" in mpremote(board, "fs", "ls", ":data").out
    # mkdir of an existing directory fails as on a board
    assert mpremote(board, "fs", "mkdir", ":data", check=False).returncode != 0


def test_cp_r_package_into_lib_and_import(board):
    make_package(board, "vbpkg")
    mpremote(board, "fs", "mkdir", ":lib", check=False)
    mpremote(board, "cp", "-r", "vbpkg", ":lib/")
    assert "sub.py" in mpremote(board, "fs", "ls", ":lib/vbpkg").out
    r = mpremote(board, "exec", "import vbpkg; print(vbpkg.hello(), vbpkg.VALUE, vbpkg.__file__)")
    assert r.out == "hi from vbpkg 1234 /flash/lib/vbpkg/__init__.py\n"


def test_run_script(board):
    path = write(board, "script.py", "import sys\nprint('ran on', sys.platform)\nprint(sum(range(10)))\n")
    assert mpremote(board, "run", path).out == "ran on linux\n45\n"
    bad = write(board, "bad.py", "print('before')\n1/0\n")
    r = mpremote(board, "run", bad, check=False)
    assert r.returncode == 1
    assert "before" in r.out and "ZeroDivisionError" in r.out


def test_soft_reset_keeps_flash_and_clears_ram(board):
    make_package(board, "keeppkg")
    mpremote(board, "fs", "mkdir", ":lib", check=False)
    mpremote(board, "cp", "-r", "keeppkg", ":lib/")
    write(board, "keep.txt", "kept\n")
    mpremote(board, "fs", "cp", "keep.txt", ":keep.txt")
    # RAM state survives between mpremote sessions when resumed...
    mpremote(board, "resume", "exec", "import keeppkg; ram_state = 42")
    assert mpremote(board, "resume", "exec", "print(ram_state)").out == "42\n"
    reboots, pid = board.reboots, board.pid
    # ...and an explicit soft reset wipes it: a fresh micropython process on the same image
    mpremote(board, "soft-reset")
    assert board.reboots == reboots + 1 and board.pid != pid
    r = mpremote(board, "resume", "exec",
                 "import sys; print('ram_state' in globals(), 'keeppkg' in sys.modules)")
    assert r.out == "False False\n"
    assert mpremote(board, "resume", "fs", "cat", ":keep.txt").out == "kept\n"
    r = mpremote(board, "resume", "exec", "import keeppkg; print(keeppkg.hello(), keeppkg.VALUE)")
    assert r.out == "hi from keeppkg 1234\n"
    # a plain mpremote command soft-resets first, as on a board
    mpremote(board, "resume", "exec", "ram_state = 1")
    r = mpremote(board, "exec", "print('ram_state' in globals())")
    assert r.out == "False\n"


def test_ctrl_c_interrupts_running_code(board):
    mpremote(board, "exec", "pass")  # soft reset now, so that what follows is resumed
    reboots = board.reboots
    cmd = [_mpremote(), "connect", board.port, "resume", "exec",
           "import time\nspins = 0\nwhile True:\n spins += 1\n time.sleep_ms(1)"]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    time.sleep(1.0)
    proc.kill()
    proc.wait()
    # mpremote's Ctrl-C interrupts the loop: same process, its globals still there
    r = mpremote(board, "resume", "exec", "print(spins > 0)")
    assert r.out == "True\n"
    assert board.reboots == reboots


def test_mount_passes_control_bytes(board):
    # mpremote mount runs a binary protocol with kbd_intr(-1): 0x03 is data, not Ctrl-C
    write(board, "mnt/ctl.bin", b"\x03" * 7 + b"\x04\x03")
    r = mpremote(board, "mount", "mnt", "exec", "print(open('/remote/ctl.bin','rb').read())")
    assert r.out.splitlines()[-1] == repr(b"\x03" * 7 + b"\x04\x03")


def test_reset_sys_exit_and_crash_reboot(board):
    write(board, "survivor.txt", "still here\n")
    mpremote(board, "fs", "cp", "survivor.txt", ":survivor.txt")
    # mpremote reset -> machine.reset() (the board's shim) -> hard reset
    mpremote(board, "exec", "pass")  # (soft reset before counting)
    reboots = board.reboots
    mpremote(board, "resume", "reset")
    wait_reboot(board, reboots)
    # sys.exit() ends the unix port; the bridge reboots it
    reboots = board.reboots
    mpremote(board, "resume", "exec", "import sys; sys.exit()")
    wait_reboot(board, reboots)
    # a crash (SIGKILL) is a reboot too
    reboots = board.reboots
    os.kill(board.pid, signal.SIGKILL)
    wait_reboot(board, reboots)
    assert mpremote(board, "fs", "cat", ":survivor.txt").out == "still here\n"


def test_power_cycle_new_bridge_same_image(tmp_path):
    image = str(tmp_path / "flash.img")
    with VirtualBoard(image) as b:
        b.workdir = str(tmp_path)
        # closed, so durable: an open file's data is still in littlefs' cache, as on a board
        mpremote(b, "exec", "with open('power.txt', 'w') as f: f.write('on')")
        pid = b.pid
    assert b.pid is None
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)
    assert os.path.getsize(image) == 512 * 4096
    with VirtualBoard(image) as b:
        b.workdir = str(tmp_path)
        assert mpremote(b, "exec", "print(open('power.txt').read())").out == "on\n"


def test_cli_with_link(tmp_path):
    image, link = str(tmp_path / "board.img"), str(tmp_path / "ttyCLAW")
    proc = subprocess.Popen(
        [sys.executable, "-m", "tools.virtual_board", "--image", image, "--link", link],
        cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        port = proc.stdout.readline().strip()
        assert port.startswith("/dev/pts/"), proc.stderr.read() if proc.poll() is not None else port
        assert os.path.realpath(link) == port

        class Linked:
            workdir = str(tmp_path)

        r = mpremote(Linked, "exec", "import os; print(os.getcwd())", port=link)
        assert r.out == "/flash\n"
    finally:
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            raise
    assert proc.returncode == 0
    assert not os.path.lexists(link)
    assert os.path.getsize(image) == 512 * 4096


class Terminal:
    """The port opened directly, as a terminal program would."""

    def __init__(self, port):
        self.fd = os.open(port, os.O_RDWR | os.O_NOCTTY)

    def send(self, data):
        os.write(self.fd, data)

    def expect(self, pattern, timeout=10):
        import select

        got, end = b"", time.monotonic() + timeout
        while pattern not in got:
            left = end - time.monotonic()
            if left <= 0:
                pytest.fail("waited for %r, got %r" % (pattern, got))
            if select.select([self.fd], [], [], left)[0]:
                got += os.read(self.fd, 4096)
        return got

    def close(self):
        os.close(self.fd)


def test_friendly_repl_boot_files_and_ctrl_d(board):
    write(board, "boot.py", "print('boot.py ran')\nBOOTED = 1\n")
    write(board, "main.py", "print('main.py ran')\nwith open('main.log', 'a') as f: f.write('x')\n")
    mpremote(board, "fs", "cp", "boot.py", "main.py", ":")
    term = Terminal(board.port)
    try:
        term.send(b"\r\x02")  # friendly REPL
        term.expect(b'Type "help()" for more information.\r\n>>> ')
        term.send(b"for i in range(2): print(i)\r\r")
        assert term.expect(b"1\r\n>>> ").endswith(b"0\r\n1\r\n>>> ")  # board line endings
        term.send(b"import time; time.sleep(30)\r")
        time.sleep(0.3)
        term.send(b"\x03")
        term.expect(b"KeyboardInterrupt: \r\n>>> ")
        term.send(b"\x04")  # Ctrl-D at the friendly REPL: soft reboot, boot.py and main.py
        out = term.expect(b">>> ")
        assert out.index(b"MPY: soft reboot\r\n") < out.index(b"boot.py ran\r\nmain.py ran\r\n")
        term.send(b"print(BOOTED)\r")
        term.expect(b"1\r\n>>> ")
        term.close()
        term = None
        # rebooting into the raw REPL (mpremote's soft reset) runs boot.py but not main.py
        r = mpremote(board, "exec", "print(BOOTED, open('main.log').read())")
        assert r.out == "1 x\n"
    finally:
        if term:
            term.close()
        mpremote(board, "fs", "rm", ":boot.py", ":main.py", ":main.log", check=False)


def test_unmountable_image_stays_down(tmp_path):
    image = tmp_path / "bad.img"
    image.write_bytes(b"\0" * 4096 * 16)  # not a littlefs image; never reformatted
    with pytest.raises(RuntimeError, match="cannot mount"):
        VirtualBoard(str(image)).start()
    assert image.read_bytes() == b"\0" * 4096 * 16


def test_main_py_reads_the_console_as_on_a_board(tmp_path):
    import serial

    with VirtualBoard(str(tmp_path / "flash.img")) as b:
        b.workdir = str(tmp_path)
        write(b, "main.py", "name = input('you> ')\nprint('GOT', name)\n")
        mpremote(b, "fs", "cp", "main.py", ":main.py")
        reboots = b.reboots
        mpremote(b, "resume", "reset")  # a hard reset boots into main.py, as a power-on does
        deadline = time.monotonic() + 10
        while b.reboots == reboots and time.monotonic() < deadline:
            time.sleep(0.02)
        with serial.Serial(b.port, 115200, timeout=0.2) as s:
            seen = b""
            while b"you> " not in seen and time.monotonic() < deadline:
                seen += s.read(64)
            assert b"you> " in seen, seen
            s.write(b"Ada\r")
            while b">>> " not in seen and time.monotonic() < deadline:
                seen += s.read(64)
        assert b"GOT Ada" in seen and seen.rstrip().endswith(b">>>"), seen
        assert b.wait_ready(5), "then at the REPL"


def test_the_console_agent_as_main_py(tmp_path):
    """examples/console_agent.py copied as main.py, as its header says: typed to on the console."""
    import serial

    with VirtualBoard(str(tmp_path / "flash.img")) as b:
        b.workdir = ROOT
        mpremote(b, "fs", "cp", "examples/console_agent.py", ":main.py")
        reboots = b.reboots
        mpremote(b, "resume", "reset")
        deadline = time.monotonic() + 30
        while b.reboots == reboots and time.monotonic() < deadline:
            time.sleep(0.02)

        def until(s, marker, seen=b""):
            while marker not in seen and time.monotonic() < deadline:
                seen += s.read(256)
            assert marker in seen, seen
            return seen

        with serial.Serial(b.port, 115200, timeout=0.2) as s:
            until(s, b"you> ")
            s.write(b"remember: I like jasmine tea\r")
            until(s, b"pip> Noted.")
            s.write(b"what do you know?\r")
            until(s, b"pip> I know: I like jasmine tea")
            s.write(b"/quit\r")
            until(s, b">>> ")
