# claw_memory.store on simulated flash: formats, store/update/forget/recall, labels,
# compaction, repair of damaged files, bad input.
import json
import os

from flashsim import mount
from mptest import Clock, eq, ok, raises

from claw_memory import fsutil
from claw_memory import item as itm
from claw_memory.core import NotFound
from claw_memory.paths import MEMORY_MD_INIT as MD_DEFAULT
from claw_memory.store import Store, markdown

HEAP = "8M"
M = "/flash/memory"
T0 = 1714000000


def _fresh(kind="lfs2"):
    dev = mount(kind, "/flash", blocks=256)
    clock = Clock()
    return dev, Store(M, clock=clock), clock


def _read(name):
    with open(M + "/" + name, "rb") as f:
        return f.read()


def _write(name, data):
    with open(M + "/" + name, "wb") as f:
        f.write(data)


def _index():
    return json.loads(_read("memory_index.json"))


def _kw_reference(store):
    """The keyword index ESP-Claw would build from the active items."""
    ref = {}
    for it in list(store.list()):
        for t in itm.keyword_terms(it):
            ref.setdefault(t, [])
            if it["id"] not in ref[t]:
                ref[t].append(it["id"])
    return ref


def _check_consistent(store):
    """After a flush, the index catalog and keyword index agree with the active items."""
    store.flush()
    items = list(store.list())
    refs = {}
    for it in items:
        for sid in it["summary_ids"]:
            refs[sid] = refs.get(sid, 0) + 1
    idx = _index()
    eq(idx["version"], 3, "index version")
    eq({s["summary_id"]: s["ref_count"] for s in idx["summaries"]}, refs, "ref counts")
    eq(idx["records_size"], fsutil.size(M + "/memory_records.jsonl"), "stamp")
    got = idx["keyword_index"]
    ref = _kw_reference(store)
    eq(sorted(got.keys()), sorted(ref.keys()), "keyword index terms")
    for t in ref:
        eq(sorted(got[t]), sorted(ref[t]), "keyword index ids of %s" % t)
    return items


def test_fresh_directory_files():
    dev, s, clock = _fresh()
    s.open()
    eq(sorted(os.listdir(M)), ["MEMORY.md", "memory_digest.log", "memory_index.json",
                               "memory_records.jsonl"], "files")
    eq(_read("MEMORY.md").decode(), MD_DEFAULT, "default MEMORY.md")
    eq(_index(), {"version": 3, "next_summary_id": 1, "last_compact_digest_size": 0,
                  "records_size": 0, "summaries": [], "keyword_index": {}}, "default index")
    eq(list(s.list()), [], "empty")
    dev.unmount()


def test_store_line_format_and_normalisation():
    dev, s, clock = _fresh()
    it, changed = s.store("  The user likes lettuce  ", "dietary_preferences; food | extra | more",
                          "lettuce, invented, LETTUCE, Food")
    ok(changed, "changed")
    eq(it["id"], "mem-%d-%04d" % (T0, T0 % 10000 + 1), "id format")
    eq(it["content"], "The user likes lettuce", "trimmed")
    eq(it["tags"], "dietary_preferences,food,extra", "at most 3 tags")
    eq(it["keywords"], "lettuce,LETTUCE,Food", "grounded keywords only, ASCII case-insensitively")
    eq(it["source"], "manual", "default source")
    eq(it["summary_labels"], ["dietary_preferences", "food", "extra"], "labels keep 24 chars")
    line = _read("memory_records.jsonl").decode()
    eq(line, '{"id":"%s","source":"manual","content":"The user likes lettuce","tags":'
       '"dietary_preferences,food,extra","keywords":"lettuce,LETTUCE,Food","created_at":%d,'
       '"updated_at":%d,"access_count":0,"deleted":false,"summary_ids":[1,2,3]}\n' % (it["id"], T0, T0),
       "ESP-Claw line, key order")
    it2, _ = s.store("Likes to run in the morning", "habit", "")
    eq(it2["keywords"], "habit", "topped up from the tags")
    eq(_read("memory_digest.log"), b"", "change lines wait in RAM: a change is one append")
    s.flush()
    dig = _read("memory_digest.log").decode().splitlines()
    eq(dig, ["%d\tstore\t%s" % (T0, it["id"]), "%d\tstore\t%s" % (T0, it2["id"])], "digest lines")
    _check_consistent(s)
    dev.unmount()


def test_field_cuts_are_on_character_boundaries():
    dev, s, clock = _fresh()
    it, _ = s.store("你" * 100, "标签" * 30 + ",b", "k")
    eq(len(it["content"].encode()), 255, "content cut to 255 bytes = 85 CJK chars")
    eq(it["content"], "你" * 85, "whole characters")
    eq(it["tags"], "b", "a tag token over 95 bytes does not fit")
    it, _ = s.store("a tag of exactly label size", "abcdefghijklmnopqrstuvwxyz0123456789", "")
    eq(it["summary_labels"], ["abcdefghijklmnopqrstuvwx"], "label cut to 24 characters")
    it, _ = s.store("emoji label", "😀" * 12, "")
    eq(it["summary_labels"], ["😀" * 9], "label at most 39 bytes")
    dev.unmount()


