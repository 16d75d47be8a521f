# ENOSPC, EIO and MemoryError at every file operation of a store workload: a change the call
# reported saved is there after a reboot, a change it reported failed is not, the same store
# keeps working once the fault is gone, and the derived files agree with the items.
import faults
import workloads
from flashsim import mount
from mptest import eq, ok, timeout

from claw_memory import fsutil
from claw_memory.store import Store, compact, digest, index, load, markdown, read, records, store

HEAP = "8M"
M = "/flash/memory"
BASE = {"B": "User lives in Shanghai by the river", "C": "User has a cat called Miso",
        "E": "User works as a nurse at night"}
NEW = {"A": "User likes green tea in the morning", "B2": "User lives in Beijing by the park",
       "D": "User works as a teacher during the day", "F": "User plays the violin on Sundays"}


def _baseline():
    dev = mount("lfs2", "/flash", blocks=256)
    t = [1714000000]

    def clock():
        t[0] += 1
        return t[0]

    s = Store(M, clock=clock)
    ids = {k: s.store(v, k.lower())[0]["id"] for k, v in sorted(BASE.items())}
    s.close()
    return dev, dev.image(), ids, clock


def _workload(s, ids):
    """[(step, reported ok)] of every step, each tried whatever the others did."""
    out = []

    def step(name, fn):
        try:
            fn()
            out.append((name, True))
        except (OSError, MemoryError):
            out.append((name, False))

    def replace():
        with s.batch() as b:
            b.store(NEW["D"], "work")
            b.forget(ids["E"])

    step("store A", lambda: s.store(NEW["A"], "drink"))
    step("update B", lambda: s.update(ids["B"], content=NEW["B2"]))
    step("recall", lambda: s.recall(["b"]))
    step("forget C", lambda: s.forget(ids["C"]))
    step("replace E by D", replace)
    step("store F", lambda: s.store(NEW["F"], "music"))
    step("compact", s.compact)
    step("flush", s.flush)
    return out


def _want(result):
    ok_ = dict(result)
    present = {"B": not ok_["update B"], "B2": ok_["update B"], "C": not ok_["forget C"],
               "E": not ok_["replace E by D"], "D": ok_["replace E by D"], "A": ok_["store A"],
               "F": ok_["store F"]}
    return present


def _check(dev, result):
    s = Store(M, clock=lambda: 1800000000)
    contents = [i["content"] for i in s.list()]
    text = dict(BASE, **NEW)
    for key, present in _want(result).items():
        eq(text[key] in contents, present, "%s %s after %r" % (key, "saved" if present else "not saved", result))
    eq(len(contents), len(set(contents)), "nothing twice")
    workloads.check_store_consistent(s)


def _matrix(exc):
    dev, image, ids, clock = _baseline()
    mods = (fsutil, records, digest, index, load, markdown, read, compact, store)
    fa = faults.Faults(*mods).install()
    try:
        fa.arm(-1, None)
        s = Store(M, clock=clock)
        _workload(s, ids)
        total = fa.count
        ok(total > 30, "the workload has many file operations (%d)" % total)
        fired = 0
        for at in range(1, total + 1):
            dev = dev.restore(image)
            fa.arm(at, exc)
            s = Store(M, clock=clock)
            result = _workload(s, ids)
            fired += fa.fired
            fa.disarm()
            # the same store works on once the fault is gone
            s.store("A fact stored after the fault number %d" % at, "after")
            ok(s.recall(["after"]), "works on after fault %d" % at)
            dev = dev.reboot()
            _check(dev, result)
        eq(fired, total, "every operation was failed once")
        print("faults: %d file operations, every one failed once" % total)  # docs/DURABILITY.md
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
