# Long-term store: what ESP-Claw leaves in memory/ (its items, next_summary_id, recall lines
# folded in before its compact line, its MEMORY.md and memory_index.json), and what it must not
# make us accept. Each test fails when its behaviour breaks; expectations are written out by
# hand (or read from the files as ESP-Claw reads them), never computed with the code under test.
# Public API only.
import json

import strictjson
from flashsim import mount
from mptest import Clock, eq, ok

import claw_memory
from claw_memory import fsutil

HEAP = "8M"
M = "/flash/memory"
RECORDS = M + "/memory_records.jsonl"
DIGEST = M + "/memory_digest.log"


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


def test_an_esp_claw_item_whose_byte_cut_split_a_character_is_kept():
    # ESP-Claw cuts content at 255 bytes and tags at 95: a CJK character may be split. The
    # item is read with the split bytes dropped, and a compaction keeps it (it was lost).
    dev = mount("lfs2", "/flash", blocks=256)
    fsutil.makedirs(M)
    content = ("a" + "\u6c49" * 100).encode()[:255]  # 84 characters and 2 bytes of one more
    tags = ("t" + "\u6c49" * 40).encode()[:95]
    line = (b'{"id":"mem-1713990000-0007","source":"manual","content":"' + content + b'","tags":"' + tags
            + b'","keywords":"k","created_at":1713990000,"updated_at":1713990000,"access_count":0,'
            b'"deleted":false,"summary_ids":[]}\n')
    _write(RECORDS, line)
    mem = _open(Clock())
    want = "a" + "\u6c49" * 84
    eq(_contents(mem), [want], "the item, its split character dropped")
    mem.store.compact()
    mem.close()
    mem = _open(Clock())
    eq(_contents(mem), [want], "kept by a compaction")
    eq(list(mem.store.list())[0]["id"], "mem-1713990000-0007", "the same id")
    dev.unmount()


def test_a_line_with_a_stray_tail_is_read_as_esp_claw_reads_it():
    # ESP-Claw reads each line with cJSON_Parse: the first value, whatever follows it on the
    # line (or after a NUL byte) ignored. The item is ours too, and a compaction keeps it.
    dev = mount("lfs2", "/flash", blocks=256)
    fsutil.makedirs(M)
    a = json.dumps({"id": "esp-a", "content": "User likes tea", "tags": "drink"}).encode()
    b = json.dumps({"id": "esp-b", "content": "User has a cat", "tags": "pet"}).encode()
    c = json.dumps({"id": "esp-c", "content": "User lives in Porto", "tags": "city"}).encode()
    _write(RECORDS, a + b"junk\n" + b + b"\x00\x00\n" + b"x" + c + b"\n")
    mem = _open(Clock())
    eq(_contents(mem), ["User has a cat", "User likes tea"], "the first two read, the third not (as ESP-Claw)")
    mem.store.compact()
    mem.close()
    mem = _open(Clock())
    eq(_contents(mem), ["User has a cat", "User likes tea"], "kept by a compaction")
    dev.unmount()


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
