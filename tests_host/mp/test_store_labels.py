# Long-term store: the label catalog and the keyword index (label ids never reused, terms, the
# index's mark across a block boundary, rebuilds). Each test fails when its behaviour breaks;
# expectations are written out by hand (or read from the files as ESP-Claw reads them), never
# computed with the code under test. Public API only.
import json

import strictjson
from flashsim import mount
from mptest import Clock, eq, ok, timeout

import claw_memory
from claw_memory import fsutil

HEAP = "8M"
M = "/flash/memory"
RECORDS = M + "/memory_records.jsonl"


def _open(clock):
    return claw_memory.open("/flash", clock=clock)


def _fresh(kind="lfs2", blocks=256):
    dev = mount(kind, "/flash", blocks=blocks)
    clock = Clock()
    return dev, _open(clock), clock


def _read(path):
    with open(path, "rb") as f:
        return f.read()


def _write(path, data):
    with open(path, "wb") as f:
        f.write(data)


def _index(mem):
    """memory_index.json after close() (derived files may be brought up to date lazily), as
    ESP-Claw's cJSON reads it: strict JSON (a stray comma fails)."""
    mem.close()
    data = _read(M + "/memory_index.json")
    strictjson.check(data)
    return json.loads(data)


def _sid_of(mem, label):
    for e in mem.store.labels():
        if e["label"] == label:
            return e["summary_id"]
    return None


def test_the_newest_label_id_is_never_reused_after_its_label_goes():
    dev, mem, clock = _fresh()
    mem.store.store("User likes jazz music", "music")
    b, _ = mem.store.store("User owns a red bicycle", "bike")
    eq((_sid_of(mem, "music"), _sid_of(mem, "bike")), (1, 2), "first ids")
    mem.store.forget(b["id"])
    eq([e["label"] for e in mem.store.labels()], ["music"], "bike left the catalog")
    c, _ = mem.store.store("User speaks Portuguese", "language")
    eq(_sid_of(mem, "language"), 3, "id 2 is not given again")
    mem.store.forget(c["id"])
    mem.store.compact()
    mem = _open(clock)
    mem.store.store("User works from home", "work")
    eq(_sid_of(mem, "work"), 4, "nor id 3, after a compaction and a reopen")
    eq(_index(mem)["next_summary_id"], 5, "next_summary_id on flash")
    dev.unmount()


def test_items_without_keywords_are_indexed_by_their_tags():
    dev = mount("lfs2", "/flash", blocks=256)
    fsutil.makedirs(M)
    lines = [
        {"id": "mem-1713000000-0001", "source": "manual", "content": "User likes sushi",
         "tags": "food,japan", "keywords": "", "created_at": 1713000000, "updated_at": 1713000000,
         "access_count": 0, "deleted": False, "summary_ids": []},
        {"id": "esp-2", "content": "User lives in Osaka", "tags": "city"},  # no keywords field
    ]
    _write(RECORDS, "".join(json.dumps(x) + "\n" for x in lines).encode())
    clock = Clock()
    mem = _open(clock)
    eq(len(list(mem.store.list())), 2, "both read")
    want = {"food": ["mem-1713000000-0001"], "japan": ["mem-1713000000-0001"], "city": ["esp-2"]}
    eq(_index(mem)["keyword_index"], want, "terms from the tags")
    c, _ = mem.store.store("User has a cat", "pets", "cat")
    want.update({"cat": [c["id"]], "pets": [c["id"]]})
    eq(_index(mem)["keyword_index"], want, "kept when another item is stored")
    mem.store.restore([{"id": "imp-1", "content": "User rides horses", "tags": "horse", "keywords": ""}])
    eq(_index(mem)["keyword_index"], {"horse": ["imp-1"]}, "imported without keywords")
    dev.unmount()


def test_terms_with_quotes_and_brackets_stay_in_the_keyword_index():
    dev, mem, clock = _fresh()
    a, _ = mem.store.store('User has a 5" phone', '5" phone')
    b, _ = mem.store.store('User bought a 7" tablet] case', '7" tablet]')
    c, _ = mem.store.store("User hums while cooking", "hums")
    d, _ = mem.store.store("User waves at the neighbours", "waves")
    eq(_index(mem)["keyword_index"], {'5" phone': [a["id"]], '7" tablet]': [b["id"]], "hums": [c["id"]],
                                   "waves": [d["id"]]}, "every term")
    dev.unmount()


_MARK = b'"keyword_index":'


def test_the_keyword_index_survives_its_mark_across_a_512_byte_boundary():
    # The index is read in 512-byte chunks; find a catalog size that puts the keyword index's
    # key across the first boundary, then store once more: no term may be lost.
    for pad in range(40):
        dev, mem, clock = _fresh()
        for n, tags in enumerate(("aa,bb,cc", "dd,ee,ff", "gg,hh," + "i" * (1 + pad % 20))):
            mem.store.store("Padding fact number %d for the catalog" % n, tags, memory_id="p%d-%d" % (n, pad))
        mem.close()
        at = _read(M + "/memory_index.json").find(_MARK)
        if 512 - len(_MARK) < at < 512:
            break
        dev.unmount()
    else:
        raise AssertionError("no catalog size put the mark across the boundary")
    before = _index(mem)["keyword_index"]
    d, _ = mem.store.store("User flies kites on windy days", "kites")
    before["kites"] = [d["id"]]
    eq(_index(mem)["keyword_index"], before, "mark at %d: every term kept" % at)
    dev.unmount()