def test_dedupe_by_key_and_by_containment_writes_nothing():
    dev, s, clock = _fresh()
    a, _ = s.store("The user likes lettuce", "food")
    before = [_read(n) for n in sorted(os.listdir(M))]
    for dup in ("the user LIKES lettuce!!", "The user likes lettuce a lot, really", "user likes lettuce"):
        got, changed = s.store(dup, "other")
        eq((got["id"], changed), (a["id"], False), "duplicate of %r" % dup)
    eq([_read(n) for n in sorted(os.listdir(M))], before, "nothing written")
    b, changed = s.store("likes", "food")
    ok(changed, "under 12 bytes: no containment match")
    long_a = "The user likes lettuce in every salad at lunch and at dinner, " * 2
    c, _ = s.store(long_a[:100] + "X", "food")
    d, changed = s.store(long_a[:100] + "Y", "food")
    eq((d["id"], changed), (c["id"], False), "same first 36 normalised bytes")
    dev.unmount()


def test_update_and_forget():
    dev, s, clock = _fresh()
    a, _ = s.store("User lives in Shanghai", "city", "Shanghai")
    b, _ = s.store("User likes tea", "drink", "tea")
    clock.t += 60
    same, changed = s.update(a["id"], content="User lives in Shanghai")
    eq((same["id"], changed), (a["id"], False), "equivalent update changes nothing")
    new, changed = s.update(a["id"], content="User lives in Beijing", keywords="Beijing")
    ok(changed and new["id"] != a["id"], "new id")
    eq((new["tags"], new["keywords"], new["created_at"]), ("city", "Beijing,city", T0 + 60), "patched")
    eq(s.get(a["id"]), None, "old item tombstoned")
    s.flush()
    dig = _read("memory_digest.log").decode().splitlines()[-3:]
    eq([l.split("\t")[1:] for l in dig],
       [["update_store", new["id"], a["id"]], ["forget", a["id"]], ["update", new["id"], a["id"]]],
       "digest lines of an update")
    raises(NotFound, s.update, a["id"], content="again")
    raises(NotFound, s.update, "mem-1-0001", content="x")
    raises(ValueError, s.update, "", content="x")
    # Update onto an existing item: the other item is returned, the old one forgotten.
    got, changed = s.update(new["id"], content="User likes tea")
    eq((got["id"], changed), (b["id"], True), "merged into the duplicate")
    eq([i["id"] for i in list(s.list())], [b["id"]], "one item left")
    # Forget: refs down, unused labels leave the catalog.
    old, changed = s.forget(b["id"])
    eq((old["content"], old["summary_labels"], changed), ("User likes tea", ["drink"], True), "forget result")
    eq(list(s.labels()), [], "catalog empty")
    raises(NotFound, s.forget, b["id"])
    raises(ValueError, s.forget, None)
    s.flush()
    ok(b"(empty - Claw will write memories here as it learns)" in _read("MEMORY.md"), "MEMORY.md empty text")
    _check_consistent(s)
    dev.unmount()


def test_labels_catalog_ids_stay_stable():
    dev, s, clock = _fresh()
    a, _ = s.store("Fact one about coffee", "coffee")
    b, _ = s.store("Fact two about tea", "tea")
    c, _ = s.store("Fact three about coffee beans", "coffee,beans")
    eq([(l["summary_id"], l["label"], l["ref_count"]) for l in list(s.labels())],
       [(1, "coffee", 2), (2, "tea", 1), (3, "beans", 1)], "catalog")
    s.forget(b["id"])
    d, _ = s.store("Fact four about juice", "juice")
    eq([(l["summary_id"], l["label"]) for l in list(s.labels())], [(1, "coffee"), (3, "beans"), (4, "juice")],
       "a removed id is not reused")
    s.compact()
    eq([(l["summary_id"], l["label"]) for l in list(s.labels())], [(1, "coffee"), (3, "beans"), (4, "juice")],
       "ids kept by compaction")
    dev.unmount()


def test_recall():
    dev, s, clock = _fresh()
    ids = []
    for n in range(12):
        clock.t = T0 + n
        it, _ = s.store("Fact number %d about the garden plants" % n, "garden" if n % 2 else "garden,plants")
        ids.append(it["id"])
    s.store("Unrelated fact about trains and travel", "travel")
    records = _read("memory_records.jsonl")
    got = s.recall(["garden"])
    eq(len(got), 8, "default limit 8")
    eq([g["id"] for g in got], list(reversed(ids))[:8], "newest first when counts are equal")
    eq(_read("memory_records.jsonl"), records, "no record rewritten")
    dig = _read("memory_digest.log").decode().splitlines()
    recall_lines = [l for l in dig if "\trecall\t" in l]
    eq(len(recall_lines), 8, "one recall line per returned item")
    ok(all(l.endswith("\taccess_count+1") for l in recall_lines), "recall line shape")
    eq(len(s.recall(["plants", "nope"], limit=3)), 3, "unknown labels ignored")
    eq(s.recall(["nope", "nothing"]), [], "no known label: nothing")
    eq(len(s.recall([], limit=100)), 13, "no labels: everything")
    eq(len(s.recall(["garden"], limit=0)), 8, "limit 0 means the default")
    eq(len(s.recall(["garden"], limit=-5)), 8, "negative limit means the default")
    eq(len(s.recall("travel")), 1, "a single label string")
    dev.unmount()


def test_recall_counts_land_at_compaction():
    dev, s, clock = _fresh()
    a, _ = s.store("Alpha fact about music", "music")
    clock.t += 1
    b, _ = s.store("Beta fact about music", "music")
    clock.t += 1
    c, _ = s.store("Gamma fact about music", "music")
    for mid in (a, a, b):
        clock.t += 1
        s.recall(["music"], limit=3)  # every item once per call
    clock.t += 100
    s.recall(["music"], limit=1)  # c is first (newest): one more for c
    eq([i["access_count"] for i in list(s.list())], [0, 0, 0], "counts not in the records yet")
    s.compact()
    got = [(i["id"], i["access_count"]) for i in list(s.list())]
    eq(got, [(c["id"], 4), (a["id"], 3), (b["id"], 3)], "counts folded, then recency, then id")
    ok(list(s.list())[0]["updated_at"] == clock.t, "recency from the last recall")
    dev.unmount()


