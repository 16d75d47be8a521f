# What ESP-Claw's firmware does to a session while ours is not running, and what ours finds
# afterwards: a turn of its own after our unfinished one, `/session delete` (it removes the
# log, its index and block marker, never our files), a new session under the deleted name,
# its in-place compaction; and our own rewrites of a log with a turn pending or with archive
# segments, cut by a power loss anywhere.
import os

import cutmatrix
import espclaw
from flashsim import mount
from mptest import eq, ok, timeout
from search_cases import D, SID
from search_cases import turn as _topic_turn
from turns import esp_replay, final as _final, tags as _tags, turn as _turn, user as _user

from claw_memory import fsutil
from claw_memory.session import Sessions, file_name
from claw_memory.session import archive as arc
from claw_memory.session import format as fmt_
from claw_memory.session import heads
from claw_memory.session.format import tix as tix_of

HEAP = "16M"
PEND = ".pending"


def _log(sid=SID):
    return D + "/" + file_name(sid)


def _fresh(kind, blocks=512, **kw):
    dev = mount(kind, "/flash", blocks=blocks)
    fsutil.makedirs(D)
    return dev, Sessions(D, **kw)


def _esp_delete(sid=SID):
    # ESP-Claw's `/session delete`: unlink the log, its index and its block marker.
    for suffix in ("", ".idx", ".blocked"):
        if fsutil.exists(_log(sid) + suffix):
            os.remove(_log(sid) + suffix)


def _esp_turn(word):
    esp = espclaw.EspClawSessions(D)
    esp.persist(SID, [(1, _user(word), None)])
    esp.persist(SID, [(2, _final(word), None)], True)


def test_an_unfinished_turn_esp_claw_moved_past_is_dropped_not_appended_after_its_turns():
    for kind in ("lfs2", "fat"):
        dev, s = _fresh(kind, blocks=256)
        _turn(s, 0, pad=200, sid=SID)
        _turn(s, 1, pad=200, sid=SID)
        s.persist(SID, [(1, _user(2), None)])  # unfinished when the firmware is switched
        s.close()
        ok(fsutil.exists(_log() + PEND), "%s: (the unfinished turn waits)" % kind)
        dev = dev.reboot()
        _esp_turn("e")  # ESP-Claw's firmware goes on with the conversation
        notes = []
        s = Sessions(D, log=notes.append)
        eq(s.verify(SID)["pending_superseded"], 1, "%s: verify names the superseded record" % kind)
        want = [("user", "0"), ("call", "0"), ("tool", "0"), ("final", "0"),
                ("user", "1"), ("call", "1"), ("tool", "1"), ("final", "1"),
                ("user", "e"), ("final", "e")]
        eq(_tags(s.messages(SID, tokens=0)), want, "%s: ESP-Claw's turn last, ours not after it" % kind)
        ok(any("unfinished turn" in n for n in notes), "%s: the drop is noted: %r" % (kind, notes))
        ok(not fsutil.exists(_log() + PEND), "%s: the pending file removed" % kind)
        _turn(s, 3, tools=False, sid=SID)
        s.close()
        got = esp_replay(_log())
        eq(len(got), len(want) + 2, "%s: ESP-Claw reads every record once" % kind)
        eq([m["content"] for m in got[-4:]], ["user e", "final e", "user 3", "final 3"],
           "%s: the next turn follows ESP-Claw's, and ESP-Claw reads it so" % kind)
        dev.unmount()


def test_whole_records_after_the_turn_that_no_index_names_keep_it_pending():
    # A completing append cut by a power loss leaves bytes no index names; on FAT they may be
    # a reused cluster's old records, whole lines. The turn stays pending.
    for kind in ("lfs2", "fat"):
        dev, s = _fresh(kind, blocks=256)
        _turn(s, 0, pad=100, sid=SID)
        s.persist(SID, [(1, _user(1), None)])
        s.close()
        with open(_log(), "ab") as f:
            f.write((_user(9) + "\n" + _final(9) + "\n").encode())
        s = Sessions(D)
        eq(s.stat(SID)["pending"], 1, "%s: still pending" % kind)
        eq(_tags(s.messages(SID, tokens=0))[-1], ("user", "1"), "%s: the turn replayed" % kind)
        dev.unmount()


