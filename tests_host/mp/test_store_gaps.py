# Long-term store behaviours the rest of the suite did not pin (issue 13). Each test fails when
# its behaviour breaks; expectations are written out by hand (or read from the files as
# ESP-Claw reads them), never computed with the code under test. Public API only.
import json

import cutmatrix
import strictjson
import workloads
from flashsim import mount
from mptest import Clock, eq, ok, raises, timeout

import claw_memory
from claw_memory import fsutil
from claw_memory.store import Store

HEAP = "8M"
M = "/flash/memory"
RECORDS = M + "/memory_records.jsonl"
DIGEST = M + "/memory_digest.log"
T0 = 1714000000


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


def _contents(mem):
    return sorted(it["content"] for it in list(mem.store.list()))


def _sid_of(mem, label):
    for e in mem.store.labels():
        if e["label"] == label:
            return e["summary_id"]
    return None


def _latest_line(item_id):
    """The item's latest line in the records file, parsed (the last line of an id wins)."""
    found = None
    for line in _read(RECORDS).split(b"\n"):
        try:
            obj = json.loads(line)
        except ValueError:
            continue
        if obj.get("id") == item_id:
            found = obj
    return found


# -- update ----------------------------------------------------------------------------------


def test_an_update_of_only_the_tags_keeps_the_item():
    dev, mem, clock = _fresh()
    a, _ = mem.store.store("User drinks green tea every morning", "drink", "tea")
    clock.t += 10
    b, changed = mem.store.update(a["id"], tags="beverage")
    ok(changed, "changed")
    eq((b["content"], b["tags"]), ("User drinks green tea every morning", "beverage"), "returned item")
    eq([(i["id"], i["content"], i["tags"]) for i in list(mem.store.list())],
       [(b["id"], "User drinks green tea every morning", "beverage")], "the item stays, new tags")
    eq([e["label"] for e in mem.store.labels()], ["beverage"], "catalog follows")
    eq([(i["id"], i["tags"]) for i in list(_open(clock).store.list())], [(b["id"], "beverage")], "after reopening")
    dev.unmount()


def test_an_update_of_only_the_keywords_keeps_the_item():
    dev, mem, clock = _fresh()
    a, _ = mem.store.store("User drinks green tea every morning", "drink", "tea")
    clock.t += 10
    b, changed = mem.store.update(a["id"], keywords="morning")
    ok(changed, "changed")
    eq([(i["id"], i["content"], i["keywords"]) for i in list(mem.store.list())],
       [(b["id"], "User drinks green tea every morning", "morning,drink")], "the item stays, new keywords")
    eq(_open(clock).store.get(b["id"])["keywords"], "morning,drink", "after reopening")
    dev.unmount()


# -- damaged records file while open -----------------------------------------------------------


def test_a_torn_records_line_while_open_leaves_the_next_item_on_its_own_line():
    dev, mem, clock = _fresh()
    a, _ = mem.store.store("User has a dog named Rex", "pets")
    with open(RECORDS, "ab") as f:
        f.write(b'{"id":"mem-1-0001","content":"half a li')
    b, changed = mem.store.store("User plays chess on Sundays", "games")
    ok(changed, "stored")
    want = ["User has a dog named Rex", "User plays chess on Sundays"]
    eq(_contents(mem), want, "the new item reads back")
    eq(_contents(_open(clock)), want, "after reopening")
    eq(_latest_line(b["id"])["content"], "User plays chess on Sundays", "a line of its own")
    dev.unmount()


# -- recall counts and the digest --------------------------------------------------------------


@timeout(300)
def test_recalls_alone_fold_the_digest_in_at_its_bound():
    dev, mem, clock = _fresh()
    a, _ = mem.store.store("User collects old maps", "maps")
    biggest = 0
    for n in range(800):  # about 42 KiB of recall lines
        eq(len(list(mem.store.recall(["maps"]))), 1, "recalled")
        biggest = max(biggest, fsutil.size(DIGEST))
    ok(biggest <= 32768 + 256, "the digest never grows past its 32 KiB bound (%d)" % biggest)
    ok(_latest_line(a["id"])["access_count"] >= 500, "counts folded into the records")
    mem.store.compact()
    eq(list(mem.store.list())[0]["access_count"], 800, "every recall counted once")
    dev.unmount()


