"""Running the benchmark: the plan, one MicroPython process per case, the heap cases on the
32-bit build (with the smallest-heap search), import heap and .mpy sizes."""

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

from claw_memory_cli import hosttools

from .figures import FS, KIB

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
HERE = os.path.dirname(os.path.abspath(__file__))
CASES = os.path.join(HERE, "mp")  # the MicroPython side: the cases, the heap meter
BASELINES = os.path.join(HERE, "baselines")  # ESP-Claw's port, the peers
FLASHSIM = os.path.join(ROOT, "claw_memory_cli", "runtime")  # the simulated flash
MP_PATH = [CASES, BASELINES, FLASHSIM]


# -- running cases ----------------------------------------------------------------------------


def _tool(name, env):
    found = hosttools.find(name, env)
    if not found:  # run with the system python3: the venv's tools are still the pinned ones
        here = os.path.join(ROOT, ".venv", "bin", name)
        found = here if os.path.exists(here) else None
    return found


def micropython64():
    mp = _tool("micropython", "MICROPYTHON")
    if not mp:
        raise SystemExit("no MicroPython unix port: run `python3 tools/dev.py setup` first")
    return mp


def micropython32():
    """(path, None) or (None, why it is missing): $MICROPYTHON32, else the ESP32-like port
    tools/build_mp32.py builds (without the package: the heap cases load it as .mpy)."""
    path = os.environ.get("MICROPYTHON32")
    if path:
        if os.path.exists(path) and os.access(path, os.X_OK):
            return path, None
        return None, "MICROPYTHON32=%s is not an executable" % path
    sys.path.insert(0, os.path.join(ROOT, "tools"))
    import build_mp32

    try:
        return build_mp32.build(plain=True), None
    except build_mp32.Unavailable as e:
        return None, "the 32-bit ESP32-like port cannot be built here (tools/build_mp32.py): %s" % e


class Runner:
    def __init__(self, mp64, mp32, verbose=True):
        self.mp64 = mp64
        self.mp32 = mp32
        self.verbose = verbose
        self.cases = 0

    def run(self, case, args, heap="24M", bits=64, script="bench_main.py", extra_path=None, timeout=1800,
            may_fail=False):
        mp = self.mp64 if bits == 64 else self.mp32
        env = dict(os.environ)
        env["MICROPYPATH"] = os.pathsep.join(([extra_path] if extra_path else []) + [ROOT] + MP_PATH + [".frozen"])
        cmd = [mp, "-X", "heapsize=" + heap, os.path.join(CASES, script), case, json.dumps(args)]
        t = time.time()
        r = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=ROOT, timeout=timeout)
        self.cases += 1
        if self.verbose:
            print("  %-10s %-60s %5.1fs" % (case, json.dumps(args)[:60], time.time() - t), file=sys.stderr)
        for line in r.stdout.splitlines():
            if line.startswith("BENCH "):
                return json.loads(line[6:])
        if may_fail and "MemoryError" in r.stdout + r.stderr:  # before the case could report
            return {"ok": False, "error": "MemoryError before setting up"}
        raise SystemExit("bench case %s %s failed:\n%s%s" % (case, args, r.stdout[-3000:], r.stderr[-3000:]))


# -- the plan ----------------------------------------------------------------------------------


def plan(quick):
    fss = ("lfs2",) if quick else FS
    p = {
        "fs": fss,
        "turn_systems": ("ours", "espclaw") if quick else ("ours", "ours-noindex", "espclaw", "chipclaw", "naive"),
        "turn_points": [10, 50] if quick else [10, 50, 100, 300],
        "window": 8 if quick else 16,
        "near_turns": 0 if quick else 440,
        "replay_reps": 7 if quick else 21,
        "store_sizes": [128] if quick else [10, 64, 128, "cap"],
        "store_systems": ("ours", "espclaw") if quick else ("ours", "espclaw", "naive"),
        # Operations per run: a store run covers two of our eviction cycles at 128 items
        # (evicted lines are compacted at a third of the lines: every 32nd store), so its
        # compactions are counted at their steady rate, not skipped by a short window.
        "R": {"store": 64, "update": 10, "forget": 10, "recall": 10, "list": 10},
        "K128": 1 if quick else 3,
        "heap_search": not quick,
    }
    return p


HEAP_CASES = [
    # (key, args, heap given to the sampled run, meter stride)
    ("store_nothing", {"what": "store", "op": "nothing"}, "1M", 1),
    ("store", {"what": "store", "op": "store"}, "1M", 1),
    ("update", {"what": "store", "op": "update"}, "1M", 1),
    ("forget", {"what": "store", "op": "forget"}, "1M", 1),
    ("recall", {"what": "store", "op": "recall"}, "1M", 1),
    ("list", {"what": "store", "op": "list"}, "1M", 1),
    ("labels", {"what": "store", "op": "labels"}, "1M", 1),
    ("compact", {"what": "store", "op": "compact"}, "1M", 1),
    ("session_nothing", {"what": "session_nothing"}, "512K", 1),
    ("request_start", {"what": "request_start"}, "1M", 1),
    ("session_compact", {"what": "session_compact"}, "512K", 1),
    ("list_sessions", {"what": "list_sessions"}, "1M", 32),
    ("open", {"what": "open"}, "512K", 1),
]


