# The label catalog reads its labels from flash (store/catalog.py): RAM holds each label's id,
# count and where one copy of it is in the records file; the bytes stay on flash. These tests
# look at the store's RAM state (which labels are still in RAM) as well as at what the API
# returns, on LittleFS and FAT: after open, after a batch that adds labels (before and after
# its append), after a compaction, for labels a records line does not hold as they are (JSON
# escapes them, or the index names them differently), past the offsets a location can hold,
# and for reference counts past 255. Expected labels are written out by hand.
import json

from flashsim import mount
from mptest import Clock, eq, ok, timeout

import claw_memory
from claw_memory.store import Store, load

HEAP = "8M"
M = "/flash/memory"
RECORDS = M + "/memory_records.jsonl"
KINDS = ("lfs2", "fat")


def _open(clock):
    return claw_memory.open("/flash", clock=clock)


def _cat(mem):
    mem.store.count()  # loaded
    return mem.store._st.cat  # noqa: SLF001 -- the RAM state under test


def _on_flash(cat):
    """Whether every label is read from the records file: no label bytes kept in RAM."""
    return cat.held == 0 and not cat.pages and all(cat.locs[i] >= 0 for i in range(len(cat)))


def _copies(cat):
    """Each label as the bytes its location names in the records file."""
    with open(RECORDS, "rb") as f:
        data = f.read()
    out = []
    for i in range(len(cat)):
        v = cat.locs[i]
        n, at = v >> 24, v & 0x3FFFF
        out.append(data[at : at + n].decode())
    return out


def _facts(mem, n):
    for k in range(n):
        mem.store.store("Fact number %d about the house" % k, "room%02d,colour%02d" % (k, k))


def test_labels_are_read_from_the_records_not_kept_in_ram():
    for kind in KINDS:
        mount(kind, "/flash", blocks=256)
        clock = Clock()
        mem = _open(clock)
        _facts(mem, 20)
        want = []
        for k in range(20):
            want += ["room%02d" % k, "colour%02d" % k]
        cat = _cat(mem)
        ok(_on_flash(cat), "%s: new labels leave RAM once their line is built" % kind)
        eq(_copies(cat), want, "%s: each location holds its label" % kind)
        eq(mem.store.catalog_text(), "".join("- %s\n" % x for x in want), "%s: the listing" % kind)
        mem.close()
        for reopen in range(2):  # with the index as written, then without it
            mem = _open(clock)
            cat = _cat(mem)
            ok(_on_flash(cat), "%s: after open (%d), every label read from flash" % (kind, reopen))
            eq([e["label"] for e in mem.store.labels()], want, "%s: catalog order" % kind)
            eq(mem.store.catalog_text(), "".join("- %s\n" % x for x in want), "%s: listing" % kind)
            eq(json.loads(mem.store.labels_json()), want, "%s: the labels as JSON" % kind)
            ok(mem.store.has_label("colour07") and not mem.store.has_label("colour7"), "has_label")
            eq([it["content"] for it in mem.store.recall(["room03"])], ["Fact number 3 about the house"])
            eq(mem.store.recall(["room03"])[0]["summary_labels"], ["room03", "colour03"], "decorated")
            mem.close()
            import os

            os.remove(M + "/memory_index.json")


def test_a_label_json_escapes_stays_in_ram():
    for kind in KINDS:
        mount(kind, "/flash", blocks=256)
        clock = Clock()
        mem = _open(clock)
        a, _ = mem.store.store("User quotes a song title", 'say "hi",plain')
        mem.store.store("User keeps a path written down", "back\\slash")
        want = ['say "hi"', "plain", "back\\slash"]
        for reopen in range(2):
            cat = _cat(mem)
            eq(cat.held, 2, "%s: the two escaped labels in RAM (%d)" % (kind, reopen))
            eq([e["label"] for e in mem.store.labels()], want, kind)
            eq(mem.store.catalog_text(), "".join("- %s\n" % x for x in want), kind)
            ok(mem.store.has_label('say "hi"') and mem.store.has_label("back\\slash"), "found")
            eq([it["id"] for it in mem.store.recall(['say "hi"'])], [a["id"]], "recalled by it")
            mem.close()
            mem = _open(clock)
        mem.store.forget(a["id"])
        cat = _cat(mem)
        eq(cat.held, 1, "%s: a dropped label leaves RAM" % kind)
        eq([e["label"] for e in mem.store.labels()], ["back\\slash"], kind)
        mem.close()


