"""The report's tables: session history, long-term store, heap, size."""

from .figures import (ESP32_FREE, FACTORS, FLOOR, FS_NAME, KIB, NOT_STORAGE, STORE_NAME, SYS_NAME,
                      device, find, fmt_kb, fmt_ms, med, near_fig, ratio, store_fig, store_run,
                      turn_fig, turn_point)


def session_tables(res, out):
    p = res["plan"]
    out("## Session history")
    out("")
    out("### A persisted turn (50 turns of history)")
    out("")
    out("One turn = three persist calls (user message; tool call and tool result; final answer), "
        "about 0.9 KB of records. Per turn, averaged over %d consecutive turns (the cost depends on "
        "where the files' last partial block falls). Device ms = flash ms + host ms x 30 / x 100." % p["window"])
    out("")
    hdr = "| system |"
    sep = "|---|"
    for fs in p["fs"]:
        hdr += " %s: ops · KB · flash ms | host ms median (min) | device ms |" % FS_NAME[fs]
        sep += "---|---|---|"
    hdr += " ops vs ESP-Claw |"
    sep += "---|"
    out(hdr)
    out(sep)
    for s in p["turn_systems"]:
        row = "| %s |" % SYS_NAME[s]
        rat = []
        for fs in p["fs"]:
            pt = turn_point(res, s, fs, 50)
            f = turn_fig(pt)
            e = turn_fig(turn_point(res, "espclaw", fs, 50))
            row += " %.1f · %s · %s | %s (%s) | %s |" % (f["ops"], fmt_kb(f["bytes"]), fmt_ms(f["flash_ms"]),
                                                       fmt_ms(f["host_ms"]), fmt_ms(f["min_ms"]),
                                                       device(f["flash_ms"], f["host_ms"]))
            rat.append("%.2fx %s" % (ratio(f["ops"], e["ops"]), FS_NAME[fs]))
        out(row + " %s |" % ", ".join(rat))
    out("")
    ours = [turn_fig(turn_point(res, "ours", fs, 50))["ops"] for fs in p["fs"]]
    out("The floor (what the filesystem must write at least for this workload's three durable "
        "appends, derived below): %s; ours is %s of it." % (
            ", ".join("%s %.1f ops" % (FS_NAME[fs], FLOOR[fs]) for fs in p["fs"]),
            " and ".join("%.2fx on %s" % (o / FLOOR[fs], FS_NAME[fs]) for o, fs in zip(ours, p["fs"]))))
    out("")
    out("Host times are medians over the %d turns of the window, measured in each system's own "
        "process; the ESP-Claw column is its port's MicroPython time (the real C code is much "
        "faster: compare CPU against the targets and the peers, not against ESP-Claw)." % p["window"])
    out("")
    out("### Persist cost by history length")
    out("")
    out("Program/erase operations · KB programmed per turn (flash ms per turn in brackets), "
        "averaged over the %d turns from each point; * marks a window that contains a session "
        "compaction (150 KiB limit, reached at ~175 turns)." % p["window"])
    out("")
    hdr = "| system |"
    sep = "|---|"
    for t in p["turn_points"]:
        for fs in p["fs"]:
            hdr += " %d turns %s |" % (t, FS_NAME[fs])
            sep += "---|"
    out(hdr)
    out(sep)
    for s in p["turn_systems"]:
        row = "| %s |" % SYS_NAME[s]
        for t in p["turn_points"]:
            for fs in p["fs"]:
                pt = turn_point(res, s, fs, t)
                f = turn_fig(pt)
                row += " %.0f · %s (%s)%s |" % (f["ops"], fmt_kb(f["bytes"]), fmt_ms(f["flash_ms"]),
                                                "*" if f["compactions"] else "")
        out(row)
    out("")
    rp = res["replay"]["sizes"]
    out("### Request start (the history the agent sends)")
    out("")
    out("Ours: what the Session History provider hands the agent; ESP-Claw: its loader "
        "(`claw_memory_load_session_history_json`, whole history parsed and printed as one JSON "
        "array); ChipClaw-style: its in-RAM messages printed. LittleFS; %d interleaved repetitions "
        "each (reads only, so the filesystem matters little)." % p["replay_reps"])
    out("")
    out("| history | system | host ms median (min) | CPU ms x30 / x100 | time vs ESP-Claw |")
    out("|---|---|---|---|---|")
    for s in rp:
        e = med(s["us"]["espclaw"])
        for k in ("ours", "espclaw", "chipclaw"):
            m = med(s["us"][k]) / 1000.0
            out("| %d turns, %.0f KiB | %s | %s (%s) | %s | %.2f |" % (
                s["turns"], s["bytes"] / KIB, SYS_NAME[k], fmt_ms(m), fmt_ms(min(s["us"][k]) / 1000.0),
                " / ".join(fmt_ms(m * f) for f in FACTORS), ratio(med(s["us"][k]), e)))
    out("")
    if res.get("near"):
        out("### Near the 150 KiB limit")
        out("")
        out("One session of %d turns of the same workload (dialogue ~0.38 KB per turn, tool records "
            "~0.5 KB). ESP-Claw's compaction keeps every user message and final answer and the "
            "newest tool round, so as the dialogue alone approaches the limit its compactions come "
            "closer together until the session is blocked. Ours then drops the oldest whole turns "
            "until 20 more turns of the recent size fit (hysteresis), so it compacts rarely and never "
            "blocks on dialogue. Steady state = the last 40 turns before the end of the run or the "
            "block." % p["near_turns"])
        out("")
        out("| system | FS | first compaction: turn · ops · flash ms · host ms | compactions in the run | "
            "steady state: compactions per 20 turns | turns that compacted | ops per compacting turn (median) | "
            "ops per other turn | blocked at |")
        out("|---|---|---|---|---|---|---|---|---|")
        for fs in p["fs"]:
            for s in ("ours", "espclaw"):
                r = find(res["near"], system=s, fs=fs)
                f = near_fig(r)
                out("| %s | %s | %s · %d · %s · %s | %d | %.1f (turns %d-%d) | %s | %.0f | %.0f | %s |" % (
                    SYS_NAME[s], FS_NAME[fs], f["first"], f["first_ops"], fmt_ms(f["first_flash_ms"]),
                    fmt_ms(f["first_host_ms"]), f["all"], f["per20"], f["lo"], f["end"] - 1,
                    ", ".join(str(t) for t in f["turns"]) or "none", f["win_ops"],
                    f["normal_ops"], f["blocked"] if f["blocked"] is not None else "no"))
        out("")
        out("ESP-Claw compacts in place: it rewrites the kept records from the first dropped one on "
            "and truncates. On FAT that costs only the sectors it rewrites. On LittleFS every "
            "read after a write inside an open file makes littlefs copy the rest of the file "
            "(lfs_file_flush), so moving N records copies the file N times: the first compaction "
            "programs tens of MB. ESP-Claw's own storage partition is FAT; the LittleFS column "
            "shows what its code would cost on a board's LittleFS.")
        out("")