def test_a_trimmed_digest_keeps_only_whole_lines():
    dev, mem, clock = _fresh()
    mem.store.store("User collects old maps", "maps")
    for n in range(200):  # about 10 KiB: trimmed at the next compaction
        mem.store.recall(["maps"])
    mem.store.compact()
    data = _read(DIGEST)
    ok(len(data) <= 4096 + 100, "trimmed")
    for line in data.split(b"\n")[:-1]:
        f = line.split(b"\t")
        ok(len(f) >= 3 and f[0] == str(T0).encode(), "whole line %r" % line)
    dev.unmount()


def test_a_recall_bumps_updated_at_to_the_newest_recall():
    dev, mem, clock = _fresh()
    a, _ = mem.store.store("User collects old maps", "maps")
    for t in (100, 500, 300):
        clock.t = T0 + t
        mem.store.recall(["maps"])
    mem.store.compact()
    it = list(mem.store.list())[0]
    eq((it["access_count"], it["updated_at"]), (3, T0 + 500), "count and newest recall time")
    dev.unmount()


def test_recall_uses_at_most_three_labels():
    dev, mem, clock = _fresh()
    for n, tag in enumerate(("alpha", "bravo", "charlie", "delta")):
        mem.store.store("Fact number %d about %s things" % (n, tag), tag)
    got = sorted(i["tags"] for i in mem.store.recall(["alpha", "bravo", "charlie", "delta"]))
    eq(got, ["alpha", "bravo", "charlie"], "the fourth label is ignored")
    dev.unmount()


# -- labels and the keyword index --------------------------------------------------------------


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


def test_an_esp_claw_item_with_many_tags_gets_three_labels():
    dev = mount("lfs2", "/flash", blocks=256)
    fsutil.makedirs(M)
    _write(RECORDS, (json.dumps({"id": "esp-1", "content": "User likes many things",
                                 "tags": "aa,bb,cc,dd,ee"}) + "\n").encode())
    mem = _open(Clock())
    mem.store.compact()  # labels are given from the tags at a compaction
    eq(list(mem.store.list())[0]["summary_labels"], ["aa", "bb", "cc"], "labels of the item")
    eq([e["label"] for e in mem.store.labels()], ["aa", "bb", "cc"], "catalog")
    dev.unmount()


# -- ordering, capacity, duplicates ------------------------------------------------------------


def _ranked_store():
    # tomatoes: 2 recalls, older than museums; four items tie on both counts (their ids decide,
    # not the order they were stored in); scarves is the oldest.
    dev, mem, clock = _fresh()
    a, _ = mem.store.store("User grows tomatoes", "garden")
    clock.t = T0 + 100
    mem.store.store("User knits scarves", "craft")
    clock.t = T0 + 200
    mem.store.store("User brews kombucha", "brewing", memory_id="kappa-note")
    mem.store.store("User dries herbs", "herbs", memory_id="alpha-note")
    mem.store.store("User bakes sourdough", "baking", memory_id="zeta-note")
    mem.store.store("User carves spoons", "wood", memory_id="beta-note")
    clock.t = T0 + 300
    mem.store.recall(["garden"])
    mem.store.recall(["garden"])
    mem.store.compact()  # the recalls are counted
    clock.t = T0 + 400
    mem.store.store("User visits museums", "culture")
    return dev, mem


_RANKED = ["User grows tomatoes", "User visits museums", "User dries herbs", "User carves spoons",
           "User brews kombucha", "User bakes sourdough", "User knits scarves"]


def test_list_is_best_first_access_then_recency_then_id():
    dev, mem = _ranked_store()
    eq([i["content"] for i in list(mem.store.list())], _RANKED, "list order")
    dev.unmount()


