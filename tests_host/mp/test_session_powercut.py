# Power cut at every program/erase operation of a session workload with a compaction midway;
# a damaged start (a torn tail, a torn completing append) cut anywhere and cut again while
# recovering keeps each record once; a deletion cut anywhere leaves the session whole or gone.
import os

import cutmatrix
import workloads
from flashsim import mount
from mptest import eq, ok, timeout
from turns import (D, SID, call as _call, final as _final, log as _log, result as _result,
                   tags as _tags, turn as _turn, user as _user)

import claw_memory
from claw_memory import fsutil

HEAP = "8M"
SLOW = True  # a matrix over every cut or fault: the slow tier


def _matrix(config, every=1):
    for torn in (False, True):
        w, c = workloads.session_turns()
        res = cutmatrix.run(config, w, c, torn=torn, every=every, kib=512)
        print(cutmatrix.line(res))
        for f in res["failures"][:5]:
            print("  cut", f)
        yield res


@timeout(600)
def test_lfs2_every_cut():
    for res in _matrix("lfs2-4096"):
        ok(res["cuts"] > 50, "the workload has many cut points")
        eq(res["failures"], [], "every cut recovered")
        eq(res["lost"], 0, "no acknowledged record lost")


@timeout(600)
def test_fat_sd_model_every_second_cut():
    # FAT with atomic sector writes (SD card): the same guarantees as littlefs, but for
    # 512-byte sectors, where FatFs's rename writes the new directory entry and removes the
    # old one in different sectors: a cut between leaves both on one cluster chain, and the
    # volume reads EIO there (docs/DURABILITY.md). Since compaction moves turns into the
    # archive (one more journal), one cut lands in the rename of the compacted log: recorded,
    # not hidden, and no acknowledged record may be lost.
    for res in _matrix("fat-sd-4096", every=2):
        eq(res["failures"], [], "every cut recovered")
        eq(res["lost"], 0, "no acknowledged record lost")
    for res in _matrix("fat-sd-512", every=2):
        ok(len(res["failures"]) <= 1 and all("EIO" in f[1] for f in res["failures"]),
           "FAT-512 rename cross-links: %r" % (res["failures"],))
        eq(res["lost"], 0, "no acknowledged record lost")


@timeout(600)
def test_fat_raw_flash_never_crashes_recovery():
    # FAT on raw flash (erase + program per sector): a cut between the two wipes a directory
    # or FAT sector; such losses are findings (docs/DURABILITY.md). Recovery must still open
    # the session or report the filesystem as unmountable, never crash.
    for config in ("fat-4096",):
        for res in _matrix(config, every=3):
            for n, why in res["failures"]:
                ok("acknowledged" in why or "does not mount" in why or "Error" in why, why)


# -- a damaged start, a power cut anywhere, and a second cut while recovering --------------

_SCRIPT = [  # (records, turn completed, tags of the records)
    ([(1, _user(2), None)], False, [("user", "2")]),
    ([(3, _call(2), None), (4, _result(2, 40), None)], False, [("call", "2"), ("tool", "2")]),
    ([(2, _final(2), None)], True, [("final", "2")]),
    ([(1, _user(3), None)], False, [("user", "3")]),
    ([(2, _final(3), None)], True, [("final", "3")]),
]


_RECOVER = [  # what the next boot does: one more turn
    ([(1, _user(9), None)], False, [("user", "9")]),
    ([(2, _final(9), None)], True, [("final", "9")]),
]


_BASE = [("user", "0"), ("call", "0"), ("tool", "0"), ("final", "0"),
         ("user", "1"), ("call", "1"), ("tool", "1"), ("final", "1")]


def _torn_tail_setup():
    # Two turns (the second logged but not indexed: no close), then a torn record at the end
    # of the log, as a cut in the middle of an ESP-Claw append leaves it.
    mem = claw_memory.open("/flash")
    _turn(mem.sessions, 0, pad=40)
    mem.close()
    mem = claw_memory.open("/flash")
    _turn(mem.sessions, 1, pad=40)
    with open(_log(), "ab") as f:
        f.write(b'{"role":"assistant","content":"torn rec')
    return _BASE, _SCRIPT


def _torn_completion_setup():
    # A turn in progress whose completing append was cut inside its first record (a file
    # system without atomic appends): the log ends with the start of the pending record.
    mem = claw_memory.open("/flash")
    _turn(mem.sessions, 0, pad=40)
    _turn(mem.sessions, 1, pad=40)
    mem.close()
    mem = claw_memory.open("/flash")
    mem.sessions.persist(SID, [(1, _user(2), None)])
    with open(_log(), "ab") as f:
        f.write(_user(2).encode()[:15])
    return _BASE + [("user", "2")], _SCRIPT[1:]


def _play(script, acked):
    mem = claw_memory.open("/flash")
    for recs, done, tags in script:
        mem.sessions.persist(SID, recs, turn_completed=done)
        acked.append(tags)
    mem.close()


def _flat(batches):
    return [t for tags in batches for t in tags]