def test_a_batch_reads_its_new_labels_from_its_lines_once_appended():
    mount("lfs2", "/flash", blocks=256)
    clock = Clock()
    mem = _open(clock)
    mem.store.store("User likes green tea", "drink")
    size = len(open(RECORDS, "rb").read())
    with mem.store.batch() as b:
        it, _ = b.store("User plays the cello", "music,strings")
        eq(it["summary_labels"], ["music", "strings"], "labels of a line not written yet")
        it2, _ = b.store("User listens to jazz records", "music")
        eq(it2["summary_labels"], ["music"], "a label of the batch found again")
        eq(len(open(RECORDS, "rb").read()), size, "nothing appended yet")
        # (its lines are made at the commit, at their final offsets with the change's mark:
        # until then the batch's new labels are in RAM)
    ok(_on_flash(_cat(mem)), "and from the file once appended")
    eq([e["label"] for e in mem.store.labels()], ["drink", "music", "strings"])
    # each item's labels, read from its own line or from the line that first carried them
    eq(sorted((it["content"], it["summary_labels"]) for it in mem.store.list()),
       [("User likes green tea", ["drink"]), ("User listens to jazz records", ["music"]),
        ("User plays the cello", ["music", "strings"])], "list")
    eq(mem.store.get(it2["id"])["summary_labels"], ["music"], "get")
    eq([x["summary_labels"] for x in mem.store.recall(limit=8, query="jazz records")], [["music"]], "query")
    try:
        with mem.store.batch() as b:
            b.store("User collects stamps", "hobby")
            raise ValueError("abandoned")
    except ValueError:
        pass
    eq([e["label"] for e in mem.store.labels()], ["drink", "music", "strings"], "abandoned: no label")
    eq(mem.store.catalog_text(), "- drink\n- music\n- strings\n")
    mem.close()


def test_compaction_finds_the_labels_in_the_new_records():
    for kind in KINDS:
        mount(kind, "/flash", blocks=256)
        clock = Clock()
        mem = _open(clock)
        ids = [mem.store.store("Fact %d about the garden shed" % k, "shed%d,tool%d" % (k, k))[0]["id"]
               for k in range(6)]
        mem.store.forget(ids[1])
        mem.store.update(ids[2], content="Fact two about the garden shed, repainted")
        mem.store.compact()
        want = ["shed0", "tool0", "shed2", "tool2", "shed3", "tool3", "shed4", "tool4", "shed5", "tool5"]
        cat = _cat(mem)
        ok(_on_flash(cat), "%s: read from the new records" % kind)
        eq(_copies(cat), want, "%s: locations in the new file" % kind)
        eq(mem.store.catalog_text(), "".join("- %s\n" % x for x in want), kind)
        # a label no line holds as it is stays in RAM through a compaction; the others move
        mem.store.store("User signs letters with a quote", 'say "bye"')
        mem.store.forget(ids[0])
        mem.store.compact()
        want = want[2:] + ['say "bye"']
        eq(mem.store.catalog_text(), "".join("- %s\n" % x for x in want), "%s: in the same run" % kind)
        eq(_cat(mem).held, 1, "%s: only the escaped label in RAM" % kind)
        mem.close()
        mem = _open(clock)
        eq(mem.store.catalog_text(), "".join("- %s\n" % x for x in want), "%s: after a reboot" % kind)
        mem.close()


