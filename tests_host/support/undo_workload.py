# The undo workload for power-cut matrices (tests_host/mp/test_undo_powercut.py): changes made
# in a session and their undos at a small capacity: undo of an update (the change that
# compacted), of a forget, of a store that evicted (the evicted item comes back), twice in a
# row, after a close and reopen.
# MIT license

from workloads import MEMORY_DIR, _ack, check_store_consistent

SID = "chat:test:cut:default_01"
BY = {"by": "tool", "sid": SID, "msg": "20-0badc0de"}


def undos(clock_start=1800000000, cap=6):
    """(workload, check) in the shape cutmatrix.run takes. The check: after a cut, the items
    (ids and contents) are the state after the last acknowledged step or after the whole step
    in flight (the states of an uncut run), never more than `cap`, the RAM counts those of a
    reopen, the index consistent; and an undo after the recovery is either done whole or says
    why not."""
    from claw_memory.store import Store

    states = []  # the active (id, content) after each step of the uncut run

    def workload(acked):
        t = [clock_start]

        def clock():
            return t[0]

        s = Store(MEMORY_DIR, clock=clock, max_active=cap)
        record = not states

        def ack(what):
            _ack(acked, what)
            if s.count() > cap:
                raise AssertionError("%d items over a capacity of %d" % (s.count(), cap))
            if record:
                states.append(sorted((it["id"], it["content"]) for it in s.list()))

        def undo(kind):
            r = s.undo(SID)
            if not r["changed"] or r["undone"] != kind:
                raise AssertionError("undo: %r, want %s" % (r, kind))

        ids = []
        for n in range(cap - 1):
            t[0] += 3600
            ids.append(s.store("Seed fact number %d" % n, "s%d" % n, by=BY)[0]["id"])
        ack("seeded")
        t[0] += 3600
        s.update(ids[0], "Seed fact number 0, changed", by=BY)  # (7 lines: it compacts, kept)
        ack("update")
        undo("update")
        ack("undo update")
        s.forget(ids[1], by=BY)
        ack("forget")
        undo("forget")
        ack("undo forget")
        s.close()  # a compaction: nothing before it can be undone
        s = Store(MEMORY_DIR, clock=clock, max_active=cap)
        t[0] += 3600
        s.store("A fourth fact", "f", by=BY)
        ack("store")
        t[0] += 3600
        with s.batch(BY) as b:
            b.store("A fifth fact that evicts", "e")
        if not b.evicted:
            raise AssertionError("the workload meant to evict")
        ack("store evicting")
        undo("store")
        ack("undo evicting store")
        undo("store")
        ack("undo the store before it")
        t[0] += 3600
        s.store("One more fact", "m", by=BY)
        ack("store after undos")
        undo("store")
        ack("undo it")

    def check(acked):
        clock = lambda: clock_start + 99 * 3600  # noqa: E731
        s = Store(MEMORY_DIR, clock=clock, max_active=cap)
        got = sorted((it["id"], it["content"]) for it in s.list())
        k = len(acked)
        want = [states[k - 1]] if k else []
        if k < len(states):
            want.append(states[k])
        if k and got not in want:
            raise AssertionError("after %d steps: %r, want one of %r" % (k, got, want))
        if len(got) > cap:
            raise AssertionError("%d items over a capacity of %d" % (len(got), cap))
        again = Store(MEMORY_DIR, clock=clock, max_active=cap)
        again.count()
        a = (s._st.tab.lines, s._st.tab.changes, s._st.tab.evicted, s._st.tab.active)
        b = (again._st.tab.lines, again._st.tab.changes, again._st.tab.evicted, again._st.tab.active)
        if a != b:
            raise AssertionError("RAM counts %r, a reopen's %r" % (a, b))
        check_store_consistent(s)
        # the next undo, whatever the cut left: whole, or refused with a reason
        before = sorted((it["id"], it["content"]) for it in s.list())
        r = s.undo(SID)
        after = sorted((it["id"], it["content"]) for it in s.list())
        if not r["changed"] and after != before:
            raise AssertionError("a refused undo changed the items: %r" % (r,))
        if r["changed"] and after == before:
            raise AssertionError("an undo changed nothing: %r" % (r,))
        check_store_consistent(s)
        return 0

    return workload, check