def _archived_session(kind):
    dev, s = _fresh(kind, size_limit=6000)
    for i in range(30):
        _topic_turn(s, SID, i, pad="p" * 40)
    s.persist(SID, [(1, None, "secret unfinished question about Lena")])
    s.close()
    segs = arc.segments(D, file_name(SID))
    ok(segs, "%s: (the session has archive segments)" % kind)
    ok(s.search("boiler Hendrik", 5, [SID]), "%s: (its archive is searchable)" % kind)
    return dev, segs


def _nothing_of_the_old_session(kind, s, segs, want):
    eq([(m["role"], m["content"]) for m in s.messages(SID, tokens=0)], want,
       "%s: only the session's own messages" % kind)
    eq(s.search("boiler Hendrik", 5, [SID]), [], "%s: nothing of the deleted one found" % kind)
    eq(s.search("Lena", 5), [], "%s: not even from the whole root" % kind)
    eq(s.page(SID)["total"], len(want), "%s: its pages hold its messages only" % kind)
    eq(arc.segments(D, file_name(SID)), [], "%s: no live segment of the deleted log" % kind)
    for seq, p, size in segs:
        ok(not fsutil.exists(p) and not fsutil.exists(tix_of(p)), "%s: segment %d removed" % (kind, seq))
    if fsutil.exists(_log() + PEND):  # (the new session's own, stale after its turn)
        with open(_log() + PEND, "rb") as f:
            ok(b"secret unfinished" not in f.read(), "%s: its unfinished turn removed" % kind)


def _deleted_by_esp_claw(kind):
    # An archived session with an unfinished turn, deleted by ESP-Claw's firmware.
    dev, segs = _archived_session(kind)
    dev = dev.reboot()
    _esp_delete()
    return dev, segs


def test_a_session_esp_claw_deleted_leaves_nothing_that_comes_back():
    for kind in ("lfs2", "fat"):
        dev, segs = _deleted_by_esp_claw(kind)
        notes = []
        s = Sessions(D, size_limit=6000, log=notes.append)
        eq(s.search("Lena", 5), [], "%s: a search of the whole root finds nothing" % kind)
        for p in (_log() + PEND, tix_of(_log())):
            ok(not fsutil.exists(p), "%s: the search removed %s too" % (kind, p))
        _nothing_of_the_old_session(kind, s, segs, [])
        ok(any("ESP-Claw deleted" in n for n in notes), "%s: noted: %r" % (kind, notes))
        s.close()  # (the files its searches keep open hold this flash's image)
        dev.unmount()


def test_a_new_session_under_a_name_esp_claw_deleted_is_not_the_old_one():
    for kind in ("lfs2", "fat"):
        dev, segs = _deleted_by_esp_claw(kind)
        _esp_turn("fresh")  # `/session new` with the same name, and a turn
        s = Sessions(D, size_limit=6000)
        _nothing_of_the_old_session(kind, s, segs, [("user", "user fresh"), ("assistant", "final fresh")])
        dev.unmount()


def test_a_new_session_of_ours_under_a_name_esp_claw_deleted_is_not_the_old_one():
    # Made again by this library (`/session new` with the same name on our firmware): its
    # index names its first turn from the start, so its head is read.
    for kind in ("lfs2", "fat"):
        dev, segs = _deleted_by_esp_claw(kind)
        s = Sessions(D, size_limit=6000)
        s.persist(SID, [(1, None, "user fresh")])
        s.persist(SID, [(2, None, "final fresh")], turn_completed=True)
        _nothing_of_the_old_session(kind, s, segs, [("user", "user fresh"), ("assistant", "final fresh")])
        dev.unmount()


def test_a_new_session_esp_claw_made_under_the_name_whose_first_turn_is_not_answered():
    # ESP-Claw logs the user record at once: a log with no answer yet is still another log.
    dev, segs = _deleted_by_esp_claw("lfs2")
    espclaw.EspClawSessions(D).persist(SID, [(1, _user("fresh"), None)])
    s = Sessions(D, size_limit=6000)
    _nothing_of_the_old_session("lfs2", s, segs, [("user", "user fresh")])
    dev.unmount()


def _segs():
    return [seq for seq, p, size in arc.segments(D, file_name(SID))]