def test_ids_stay_unique_when_the_clock_repeats():
    # A board without a set clock boots at the same time: new ids must not reuse old ones.
    dev, s, clock = _fresh()
    a, _ = s.store("First boot fact", "boot")
    s2 = Store(M, clock=Clock())
    b, _ = s2.store("Second boot fact", "boot")
    ok(a["id"] != b["id"], "fresh id")
    eq(len(list(s2.list())), 2, "both kept")
    dev.unmount()


def test_compaction_merges_duplicates_drops_tombstones_keeps_best():
    dev, s, clock = _fresh()
    s.open()
    # Duplicates written by hand (ESP-Claw could leave them behind; we never write them).
    lines = []
    for n, (content, acc, upd, created) in enumerate((
            ("The user likes green tea", 2, T0 + 10, T0 + 10),
            ("the user likes GREEN tea!", 5, T0 + 20, T0 + 5),
            ("Deleted item about cats", 0, T0, T0))):
        lines.append(json.dumps({"id": "mem-%d-%04d" % (T0, n), "source": "manual", "content": content,
                                 "tags": "tea" if n < 2 else "cats", "keywords": "tea" if n < 2 else "cats",
                                 "created_at": created, "updated_at": upd, "access_count": acc,
                                 "deleted": False, "summary_ids": []}))
    tomb = json.loads(lines[2])
    tomb["deleted"] = True
    lines.append(json.dumps(tomb))
    _write("memory_records.jsonl", ("\n".join(lines) + "\n").encode())
    s2 = Store(M, clock=clock)
    eq(len(list(s2.list())), 2, "duplicates are merged by compaction, not on open")
    s2.compact()
    items = list(s2.list())
    eq(len(items), 1, "duplicates merged, tombstone dropped")
    it = items[0]
    eq((it["id"], it["content"], it["access_count"], it["created_at"]),
       ("mem-%d-0000" % T0, "the user likes GREEN tea!", 5, T0 + 5), "merge rules")
    eq(_read("memory_records.jsonl").count(b'"summary_labels":[]'), 1, "compaction lines as ESP-Claw's")
    _check_consistent(s2)
    ok(b"\tcompact\t-\trebuild=index+markdown" in _read("memory_digest.log"), "compact digest line")
    dev.unmount()


def test_capacity_128_by_score():
    dev = mount("lfs2", "/flash", blocks=256)
    clock = Clock()
    s = Store(M, clock=clock, max_active=5)
    s.open()
    for n in range(8):
        clock.t = T0 + n * 7200
        s.store("Distinct fact %d on topic %s" % (n, "abcdefgh"[n]), "t%d" % n)
        eq(s.count(), min(n + 1, 5), "never over capacity, not even between compactions")
        if n == 4:  # two recalls at 8h, not folded in yet: t0 scores 6h + 8h
            s.recall(["t0"])
            s.recall(["t0"])
        if n == 5:  # between evictions: t2 scores 9h + 10h
            for _ in range(3):
                s.recall(["t2"])
    kept = sorted(i["content"][14] for i in list(s.list()))
    eq(kept, ["0", "2", "5", "6", "7"], "the unfolded recalls count: 1, 3, 4 go, by score")
    s.compact()
    eq(sorted(i["content"][14] for i in list(s.list())), kept, "compaction keeps the same five")
    _check_consistent(s)
    dev.unmount()


def test_evictions_wait_for_a_third_of_the_lines():
    dev, s, clock = _fresh()
    s = Store(M, clock=clock, max_active=20)
    ids = []
    for n in range(20):  # all in one hour: equal scores, the first in file order goes first
        clock.t = T0 + n * 60
        ids.append(s.store("Capacity fact number %02d" % n, "cap,f%02d" % n)[0]["id"])
    s.compact()
    c0 = s.compactions
    for n in range(20, 24):
        clock.t = T0 + n * 60
        s.store("Capacity fact number %02d" % n, "cap,f%02d" % n)
        eq(s.count(), 20, "at capacity after every store")
        if n == 20:  # between two evictions: fact 01 gains an access (3 hours of score)
            eq([i["id"] for i in s.recall(["f01"])], [ids[1]], "recalled")
    eq(s.compactions, c0, "4 evictions: 8 garbage lines of 28, under a third")
    raw = _read("memory_records.jsonl")
    eq(raw.count(b',"evicted":true}\n'), 4, "one marked tombstone per eviction")
    for n in (0, 2, 3, 4):
        ok(b"Capacity fact number %02d" % n in raw, "evicted text stays until the bound")
        eq(s.get(ids[n]), None, "but no read returns it")
    ok(s.get(ids[1]) is not None, "the recall since the last eviction counted")
    s.flush()
    eq(_read("memory_digest.log").count(b"\tevict\tmem-"), 4, "an evict digest line each")
    # The count is derived from the file: a reboot does not reset it.
    s = Store(M, clock=clock, max_active=20)
    eq(s.count(), 20, "reopened")
    eq(s.compactions, 0, "the evictions' lines read back as evictions: nothing due at the reopen")
    clock.t = T0 + 24 * 60
    s.store("Capacity fact number 24", "cap,f24")
    eq(s.compactions, 1, "the 5th eviction: 10 garbage lines of 30 reach a third")
    raw = _read("memory_records.jsonl")
    ok(b"Capacity fact number 00" not in raw and raw.count(b"evicted") == 1,
       "evictions compacted away, but the one of the change that compacted (kept: it can be undone)")
    eq(sorted(i["content"][-2:] for i in s.list()), ["01"] + ["%02d" % n for n in range(6, 25)],
       "the recalled one and the newest 19")
    # close() takes evicted text out with any other garbage.
    clock.t = T0 + 25 * 60
    s.store("Capacity fact number 25", "cap,f25")
    ok(b"Capacity fact number 06" in _read("memory_records.jsonl"), "before close")
    s.close()
    ok(b"Capacity fact number 06" not in _read("memory_records.jsonl"), "gone at close()")
    for name in ("MEMORY.md", "memory_index.json", "memory_digest.log"):
        ok(b"Capacity fact number 06" not in _read(name), name)
    dev.unmount()


