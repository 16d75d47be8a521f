# Power cuts at every program/erase operation of history search's writes (issue 26): turns
# persisted with the text index on, compactions moving turns into archive segments, the
# archive's bound dropping the oldest segments, a search indexing what its index lacks, a
# /session delete of an archived session, an index rebuilt from scratch. After each cut and a
# reboot: every acknowledged record of the turns the archive still keeps is there once (in the
# log, its pending turn or a segment, never in two), the turns kept are the newest ones, and
# a search returns only records that are there.
import os

import cutmatrix
from mptest import eq, ok, timeout

import claw_memory
from claw_memory import fsutil
from claw_memory.session import archive as arc
from claw_memory.session import file_name
from claw_memory.session.format import index_dir, tix as tix_of

HEAP = "16M"
SLOW = True  # a matrix over every cut: the slow tier

D = "/flash/sessions"
SID = "chat:web:cut:default_01"
LIMIT = 3000  # session bytes: a compaction every few turns
ARCH = 4500  # archive bytes: the bound drops segments in the run
TURNS = 14
WORDS = ("harbor", "violin", "lantern", "tulip", "comet", "granite", "saffron", "meadow",
         "quartz", "falcon", "cobalt", "juniper", "pepper", "willow", "ember", "marble")


def _open():
    return claw_memory.open("/flash", extract=False, session_limit=LIMIT, archive_limit=ARCH)


def _user(n):
    return "user %d: tell me about the %s again" % (n, WORDS[n % len(WORDS)])


def _call(n):
    return ('{"role":"assistant","content":null,"tool_calls":[{"id":"c%d","type":"function",'
            '"function":{"name":"lookup","arguments":"{\\"topic\\":\\"%s\\"}"}}]}'
            % (n, WORDS[n % len(WORDS)]))


def _result(n):
    return ('[{"role":"tool","tool_call_id":"c%d","content":"notes %d on %s %s","is_error":false}]'
            % (n, n, WORDS[n % len(WORDS)], "x" * 150))


def _final(n):
    return '{"role":"assistant","content":"final %d about %s"}' % (n, WORDS[n % len(WORDS)])


def _turn(mem, n, acked):
    mem.sessions.persist(SID, [(1, None, _user(n))])
    acked.append(("user", n))
    mem.sessions.persist(SID, [(3, _call(n), None), (4, _result(n), None)])
    acked.append(("tool", n))
    mem.sessions.persist(SID, [(2, _final(n), None)], turn_completed=True)
    acked.append(("final", n))


def _workload(acked):
    mem = _open()
    for n in range(TURNS):
        _turn(mem, n, acked)
        if n % 5 == 4:
            mem.search(WORDS[(n - 3) % len(WORDS)], 3, session=SID)  # may index what it lacks
    mem.close()


def _tag(raw):
    # (kind, n) of a record's JSON bytes
    if raw.startswith(b"["):
        return "tool", int(raw.split(b"notes ")[1].split(b" ")[0])
    if b'"tool_calls"' in raw:
        return "call", int(raw.split(b'"id":"c')[1].split(b'"')[0])
    if b'"role":"user"' in raw:
        return "user", int(raw.split(b"user ")[1].split(b":")[0])
    return "final", int(raw.split(b"final ")[1].split(b" ")[0])


def _present(mem):
    """[(kind, n, where)] of every record of the session: its archive segments, then the
    log and the pending turn (read first: the session's first use finishes a committed
    compaction, whose catalog names the segments)."""
    logged = [_tag(raw) + ("log",) for kind, fmt, raw in mem.sessions.records(SID)]
    out = []
    for seq, p, size in arc.segments(D, file_name(SID)):
        eq(fsutil.size(p), size, "segment %d: the size its catalog names" % seq)
        with open(p, "rb") as f:
            for line in f.read().split(b"\n"):
                if line and line[:1] in (b"{", b"["):
                    out.append(_tag(line) + ("arc%d" % seq,))
    return out + logged


def _oldest(mem):
    users = [n for k, n, w in _present(mem) if k == "user"]
    return min(users) if users else None


_REF = []  # the oldest turn kept after each acknowledged step of a run without a cut