def test_an_emptied_log_keeps_its_archive():
    # (damage, or ESP-Claw's reset of a session it rejects: the log is there, with no head)
    for kind in ("lfs2", "fat"):
        dev, segs = _archived_session(kind)
        with open(_log(), "wb"):
            pass
        s = Sessions(D, size_limit=6000)
        ok(any(h["archived"] for h in s.search("boiler Hendrik", 5, [SID])), "%s: still found" % kind)
        eq(_segs(), [seq for seq, p, size in segs], "%s: every segment kept" % kind)
        dev.unmount()


def test_a_log_whose_head_records_are_damaged_keeps_its_archive():
    # Zeroed, erased or torn bytes in the log's first user or final record changed its head
    # print: the next search took the log for a new one and removed its whole archive as an
    # ESP-Claw-deleted session's. A damaged head cannot be told: the archive stays its log's.
    for kind in ("lfs2", "fat"):
        for fill, where in ((b"\x00", "user"), (b"\xff", "user"), (b"\x00", "final")):
            dev, segs = _archived_session(kind)
            with open(_log() + ".idx", "rb") as f:
                n = fmt_.entry_count(f.seek(0, 2))
                off = [e[1] for e in fmt_.entries(f, n) if e[3] == (1 if where == "user" else 2)][0]
            with open(_log(), "r+b") as f:
                f.seek(off + 8)
                f.write(fill * 12)
            notes = []
            s = Sessions(D, size_limit=6000, log=notes.append)
            label = "%s %r in the first %s" % (kind, fill, where)
            ok(any(h["archived"] for h in s.search("boiler Hendrik", 5, [SID])), "%s: still found" % label)
            eq(_segs(), [seq for seq, p, size in segs], "%s: every segment kept" % label)
            ok(not any("ESP-Claw deleted" in n for n in notes), "%s: %r" % (label, notes))
            s.repair(SID)  # (the damaged record removed: the new head's print is written)
            s = Sessions(D, size_limit=6000)
            ok(any(h["archived"] for h in s.search("boiler Hendrik", 5, [SID])), "%s: after repair" % label)
            eq(_segs(), [seq for seq, p, size in segs], "%s: kept after repair" % label)
            dev.unmount()


def test_another_sessions_compaction_does_not_make_the_archive_an_orphan():
    # A's head print of the log is from before B compacted it into the archive again.
    dev, segs = _archived_session("lfs2")
    notes = []
    a = Sessions(D, size_limit=6000, log=notes.append)
    ok(a.search("boiler Hendrik", 5), "(A has read the log's head)")
    b = Sessions(D, size_limit=6000)
    for i in range(30, 45):
        _topic_turn(b, SID, i, pad="p" * 40)
    more = _segs()
    ok(len(more) > len(segs), "(B compacted into the archive)")
    ok(any(h["archived"] for h in a.search("boiler Hendrik", 50, [SID])), "A still finds the archive")
    eq(_segs(), more, "every segment kept")
    eq([n for n in notes if "removed" in n], [], "nothing removed")
    dev.unmount()


def _deleting(segs):
    # An archive limit that keeps the newest segment alone (the older goes at the first use),
    # under which a compaction's dropped records alone pass it: it deletes them, as ESP-Claw
    ok(len(segs) >= 2, "(two segments at least)")
    return segs[-1][2]


def test_rewrites_that_fail_before_their_commit_keep_the_archive_the_logs():
    # Each names the log on flash and the new one: two failed in a row leave the log as it was.
    dev, segs = _archived_session("lfs2")
    limit = _deleting(segs)
    real = fsutil.commit

    def failing(journal, paths):
        raise OSError(5, "EIO")

    fsutil.commit = failing
    notes = []
    try:
        s = Sessions(D, size_limit=6000, archive_limit=limit)
        s._note = notes.append
        for i in range(30, 50):
            _topic_turn(s, SID, i, pad="p" * 40)
        s = Sessions(D, size_limit=4500, archive_limit=limit)
        s._note = notes.append
        _topic_turn(s, SID, 60, pad="p" * 40)
    finally:
        fsutil.commit = real
    ok([n for n in notes if "housekeeping" in n], "(the rewrites failed)")
    s = Sessions(D, size_limit=6000, archive_limit=limit)
    ok(any(h["archived"] for h in s.search("boiler Hendrik", 50, [SID])), "the archive found")
    eq(_segs(), [segs[-1][0]], "the segment within the limit kept")
    dev.unmount()


