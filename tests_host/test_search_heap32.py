"""The heap of a history search over many sessions, on the ESP32-like 32-bit port without the
package frozen in (tools/build_mp32.py --plain; skipped, with the reason, when it cannot be
built here): 70 chats, every log with a match, searched over the whole data root and in one
chat (tests_host/support/search_heap.py). Target (issue 26): at most 16 KiB above idle. A
query keeps each file with matches as its place in the listing, not its id and path (which
cost about 150 bytes a file: 70 files held 10 KiB more). Measured here: 11.0 KiB (root), 6.6
(chat), 13.8 (terms, the first pass's bound reached); CI's machine measured the terms query
1.1 KiB above this machine's figure for the same code (the collector's words on the C
stack), which the bound of 3 KiB of first-pass matches leaves room for."""

import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SUPPORT = os.path.join(ROOT, "tests_host", "support")
sys.path.insert(0, os.path.join(ROOT, "tools"))

ABOVE_KIB = 16


def test_a_search_over_many_sessions_holds_at_most_16_kib(run32, tmp_path):
    r = run32("search_heap.py", "root", "70", cwd=str(tmp_path), heap="4M")
    print(r.stdout)
    assert r.returncode == 0 and r.stdout.rstrip().endswith("SEARCH-OK"), r.stdout + r.stderr
    above = dict(line.split() for line in r.stdout.splitlines() if line[:5] in ("root ", "chat "))
    for scope in ("root", "chat"):
        assert int(above[scope]) <= ABOVE_KIB * 1024, "%s: %s bytes above idle" % (scope, above[scope])


def test_a_search_whose_terms_are_in_every_log_of_hundreds_holds_at_most_16_kib(run32, tmp_path):
    # 16 terms in each of 120 logs: the first pass kept every file's matches of every term
    # (about 120 bytes a file), so the heap grew with the root (2,000 sessions: a MemoryError
    # on a board, frozen); beyond a bound it keeps only the statistics, and a second walk
    # scores the files it did not keep
    r = run32("search_heap.py", "root", "120", "terms", cwd=str(tmp_path), heap="4M")
    print(r.stdout)
    assert r.returncode == 0 and r.stdout.rstrip().endswith("SEARCH-OK"), r.stdout + r.stderr
    above = int(r.stdout.split("terms ", 1)[1].split()[0])
    assert above <= ABOVE_KIB * 1024, "%d bytes above idle" % above


def test_a_search_that_finds_a_60_kib_tool_result_fits_a_board(tmp_path):
    # Frozen (a board with the firmware), 145 KiB: records over indexer._PARSE_MAX are read
    # from their first bytes (a 24 KiB tool result parsed whole, copied and cut ran out)
    import heap32

    try:
        frozen = heap32.ports()["frozen"]
    except heap32.build_mp32.Unavailable as e:
        pytest.skip("the 32-bit port cannot be built here: %s" % e)
    env = dict(os.environ, MICROPYPATH=os.pathsep.join([SUPPORT, ".frozen"]))

    def run(*args, heap):
        return subprocess.run([frozen, "-X", "heapsize=" + heap, os.path.join(SUPPORT, "big_record.py")]
                              + list(args), env=env, cwd=str(tmp_path), capture_output=True, text=True,
                              timeout=300)

    r = run("build", "root", "60", heap="4M")
    assert r.returncode == 0, r.stdout + r.stderr
    for op in ("search", "tool", "page"):
        r = run(op, "root", heap="%dK" % heap32.BOARD_KIB)
        assert r.returncode == 0 and r.stdout.strip() == op + " OK", (op, r.stdout + r.stderr)
