"""Every readline() of a file in the package reserves at most a few KiB: MicroPython's
readline(n) allocates n bytes up front, whatever the line's size, so a line is read in pieces
of a constant of at most 4 KiB (tests_host/mp/test_session_records.py watches the session
code's reads at run time; tests_host/test_session_heap32.py runs a turn on a fragmented heap).
A stream's `await reader.readline()` (the LLM transport) is not a file read."""

import ast
import os

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PKG = os.path.join(ROOT, "claw_memory")
BOUND = 4096


def _consts(tree):
    """{NAME: value} of the module's `NAME = const(<int>)` lines."""
    out = {}
    for node in tree.body:
        if (isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name)
                and isinstance(node.value, ast.Call) and getattr(node.value.func, "id", "") == "const"
                and node.value.args and isinstance(node.value.args[0], ast.Constant)
                and isinstance(node.value.args[0].value, int)):
            out[node.targets[0].id] = node.value.args[0].value
    return out


def _calls(tree):
    """Each x.readline(...) call that is not awaited (a stream's, not a file's)."""
    awaited = {id(n.value) for n in ast.walk(tree) if isinstance(n, ast.Await)}
    for n in ast.walk(tree):
        if (isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr == "readline"
                and id(n) not in awaited):
            yield n


def test_every_file_readline_is_bounded_by_a_small_constant():
    found = 0
    for base, dirs, files in os.walk(PKG):
        for name in files:
            if not name.endswith(".py"):
                continue
            path = os.path.join(base, name)
            with open(path, encoding="utf-8") as f:
                src = f.read()
            tree = ast.parse(src)
            consts = _consts(tree)
            for call in _calls(tree):
                found += 1
                where = "%s:%d %s" % (os.path.relpath(path, ROOT), call.lineno, ast.get_source_segment(src, call))
                names = [n.id for a in call.args for n in ast.walk(a) if isinstance(n, ast.Name) and n.id.isupper()]
                assert names, where + ": no constant bounds it"
                for k in names:
                    assert consts.get(k, BOUND + 1) <= BOUND, "%s: %s is not a constant <= %d" % (where, k, BOUND)
    assert found >= 3, "the scan found the readline calls (%d)" % found
