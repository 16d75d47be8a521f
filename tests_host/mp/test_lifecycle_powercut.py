# Power cut at every program/erase operation of a session lifecycle: /session new, switch
# and delete of sessions with unfinished turns, compactions, a session deleted while a
# request on it runs, an alias used again. After every cut the chat map is the state before
# or after the step in flight and every session agrees with it (a deleted one has no file
# left and never comes back); no acknowledged record is lost or doubled.
import cutmatrix
import workloads
from mptest import eq, ok, timeout

HEAP = "16M"
SLOW = True  # a matrix over every cut or fault: the slow tier


def _matrix(config, torn, every=1):
    w, c = workloads.lifecycle()
    res = cutmatrix.run(config, w, c, torn=torn, every=every, kib=512)
    print(cutmatrix.line(res))
    for f in res["failures"][:5]:
        print("  cut", f)
    return res


@timeout(900)
def test_lfs2_every_cut():
    for torn in (False, True):
        res = _matrix("lfs2-4096", torn)
        ok(res["cuts"] > 100, "the workload has many cut points")
        eq(res["failures"], [], "every cut recovered")
        eq(res["lost"], 0, "no acknowledged record lost")


@timeout(900)
def test_fat_sd_every_cut():
    for torn in (False, True):
        res = _matrix("fat-sd-4096", torn)
        eq(res["failures"], [], "every cut recovered")
        eq(res["lost"], 0, "no acknowledged record lost")


@timeout(900)
def test_fat_sd_512_every_cut():
    # FAT with 512-byte sectors: FatFs's rename writes the new directory entry and removes the
    # old one in different sectors; a cut between leaves both on one cluster chain, and the
    # volume then reads EIO there or loses the file whose leftover was removed (a chat map
    # starts again from default_01). Recorded (docs/DURABILITY.md), not hidden: no cut may lose
    # an acknowledged record silently, and the count may not grow past the measured one. It
    # grew by one when the pending file began to stay between turns: the first turn's index
    # entry no longer reuses the removed pending file's directory slot, so one more creation
    # crosses a directory sector here; in return a turn writes no directory entry at all.
    for torn, most in ((False, 2), (True, 6)):
        res = _matrix("fat-sd-512", torn)
        eq(res["lost"], 0, "no acknowledged record lost")
        eq([f for f in res["failures"] if not f[1].startswith("OSError: ")], [],
           "only the filesystem's own errors")
        ok(len(res["failures"]) <= most, "FAT-512 rename cross-links: %r" % (res["failures"],))