def _reference():
    if _REF:
        return
    from flashsim import mount

    dev = mount("lfs2", "/flash", blocks=128)
    steps = []
    mem = _open()
    for n in range(TURNS):
        mem.sessions.persist(SID, [(1, None, _user(n))])
        steps.append(_oldest(mem))
        mem.sessions.persist(SID, [(3, _call(n), None), (4, _result(n), None)])
        steps.append(_oldest(mem))
        mem.sessions.persist(SID, [(2, _final(n), None)], turn_completed=True)
        steps.append(_oldest(mem))
        if n % 5 == 4:
            mem.search(WORDS[(n - 3) % len(WORDS)], 3, session=SID)
    mem.close()
    dev.unmount()
    _REF[:] = steps


def _check(acked):
    mem = _open()
    got = _present(mem)
    tags = [(k, n) for k, n, w in got]
    for t in tags:
        if tags.count(t) != 1:
            raise AssertionError("record %r in %r" % (t, [w for k, n, w in got if (k, n) == t]))
    oldest = _oldest(mem)
    k = len(acked)
    # The archive's bound drops the oldest segments: turns from `oldest` on are kept, and
    # never newer ones than a run without a cut keeps at this step (or the next, in flight).
    bound = max(x for x in _REF[max(k - 1, 0) : k + 1] if x is not None) if k else 0
    if oldest is not None and oldest > bound:
        raise AssertionError("turns before %d gone, a run without a cut keeps from %d" % (oldest, bound))
    lost = 0
    for kind, n in acked:
        if kind != "tool" and oldest is not None and n >= oldest and (kind, n) not in tags:
            lost += 1
    if acked and oldest is None:
        lost += len([1 for kind, n in acked if kind != "tool"])
    # A search returns only records that are there, and finds the kept turns' words.
    for n in range(TURNS):
        w = WORDS[n % len(WORDS)]
        for h in mem.search(w, 10, session=SID):
            t = h["text"]
            ok(w in t, "a hit holds its word: %r" % h)
            for kind, head in (("user", "user "), ("final", "final "), ("tool", "notes ")):
                if t.startswith(head):
                    ok((kind, int(t[len(head):].split()[0].rstrip(":"))) in tags,
                       "a hit that is there: %r" % h)
    # The next turn works on what survived.
    mem.sessions.persist(SID, [(1, None, _user(99))])
    mem.close()
    return lost


def _matrix(config, every=1):
    _reference()
    for torn in (False, True):
        res = cutmatrix.run(config, _workload, _check, torn=torn, every=every, kib=512)
        print(cutmatrix.line(res))
        for f in res["failures"][:5]:
            print("  cut", f)
        yield res


@timeout(1200)
def test_lfs2_every_cut_of_persist_compaction_archive_and_search():
    for res in _matrix("lfs2-4096"):
        ok(res["cuts"] > 200, "the workload has many cut points")
        eq(res["failures"], [], "every cut recovered")
        eq(res["lost"], 0, "no acknowledged record lost")


@timeout(1200)
def test_fat_sd_every_second_cut_of_persist_compaction_archive_and_search():
    for res in _matrix("fat-sd-4096", every=2):
        eq(res["failures"], [], "every cut recovered")
        eq(res["lost"], 0, "no acknowledged record lost")


def _archived_session():
    mem = _open()
    a = []
    for n in range(TURNS):
        _turn(mem, n, a)
    mem.close()
    ok(arc.segments(D, file_name(SID)), "the session has archive segments")


