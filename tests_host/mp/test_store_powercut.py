# Power cut at every program/erase operation of a store/update/forget/recall/compaction
# workload: the store reopens, every acknowledged change is there, nothing twice, the
# catalog and keyword index match the items.
import cutmatrix
import workloads
from mptest import eq, ok, timeout

HEAP = "8M"


def _matrix(config, every=1, torns=(False, True)):
    for torn in torns:
        w, c = workloads.store_ops()
        res = cutmatrix.run(config, w, c, torn=torn, every=every, kib=512)
        print(cutmatrix.line(res))
        for f in res["failures"][:5]:
            print("  cut", f)
        yield res


@timeout(900)
def test_lfs2_every_cut():
    for res in _matrix("lfs2-4096"):
        ok(res["cuts"] > 100, "the workload has many cut points")
        eq(res["failures"], [], "every cut recovered")
        eq(res["lost"], 0, "no acknowledged change lost")


@timeout(900)
def test_fat_sd_model_sampled():
    for config in ("fat-sd-512", "fat-sd-4096"):
        for res in _matrix(config, every=3):
            eq(res["failures"], [], "every cut recovered")
            eq(res["lost"], 0, "no acknowledged change lost")
