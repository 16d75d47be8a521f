"""Every store operation at documented capacity, a request start and a compaction of a session at
the 150 KiB limit, and a listing of 2,000 sessions (tests_host/support/capacity.py), on the ESP32-like
32-bit port that tools/build_mp32.py builds from a MicroPython source tree (CLAW_MPY_SRC, and
CLAW_MPLIB for aiohttp; skipped, with the reason, when the port cannot be built here):

- frozen: the package frozen into the firmware, as a board with the CLAW_S3 firmware runs it;
- mpy: the package compiled to .mpy and loaded from a folder, as `deploy` and `mip` install it,
  on the same port without the package frozen in.

An ESP32-S3 without PSRAM has about 145 KiB free after its firmware boots. The whole-heap tests
give the imports, the open memory and every operation that much (or the budget each meets today,
stated below); tools/heap32.py prints what each operation needs.
"""

import os
import shutil
import sys
import tempfile

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tools"))

import build_mp32  # noqa: E402
import heap32  # noqa: E402

BOARD_KIB = heap32.BOARD_KIB

# Targets (issue 24, frozen): an open FULL memory at capacity holds at most 32 KiB; every
# operation at capacity completes in a 145 KiB heap with at least 64 KiB free at its sampled
# peak. Issue 29, .mpy from a folder: the LITE piece imported and opened holds at most 40 KiB;
# a LITE request start and persist on the 150 KiB session complete in 145 KiB.
# The open memory is measured as a board's main.py holds it (capacity.py held): the whole heap
# from before `import claw_memory` to `claw_memory.open(root)` with the store loaded, on a
# root whose items carry provenance as the memory tools store them. Measured (tools/heap32.py,
# docs/PERFORMANCE.md): ~31.4 KiB, the modules open imports ~18.3, the memory's objects ~1.4
# and the store at capacity ~12.2 (its table 4.8, ranked recall's term statistics 4.3, the
# label catalog 2.6: no label text in RAM). On top, the model's tools made ~3.6 (HELD_TOOLS_KIB
# holds 35.0 with 1 KiB to spare), and a first request on the 150 KiB session ~10.2 more
# (HELD_REQUEST_KIB holds 45.2: the provider and session-reading modules, kept between
# requests). The run of every step starts from "ready" (imports of all of FULL's modules, the
# open memory, its tools and capacity.py's own: ~35.8 here; CI's machine measured ~100 bytes
# more of the same code, the collector's words on the C stack). Frozen, every operation completes in
# 145 KiB with 80 KiB or more free at its sampled peak. As .mpy, the LITE piece opened holds
# ~39.6 KiB (CI measured ~110 bytes more) and every LITE step completes in 145 KiB; FULL's imports hold ~96 KiB (the
# bytecode), so no operation completes in 145 KiB whole (each does with 145 KiB free after the
# imports, a search that rebuilds the 150 KiB session's text index in a process of its own:
# the modules the steps before it import as .mpy leave no 4 KiB run free for a block's
# postings), and all of them in one run complete from about 280 KiB here (MPY_KIB holds 320;
# below it they fail on fragmentation, memory_list's 16 KiB result buffer or a block's
# postings finding no free run that size, and the figure moves with the modules' file paths,
# which the .mpy keep in the heap: the package is loaded from a short folder of a fixed
# length, the `mpy` fixture's; it also moves from run to run of the same code, as the
# collector takes words on the C stack for pointers: measured 280 passing and 272 failing
# here, the same at the stop before the indexes' folder; CI's machine failed at 288 once, in
# the search's rebuild): more than a board without PSRAM.
OPEN_FROZEN_KIB = 32
HELD_TOOLS_KIB = 36
HELD_REQUEST_KIB = 46
READY_FROZEN_KIB = 36
IMPORTS_FROZEN_KIB = 20
PEAK_FREE_KIB = 64
LITE_OPEN_KIB = 40
MPY_KIB = 320

