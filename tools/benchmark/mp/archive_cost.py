# What a session compaction costs with the archive (issue 26) and without it (archive_limit=0,
# the records dropped are deleted as ESP-Claw deletes them), on the unix port:
#
#   micropython -X heapsize=32M tools/benchmark/mp/archive_cost.py
#
# The benchmark's turn (bench_mp.turn_records: a user message, a tool round, the answer)
# persisted into one session at the default 150 KiB limit until it has compacted three times,
# on simulated LittleFS and FAT; for each compacting turn: the program/erase operations, the
# bytes programmed and the erases of that turn (its three persists and the compaction).
# MIT license
import sys

_HERE = __file__.rsplit("/", 1)[0] if "/" in __file__ else "."
sys.path[:0] = [_HERE, _HERE + "/../baselines", _HERE + "/../../../claw_memory_cli/runtime", _HERE + "/../../.."]

import bench_mp as B  # noqa: E402
from flashsim import mount  # noqa: E402

import claw_memory  # noqa: E402
from claw_memory.session import ARCHIVE_LIMIT  # noqa: E402

_COMPACTIONS = 3


def run(fs, archive_limit):
    dev = mount(fs, "/flash", blocks=1024)
    mem = claw_memory.open("/flash", extract=False, archive_limit=archive_limit)
    s = mem.sessions
    out = []
    n = 0
    size = 0
    while len(out) < _COMPACTIONS and n < 2000:
        before = dev.stats()
        u, c, r, f = B.turn_records(n)
        s.persist(B.SID, [u])
        s.persist(B.SID, [c, r])
        s.persist(B.SID, [f], turn_completed=True)
        after = dev.stats()
        now = s.stat(B.SID)["bytes"]
        if now < size:  # the log shrank: this turn compacted it
            out.append({"turn": n, "ops": after["ops"] - before["ops"],
                        "bytes": after["bytes_programmed"] - before["bytes_programmed"],
                        "erases": after["erases"] - before["erases"]})
        size = now
        n += 1
    mem.close()
    dev.unmount()
    return out


def main():
    for fs in ("lfs2", "fat"):
        for name, limit in (("archive", ARCHIVE_LIMIT), ("delete", 0)):
            for c in run(fs, limit):
                print("%-4s %-7s turn %4d: %5d ops, %7d bytes, %4d erases"
                      % (fs, name, c["turn"], c["ops"], c["bytes"], c["erases"]))


main()
