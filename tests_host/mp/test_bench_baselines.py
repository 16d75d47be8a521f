# The benchmark's ESP-Claw port (tools/benchmark/baselines/espclaw.py) must do what ESP-Claw's C code does,
# or the targets set against it mean nothing: one open of each session file per persist batch,
# session compaction only after a completed turn that leaves the log over 153,600 bytes, and
# store compaction at 5 changes or a 32 KiB records file, with an update checking three times.
import os
import struct

import espclaw
from flashsim import mount
from mptest import eq, ok, raises

HEAP = "4M"
SID = "chat:test:room:default_01"


class Opens:
    """An `open` that records (file name, mode) of every call."""

    def __init__(self):
        self.calls = []

    def __call__(self, path, mode="r"):
        self.calls.append((path.rsplit("/", 1)[-1], mode))
        return open(path, mode)

    def count(self, suffix, mode):
        return sum(1 for name, m in self.calls if name.endswith(suffix) and m == mode)


def _sessions():
    dev = mount("lfs2", "/flash", blocks=128)
    os.mkdir("/flash/sessions")
    opens = Opens()
    s = espclaw.EspClawSessions("/flash/sessions", open_=opens, truncate=espclaw.model_truncate(dev))
    return dev, opens, s


def _size(path):
    return os.stat(path)[6]


def _final(text):
    return (2, '{"role":"assistant","content":"%s"}' % text, None)


def _tool_round(n, pad):
    call = '{"role":"assistant","content":null,"tool_calls":[{"id":"c%d","type":"function"}]}' % n
    result = '[{"role":"tool","tool_call_id":"c%d","content":"%s","is_error":false}]' % (n, "r" * pad)
    return [(3, call, None), (4, result, None)]


def test_persist_opens_log_and_index_once_per_batch():
    dev, opens, s = _sessions()
    s.persist(SID, [(1, None, "hello")])  # the first batch also creates the pair
    opens.calls = []
    s.persist(SID, _tool_round(1, 10) + [_final("done")], turn_completed=True)
    eq(opens.count(".log", "ab"), 1, "one append open of .log for three records")
    eq(opens.count(".idx", "ab"), 1, "one append open of .idx for three entries")
    eq(opens.count(".idx", "rb"), 1, "the pair validated once: the whole index read")
    eq(len(opens.calls), 3, "no other open")
    log = s.path(SID)
    eq(_size(log + ".idx"), 8 + 4 * 10, "an entry per record")
    with open(log, "rb") as f:
        eq(len(f.read().splitlines()), 4, "every record appended")
    dev.unmount()