def test_memory_md_lists_items_best_first_access_then_recency_then_id():
    dev, mem = _ranked_store()
    mem.close()
    order = []
    for line in _read(M + "/MEMORY.md").decode().split("\n"):
        if line.startswith("- `"):
            order.append(line.split("` ", 1)[1])
    eq(order, _RANKED, "MEMORY.md order")
    dev.unmount()


def test_the_capacity_score_weighs_one_access_as_three_hours():
    dev = mount("lfs2", "/flash", blocks=256)
    clock = Clock()
    s = Store(M, clock=clock, max_active=2)
    s.store("User recalled this once", "once")
    s.recall(["once"])  # at T0: one access
    clock.t = T0 + 2 * 3600
    s.store("User stored this two hours later", "two")
    clock.t = T0 + 4 * 3600
    s.store("User stored this four hours later", "four")
    s.compact()
    eq(sorted(i["content"] for i in s.list()),
       ["User recalled this once", "User stored this four hours later"],
       "one access (3 h) beats two hours of recency")
    dev.unmount()


@timeout(600)
def test_the_cap_is_128_items_kept_by_score():
    dev, mem, clock = _fresh(blocks=512)
    for n in range(128):
        clock.t = T0 + n * 3600
        mem.store.store("Remembered fact number %03d" % n, "cap%d" % (n % 3))
    mem.store.compact()
    eq(len(list(mem.store.list())), 128, "128 items: all kept")
    clock.t = T0 + 128 * 3600
    mem.store.store("Remembered fact number 128", "cap2")
    mem.store.compact()
    eq(_contents(mem), ["Remembered fact number %03d" % n for n in range(1, 129)],
       "129 items: the oldest goes")
    dev.unmount()


def test_duplicates_merge_into_newest_content_highest_count_oldest_creation():
    dev = mount("lfs2", "/flash", blocks=256)
    fsutil.makedirs(M)
    lines = [
        {"id": "esp-a", "content": "User likes hiking in the Alps", "tags": "hike", "keywords": "",
         "created_at": T0 - 1000, "updated_at": T0 - 100, "access_count": 4, "deleted": False},
        {"id": "esp-b", "content": "user likes HIKING in the alps!", "tags": "hike", "keywords": "",
         "created_at": T0 - 2000, "updated_at": T0 - 50, "access_count": 2, "deleted": False},
    ]
    _write(RECORDS, "".join(json.dumps(x) + "\n" for x in lines).encode())
    mem = _open(Clock())
    mem.store.compact()
    got = [(i["id"], i["content"], i["access_count"], i["created_at"], i["updated_at"])
           for i in list(mem.store.list())]
    eq(got, [("esp-a", "user likes HIKING in the alps!", 4, T0 - 2000, T0 - 50)], "merged")
    dev.unmount()


def test_a_content_of_exactly_12_normalised_bytes_inside_another_is_a_duplicate():
    dev, mem, clock = _fresh()
    mem.store.store("Likes cycling", "sport")  # "likescycling": 12 bytes
    it, changed = mem.store.store("Likes cycling in the rain", "sport")
    eq(changed, False, "12 bytes contained: duplicate")
    mem.store.store("Likes coffee", "drink")  # "likescoffee": 11 bytes
    it, changed = mem.store.store("Likes coffee with milk", "drink")
    eq(changed, True, "11 bytes: too short to match by containment")
    dev.unmount()


def test_the_dedupe_key_is_the_first_36_normalised_bytes():
    dev, mem, clock = _fresh()
    head = "abcdefghij" * 3 + "kl"  # 32 bytes
    it, changed = mem.store.store(head + "mnop one", "k")
    it, changed = mem.store.store(head + "qrst two", "k")
    eq(changed, True, "differ in bytes 33..36: distinct")
    it, changed = mem.store.store(head + "mnopuvw three", "k")
    eq(changed, False, "same first 36 bytes: duplicate")
    # Same length and the same byte pairs (the RAM fingerprints cannot tell them apart): only
    # the key decides, and the keys differ in bytes 33..36.
    ab = "ab" * 16  # 32 bytes
    it, changed = mem.store.store(ab + "abba", "k")
    eq(changed, True, "first")
    it, changed = mem.store.store(ab + "bbab", "k")
    eq(changed, True, "same first 32 bytes, different 36-byte keys: distinct")
    dev.unmount()


