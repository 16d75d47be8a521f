#!/usr/bin/env python3
"""The whole heap each operation at documented capacity needs on the ESP32-like 32-bit port,
with the package frozen into the firmware and as .mpy loaded from a folder (what `deploy` and
`mip` install): imports + open memory + the operation's sampled peak, whether the imports,
the open memory and the operation complete with 145 KiB free before the import (what an
ESP32-S3 without PSRAM has), and the smallest -X heapsize in which they complete (fragmentation
included; the heap it gives minus what the interpreter and the script held at the start is
what the package needed free). Prints markdown tables (about 6 minutes on 2 idle cores).

    python3 tools/heap32.py [--variant frozen|mpy] [--steps open,store,...] [--no-meter]
                            [--stride N] [--no-search] [--mode full|lite]

Needs what tools/build_mp32.py needs (CLAW_MPY_SRC, CLAW_MPLIB). The operations, the data
root and the heap figures come from tests_host/support/capacity.py (tests_host/test_heap32.py runs
the same operations as a budget).
"""

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
SUPPORT = os.path.join(ROOT, "tests_host", "support")  # capacity.py
METER_DIR = os.path.join(ROOT, "tools", "benchmark", "mp")  # heapmeter.py
sys.path.insert(0, HERE)
sys.path.insert(0, ROOT)

import build_mp32  # noqa: E402

from claw_memory_cli import hosttools  # noqa: E402

KIB = 1024
BOARD_KIB = 145  # what an ESP32-S3 without PSRAM has free after its firmware boots
METER_HEAP = "400K"  # the meter's gc.mem_alloc() walks the heap: a small heap runs faster


def mpy_package(dest):
    """The package compiled to .mpy into `dest`/claw_memory (as `deploy` writes /lib)."""
    mpy_cross = hosttools.find("mpy-cross")
    for mod in hosttools.package_modules():
        out = os.path.join(dest, mod[:-3] + ".mpy")
        os.makedirs(os.path.dirname(out), exist_ok=True)
        subprocess.run([mpy_cross, "-o", out, mod], cwd=ROOT, check=True)


def ports():
    """{"frozen": the port with the package frozen in, "mpy": the same port without it}."""
    return {"frozen": build_mp32.build(plain=False), "mpy": build_mp32.build(plain=True)}


def capacity(binary, pkg, cwd, *args, heap="4M", timeout=600):
    """Run tests_host/support/capacity.py; `pkg` a folder of .mpy, or None for the frozen package."""
    env = dict(os.environ)
    env["MICROPYPATH"] = os.pathsep.join(([pkg] if pkg else []) + [SUPPORT, METER_DIR, ".frozen"])
    return subprocess.run([binary, "-X", "heapsize=" + heap, os.path.join(SUPPORT, "capacity.py")]
                          + list(args), env=env, cwd=cwd, capture_output=True, text=True,
                          timeout=timeout)


def _copy(src, dst):
    # The 2,000 small sessions are only listed: linked, which is quicker than 4,000 copies.
    if "_web_" in os.path.basename(src):
        os.link(src, dst)
    else:
        shutil.copy2(src, dst)


def operation(binary, pkg, cwd, *args, heap="4M", mode="full"):
    """capacity.py run ... (lite ... with mode="lite") on a fresh copy of the data root (the
    operations change it)."""
    root = os.path.join(cwd, "root")
    shutil.rmtree(root, ignore_errors=True)
    shutil.copytree(os.path.join(cwd, "root0"), root, copy_function=_copy)
    shutil.copyfile(os.path.join(cwd, "root0.ids"), root + ".ids")
    return capacity(binary, pkg, cwd, "lite" if mode == "lite" else "run", "root", *args,
                    heap=heap)


