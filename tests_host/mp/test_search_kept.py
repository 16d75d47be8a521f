# History search keeps the files it opens open, from its first pass to its second and to the
# next query (session/held.py): each open looks its name up through KiB of the folder's
# metadata. The answers are those of a search that opens every file again; a file written
# between queries is opened again; a kept file that fails in the second pass leaves only its
# session out; an index written in the first pass is read as written.
import espclaw
from faults import File
from mptest import eq, heap, ok
from search_cases import D, SID, TOPICS, Unmerged
from search_cases import FailingReads, Unkept, archive_run, fresh, texts, turn

from claw_memory import fsutil
from claw_memory.session import Sessions, file_name
from claw_memory.session import held as held_mod
from claw_memory.session.repair import private
from claw_memory.session import search as search_mod
from claw_memory.session import tix

HEAP = "8M"
U1, U2, U3 = "chat:web:u1:default_01", "chat:web:u2:default_01", "chat:web:u3:default_01"


class _Opens:
    """Counts the search path's opens of each file (as test_search_faults.py puts faults)."""

    def __init__(self, wrap=None):
        self.n = {}
        self.wrap = wrap

    def __call__(self, path, mode="r"):
        f = open(path, mode)
        if isinstance(path, str):
            name = path.rsplit("/", 1)[1]
            self.n[name] = self.n.get(name, 0) + 1
            if self.wrap:
                f = self.wrap(path, f)
        return f

    def __enter__(self):
        fsutil.open = held_mod.open = self
        return self

    def __exit__(self, *exc):
        del fsutil.open, held_mod.open  # (the builtin again)
        return False


@heap("16M")
def test_a_chats_files_are_opened_once_and_kept_for_the_next_query():
    for kind in ("lfs2", "fat"):
        dev, s = fresh(kind, blocks=512)
        for n in range(12):
            turn(s, U1, n)
            turn(s, U2, n + 3)
        s.close()
        for ids in ([U1], [U1, U2]):
            with _Opens() as o:
                got = Sessions(D).search("boiler Hendrik", 3, ids)
            ok(got and all(h["text"].find("boiler") >= 0 for h in got), "found: %r" % got)
            eq(sorted(set(o.n.values())), [1], "%s, %d sessions: each file once: %r" % (kind, len(ids), o.n))
            eq(len(o.n), 2 * len(ids), "%s: the logs and their indexes: %r" % (kind, o.n))
        s = Sessions(D)
        want = s.search("boiler Hendrik", 4, [U1, U2])
        with _Opens() as o:  # the same Sessions: its files found open, each log's check kept
            eq(s.search("boiler Hendrik", 4, [U1, U2]), want, kind)
        eq(o.n, {}, "%s: nothing opened again" % kind)
        turn(s, U2, 40)  # (U2's log, entry index and text index written: theirs let go)
        with _Opens() as o:
            got = s.search("boiler Hendrik", 4, [U1, U2])
        ok(got and o.n and all("_u2_" in k for k in o.n), "%s: only U2's files again: %r" % (kind, o.n))
        ok("noted 40" in [h["text"] for h in s.search("turn 40", 3, [U2])], "%s: its new turn found" % kind)
        for n in range(20):  # (more writes than fsutil.ring holds: every file let go)
            turn(s, U1, 50 + n)
        with _Opens() as o:
            s.search("boiler Hendrik", 4, [U1, U2])
        ok(any("_u1_" in k for k in o.n) and any("_u2_" in k for k in o.n), "%s: both again: %r" % (kind, o.n))
        fsutil.wrote(D + "/elsewhere")  # (one write, of a path none of the kept files has)
        with _Opens() as o:
            s.search("boiler Hendrik", 4, [U1, U2])
        eq(o.n, {}, "%s: a write elsewhere lets nothing go" % kind)
        fsutil.wrote(s.path(U2))  # (U2's log alone)
        with _Opens() as o:
            s.search("boiler Hendrik", 4, [U1, U2])
        eq(sorted(o.n), [s.path(U2).rsplit("/", 1)[1]], "%s: only U2's log again: %r" % (kind, o.n))
        s.close()
        eq(s._held, None, "%s: closed with the Sessions" % kind)
        dev.unmount()


@heap("16M")
def test_six_files_are_kept_for_the_next_query():
    # (held._MAX: 6 hold the query heap within 16 KiB on the 32-bit port; each kept file
    # spares the next query a look-up of its name, 4 to 7 KiB read on littlefs)
    dev, s = fresh("lfs2", blocks=512)
    ids = [U1, U2, U3, "chat:web:u4:default_01"]
    for n in range(6):
        for sid in ids:
            turn(s, sid, n)
    s.close()
    s = Sessions(D)
    with _Opens() as o:
        s.search("boiler Hendrik", 3, ids)
    eq(len(o.n), 8, "the first query: four logs and their indexes: %r" % o.n)
    with _Opens() as o:
        s.search("boiler Hendrik", 3, ids)
    eq(len(o.n), 2, "the next: the 2 not kept: %r" % o.n)
    s.close()
    dev.unmount()


