# Benchmark cases run under the unix port (driven by tools/bench.py, one process per case).
# MIT license
#
# Each case prints one line "BENCH <json>". Flash figures are the simulated LittleFS2 device's
# program/erase counts (4096-byte blocks, MicroPython's default VfsLfs2 settings); heap figures
# come from heapmeter (gc.collect + gc.mem_alloc at every read/parse point); times are
# time.ticks_us and only ever reported as ratios measured in the same process.
#
# Baselines live here too: "naive" rewrites the whole session or memory file on every change
# (as simple MicroPython agents do); "espclaw" writes ESP-Claw's files the way its C code does
# (one open/append/close per record and per index entry, the pair validated on every persist,
# every item loaded into RAM for each memory operation, in-place compaction).

import gc
import json
import struct
import sys
import time

from flashsim import mount
from heapmeter import Meter

from claw_memory import fsutil, session as sessmod, store as storemod, text
from claw_memory import item as itm
from claw_memory._compat import dumps, local_time_str
from claw_memory.session import Sessions
from claw_memory.store import Store

T0 = 1714000000
SID = "chat:bench:room:default_01"
LABELS = ["label_%02d" % n for n in range(40)]
WORDS = ("coffee", "morning", "garden", "piano", "bicycle", "market", "python", "sunset", "river",
         "tennis", "bread", "museum", "winter", "violin", "lantern", "harbor")


def out(**kw):
    print("BENCH " + json.dumps(kw))


def us():
    return time.ticks_us()


def since(t):
    return time.ticks_diff(time.ticks_us(), t)


# -- workloads ---------------------------------------------------------------------------------


def turn_records(n):
    """One typical turn, about 1 KB: user, tool call, tool result, final answer."""
    user = (1, None, "Turn %d: please check the living room sensor and tell me whether I should open "
                     "a window before the guests arrive this evening." % n)
    call = {"role": "assistant", "content": None, "tool_calls": [
        {"id": "call_%d" % n, "type": "function",
         "function": {"name": "read_sensor", "arguments": dumps({"room": "living", "kind": "climate"})}}]}
    reading = {"ok": True, "celsius": 24.5, "humidity": 51, "co2_ppm": 930, "sensor": "bme680-living",
               "note": "steady readings over the last hour " * 4}
    result = [{"role": "tool", "tool_call_id": "call_%d" % n, "content": dumps(reading), "is_error": False}]
    final = {"role": "assistant", "content": "It is 24.5 C with 51%% humidity and CO2 at 930 ppm in the "
             "living room (turn %d). Opening a window for ten minutes before your guests arrive will "
             "freshen the air without cooling the room too much." % n}
    return user, (3, dumps(call), None), (4, dumps(result), None), (2, dumps(final), None)


def item_fact(n):
    w1, w2 = WORDS[n % len(WORDS)], WORDS[(n * 7 + 3) % len(WORDS)]
    content = "Fact %d: the user likes %s in the %s and mentioned it while talking about %s plans." % (
        n, w1, w2, WORDS[(n * 5 + 1) % len(WORDS)])
    tags = "%s,%s" % (LABELS[n % 40], LABELS[(n * 3 + 1) % 40])
    return content, tags, "%s,%s" % (w1, w2)


class Clock:
    def __init__(self):
        self.t = T0

    def __call__(self):
        self.t += 1
        return self.t


# -- baselines -----------------------------------------------------------------------------------


def _load_list(path):
    """A JSON array file of the naive baselines, [] when there is none yet."""
    try:
        with open(path) as f:
            return json.load(f)
    except OSError:
        return []


class NaiveSessions:
    """The whole history as one JSON array, rewritten on every persist."""

    def __init__(self, d):
        self.path = d + "/naive_session.json"

    def _load(self):
        return _load_list(self.path)

    def persist(self, records, done=False):
        msgs = self._load()
        for t, mj, tx in records:
            msgs.append(json.loads(mj) if mj else {"role": "user" if t == 1 else "assistant", "content": tx})
        with open(self.path, "w") as f:
            f.write(dumps(msgs))

    def messages(self):
        return self._load()