# -- ids, long lines -------------------------------------------------------------------------


def test_a_39_character_memory_id_is_accepted_and_40_refused():
    dev, mem, clock = _fresh()
    id39 = "i" * 39
    it, changed = mem.store.store("User reads poetry at night", "books", memory_id=id39)
    eq((it["id"], changed), (id39, True), "39 characters")
    raises(ValueError, mem.store.store, "User swims in the sea", "sport", memory_id="j" * 40)
    eq(_contents(mem), ["User reads poetry at night"], "nothing stored for 40")
    eq(_open(clock).store.get(id39)["content"], "User reads poetry at night", "after reopening")
    dev.unmount()


def test_storing_with_an_existing_memory_id_is_refused_and_keeps_the_item():
    dev, mem, clock = _fresh()
    mem.store.store("User likes tea", "drink", memory_id="fav-drink")
    raises(ValueError, mem.store.store, "User likes coffee a lot", "drink", memory_id="fav-drink")
    eq(mem.store.get("fav-drink")["content"], "User likes tea", "kept")
    eq(_contents(mem), ["User likes tea"], "nothing else")
    dev.unmount()


def test_an_item_with_a_long_escaped_line_survives_reopening():
    dev, mem, clock = _fresh()
    content = "Bell" + "\x07" * 200 + "end"  # each control character is 6 bytes of JSON
    it, changed = mem.store.store(content, "bells")
    ok(len(_read(RECORDS)) > 1200, "a long line")
    eq(_open(clock).store.get(it["id"])["content"], content, "read back")
    dev.unmount()


# -- MEMORY.md through power cuts --------------------------------------------------------------


def _md_ids():
    ids = []
    for line in _read(M + "/MEMORY.md").decode().split("\n"):
        if line.startswith("- `"):
            ids.append(line[3:line.index("`", 3)])
    return sorted(ids)


@timeout(900)
def test_memory_md_matches_the_items_after_a_cut_at_every_operation():
    w, c = workloads.store_ops()

    def check(acked):
        mem = claw_memory.open("/flash", clock=lambda: T0 + 5000)
        items = list(mem.store.list())
        mem.close()
        eq(_md_ids(), sorted(i["id"] for i in items), "MEMORY.md lists exactly the active items")
        return c(acked)

    res = cutmatrix.run("lfs2-4096", w, check, kib=512)
    print(cutmatrix.line(res))
    ok(res["cuts"] > 100, "many cut points")
    eq(res["failures"][:3], [], "every cut")


# -- read errors -------------------------------------------------------------------------------


_SID = "chat:web:local:eio_01"


def _eio_matrix(kind, write, every):
    """A transient read error at every `every`th block read of an open, a list and a replay
    (and, with `write`, a store and a persist): whatever fails, nothing that existed is lost."""
    dev = mount(kind, "/flash", blocks=128)
    clock = Clock()
    mem = _open(clock)
    mem.profile.write("user", "# User\n\n- Name: Ada\n")
    for n in range(3):
        mem.store.store("Fact number %d worth keeping" % n, "t%d" % n)
    for n in range(2):
        mem.sessions.persist(_SID, [(1, None, "question %d" % n)])
        mem.sessions.persist(_SID, [(2, None, "answer %d" % n)], turn_completed=True)
    mem.close()
    facts = ["Fact number %d worth keeping" % n for n in range(3)]
    turns = ["question 0", "answer 0", "question 1", "answer 1"]
    image = dev.image()

    def work():
        m = _open(clock)
        list(m.store.list())
        m.sessions.messages(_SID)
        if write:
            m.store.store("A fact stored during the trouble", "later")
            m.sessions.persist(_SID, [(1, None, "question 2")])

    dev = dev.restore(image)
    r0 = dev.reads
    work()
    reads = dev.reads - r0
    errors = 0
    for k in range(0, reads, every):
        dev = dev.restore(image)
        dev.fail_read(k)
        try:
            work()
        except OSError:
            errors += 1
        dev.fail_read(-1)
        m = _open(clock)
        got = _contents(m)
        ok(all(f in got for f in facts), "%s: a read error at read %d lost items: %r" % (kind, k, got))
        eq(m.profile.read("user"), "# User\n\n- Name: Ada\n", "%s: profile kept (read %d)" % (kind, k))
        eq([x["content"] for x in m.sessions.messages(_SID)][:4], turns, "%s: history kept (read %d)" % (kind, k))
    dev.unmount()
    return reads, errors


