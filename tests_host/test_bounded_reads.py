"""Every readline() of a file in the package reserves at most a few KiB: MicroPython's
readline(n) allocates n bytes up front, whatever the line's size, so a line is read in pieces
of a constant of at most 4 KiB (tests_host/mp/test_session_records.py watches the session
code's reads at run time; tests_host/test_session_heap32.py runs a turn on a fragmented heap).
A stream's `await reader.readline()` (the LLM transport) is not a file read."""

import os
import re

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PKG = os.path.join(ROOT, "claw_memory")
BOUND = 4096


def _calls(src):
    """(line number, argument text) of each readline( call that is not awaited."""
    for m in re.finditer(r"(await\s+)?[\w.\]\)]+\.readline\(", src):
        if m.group(1):
            continue
        depth, i = 1, m.end()
        while depth:
            depth += {"(": 1, ")": -1}.get(src[i], 0)
            i += 1
        yield src.count("\n", 0, m.start()) + 1, src[m.end() : i - 1]


def test_every_file_readline_is_bounded_by_a_small_constant():
    found = 0
    for base, dirs, files in os.walk(PKG):
        for name in files:
            if not name.endswith(".py"):
                continue
            path = os.path.join(base, name)
            with open(path, encoding="utf-8") as f:
                src = f.read()
            consts = {k: int(v) for k, v in re.findall(r"^(_?[A-Z][A-Z_]*) = const\((\d+)\)", src, re.M)}
            for line, args in _calls(src):
                found += 1
                where = "%s:%d readline(%s)" % (os.path.relpath(path, ROOT), line, args)
                names = re.findall(r"\b_?[A-Z][A-Z_]+\b", args)
                assert names, where + ": no constant bounds it"
                for k in names:
                    assert k in consts and consts[k] <= BOUND, "%s: %s is not a constant <= %d" % (where, k, BOUND)
    assert found >= 3, "the scan found the readline calls (%d)" % found