SECTIONS = ("turns", "near", "replay", "store", "heap", "size", "recall", "search")


def collect(args, res=None):
    """Run the sections asked for (all by default) into `res` (a fresh dict by default)."""
    only = set(args.only.split(",")) if args.only else set(SECTIONS)
    bad = only - set(SECTIONS)
    if bad:
        raise SystemExit("unknown section(s) %s; known: %s" % (", ".join(sorted(bad)), ", ".join(SECTIONS)))
    p = plan(args.quick) if res is None else res["plan"]
    mp64 = micropython64()
    mp32, why32 = micropython32()
    run = Runner(mp64, mp32, verbose=not args.silent)
    if res is None:
        res = {"plan": p, "started": time.strftime("%Y-%m-%d %H:%M"), "load": os.getloadavg()[0]}
    else:  # (a saved run, some sections run again: the report says which and when)
        res.setdefault("rerun", []).append([",".join(sorted(only)), time.strftime("%Y-%m-%d %H:%M")])
    res["mp32_missing"] = why32
    t0 = time.time()
    if "turns" in only:
        print("session history...", file=sys.stderr)
        res["turns"] = [run.run("turns", {"fs": fs, "system": s, "points": p["turn_points"], "window": p["window"]})
                        for fs in p["fs"] for s in p["turn_systems"]]
    if "near" in only and p["near_turns"]:
        res["near"] = [run.run("near_limit", {"fs": fs, "system": s, "turns": p["near_turns"]})
                       for fs in p["fs"] for s in ("ours", "espclaw")]
    if "replay" in only:
        res["replay"] = run.run("replay", {"sizes": [50, 153600], "reps": p["replay_reps"]})
    if "store" in only:
        print("long-term store...", file=sys.stderr)
        res["store"] = []
        for fs in p["fs"]:
            for size in p["store_sizes"]:
                for s in p["store_systems"]:
                    ops = ["store", "update", "forget"]
                    if size in (128, "cap"):
                        ops += ["recall", "list"]
                    k = p["K128"] if size == 128 and s != "naive" else 1
                    res["store"].append(run.run("store_ops", {"fs": fs, "system": s, "size": size, "R": p["R"],
                                                              "K": k, "ops": ops}))
    if "recall" in only:
        from . import recall_eval

        print("ranked recall...", file=sys.stderr)
        res["recall"] = {"retrieval": recall_eval.retrieval(), "agent": recall_eval.agent_cost(),
                         "cost64": recall_eval.query_cost(run, 64),
                         "cost32": recall_eval.query_cost(run, 32) if mp32 else None}
    if "search" in only:
        from . import search_eval

        print("history search...", file=sys.stderr)
        res["search"] = search_eval.evaluate()
        res["search"]["cost64"] = search_eval.query_cost(run, 64)
        res["search"]["cost32"] = search_eval.query_cost(run, 32) if mp32 else None
    with tempfile.TemporaryDirectory() as tmp:
        if "heap" in only:
            if mp32:
                print("heap (32-bit)...", file=sys.stderr)
                res["heap"] = heap_cases(run, tmp, p["heap_search"])
            else:
                print("heap skipped: " + why32, file=sys.stderr)
                res.pop("heap", None)
        if "size" in only:
            res["import"] = import_heap(run, tmp, bits=32 if mp32 else 64)
            res["mpy"] = mpy_sizes(tmp)
    res["seconds"] = res.get("seconds", 0) * (len(only) < len(SECTIONS)) + time.time() - t0
    res["cases"] = res.get("cases", 0) * (len(only) < len(SECTIONS)) + run.cases
    return res


def _images(run, tmp):
    imgs = {"store": os.path.join(tmp, "cap.img"), "history": os.path.join(tmp, "hist.img"),
            "root": os.path.join(tmp, "root.img"), "sessions": os.path.join(tmp, "sessions2000")}
    info = {}
    info["store"] = run.run("prepare", {"what": "store", "size": "cap", "image": imgs["store"], "blocks": 256})
    info["history"] = run.run("prepare", {"what": "history", "bytes": 150 * KIB, "image": imgs["history"],
                                          "blocks": 256})
    info["root"] = run.run("prepare", {"what": "sessions", "count": 20, "dir": imgs["root"]})
    info["sessions"] = run.run("prepare", {"what": "sessions", "count": 2000, "dir": imgs["sessions"]})
    imgs["target"], imgs["label"] = info["store"]["target"], info["store"]["label"]
    return imgs, info


