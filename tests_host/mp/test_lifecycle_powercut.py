# Power cut at every program/erase operation of a session lifecycle: /session new, switch
# and delete of sessions with unfinished turns, compactions, a session deleted while a
# request on it runs, an alias used again. After every cut the chat map is the state before
# or after the step in flight and every session agrees with it (a deleted one has no file
# left and never comes back); no acknowledged record is lost or doubled.
import cutmatrix
import workloads
from mptest import eq, ok, timeout

HEAP = "16M"


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
    res = _matrix("fat-sd-4096", False)
    eq(res["failures"], [], "every cut recovered")
    eq(res["lost"], 0, "no acknowledged record lost")
    res = _matrix("fat-sd-512", False, every=3)
    eq(res["failures"], [], "every sampled cut recovered")
    eq(res["lost"], 0, "no acknowledged record lost")