def figures(out):
    """{"start", "imports", "ready", "opened", "tools", "request": bytes (those capacity.py
    printed), "from": path, "steps": {name: line fields}}"""
    res = {"steps": {}}
    for line in out.splitlines():
        m = re.match(r"(start|imports|ready|opened|tools|request) (-?\d+)$", line)
        if m:
            res[m.group(1)] = int(m.group(2))
        elif line.startswith("from "):
            res["from"] = line[5:]
        m = re.match(r"(\S+)\s+ok\s+idle\s+([-+]?\d+)\s+biggest block (\d+)(?:\s+peak (\d+))?", line)
        if m:
            res["steps"][m.group(1)] = {"idle": int(m.group(2)), "biggest": int(m.group(3)),
                                        "peak": int(m.group(4)) if m.group(4) else None}
    res["ok"] = out.rstrip().endswith("ALL-OK")
    return res


def smallest_heap(binary, pkg, cwd, step, lo=32, hi=1024, mode="full"):
    """Smallest -X heapsize in KiB (1 KiB steps) in which opening the memory and `step`
    complete, with the run at that size; (None, None) when `hi` is not enough."""

    def ok(kib):
        r = operation(binary, pkg, cwd, "0", "", step, heap="%dK" % kib, mode=mode)
        f = figures(r.stdout)
        return f if r.returncode == 0 and f["ok"] else None

    found = ok(hi)
    if not found:
        return None, None
    while hi - lo > 1:
        mid = (lo + hi) // 2
        r = ok(mid)
        if r:
            hi, found = mid, r
        else:
            lo = mid
    return hi, found


