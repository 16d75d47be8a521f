# The pending file after a completed turn: left stale (its records logged, nothing written),
# rewritten from its start by the next turn's first persist (in place on FAT, by a truncating
# open on littlefs), never replayed twice, emptied before a compaction, removed on close; what
# a persisted turn costs in flash operations on both filesystems.
import os

import cutmatrix
import espclaw
from flashsim import mount
from mptest import eq, ok, timeout
from turns import (D, SID, call as _call, espclaw_files, final as _final, log as _log, result as _result,
                   tags as _tags, turn as _turn, user as _user)

import claw_memory
from claw_memory import fsutil
from claw_memory.session import Sessions

HEAP = "16M"
PEND = ".pending"


def _fresh(kind, **kw):
    dev = mount(kind, "/flash", blocks=256)
    fsutil.makedirs(D)
    return dev, Sessions(D, **kw)


def _read(path):
    with open(path, "rb") as f:
        return f.read()


def _want(turns, extra=()):
    out = []
    for n in turns:
        out += [("user", str(n)), ("call", str(n)), ("tool", str(n)), ("final", str(n))]
    return out + list(extra)


def test_names_ignore_case_only_on_fat():
    for kind, want in (("fat", True), ("lfs2", False)):
        dev = mount(kind, "/flash", blocks=256)
        fsutil.makedirs(D)
        eq(fsutil.ignores_case(D), want, kind)
        dev.unmount()


def test_a_completed_turn_leaves_the_pending_file_stale_and_replays_it_once():
    for kind in ("lfs2", "fat"):
        dev, s = _fresh(kind)
        _turn(s, 0, pad=300)
        pend = _log() + PEND
        ok(fsutil.exists(pend), "%s: the pending file stays after the turn" % kind)
        eq(s.stat(SID)["pending"], 0, "%s: nothing pending" % kind)
        eq(_tags(s.messages(SID, tokens=0)), _want([0]), "%s: each record once" % kind)
        rep = s.verify(SID)
        eq((rep["pending"], rep["pending_logged"], rep["pending_dropped"]), (0, 0, 0),
           "%s: a stale file is no damage" % kind)
        dev = dev.reboot()  # a reset: no close
        notes = []
        s = Sessions(D, log=notes.append)
        eq(_tags(s.messages(SID, tokens=0)), _want([0]), "%s: after a reset, once" % kind)
        eq(notes, [], "%s: opening it repairs nothing" % kind)
        ok(not fsutil.exists(pend), "%s: the next open removes the stale file" % kind)
        dev.unmount()


def test_the_next_turn_rewrites_the_stale_file_from_its_start():
    for kind, in_place in (("fat", True), ("lfs2", False)):
        dev, s = _fresh(kind)
        _turn(s, 0, pad=600)  # a long tool result: the stale file is longer than what follows
        pend = _log() + PEND
        stale = fsutil.size(pend)
        s.persist(SID, [(1, _user(1), None)])
        data = _read(pend)
        eq(data.startswith(b"P %d\n" % fsutil.size(_log())), True, "%s: header names the log size" % kind)
        head = data.split(b"\n", 2)
        eq(head[1], b"11" + _user(1).encode(), "%s: the new record first" % kind)
        if in_place:
            eq(len(data), stale, "fat: rewritten in place (same clusters, same size)")
            eq(head[2][:1], b"\x00", "fat: the stale rest cut off by the end mark")
        else:
            eq(len(data), len(head[0]) + len(head[1]) + 2, "lfs2: a new file holds only the record")
        dev = dev.reboot()
        s = Sessions(D)
        eq(_tags(s.messages(SID, tokens=0)), _want([0], [("user", "1")]),
           "%s: the stale rest is not replayed" % kind)
        eq(s.stat(SID)["pending"], 1, "%s: one record pending" % kind)
        # A mid-turn batch after a reopen goes after the records, over the end mark.
        s.persist(SID, [(3, '{"role":"assistant","tool_calls":[{"id":"c1","type":"function","function":{"name":"t","arguments":"{}"}}]}', None),
                        (4, '[{"role":"tool","tool_call_id":"c1","content":"r","is_error":false}]', None)])
        s.persist(SID, [(2, '{"role":"assistant","content":"final 1"}', None)], turn_completed=True)
        dev = dev.reboot()
        s = Sessions(D)
        eq(_tags(s.messages(SID, tokens=0)), _want([0, 1]), "%s: both turns once" % kind)
        dev.unmount()


def test_a_compaction_empties_the_stale_file_and_close_removes_it():
    for kind in ("lfs2", "fat"):
        dev, s = _fresh(kind, size_limit=2500)
        for n in range(6):
            _turn(s, n, pad=300)
        pend = _log() + PEND
        ok(fsutil.exists(pend), "%s: stale after the last turn" % kind)
        s.compact(SID)
        eq(_read(pend)[:2], b"P ", "%s: still there after a compaction" % kind)
        eq(_read(pend).split(b"\n")[1][:1], b"\x00", "%s: holding no records" % kind)
        _turn(s, 6, pad=300)
        ok(fsutil.exists(pend), "%s: stale after the next turn" % kind)
        s.close()
        ok(not fsutil.exists(pend), "%s: close() removes the stale file" % kind)
        eq(espclaw_files(os.listdir(D)), sorted([_log()[len(D) + 1:], _log()[len(D) + 1:] + ".idx"]),
           "%s: exactly ESP-Claw's pair (and files of ours only)" % kind)
        dev = dev.reboot()
        s = Sessions(D, size_limit=2500)
        got = _tags(s.messages(SID, tokens=0))
        ok(all(got.count(t) == 1 for t in got), "%s: nothing twice after compactions: %r" % (kind, got))
        eq(got[-4:], _want([6]), "%s: the newest turn whole" % kind)
        dev.unmount()