def test_an_index_label_no_line_holds_stays_in_ram():
    # ESP-Claw's files naming a label that the item's tags spell otherwise: the index's label
    # is the catalog's (as before labels were read from flash), kept in RAM.
    mount("fat", "/flash", blocks=256)
    import os

    os.mkdir(M)
    with open(RECORDS, "wb") as f:
        f.write(b'{"id":"mem-1","source":"manual","content":"User plays piano","tags":"Music",'
                b'"keywords":"piano","created_at":1714000000,"updated_at":1714000000,'
                b'"access_count":0,"deleted":false,"summary_ids":[1]}\n'
                b'{"id":"mem-2","source":"manual","content":"User paints","tags":"art",'
                b'"keywords":"paints","created_at":1714000001,"updated_at":1714000001,'
                b'"access_count":0,"deleted":false,"summary_ids":[2]}\n')
    with open(M + "/memory_index.json", "wb") as f:
        f.write(b'{"version":3,"next_summary_id":3,"last_compact_digest_size":0,"summaries":['
                b'{"summary_id":1,"label":"music","ref_count":1},'
                b'{"summary_id":2,"label":"art","ref_count":1}],"keyword_index":{}}')
    a = load.assess(Store(M)._st)  # noqa: SLF001 -- what open finds, before it rewrites anything
    eq(a.cat.held, 1, "the index's 'music' is in no line: kept in RAM")
    eq(a.cat.listing("- ", ""), "- music\n- art\n", "the index's labels, in its order")


def test_a_label_found_only_past_256_kib_of_records_stays_in_ram():
    # One item rewritten 400 times by another program (no compaction yet) puts the first line
    # carrying a new label past what a location can hold.
    mount("lfs2", "/flash", blocks=512)
    import os

    os.mkdir(M)
    pad = "x" * 600
    with open(RECORDS, "wb") as f:
        for k in range(400):
            f.write(('{"id":"mem-1","source":"manual","content":"Old note %d %s","tags":"old",'
                     '"keywords":"","created_at":1714000000,"updated_at":%d,"access_count":0,'
                     '"deleted":false,"summary_ids":[1]}\n' % (k, pad, 1714000000 + k)).encode())
        f.write(b'{"id":"mem-2","source":"manual","content":"User grows tomatoes","tags":"garden",'
                b'"keywords":"","created_at":1714000500,"updated_at":1714000500,"access_count":0,'
                b'"deleted":false,"summary_ids":[2]}\n')
    with open(M + "/memory_index.json", "wb") as f:  # ESP-Claw's: it names both labels
        f.write(b'{"version":3,"next_summary_id":3,"last_compact_digest_size":0,"summaries":['
                b'{"summary_id":1,"label":"old","ref_count":1},'
                b'{"summary_id":2,"label":"garden","ref_count":1}],"keyword_index":{}}')
    ok(os.stat(RECORDS)[6] > 256 * 1024, "records past 256 KiB")
    a = load.assess(Store(M)._st)  # noqa: SLF001
    eq([a.cat.sid(i) for i in range(len(a.cat))], [1, 2], "ids")
    eq(a.cat.held, 1, "'old' is found at offset 0; 'garden' only past 256 KiB: in RAM")
    eq(a.cat.listing("- ", ""), "- old\n- garden\n")
    mem = _open(Clock())  # the open compacts (garbage past 128 KiB): both found in the new file
    ok(_on_flash(_cat(mem)), "after the compaction")
    eq(mem.store.catalog_text(), "- old\n- garden\n")
    mem.close()


@timeout(300)
def test_reference_counts_past_255():
    mount("lfs2", "/flash", blocks=512)
    s = Store(M, clock=Clock(), max_active=400)
    ids = [s.store("Measurement %d of the water meter" % k, "meter,m%d" % k)[0]["id"] for k in range(300)]
    eq(s.labels().__next__(), {"summary_id": 1, "label": "meter", "ref_count": 300}, "300 refs")
    for i in ids[:100]:
        s.forget(i)
    eq(next(iter(s.labels())), {"summary_id": 1, "label": "meter", "ref_count": 200}, "200 refs")
    s.close()
    s = Store(M, clock=Clock(), max_active=400)
    eq(next(iter(s.labels())), {"summary_id": 1, "label": "meter", "ref_count": 200}, "reopened")
    eq(len(list(s.labels())), 201, "meter and the 200 kept")
    s.close()