def test_a_line_whose_print_is_not_its_logs_takes_only_its_segment():
    dev, segs = _archived_session("lfs2")
    ok(len(segs) >= 2, "(several segments)")
    with open(D + "/archive.list", "rb") as f:
        lines = f.read().split(b"\n")
    head, p = lines[1].rsplit(b" ", 1)
    lines[1] = head + b" " + (b"%08x" % (int(p, 16) ^ 0x10000))  # another first record
    with open(D + "/archive.list", "wb") as f:
        f.write(b"\n".join(lines))
    s = Sessions(D, size_limit=6000)
    s.search("boiler Hendrik", 5, [SID])
    eq(_segs(), [seq for seq, p, size in segs[1:]], "the others stay")
    ok(not fsutil.exists(segs[0][1]), "that one removed")
    dev.unmount()


def test_a_catalog_line_with_a_bad_print_field_is_damaged():
    for field in (b"1234567", b"ABCDEF01", b"0x123456", b"-1234567", b"12345678,1,2", b"1234567g",
                  b"12345678,12345678,12345678", b""):
        ok(arc._parse(b"3 100 0 s_a_00000000.log " + field + b"\n") is None, "refused: %r" % field)
    eq(arc._parse(b"3 100 0 s_a_00000000.log 0000abcd,12345678\n")[5], (0xABCD, 0x12345678), "two prints")
    eq(arc._parse(b"3 100 0 s_a_00000000.log\n")[5], (), "none")


def test_a_whole_root_search_reads_each_head_once():
    dev = mount("lfs2", "/flash", blocks=1024)
    fsutil.makedirs(D)
    s = Sessions(D, size_limit=4000)
    sids = ["chat:web:u%d:default_01" % n for n in range(20)]
    for sid in sids:
        for i in range(14):
            _topic_turn(s, sid, i, pad="p" * 40)
    ok(all(arc.segments(D, file_name(sid)) for sid in sids), "(20 logs with segments)")
    s = Sessions(D, size_limit=4000)
    real = heads.head_print
    calls = []

    def counted(log, idx=None):
        calls.append(log)
        return real(log, idx)

    heads.head_print = counted
    try:
        s.search("boiler Hendrik", 5)
        eq(len(calls), 20, "each log's head read by the first search")
        del calls[:]
        s.search("violin lesson", 5)
        eq(calls, [], "and not again")
    finally:
        heads.head_print = real
    dev.unmount()


def test_esp_claw_compacting_the_log_in_place_keeps_its_archive():
    # ESP-Claw's compaction keeps every user and final record in order: the head our catalog
    # names is still there, and so are the segments.
    dev, segs = _archived_session("lfs2")
    s = Sessions(D, size_limit=6000)
    s.messages(SID, tokens=0)  # (the unfinished turn settled)
    s.close()
    esp = espclaw.EspClawSessions(D, limit=1000)
    esp.persist(SID, [(2, '{"role":"assistant","content":"an answer at last"}', None)], True)
    ok(fsutil.size(_log()) < 6000, "(ESP-Claw compacted it in place)")
    s = Sessions(D, size_limit=6000)
    eq(len(arc.segments(D, file_name(SID))), len(segs), "every segment still listed")
    ok(s.search("boiler Hendrik", 5, [SID]), "the archive still found")
    eq(s.page(SID, limit=50)["total"] > 30, True, "pages continue into the archive")
    dev.unmount()


def test_our_compaction_that_deletes_keeps_the_older_segments():
    # A compaction without the archive (what it drops passes archive_limit alone) rewrites
    # the log's head: the segments a former compaction made are still the log's.
    dev, segs = _archived_session("lfs2")
    limit = _deleting(segs)
    s = Sessions(D, size_limit=12000, archive_limit=limit)
    notes = []
    s._note = notes.append
    for i in range(30, 60):
        _topic_turn(s, SID, i, pad="p" * 40)
    s.close()
    ok([n for n in notes if "oldest dropped" in n and "(0 oldest" not in n], "(whole turns dropped: %r)" % notes)
    eq([n for n in notes if "moved to archive" in n], [], "(none into the archive)")
    s = Sessions(D, size_limit=6000, archive_limit=limit)
    ok(any(h["archived"] for h in s.search("boiler Hendrik", 50, [SID])), "still found in the archive")
    eq([p for _, p, _ in arc.segments(D, file_name(SID))], [segs[-1][1]], "the same segment")
    dev.unmount()


