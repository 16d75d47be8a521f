# The long-term store's derived files (MEMORY.md and memory_index.json) and when the records
# are rewritten: MEMORY.md's rendering of line breaks and of an empty catalog, the order of
# the two derived writes across a power cut, a failed batch, and the records' size bound.
# Expectations are written out by hand, never computed with the code under test. Public API
# and files on disk only.
from flashsim import mount
from mptest import Clock, eq, ok

import claw_memory
from claw_memory import fsutil

HEAP = "8M"
M = "/flash/memory"
RECORDS = M + "/memory_records.jsonl"
MD = M + "/MEMORY.md"
T0 = 1714000000
TIME0 = "2024-04-24 23:06:40"  # T0 as MEMORY.md shows it (the tests run with TZ=UTC)


def _open(clock):
    return claw_memory.open("/flash", clock=clock)


def _fresh(kind="lfs2", blocks=256, erase=True):
    dev = mount(kind, "/flash", blocks=blocks, erase_on_write=erase)
    clock = Clock()
    return dev, _open(clock), clock


def _read(path):
    with open(path, "rb") as f:
        return f.read()


def _md(mem):
    """MEMORY.md after close() (the derived files may be brought up to date lazily)."""
    mem.close()
    return _read(MD).decode()


def _md_contents():
    """The contents of the entries MEMORY.md lists, sorted."""
    out = []
    for line in _read(MD).decode().split("\n"):
        if line.startswith("- `"):
            out.append(line.split("` ", 1)[1])
    return sorted(out)


def _contents(mem):
    return sorted(it["content"] for it in list(mem.store.list()))


# -- MEMORY.md rendering -----------------------------------------------------------------------


def test_a_crlf_line_break_is_one_break_in_memory_md():
    dev, mem, clock = _fresh()
    a, _ = mem.store.store("User likes tea\r\nand coffee\rand milk\nand juice", "drink")
    want = ("# Long-term Memory\n\n## Summary Labels\n\n- drink (refs=1)\n\n## Active Memories\n\n"
            "- `mem-1714000000-0001` User likes tea \u23ce and coffee \u23ce and milk \u23ce and juice\n"
            "  time=" + TIME0 + ' access=0 labels=["drink"]\n')
    eq(_md(mem), want, "CRLF, CR and LF: one ⏎ each")
    eq(_open(clock).store.get(a["id"])["content"], "User likes tea\r\nand coffee\rand milk\nand juice",
       "the records keep the original")
    dev.unmount()


def test_unicode_line_separators_do_not_start_a_line_of_their_own_in_memory_md():
    # A renderer or an LLM reading MEMORY.md may take NEL, LS and PS as line breaks: raw, they
    # would let a memory add a heading or a fake entry.
    dev, mem, clock = _fresh()
    mem.store.store("User likes tea\u2028## Injected heading\u2029- `mem-1-0001` fake\x85entry", "drink")
    want = ("# Long-term Memory\n\n## Summary Labels\n\n- drink (refs=1)\n\n## Active Memories\n\n"
            "- `mem-1714000000-0001` User likes tea \u23ce ## Injected heading \u23ce - `mem-1-0001` fake"
            " \u23ce entry\n  time=" + TIME0 + ' access=0 labels=["drink"]\n')
    md = _md(mem)
    eq(md, want, "NEL, LS and PS shown as ⏎")
    for sep in ("\x85", "\u2028", "\u2029"):
        ok(sep not in md, "no raw %r" % sep)
    dev.unmount()


def test_memory_md_without_labels_has_no_summary_labels_heading():
    dev, mem, clock = _fresh()
    a, _ = mem.store.store("User hums while cooking", "")  # no tags: no label
    want = ("# Long-term Memory\n\n## Active Memories\n\n"
            "- `mem-1714000000-0001` User hums while cooking\n  time=" + TIME0 + " access=0 labels=[]\n")
    eq(_md(mem), want, "items without labels")
    mem = _open(clock)
    mem.store.forget(a["id"])
    eq(_md(mem), "# Long-term Memory\n\n(empty - Claw will write memories here as it learns)\n",
       "every item forgotten")
    b, _ = _open(clock).store.store("User paints watercolours", "art")
    mem = _open(clock)
    mem.store.forget(b["id"])
    eq(_md(mem), "# Long-term Memory\n\n(empty - Claw will write memories here as it learns)\n",
       "the last labelled item forgotten: its label goes, and the heading with it")
    dev.unmount()


# -- a failed batch ----------------------------------------------------------------------------


class _CallerFailed(Exception):
    pass


def test_a_failed_batch_leaves_the_items_and_labels_as_they_were():
    dev, mem, clock = _fresh()
    a, _ = mem.store.store("User has a dog named Rex", "pets")
    try:
        with mem.store.batch() as b:
            b.store("User plays chess on Sundays", "games")
            b.forget(a["id"])
            raise _CallerFailed()
    except _CallerFailed:
        pass
    eq([(i["id"], i["content"]) for i in mem.store.list()], [(a["id"], "User has a dog named Rex")],
       "the forgotten item is back, the stored one never was")
    eq(mem.store.get(a["id"])["content"], "User has a dog named Rex", "get")
    eq(mem.store.count(), 1, "count")
    eq([e["label"] for e in mem.store.labels()], ["pets"], "catalog as before")
    eq([it["content"] for it in mem.store.recall(["pets"])], ["User has a dog named Rex"], "recall")
    eq(_read(RECORDS).count(b"\n"), 1, "nothing written")
    c, changed = mem.store.store("User plays chess on Sundays", "games")
    ok(changed, "stored now")
    want = ["User has a dog named Rex", "User plays chess on Sundays"]
    eq(_contents(mem), want, "the next change")
    eq(_contents(_open(clock)), want, "after reopening")
    dev.unmount()