def test_session_compacts_only_after_a_completed_turn_over_153600_bytes():
    dev, opens, s = _sessions()
    log = s.path(SID)
    for n in range(7):  # 7 turns of ~20 KB: ~140 KB, under the limit
        s.persist(SID, [(1, None, "user %d" % n)])
        s.persist(SID, _tool_round(n, 20000))
        s.persist(SID, [_final("final %d" % n)], turn_completed=True)
    eq(s.compactions, 0, "under the limit")
    # A turn that leaves the log at exactly 153,600 bytes: not over, no compaction.
    s.persist(SID, [(1, None, "user 7")])
    head = len('{"role":"assistant","content":""}\n')
    s.persist(SID, [_final("x" * (espclaw.LIMIT - _size(log) - head))], turn_completed=True)
    eq(_size(log), espclaw.LIMIT, "log at the limit")
    eq(s.compactions, 0, "153,600 bytes is not over the limit")
    s.persist(SID, [(1, None, "user 8")])
    s.persist(SID, _tool_round(8, 100))
    ok(_size(log) > espclaw.LIMIT, "over the limit mid-turn")
    eq(s.compactions, 0, "no compaction before the turn completes")
    s.persist(SID, [_final("final 8")], turn_completed=True)
    eq(s.compactions, 1, "over the limit after a completed turn: compacted")
    kept = []
    with open(log + ".idx", "rb") as f:
        f.read(8)
        body = f.read()
    for i in range(len(body) // 10):
        kept.append(struct.unpack_from("<IIBB", body, i * 10)[2])
    eq(kept.count(3) + kept.count(4), 2, "only the newest completed tool round kept")
    eq(kept.count(1), 9, "every user message kept")
    eq(kept.count(2), 9, "every final answer kept")
    off = 0
    for i in range(len(body) // 10):
        o, ln = struct.unpack_from("<II", body, i * 10)
        eq(o, off, "entries contiguous from 0")
        off += ln
    eq(_size(log), off, "log truncated to the kept records")
    ok(s.request_body(SID).startswith("[{"), "the compacted pair validates and loads")
    dev.unmount()


def test_session_compaction_rewrites_in_place_then_truncates():
    dev, opens, s = _sessions()
    for n in range(9):
        s.persist(SID, [(1, None, "user %d" % n)] + _tool_round(n, 20000) + [_final("f %d" % n)],
                  turn_completed=True)
    eq(s.compactions, 1, "compacted once")
    eq(opens.count(".log", "r+b"), 1, "the log rewritten in place")
    eq(opens.count(".idx", "r+b"), 1, "the index rewritten in place")
    eq(opens.count(".log", "wb") + opens.count(".idx", "wb"), 2, "only the pair's creation wrote whole files")
    dev.unmount()


def _store(size_before=0):
    dev = mount("lfs2", "/flash", blocks=128)
    t = [1714000000]

    def clock():
        t[0] += 1
        return t[0]

    opens = Opens()
    s = espclaw.EspClawStore("/flash/memory", clock, open_=opens).init()
    if size_before:
        with open(s.records, "w") as f:
            n = 0
            while True:
                line = espclaw._item_line({"id": "mem-1713000000-%04d" % n, "source": "manual",
                                           "content": "Padding fact number %d about the garden: %s" % (n, "x" * 120),
                                           "tags": "pad", "keywords": "garden", "created_at": 1713000000,
                                           "updated_at": 1713000000, "access_count": 0, "deleted": False,
                                           "summary_ids": []}) + "\n"
                if f.tell() + len(line) > size_before:
                    break
                f.write(line)
                n += 1
    return dev, opens, s


def test_store_compacts_at_the_fifth_change():
    dev, opens, s = _store()
    ids = [s.store("Fact %d: the user likes tea number %d" % (n, n), "drink")[0]["id"] for n in range(4)]
    eq(s.compactions, 0, "four changes: no compaction")
    s.forget(ids[0])
    eq(s.compactions, 1, "the fifth change (a forget) compacts")
    eq(s.changes, 0, "counter reset")
    s.store("Another fact about coffee beans", "drink")
    eq(s.compactions, 1, "counting again from zero")
    dev.unmount()


def test_store_compacts_every_change_once_records_reach_32768_bytes():
    dev, opens, s = _store(size_before=espclaw.COMPACT_SIZE - 2000)
    s.store("A fact about sailing boats in the harbour", "boats")
    ok(_size(s.records) < espclaw.COMPACT_SIZE, "still under 32 KiB")
    eq(s.compactions, 0, "under 32 KiB and 1 change: no compaction")
    dev.unmount()
    dev, opens, s = _store(size_before=espclaw.COMPACT_SIZE)
    opens.calls = []
    s.store("A fact about sailing boats in the harbour", "boats")
    eq(s.compactions, 1, "the first change over 32 KiB compacts")
    eq(opens.count("memory_records.jsonl", "ab"), 1, "the record appended first")
    eq(opens.count("memory_records.jsonl", "wb"), 1, "then the records rewritten by the compaction")
    eq(opens.count("memory_index.json", "wb"), 2, "index rewritten by the store and the compaction")
    eq(opens.count("MEMORY.md", "wb"), 2, "MEMORY.md rewritten by the store and the compaction")
    dev.unmount()


def test_update_checks_for_compaction_three_times():
    dev, opens, s = _store(size_before=40000)  # ~100 items: over 32 KiB after compacting too
    mid = s.store("A fact about sailing boats in the harbour", "boats")[0]["id"]
    n = s.compactions
    s.update(mid, content="A fact about rowing boats on the river")
    eq(s.compactions - n, 3, "store of the replacement, forget of the old, final check")
    raises(espclaw.NotFound, s.forget, mid)
    dev.unmount()


def test_recall_appends_one_digest_line_per_returned_item():
    dev, opens, s = _store()
    for n in range(3):
        s.store("Fact %d: the user plays tennis on day %d" % (n, n), "sport")
    before = _size(s.digest)
    opens.calls = []
    s.recall(["sport"])
    eq(opens.count("memory_digest.log", "ab"), 3, "one open and append per item")
    with open(s.digest, "rb") as f:
        f.seek(before)
        eq(len([ln for ln in f.read().splitlines() if b"\trecall\t" in ln]), 3, "three recall lines")
    dev.unmount()