def _check(parts):
    """The replayed records are `parts` in order: (records, required) pairs; an optional part
    (an interrupted batch) may appear in part or not at all. Nothing twice, nothing else."""
    mem = claw_memory.open("/flash")
    got = _tags(mem.sessions.messages(SID))
    mem.close()
    for t in got:
        ok(got.count(t) == 1, "record %r appears %d times in %r" % (t, got.count(t), got))
    i = 0
    for recs, required in parts:
        for r in recs:
            if i < len(got) and got[i] == r:
                i += 1
            elif required:
                raise AssertionError("acknowledged record %r missing or out of order in %r" % (r, got))
    ok(i == len(got), "unexpected records %r in %r" % (got[i:], got))


def _maybe(script, acked):
    return script[len(acked)][2] if len(acked) < len(script) else []


def _double_cut(setup, kind, block_size, torn, every=1, erase=True):
    """Start from the damaged state `setup` leaves, cut the script at every operation, then
    cut the next boot (its recovery and one more turn) at every operation."""
    blocks = 256 * 1024 // block_size
    dev = mount(kind, "/flash", blocks=blocks, block_size=block_size, erase_on_write=erase)
    base_records, script = setup()
    base = dev.image()
    ops0 = dev.ops
    _play(script, [])
    total = dev.ops - ops0
    cuts = seconds = 0
    for n in range(0, total, every):
        dev = dev.restore(base)
        acked = []
        dev.cut_power(n, torn)
        try:
            _play(script, acked)
        except OSError:
            pass
        ok(dev.dead, "cut %d reached" % n)
        dev = dev.reboot()
        first = [(base_records + _flat(acked), True), (_maybe(script, acked), False)]
        after_cut = dev.image()
        # The next boot without a second cut: everything acknowledged, the new turn too.
        r0 = dev.ops
        done = []
        _play(_RECOVER, done)
        r_ops = dev.ops - r0
        _check(first + [(_flat(done), True)])
        cuts += 1
        # The next boot cut at every operation of its recovery and its turn.
        for m in range(r_ops):
            dev = dev.restore(after_cut)
            done = []
            dev.cut_power(m, torn)
            try:
                _play(_RECOVER, done)
            except OSError:
                pass
            dev = dev.reboot()
            _check(first + [(_flat(done), True), (_maybe(_RECOVER, done), False)])
            seconds += 1
    dev.unmount()
    return cuts, seconds


@timeout(900)
def test_torn_tail_then_a_turn_cut_anywhere_and_again_while_recovering_keeps_each_record_once():
    for torn in (False, True):
        cuts, seconds = _double_cut(_torn_tail_setup, "lfs2", 4096, torn)
        print("lfs2 torn=%s: %d first cuts, %d second cuts" % (torn, cuts, seconds))
        ok(cuts > 10 and seconds > 50, "the matrix ran")


@timeout(900)
def test_torn_tail_then_a_turn_cut_anywhere_and_again_on_fat_sd():
    cuts, seconds = _double_cut(_torn_tail_setup, "fat", 512, False, erase=False)
    print("fat-512: %d first cuts, %d second cuts" % (cuts, seconds))
    ok(cuts > 10, "the matrix ran")


@timeout(900)
def test_a_torn_completing_append_then_cuts_anywhere_keep_each_record_once():
    cuts, seconds = _double_cut(_torn_completion_setup, "lfs2", 4096, False)
    print("lfs2: %d first cuts, %d second cuts" % (cuts, seconds))
    ok(cuts > 10 and seconds > 50, "the matrix ran")


def _whole_or_gone(torn):
    dev = mount("lfs2", "/flash", blocks=64)
    mem = claw_memory.open("/flash")
    _turn(mem.sessions, 1)
    mem.sessions.persist(SID, [(1, _user(2), None)])  # a pending turn: a .pending file too
    mem.close()
    base = dev.image()
    ops0 = dev.ops
    claw_memory.open("/flash").sessions.delete(SID)
    total = dev.ops - ops0
    outcomes = set()
    for n in range(total):
        dev = dev.restore(base)
        dev.cut_power(n, torn)
        try:
            claw_memory.open("/flash").sessions.delete(SID)
        except OSError:
            pass
        dev = dev.reboot()
        s = claw_memory.open("/flash").sessions
        got = _tags(s.messages(SID, tokens=0))  # the first use finishes a journalled deletion
        left = sorted(os.listdir(D)) if fsutil.is_dir(D) else []
        if got:
            eq(got, [("user", "1"), ("call", "1"), ("tool", "1"), ("final", "1"), ("user", "2")],
               "cut %d: the session whole" % n)
        else:
            eq(left, [], "cut %d: gone, no file of it left" % n)
        outcomes.add(bool(got))
    eq(outcomes, {True, False}, "cuts before and after the deletion began")
    dev.unmount()


@timeout(600)
def test_a_deletion_cut_anywhere_leaves_the_session_whole_or_gone():
    for torn in (False, True):
        _whole_or_gone(torn)