# (test id, build, capacity.py mode, steps: "" every one, "-a,b" all but these; the whole heap
# in KiB, free before the package is imported)
WHOLE = [
    ("frozen", "frozen", "run", "", BOARD_KIB),
    ("mpy", "mpy", "run", "", MPY_KIB),
    ("mpy-lite", "mpy", "lite", "", BOARD_KIB),
]
# The steps of capacity.py run (FULL), each metered in a process of its own.
STEPS = ("open", "labels", "provider", "recall", "list", "store", "update", "forget", "compact",
         "verify", "tool_list", "tool_recall", "tool_bad_label", "tool_store", "history",
         "persist", "sessions", "s_search", "s_compact", "close")


@pytest.fixture(scope="module")
def ports():
    try:
        return heap32.ports()
    except build_mp32.Unavailable as e:
        pytest.skip("the 32-bit port cannot be built here: %s" % e)


@pytest.fixture(scope="module")
def mpy():
    # A short folder of a fixed length (a board's is /lib): the .mpy keep their modules' file
    # paths in the heap, and pytest's folder, whose length depends on the user and the
    # worker, moved the whole run's fragmentation from passing to failing.
    pkg = tempfile.mkdtemp(prefix="cm", dir="/tmp" if os.path.isdir("/tmp") else None)
    heap32.mpy_package(pkg)
    yield pkg
    shutil.rmtree(pkg, ignore_errors=True)


def _root(ports, cwd):
    r = heap32.capacity(ports["frozen"], None, cwd, "build", "root")  # relative: a board's path limit
    assert r.returncode == 0, r.stdout + r.stderr


SESSION_STEPS = "history,persist,sessions,s_compact,close"


def test_every_operation_at_capacity_fits_145_kib(ports, mpy, tmp_path):
    """As .mpy, with 145 KiB free after the imports of the store and the tools (the modules
    the steps import on first use count: they are the steps' own), in three runs: the store's
    operations and the tools, the session's operations and the close, the search. (All in
    one run they left its last step within a few hundred bytes of failing, depending on
    fragmentation alone; the one-run figure is test_whole_heap_at_capacity[mpy]'s.)"""
    _root(ports, str(tmp_path))
    for steps in ("-s_search," + SESSION_STEPS, SESSION_STEPS, "s_search"):
        r = heap32.capacity(ports["mpy"], mpy, str(tmp_path), "run", "root", "145", "", steps)
        print(r.stdout)
        assert r.returncode == 0 and r.stdout.rstrip().endswith("ALL-OK"), r.stdout + r.stderr
        assert heap32.figures(r.stdout)["from"] == os.path.join(mpy, "claw_memory", "__init__.mpy")


@pytest.mark.parametrize("build,mode,steps,kib", [w[1:] for w in WHOLE], ids=[w[0] for w in WHOLE])
def test_whole_heap_at_capacity(ports, mpy, tmp_path, build, mode, steps, kib):
    """Imports, open memory and the operations all within `kib` KiB free at the start."""
    _root(ports, str(tmp_path))
    pkg = mpy if build == "mpy" else None
    r = heap32.capacity(ports[build], pkg, str(tmp_path), mode, "root", str(kib), "whole", steps)
    print(r.stdout)
    assert r.returncode == 0 and r.stdout.rstrip().endswith("ALL-OK"), r.stdout + r.stderr
    f = heap32.figures(r.stdout)
    # Frozen: __file__ names no file (MICROPYPATH has no package folder); .mpy: the folder's.
    want = os.path.join(pkg, "claw_memory", "__init__.mpy") if pkg else "claw_memory/__init__.py"
    assert f["from"] == want
    every = ("open", "provider", "history", "persist", "close") if mode == "lite" else STEPS
    if steps.startswith("-"):
        want = set(every) - set(steps[1:].split(","))
    else:
        want = set(steps.split(",") if steps else every) | {"open"}
    assert set(f["steps"]) == want
    if not pkg:
        assert not os.path.exists(os.path.join(str(tmp_path), "claw_memory"))
        assert f["imports"] <= IMPORTS_FROZEN_KIB * 1024  # frozen bytecode stays in flash
        assert f["ready"] <= READY_FROZEN_KIB * 1024, "FULL ready holds %d" % f["ready"]
    if mode == "lite":
        assert f["ready"] <= LITE_OPEN_KIB * 1024, "open LITE memory holds %d" % f["ready"]