def main(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--variant", choices=("frozen", "mpy"), action="append")
    p.add_argument("--steps", help="comma-separated steps of capacity.py (default: all)")
    p.add_argument("--no-meter", action="store_true", help="skip the sampled peaks")
    p.add_argument("--stride", type=int, default=1,
                   help="sample every Nth call: quicker, misses up to 10 KiB (default 1)")
    p.add_argument("--no-search", action="store_true", help="skip the smallest-heap search")
    p.add_argument("--mode", choices=("full", "lite"), default="full",
                   help="the memory opened: FULL (the store at capacity) or LITE")
    p.add_argument("--write", metavar="TABLES",
                   help="put TABLES (markdown this tool printed) into docs/PERFORMANCE.md's "
                        "whole-heap section instead of measuring")
    a = p.parse_args(argv)
    if a.write:
        with open(a.write) as f:
            print(write_doc(f.read()))
        return
    try:
        bins = ports()
    except build_mp32.Unavailable as e:
        sys.exit("heap32: the 32-bit port cannot be built here: %s" % e)
    with tempfile.TemporaryDirectory() as tmp:
        pkg = os.path.join(tmp, "mpy")
        mpy_package(pkg)
        r = capacity(bins["frozen"], None, tmp, "build", "root0")
        if r.returncode != 0:
            sys.exit("heap32: building the data root failed:\n" + r.stdout + r.stderr)
        rows = {}
        for variant in a.variant or ("frozen", "mpy"):
            rows[variant] = measure(bins[variant], pkg if variant == "mpy" else None, tmp, a)
    print(table(rows))


def measure(binary, pkg, tmp, a):
    log = sys.stderr
    mode = a.mode
    base = figures(operation(binary, pkg, tmp, "0", mode=mode).stdout)
    if not base["ok"]:
        sys.exit("heap32: the operations fail in a 4 MB heap")
    names = [n for n in base["steps"] if not a.steps or n in a.steps.split(",")]
    res = {"base": base, "steps": {}, "mode": mode}
    if mode == "full":
        res["held"] = figures(capacity(binary, pkg, tmp, "held", "root").stdout)
    for name in names:
        row = {}
        if not a.no_meter:
            how = "meter:%d" % a.stride
            f = figures(operation(binary, pkg, tmp, "0", how, name, heap=METER_HEAP, mode=mode).stdout)
            row["peak"] = f["steps"].get(name, {}).get("peak")
        whole = operation(binary, pkg, tmp, str(BOARD_KIB), "whole", name, mode=mode)
        row["fits"] = whole.returncode == 0 and figures(whole.stdout)["ok"]
        if not a.no_search:
            kib, f = smallest_heap(binary, pkg, tmp, name, mode=mode)
            row["heap"] = kib
            row["start"] = f and f.get("start")
        res["steps"][name] = row
        print("heap32: %s %s %s" % (pkg and "mpy" or "frozen", name, row), file=log, flush=True)
    return res


def _kib(n):
    return "-" if n is None else "%.1f" % (n / KIB)


def table(rows):
    """One markdown table per variant."""
    out = []
    for variant, res in rows.items():
        b = res["base"]
        out += ["", "%s (claw_memory from %s): %s KiB held before the import (interpreter and "
                "capacity.py), imports %s KiB, ready %s KiB (%s)." % (
                    variant, b.get("from"), _kib(b.get("start")), _kib(b.get("imports")),
                    _kib(b.get("ready")), {"full": "imports, open FULL memory at capacity, its tools "
                                                   "and capacity.py's own objects",
                                           "lite": "imports and open LITE memory"}[res["mode"]])]
        h = res.get("held")
        if h:
            out.append("As a main.py holds it, from before `import claw_memory`: the FULL memory "
                       "at capacity opened %s KiB, with the model's tools %s KiB, after a first "
                       "request on the 150 KiB session %s KiB." % (
                           _kib(h.get("opened")), _kib(h.get("tools")), _kib(h.get("request"))))
        out += ["",
                "| operation | whole-heap peak (sampled) KiB | free at that peak in %d KiB | "
                "completes in %d KiB? | smallest -X heapsize KiB | free at start in it KiB |"
                % (BOARD_KIB, BOARD_KIB), "|---|---|---|---|---|---|"]
        for name, r in res["steps"].items():
            peak, heap = r.get("peak"), r.get("heap")
            out.append("| %s | %s | %s | %s | %s | %s |" % (
                name, _kib(peak), _kib(None if peak is None else BOARD_KIB * KIB - peak),
                {True: "yes", False: "NO"}[r["fits"]], heap or "-",
                _kib(heap * KIB - r["start"]) if heap and r.get("start") else "-"))
    return "\n".join(out[1:])


DOC_INTRO = """## Whole heap on a board (32-bit, tools/heap32.py)

What a board without PSRAM has to give: an ESP32-S3 without PSRAM has about 145 KiB free after
its firmware boots. On the ESP32-like 32-bit port (`tools/build_mp32.py`), for the package frozen
into the firmware (the bytecode stays in flash) and as `.mpy` loaded from a folder (as `deploy`
and `mip` install it: the bytecode lives in the heap), each operation at documented capacity
(`tests_host/support/capacity.py`: 128 items, 384 labels, a 150 KiB session, 2,000 other
sessions) is run alone after the imports and the open memory. Whole-heap peak: what the imports
and the open memory hold plus the operation's sampled high-water mark
(`tools/benchmark/mp/heapmeter.py`); completes in 145 KiB: the imports, the open memory and the
operation run with 145 KiB free before `import claw_memory`; smallest `-X heapsize`: the
smallest heap (1 KiB steps) in which the open and the operation complete, fragmentation
included (minus what the interpreter and the script hold at the start, it is what the package
needed free). `tests_host/test_heap32.py` holds the budgets. Which installs fit a board without
PSRAM: the README's "Boards and firmware".

"""


def write_doc(tables):
    """Replace the whole-heap section of docs/PERFORMANCE.md (tools/bench.py keeps it)."""
    from benchmark.report import HEAP32_BEGIN, HEAP32_END

    path = os.path.join(ROOT, "docs", "PERFORMANCE.md")
    with open(path) as f:
        doc = f.read()
    section = "%s\n%s%s\n%s" % (HEAP32_BEGIN, DOC_INTRO, tables.strip(), HEAP32_END)
    i, j = doc.find(HEAP32_BEGIN), doc.find(HEAP32_END)
    if 0 <= i < j:
        doc = doc[:i] + section + doc[j + len(HEAP32_END):]
    else:  # first time: before the notes that follow the generated tables
        at = doc.index("## What the faithful baseline changed")
        doc = doc[:at] + section + "\n\n" + doc[at:]
    with open(path, "w") as f:
        f.write(doc)
    return path


if __name__ == "__main__":
    main(sys.argv[1:])
