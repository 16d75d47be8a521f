# Long-term store: recall counts and the digest, the order of list and MEMORY.md, the capacity
# score and the cap, the recall limit. Each test fails when its behaviour breaks; expectations
# are written out by hand (or read from the files as ESP-Claw reads them), never computed with
# the code under test. Public API only.
import json

from flashsim import mount
from mptest import Clock, eq, ok, timeout

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


def test_recall_keeps_its_limit_when_a_tie_straddles_it():
    dev, mem, clock = _fresh()
    for mid, what in (("tie-c", "kites"), ("tie-a", "boats"), ("tie-b", "trains")):
        mem.store.store("User builds model %s" % what, "models", memory_id=mid)
    eq([i["id"] for i in mem.store.recall(["models"], limit=2)], ["tie-a", "tie-b"],
       "three tie: the first two by id")
    eq([i["id"] for i in mem.store.recall(["models"], limit=1)], ["tie-a"], "limit 1")
    dev.unmount()