def test_a_term_leaves_the_keyword_index_with_its_last_item():
    dev, mem, clock = _fresh()
    a, _ = mem.store.store("User keeps bees in the garden", "bees")
    b, _ = mem.store.store("User paints watercolours", "art")
    mem.store.forget(a["id"])
    eq(_index(mem)["keyword_index"], {"art": [b["id"]]}, "bees gone with its only item")
    dev.unmount()


def test_forgetting_the_first_of_two_items_sharing_a_term_keeps_the_other():
    dev, mem, clock = _fresh()
    a, _ = mem.store.store("User keeps bees in the garden", "bees")
    b, _ = mem.store.store("User sells honey from the bees", "bees")
    c, _ = mem.store.store("User wears a veil with the bees", "bees")
    eq(_index(mem)["keyword_index"], {"bees": [a["id"], b["id"], c["id"]]}, "three ids")
    mem.store.forget(a["id"])
    eq(_index(mem)["keyword_index"], {"bees": [b["id"], c["id"]]}, "first removed")
    mem.store.forget(c["id"])
    eq(_index(mem)["keyword_index"], {"bees": [b["id"]]}, "last removed")
    dev.unmount()


def test_an_index_with_a_malformed_catalog_entry_is_rebuilt():
    dev, mem, clock = _fresh()
    mem.store.store("User keeps bees in the garden", "bees")
    mem.store.store("User paints watercolours", "art")
    mem.close()
    idx = _read(M + "/memory_index.json")
    _write(M + "/memory_index.json", idx.replace(b'"ref_count":1', b'"ref_count":"one"', 1))
    mem = _open(clock)
    eq([(e["label"], e["ref_count"]) for e in mem.store.labels()], [("bees", 1), ("art", 1)], "rebuilt catalog")
    eq(_index(mem)["summaries"][0]["ref_count"], 1, "on flash")
    dev.unmount()


def test_a_label_id_given_before_a_compaction_is_not_reused_when_the_index_is_lost():
    dev, mem, clock = _fresh()
    mem.store.store("User likes jazz music", "music")
    b, _ = mem.store.store("User owns a red bicycle", "bike")
    mem.store.forget(b["id"])
    mem.store.compact()  # the tombstone (the last line naming id 2) leaves the records
    mem.close()
    fsutil.remove(M + "/memory_index.json")  # lost: only the digest's compact line knows 3
    mem = _open(clock)
    mem.store.store("User speaks Portuguese", "language")
    eq([(e["summary_id"], e["label"]) for e in mem.store.labels()], [(1, "music"), (3, "language")],
       "id 2 is not given again")
    eq(_index(mem)["next_summary_id"], 4, "next_summary_id on flash")
    dev.unmount()


@timeout(300)
def test_a_label_id_is_not_reused_after_the_catalog_is_rebuilt_compactly():
    # 50 long labels, then all but the first forgotten newest first (one batch): their bytes
    # outgrow the live ones and the catalog is rebuilt compactly on the way.
    dev, mem, clock = _fresh()
    mem.store.store("User likes jazz music", "music")
    ids = []
    for n in range(50):
        it, _ = mem.store.store("Remembered fact number %02d about topics" % n, "topic-number-%02d-padding" % n)
        ids.append(it["id"])
    eq(_sid_of(mem, "topic-number-49-padding"), 51, "the highest id")
    with mem.store.batch() as b:
        for mid in reversed(ids):
            b.forget(mid)
    eq([e["label"] for e in mem.store.labels()], ["music"], "only music left")
    mem.store.store("User speaks Portuguese", "language")
    eq(_sid_of(mem, "language"), 52, "no id of a forgotten label is given again")
    mem = _open(clock)
    mem.store.store("User works from home", "work")
    eq(_sid_of(mem, "work"), 53, "nor after reopening")
    dev.unmount()


def test_a_label_dropped_and_added_again_is_found():
    dev, mem, clock = _fresh()
    a, _ = mem.store.store("User likes jazz music", "music")
    mem.store.store("User paints watercolours", "art")
    mem.store.forget(a["id"])  # music leaves the catalog
    ok(not mem.store.has_label("music"), "gone")
    mem.store.store("User plays the piano", "music")
    ok(mem.store.has_label("music"), "back")
    mem.store.store("User sings in a choir", "music")
    eq([(e["summary_id"], e["label"], e["ref_count"]) for e in mem.store.labels()],
       [(2, "art", 1), (3, "music", 2)], "one music entry, two items")
    dev.unmount()


def test_labels_json_with_multibyte_labels():
    dev, mem, clock = _fresh()
    mem.store.store("User drinks coffee in Paris", "café,日本,straße")
    eq(mem.store.labels_json(), '["café","日本","straße"]', "JSON array of the labels")
    dev.unmount()


def test_a_keyword_index_written_in_several_passes_is_whole_json():
    # 24 items of one term each: 72 term/id pairs at most, written in two passes.
    dev, mem, clock = _fresh()
    want = {}
    for n in range(24):
        it, _ = mem.store.store("Remembered fact number %02d about things" % n, "kw%02d" % n)
        want["kw%02d" % n] = [it["id"]]
    eq(_index(mem)["keyword_index"], want, "every term, strict JSON")
    dev.unmount()
