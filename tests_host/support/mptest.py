# Test support for MicroPython test modules (tests_host/mp) and their runner.
# MIT license
#
# Run by the pytest collector as:  micropython -X heapsize=N mptest.py <test file> <function>
# It prints MPTEST-PASS when the function (or the coroutine it returns) finishes, else the
# MicroPython traceback and exits 1. The decorators only mark functions for the collector,
# which reads them from the source; at run time they change nothing.

import sys


def heap(size):
    """Run this test with `-X heapsize=<size>` (e.g. "8M")."""
    return lambda f: f


def timeout(seconds):
    """Fail this test when it has used `seconds` of CPU time without finishing."""
    return lambda f: f


def slow(f):
    """Put this test in the slow tier (pytest's `slow` marker: `-m "not slow"` skips it)."""
    return f


class Clock:
    """A clock the test sets (`clock.t = ...`); the store tests' unix time starts at T0."""

    T0 = 1714000000

    def __init__(self, t=T0):
        self.t = t

    def __call__(self):
        return self.t


class Failure(AssertionError):
    pass


def eq(got, want, what=""):
    if got != want:
        raise Failure("%s: got %r, want %r" % (what or "value", got, want))


def ok(cond, what="condition"):
    if not cond:
        raise Failure(what)


def raises(exc, fn, *args, **kw):
    """Call fn; it must raise `exc`. Returns the exception."""
    try:
        fn(*args, **kw)
    except exc as e:
        return e
    raise Failure("%s did not raise %s" % (getattr(fn, "__name__", fn), exc.__name__))


def _main():
    path, name = sys.argv[1], sys.argv[2]
    d, _, mod = path.rpartition("/")
    if mod.endswith(".py"):
        mod = mod[:-3]
    sys.path.insert(0, d or ".")
    try:
        fn = getattr(__import__(mod), name)
        r = fn()
        if r is not None and hasattr(r, "send"):
            import asyncio

            asyncio.run(r)
    except BaseException as e:  # noqa: B036 -- report everything, MemoryError included
        sys.print_exception(e)
        if isinstance(e, MemoryError):
            print("MPTEST-MEMORYERROR")
        print("MPTEST-FAIL")
        sys.exit(1)
    print("MPTEST-PASS")


if __name__ == "__main__":
    _main()