def test_what_a_query_did_not_use_makes_room_for_the_next_chats_files():
    # The files another chat's query kept and this one does not use are closed at its end:
    # this chat's own are kept from its second query on (kept for ever, they took every place)
    dev, s = fresh("lfs2", blocks=512)
    for n in range(6):
        for sid in (U1, U2, U3):
            turn(s, sid, n)
    s.close()
    s = Sessions(D)
    s.search("boiler Hendrik", 4, [U1, U2])
    eq(len(s._held.files), 4, "U1's and U2's logs and indexes kept")
    opened = []
    for _ in range(3):
        with _Opens() as o:
            ok(s.search("boiler Hendrik", 4, [U3]), "U3 found")
        opened.append(sorted(o.n))
    ok(opened[0] and all("_u3_" in k for k in opened[0]), "U3's files opened: %r" % opened)
    eq(opened[2], [], "the third query finds U3's files kept: %r" % opened)
    s.close()
    dev.unmount()


class _WrittenAtFirstRead:
    """Ticked by faults.File at each read of a file: the first read is met by a write of its
    path (as a turn would, between two reads of a query), told to fsutil as the library
    tells it of its every write."""

    def __init__(self, path):
        self.path = path
        self.told = False

    def tick(self):
        if not self.told:
            self.told = True
            fsutil.wrote(self.path)


@heap("16M")
def test_a_file_whose_path_is_written_while_a_query_reads_it_is_not_kept():
    dev, s = fresh("lfs2", blocks=512)
    for n in range(6):
        turn(s, U1, n)
    s.close()
    s = Sessions(D)
    log = s.path(U1)
    with _Opens(lambda p, f: File(_WrittenAtFirstRead(p), f) if p == log else f):
        ok(s.search("boiler Hendrik", 3, [U1]), "found")
    ok(all(e[0] != log for e in s._held.files), "the log let go at the query's end")
    with _Opens() as o:
        ok(s.search("boiler Hendrik", 3, [U1]), "found again")
    eq(o.n.get(log.rsplit("/", 1)[1]), 1, "the log opened again: %r" % o.n)
    s.close()
    dev.unmount()


def test_files_are_let_go_where_other_programs_write():
    # The host's own folders (VfsPosix) others may write: nothing is kept past the query
    import os

    d = "/tmp/claw_held_%d" % os.getpid() if hasattr(os, "getpid") else "/tmp/claw_held"
    for p in (d, d + "/s"):
        try:
            os.mkdir(p)
        except OSError:
            pass
    s = Sessions(d + "/s")
    turn(s, U1, 1)
    ok(not private(s), "the host's folder")
    ok(s.search("boiler", 3, [U1]), "found")
    eq(s._held, None, "nothing kept")
    with _Opens() as o:
        s.search("boiler", 3, [U1])
    ok(o.n.get(file_name(U1)) == 1 and all(v == 1 for v in o.n.values()), "opened afresh, once: %r" % o.n)
    s.close()
    for sub in ("/s", "/search"):
        for name in os.listdir(d + sub):
            os.remove(d + sub + "/" + name)
        os.rmdir(d + sub)
    os.rmdir(d)


def test_files_without_matches_are_not_kept():
    # the first session alone holds the term: the three after it (their logs and indexes
    # read, no match) do not push its files out
    dev, s = fresh(blocks=512)
    ids = [U1, U2, U3, "chat:web:u4:default_01"]
    for n in range(4):
        turn(s, U1, 1) if n == 0 else turn(s, ids[n], 2)
    s.close()
    with _Opens() as o:
        got = Sessions(D).search("boiler", 5, ids)
    eq([h["session"] for h in got], [U1], "found")
    eq(sorted(set(o.n.values())), [1], "each file once: %r" % o.n)
    dev.unmount()


def test_answers_are_those_of_a_search_that_opens_every_file_again():
    # archive segments, logs, the current session's lag read from its text, limits that
    # reach into every file
    dev, s = archive_run(n=60)
    for n in range(9):
        turn(s, U2, n)
    turn(s, SID, 61)  # (cached, its last turn not indexed yet)
    queries = ["boiler Hendrik March", "violin Thursdays", "lookup result 7", "noted",
               "花园 番茄", "Lisbon seat", "apple cake butter eggs", TOPICS[0]]
    for q in queries:
        for limit in (1, 5, 20):
            for ids in ([SID], [SID, U2], None):
                got = s.search(q, limit, ids)
                with Unkept():
                    want = s.search(q, limit, ids)
                eq(got, want, "%r %d %r" % (q, limit, ids))
                ok(got or q == "noted" and ids == [SID], "%r found" % q)
    dev.unmount()