def store_tables(res, out):
    p = res["plan"]
    R = p["R"]
    out("## Long-term store")
    out("")
    out("Stores of 10, 64 and 128 typical items (~100-byte content, two labels of a 40-label catalog) "
        "and the documented capacity (128 items with 255-byte content, 95-byte tags, 127-byte "
        "keywords and 3 labels each: 384 labels). Each system opens the same records file and "
        "derives its index and MEMORY.md from it. store / update / forget: runs of %d / %d / %d operations "
        "(each update and forget on a different item; the store runs cover two of our eviction "
        "cycles at 128 items), every compaction the run triggers included; "
        "per operation. Flash from the first repetition (it is the same in every one); host ms over "
        "all repetitions (%d runs at 128 items, else 1; n = operations timed): median, min, mean."
        % (R["store"], R["update"], R["forget"], p["K128"]))
    out("")
    for op in ("store", "update", "forget"):
        out("### %s" % op)
        out("")
        hdr = "| items | system |"
        sep = "|---|---|"
        for fs in p["fs"]:
            hdr += " %s: ops · KB · flash ms per op | host ms median / min / mean (n) | compactions per %d | device ms |" % (
                FS_NAME[fs], R[op])
            sep += "---|---|---|---|"
        hdr += " bytes vs ESP-Claw |"
        sep += "---|"
        out(hdr)
        out(sep)
        for size in p["store_sizes"]:
            for s in p["store_systems"]:
                row = "| %s | %s |" % ("128, capacity" if size == "cap" else size, STORE_NAME[s])
                rat = []
                for fs in p["fs"]:
                    f = store_run(res, s, fs, size, op)
                    e = store_run(res, "espclaw", fs, size, op)
                    extra = ""
                    if f["errors"]:
                        extra = " (%d failed: %s)" % (f["errors"], f["error"])
                    row += " %.0f · %s · %s%s | %s / %s / %s (%d) | %d | %s |" % (
                        f["ops"], fmt_kb(f["bytes"]), fmt_ms(f["flash_ms"]), extra, fmt_ms(f["host_ms"]),
                        fmt_ms(f["min_ms"]), fmt_ms(f["mean_ms"]), f["n"], f["compactions"],
                        device(f["flash_ms"], f["mean_ms"]))
                    rat.append("%.2fx" % ratio(f["bytes"], e["bytes"]))
                out(row + " %s |" % " / ".join(rat))
        out("")
    out("Device ms uses the mean host time (compactions included). ESP-Claw compacts after every "
        "change once the records file reaches 32 KiB (every change at 128 items), and an update "
        "is a store plus a forget, each followed by the check, plus a final one.")
    out("")
    caps = [r for r in res["store"] if r["size"] == "cap" and r["system"] == "espclaw"]
    if caps:
        c = caps[0]
        f = store_fig(c["store"])
        out("At capacity ESP-Claw does not keep the store: its compaction writes the records into "
            "a buffer of 512 bytes per item, and items at the maximum sizes need ~650, so each "
            "compaction cuts the file there (a torn last line, the items after it lost). It holds "
            "%d of the 128 items after its first compaction and %s after the %d stores above; "
            "updates fail when the item was cut." % (c["active"], f["items_after"], R["store"]))
        out("")
    out("### recall and list")
    out("")
    hdr = "| items | system |"
    sep = "|---|---|"
    for fs in p["fs"]:
        hdr += " recall %s: host ms median (min) · ops · bytes | list %s: host ms median (min) |" % (FS_NAME[fs], FS_NAME[fs])
        sep += "---|---|"
    out(hdr)
    out(sep)
    for size in p["store_sizes"]:
        if size not in (128, "cap"):
            continue
        for s in p["store_systems"]:
            row = "| %s | %s |" % ("128, capacity" if size == "cap" else size, STORE_NAME[s])
            for fs in p["fs"]:
                rc = store_run(res, s, fs, size, "recall")
                ls = store_run(res, s, fs, size, "list")
                row += " %s (%s) · %.0f · %.0f | %s (%s) |" % (fmt_ms(rc["host_ms"]), fmt_ms(rc["min_ms"]), rc["ops"],
                                                           rc["bytes"], fmt_ms(ls["host_ms"]), fmt_ms(ls["min_ms"]))
            out(row)
    out("")
    out("A recall appends one digest line per returned item (ESP-Claw: one open and close each). "
        "The ESP-Claw and naive times are MicroPython times of ports, not of the real systems.")
    out("")


