"""The figures the report is made of: device time from the simulator's counters, medians,
ratios, formatting, and the per-turn / per-operation / near-limit summaries of raw results."""

import statistics

NOT_STORAGE = ("agent", "llm/")  # module prefixes outside "storage layers, hooks and tools"
KIB = 1024
ESP32_FREE = 145000  # heap free on an ESP32-S3 without PSRAM, about (docs/DESIGN.md, section 5)
ERASE_MS = 45.0
PROG_MS_PER_256 = 0.7
FACTORS = (30, 100)
FS = ("lfs2", "fat")
FS_NAME = {"lfs2": "LittleFS", "fat": "FAT"}
SYS_NAME = {"ours": "ours", "ours-noindex": "ours, history search index off", "espclaw": "ESP-Claw", "chipclaw": "ChipClaw-style (rewrite per turn)",
            "naive": "naive (rewrite per persist)"}
STORE_NAME = {"ours": "ours", "espclaw": "ESP-Claw", "naive": "naive (one JSON file)"}


def flash_ms(f, n=1):
    return (ERASE_MS * f["erases"] + PROG_MS_PER_256 * f["bytes_programmed"] / 256.0) / n


def med(xs):
    return statistics.median(xs) if xs else 0.0


def ratio(a, b):
    return a / b if b else float("inf")


def fmt_ms(x):
    if x >= 100:
        return "%.0f" % x
    if x >= 10:
        return "%.1f" % x
    return "%.2f" % x


def fmt_kb(n):
    return "%.1f" % (n / 1000.0)


def device(fl_ms, host_ms):
    return " / ".join(fmt_ms(fl_ms + host_ms * f) for f in FACTORS)


# What the filesystems must write at least for the turn workload's three durable appends
# (program/erase operations; derived in the report's "The floor of a persisted turn").
FLOOR = {"lfs2": 35.6, "fat": 12.9}
ACCEPTED = "accepted"  # a target's verdict: missed, and kept so on purpose (the report says why)


def verdict(ok):
    if ok == ACCEPTED:
        return "ACCEPTED (see the store's flatness below)"
    return "PASS" if ok else "FAIL"


def target_table(rows, out):
    """A section's targets: (name, measured, ok) rows, with a blank line before and after."""
    out("")
    out("| target | measured | |")
    out("|---|---|---|")
    for name, val, ok in rows:
        out("| %s | %s | %s |" % (name, val, verdict(ok)))
    out("")


def find(rows, **kw):
    for r in rows:
        if all(r.get(k) == v for k, v in kw.items()):
            return r
    return None


def turn_point(res, system, fs, turns):
    r = find(res["turns"], system=system, fs=fs)
    if r is None:
        return None
    for p in r["points"]:
        if p["turns"] == turns:
            return p
    return None


def turn_fig(p):
    """Per-turn figures of a window: ops, bytes, flash ms, host ms (median, min)."""
    n = p["window"]
    us = p["us"]
    return {"ops": p["flash"]["ops"] / n, "bytes": p["flash"]["bytes_programmed"] / n,
            "flash_ms": flash_ms(p["flash"], n), "host_ms": med(us) / 1000.0, "min_ms": min(us) / 1000.0,
            "n": n, "compactions": p["compactions"]}


def store_fig(run):
    """Per-operation figures of a run of operations (the first repetition's flash; times of
    every repetition)."""
    f = run[0]["flash"]
    R = len(run[0]["us"])
    us = [u for r in run for u in r["us"]]
    return {"ops": f["ops"] / R, "bytes": f["bytes_programmed"] / R, "flash_ms": flash_ms(f, R),
            "host_ms": med(us) / 1000.0, "min_ms": min(us) / 1000.0, "mean_ms": sum(us) / len(us) / 1000.0,
            "n": len(us), "compactions": run[0]["compactions"], "errors": run[0]["errors"],
            "error": run[0].get("error"), "items_after": run[0].get("items_after")}


def near_fig(r, window=40):
    turns = r["turns"]
    end = len(turns) if r["blocked"] is None else r["blocked"]
    lo = max(0, end - window)
    comp = [i for i, t in enumerate(turns) if t[4]]
    inwin = [i for i in comp if lo <= i < end]
    normal = [t[0] for i, t in enumerate(turns[lo:end], lo) if not t[4]]
    first = comp[0] if comp else None
    ft = turns[first] if first is not None else None
    return {"end": end, "lo": lo, "blocked": r["blocked"], "count": len(inwin), "per20": len(inwin) * 20.0 / max(end - lo, 1),
            "first": first, "first_ops": ft[0] if ft else 0,
            "first_flash_ms": (ERASE_MS * ft[1] + PROG_MS_PER_256 * ft[2] / 256.0) if ft else 0,
            "first_host_ms": ft[3] / 1000.0 if ft else 0,
            "win_ops": med([turns[i][0] for i in inwin]) if inwin else 0,
            "win_flash_ms": med([ERASE_MS * turns[i][1] + PROG_MS_PER_256 * turns[i][2] / 256.0 for i in inwin]) if inwin else 0,
            "normal_ops": med(normal) if normal else 0, "all": len(comp), "turns": inwin}


def store_run(res, system, fs, size, op):
    r = find(res["store"], system=system, fs=fs, size=size)
    if r is None or op not in r:
        return None
    return store_fig(r[op])


def replay_size(res, target):
    for s in res["replay"]["sizes"]:
        if (target < 1000 and s["turns"] == target) or (target >= 1000 and s["bytes"] >= target):
            return s
    return None
