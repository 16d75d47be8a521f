"""The heap of a history search over many sessions, on the ESP32-like 32-bit port without the
package frozen in (tools/build_mp32.py --plain; skipped, with the reason, when it cannot be
built here): 70 chats, every log with a match, searched over the whole data root and in one
chat (tests_host/support/search_heap.py). Target (issue 26): at most 16 KiB above idle. A
query keeps each file with matches as its place in the listing, not its id and path (which
cost about 150 bytes a file: 70 files held 10 KiB more)."""

import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tools"))

import build_mp32  # noqa: E402

SUPPORT = os.path.join(ROOT, "tests_host", "support")
METER = os.path.join(ROOT, "tools", "benchmark", "mp")
ABOVE_KIB = 16


def test_a_search_over_many_sessions_holds_at_most_16_kib(tmp_path):
    try:
        binary = build_mp32.build(plain=True)
    except build_mp32.Unavailable as e:
        pytest.skip("the 32-bit port cannot be built here: %s" % e)
    env = dict(os.environ)
    env["MICROPYPATH"] = os.pathsep.join([ROOT, SUPPORT, METER, ".frozen"])
    r = subprocess.run([binary, "-X", "heapsize=4M", os.path.join(SUPPORT, "search_heap.py"),
                        "root", "70"], env=env, cwd=str(tmp_path), capture_output=True,
                       text=True, timeout=600)
    print(r.stdout)
    assert r.returncode == 0 and r.stdout.rstrip().endswith("SEARCH-OK"), r.stdout + r.stderr
    above = dict(line.split() for line in r.stdout.splitlines() if line[:5] in ("root ", "chat "))
    for scope in ("root", "chat"):
        assert int(above[scope]) <= ABOVE_KIB * 1024, "%s: %s bytes above idle" % (scope, above[scope])
