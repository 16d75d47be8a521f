# Power cut at every program/erase operation while extraction results with several facts are
# applied (two, three, a replace of two facts that forgets two others, one with a fact
# already stored): after every cut the store holds all of a result or none of it.
import cutmatrix
import workloads
from mptest import eq, ok, timeout

HEAP = "8M"
SLOW = True  # a matrix over every cut: the slow tier


def _matrix(config):
    for torn in (False, True):
        w, c = workloads.extractions()
        res = cutmatrix.run(config, w, c, torn=torn, kib=512)
        print(cutmatrix.line(res))
        for f in res["failures"][:5]:
            print("  cut", f)
        yield res


@timeout(900)
def test_lfs2_every_cut():
    for res in _matrix("lfs2-4096"):
        ok(res["cuts"] > 30, "the workload has many cut points")
        eq(res["failures"], [], "every cut: all facts of a result or none")
        eq(res["lost"], 0, "no acknowledged result lost")


@timeout(900)
def test_fat_every_cut():
    for res in _matrix("fat-sd-4096"):
        ok(res["cuts"] > 30, "the workload has many cut points")
        eq(res["failures"], [], "every cut: all facts of a result or none")
        eq(res["lost"], 0, "no acknowledged result lost")
