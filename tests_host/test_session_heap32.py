"""Session history on a fragmented heap, on the ESP32-like 32-bit port without the package frozen
in (tools/build_mp32.py --plain; skipped, with the reason, when it cannot be built here): with
about 500 KB free in 16 KiB holes, a turn is persisted, a request starts with a turn in progress
and an index is rebuilt (tests_host/support/fragmented.py). MicroPython's readline(n) reserves n
bytes: a line read with a 64 KiB bound needs a 64 KiB hole whatever the line's size."""

import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tools"))

import build_mp32  # noqa: E402

SUPPORT = os.path.join(ROOT, "tests_host", "support")
RUNTIME = os.path.join(ROOT, "claw_memory_cli", "runtime")


def test_a_turn_needs_no_big_unbroken_block_of_heap(tmp_path):
    try:
        binary = build_mp32.build(plain=True)
    except build_mp32.Unavailable as e:
        pytest.skip("the 32-bit port cannot be built here: %s" % e)
    env = dict(os.environ)
    env["MICROPYPATH"] = os.pathsep.join([ROOT, SUPPORT, RUNTIME, ".frozen"])
    r = subprocess.run([binary, "-X", "heapsize=1M", os.path.join(SUPPORT, "fragmented.py"),
                        str(tmp_path / "flash.img")], env=env, cwd=str(tmp_path),
                       capture_output=True, text=True, timeout=600)
    print(r.stdout)
    assert r.returncode == 0 and r.stdout.rstrip().endswith("FRAGMENTED-OK"), r.stdout + r.stderr
    free = int(r.stdout.split("free after fragmenting: ")[1].split()[0])
    assert free > 400000, "the heap had room, only not in one piece: %d bytes free" % free