def test_many_labels_of_one_length_are_told_apart():
    mount("lfs2", "/flash", blocks=256)
    mem = _open(Clock())
    for k in range(120):
        mem.store.store("Shelf %03d holds jars of jam" % k, "lab%03d" % k)
    for k in range(120):
        ok(mem.store.has_label("lab%03d" % k), "lab%03d" % k)
    ok(not mem.store.has_label("lab120") and not mem.store.has_label("lab00"), "absent ones")
    eq([it["content"] for it in mem.store.recall(["lab077"])], ["Shelf 077 holds jars of jam"])
    with mem.store.batch() as b:
        eq(b.store("Shelf 999 holds honey", "lab050")[0]["summary_labels"], ["lab050"], "reused")
    eq(len(list(mem.store.labels())), 120, "no label added twice")
    mem.close()


def test_a_summary_id_is_found_at_its_own_entry_only():
    # Ids are kept as 2-byte pairs: 2 and 1 make the bytes 02 00 01 00, where id 1 (01 00)
    # is at an entry's start and id 0x0100 (00 01) only across two entries.
    from claw_memory.store.catalog import Catalog

    c = Catalog()
    c.add(2, "two")
    c.add(1, "one")
    eq((c.index_of(2), c.index_of(1), c.index_of(0x0100), c.index_of(0x0200)), (0, 1, -1, -1))
    eq(c.labels_of([1, 0x0100, 2]), ["one", "two"], "labels of known ids only")


@timeout(600)
def test_a_compaction_past_256_kib_keeps_the_later_labels_in_ram():
    # A store allowed 500 items of nearly the maximum size: the compacted records pass
    # 256 KiB, and the labels first carried past that offset stay in RAM; all are listed right.
    mount("lfs2", "/flash", blocks=512)
    s = Store(M, clock=Clock(), max_active=500)
    pad = "".join('"w%02d" ' % k for k in range(60))  # (quotes: two bytes each in a line)
    for k in range(480):
        s.store(("Item %03d " % k + pad)[:255], "tag%03d" % k)
    s.compact()
    import os

    ok(os.stat(RECORDS)[6] > 256 * 1024, "the compacted records pass 256 KiB")
    cat = s._st.cat  # noqa: SLF001
    late = sum(1 for i in range(len(cat)) if cat.locs[i] < 0)
    ok(0 < late < 480, "the late labels in RAM (%d), the others read from flash" % late)
    eq(s.catalog_text(), "".join("- tag%03d\n" % k for k in range(480)), "every label")
    s.close()


def test_two_labels_of_one_length_and_hash_in_one_line_are_told_apart():
    # find() tells labels apart by their length and 6 bits of hash() first; two labels that
    # share both, carried by one item, must keep their own ids through a compaction (which
    # compares them in the item's own line).
    seen = {}
    for k in range(100):
        b = b"k%02d" % k
        h = hash(b) & 63
        if h in seen:
            e, lab = seen[h], b.decode()
            break
        seen[h] = b.decode()
    mount("lfs2", "/flash", blocks=256)
    mem = _open(Clock())
    a, _ = mem.store.store("User keeps two keys on one ring", e + "," + lab)
    mem.store.store("User keeps a spare key", lab)
    mem.store.compact()
    eq([x["label"] for x in mem.store.labels()], [e, lab], "both labels kept")
    eq(mem.store.get(a["id"])["summary_labels"], [e, lab], "with their own ids")
    mem.close()
    eq(_open(Clock()).store.get(a["id"])["summary_labels"], [e, lab], "after a reboot")
