# Power cut at every program/erase operation of a store/update/forget/recall/compaction
# workload: the store reopens, every acknowledged change is there, nothing twice, the
# catalog and keyword index match the items.
import cutmatrix
import workloads
from mptest import eq, ok, timeout

HEAP = "8M"


def _matrix(config, every=1, torns=(False, True), workload=workloads.store_ops):
    for torn in torns:
        w, c = workload()
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
def test_fat_every_cut():
    # FAT with 4096-byte sectors: ESP-Claw's own storage partition and most SD cards.
    for res in _matrix("fat-sd-4096"):
        eq(res["failures"], [], "every cut recovered")
        eq(res["lost"], 0, "no acknowledged change lost")


@timeout(900)
def test_fat_512_clean_cuts_sampled():
    # With 512-byte sectors FatFs's rename writes the new directory entry and removes the old
    # one in different sectors: a cut between them leaves both on one cluster chain and the
    # volume reads EIO there (a FatFs finding, docs/DURABILITY.md; here the rename of
    # memory_index.json.tmp at close). Recorded, not hidden: no acknowledged change may be
    # lost, and the count may not grow.
    for res in _matrix("fat-sd-512", every=2, torns=(False,)):
        ok(len(res["failures"]) <= 1, "FAT-512 rename cross-links: %r" % (res["failures"],))
        eq(res["lost"], 0, "no acknowledged change lost")


@timeout(900)
def test_evictions_every_cut():
    # A store over the capacity and its eviction are one append: all or none, on both.
    for config in ("lfs2-4096", "fat-sd-4096"):
        for res in _matrix(config, workload=workloads.store_evictions):
            ok(res["cuts"] > 30, "the workload has many cut points")
            eq(res["failures"], [], "every cut recovered")
            eq(res["lost"], 0, "no acknowledged change lost")