def test_an_eviction_takes_the_first_minimum_in_file_order():
    dev, s, clock = _fresh()
    s.open()
    a = json.dumps({"id": "mem-%d-0001" % T0, "content": "Item A", "updated_at": T0})
    b = json.dumps({"id": "mem-%d-0002" % T0, "content": "Item B", "updated_at": T0})
    _write("memory_records.jsonl", ("%s\n%s\n%s\n" % (a, b, a)).encode())  # A's latest line is last
    s = Store(M, clock=clock, max_active=2)
    s.store("Item C", "c")  # three equal scores: B's line comes first in the file
    eq(sorted(i["content"] for i in s.list()), ["Item A", "Item C"], "B evicted, as compaction would")
    dev.unmount()


def test_another_writers_items_over_capacity_are_compacted_on_open():
    dev, s, clock = _fresh()
    s.open()
    lines = [json.dumps({"id": "mem-%d-%04d" % (T0 + n * 3600, n), "content": "Outside fact %d" % n,
                         "updated_at": T0 + n * 3600}) for n in range(5)]
    _write("memory_records.jsonl", ("\n".join(lines) + "\n").encode())
    s = Store(M, clock=clock, max_active=3)
    eq(s.count(), 3, "the capacity holds from the open on")
    eq(s.compactions, 1, "by a compaction")
    eq(sorted(i["content"] for i in s.list()), ["Outside fact 2", "Outside fact 3", "Outside fact 4"], "best kept")
    dev.unmount()


def test_compaction_triggers():
    dev, s, clock = _fresh()
    ids = [s.store("Trigger fact number %d" % n, "x")[0]["id"] for n in range(6)]
    ok(b"compact" not in _read("memory_digest.log"), "stores leave no garbage: nothing to compact")
    s.forget(ids[0])
    ok(b"compact" in _read("memory_digest.log"), "5 changes since the last compaction and garbage")
    raw = _read("memory_records.jsonl")
    eq(raw.count(b"\n"), 6, "compacted: 5 items, and the forget that compacted kept as written")
    ok(b"Trigger fact number 0" in raw, "(so that it can be undone)")
    for n in range(3):
        s.store("Later fact number %d" % n, "y")
    ok(b"Trigger fact number 0" in _read("memory_records.jsonl"), "within 4 more changes it may stay")
    s.store("Later fact number 3", "y")
    ok(b"Trigger fact number 0" not in _read("memory_records.jsonl"), "gone at the 5th change")
    # Size trigger: records at 32 KiB.
    dev.unmount()
    dev, s, clock = _fresh()
    s.open()
    filler = [json.dumps({"id": "mem-1-%04d" % n, "content": "x%d" % n, "deleted": True}) for n in range(700)]
    _write("memory_records.jsonl", ("\n".join(filler) + "\n").encode())
    s2 = Store(M, clock=clock)
    s2.store("After the big file", "y")
    ok(fsutil.size(M + "/memory_records.jsonl") < 1000, "compacted by size")
    dev.unmount()


def test_digest_stays_bounded():
    dev, s, clock = _fresh()
    a, _ = s.store("A fact to recall many times", "r")
    for n in range(250):
        s.recall(["r"])
    ok(fsutil.size(M + "/memory_digest.log") > 8192, "grew with recalls")
    s.compact()
    ok(fsutil.size(M + "/memory_digest.log") <= 4096 + 100, "trimmed at compaction")
    eq(list(s.list())[0]["access_count"], 250, "every recall counted")
    s.flush()
    dig = _read("memory_digest.log")
    eq(_index()["last_compact_digest_size"], len(dig) - len(dig.rstrip(b"\n").rsplit(b"\n", 1)[-1]) - 1,
       "offset = where the compact line starts, as ESP-Claw's")
    s.recall(["r"])
    s.compact()
    eq(list(s.list())[0]["access_count"], 251, "no recount after the trim")
    dev.unmount()


