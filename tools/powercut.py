#!/usr/bin/env python3
"""Power-cut matrix over the whole system: cut at every program/erase operation.

    python tools/powercut.py                 # every cut, every filesystem (several minutes)
    python tools/powercut.py --every 10      # every 10th cut
    python tools/powercut.py --config lfs2-4096 --torn

The workload (tests_host/support/workloads.py, `system`, the one the suite samples) goes through every write path: persist with
tool records, session compaction and blocking, store, update, forget, recall, extraction
results with several facts, store compaction, profile edit, /session new, switch and delete. After each cut the flash is rebuilt
from the bytes that survived, the memory is opened (which recovers), and every invariant is
checked: acknowledged data present and whole, nothing twice, catalog and keyword index
consistent with the items, index consistent with the log, and the next turn works.

Filesystems: LittleFS2 with 4096-byte blocks; FAT with 512- and 4096-byte sectors, both on raw
flash (erase, then program, per sector, as esp32.Partition writes) and with atomic sector
writes (an SD card's controller). "torn": the cut operation is left half-applied.
"""

import argparse
import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from claw_memory_cli import hosttools  # noqa: E402

CONFIGS = ("lfs2-4096", "fat-512", "fat-4096", "fat-sd-512", "fat-sd-4096")

RUNNER = """
import json, cutmatrix, workloads
w, c = workloads.system()
res = cutmatrix.run(%r, w, c, torn=%r, every=%d, kib=1024)
print("POWERCUT " + json.dumps(res))
"""


def run(config, torn, every):
    env = dict(os.environ)
    # The suite's harness (workloads, cutmatrix), the simulated flash and the ESP-Claw port
    # the workload checks the index with.
    env["MICROPYPATH"] = os.pathsep.join([ROOT] + [os.path.join(ROOT, *p) for p in (
        ("tests_host", "support"), ("claw_memory_cli", "runtime"), ("tools", "benchmark", "baselines"))] + [".frozen"])
    r = subprocess.run([hosttools.micropython(), "-X", "heapsize=16M", "-c", RUNNER % (config, torn, every)],
                       capture_output=True, text=True, env=env, cwd=ROOT)
    for line in r.stdout.splitlines():
        if line.startswith("POWERCUT "):
            return json.loads(line[9:])
    raise SystemExit("powercut %s failed:\n%s%s" % (config, r.stdout[-3000:], r.stderr[-3000:]))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--every", type=int, default=1, help="cut at every k-th operation")
    ap.add_argument("--config", action="append", choices=CONFIGS, help="filesystem (repeatable)")
    ap.add_argument("--torn", action="store_true", help="only torn cuts")
    ap.add_argument("--clean", action="store_true", help="only clean cuts")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    torns = [True] if args.torn else [False] if args.clean else [False, True]
    rows = []
    print("%-12s %-5s %6s %6s %9s %14s %8s" % ("filesystem", "torn", "ops", "cuts", "recovered",
                                               "acked lost", "failures"))
    for config in args.config or CONFIGS:
        for torn in torns:
            res = run(config, torn, args.every)
            rows.append(res)
            print("%-12s %-5s %6d %6d %9d %14d %8d" % (config, torn, res["ops"], res["cuts"], res["recovered"],
                                                       res["lost"], len(res["failures"])), flush=True)
            for n, why in res["failures"][:3]:
                print("    cut %d: %s" % (n, why))
    if args.json:
        print(json.dumps(rows))
    bad = [r for r in rows if r["config"].startswith(("lfs2", "fat-sd")) and (r["failures"] or r["lost"])]
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