def _heap_args(key, a, imgs, tmp, copy=True):
    a = dict(a)
    if a["what"] == "store":
        src = imgs["store"]
        a["target"], a["label"] = imgs["target"], imgs["label"]
    elif a["what"] in ("request_start", "session_compact", "session_nothing"):
        src = imgs["history"]
    else:
        a["dir"] = imgs["root"] if a["what"] == "open" else imgs["sessions"]
        if a["what"] == "open":
            a["image"] = None
        return a
    if copy:  # every run starts from the same bytes (the operations write)
        dst = os.path.join(tmp, "run.img")
        shutil.copyfile(src, dst)
        a["image"] = dst
    return a


def heap_cases(run, tmp, search):
    imgs, info = _images(run, tmp)
    # Imported from bytecode .mpy, as from /lib on a board: no compiler garbage in the heap.
    bc = bytecode_package(os.path.join(tmp, "bc"), tools=True)
    out = {"info": info}
    for key, a, heap, stride in HEAP_CASES:
        args = _heap_args(key, a, imgs, tmp)
        args["stride"] = stride
        if key.endswith("nothing"):
            r = {"ok": True, "above": 0, "idle": 0}
        else:
            r = run.run("heap", args, heap=heap, bits=32, extra_path=bc)
        r["heap"] = heap
        if search:
            r["min_heap"] = smallest_heap(run, key, a, imgs, tmp, bc)
        if key.endswith("nothing"):
            out[key] = r
            continue
        if key != "list_sessions":  # the 64-bit figure beside, for reference (not a target)
            args = _heap_args(key, a, imgs, tmp)
            r["bits64"] = run.run("heap", args, heap="%dK" % (2 * int(heap[:-1]) * (1024 if heap[-1] == "M" else 1)),
                                  extra_path=bc)
        out[key] = r
    return out


def smallest_heap(run, key, a, imgs, tmp, bc):
    """The smallest -X heapsize (4 KiB steps) the set-up operation succeeds in, and the idle
    heap in that run: {"heap", "idle"} in bytes, or None when 4 MB is not enough."""

    def ok(kib):
        args = _heap_args(key, a, imgs, tmp)
        args["meter"] = False
        r = run.run("heap", args, heap="%dK" % kib, bits=32, extra_path=bc, may_fail=True)
        return r if r["ok"] else None

    lo, hi = 64, 512
    found = ok(hi)
    while not found:
        lo, hi = hi, hi * 2
        if hi > 4096:
            return None
        found = ok(hi)
    while hi - lo > 4:
        mid = (lo + hi) // 2 // 4 * 4
        if mid <= lo:
            break
        r = ok(mid)
        if r:
            hi, found = mid, r
        else:
            lo = mid
    return {"heap": hi * KIB, "idle": found["idle"]}


def import_heap(run, tmp, bits):
    res = {"bits": bits}
    res["py"] = run.run("import_heap", {}, heap="2M", bits=bits, script="import_heap.py")
    res["mpy"] = run.run("import_heap", {}, heap="2M", bits=bits, script="import_heap.py",
                         extra_path=bytecode_package(os.path.join(tmp, "bc")))
    return res


def _compile(src, dst, arch=None):
    # From the repository root with a relative source path: the path mpy-cross embeds (and
    # so the size) is the same on every machine.
    cmd = [_tool("mpy-cross", "MPY_CROSS")] + (["-march=" + arch] if arch else []) + ["-o", dst, src]
    subprocess.run(cmd, check=True, cwd=ROOT)


def mpy_sizes(tmp):
    sizes = {}
    for src in hosttools.package_modules():
        dst = os.path.join(tmp, "x", src[:-3] + ".mpy")
        os.makedirs(os.path.dirname(dst), exist_ok=True)
        _compile(src, dst, "xtensawin")
        sizes[src[len("claw_memory/"):-3]] = os.path.getsize(dst)
    return sizes


def bytecode_package(tmp, tools=False):
    """claw_memory compiled to portable bytecode .mpy (what a board loads from /lib); with
    `tools`, the benchmark's own modules too (the heap cases load them precompiled)."""
    srcs = hosttools.package_modules()
    if tools:
        srcs += [os.path.relpath(os.path.join(d, n), ROOT) for d, n in (
            (CASES, "bench_mp.py"), (BASELINES, "espclaw.py"), (BASELINES, "peers.py"),
            (FLASHSIM, "flashsim.py"), (CASES, "heapmeter.py"))]
    for src in srcs:
        dst = os.path.join(tmp, src[:-3] + ".mpy") if src.startswith("claw_memory/") else \
            os.path.join(tmp, os.path.basename(src)[:-3] + ".mpy")
        os.makedirs(os.path.dirname(dst), exist_ok=True)
        _compile(src, dst)
    return tmp