def test_opens_an_esp_claw_folder_written_by_hand():
    dev = mount("lfs2", "/flash", blocks=256)
    fsutil.makedirs(M)
    recs = [
        '{"id":"mem-1714000000-0042","source":"manual","content":"The user likes lettuce","tags":"dietary","keywords":"lettuce,dietary","created_at":1714000000,"updated_at":1714000000,"access_count":0,"deleted":false,"summary_ids":[1]}',
        '{"id":"mem-1714000100-0043","source":"auto_llm","content":"User drinks water every hour","tags":"daily_routine,hydration_habits","keywords":"water","created_at":1714000100,"updated_at":1714000100,"access_count":1,"deleted":false,"summary_ids":[2,3],"summary_labels":[],"future_key":{"x":1}}',
        'this line is garbage',
        '{"id":"mem-1714000200-0044","source":"manual","content":"Old fact","tags":"old","keywords":"old","created_at":1714000200,"updated_at":1714000200,"access_count":0,"deleted":false,"summary_ids":[4]}',
        '{"id":"mem-1714000200-0044","source":"manual","content":"Old fact","tags":"old","keywords":"old","created_at":1714000200,"updated_at":1714000300,"access_count":0,"deleted":true,"summary_ids":[4]}',
    ]
    _write("memory_records.jsonl", ("\n".join(recs) + "\n").encode())
    _write("memory_index.json", b'{"version":3,"keyword_index":{"lettuce":["mem-1714000000-0042"]},"next_summary_id":5,'
           b'"last_compact_digest_size":0,"summaries":[{"summary_id":1,"label":"dietary","ref_count":1},'
           b'{"summary_id":2,"label":"daily_ro","ref_count":1},{"summary_id":3,"label":"hydratio","ref_count":1}]}')
    _write("memory_digest.log", b"1714000000\tstore\tmem-1714000000-0042\n1714000500\trecall\tmem-1714000000-0042\taccess_count+1\n"
           b"1714000600\trecall\tmem-1714000000-0042\taccess_count+1\n")
    _write("MEMORY.md", b"# Long-term Memory\n\n(old render)\n")
    s = Store(M, clock=Clock(T0 + 1000))
    items = list(s.list())
    eq([i["summary_labels"] for i in items], [["daily_ro", "hydratio"], ["dietary"]],
       "before a compaction: ESP-Claw's catalog as it is, counts not folded yet")
    ok(_read("MEMORY.md").startswith(b"# Long-term Memory\n\n## Summary Labels\n\n- dietary"),
       "a MEMORY.md that does not match the records is rendered on open")
    s.compact()
    items = list(s.list())
    eq([i["id"] for i in items], ["mem-1714000000-0042", "mem-1714000100-0043"], "active items, best first")
    eq(items[0]["access_count"], 2, "recall lines folded in")
    eq(items[0]["updated_at"], 1714000600, "recency from the recall")
    eq(items[1]["summary_labels"], ["daily_routine", "hydration_habits"], "labels recomputed, not cut to 8")
    eq(items[0]["summary_labels"], ["dietary"], "existing label keeps its id")
    eq(items[0]["summary_ids"], [1], "id 1 kept")
    eq(s.recall(["hydration_habits"])[0]["id"], "mem-1714000100-0043", "recall by the full label")
    _check_consistent(s)
    md = _read("MEMORY.md").decode()
    ok(md.startswith("# Long-term Memory\n\n## Summary Labels\n\n- dietary (refs=1)\n"), "MEMORY.md rendered")
    ok("- `mem-1714000000-0042` The user likes lettuce\n  time=" in md, "entry line")
    ok('access=2 labels=["dietary"]\n' in md, "entry details")
    dev.unmount()


def test_memory_md_exact_render():
    dev, s, clock = _fresh()
    s.store("Fact A", "alpha")
    clock.t += 1
    s.store("Fact B", "beta,alpha")
    s.flush()
    from claw_memory._compat import local_time_str
    want = ("# Long-term Memory\n\n## Summary Labels\n\n- alpha (refs=2)\n- beta (refs=1)\n\n"
            "## Active Memories\n\n"
            "- `mem-%d-%04d` Fact B\n  time=%s access=0 labels=[\"beta\",\"alpha\"]\n"
            "- `mem-%d-%04d` Fact A\n  time=%s access=0 labels=[\"alpha\"]\n") % (
        T0 + 1, T0 % 10000 + 2, local_time_str(T0 + 1), T0, T0 % 10000 + 1, local_time_str(T0))
    eq(_read("MEMORY.md").decode(), want, "MEMORY.md")
    dev.unmount()


def test_corrupt_or_empty_index_is_rebuilt():
    for bad in (b"", b"{not json", b"[1,2,3]", b'{"version":3,"summaries":"oops"}',
                b'{"summaries":[{"summary_id":"x","label":"a","ref_count":1}]}', b"\x00\xff" * 50):
        dev, s, clock = _fresh()
        a, _ = s.store("Keeps working after damage", "sturdy")
        _write("memory_index.json", bad)
        s2 = Store(M, clock=clock)
        eq([i["id"] for i in s2.recall(["sturdy"])], [a["id"]], "rebuilt from records (%r)" % bad[:12])
        s2.store("And stores again", "sturdy")
        _check_consistent(s2)
        dev.unmount()
    # Damaged while open: the next operation rebuilds it.
    dev, s, clock = _fresh()
    s.store("First", "f")
    _write("memory_index.json", b"garbage")
    eq(len(s.recall(["f"])), 1, "recall rebuilds")
    dev.unmount()


def test_bad_input():
    dev, s, clock = _fresh()
    for bad in ("", "   \t\n ", None, b"\xff\xfe", "\x00"[:0]):
        e = raises(ValueError, s.store, bad)
        eq(str(e), "content is required", "empty content %r" % (bad,))
    raises(ValueError, s.store, 42)
    it, _ = s.store("x" * 100000, "big")
    eq(len(it["content"]), 255, "huge content cut")
    it, _ = s.store(b"valid \xff\xfe bytes kept", "utf8")
    eq(it["content"], "valid  bytes kept", "invalid UTF-8 dropped")
    it, _ = s.store("thousand tags", ",".join("t%d" % n for n in range(1000)))
    eq(it["tags"], "t0,t1,t2", "1000 tags -> 3")
    it, _ = s.store("separators only", ",,;;//||  , ;", ",,,")
    eq((it["tags"], it["summary_labels"]), ("", []), "labels full of separators")
    raises(NotFound, s.forget, "mem-0-0000")
    raises(NotFound, s.forget, "../../etc/passwd")
    raises(ValueError, s.store, "bad id", memory_id="../x")
    raises(ValueError, s.store, "bad id", memory_id="x" * 40)
    ok(s.store("custom id", memory_id="my-id.1")[0]["id"] == "my-id.1", "custom id")
    raises(ValueError, s.store, "another with custom id", memory_id="my-id.1")
    _check_consistent(s)
    dev.unmount()