def test_a_kept_file_failing_in_the_second_pass_leaves_only_its_session_out():
    dev, s = fresh(blocks=512)
    turn(s, U1, 1)
    turn(s, U2, 11)  # (the same topic: both hold "boiler")
    s.close()
    for suffix in (".log", ".tix"):
        on = [False]
        verify = search_mod.verify

        def armed(*a):
            on[0] = True  # (the first pass is over: its files are kept open)
            return verify(*a)

        search_mod.verify = armed
        log = []
        skipped = []
        try:
            def wrap(p, f):
                return FailingReads(f, lambda n: on[0]) if "_u2_" in p and p.endswith(suffix) else f

            with _Opens(wrap) as o:
                got = Sessions(D, log=log.append).search("boiler", 5, [U1, U2], skipped)
        finally:
            search_mod.verify = verify
        eq(o.n.get([n for n in o.n if "_u2_" in n and n.endswith(suffix)][0]), 1,
           "kept, not opened again (%s)" % suffix)
        eq([h["session"] for h in got], [U1], "the other session's hit (%s)" % suffix)
        eq(skipped, [U2], "reported (%s)" % suffix)
        ok(any("left out" in m and "_u2_" in m for m in log), "noted: %r" % log)
        eq(len(Sessions(D).search("boiler", 5, [U1, U2])), 2, "both again, no fault")
    dev.unmount()


@heap("16M")
def test_an_index_brought_up_to_date_in_the_first_pass_is_read_as_written():
    # ESP-Claw appended behind our index: the first pass reads the old index (its matches,
    # the file kept open), then appends the new records' blocks; the second pass reads them
    # from the new file, with no run again and no index written twice.
    for kind in ("lfs2", "fat"):
        dev, s = fresh(kind, blocks=512)
        for n in range(8):
            turn(s, SID, n)
        s.close()
        esp = espclaw.EspClawSessions(D, truncate=espclaw.model_truncate(dev))
        for n in range(30):
            esp.persist(SID, [(1, '{"role":"user","content":"the quokka %d was noted"}' % n, None)])
            esp.persist(SID, [(2, '{"role":"assistant","content":"noted quokka %d"}' % n, None)],
                        turn_completed=True)
        runs = [0]
        update = search_mod.indexer.update

        def counted(*a):
            runs[0] += 1
            return update(*a)

        search_mod.indexer.update = counted
        try:
            got = Sessions(D).search("noted quokka", 5, [SID])
        finally:
            search_mod.indexer.update = update
        eq(runs[0], 1, "%s: the index brought up once" % kind)
        eq(len(got), 5, kind)
        ok(all("quokka" in t for _, t in texts(got)), "%s: the new records: %r" % (kind, got))
        dev.unmount()


def test_a_blocks_buckets_are_read_forward():
    # littlefs keeps a file's last read stretch in a cache: a query's terms are looked up in
    # the order of their buckets (the same in every block), so two buckets in one stretch
    # cost one read of the flash, and no block is read backwards
    dev, s = fresh("lfs2", blocks=512)
    with Unmerged():  # (blocks as written: several)
        for n in range(40):
            turn(s, U1, n)
        s.close()
    query = "violin sister boiler bicycle wifi apple Thursdays carbonara fridge butter"
    keys = [h & tix.KEY for h in search_mod.query_hashes(query)]
    ok(keys != sorted(keys), "the query's own order is not its buckets' (else the test shows nothing)")
    seen = []
    find = tix.Block.find

    def spy(self, f, d, h):
        seen.append((self.pos, self.bucket(d, h)[0]))
        return find(self, f, d, h)

    tix.Block.find = spy
    try:
        got = Sessions(D).search(query, 3, [U1])
    finally:
        tix.Block.find = find
    ok(got, "found")
    blocks = set(p for p, _ in seen)
    ok(len(seen) >= 2 * len(blocks) >= 4, "several blocks, several terms each: %r" % seen)
    for (p0, a0), (p1, a1) in zip(seen, seen[1:]):
        if p0 == p1:
            ok(a0 <= a1, "block %d: bucket at %d read after one at %d" % (p0, a1, a0))


@heap("16M")
def test_a_sessions_answers_between_writes_are_those_of_a_fresh_one():
    # One Sessions searched between every kind of write (turns that compact into archive
    # segments, a merge at flush, a deletion, a repair): each answer that of a Sessions that
    # opens every file afresh
    for kind in ("lfs2", "fat"):
        dev, s = archive_run(kind, n=30)
        for n in range(6):
            turn(s, U2, n)
        queries = ("boiler Hendrik March", "violin Thursdays", "lookup result 7", "noted 33")

        def same(what):
            for q in queries:
                for ids in ([SID], [SID, U2], None):
                    eq(s.search(q, 5, ids), Sessions(D).search(q, 5, ids), "%s %s: %r %r" % (kind, what, q, ids))

        same("first")
        for i in range(30, 45):  # (compactions move turns into archive segments)
            turn(s, SID, i, pad="p" * 40)
            if i % 5 == 0:
                same("turn %d" % i)
        s.flush()
        same("flushed")
        s.delete(U2)
        same("U2 deleted")
        s.repair(SID)
        same("repaired")
        s.close()
        dev.unmount()
