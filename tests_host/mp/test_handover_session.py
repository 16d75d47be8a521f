# Hand-over with ESP-Claw on one session: we stop without close() (a reset: the index lags
# the log), ESP-Claw's firmware appends after our unindexed records, we open again. Our
# records become a gap between index entries; we index them again in order, so both sides
# read every turn, once. With a power cut at every operation too.
import cutmatrix
import workloads
from flashsim import mount
from mptest import eq, timeout

HEAP = "16M"
SLOW = True  # a matrix over every cut or fault: the slow tier


def test_records_between_esp_claw_entries_are_indexed_again():
    dev = mount("lfs2", "/flash", blocks=256)
    w, c = workloads.handover()
    acked = []
    w(acked)
    eq(acked, [0, 1, 2, 10, 11], "every step acknowledged")
    eq(c(acked), 0, "every turn there once, for both sides")
    from claw_memory.session import Sessions

    rep = Sessions(workloads.SESSION_DIR).verify(workloads.SID)
    eq((rep["reindexed"], rep["dropped"], rep["index_entries_dropped"]), (0, 0, 0), "verify clean")
    dev.unmount()


@timeout(900)
def test_every_cut():
    for config, torn in (("lfs2-4096", False), ("lfs2-4096", True), ("fat-sd-4096", False)):
        w, c = workloads.handover()
        res = cutmatrix.run(config, w, c, torn=torn, kib=512)
        print(cutmatrix.line(res))
        for f in res["failures"][:5]:
            print("  cut", f)
        eq(res["failures"], [], "every cut recovered (%s)" % config)
        eq(res["lost"], 0, "no acknowledged turn lost")