class EspSessions:
    """ESP-Claw's session code: validate the pair, then open/append/close per record and per
    index entry; compaction rewrites both files in place."""

    def __init__(self, d, limit=153600):
        self.log = d + "/esp_session.log"
        self.idx = self.log + ".idx"
        self.limit = limit

    def _entries(self):
        with open(self.idx, "rb") as f:
            data = f.read()
        return [struct.unpack_from("<IIBB", data, k) for k in range(8, len(data) - 9, 10)]

    def persist(self, records, done=False):
        if fsutil.size(self.idx) < 8:
            with open(self.log, "wb"):
                pass
            with open(self.idx, "wb") as f:
                f.write(struct.pack("<IHH", 0x58444843, 1, 10))
        size = fsutil.size(self.log)
        for e in self._entries():  # session_history_validate_pair on every persist
            if e[0] + e[1] > size:
                raise OSError(22)
        for t, mj, tx in records:
            line = (mj or dumps({"role": "user" if t == 1 else "assistant", "content": tx})).encode() + b"\n"
            with open(self.log, "ab") as f:
                off = f.seek(0, 2)
                f.write(line)
            with open(self.idx, "ab") as f:
                f.write(struct.pack("<IIBB", off, len(line), t, 1))
        if done and fsutil.size(self.log) > self.limit:
            self.compact()

    def messages(self):
        out = []
        with open(self.log, "rb") as f:
            for off, ln, t, fmt in self._entries():
                f.seek(off)
                obj = json.loads(f.read(ln))
                if isinstance(obj, list):
                    out.extend(obj)
                else:
                    out.append(obj)
        return out

    def compact(self):
        ents = self._entries()
        last_tool = None
        start = 0
        for i, e in enumerate(ents):
            if e[2] == 1 and i:
                start = i
            if e[2] in (3, 4):
                last_tool = start
        keep = [e for i, e in enumerate(ents) if e[2] in (1, 2) or (last_tool is not None and i >= last_tool)]
        recs = []
        with open(self.log, "rb") as f:
            for e in keep:
                f.seek(e[0])
                recs.append((f.read(e[1]), e[2], e[3]))
        with open(self.log, "wb") as f, open(self.idx, "wb") as g:
            g.write(struct.pack("<IHH", 0x58444843, 1, 10))
            pos = 0
            for raw, t, fmt in recs:
                f.write(raw)
                g.write(struct.pack("<IIBB", pos, len(raw), t, fmt))
                pos += len(raw)


class NaiveStore:
    """Every item in one JSON file, loaded and rewritten whole on every change."""

    def __init__(self, d, clock):
        self.path = d + "/naive_memory.json"
        self.clock = clock

    def _load(self):
        return _load_list(self.path)

    def _save(self, items):
        with open(self.path, "w") as f:
            f.write(dumps(items))

    def store(self, content, tags, keywords):
        items = self._load()
        k = itm.key(content)
        for it in items:
            if itm.key(it["content"]) == k:
                return it
        it = {"id": "mem-%d" % self.clock(), "content": content, "tags": tags, "keywords": keywords,
              "access_count": 0, "updated_at": self.clock()}
        items.append(it)
        self._save(items)
        return it

    def recall(self, label):
        items = [it for it in self._load() if label in it["tags"].split(",")]
        items.sort(key=lambda it: (-it["access_count"], -it["updated_at"]))
        return items[:8]

    def forget(self, mid):
        self._save([it for it in self._load() if it["id"] != mid])

    def list(self):
        return self._load()


