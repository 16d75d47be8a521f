# Power cut at every program/erase operation of changes and their undos (issue 27): an undo is
# one append, so after any cut the items are the state before the step in flight or after it,
# an undo after the recovery is done whole or refused, and the store is consistent, on
# LittleFS and on FAT (clean and torn cuts).
import cutmatrix
import undo_workload
from mptest import eq, ok, timeout

HEAP = "8M"
SLOW = True  # a matrix over every cut: the slow tier


def _matrix(config, torns=(False, True), every=1):
    for torn in torns:
        w, c = undo_workload.undos()
        res = cutmatrix.run(config, w, c, torn=torn, every=every, kib=512)
        print(cutmatrix.line(res))
        for f in res["failures"][:5]:
            print("  cut", f)
        yield res


@timeout(900)
def test_undo_every_cut_littlefs():
    for res in _matrix("lfs2-4096"):
        ok(res["cuts"] > 100, "the workload has many cut points (%d)" % res["cuts"])
        eq(res["failures"], [], "every cut recovered")
        eq(res["lost"], 0, "no acknowledged change lost")


@timeout(900)
def test_undo_every_cut_fat():
    # FAT with 4096-byte sectors (ESP-Claw's storage partition, most SD cards)
    for res in _matrix("fat-sd-4096"):
        ok(res["cuts"] > 30, "the workload has many cut points (%d)" % res["cuts"])
        eq(res["failures"], [], "every cut recovered")
        eq(res["lost"], 0, "no acknowledged change lost")