@timeout(600)
def test_a_read_error_never_makes_a_file_look_missing():
    for kind, write, every in (("fat", True, 1), ("lfs2", False, 3)):
        reads, errors = _eio_matrix(kind, write, every)
        print("%s: %d reads, %d failed with OSError" % (kind, reads, errors))
        ok(errors > 0, "the read errors surfaced")


# -- next_summary_id without the index ---------------------------------------------------------


_ESP_ID = "mem-1713990000-0001"
_ESP_MUSIC = {"id": _ESP_ID, "source": "manual", "content": "User likes jazz music", "tags": "music",
              "keywords": "jazz,music", "created_at": 1713990000, "updated_at": 1713990000,
              "access_count": 0, "deleted": False, "summary_ids": [1], "summary_labels": []}


def _esp_claw_root(index, digest=b"1713995000\tcompact\t-\trebuild=index+markdown\n"):
    """A memory directory as ESP-Claw leaves it after a compaction that dropped the label
    `bike` (id 2): one item labelled `music` (id 1); `index`: memory_index.json. ESP-Claw's
    compact line carries no next_summary_id."""
    dev = mount("lfs2", "/flash", blocks=256)
    fsutil.makedirs(M)
    _write(RECORDS, (json.dumps(_ESP_MUSIC) + "\n").encode())
    _write(DIGEST, digest)
    _write(M + "/memory_index.json", index)
    return dev


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


def test_esp_claws_next_summary_id_is_kept_when_it_is_above_every_label():
    dev = _esp_claw_root(b'{"version":3,"next_summary_id":3,"last_compact_digest_size":0,"summaries":'
                         b'[{"summary_id":1,"label":"music","ref_count":1}],'
                         b'"keyword_index":{"jazz":["' + _ESP_ID.encode() + b'"],"music":["'
                         + _ESP_ID.encode() + b'"]}}')
    mem = _open(Clock())
    mem.store.store("User speaks Portuguese", "language")
    eq([(e["summary_id"], e["label"]) for e in mem.store.labels()], [(1, "music"), (3, "language")],
       "id 2 (ESP-Claw's bike) is not given again")
    dev.unmount()


def test_an_esp_claw_index_with_an_escaped_quote_is_read():
    # A keyword term and a label holding a quote: the index is valid JSON and is taken as
    # it is (its next_summary_id, 3, is nowhere else).
    item = dict(_ESP_MUSIC, tags='music,5" vinyl', keywords='jazz,5" vinyl')
    dev = _esp_claw_root(b'{"version":3,"next_summary_id":3,"last_compact_digest_size":0,"summaries":'
                         b'[{"summary_id":1,"label":"music","ref_count":1}],'
                         b'"keyword_index":{"jazz":["' + _ESP_ID.encode() + b'"],"5\\" vinyl":["'
                         + _ESP_ID.encode() + b'"]}}')
    _write(RECORDS, (json.dumps(item) + "\n").encode())
    mem = _open(Clock())
    eq(mem.store.verify()["index"], "MEMORY.md missing", "the index itself is fine")
    mem.store.store("User speaks Portuguese", "language")
    eq([(e["summary_id"], e["label"]) for e in mem.store.labels()], [(1, "music"), (3, "language")],
       "next_summary_id read from the index")
    dev.unmount()
    # Our own index with a quoted label and term describes the records as it is.
    dev, mem, clock = _fresh()
    mem.store.store('User has a 5" phone', '5" phone')
    mem.close()
    ok(b'"label":"5\\" phone"' in _read(M + "/memory_index.json"), "an escaped quote in the index")
    mem = _open(clock)
    eq(mem.store.verify()["index"], "ok", "not taken as corrupt")
    eq([e["label"] for e in mem.store.labels()], ['5" phone'], "the label")
    dev.unmount()


