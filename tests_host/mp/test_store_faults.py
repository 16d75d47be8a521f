# ENOSPC, EIO and MemoryError at every file operation of a store workload (an extraction
# result of two facts included): a change the call reported saved is there after a reboot, a
# change it reported failed is not, the same store keeps working once the fault is gone, and
# the derived files agree with the items, and the RAM state the failed change left (term
# statistics, the label catalog read from flash) is what a fresh open builds. A transient read
# error (EIO) anywhere in an open, a list, a replay or a write never makes a file look missing.
import faults
import workloads
from flashsim import mount
from mptest import Clock, eq, ok, timeout

import claw_memory
from claw_memory import fsutil
from claw_memory.store import Store, catalog, compact, digest, index, load, markdown, read, records, store

HEAP = "8M"
SLOW = True  # a matrix over every cut or fault: the slow tier
M = "/flash/memory"
BASE = {"B": "User lives in Shanghai by the river", "C": "User has a cat called Miso",
        "E": "User works as a nurse at night"}
NEW = {"A": "User likes green tea in the morning", "B2": "User lives in Beijing by the park",
       "D": "User works as a teacher during the day", "F": "User plays the violin on Sundays",
       "G": "User has a sister named Eva", "H": "User runs every morning"}


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
    # an extraction result of two facts: one append, both or neither
    step("extract G H", lambda: workloads.extract(s, "none", [(NEW["G"], "family"), (NEW["H"], "sport")]))
    step("compact", s.compact)
    step("flush", s.flush)
    return out


def _want(result):
    ok_ = dict(result)
    present = {"B": not ok_["update B"], "B2": ok_["update B"], "C": not ok_["forget C"],
               "E": not ok_["replace E by D"], "D": ok_["replace E by D"], "A": ok_["store A"],
               "F": ok_["store F"], "G": ok_["extract G H"], "H": ok_["extract G H"]}
    return present


def _check(dev, result):
    s = Store(M, clock=lambda: 1800000000)
    contents = [i["content"] for i in s.list()]
    text = dict(BASE, **NEW)
    for key, present in _want(result).items():
        eq(text[key] in contents, present, "%s %s after %r" % (key, "saved" if present else "not saved", result))
    eq(len(contents), len(set(contents)), "nothing twice")
    workloads.check_store_consistent(s)


def _ranking(s):
    return [[(it["id"], it["score"]) for it in s.matches(q, 16)]
            for q in list(BASE.values()) + list(NEW.values()) + ["fact fault", "user"]]


def _same_ranking(got, want, at):
    # Same items in the same order, the same scores (the clock ticks between the two: the
    # recency factor moves by a few millionths)
    eq([[i for i, _ in r] for r in got], [[i for i, _ in r] for r in want], "ranking after fault %d" % at)
    for r, w in zip(got, want):
        ok(all(abs(a[1] - b[1]) < 1e-3 for a, b in zip(r, w)), "scores after fault %d" % at)


def _matrix(exc):
    dev, image, ids, clock = _baseline()
    mods = (fsutil, records, digest, index, load, markdown, read, compact, store, catalog)
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
            # the term statistics the failed change left are those a fresh open builds
            _same_ranking(_ranking(s), _ranking(Store(M, clock=clock)), at)
            fresh = Store(M, clock=clock)
            eq(s.catalog_text(), fresh.catalog_text(), "label catalog after fault %d" % at)
            eq(list(s.labels()), list(fresh.labels()), "catalog entries after fault %d" % at)
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


# -- read errors -------------------------------------------------------------------------------


def _open(clock):
    return claw_memory.open("/flash", clock=clock)


def _contents(mem):
    return sorted(it["content"] for it in list(mem.store.list()))


_SID = "chat:web:local:eio_01"