def test_damaged_records_lines_are_skipped_and_counted():
    dev, s, clock = _fresh()
    a, _ = s.store("Survivor fact", "keep")
    with open(M + "/memory_records.jsonl", "ab") as f:
        f.write(b'{"id":"mem-5-0005","content":"' + b"z" * 5000 + b'"}\n')
        f.write(b"\x00\x01\x02binary garbage\xff\n")
        f.write(b'{"no_id":true}\n')
        f.write(b'[1,2]\n')
        f.write(b'{"id":"mem-6-0006","content":"torn')
    s2 = Store(M, clock=clock)
    rep = s2.verify()
    eq(rep["bad_lines"], 4, "over-long, binary, no id, not an object")
    eq(rep["index"], "behind the records", "stamp mismatch seen")
    eq([i["id"] for i in list(s2.list())], [a["id"]], "good item kept")
    s2.store("Another fact after damage", "keep")
    eq(len(s2.recall(["keep"])), 2, "store works on after repair")
    _check_consistent(s2)
    dev.unmount()


def test_leftovers_of_interrupted_writes():
    dev, s, clock = _fresh()
    a, _ = s.store("Fact before the cut", "cut")
    s.flush()
    idx = _read("memory_index.json")
    # An index replace cut inside FAT's remove-then-rename: only the tmp is left.
    os.rename(M + "/memory_index.json", M + "/memory_index.json.tmp")
    s2 = Store(M, clock=clock)
    eq(len(list(s2.list())), 1, "works")
    eq(_read("memory_index.json"), idx, "derived again from the records, not adopted")
    ok(not fsutil.exists(M + "/memory_index.json.tmp"), "the tmp is gone")
    # An unfinished compaction (no journal): its tmps are discarded.
    _write("memory_records.jsonl.tmp", b"half")
    _write("MEMORY.md.tmp", b"# half")
    s3 = Store(M, clock=clock)
    eq(len(list(s3.list())), 1, "old files kept")
    ok(not fsutil.exists(M + "/memory_records.jsonl.tmp"), "tmp removed")
    # A committed compaction whose renames were cut: finished on open.
    s3.compact()
    recs = _read("memory_records.jsonl")
    _write("memory_records.jsonl.tmp", recs)
    _write("memory_index.json.tmp", _read("memory_index.json"))
    fsutil.remove(M + "/memory_index.json")
    _write(".compact", b"")
    s4 = Store(M, clock=clock)
    eq(len(list(s4.list())), 1, "commit finished")
    ok(not fsutil.exists(M + "/.compact"), "journal gone")
    _check_consistent(s4)
    dev.unmount()


def test_works_on_fat_too():
    dev, s, clock = _fresh("fat")
    a, _ = s.store("FAT fact", "fat")
    s.update(a["id"], content="FAT fact two")
    for n in range(6):
        s.store("FAT item %d" % n, "fat")
    s.compact()
    _check_consistent(s)
    eq(len(s.recall(["fat"], limit=20)), 7, "all there")
    dev.unmount()


def test_numbers_out_of_range_in_records():
    dev, s, clock = _fresh()
    s.store("A normal fact", "n")
    with open(M + "/memory_records.jsonl", "ab") as f:
        f.write(b'{"id":"mem-1-0001","content":"huge times","created_at":1e400,"updated_at":-5,"access_count":1e999}\n')
        f.write(b'{"id":"mem-2-0002","content":"big count","access_count":99999999}\n')
    s2 = Store(M, clock=clock)
    items = {i["content"]: i for i in list(s2.list())}
    eq((items["huge times"]["created_at"], items["huge times"]["updated_at"], items["huge times"]["access_count"]),
       (0, 0, 0), "infinity and negatives read as 0")
    eq(items["big count"]["access_count"], 65535, "counts saturate")
    s2.store("Another fact", "n")
    _check_consistent(s2)
    dev.unmount()


def test_a_saved_change_is_not_reported_as_failed():
    dev, s, clock = _fresh()
    s.store("First fact about bread", "bread")
    # The keyword index is damaged after the part open() reads; the stamp still matches.
    idx = _read("memory_index.json")
    at = idx.index(b'"keyword_index":') + len(b'"keyword_index":')
    _write("memory_index.json", idx[:at] + b'{"bread":["mem-1-0001"')
    s2 = Store(M, clock=clock)
    it, changed = s2.store("Second fact about butter", "butter")
    ok(changed, "reported as stored")
    _check_consistent(s2)
    # A failure after the record is written: saved, not reported, repaired on the next call.
    real = markdown.writer

    def broken(*a):
        raise OSError(28, "no space")

    markdown.writer = broken
    it, changed = s2.store("Third fact about jam", "jam")
    ok(changed, "the item is on flash: success")
    markdown.writer = real
    eq(len(list(s2.list())), 3, "all three there")
    _check_consistent(s2)
    ok(b"Third fact about jam" in _read("MEMORY.md"), "MEMORY.md caught up")
    dev.unmount()


