#!/usr/bin/env python3
"""claw_memory benchmark: flash wear, device time and heap, side by side with ESP-Claw.

    python3 tools/bench.py                 # run everything, print the report (~4 minutes)
    python3 tools/bench.py --write         # also rewrite docs/PERFORMANCE.md
    python3 tools/bench.py --quick         # a subset (LittleFS, fewer sizes, no heap search)
    python3 tools/bench.py --from-json F   # re-render a report from a saved run (--json F)

Every case runs in its own MicroPython process (tools/benchmark/mp/bench_mp.py) on simulated
flash (claw_memory_cli/runtime/flashsim.py: LittleFS2 with 4096-byte blocks, FAT with
4096-byte sectors), counting program and erase operations and bytes programmed. The systems:
ours (claw_memory), ESP-Claw's C code ported file operation for file operation
(tools/benchmark/baselines/espclaw.py) and two plain MicroPython peers
(tools/benchmark/baselines/peers.py). Flash and time figures come from the pinned
64-bit unix port; every heap figure from the 32-bit, single-precision build of
tools/build_mp32.py (skipped, with the reason printed, when it cannot be built).

Device time (docs/DESIGN.md section 6): flash ms = 45 per 4 KiB erase + 0.7 per 256 B programmed;
CPU ms = host ms x F for F = 30 and F = 100. Host ms is the CPU time of one operation (wall
time minus the time the process waited for a CPU, from /proc/self/schedstat, so that other load
on the machine does not inflate it), repeated; medians and minima are reported with the count.

The code is in tools/benchmark/: runner.py (the plan and the cases), figures.py, targets.py,
tables.py and report.py (the report and docs/PERFORMANCE.md), mp/ (the MicroPython side) and
baselines/ (what ours is compared with).

This is a benchmark, not a test: it prints PASS/FAIL against the targets and exits 1 when a
target fails, but asserts nothing else.
"""

import argparse
import json
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)  # claw_memory_cli (hosttools), when run with the system python3

from benchmark import report, runner  # noqa: E402


def main(argv=None):
    ap = argparse.ArgumentParser(
        description="claw_memory benchmark: flash wear, device time and heap against a faithful "
                    "ESP-Claw port and MicroPython peers (see the module docstring).")
    ap.add_argument("--write", action="store_true", help="rewrite docs/PERFORMANCE.md with the report")
    ap.add_argument("--quick", action="store_true",
                    help="a subset: LittleFS only, ours and ESP-Claw, 128 items, no near-limit run, "
                         "no smallest-heap search (about 2 minutes)")
    ap.add_argument("--json", metavar="FILE", help="save the raw measurements to FILE")
    ap.add_argument("--from-json", metavar="FILE", help="render the report from saved measurements "
                                                        "instead of running")
    ap.add_argument("--only", metavar="SECTIONS",
                    help="run only these sections (comma-separated: %s); with --from-json the "
                         "others are taken from the saved run" % ",".join(runner.SECTIONS))
    ap.add_argument("--silent", action="store_true", help="do not list the cases as they run")
    args = ap.parse_args(argv)
    res = None
    if args.from_json:
        with open(args.from_json) as f:
            res = json.load(f)
    if res is None or args.only:
        res = runner.collect(args, res)
        if args.json:
            with open(args.json, "w") as f:
                json.dump(res, f)
    elif args.json:
        with open(args.json, "w") as f:
            json.dump(res, f)
    text, ok = report.report(res)
    print(text)
    print("\n%d cases in %.1f minutes" % (res["cases"], res["seconds"] / 60.0), file=sys.stderr)
    if args.write and not report.whole(res):
        print("not written: docs/PERFORMANCE.md holds every section (--only needs --from-json "
              "of a whole run)", file=sys.stderr)
        return 1
    if args.write:
        print("wrote %s" % report.write_doc(res, text), file=sys.stderr)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
