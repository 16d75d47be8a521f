# The whole-system power-cut matrix (tools/powercut.py runs every cut; here a sample).
# Every write path: persist with tool records, session compaction and blocking, store,
# update, forget, recall, store compaction, profile edit, /session new, switch and delete.
import cutmatrix
import workloads
from mptest import eq, ok, timeout

HEAP = "16M"
SLOW = True  # a matrix over every cut or fault: the slow tier


def _run(config, torn, every):
    w, c = workloads.system()
    res = cutmatrix.run(config, w, c, torn=torn, every=every, kib=1024)
    print(cutmatrix.line(res))
    for f in res["failures"][:5]:
        print("  cut", f)
    return res


@timeout(900)
def test_lfs2_sampled():
    for torn, every in ((False, 5), (True, 7)):
        res = _run("lfs2-4096", torn, every)
        ok(res["ops"] > 400, "the workload covers many operations")
        eq(res["failures"], [], "every sampled cut recovered")
        eq(res["lost"], 0, "no acknowledged data lost")


@timeout(900)
def test_fat_with_atomic_sectors_sampled():
    for config in ("fat-sd-512", "fat-sd-4096"):
        res = _run(config, False, 9)
        eq(res["failures"], [], "every sampled cut recovered")
        eq(res["lost"], 0, "no acknowledged data lost")
