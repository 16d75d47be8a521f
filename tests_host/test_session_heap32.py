"""Session history on a fragmented heap, on the ESP32-like 32-bit port without the package frozen
in (tools/build_mp32.py --plain; skipped, with the reason, when it cannot be built here): with
about 500 KB free in 16 KiB holes, a turn is persisted, a request starts with a turn in progress
and an index is rebuilt (tests_host/support/fragmented.py). MicroPython's readline(n) reserves n
bytes: a line read with a 64 KiB bound needs a 64 KiB hole whatever the line's size."""


def test_a_turn_needs_no_big_unbroken_block_of_heap(run32, tmp_path):
    r = run32("fragmented.py", str(tmp_path / "flash.img"), cwd=str(tmp_path), heap="1M")
    print(r.stdout)
    assert r.returncode == 0 and r.stdout.rstrip().endswith("FRAGMENTED-OK"), r.stdout + r.stderr
    free = int(r.stdout.split("free after fragmenting: ")[1].split()[0])
    assert free > 400000, "the heap had room, only not in one piece: %d bytes free" % free
