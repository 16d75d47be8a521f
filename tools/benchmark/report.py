"""The whole report (targets, then the tables) and docs/PERFORMANCE.md around it."""

import os

from .figures import FS, verdict
from .recall_report import recall_tables
from .runner import ROOT
from .tables import heap_tables, session_tables, size_table, store_tables
from .targets import target_rows


def report(res):
    lines = []
    out = lines.append
    targets = target_rows(res)
    out("## Targets")
    out("")
    out("Measured in this run; the store and session issues work on the ones that fail. Heap figures "
        "are from the 32-bit build; ratios are ours / faithful ESP-Claw in the same run.")
    out("")
    out("| target | LittleFS | FAT | |")
    out("|---|---|---|---|")
    for name, cells, ok in targets:
        out("| %s | %s | %s | %s |" % (name, cells[0], cells[1], verdict(ok)))
    out("")
    session_tables(res, out)
    store_tables(res, out)
    heap_tables(res, out)
    size_table(res, out)
    ok = all(ok for _, _, ok in targets)
    if "recall" in res:
        ok = recall_tables(res, out) and ok
    return "\n".join(lines), ok


HEADER = """\
# Performance

Written by `python3 tools/bench.py --write` (re-run it whenever storage code changes; `--help`
for options). This run: %(started)s, %(minutes).1f minutes, %(cases)d MicroPython processes, load
average %(load).2f at the start.

**What is compared.** Every figure is measured side by side in the same run, on the same
simulated flash (LittleFS2 with 4096-byte blocks, as on an ESP32's `vfs` partition, and FAT with
4096-byte sectors, as ESP-Claw's own `storage` partition and SD cards), with the same data.

- **ours**: claw_memory, through its public API.
- **ESP-Claw**: ESP-Claw's C `claw_memory` (line A) ported to MicroPython file operation for
  file operation (`tools/benchmark/baselines/espclaw.py`): per persist batch one open of `.log` and one of
  `.idx`, every record appended, both closed, the pair validated (whole `.idx` read) every time,
  and after a completed turn the in-place compaction over 150 KiB; per store/update/forget every
  item loaded, one record appended, the whole index and MEMORY.md rewritten, a digest line, and
  a compaction when the changes since boot reach 5 or the records file 32 KiB; one digest append
  per recalled item. *Weaker than the real system*: MicroPython has no `truncate()`, so the
  truncate that ends a session compaction is modelled (the kept prefix rewritten uncounted, plus
  one FAT-sector write on FAT when clusters are freed; on LittleFS the flush and commit it needs
  are already counted); ESP-IDF's wear-levelling layer under FAT is not modelled (it adds writes
  of its own); its times are MicroPython times (the C code is much faster), so do not compare CPU
  with it. ESP-IDF's FatFs keeps a sector buffer per open file where MicroPython's shares one,
  so the port issues the `.log` writes and then the `.idx` writes of a batch (interleaved, as the
  C code issues them, MicroPython's FatFs would write sectors ESP-IDF does not). *Faithful where it hurts*: its compaction buffer of 512 bytes per item (large items are
  cut off), the three compaction checks of an update, the RAM change counter (reset at boot).
- **ChipClaw-style** (`tools/benchmark/baselines/peers.py`): the history kept in RAM and the whole session file
  rewritten once per completed turn, as ChipClaw (a MicroPython agent) does. *Heavier than real
  ChipClaw*, which keeps only user and final messages; here it keeps every record, so that all
  systems hold the same history.
- **naive (rewrite per persist)**: the whole history as one JSON file, read and rewritten on every
  persist call (three times per turn); **naive (one JSON file)** for the store: every item in one
  JSON array rewritten per change, with no digest, index, MEMORY.md or cap (so *lighter* than a
  store that keeps those files).

**Device time** (`docs/DESIGN.md`, section 6): flash ms = 45 ms per 4 KiB erase + 0.7 ms per 256 B
programmed (the simulator's counters); CPU ms = host ms x F, F = 30 and 100 (MicroPython on a
240 MHz ESP32-S3); device ms = flash + CPU, printed as "F=30 / F=100". Host ms: CPU time of one
operation in the 64-bit unix port after a gc.collect() (wall time minus the time the process
waited for a CPU while other processes ran, from /proc/self/schedstat), repeated; the count is
given with every median. A user feels anything above ~100 ms.

"""

NOTES = """\
## What the faithful baseline changed

The benchmark's earlier "ESP-Claw style" baseline was weaker than ESP-Claw: it opened `.log` and
`.idx` once per record instead of once per persist batch (157 operations per turn at 50 turns on
LittleFS, so ours read 0.28x), it rewrote a compacted session through fresh files instead of in
place, and its store never ran ESP-Claw's compaction check, which at 128 items compacts after
every change (it counted ~310 operations per store where ESP-Claw's code costs ~900, and an
update, which checks three times, ~2,500). Its times were single runs. The targets of the store
and session issues are set against the faithful port above.

## How it is measured

- `tools/bench.py` and `tools/benchmark/` (this report), `tools/benchmark/mp/bench_mp.py` (the
  cases; the class `Ours` is the only code in them that calls claw_memory),
  `tools/benchmark/baselines/espclaw.py` (ESP-Claw), `tools/benchmark/baselines/peers.py`
  (ChipClaw-style, naive), `claw_memory_cli/runtime/flashsim.py` (the flash),
  `tools/benchmark/mp/heapmeter.py` (heap sampling). `tests_host/mp/test_bench_baselines.py` checks that
  the ESP-Claw port opens each file once per persist batch and compacts at ESP-Claw's triggers.
- The store runs start from one records file; each system opens it as it would after a reboot
  (ours derives its index and MEMORY.md; ESP-Claw's state is that after its own compaction), so
  ESP-Claw's RAM change counter starts at 0 as after a boot.
- Session cases persist through each system's own code from an empty directory.
- Ranked recall: `tools/benchmark/recall_set.py` (the retrieval set's generator and how it is
  made), `tools/benchmark/recall_eval.py` (quality against rank-bm25 and recency, the
  agent-level cost with the oracle LLM), `tools/benchmark/mp/recall_cost.py` (a query on the
  unix port), `tools/benchmark/recall_report.py` (the section).
- `--only SECTIONS --from-json FILE --json FILE` re-runs some sections of a saved run (e.g.
  `store` after a store change) and renders the whole report; `--quick` is a one-minute subset.
"""


def write_doc(res, text):
    path = os.path.join(ROOT, "docs", "PERFORMANCE.md")
    with open(path, "w") as f:
        f.write(HEADER % {"started": res["started"], "minutes": res["seconds"] / 60.0, "cases": res["cases"],
                          "load": res["load"]})
        if res["plan"]["fs"] != FS:
            f.write("**Quick run** (`--quick`): LittleFS only, a subset of sizes.\n\n")
        f.write(text + "\n")
        f.write(NOTES)
    return path
