#!/usr/bin/env python3
"""claw_memory benchmark: flash wear, heap high-water, time and size, against baselines.

    python tools/bench.py            # print the table (needs the .venv tools: tools/dev.py setup)
    python tools/bench.py --write    # also rewrite docs/PERFORMANCE.md

Everything is measured under the MicroPython unix port on simulated LittleFS2 flash (4096-byte
blocks), one process per case (tools/mplib/bench_mp.py). Flash and heap figures are absolute
counts that do not depend on the machine's speed; times are only shown as ratios measured side
by side in the same process. The baselines are implemented in bench_mp.py: "naive" rewrites
the whole session or memory file on every change; "ESP-Claw style" opens/appends/closes once
per record and per index entry, keeps every item in RAM and compacts in place.

This is a benchmark, not a test: it prints PASS/FAIL against the targets but asserts nothing.
"""

import json
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from claw_memory_cli import hosttools  # noqa: E402

MPLIB = os.path.join(ROOT, "tools", "mplib")
STORAGE = ("__init__", "_compat", "paths", "fsutil", "text", "core", "session", "item", "store",
           "profile", "providers", "hooks", "tools", "chats", "extract", "memory", "skills", "inspect")
KIB = 1024


def run_case(name, extra_path=None, heap="24M", script="bench_mp.py"):
    mp = hosttools.micropython()
    env = dict(os.environ)
    env["MICROPYPATH"] = os.pathsep.join(([extra_path] if extra_path else []) + [ROOT, MPLIB, ".frozen"])
    r = subprocess.run([mp, "-X", "heapsize=" + heap, os.path.join(MPLIB, script), name],
                       capture_output=True, text=True, env=env, cwd=ROOT, timeout=1800)
    for line in r.stdout.splitlines():
        if line.startswith("BENCH "):
            return json.loads(line[6:])
    raise SystemExit("bench case %s failed:\n%s%s" % (name, r.stdout[-3000:], r.stderr[-3000:]))


def mpy_sizes(tmp):
    mpy_cross = hosttools.find("mpy-cross")
    sizes = {}
    for name in sorted(os.listdir(os.path.join(ROOT, "claw_memory"))):
        if name.endswith(".py"):
            out = os.path.join(tmp, name[:-3] + ".mpy")
            subprocess.run([mpy_cross, "-march=xtensawin", "-o", out, os.path.join(ROOT, "claw_memory", name)],
                           check=True)
            sizes[name[:-3]] = os.path.getsize(out)
    return sizes


def bytecode_package(tmp):
    """claw_memory compiled to portable bytecode .mpy (what a board loads from /lib)."""
    mpy_cross = hosttools.find("mpy-cross")
    pkg = os.path.join(tmp, "claw_memory")
    os.makedirs(pkg)
    for name in os.listdir(os.path.join(ROOT, "claw_memory")):
        if name.endswith(".py"):
            subprocess.run([mpy_cross, "-o", os.path.join(pkg, name[:-3] + ".mpy"),
                            os.path.join(ROOT, "claw_memory", name)], check=True)
    return tmp


def ratio(a, b):
    return a / b if b else float("inf")


def collect():
    print("running benchmark cases (about a minute)...", file=sys.stderr)
    res = {c: run_case(c) for c in ("turn_wear", "replay", "store_ops", "session_compaction", "open_root")}
    res["import_py"] = run_case("import_heap", script="import_heap.py")
    with tempfile.TemporaryDirectory() as tmp:
        res["import_mpy"] = run_case("import_heap", bytecode_package(os.path.join(tmp, "bc")),
                                     script="import_heap.py")
        os.makedirs(os.path.join(tmp, "x"))
        res["mpy"] = mpy_sizes(os.path.join(tmp, "x"))
    return res