# -- the derived files across a power cut ------------------------------------------------------


def test_a_cut_between_the_derived_writes_never_leaves_memory_md_stale():
    # memory_index.json's records_size stamp says both derived files describe the records:
    # it must be written after MEMORY.md, or a cut between the two leaves a stale MEMORY.md
    # that no later open or close rewrites. (FAT on raw flash is not power safe: a cut there
    # can wipe a directory sector; an SD card's sector writes are atomic.)
    want = ["User has a dog named Rex", "User plays chess on Sundays"]
    for kind in ("lfs2", "fat"):
        dev, mem, clock = _fresh(kind, erase=False)
        mem.store.store("User has a dog named Rex", "pets")
        mem.close()  # both derived files describe the records
        _open(clock).store.store("User plays chess on Sundays", "games")  # now both are stale
        eq(_md_contents(), ["User has a dog named Rex"], "%s: stale before" % kind)
        image = dev.image()
        dev = dev.restore(image)
        ops0 = dev.ops
        eq(_contents(_open(clock)), want, "%s: the open rewrites them" % kind)
        total = dev.ops - ops0
        ok(total > 4, "%s: writes to cut (%d)" % (kind, total))
        for n in range(total):
            dev = dev.restore(image)
            dev.cut_power(n)
            try:
                _open(clock).store.count()
            except OSError:
                pass
            ok(dev.dead, "%s: cut %d reached" % (kind, n))
            dev = dev.reboot()
            mem = _open(clock)
            eq(_contents(mem), want, "%s cut %d: items" % (kind, n))
            mem.close()
            eq(_md_contents(), want, "%s cut %d: MEMORY.md lists every item" % (kind, n))
        dev.unmount()


# -- the records' size bound -------------------------------------------------------------------


def test_a_records_file_over_128_kib_is_compacted_at_its_first_garbage():
    # Each line holds ~1.5 KB (a control character is 6 bytes of JSON): 100 items make a
    # records file of ~150 KiB. Over 128 KiB, one forget (one change, not 5) compacts it; the
    # forget itself is kept as written (it can be undone) and, the file still over the bound
    # with its tombstone, the next change compacts it away.
    dev, mem, clock = _fresh(blocks=512)
    bell = "\x07" * 220
    for n in range(100):
        mem.store.store("Fact %03d kept on a long line %s end" % (n, bell), "bulk")
    mem.store.compact()  # no garbage, no changes since
    size = fsutil.size(RECORDS)
    ok(size > 131072, "over 128 KiB (%d)" % size)
    victim = [it for it in mem.store.list() if it["content"].startswith("Fact 042 ")][0]
    ok(b"Fact 042 " in _read(RECORDS), "in the records")
    c0 = mem.store.compactions
    mem.store.forget(victim["id"])
    eq(mem.store.compactions, c0 + 1, "compacted at the first garbage")
    data = _read(RECORDS)
    eq(data.count(b"Fact 042 "), 1, "its old line gone, the forget's tombstone kept")
    mem.store.store("One more fact", "bulk")
    data = _read(RECORDS)
    ok(b"Fact 042 " not in data, "the forgotten text left the records at the next change")
    ok(b"Fact 041 " in data and b"Fact 043 " in data, "the others stay")
    ok(len(data) < size, "smaller (%d < %d)" % (len(data), size))
    eq(mem.store.count(), 100, "100 items")
    dev.unmount()


def test_a_records_file_under_128_kib_keeps_its_garbage_until_the_fifth_change():
    # The other side of the bound: a small file is not rewritten for one forget.
    dev, mem, clock = _fresh()
    for n in range(6):
        mem.store.store("Fact %03d kept on a short line" % n, "small")
    mem.store.compact()
    a = [it for it in mem.store.list() if it["content"].startswith("Fact 002 ")][0]
    mem.store.forget(a["id"])
    ok(b"Fact 002 " in _read(RECORDS), "still in the records (a tombstone and the old line)")
    mem.close()
    ok(b"Fact 002 " not in _read(RECORDS), "gone at close()")
    dev.unmount()


def test_a_records_file_of_the_stamped_size_is_not_described_by_an_old_index():
    # The index's records_size stamp says which records file it describes. A rewrite of the
    # records (restore, compaction) that a cut interrupts before the derived files are
    # written again must not leave an old index whose stamp the new file happens to match.
    from claw_memory import item as itm
    from claw_memory.store import Store

    dev = mount("lfs2", "/flash", blocks=256)
    clock = Clock()
    s = Store(M, clock=clock)
    s.store("The user keeps bees", "bees")
    s.store("The user brews mead", "mead")
    s.close()
    stamp = len(_read(RECORDS))
    new = {"id": "mem-1714000000-0077", "content": "x", "tags": "fresh", "keywords": "fresh"}
    while len(itm.to_json(itm.from_obj(new)).encode()) + 1 < stamp:
        new["content"] += "x"
    eq(len(itm.to_json(itm.from_obj(new)).encode()) + 1, stamp, "a restore of the stamped size")

    def cut():
        raise OSError(5, "power cut")

    s.compact = cut  # the cut after the records were replaced
    try:
        s.restore([new])
    except OSError:
        pass
    eq(len(_read(RECORDS)), stamp, "the records were replaced, same size")
    s = Store(M, clock=clock)
    eq(s.count(), 1, "the restored item")
    s.flush()
    index = _read(M + "/memory_index.json")
    ok(b"mem-1714000000-0077" in index and b"bees" not in index, "the index describes the new records")
    ok(b"keeps bees" not in _read(MD), "so does MEMORY.md")
    dev.unmount()
