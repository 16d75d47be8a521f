# fsutil's journal commit cut at every operation (issue 13): after recovery the files are all
# old or all new, never a mix, and nothing is left over; a second cut during the recovery
# changes nothing about that.
import os

import cutmatrix
from flashsim import mount
from mptest import eq, ok, timeout

from claw_memory import fsutil

HEAP = "8M"
J = "/flash/j"
NAMES = [J + "/a.json", J + "/b.idx", J + "/c.md"]
JOURNAL = J + "/.commit"
OLD = [b"old a " * 50, b"old b " * 900, b"old c"]  # 300 B, 5400 B (two blocks), 5 B
NEW = [b"new a " * 1000, b"new b", b"new c " * 30]  # grows past a block, shrinks, grows


def _read(path):
    with open(path, "rb") as f:
        return f.read()


def _setup():
    fsutil.makedirs(J)
    for p, data in zip(NAMES, OLD):
        with open(p, "wb") as f:
            f.write(data)


def _commit():
    for p, data in zip(NAMES, NEW):
        fsutil.write_tmp(p, data)
    fsutil.commit(JOURNAL, NAMES)


def _recover():
    fsutil.recover(NAMES, journal=JOURNAL)


def _state(where):
    got = [_read(p) if fsutil.exists(p) else None for p in NAMES]
    ok(got == OLD or got == NEW, "%s: a mix of old and new files: %r" % (where, [g and g[:6] for g in got]))
    left = sorted(n for n in os.listdir(J) if n.endswith(".tmp") or n == ".commit")
    eq(left, [], "%s: leftovers" % where)
    return "new" if got == NEW else "old"


def _matrix(config, torn):
    kind, bs, erase = cutmatrix.CONFIGS[config]
    blocks = 256 * 1024 // bs
    dev = mount(kind, "/flash", blocks=blocks, block_size=bs, erase_on_write=erase)
    _setup()
    base = dev.image()
    ops0 = dev.ops
    _commit()
    total = dev.ops - ops0
    seen = {"old": 0, "new": 0}
    seconds = 0
    for n in range(total):
        dev = dev.restore(base)
        dev.cut_power(n, torn)
        try:
            _commit()
        except OSError:
            pass
        ok(dev.dead, "cut %d reached" % n)
        dev = dev.reboot()
        after_cut = dev.image()
        r0 = dev.ops
        _recover()
        r_ops = dev.ops - r0
        seen[_state("%s cut %d" % (config, n))] += 1
        for m in range(r_ops):  # and the recovery cut at each of its operations
            dev = dev.restore(after_cut)
            dev.cut_power(m, torn)
            try:
                _recover()
            except OSError:
                pass
            dev = dev.reboot()
            _recover()
            _state("%s cut %d, recovery cut %d" % (config, n, m))
            seconds += 1
    dev.unmount()
    print("%s torn=%s: %d cuts (%r), %d second cuts" % (config, torn, total, seen, seconds))
    ok(seen["old"] > 0 and seen["new"] > 0, "cuts before and after the commit point")
    return seconds


@timeout(600)
def test_a_journal_commit_cut_anywhere_leaves_all_old_or_all_new_on_lfs2():
    for torn in (False, True):
        ok(_matrix("lfs2-4096", torn) > 0, "recovery had operations to cut")


@timeout(600)
def test_a_journal_commit_cut_anywhere_leaves_all_old_or_all_new_on_fat_sd():
    for config in ("fat-sd-512", "fat-sd-4096"):
        _matrix(config, False)


def test_append_returns_where_its_data_starts():
    dev = mount("lfs2", "/flash", blocks=64)
    p = "/flash/log"
    eq(fsutil.append(p, b"abc"), 0, "a new file")
    eq(fsutil.append(p, b"defgh"), 3, "after 3 bytes")
    eq(fsutil.append(p, lambda f, start: f.write(b"%d;" % start)), 8, "a writer is given the start")
    eq(_read(p), b"abcdefgh8;", "contents")
    dev.unmount()