def _handover(bom=False, extra=False):
    import espclaw_boot as espclaw

    dev, s, clock = _fresh()
    a, _ = s.store("User likes green tea", "drink", "tea")
    b, _ = s.store("User lives in Porto", "city", "Porto")
    want = {a["id"]: 0, b["id"]: 0}
    for rnd in range(3):
        s.recall([s.get(a["id"])["summary_labels"][0]], limit=1)
        s.recall([s.get(a["id"])["summary_labels"][0]], limit=1)
        s.recall([s.get(b["id"])["summary_labels"][0]], limit=1)
        want[a["id"]] += 2
        want[b["id"]] += 1
        if rnd % 2 == 0:
            s.compact()  # we fold these recalls; ESP-Claw must not fold them again
        s.close()
        clock.t += 100
        # ESP-Claw boots on the same root and compacts (no digest line); in round 1 its
        # 5th change compacts too (a digest line)
        espclaw.compact(M, clock.t, boot=rnd != 1)
        if bom:
            for name in ("memory_records.jsonl", "memory_index.json"):
                _write(name, b"\xef\xbb\xbf" + _read(name))
        if extra:
            idx = _read("memory_index.json")
            _write("memory_index.json", idx[:-1] + b',"future_key":{"a":[1,2,{"b":"}"}]},"x":null}')
        s = Store(M, clock=clock)
        rep = s.verify()
        eq((rep["index"], rep["bad_lines"], rep["leftovers"]), ("ok", 0, []), "round %d: verify clean" % rnd)
        got = {i["id"]: i["access_count"] for i in s.list()}
        eq(got, want, "round %d: every recall counted once" % rnd)
    dev.unmount()


def test_handover_with_esp_claw_never_counts_a_recall_twice():
    _handover()


def test_handover_with_a_bom_and_extra_keys():
    _handover(bom=True, extra=True)


def test_a_change_never_evicts_what_it_writes():
    # Three items recalled once score above a new fact stored an hour later (a board whose
    # clock went back scores every new fact low): the new fact stays readable.
    dev, s, clock = _fresh()
    s = Store(M, clock=clock, max_active=3)
    ids = [s.store("Recalled fact %d" % n, "t%d" % n)[0]["id"] for n in range(3)]
    for n in range(3):
        s.recall(["t%d" % n])
    clock.t = T0 + 3600
    it, changed = s.store("A fact about the new phone", "phone")
    ok(changed and s.get(it["id"]) is not None, "the new fact can be read back")
    eq(s.count(), 3, "capacity")
    eq(s.get(ids[0]), None, "the first lowest of the others went")
    ok(s.has_label("phone"), "its label is in the catalog")
    dev.unmount()


def test_list_skips_items_evicted_while_it_runs():
    dev, s, clock = _fresh()
    s = Store(M, clock=clock, max_active=20)
    for n in range(20):
        clock.t = T0 + n * 3600
        s.store("Listed fact %02d" % n, "l%d" % n)
    clock.t = T0 + 30 * 3600
    seen = []
    for it in s.list():
        seen.append((it["content"], it["deleted"]))
        if len(seen) == 1:
            s.store("Stored while listing", "w")  # evicts Listed fact 00, the last in rank
    eq(s.compactions, 0, "one eviction: no compaction, list() goes on")
    eq(seen, [("Listed fact %02d" % n, False) for n in range(19, 0, -1)], "no tombstone handed out")
    dev.unmount()


def test_a_recall_after_a_torn_digest_line_starts_a_fresh_line():
    dev, s, clock = _fresh()
    it = s.store("The user grows tomatoes", "garden")[0]
    s.flush()
    with open(M + "/memory_digest.log", "ab") as f:
        f.write(b"%d\trecall\t%s\taccess_co" % (T0, it["id"]))  # a cut append
    s = Store(M, clock=clock)
    s.recall(["garden"])
    lines = _read("memory_digest.log").split(b"\n")
    ok(lines[-2].endswith(b"\trecall\t" + it["id"].encode() + b"\taccess_count+1"), "a whole line")
    s.compact()
    eq(s.get(it["id"])["access_count"], 1, "the recall counted once, the torn one not at all")
    dev.unmount()


def test_an_eviction_tombstone_stays_readable_by_esp_claw():
    # ESP-Claw reads records lines with fgets into 1024 bytes: an eviction tombstone of an
    # item whose line is near that goes without the marker rather than over it.
    dev, s, clock = _fresh()
    s = Store(M, clock=clock, max_active=1)
    first = s.store('"' * 255, '"\\' * 40, "\\" * 120)[0]  # each " and \ is written escaped
    line = _read("memory_records.jsonl").split(b"\n")[0]
    ok(1009 <= len(line) < 1023, "an item line near the limit: %d" % len(line))
    clock.t = T0 + 60
    s.store("A short second fact", "small")
    tomb = [x for x in _read("memory_records.jsonl").split(b"\n") if b'"deleted":true' in x]
    eq(len(tomb), 1, "one tombstone")
    ok(len(tomb[0]) < 1023 and b"evicted" not in tomb[0], "unmarked, under ESP-Claw's limit")
    eq(s.get(first["id"]), None, "evicted all the same")
    eq(s.count(), 1, "capacity")
    dev.unmount()