def report(res):
    lines = []
    out = lines.append
    tw = res["turn_wear"]
    out("## Flash wear (simulated LittleFS2, 4096-byte blocks; program + erase operations)")
    out("")
    out("| operation | ours | ESP-Claw style | naive | ours / ESP-Claw | ours / naive |")
    out("|---|---|---|---|---|---|")
    o, e, n = tw["ours"], tw["espclaw"], tw["naive"]
    out("| persisted turn at 50 turns (~1 KB: user, tool call, tool result, final) | %.1f ops, %d B | %.1f ops, %d B | %.1f ops, %d B | %.2f | %.3f |" % (
        o["ops"], o["bytes"], e["ops"], e["bytes"], n["ops"], n["bytes"], ratio(o["ops"], e["ops"]), ratio(o["ops"], n["ops"])))
    so = res["store_ops"]
    for op, title in (("store", "store (128 items, 40 labels)"), ("recall", "recall"), ("forget", "forget"),
                      ("compact", "store compaction")):
        a, b = so["ours"][op], so["espclaw"].get(op)
        c = so["naive"].get(op)
        out("| %s | %d ops, %d B | %s | %s | %s | %s |" % (
            title, a["ops"], a["bytes"], "%d ops, %d B" % (b["ops"], b["bytes"]) if b else "-",
            "%d ops, %d B" % (c["ops"], c["bytes"]) if c else "-",
            "%.2f" % ratio(a["ops"], b["ops"]) if b else "-", "%.2f" % ratio(a["ops"], c["ops"]) if c and c["ops"] else "-"))
    sc = res["session_compaction"]
    out("| session compaction (%d KiB -> %d KiB) | %d ops, %d B | %d ops, %d B | - | %.2f | - |" % (
        sc["before"] // KIB, sc["after"] // KIB, sc["ours"]["ops"], sc["ours"]["bytes"], sc["espclaw"]["ops"],
        sc["espclaw"]["bytes"], ratio(sc["ours"]["ops"], sc["espclaw"]["ops"])))
    out("")
    out("Files a recall changed: ours %s; ESP-Claw style %s." % (
        ", ".join(so["ours"]["recall"]["files"]) or "none", ", ".join(so["espclaw"]["recall"]["files"]) or "none"))
    out("")
    rp = res["replay"]
    out("## Heap high-water above idle (unix port, 64-bit: about twice an ESP32's 32-bit objects)")
    out("")
    out("| operation | ours | ESP-Claw style | naive |")
    out("|---|---|---|---|")
    out("| open the memory (20 sessions on the root) | %d B | - | - |" % res["open_root"]["ours"]["heap"])
    out("| replay a %d KiB history (%d turns) | %d B (%.2f x history) | %d B | %d B |" % (
        rp["history_bytes"] // KIB, rp["turns"], rp["ours"]["heap"], ratio(rp["ours"]["heap"], rp["history_bytes"]),
        rp["espclaw"]["heap"], rp["naive"]["heap"]))
    for op, title in (("recall", "recall over 128 items"), ("store", "store"), ("forget", "forget"),
                      ("compact", "store compaction"), ("list", "list (returns all 128 items)")):
        b, c = so["espclaw"].get(op), so["naive"].get(op)
        out("| %s | %d B | %s | %s |" % (title, so["ours"][op]["heap"], "%d B" % b["heap"] if b else "-",
                                         "%d B" % c["heap"] if c else "-"))
    out("| session compaction (%d KiB) | %d B | %d B | - |" % (sc["before"] // KIB, sc["ours"]["heap"], sc["espclaw"]["heap"]))
    out("")
    out("## Time, ours / baseline (same process, same data)")
    out("")
    out("| operation | ours / ESP-Claw style | ours / naive |")
    out("|---|---|---|")
    out("| persist a turn | %.2f | %.2f |" % (ratio(o["us"], e["us"]), ratio(o["us"], n["us"])))
    out("| replay 150 KiB history | %.2f | %.2f |" % (ratio(rp["ours"]["us"], rp["espclaw"]["us"]),
                                                    ratio(rp["ours"]["us"], rp["naive"]["us"])))
    for op in ("recall", "store", "forget", "compact"):
        b, c = so["espclaw"].get(op), so["naive"].get(op)
        out("| %s | %s | %s |" % ("store compaction" if op == "compact" else op,
                                  "%.2f" % ratio(so["ours"][op]["us"], b["us"]) if b else "-",
                                  "%.2f" % ratio(so["ours"][op]["us"], c["us"]) if c else "-"))
    out("| session compaction | %.2f | - |" % ratio(sc["ours"]["us"], sc["espclaw"]["us"]))
    orr = res["open_root"]
    out("| open a root with 20 sessions (ours touches none; baseline reads every session) | %.4f (%d vs %d block reads) | - |" % (
        ratio(orr["ours"]["us"], orr["all_sessions"]["us"]), orr["ours"]["reads"], orr["all_sessions"]["reads"]))
    out("")
    sizes = res["mpy"]
    storage = sum(v for k, v in sizes.items() if k in STORAGE)
    total = sum(sizes.values())
    out("## Size")
    out("")
    out("| what | bytes |")
    out("|---|---|")
    out("| .mpy (xtensawin), storage layers, hooks and tools (all but agent and llm) | %d |" % storage)
    out("| .mpy (xtensawin), whole package | %d |" % total)
    out("| heap after `import claw_memory.memory` from .py (unix port) | %d |" % res["import_py"]["memory"])
    out("| heap after `import claw_memory.memory` from bytecode .mpy (as from /lib on a board) | %d |" % res["import_mpy"]["memory"])
    out("| heap after importing every module from bytecode .mpy | %d |" % res["import_mpy"]["all_modules"])
    out("| heap held by an opened memory (`claw_memory.open()`, nothing read yet) | %d |" % res["import_mpy"]["opened"])
    out("")
    out("Frozen into firmware, the bytecode stays in flash and imports hold almost no heap.")
    out("")
    targets = [
        ("turn: <= 1/3 of ESP-Claw-style program/erase", ratio(o["ops"], e["ops"]) <= 1 / 3,
         "%.2f" % ratio(o["ops"], e["ops"])),
        ("turn: <= 1/10 of naive program/erase", ratio(o["ops"], n["ops"]) <= 0.1, "%.3f" % ratio(o["ops"], n["ops"])),
        ("recall programs nothing but digest bytes", so["ours"]["recall"]["files"] == ["memory_digest.log"],
         ", ".join(so["ours"]["recall"]["files"])),
        ("replay 150 KiB history: <= 3x its JSON size above idle", rp["ours"]["heap"] <= 3 * rp["history_bytes"],
         "%.2f x" % ratio(rp["ours"]["heap"], rp["history_bytes"])),
    ]
    for op, title in (("recall", "recall over 128 items"), ("compact", "store compaction"),
                      ("store", "store"), ("forget", "forget")):
        targets.append(("%s: <= 24 KiB above idle" % title, so["ours"][op]["heap"] <= 24 * KIB,
                        "%.1f KiB" % (so["ours"][op]["heap"] / KIB)))
    targets.append(("session compaction: <= 24 KiB above idle", sc["ours"]["heap"] <= 24 * KIB,
                    "%.1f KiB" % (sc["ours"]["heap"] / KIB)))
    targets.append(("open the memory: <= 24 KiB above idle", orr["ours"]["heap"] <= 24 * KIB,
                    "%.1f KiB" % (orr["ours"]["heap"] / KIB)))
    targets.append(("storage layers and hooks: <= 64 KB of .mpy", storage <= 64000, "%d B" % storage))
    targets.append(("whole package: <= 96 KB of .mpy", total <= 96000, "%d B" % total))
    out("## Targets")
    out("")
    out("| target | measured | |")
    out("|---|---|---|")
    for name, ok, got in targets:
        out("| %s | %s | %s |" % (name, got, "PASS" if ok else "FAIL"))
    return "\n".join(lines), all(ok for _, ok, _ in targets)


def main():
    res = collect()
    text, ok = report(res)
    print(text)
    if "--write" in sys.argv:
        path = os.path.join(ROOT, "docs", "PERFORMANCE.md")
        with open(path, "w") as f:
            f.write("# Performance\n\nWritten by `python tools/bench.py --write` (re-run it whenever storage "
                    "code changes).\nThe workloads: a session grown to 150 KiB (about 1 KB per turn: user, "
                    "tool call, tool result, final answer); a 128-item store with 40 labels; 20 sessions "
                    "on one data root. See tools/bench.py for how each figure is measured.\n\n")
            f.write(text + "\n")
            f.write("\n## What the numbers say\n\n" + NOTES)
        print("\nwrote %s" % path, file=sys.stderr)
    return 0 if ok else 1


NOTES = """\
- Per turn, the session layer writes far less than ESP-Claw's pattern. littlefs copies the
  partly filled last block of a file on every reopen-append, so ESP-Claw's eight appends per turn
  (four records, four index entries) each copy up to a block. We append each persist once to a
  small pending file, move the whole turn into the log with one append when it completes, and
  append index entries every four turns (and on close); after a power cut the few unindexed
  records are found again by scanning the log's tail.
- The memory store keeps RAM flat by streaming: no operation holds all items (ESP-Claw style
  holds every item for every operation). The price is time: each operation parses the records
  file more than once, and compaction rebuilds the keyword index in batches.
- Store, forget and compaction write about as much as ESP-Claw style: MEMORY.md and the index
  are rewritten on every change in both (ours atomically, through temp files).
- Replay holds the parsed messages, which is what the agent needs; it never reads a file whole.
"""


if __name__ == "__main__":
    sys.exit(main())
