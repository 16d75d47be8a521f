"""The harness itself: a MicroPython test that fails, crashes, hangs or runs out of memory
fails its pytest item with a clear message; each test function is its own item."""

import os
import subprocess
import sys
import textwrap

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

CASES = textwrap.dedent('''
    from mptest import eq, timeout

    def test_passes():
        eq(1 + 1, 2, "sum")

    def test_fails():
        eq([1, 2], [1, 3], "lists")

    def test_memory_error():
        x = bytearray(64 * 1024 * 1024)

    def test_crash():
        import os
        os.system("kill -SEGV $PPID")

    @timeout(2)
    def test_hangs():
        while True:
            pass

    async def test_async_passes():
        import asyncio
        await asyncio.sleep_ms(1)
''')


def test_failures_crashes_hangs_and_memory_errors_are_reported(tmp_path):
    (tmp_path / "test_cases.py").write_text(CASES)
    env = dict(os.environ, CLAW_MP_TESTS=str(tmp_path), PYTHONPATH=HERE)
    r = subprocess.run([sys.executable, "-m", "pytest", "-p", "conftest", "-q", "-rA", "--rootdir", ROOT,
                        "-c", os.path.join(ROOT, "pyproject.toml"), str(tmp_path / "test_cases.py")],
                       capture_output=True, text=True, env=env, cwd=ROOT, timeout=120)
    out = r.stdout + r.stderr
    assert "2 passed" in out and "4 failed" in out, out
    assert "PASSED ::test_passes" in out and "PASSED ::test_async_passes" in out, "one item per function"
    assert "lists: got [1, 2], want [1, 3]" in out, "the MicroPython traceback reaches the report"
    assert "MemoryError with heap 2M" in out
    assert "crashed with signal 11" in out
    assert "hung: no result after 2 s" in out


SLOW_CASES = textwrap.dedent('''
    from mptest import slow, timeout

    @slow
    def test_marked_slow():
        pass

    def test_fast():
        pass

    @timeout(1)
    def test_waits_without_cpu():
        import time
        time.sleep(30)
''')


def test_slow_marker_and_a_wall_time_limit_for_a_test_that_waits(tmp_path):
    (tmp_path / "test_tiers.py").write_text(SLOW_CASES)
    env = dict(os.environ, CLAW_MP_TESTS=str(tmp_path), PYTHONPATH=HERE)
    base = [sys.executable, "-m", "pytest", "-p", "conftest", "-q", "-rA", "--rootdir", ROOT,
            "-c", os.path.join(ROOT, "pyproject.toml"), str(tmp_path / "test_tiers.py")]
    r = subprocess.run(base + ["-m", "not slow", "-k", "fast"], capture_output=True, text=True,
                       env=env, cwd=ROOT, timeout=120)
    out = r.stdout + r.stderr
    assert "1 passed, 2 deselected" in out, out
    r = subprocess.run(base + ["-m", "slow"], capture_output=True, text=True, env=env, cwd=ROOT,
                       timeout=120)
    out = r.stdout + r.stderr
    assert "1 passed, 2 deselected" in out and "PASSED ::test_marked_slow" in out, out
    r = subprocess.run(base + ["-k", "waits"], capture_output=True, text=True, env=env, cwd=ROOT,
                       timeout=120)
    out = r.stdout + r.stderr
    assert "1 failed" in out and "s of wall time" in out and "per-test timeout" in out, out