class EspStore:
    """ESP-Claw's memory code: every operation loads all items (last line per id) into RAM;
    store/forget append a line and rewrite the whole index and MEMORY.md; recall appends one
    digest line per item with its own open/close; compaction rewrites the records in place."""

    def __init__(self, d, clock):
        self.d = d
        self.clock = clock
        self.seq = 0

    def _items(self):
        items = {}
        order = []
        try:
            with open(self.d + "/memory_records.jsonl") as f:
                for line in f:
                    it = itm.from_obj(json.loads(line))
                    if it["id"] not in items:
                        order.append(it["id"])
                    items[it["id"]] = it
        except OSError:
            pass
        return [items[i] for i in order]

    def _index(self, items):
        cat = {}
        kw = {}
        for it in items:
            if it["deleted"]:
                continue
            for lab in itm.labels(it["tags"]):
                cat[lab] = cat.get(lab, 0) + 1
            for t in itm.keyword_terms(it):
                kw.setdefault(t, []).append(it["id"])
        return {"version": 3, "summaries": [{"label": k, "ref_count": v} for k, v in cat.items()],
                "keyword_index": kw}

    def _rewrite(self, items):
        with open(self.d + "/memory_index.json", "w") as f:
            f.write(dumps(self._index(items)))
        with open(self.d + "/MEMORY.md", "w") as f:
            f.write("# Long-term Memory\n\n")
            for it in sorted([i for i in items if not i["deleted"]], key=itm.priority):
                f.write("- `%s` %s\n  time=%s access=%d labels=%s\n" % (
                    it["id"], it["content"], local_time_str(it["updated_at"]), it["access_count"],
                    dumps(itm.labels(it["tags"]))))

    def _append(self, name, line):
        with open(self.d + "/" + name, "a") as f:
            f.write(line)

    def store(self, content, tags, keywords):
        items = self._items()
        k = itm.key(content)
        for it in items:
            if not it["deleted"] and itm.key(it["content"]) == k:
                return it
        self.seq += 1
        now = self.clock()
        it = itm.from_obj({"id": itm.new_id(now, self.seq), "content": content, "tags": tags,
                           "keywords": keywords, "created_at": now, "updated_at": now})
        self._append("memory_records.jsonl", itm.to_json(it) + "\n")
        items.append(it)
        self._rewrite(items)
        self._append("memory_digest.log", "%d\tstore\t%s\n" % (now, it["id"]))
        return it

    def recall(self, label):
        items = [it for it in self._items() if not it["deleted"] and label in itm.labels(it["tags"])]
        items.sort(key=itm.priority)
        for it in items[:8]:
            self._append("memory_digest.log", "%d\trecall\t%s\taccess_count+1\n" % (self.clock(), it["id"]))
        return items[:8]

    def forget(self, mid):
        items = self._items()
        for it in items:
            if it["id"] == mid:
                it["deleted"] = True
                self._append("memory_records.jsonl", itm.to_json(it) + "\n")
        self._rewrite(items)
        self._append("memory_digest.log", "%d\tforget\t%s\n" % (self.clock(), mid))

    def list(self):
        items = [it for it in self._items() if not it["deleted"]]
        items.sort(key=itm.priority)
        return items

    def compact(self):
        items = [it for it in self._items() if not it["deleted"]]
        with open(self.d + "/memory_records.jsonl", "w") as f:
            for it in items:
                f.write(itm.to_json(it, []) + "\n")
        self._rewrite(items)


# -- cases -----------------------------------------------------------------------------------