def test_esp_claw_appends_after_a_reset_with_a_stale_file():
    for kind in ("lfs2", "fat"):
        dev, s = _fresh(kind)
        _turn(s, 0, pad=200)
        _turn(s, 1, pad=200)
        dev = dev.reboot()  # reset between turns: the pending file is stale
        esp = espclaw.EspClawSessions(D)
        esp.persist(SID, [(1, '{"role":"user","content":"user 2"}', None)])
        esp.persist(SID, [(2, '{"role":"assistant","content":"final 2"}', None)], True)
        s = Sessions(D)
        eq(_tags(s.messages(SID, tokens=0)), _want([0, 1], [("user", "2"), ("final", "2")]),
           "%s: ours once, then ESP-Claw's" % kind)
        dev.unmount()


def _turn_ops(kind, turns, window=16):
    dev = mount(kind, "/flash", blocks=512)
    mem = claw_memory.open("/flash", extract=False)
    for n in range(turns):
        _turn(mem.sessions, n, pad=400)
    before = dev.ops
    for n in range(turns, turns + window):
        _turn(mem.sessions, n, pad=400)
    ops = (dev.ops - before) / window
    mem.close()
    dev.unmount()
    return ops


def test_a_persisted_turn_costs_few_flash_operations():
    # Three persists per turn. FAT on raw flash: a durable write is a data sector and the
    # directory sector, each erased and programmed (4 operations), so three writes cost 12
    # plus the log's cluster allocations; creating and removing the pending file every turn
    # cost 8 more (22 per turn before the stale pending file). littlefs: the two pending
    # writes and the log append, which copies the log's partly filled last block.
    fat = _turn_ops("fat", 30)
    print("ops per turn: fat %.1f" % fat)
    ok(fat <= 15, "fat: at most 15 operations per turn, got %.1f" % fat)
    lfs = _turn_ops("lfs2", 30)
    print("ops per turn: lfs2 %.1f" % lfs)
    ok(lfs <= 45, "lfs2: at most 45 operations per turn, got %.1f" % lfs)


# (turn, tool result padding, a new Sessions before the tool round): a long turn, a short one
# (its first persist rewrites the stale file over a longer rest), a reopen with the rest still
# behind the records, then a turn longer than the file.
_PLAN = [(0, 900, False), (1, 20, False), (2, 60, True), (3, 1500, False)]


def _pending_workload(acked):
    fsutil.makedirs(D)
    s = Sessions(D)
    for n, pad, reopen in _PLAN:
        s.persist(SID, [(1, _user(n), None)])
        acked.append([("user", str(n))])
        if reopen:
            s = Sessions(D)
        s.persist(SID, [(3, _call(n), None), (4, _result(n, pad), None)])
        acked.append([("call", str(n)), ("tool", str(n))])
        s.persist(SID, [(2, _final(n), None)], turn_completed=True)
        acked.append([("final", str(n))])


def _pending_check(acked):
    """Every acknowledged record once and in order, then at most the batch in flight."""
    got = _tags(Sessions(D).messages(SID, tokens=0))
    want = [t for batch in acked for t in batch]
    everything = []
    for n, pad, reopen in _PLAN:
        everything += _want([n])
    ok(got == everything[: len(got)], "records in order, none twice: %r" % (got,))
    lost = max(len(want) - len(got), 0)
    ok(len(got) - len(want) <= 2, "only the batch in flight beyond the acknowledged: %r" % (got,))
    return lost


@timeout(600)
def test_the_pending_rewrites_cut_anywhere_keep_every_acknowledged_record_once():
    for config in ("lfs2-4096", "fat-sd-4096", "fat-sd-512"):
        for torn in (False, True):
            res = cutmatrix.run(config, _pending_workload, _pending_check, torn=torn, kib=512)
            print(cutmatrix.line(res))
            ok(res["cuts"] > 20, "%s: the matrix ran" % config)
            eq(res["failures"], [], "%s torn=%s: every cut recovered" % (config, torn))
            eq(res["lost"], 0, "%s torn=%s: nothing acknowledged lost" % (config, torn))


def test_a_second_batch_over_a_longer_stale_file_ends_before_its_rest():
    # A turn of three tool rounds leaves a long stale file. The next turn's first persist
    # rewrites it in place (FAT) over its start, and its tool round lands exactly on the old
    # turn's first round: the old rounds after it are whole lines behind the new records, and
    # must not come back as this turn's after a reset.
    for kind in ("fat", "lfs2"):
        dev, s = _fresh(kind)
        s.persist(SID, [(1, _user(0), None)])
        for r in ("a", "b", "c"):
            s.persist(SID, [(3, _call("0" + r), None), (4, _result("0" + r, 40), None)])
        s.persist(SID, [(2, _final(0), None)], turn_completed=True)
        s.persist(SID, [(1, _user(1), None)])
        s.persist(SID, [(3, _call("1a"), None), (4, _result("1a", 40), None)])
        dev = dev.reboot()  # a reset in the middle of the turn
        s = Sessions(D)
        old = [("user", "0")]
        for r in ("a", "b", "c"):
            old += [("call", "0" + r), ("tool", "0" + r)]
        new = [("user", "1"), ("call", "1a"), ("tool", "1a")]
        eq(_tags(s.messages(SID, tokens=0)), old + [("final", "0")] + new,
           "%s: the turn in progress holds its own records only" % kind)
        s.persist(SID, [(2, _final(1), None)], turn_completed=True)
        dev = dev.reboot()
        s = Sessions(D)
        eq(_tags(s.messages(SID, tokens=0)), old + [("final", "0")] + new + [("final", "1")],
           "%s: both turns once" % kind)
        dev.unmount()