# A rewrite of a log with a turn pending, cut anywhere: the explicit compaction of a session
# with archive segments mid-turn, then the turn completed.
def _rewrite_workload(acked):
    fsutil.makedirs(D)
    s = Sessions(D, size_limit=6000)
    for i in range(24):
        _topic_turn(s, SID, i, pad="p" * 40)
    s.persist(SID, [(1, None, "pending question about the violin")])
    acked.append("pending")
    s.compact(SID)
    acked.append("compacted")
    s.persist(SID, [(2, None, "pending answer")], turn_completed=True)
    acked.append("answer")


def _rewrite_check(acked):
    s = Sessions(D, size_limit=6000)
    msgs = [m["content"] for m in s.messages(SID, tokens=0)]
    lost = 0
    if "pending" in acked and "pending question about the violin" not in msgs:
        lost += 1
    if "answer" in acked and "pending answer" not in msgs:
        lost += 1
    ok(msgs.count("pending question about the violin") <= 1, "the question once: %r" % msgs[-3:])
    if "pending" in acked:
        ok(s.search("boiler Hendrik", 5, [SID]), "the archive still the session's")
    return lost


@timeout(900)
def test_a_rewrite_of_the_log_with_a_turn_pending_cut_anywhere_keeps_it_and_the_archive():
    # (fat-sd-4096: 512-byte sectors add FatFs's rename cross-link, test_session_powercut's)
    for config in ("lfs2-4096", "fat-sd-4096"):
        for torn in (False, True):
            res = cutmatrix.run(config, _rewrite_workload, _rewrite_check, torn=torn, kib=512, every=3)
            print(cutmatrix.line(res))
            ok(res["cuts"] > 20, "%s: the matrix ran" % config)
            eq(res["failures"], [], "%s torn=%s: every cut recovered" % (config, torn))
            eq(res["lost"], 0, "%s torn=%s: nothing acknowledged lost" % (config, torn))


def test_a_turn_written_behind_a_cached_session_is_found_at_its_next_write():
    # On the board's flash a Sessions takes a cached session's files as checked until the
    # library writes (sessions._open). Another program's writes in the same run (only a test
    # can make ESP-Claw's code run beside ours) are then found by the next append itself: it
    # finds the log or index not ending where it expected, writes nothing there, and opens
    # the session again. Nothing is lost or indexed wrong, and ESP-Claw reads every record.
    for kind in ("lfs2", "fat"):
        dev, s = _fresh(kind, blocks=256)
        _turn(s, 0, tools=False, sid=SID)  # (the first turn creates the .idx)
        _turn(s, 1, tools=False, sid=SID)  # (its entries wait in RAM: index_every 4)
        _esp_turn("e")
        s.persist(SID, [(1, _user(2), None)])
        s.persist(SID, [(2, _final(2), None)], turn_completed=True)
        want = [("user", "0"), ("final", "0"), ("user", "1"), ("final", "1"),
                ("user", "e"), ("final", "e"), ("user", "2"), ("final", "2")]
        eq(_tags(s.messages(SID, tokens=0)), want, kind + ": every turn once, in order")
        _esp_turn("f")  # (then a turn in one persist: its append finds the log moved)
        s.persist(SID, [(1, _user(3), None), (2, _final(3), None)], turn_completed=True)
        want += [(r, str(n)) for n in ("f", 3) for r in ("user", "final")]
        eq(_tags(s.messages(SID, tokens=0)), want, kind + ": ESP-Claw's second turn seen")
        _turn(s, 4, tools=False, sid=SID)
        _esp_turn("g")  # (then the index entries waiting in RAM: their append finds it moved)
        s.close()
        want += [(r, str(n)) for n in (4, "g") for r in ("user", "final")]
        order = ["%s %s" % (r, n) for r, n in want]
        got = [order.index(m["content"]) for m in esp_replay(_log())]
        eq(got, sorted(set(got)), kind + ": the index names records in the log's order, once")
        s = Sessions(D)
        eq(_tags(s.messages(SID, tokens=0)), want, kind + ": reopened")
        eq(s.verify(SID)["dropped"], 0, kind + ": nothing to drop")
        s.close()
        eq([(m["role"], m["content"]) for m in esp_replay(_log())],
           [("user" if r == "user" else "assistant", "%s %s" % (r, n)) for r, n in want],
           kind + ": ESP-Claw's replay")
        dev.unmount()