def _device(kib=1024):
    return mount("lfs2", "/flash", blocks=kib // 4)


def _files_changed(before, after):
    return sorted(k.rsplit("/", 1)[-1] for k in set(before) | set(after) if before.get(k) != after.get(k))


class Bench:
    """Runs an operation twice from the same flash image: once timed and counted (program/
    erase, bytes, files changed), once under the heap meter."""

    def __init__(self, dev, watch):
        self.dev = dev
        self.watch = watch

    def run(self, make):
        """`make()` builds the operation from fresh objects and returns a callable."""
        from flashsim import tree

        image = self.dev.image()
        fn = make()
        files = tree("/flash")
        before = self.dev.stats()
        gc.collect()
        t = us()
        fn()
        el = since(t)
        now = self.dev.stats()
        changed = _files_changed(files, tree("/flash"))
        self.dev = self.dev.restore(image)
        fn = make()
        gc.collect()
        with Meter(*self.watch) as m:
            fn()
        self.dev = self.dev.restore(image)
        return {"ops": now["ops"] - before["ops"], "bytes": now["bytes_programmed"] - before["bytes_programmed"],
                "us": el, "heap": m.above, "files": changed}


def _turn(s, n):
    u, c, r, f = turn_records(n)
    s.persist(SID, [u])
    s.persist(SID, [c, r])
    s.persist(SID, [f], turn_completed=True)


def case_turn_wear():
    """Program/erase per persisted turn at a 50-turn history: ours, ESP-Claw style, naive."""
    res = {}
    for name in ("ours", "espclaw", "naive"):
        dev = _device()
        fsutil.makedirs("/flash/sessions")
        if name == "ours":
            s = Sessions("/flash/sessions")

            def turn(n):
                _turn(s, n)
        else:
            s = EspSessions("/flash/sessions") if name == "espclaw" else NaiveSessions("/flash/sessions")

            def turn(n):
                u, c, r, f = turn_records(n)
                s.persist([u])
                s.persist([c, r])
                s.persist([f], True)
        for n in range(50):
            turn(n)
        # Eight turns average our index batching (appended every 4 completed turns).
        before = dev.stats()
        t = us()
        for n in range(50, 58):
            turn(n)
        el = since(t)
        now = dev.stats()
        res[name] = {"ops": (now["ops"] - before["ops"]) / 8,
                     "bytes": (now["bytes_programmed"] - before["bytes_programmed"]) / 8, "us": el // 8}
        dev.unmount()
    out(case="turn_wear", **res)


def _copy(src, dst):
    with open(src, "rb") as fi, open(dst, "wb") as fo:
        fo.write(fi.read())


def case_replay():
    """Heap and time to replay a 150 KiB history: ours vs ESP-Claw style vs naive."""
    dev = _device(2048)
    fsutil.makedirs("/flash/sessions")
    s = Sessions("/flash/sessions", size_limit=1 << 30)
    n = 0
    while fsutil.size(s.path(SID)) < 150 * 1024:
        _turn(s, n)
        n += 1
    s.close()
    size = fsutil.size(s.path(SID))
    esp = EspSessions("/flash/sessions")
    # The same bytes for the ESP-Claw-style reader (the formats are the same), and the whole
    # history as one JSON array for the naive one.
    _copy(s.path(SID), esp.log)
    _copy(s.path(SID) + ".idx", esp.idx)
    with open(NaiveSessions("/flash/sessions").path, "w") as f:
        f.write(dumps(esp.messages()))
    b = Bench(dev, (sessmod, text, sys.modules["bench_mp"]))
    res = {"history_bytes": size, "turns": n}
    res["ours"] = b.run(lambda: lambda: Sessions("/flash/sessions").messages(SID))
    res["espclaw"] = b.run(lambda: EspSessions("/flash/sessions").messages)
    res["naive"] = b.run(lambda: NaiveSessions("/flash/sessions").messages)
    b.dev.unmount()
    out(case="replay", **res)


def _fill_store(clock, n=128):
    s = Store("/flash/memory", clock=clock)
    s.open()
    lines = []
    for k in range(n):
        content, tags, kws = item_fact(k)
        content, tags, kws = itm.normalize(content, tags, kws)
        now = clock()
        lines.append(itm.to_json({"id": itm.new_id(now, k), "source": "manual", "content": content,
                                  "tags": tags, "keywords": kws, "created_at": now, "updated_at": now,
                                  "access_count": k % 5, "deleted": False, "summary_ids": []}))
    with open(s.records_path, "w") as f:
        f.write("\n".join(lines) + "\n")
    s = Store("/flash/memory", clock=clock)
    s.open()  # the stamp does not match: compaction builds index and MEMORY.md
    return s


def case_store_ops():
    """128-item store, 40 labels: flash, heap and time for store, recall, forget, compaction."""
    res = {"items": 128}
    for name in ("ours", "espclaw", "naive"):
        dev = _device(1024)
        fsutil.makedirs("/flash/memory")
        ours = _fill_store(Clock())  # ours and ESP-Claw style work on the same files
        labels = [e["label"] for e in ours.labels()]
        res["labels"] = len(labels)
        victim = ours.list()[5]["id"]
        if name == "naive":
            NaiveStore("/flash/memory", Clock())._save(ours.list())
        cls = {"ours": None, "espclaw": EspStore, "naive": NaiveStore}[name]
        b = Bench(dev, (storemod, text, sys.modules["bench_mp"]))

        def mk():
            return Store("/flash/memory", clock=Clock()) if cls is None else cls("/flash/memory", Clock())

        def recall():
            s = mk()
            return (lambda: s.recall([labels[3]])) if cls is None else (lambda: s.recall(labels[3]))

        def store():
            s = mk()
            return lambda: s.store("A brand new fact about sailing boats", "sailing", "boats")

        def forget():
            s = mk()
            return lambda: s.forget(victim)

        r = {"recall": b.run(recall), "store": b.run(store), "forget": b.run(forget),
             "list": b.run(lambda: mk().list)}
        if name != "naive":
            r["compact"] = b.run(lambda: mk().compact)
        res[name] = r
        b.dev.unmount()
    out(case="store_ops", **res)


def case_session_compaction():
    """Flash and heap of one session compaction at 150 KiB: ours vs ESP-Claw style (in place)."""
    dev = _device(2048)
    fsutil.makedirs("/flash/sessions")
    s = Sessions("/flash/sessions", size_limit=1 << 30)
    for n in range(140):
        _turn(s, n)
    s.close()
    log = s.path(SID)
    esp = EspSessions("/flash/sessions", limit=1 << 30)
    _copy(log, esp.log)
    _copy(log + ".idx", esp.idx)
    b = Bench(dev, (sessmod, text, sys.modules["bench_mp"]))
    res = {"before": fsutil.size(log)}

    def ours():
        s = Sessions("/flash/sessions")
        s.stat(SID)  # open (and repair) before the measured part
        return lambda: s.compact(SID)

    res["ours"] = b.run(ours)
    res["espclaw"] = b.run(lambda: EspSessions("/flash/sessions").compact)
    Sessions("/flash/sessions").compact(SID)
    res["after"] = fsutil.size(log)
    b.dev.unmount()
    out(case="session_compaction", **res)


def case_open_root():
    """Opening a data root with 20 sessions: ours (touches none) vs reading every session."""
    dev = _device(2048)
    import claw_memory

    mem = claw_memory.open("/flash", extract=False)
    for k in range(20):
        sid = "chat:bench:room%d:default_01" % k
        for n in range(10):
            u, c, r, f = turn_records(n)
            mem.sessions.persist(sid, [u, c, r, f], turn_completed=True)
    mem.close()
    mem = None
    gc.collect()
    reads = dev.reads
    with Meter(sessmod, storemod, text) as m:
        t = us()
        mem = claw_memory.open("/flash", extract=False)
        ours = since(t)
    ours_reads = dev.reads - reads
    reads = dev.reads
    t = us()
    for row in Sessions("/flash/sessions").list():  # an agent that loads every session at boot
        Sessions("/flash/sessions").messages(None, file=row["file"])
    every = since(t)
    out(case="open_root", ours={"us": ours, "reads": ours_reads, "heap": m.above},
        all_sessions={"us": every, "reads": dev.reads - reads})


if __name__ == "__main__":
    # Run the case from the module registered as bench_mp, so the meter can watch it.
    import bench_mp

    getattr(bench_mp, "case_" + sys.argv[1])()
