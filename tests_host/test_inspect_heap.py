"""The REPL views stream (issue 24 item 10): inspect.sessions(), history() and context() on a
data root with 2,000 chats and a 150 KiB session hold only what they show, on the unix port in
a small heap and on the 32-bit port (tools/build_mp32.py) as .mpy, as `deploy` installs it. A
MemoryError is never swallowed into a partial answer (every session keeps its id)."""

import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tools"))

import claw_memory  # noqa: E402
from claw_memory.session import file_name  # noqa: E402
from claw_memory_cli import hosttools  # noqa: E402

CHATS = 2000
SID = "chat:uart:console:default_01"

# Run under MicroPython: one view (what it prints goes through the built-in print).
_SCRIPT = r"""
import builtins, sys
from claw_memory import inspect
root, what = sys.argv[1], sys.argv[2]
seen = [0, 0]  # lines, lines of a session with its id (counted: holding them would not fit)


def count(*a, **k):
    seen[0] += 1
    seen[1] += str(a[0]).startswith("chat:")


out = print
builtins.print = count
if what == "sessions":
    inspect.sessions(root)
    builtins.print = out
    print("RESULT", seen[0] - 1, seen[1])
elif what == "history":
    rows = inspect.history(%r, 10, root, rows=True)
    builtins.print = out
    print("RESULT", " || ".join(r["text"] for r in rows))
else:
    ctx = inspect.context(None, "", "openai", root, rows=True)
    builtins.print = out
    print("RESULT", ctx["session"], len(ctx["messages"]))
""" % SID


@pytest.fixture(scope="module")
def root(tmp_path_factory):
    base = tmp_path_factory.mktemp("many")
    root = str(base / "root")
    mem = claw_memory.open(root, "lite", extract=False, session_limit=1 << 30)
    sid = mem.chats.session_id("uart", "console")
    n = 0
    while mem.sessions.stat(sid)["bytes"] < 150 * 1024:
        mem.sessions.persist(sid, [(1, None, "Turn %d: how warm is the living room?" % n)])
        mem.sessions.persist(sid, [(2, None, "It is 24.5 C (turn %d). %s" % (n, "steady " * 60))], True)
        n += 1
    for k in range(CHATS):  # written as ESP-Claw writes them (quicker than 2,000 persists)
        key = "chat:web:u%d" % k
        mem.chats.save(key, "default_01", ["default_01"])
        log = os.path.join(root, "sessions", file_name(key + ":default_01"))
        data = b'{"role":"user","content":"hi %d"}\n' % k
        with open(log, "wb") as f:
            f.write(data)
        with open(log + ".idx", "wb") as f:
            f.write(b"CHDX\x01\x00\x0a\x00\x00\x00\x00\x00" + len(data).to_bytes(4, "little") + b"\x01\x01")
    last = [m["content"] for m in mem.sessions.messages(sid, tokens=0)][-10:]
    mem.close()
    script = str(base / "view.py")
    with open(script, "w") as f:
        f.write(_SCRIPT)
    return root, script, last


def _view(binary, path, script, root, what, heap):
    env = dict(os.environ, MICROPYPATH=os.pathsep.join([path, ".frozen"]))
    r = subprocess.run([binary, "-X", "heapsize=" + heap, script, root, what], env=env, cwd=ROOT,
                       capture_output=True, text=True, timeout=600)
    lines = [l for l in r.stdout.splitlines() if l.startswith("RESULT")]
    return r, (lines[0].split(" ", 1)[1] if lines else None)


def _check(r, got, what, last):
    assert r.returncode == 0 and got is not None, r.stdout[-500:] + r.stderr[-2000:]
    if what == "sessions":
        assert got == "%d %d" % (CHATS + 1, CHATS + 1), "every session listed, each with its id"
    elif what == "history":
        assert got.split(" || ") == last, "the last ten messages"
    else:
        sid, n = got.split(" ")
        assert sid.startswith("chat:web:u") and n == "1", "a web chat, written last: its one message"


@pytest.mark.parametrize("what", ["sessions", "history", "context"])
def test_views_of_2000_chats_in_a_small_heap_on_the_unix_port(root, what):
    root_dir, script, last = root
    # The package as .py, compiled into the heap: opening it alone needs about 210 KiB here
    # (64-bit words). Before the views streamed, each failed even in 8 MiB.
    r, got = _view(hosttools.micropython(), ROOT, script, root_dir, what, "384K")
    _check(r, got, what, last)


@pytest.mark.parametrize("heap", ["200K", "230K", "260K"])
def test_a_memory_error_is_raised_not_a_partial_listing(root, heap):
    root_dir, script, _ = root
    r, got = _view(hosttools.micropython(), ROOT, script, root_dir, "sessions", heap)
    if got is not None:
        assert got == "%d %d" % (CHATS + 1, CHATS + 1), "a listing is whole, every id in it"
    else:
        assert "MemoryError" in r.stderr + r.stdout, r.stderr[-2000:]


@pytest.fixture(scope="module")
def port32(port32_plain, tmp_path_factory):
    import heap32

    pkg = str(tmp_path_factory.mktemp("mpy"))
    heap32.mpy_package(pkg)
    return port32_plain, pkg


@pytest.mark.parametrize("what", ["sessions", "history", "context"])
def test_views_of_2000_chats_on_the_32_bit_port_as_mpy(root, port32, what):
    root_dir, script, last = root
    binary, pkg = port32
    # Measured: opening the memory needs 115 KiB of heap; the smallest heap each view
    # completes in: sessions 104-106 KiB, history less, context 139-148 KiB from run to run
    # (fragmentation: the collector takes words on the C stack for pointers, so what stays
    # pinned moves). 160 KiB is over the worst of them with a margin (at 150 the context view
    # failed in two suite runs, passing alone with the same code).
    r, got = _view(binary, pkg, script, root_dir, what, "160K")
    _check(r, got, what, last)