def test_a_summary_id_no_label_names_is_not_given_to_a_new_label():
    # ESP-Claw's records, index lost, a digest without our compact line: the item refers to
    # id 7, which no tag of it names (its label cannot be recovered). A new label must not
    # take 7, or the old item would carry it.
    dev = _esp_claw_root(b"", digest=b"")
    fsutil.remove(M + "/memory_index.json")
    _write(RECORDS, (json.dumps(dict(_ESP_MUSIC, summary_ids=[1, 7])) + "\n").encode())
    mem = _open(Clock())
    b, _ = mem.store.store("User owns a red bicycle", "bike")
    eq([(e["summary_id"], e["label"]) for e in mem.store.labels()], [(1, "music"), (8, "bike")],
       "bike gets 8")
    eq(mem.store.get(_ESP_ID)["summary_labels"], ["music"], "the old item is not labelled bike")
    eq([i["id"] for i in mem.store.recall(["bike"])], [b["id"]], "recall of bike")
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


# -- ESP-Claw's index: what it says, and what it must not make us accept -------------------------


def test_recalls_esp_claw_folded_in_before_its_compact_line_are_not_counted_again():
    # ESP-Claw's compaction folded the two recalls into access_count (2) and wrote their end
    # as last_compact_digest_size, but was cut before its own compact line: the digest's last
    # compact line is an older one, before the recalls.
    digest = (b"1713980000\tcompact\t-\trebuild=index+markdown\n"
              b"1713995000\trecall\t" + _ESP_ID.encode() + b"\taccess_count+1\n"
              b"1713996000\trecall\t" + _ESP_ID.encode() + b"\taccess_count+1\n")
    index = (b'{"version":3,"next_summary_id":2,"last_compact_digest_size":%d,"summaries":'
             b'[{"summary_id":1,"label":"music","ref_count":1}],"keyword_index":{}}' % len(digest))
    dev = _esp_claw_root(index, digest)
    _write(RECORDS, (json.dumps(dict(_ESP_MUSIC, access_count=2, updated_at=1713996000)) + "\n").encode())
    clock = Clock()
    mem = _open(clock)
    mem.store.compact()
    eq(mem.store.get(_ESP_ID)["access_count"], 2, "the folded recalls count once")
    mem.store.recall(["music"])
    mem.store.compact()
    eq(mem.store.get(_ESP_ID)["access_count"], 3, "a new recall counts")
    dev.unmount()


def _without_stamp(data):
    """An index of ours as ESP-Claw would have written it: no records_size."""
    at = data.find(b'"records_size":')
    return data[:at] + data[data.index(b",", at) + 1:]


def test_memory_md_with_text_after_what_we_render_is_rewritten():
    # ESP-Claw's index (no records_size stamp) and a MEMORY.md that still lists a forgotten
    # item after the current ones: it does not describe the records.
    dev, mem, clock = _fresh()
    mem.store.store("User likes jazz music", "music")
    mem.close()
    _write(M + "/memory_index.json", _without_stamp(_read(M + "/memory_index.json")))
    mem = _open(clock)
    eq(mem.store.verify()["index"], "ok", "ESP-Claw's index and our MEMORY.md match the records")
    stale = b"- `mem-1713000000-0001` User's old password is hunter2\n  time=- access=0 labels=[]\n"
    _write(M + "/MEMORY.md", _read(M + "/MEMORY.md") + stale)
    mem = _open(clock)
    eq(mem.store.verify()["index"], "MEMORY.md does not match the records", "extra text noticed")
    eq(_contents(mem), ["User likes jazz music"], "items")
    md = _read(M + "/MEMORY.md")
    ok(b"hunter2" not in md, "the forgotten item left MEMORY.md")
    ok(md.endswith(b"User likes jazz music\n  time=2024-04-24 23:06:40 access=0 labels=[\"music\"]\n"),
       "rendered again: %r" % md)
    dev.unmount()


