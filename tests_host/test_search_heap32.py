"""The heap of a history search over many sessions, on the ESP32-like 32-bit port without the
package frozen in (tools/build_mp32.py --plain; skipped, with the reason, when it cannot be
built here): 70 chats, every log with a match, searched over the whole data root and in one
chat (tests_host/support/search_heap.py). Target (issue 26): at most 16 KiB above idle. A
query keeps each file with matches as its place in the listing, not its id and path (which
cost about 150 bytes a file: 70 files held 10 KiB more)."""

ABOVE_KIB = 16


def test_a_search_over_many_sessions_holds_at_most_16_kib(run32, tmp_path):
    r = run32("search_heap.py", "root", "70", cwd=str(tmp_path), heap="4M")
    print(r.stdout)
    assert r.returncode == 0 and r.stdout.rstrip().endswith("SEARCH-OK"), r.stdout + r.stderr
    above = dict(line.split() for line in r.stdout.splitlines() if line[:5] in ("root ", "chat "))
    for scope in ("root", "chat"):
        assert int(above[scope]) <= ABOVE_KIB * 1024, "%s: %s bytes above idle" % (scope, above[scope])
