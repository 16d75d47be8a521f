# Long-term store: one item's life. An update of the tags or the keywords alone, a torn records
# line while open, duplicates (what merges, the dedupe key), memory ids, long lines, the count.
# Each test fails when its behaviour breaks; expectations are written out by hand (or read from
# the files as ESP-Claw reads them), never computed with the code under test. Public API only.
import json

from flashsim import mount
from mptest import Clock, eq, ok, raises

import claw_memory
from claw_memory import fsutil

HEAP = "8M"
M = "/flash/memory"
RECORDS = M + "/memory_records.jsonl"
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


def _contents(mem):
    return sorted(it["content"] for it in list(mem.store.list()))


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


def test_duplicates_merge_into_newest_content_highest_count_oldest_creation():
    dev = mount("lfs2", "/flash", blocks=256)
    fsutil.makedirs(M)
    lines = [
        {"id": "esp-a", "content": "User likes hiking in the Alps", "tags": "hike", "keywords": "",
         "created_at": T0 - 1000, "updated_at": T0 - 100, "access_count": 4, "deleted": False},
        {"id": "esp-b", "content": "user likes HIKING in the alps!", "tags": "outdoor", "keywords": "",
         "created_at": T0 - 2000, "updated_at": T0 - 50, "access_count": 2, "deleted": False},
        {"id": "esp-c", "content": "User owns hiking boots", "tags": "hike", "keywords": "",
         "created_at": T0 - 900, "updated_at": T0 - 90, "access_count": 0, "deleted": False},
    ]
    _write(RECORDS, "".join(json.dumps(x) + "\n" for x in lines).encode())
    mem = _open(Clock())
    mem.store.compact()
    got = [(i["id"], i["content"], i["access_count"], i["created_at"], i["updated_at"])
           for i in list(mem.store.list()) if i["id"] != "esp-c"]
    eq(got, [("esp-a", "user likes HIKING in the alps!", 4, T0 - 2000, T0 - 50)], "merged")
    # the newer one's tags come with its content, and their labels
    eq(sorted((i["id"], i["tags"], i["summary_labels"]) for i in mem.store.list()),
       [("esp-a", "outdoor", ["outdoor"]), ("esp-c", "hike", ["hike"])], "tags")
    eq([(e["summary_id"], e["label"]) for e in mem.store.labels()], [(1, "outdoor"), (2, "hike")], "catalog")
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


def test_a_line_with_more_than_three_tags_has_three_labels():
    # Another program's line (ESP-Claw's normalisation keeps 3 tags; a hand-edited or foreign
    # line may hold more): its summary labels are its first 3 distinct tags, as ESP-Claw's.
    mount("lfs2", "/flash", blocks=256)
    fsutil.makedirs(M)
    line = {"id": "mem-1714000000-0001", "source": "manual", "content": "User rows on the river",
            "tags": "rowing,river,river,boats,sport,outdoors", "keywords": "rowing",
            "created_at": T0, "updated_at": T0, "access_count": 0, "deleted": False}
    with open(RECORDS, "w") as f:
        f.write(json.dumps(line) + "\n")
    mem = _open(Clock(T0 + 10))
    mem.store.compact()  # (a line without summary ids gets its labels when it is rewritten)
    eq([e["label"] for e in mem.store.labels()], ["rowing", "river", "boats"], "the first 3 distinct")
    got = mem.store.recall(["boats"])
    eq([it["summary_labels"] for it in got], [["rowing", "river", "boats"]], "the item's labels")
    mem.close()