def _eio_matrix(kind, write, every):
    """A transient read error at every `every`th block read of an open, a list and a replay
    (and, with `write`, a store and a persist): whatever fails, nothing that existed is lost."""
    dev = mount(kind, "/flash", blocks=128)
    clock = Clock()
    mem = _open(clock)
    mem.profile.write("user", "# User\n\n- Name: Ada\n")
    for n in range(3):
        mem.store.store("Fact number %d worth keeping" % n, "t%d" % n)
    for n in range(2):
        mem.sessions.persist(_SID, [(1, None, "question %d" % n)])
        mem.sessions.persist(_SID, [(2, None, "answer %d" % n)], turn_completed=True)
    mem.close()
    facts = ["Fact number %d worth keeping" % n for n in range(3)]
    turns = ["question 0", "answer 0", "question 1", "answer 1"]
    image = dev.image()

    def work():
        m = _open(clock)
        list(m.store.list())
        m.sessions.messages(_SID)
        if write:
            m.store.store("A fact stored during the trouble", "later")
            m.sessions.persist(_SID, [(1, None, "question 2")])

    dev = dev.restore(image)
    r0 = dev.reads
    work()
    reads = dev.reads - r0
    errors = 0
    for k in range(0, reads, every):
        dev = dev.restore(image)
        dev.fail_read(k)
        try:
            work()
        except OSError:
            errors += 1
        dev.fail_read(-1)
        m = _open(clock)
        got = _contents(m)
        ok(all(f in got for f in facts), "%s: a read error at read %d lost items: %r" % (kind, k, got))
        eq(m.profile.read("user"), "# User\n\n- Name: Ada\n", "%s: profile kept (read %d)" % (kind, k))
        eq([x["content"] for x in m.sessions.messages(_SID)][:4], turns, "%s: history kept (read %d)" % (kind, k))
    dev.unmount()
    return reads, errors


@timeout(600)
def test_a_read_error_never_makes_a_file_look_missing():
    for kind, write, every in (("fat", True, 1), ("lfs2", True, 3)):
        reads, errors = _eio_matrix(kind, write, every)
        print("%s: %d reads, %d failed with OSError" % (kind, reads, errors))
        ok(errors > 0, "the read errors surfaced")


def test_a_failure_between_a_batchs_encoding_and_its_append_changes_nothing():
    # A batch's lines are encoded (its new labels placed in them) and then joined for the
    # append: a MemoryError there (here a TypeError at the same place, injected) is a failed
    # append. The store must read as before the change, labels included, and keep working.
    from claw_memory.store import batch

    dev = mount("lfs2", "/flash", blocks=256)
    clock = Clock()
    s = Store(M, clock=clock)
    s.store("User lives in Lisbon", "city")
    size = fsutil.size(M + "/memory_records.jsonl")
    real = batch.Batch._encode

    def encode(self):
        real(self)
        self._st.pend = self._st.pend + [None]  # the join for the append fails

    batch.Batch._encode = encode
    try:
        clock.t += 10
        try:
            s.store("User's favourite colour is teal", "favourite colour")
            ok(False, "the failed join surfaced")
        except TypeError:
            pass
    finally:
        batch.Batch._encode = real
    eq(fsutil.size(M + "/memory_records.jsonl"), size, "nothing appended")
    eq(sorted((it["content"], it["tags"]) for it in s.list()), [("User lives in Lisbon", "city")],
       "the store as before the change")
    eq(s.has_label("favourite colour"), False, "the new label is not there")
    s.store("User's favourite colour is teal", "favourite colour")
    got = sorted((it["content"], it["tags"]) for it in s.list())
    eq(got, [("User lives in Lisbon", "city"), ("User's favourite colour is teal", "favourite colour")],
       "the next store works")
    ok(s.has_label("favourite colour"), "with its label")
    s.close()
    eq(sorted((it["content"], it["tags"]) for it in Store(M, clock=clock).list()), got, "after a reopen")
    dev.unmount()


def test_a_change_that_fails_before_its_line_leaves_the_labels_as_they_were():
    # A store places its new label, a forget drops its item's, before the batch has a line: a
    # MemoryError making that line (injected in its encoding) must undo the label change too.
    from claw_memory import item

    dev = mount("lfs2", "/flash", blocks=256)
    clock = Clock()
    s = Store(M, clock=clock)
    mid = s.store("User lives in Lisbon", "city")[0]["id"]
    real = item.to_json

    def failing(*a, **kw):
        raise MemoryError("injected")

    for what, change in (("store", lambda: s.store("User's favourite colour is teal", "favourite colour")),
                         ("forget", lambda: s.forget(mid))):
        clock.t += 10
        item.to_json = failing
        try:
            change()
            ok(False, what + ": the failure surfaced")
        except MemoryError:
            pass
        finally:
            item.to_json = real
        eq((s.has_label("favourite colour"), s.has_label("city")), (False, True), what + ": labels as before")
        eq([it["content"] for it in s.list()], ["User lives in Lisbon"], what + ": items as before")
    s.store("User has a dog", "pet")
    s.close()
    s = Store(M, clock=clock)
    eq((s.has_label("favourite colour"), s.has_label("city"), s.has_label("pet")), (False, True, True),
       "the labels the files describe after a reopen")
    dev.unmount()