def _cut_each(config, torn, prepare, op, check, archived=_archived_session):
    # A session archived on `config` (by `archived`), then prepare(), which returns what
    # check() compares with), `op` run once to count its program/erase operations, then cut
    # at each of them (clean or torn) from that same image: op() cut, a reboot, check(n,
    # reference). Returns the number of cuts.
    kind, bs, erase = cutmatrix.CONFIGS[config]
    from flashsim import mount

    dev = mount(kind, "/flash", blocks=512 * 1024 // bs, block_size=bs, erase_on_write=erase)
    archived()
    ref = prepare()
    base = dev.image()
    ops0 = dev.ops
    op()
    total = dev.ops - ops0
    for n in range(total):
        dev = dev.restore(base)
        dev.cut_power(n, torn)
        try:
            op()
        except OSError:
            pass
        dev = dev.reboot()
        check(n, ref)
    dev.unmount()
    return total


def _every_config(matrix):
    # A matrix run on LittleFS and FAT, clean and torn cuts; its cut counts printed.
    for config in ("lfs2-4096", "fat-sd-4096"):
        for torn in (False, True):
            print(config, torn, matrix(config, torn), "cuts")


def _whole_or_gone(config, torn):
    outcomes = set()

    def check(n, want):
        mem = _open()
        got = [(k, m) for k, m, w in _present(mem)]  # the first use finishes a deletion
        if got:
            eq(got, want, "cut %d: the session whole" % n)
            ok(mem.search(WORDS[TURNS - 1], 3, session=SID), "cut %d: and searched" % n)
        else:
            eq(sorted(os.listdir(D)), ["archive.list"] if fsutil.exists(D + "/archive.list") else [],
               "cut %d: gone, no file of it left" % n)
            eq(arc.read(D), [], "cut %d: nor a catalog entry" % n)
        outcomes.add(bool(got))

    total = _cut_each(config, torn, lambda: [(k, n) for k, n, w in _present(_open())],
                      lambda: _open().sessions.delete(SID), check)
    eq(outcomes, {True, False}, "cuts before and after the deletion began")
    return total


@timeout(900)
def test_deleting_an_archived_session_cut_anywhere_leaves_it_whole_or_gone():
    _every_config(_whole_or_gone)


def _lowered(config, torn):
    # archive_limit lowered to 0 and the memory opened: every segment goes at its first use;
    # a cut anywhere leaves each segment listed and whole or gone, and the next first use
    # finishes (the log's records are untouched)
    def first_use():
        mem = claw_memory.open("/flash", extract=False, session_limit=LIMIT, archive_limit=0)
        return mem, mem.sessions.page(SID, 0, 5)

    def check(n, logged):
        got = _present(_open())  # (segments listed: whole, the sizes their catalog names)
        eq([(k, m) for k, m, w in got if w == "log"], logged, "cut %d: the log as it was" % n)
        mem, _ = first_use()
        eq([w for k, m, w in _present(mem) if w != "log"], [], "cut %d: then none left" % n)
        eq([x for x in os.listdir(D) if ".arc" in x], [], "cut %d: no segment file" % n)

    total = _cut_each(config, torn, lambda: [(k, n) for k, n, w in _present(_open()) if w == "log"],
                      first_use, check)
    ok(total > 2, "dropping the segments writes")
    return total


@timeout(900)
def test_a_lowered_archive_limit_cut_anywhere_leaves_segments_whole_or_gone():
    _every_config(_lowered)


def _same_hits(config, torn, away, after=None):
    # The archived session's text indexes taken from their folder (`away()`), then a search
    # that writes them; cut anywhere, the next searches give the same hits as before (then
    # after(n), the cut's own checks). Returns the number of cuts.
    queries = [WORDS[n] for n in range(len(WORDS))]

    def prepare():
        mem = _open()
        want = [mem.search(q, 5, session=SID) for q in queries]
        away()
        return want

    def check(n, want):
        mem = _open()
        eq([mem.search(q, 5, session=SID) for q in queries], want, "cut %d: the same hits" % n)
        if after:
            after(n)

    return _cut_each(config, torn, prepare, lambda: _open().search("violin", 3, session=SID), check)


def _rebuild_matrix(config, torn):
    def away():
        for name in os.listdir(index_dir(D)):
            os.remove(index_dir(D) + "/" + name)

    total = _same_hits(config, torn, away)  # (the search writes every index again)
    ok(total > 5, "a rebuild writes")
    return total


@timeout(900)
def test_an_index_rebuild_cut_anywhere_searches_the_same_afterwards():
    _every_config(_rebuild_matrix)


def _relocate_matrix(config, torn):
    # An older version's root (its text indexes beside the logs, no folder of their own):
    # the first index written moves them into the folder; a cut anywhere in the move leaves
    # the same answers, and the next search finishes it.
    def away():
        for name in os.listdir(index_dir(D)):
            os.rename(index_dir(D) + "/" + name, D + "/" + name)
        os.rmdir(index_dir(D))

    def after(n):
        eq([x for x in os.listdir(D) if ".tix" in x], [], "cut %d: none left beside the logs" % n)
        eq([x for x in os.listdir(index_dir(D)) if not x.endswith(".tix")], [],
           "cut %d: no copy left unfinished" % n)

    total = _same_hits(config, torn, away, after)
    ok(total > 3, "the move writes")
    return total


@timeout(900)
def test_moving_an_older_versions_indexes_cut_anywhere_searches_the_same_afterwards():
    _every_config(_relocate_matrix)


def _repair_archive_matrix(config, torn):
    # The catalog damaged (the line of one segment lost), a stray segment of no session and
    # the text index of no segment: repair() (no session) lists the segment again and removes the
    # strays; a cut anywhere leaves every listed segment whole and each record once, and a
    # repair after the cut finishes: the session's records as before the damage.
    stray = "s_chat_web_gone_0_00000000.log.arc99"

    def prepare():
        want = [(k, n) for k, n, w in _present(_open())]
        lines = open(D + "/archive.list", "rb").read().split(b"\n")
        seq = arc.segments(D, file_name(SID))[0][0]
        with open(D + "/archive.list", "wb") as f:
            f.write(b"\n".join(ln for ln in lines if not ln.startswith(b"%d " % seq)))
        with open(D + "/" + stray, "wb") as f:
            f.write(b'{"role":"user","content":"gone"}\n')
        with open(tix_of(D + "/" + file_name(SID) + ".arc77"), "wb") as f:
            f.write(b"CTIX")
        ok([(k, n) for k, n, w in _present(_open())] != want, "(a segment no longer listed)")
        return want

    def check(n, want):
        mem = _open()
        tags = [(k, m) for k, m, w in _present(mem)]
        for t in tags:
            eq(tags.count(t), 1, "cut %d: record %r once" % (n, t))
        mem.sessions.repair()
        eq([(k, m) for k, m, w in _present(mem)], want, "cut %d: then the session as before" % n)
        eq([x for x in os.listdir(D) if x == stray], [], "cut %d: the stray" % n)
        eq([x for x in os.listdir(index_dir(D)) if x.endswith(".arc77.tix")], [], "cut %d: its index" % n)
        eq(mem.sessions.repair(), {"missing": [], "relisted": [], "removed": []},
           "cut %d: nothing left to repair" % n)

    total = _cut_each(config, torn, prepare, lambda: _open().sessions.repair(), check)
    ok(total > 1, "the repair writes")
    return total


@timeout(900)
def test_an_archive_repair_cut_anywhere_lists_each_segment_whole_and_once():
    _every_config(_repair_archive_matrix)


def _merge_matrix(config, torn):
    # Every text index of an archived session written as small blocks, then merged
    # (session/tixmerge.py): a cut anywhere leaves each index old or new (the same hits), or
    # one a search writes again
    from search_cases import Unmerged

    from claw_memory.session import tix, tixmerge

    queries = [WORDS[n] for n in range(len(WORDS))]
    files = []

    def prepare():
        mem = _open()
        want = [mem.search(q, 5, session=SID) for q in queries]
        files[:] = [D + "/" + n[:-4] for n in sorted(os.listdir(index_dir(D)))]
        ok(any(len(tix.blocks(tix_of(p))[0]) > 1 for p in files), "(blocks to merge)")
        return want

    def merge():
        for p in files:
            tixmerge.settle_file(p)

    def check(n, want):
        mem = _open()
        eq([mem.search(q, 5, session=SID) for q in queries], want, "cut %d: the same hits" % n)

    def archived():
        with Unmerged():
            _archived_session()

    total = _cut_each(config, torn, prepare, merge, check, archived)
    ok(total > 5, "a merge writes")
    return total


@timeout(900)
def test_a_merge_of_text_indexes_cut_anywhere_searches_the_same_afterwards():
    _every_config(_merge_matrix)