def test_esp_claw_reads_evictions_left_by_a_power_cut_as_tombstones():
    # No close(): the eviction tombstones are still in the records when ESP-Claw's firmware
    # (its loader, then its boot compaction) reads the root.
    import espclaw
    import espclaw_boot

    dev, s, clock = _fresh()
    s = Store(M, clock=clock, max_active=10)
    for n in range(12):  # two evictions: 4 garbage lines of 14, not compacted yet
        clock.t = T0 + n * 3600
        s.store("Handed over fact %02d" % n, "h%d" % (n % 3))
    ours = sorted(s.ids_where(lambda it: True))
    eq(len(ours), 10, "at capacity")
    ok(b'"evicted":true' in _read("memory_records.jsonl"), "eviction tombstones on flash")
    eq(sorted(espclaw.EspClawStore(M, clock).ids()), ours, "ESP-Claw's loader: the same items")
    clock.t += 100
    espclaw_boot.compact(M, clock.t)
    s = Store(M, clock=clock, max_active=10)
    eq(sorted(s.ids_where(lambda it: True)), ours, "after ESP-Claw's compaction, ours again")
    eq(s.verify()["bad_lines"], 0, "no damage")
    dev.unmount()


def test_a_batch_evicts_neither_what_it_returns_nor_the_best_when_it_overflows():
    dev, s, clock = _fresh()
    s = Store(M, clock=clock, max_active=3)
    old = [s.store("Old fact number %d" % n, "o%d" % n)[0]["id"] for n in range(3)]
    for _ in range(5):
        s.recall(["o2"])  # o2: 15 hours of score above the others
    clock.t = T0 + 3600
    with s.batch() as b:
        dup, changed = b.store("Old fact number 0", "o0")  # the duplicate of the lowest item
        new = b.store("A brand new fact", "n")[0]
    ok(dup["id"] == old[0] and not changed, "returned as already there")
    ok(s.get(old[0]) is not None and s.get(new["id"]) is not None, "both still there")
    eq(s.get(old[1]), None, "the next lowest went instead")
    # A batch of more new items than the capacity: every item competes, as in compaction.
    clock.t = T0 + 2 * 3600
    with s.batch() as b:
        for n in range(4):
            b.store("Batch fact number %d" % n, "b%d" % n)
    eq(s.count(), 3, "capacity")
    ok(s.get(old[2]) is not None, "the recalled one is kept")
    dev.unmount()


def test_a_batch_after_a_torn_last_line_sees_its_own_lines():
    # The first line after a torn one starts a byte later (the newline that ends the torn
    # line): a batch's later change finds the item an earlier change of it stored, and a new
    # label it made, in RAM, where the file will have them.
    dev, s, clock = _fresh()
    s.store("A fact before the cut", "old")
    with open(M + "/memory_records.jsonl", "ab") as f:
        f.write(b'{"id":"mem-1-0001","content":"torn')  # a cut append
    s = Store(M, clock=clock)
    with s.batch() as b:
        new = b.store("The user keeps bees in the garden", "beekeeping")[0]
        b.update(new["id"], content="The user keeps bees on the roof")
        b.store("The user sells the honey at the market", "beekeeping")
    got = sorted((it["content"], it["tags"]) for it in s.list())
    eq(got, [("A fact before the cut", "old"), ("The user keeps bees on the roof", "beekeeping"),
             ("The user sells the honey at the market", "beekeeping")], "the batch's items")
    again = sorted((it["content"], it["tags"]) for it in Store(M, clock=clock).list())
    eq(again, got, "the same after a reopen")
    dev.unmount()


def test_a_torn_last_line_counts_as_a_line_once_it_is_ended():
    # RAM and a reopen agree on the lines (the compaction triggers count them).
    dev, s, clock = _fresh()
    s = Store(M, clock=clock, max_active=20)
    for n in range(6):
        s.store("Counted fact %d" % n, "c")
    s.compact()
    with open(M + "/memory_records.jsonl", "ab") as f:
        f.write(b'{"id":"mem-1-0001","content":"torn')  # a cut append
    s = Store(M, clock=clock, max_active=20)
    s.store("After the torn line", "c")
    ids = sorted(s.ids_where(lambda it: True))
    again = Store(M, clock=clock, max_active=20)
    eq(sorted(again.ids_where(lambda it: True)), ids, "the same items")
    eq(s.verify()["bad_lines"], 1, "the ended torn line is one bad line")
    for n in range(4):  # 5 changes since the compaction with a bad line: compacted
        s.store("Later fact %d" % n, "c")
    eq(s.compactions, 1, "the bad line counted in RAM as on reopen")
    eq(s.verify()["bad_lines"], 0, "and dropped")
    dev.unmount()


def test_a_revived_id_is_in_file_order_for_ids_where_the_keyword_index_and_compaction():
    # A forgotten id stored again takes its old slot with the newest line: file order (what
    # ids_where promises, the keyword index's id lists, compaction's output) is not slot order.
    dev, s, clock = _fresh()
    s.store("User keeps bees in the garden", "bees", "garden", memory_id="a-bees")
    s.store("User grows tomatoes in the garden", "tomatoes", "garden", memory_id="b-tomatoes")
    s.forget("a-bees")
    s.store("User keeps two hives of bees by the garden wall", "bees", "garden", memory_id="a-bees")
    eq(s.ids_where(lambda it: True), ["b-tomatoes", "a-bees"], "ids_where in file order")
    s.flush()
    eq(_index()["keyword_index"]["garden"], ["b-tomatoes", "a-bees"], "the keyword index in file order")
    s.compact()
    eq([json.loads(line)["id"] for line in _read("memory_records.jsonl").splitlines()],
       ["b-tomatoes", "a-bees"], "compaction writes the items in file order")
    dev.unmount()