def heap_tables(res, out):
    heap = res.get("heap")
    out("## Heap (32-bit ESP32-like build)")
    out("")
    if not heap:
        out("Not measured: %s." % res.get("mp32_missing"))
        out("")
        return
    out("The ESP32-like port of `tools/build_mp32.py --plain`: the unix port built for 32-bit x86 with "
        "single-precision floats, so objects have the chip's sizes and ints above 2**30 are "
        "heap-allocated big ints, as on the ESP32-S3. (The 64-bit port is not \"about twice\": "
        "measured, 32-bit peaks are 0.7-1.05x the 64-bit ones, and big ints and fragmentation can "
        "make the 32-bit build need more.) The data root is on simulated LittleFS kept in a host "
        "file (outside the heap); the 2,000 sessions are in a host directory.")
    out("")
    out("The library is imported from bytecode .mpy (as from /lib on a board). Above idle: the "
        "sampled high-water mark (tools/benchmark/mp/heapmeter.py) in a run given the heap shown; idle = "
        "library imported, memory opened, device mounted, the store or session opened. Smallest "
        "heap: the smallest `-X heapsize` (4 KiB steps) in which setting up and then the "
        "operation (without the meter) succeed, and how much of it was free at idle: what the "
        "operation needs free, fragmentation included. The \"nothing\" rows are the floor: "
        "setting up alone. An ESP32-S3 without PSRAM has about 145 KB free. The last column "
        "compares only what an operation needs free at idle with that: the imported code and the "
        "open memory come on top (the whole heap on a board: the section of tools/heap32.py).")
    out("")
    info = heap["info"]
    out("| operation | heap given | above idle (sampled) | result | smallest heap that works | needs <= ~145 KB free at idle? | 64-bit above idle (reference) |")
    out("|---|---|---|---|---|---|---|")
    names = [
        ("store_nothing", "nothing (floor for the store rows)"),
        ("store", "store, capacity store"), ("update", "update, capacity store"),
        ("forget", "forget, capacity store"), ("recall", "recall, capacity store"),
        ("list", "list (all 128 items), capacity store"), ("labels", "label catalog (384 labels)"),
        ("compact", "store compaction, capacity store"),
        ("session_nothing", "nothing (floor for the two session rows)"),
        ("request_start", "request start, %.0f KiB history (%d turns)" % (info["history"]["bytes"] / KIB,
                                                                          info["history"]["turns"])),
        ("session_compact", "session compaction, %.0f KiB" % (info["history"]["bytes"] / KIB)),
        ("list_sessions", "`Sessions.list()`, 2,000 sessions"),
        ("open", "open a data root with 20 sessions"),
    ]
    for key, title in names:
        r = heap.get(key)
        if r is None:
            continue
        result = "ok" if r["ok"] else (r["error"] or "failed")
        mh = r.get("min_heap", "not searched")
        fits = "-"
        if mh is None:
            mh = "MemoryError even with a 4 MB heap"
            fits = "no"
        elif not isinstance(mh, str):
            need = mh["heap"] - mh["idle"]
            fits = "yes" if need <= ESP32_FREE else "no (MemoryError)"
            mh = "%d KiB (%d KiB free at idle)" % (mh["heap"] // KIB, need // KIB)
        b64 = r.get("bits64")
        b64 = "-" if not b64 else "%.1f KiB%s" % (b64["above"] / KIB, "" if b64["ok"] else " (" + str(b64["error"]) + ")")
        above = "-" if key.endswith("nothing") else "%.1f KiB" % (r["above"] / KIB)
        out("| %s | %s | %s | %s | %s | %s | %s |" % (title, "-" if key.endswith("nothing") else r["heap"], above,
                                                      "-" if key.endswith("nothing") else result, mh, fits, b64))
    out("")
    ls = heap.get("list_sessions")
    if ls and ls["ok"] and ls.get("min_heap", 0) is None:
        out("`Sessions.list()` with 2,000 sessions succeeds under the meter, whose frequent "
            "collections keep the heap compact, and fails without it even in a 4 MB heap: the "
            "rows it keeps end up scattered over the whole heap, and the growing list of them "
            "then needs a contiguous block that is no longer there.")
        out("")
    out("What the sampling can miss: memory allocated and freed again inside one function between "
        "two calls, memory held only inside a C builtin while it runs (json.loads holds its input "
        "and the growing result), and fragmentation (the meter collects garbage often, which itself "
        "keeps the heap compact). The smallest-heap search, run without the meter, catches the last "
        "two: where an operation needs much more free heap than its sampled peak, fragmentation or "
        "a large contiguous allocation is why.")
    out("")


def size_table(res, out):
    sizes = res["mpy"]
    storage = sum(v for k, v in sizes.items() if not k.startswith(NOT_STORAGE))
    total = sum(sizes.values())
    imp = res["import"]
    bits = "32-bit" if imp["bits"] == 32 else "64-bit"
    out("## Size")
    out("")
    out("| what | bytes |")
    out("|---|---|")
    out("| .mpy (xtensawin), storage layers, hooks and tools (all but agent and llm) | %d |" % storage)
    out("| .mpy (xtensawin), whole package (%d modules) | %d |" % (len(sizes), total))
    out("| heap after `import claw_memory.memory` from .py (%s) | %d |" % (bits, imp["py"]["memory"]))
    out("| heap after `import claw_memory.memory` from bytecode .mpy, as from /lib (%s) | %d |" % (bits, imp["mpy"]["memory"]))
    out("| heap after importing every module from bytecode .mpy (%s) | %d |" % (bits, imp["mpy"]["all_modules"]))
    out("| heap held by an opened memory, nothing read yet (%s) | %d |" % (bits, imp["mpy"]["opened"]))
    out("")
    out(".mpy sizes are compiled from paths relative to the repository root (mpy-cross embeds the "
        "source path). Frozen into firmware, the bytecode stays in flash; the module objects and "
        "functions are still made in the heap (FULL mode's imports: about 19 KiB, see the "
        "whole-heap section).")
    out("")