def test_an_index_removed_behind_a_cached_session_is_rebuilt_at_its_next_use():
    # Another program removes the index alone (a host tool that has it rebuilt). The next
    # turn's entries find it not ending where they expected and are dropped: the session must
    # then be looked up again, not taken as checked (its cached entry count names an index
    # that is gone), so the history has every turn and the index is rebuilt from the log.
    for kind in ("lfs2", "fat"):
        dev, s = _fresh(kind, blocks=256, index_every=1)
        _turn(s, 0, tools=False, sid=SID)
        _turn(s, 1, tools=False, sid=SID)
        os.remove(_log() + ".idx")
        _turn(s, 2, tools=False, sid=SID)
        want = [(r, str(n)) for n in range(3) for r in ("user", "final")]
        eq(_tags(s.messages(SID, tokens=0)), want, kind + ": every turn, from the log")
        _turn(s, 3, tools=False, sid=SID)
        want += [("user", "3"), ("final", "3")]
        eq(_tags(s.messages(SID, tokens=0)), want, kind + ": and the next one")
        s.close()
        eq([m["content"] for m in esp_replay(_log())], ["%s %s" % t for t in want],
           kind + ": ESP-Claw reads every record once, in order")
        dev.unmount()


def test_a_compaction_asked_for_keeps_a_turn_written_behind_the_cached_session():
    # A compaction rewrites the log from what the session's state names: asked for (not after
    # a turn, whose append has just checked the log's end), the files are looked up first,
    # should another program have written them since they were checked.
    for kind in ("lfs2", "fat"):
        dev, s = _fresh(kind, blocks=256, size_limit=3000)
        for n in range(4):
            _turn(s, n, tools=False, sid=SID)
        _esp_turn("e")
        eq(s.compact(SID), None, kind + ": compacted, not blocked")
        want = [(r, str(n)) for n in (0, 1, 2, 3, "e") for r in ("user", "final")]
        eq(_tags(s.messages(SID, tokens=0)), want, kind + ": ESP-Claw's turn kept")
        s.close()
        eq([m["content"] for m in esp_replay(_log())], ["%s %s" % t for t in want],
           kind + ": and ESP-Claw reads it")
        dev.unmount()


def _unfinished_then_esp_claw(kind):
    # One turn, then an unfinished one when the firmware is switched (the device rebooted)
    dev, s = _fresh(kind, blocks=256)
    _turn(s, 0, tools=False, sid=SID)
    s.persist(SID, [(1, _user(1), None)])
    s.close()
    return dev.reboot()


def test_one_record_esp_claw_logged_right_after_the_turn_began_supersedes_it():
    # ESP-Claw's firmware logged a single record (a question it then had no answer to) where
    # our unfinished turn would have gone: the conversation moved on without our turn.
    for kind in ("lfs2", "fat"):
        dev = _unfinished_then_esp_claw(kind)
        espclaw.EspClawSessions(D).persist(SID, [(1, _user("e"), None)])
        s = Sessions(D)
        eq(s.verify(SID)["pending_superseded"], 1, "%s: verify names the superseded record" % kind)
        eq(_tags(s.messages(SID, tokens=0)), [("user", "0"), ("final", "0"), ("user", "e")],
           "%s: ESP-Claw's question last, ours not after it" % kind)
        dev.unmount()


def test_an_unfinished_turn_of_a_log_esp_claw_emptied_stays():
    # Firmware without a backend format resets a session it rejects: the log emptied, the
    # index a bare header. The log then holds nothing the unfinished turn could come after:
    # the turn stays, and completes as the session's first.
    for kind in ("lfs2", "fat"):
        dev = _unfinished_then_esp_claw(kind)
        with open(_log(), "wb"):
            pass
        with open(_log() + ".idx", "wb") as f:
            f.write(fmt_.HEADER)
        s = Sessions(D)
        eq(s.verify(SID)["pending_superseded"], 0, "%s: not superseded" % kind)
        eq(_tags(s.messages(SID, tokens=0)), [("user", "1")], "%s: the turn still pending" % kind)
        s.persist(SID, [(2, _final(1), None)], turn_completed=True)
        s.close()
        eq([m["content"] for m in esp_replay(_log())], ["user 1", "final 1"],
           "%s: the turn completed, alone in the log" % kind)
        dev.unmount()
