# ENOSPC, EIO and MemoryError at every file operation of a session workload (persist,
# compaction, delete, close): a persist that reports failure wrote nothing it will not take
# back, so the caller's retry keeps each record once; one that reports success is on flash
# (what follows its append is retried later, never reported); after a reboot every record is
# there exactly once, in order, and the deleted session is gone.
import faults
from flashsim import mount
from mptest import eq, ok, timeout

from claw_memory import fsutil
from claw_memory.session import Sessions
from claw_memory.session import compact, format, pending, repair, sessions, state, stream, window, write

HEAP = "8M"
SLOW = True  # a matrix over every cut or fault: the slow tier
D = "/flash/sessions"
LIMIT = 2500


def _call(n):
    return ('{"role":"assistant","content":null,"tool_calls":[{"id":"c%d","type":"function",'
            '"function":{"name":"t","arguments":"{}"}}]}' % n)


def _res(n):
    return '[{"role":"tool","tool_call_id":"c%d","content":"%s","is_error":false}]' % (n, "r" * 300)


def _workload(s):
    """Every step tried, and tried again once when it failed (as a careful caller does).
    Returns the steps that failed twice."""
    failed = []

    def step(name, fn):
        for attempt in (1, 2):
            try:
                fn()
                return
            except (OSError, MemoryError):
                if attempt == 2:
                    failed.append(name)

    step("other", lambda: s.persist("other", [(1, None, "user 0"), (2, None, "final 0")], True))
    for n in range(1, 7):  # passes the limit: compactions
        step("user %d" % n, lambda: s.persist("t", [(1, None, "user %d" % n)]))
        step("tools %d" % n, lambda: s.persist("t", [(3, _call(n), None), (4, _res(n), None)]))
        step("final %d" % n, lambda: s.persist("t", [(2, None, "final %d" % n)], True))
    step("history", lambda: s.history("t").json_length("openai"))
    step("delete", lambda: s.delete("other"))
    step("close", s.close)
    return failed


def _check(failed):
    eq(failed, [], "a second try always works once the fault is gone")
    s = Sessions(D, size_limit=LIMIT)
    msgs = s.messages("t", tokens=0)
    got = [m["content"] for m in msgs if m["role"] != "tool" and not m.get("tool_calls")]
    first = int(got[0].split()[1])
    want = []
    for n in range(first, 7):
        want += ["user %d" % n, "final %d" % n]
    eq(got, want, "every record once, in order (the oldest turns compacted away)")
    calls = [m["tool_calls"][0]["id"] for m in msgs if m.get("tool_calls")]
    results = [m["tool_call_id"] for m in msgs if m["role"] == "tool"]
    eq(calls, results, "calls and results paired")
    ok("c6" in calls, "the newest tool round kept")
    eq(list(s.list())[0]["file"], s.path("t").rsplit("/", 1)[-1], "the deleted session is gone")
    eq(len(list(s.list())), 1, "and only it")
    ok(not fsutil.exists(s.path("other") + ".pending"), "no file of it left")
    rep = s.verify("t")
    eq((rep["dropped"], rep["torn_tail_bytes"], rep["leftovers"]), (0, 0, []),
       "nothing damaged left by a fault")


def _matrix(exc):
    dev = mount("lfs2", "/flash", blocks=256)
    fsutil.makedirs(D)
    image = dev.image()
    fa = faults.Faults(fsutil, format, state, write, repair, pending, compact, sessions, window, stream).install()
    try:
        fa.arm(-1, None)
        eq(_workload(Sessions(D, size_limit=LIMIT)), [], "no fault: nothing fails")
        total = fa.count
        ok(total > 100, "the workload has many file operations (%d)" % total)
        dev = dev.reboot()
        _check([])
        fired = 0
        for at in range(1, total + 1):
            dev = dev.restore(image)
            fa.arm(at, exc)
            failed = _workload(Sessions(D, size_limit=LIMIT))
            fired += fa.fired
            fa.disarm()
            dev = dev.reboot()
            try:
                _check(failed)
            except AssertionError as e:
                raise AssertionError("fault at operation %d: %s" % (at, e))
        ok(fired > total * 9 // 10, "nearly every operation was failed once (%d of %d)" % (fired, total))
        print("faults: %d file operations, %d failed once" % (total, fired))  # docs/DURABILITY.md
    finally:
        fa.remove()
    dev.unmount()


@timeout(600)
def test_enospc_at_every_file_operation():
    _matrix(OSError(28, "no space"))


@timeout(600)
def test_eio_at_every_file_operation():
    _matrix(OSError(5, "I/O error"))


@timeout(600)
def test_memory_error_at_every_file_operation():
    _matrix(MemoryError("injected"))