def test_open_memory_frozen(ports, tmp_path):
    """Frozen: `import claw_memory` and `open()` of a FULL root at capacity hold at most
    32 KiB; the tools and a first request on the 150 KiB session within today's budgets."""
    _root(ports, str(tmp_path))
    r = heap32.capacity(ports["frozen"], None, str(tmp_path), "held", "root")
    print(r.stdout)
    assert r.returncode == 0 and r.stdout.rstrip().endswith("ALL-OK"), r.stdout + r.stderr
    f = heap32.figures(r.stdout)
    assert 0 < f["opened"] <= OPEN_FROZEN_KIB * 1024, "open FULL memory holds %d" % f["opened"]
    assert f["opened"] < f["tools"] <= HELD_TOOLS_KIB * 1024, "with its tools %d" % f["tools"]
    assert f["tools"] < f["request"] <= HELD_REQUEST_KIB * 1024, "after a request %d" % f["request"]


@pytest.mark.parametrize("step", STEPS)
def test_free_at_peak_frozen(ports, tmp_path, step):
    """Frozen: each operation's sampled whole-heap peak (imports + open memory + the
    operation) leaves at least 64 KiB of a 145 KiB heap for the rest of the agent."""
    _root(ports, str(tmp_path))
    r = heap32.capacity(ports["frozen"], None, str(tmp_path), "run", "root", "0", "meter", step,
                        heap=heap32.METER_HEAP)
    assert r.returncode == 0 and r.stdout.rstrip().endswith("ALL-OK"), r.stdout + r.stderr
    peak = heap32.figures(r.stdout)["steps"][step]["peak"]
    assert peak is not None and peak <= (BOARD_KIB - PEAK_FREE_KIB) * 1024, \
        "%s peaks at %.1f KiB" % (step, peak / 1024)


def test_the_board_listing_of_2000_sessions_fits_a_board(port32_plain, tmp_path):
    # What every CLI command with -p runs on the board first (Board.listing: pull, wipe,
    # import --replace), in a board's heap: it held every path and the repr of the whole list
    # (a root of 200 sessions ran out of 145 KiB); it prints each file as it walks them.
    import subprocess

    sys.path.insert(0, ROOT)
    from claw_memory_cli import board, guard

    root = tmp_path / "root"
    (root / "sessions" / "chat_map").mkdir(parents=True)
    (root / "memory").mkdir()
    (root / "memory" / "user.md").write_bytes(b"# User\n")
    (root / "sessions" / "chat_map" / "web_u1.json").write_bytes(b"{}")
    for k in range(2000):
        name = "s_chat_web_u%d_default_01_%08x.log" % (k, k)
        (root / "sessions" / name).write_bytes(b'{"role":"user","content":"hi"}\n' * (1 + k % 3))
        (root / "sessions" / (name + ".idx")).write_bytes(b"CHDX\x01\x00\x0a\x00")
    script = tmp_path / "listing.py"
    script.write_text(board.listing_script(str(root)))
    r = subprocess.run([port32_plain, "-X", "heapsize=%dK" % BOARD_KIB, str(script)],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout[-500:] + r.stderr
    dirs, files = board.parse_listing(r.stdout)
    want_dirs, want_files = guard.listing(str(root))
    assert sorted(dirs) == sorted(want_dirs) and sorted(files) == sorted(want_files)
    assert len(files) == 4002
    assert board.parse_listing("NONE\n") is None
    with pytest.raises(board.CliError):
        board.parse_listing(r.stdout.replace("END", ""))  # (cut short: never a partial listing)