def test_an_index_without_a_summaries_array_is_rebuilt():
    dev, mem, clock = _fresh()
    mem.store.store("User likes quiet mornings")  # no tags: no labels
    mem.close()
    _write(M + "/memory_index.json", b'{"version":3,"next_summary_id":1,"last_compact_digest_size":0,'
                                     b'"keyword_index":{}}')
    mem = _open(clock)
    eq(mem.store.verify()["index"], "corrupt", "no catalog: not an index")
    eq(_contents(mem), ["User likes quiet mornings"], "items")
    idx = _index(mem)
    eq((idx["summaries"], idx["records_size"]), ([], fsutil.size(RECORDS)), "rewritten")
    dev.unmount()


def test_an_index_with_a_ref_count_of_true_is_rebuilt():
    # cJSON reads true as the number 0 (ESP-Claw would drop the label at its next forget).
    dev, mem, clock = _fresh()
    mem.store.store("User keeps bees in the garden", "bees")
    mem.close()
    idx = _read(M + "/memory_index.json")
    ok(b'"ref_count":1' in idx, "written with a number")
    _write(M + "/memory_index.json", idx.replace(b'"ref_count":1', b'"ref_count":true'))
    mem = _open(clock)
    eq(mem.store.verify()["index"], "corrupt", "a boolean is not a count")
    eq([(e["label"], e["ref_count"]) for e in mem.store.labels()], [("bees", 1)], "catalog")
    mem.close()
    idx = _read(M + "/memory_index.json")
    ok(b'"ref_count":1' in idx and b"true" not in idx, "rewritten with a number: %r" % idx)
    dev.unmount()


def test_a_label_listed_twice_in_the_index_is_kept_once():
    # A label stored before labels were normalised ("# music") is "music", which the catalog
    # already has: one entry.
    other = dict(_ESP_MUSIC, id="esp-2", content="User plays the piano", tags="# music", keywords="piano",
                 summary_ids=[2])
    dev = _esp_claw_root(b'{"version":3,"next_summary_id":3,"last_compact_digest_size":0,"summaries":'
                         b'[{"summary_id":1,"label":"music","ref_count":1},'
                         b'{"summary_id":2,"label":"# music","ref_count":1}],"keyword_index":{}}')
    _write(RECORDS, (json.dumps(_ESP_MUSIC) + "\n" + json.dumps(other) + "\n").encode())
    mem = _open(Clock())
    eq([(e["summary_id"], e["label"]) for e in mem.store.labels()], [(1, "music")], "once")
    eq([e["summary_id"] for e in _index(mem)["summaries"]], [1], "once on flash")
    dev.unmount()


# -- catalog, counts, recall limit -------------------------------------------------------------


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


def test_count_follows_forget_and_update():
    dev, mem, clock = _fresh()
    a, _ = mem.store.store("User keeps bees in the garden", "bees")
    mem.store.store("User paints watercolours", "art")
    eq(mem.store.count(), 2, "two stored")
    mem.store.forget(a["id"])
    eq(mem.store.count(), 1, "one forgotten")
    mem.store.update(list(mem.store.list())[0]["id"], content="User paints in oils")
    eq(mem.store.count(), 1, "an update replaces")
    eq(_open(clock).store.count(), 1, "after reopening")
    dev.unmount()


def test_recall_keeps_its_limit_when_a_tie_straddles_it():
    dev, mem, clock = _fresh()
    for mid, what in (("tie-c", "kites"), ("tie-a", "boats"), ("tie-b", "trains")):
        mem.store.store("User builds model %s" % what, "models", memory_id=mid)
    eq([i["id"] for i in mem.store.recall(["models"], limit=2)], ["tie-a", "tie-b"],
       "three tie: the first two by id")
    eq([i["id"] for i in mem.store.recall(["models"], limit=1)], ["tie-a"], "limit 1")
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
