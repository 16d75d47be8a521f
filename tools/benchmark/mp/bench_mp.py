# Benchmark cases run under the unix port (driven by tools/bench.py, one process per case).
# MIT license
#
# Usage: micropython bench_mp.py <case> '<json args>'. Each case prints one line
# "BENCH <json>" with raw measurements; tools/bench.py turns them into tables.
#
# Flash figures are the simulated device's counters (flashsim: LittleFS2 or FAT, 4096-byte
# blocks/sectors): program and erase operations, bytes programmed. Times are the host CPU
# time of one operation (Stopwatch: wall time minus time spent waiting for a CPU), after a
# gc.collect(), repeated; the driver reports median and min. Heap figures come from heapmeter
# (live heap sampled at every call boundary inside claw_memory) and from the driver's search
# for the smallest heap an operation succeeds in (case_heap with `meter` false).
#
# The systems compared: `Ours` (below: the only code here that calls claw_memory), ESP-Claw's
# C code ported file operation for file operation (espclaw.py), and two plain MicroPython
# peers (peers.py).

import gc
import json
import os
import sys
import time

import espclaw
import peers
from flashsim import attach, mount
from heapmeter import Meter, library_modules

T0 = 1714000000
SID = "chat:bench:room:default_01"
LABELS = ["label_%02d" % n for n in range(40)]
WORDS = ("coffee", "morning", "garden", "piano", "bicycle", "market", "python", "sunset", "river",
         "tennis", "bread", "museum", "winter", "violin", "lantern", "harbor")


# == OUR LIBRARY ============================================================================
# Every call the benchmark makes into claw_memory is in this class. When the session or
# store API changes (issues 12, 15, 16), re-point these methods and nothing else.


class Ours:
    @staticmethod
    def preload():
        """Import what opening a memory needs (so that a heap case does not count it)."""
        import claw_memory.memory  # noqa: F401

    def __init__(self, root="/flash", clock=None, session_limit=None, search_index=True):
        import claw_memory

        self.errors = []
        kw = {"extract": False, "log": self.errors.append, "search_index": search_index}
        if clock is not None:
            kw["clock"] = clock
        if session_limit is not None:
            kw["session_limit"] = session_limit
        self.mem = claw_memory.open(root, **kw)
        self.sessions = self.mem.sessions
        self.store_ = self.mem.store
        self.compactions = 0  # session compactions, counted by the cases (the log shrinks)

    def store_compactions(self):
        """Store compactions run so far, by itself or asked for."""
        return self.store_.compactions

    # -- sessions --
    def persist(self, session_id, records, turn_completed=False):
        return self.sessions.persist(session_id, records, turn_completed=turn_completed)

    def session_bytes(self, session_id):
        return self.sessions.stat(session_id)["bytes"]

    def request_start(self, session_id, backend="openai"):
        """What request start costs: the Session History provider's content, and the request
        body's history bytes as the LLM client writes them (a streamed element is iterated
        chunk by chunk, as transport.Body does). Returns the history's byte count."""
        from claw_memory.core import Request

        for p in self.mem.providers():
            if p.name == "Session History":
                n = len(self.errors)
                out = p.collect(Request("", session_id=session_id))
                if len(self.errors) > n:  # the provider guard turned an error into None
                    raise MemoryError(self.errors[-1]) if "MemoryError" in self.errors[-1] else \
                        OSError(5, self.errors[-1])
                size = 0
                for h in out or ():
                    if hasattr(h, "json_chunks"):
                        want = h.json_length(backend)
                        for c in h.json_chunks(backend):
                            size += len(c)
                        if size != want:
                            raise OSError(5, "history announced %d bytes, wrote %d" % (want, size))
                    else:
                        size += len(json.dumps(h))
                return size
        raise OSError(2, "no Session History provider")

    def compact_session(self, session_id):
        return self.sessions.compact(session_id)

    def count_sessions(self):
        n = 0
        for _ in self.sessions.list():
            n += 1
        return n

    # -- long-term store --
    def warm(self):
        """Open the store (ours opens lazily, on the first operation)."""
        return self.store_.open()

    def store(self, content, tags, keywords):
        return self.store_.store(content, tags, keywords)[0]["id"]

    def update(self, memory_id, content):
        return self.store_.update(memory_id, content=content)[0]["id"]

    def forget(self, memory_id):
        return self.store_.forget(memory_id)

    def recall(self, labels):
        return self.store_.recall(labels)

    def list(self):
        """Every item, one at a time, as memory_list takes them; returns how many."""
        n = 0
        for _ in self.store_.list():
            n += 1
        return n

    def ids(self):
        return [it["id"] for it in self.store_.list()]

    def labels(self):
        return [e["label"] for e in self.store_.labels()]

    def compact_store(self):
        return self.store_.compact()

    def close(self):
        self.mem.close()


# == end of the calls into claw_memory =======================================================


def out(**kw):
    print("BENCH " + json.dumps(kw))


def us():
    return time.ticks_us()


def since(t):
    return time.ticks_diff(time.ticks_us(), t)


def _waited_ns():
    # Time this process has spent runnable but waiting for a CPU (Linux; 0 elsewhere).
    try:
        with open("/proc/self/schedstat", "rb") as f:
            return int(f.read().split()[1])
    except (OSError, ValueError, IndexError):
        return 0


class Stopwatch:
    """Host CPU time of one operation in µs: its wall time minus the time the process waited
    for a CPU while other processes ran, so load elsewhere on the machine does not count."""

    def start(self):
        self.w = _waited_ns()
        self.t = time.ticks_us()

    def stop(self):
        el = time.ticks_diff(time.ticks_us(), self.t)
        return max(el - (_waited_ns() - self.w) // 1000, 0)


SW = Stopwatch()


class Clock:
    def __init__(self, t=T0):
        self.t = t

    def __call__(self):
        self.t += 1
        return self.t


def _fsize(path):
    try:
        return os.stat(path)[6]
    except OSError:
        return -1


def _makedirs(path):
    cur = ""
    for part in path.strip("/").split("/"):
        cur += "/" + part
        if _fsize(cur) < 0:
            try:
                os.mkdir(cur)
            except OSError:
                pass


def _delta(dev, before):
    now = dev.stats()
    return {k: now[k] - before[k] for k in ("ops", "erases", "progs", "bytes_programmed")}


# -- workloads ---------------------------------------------------------------------------


def turn_records(n):
    """One typical turn, about 0.9 KB: user, tool call, tool result, final answer, written in
    the key order cJSON keeps (ESP-Claw prints what it parsed or built, in that order;
    MicroPython's dicts have none)."""
    user = (1, None, "Turn %d: please check the living room sensor and tell me whether I should open "
                     "a window before the guests arrive this evening." % n)
    call = ('{"role":"assistant","content":null,"tool_calls":[{"id":"call_%d","type":"function",'
            '"function":{"name":"read_sensor","arguments":%s}}]}'
            % (n, espclaw.dumps('{"room":"living","kind":"climate"}')))
    reading = ('{"ok":true,"celsius":24.5,"humidity":51,"co2_ppm":930,"sensor":"bme680-living",'
               '"note":"%s"}' % ("steady readings over the last hour " * 4))
    result = ('[{"role":"tool","tool_call_id":"call_%d","content":%s,"is_error":false}]'
              % (n, espclaw.dumps(reading)))
    final = ('{"role":"assistant","content":"It is 24.5 C with 51%% humidity and CO2 at 930 ppm in '
             'the living room (turn %d). Opening a window for ten minutes before your guests arrive '
             'will freshen the air without cooling the room too much."}' % n)
    return user, (3, call, None), (4, result, None), (2, final, None)


def run_turn(system, n, sid=SID):
    """A turn as the agent persists it: the user message, one tool round, the final answer.
    Returns the block warning when the turn blocked the session."""
    u, c, r, f = turn_records(n)
    system.persist(sid, [u])
    system.persist(sid, [c, r])
    return system.persist(sid, [f], turn_completed=True)


def item_fact(n):
    """A typical item (~100-byte content, two labels of a 40-label catalog)."""
    w1, w2 = WORDS[n % len(WORDS)], WORDS[(n * 7 + 3) % len(WORDS)]
    content = "Fact %d: the user likes %s in the %s and mentioned it while talking about %s plans." % (
        n, w1, w2, WORDS[(n * 5 + 1) % len(WORDS)])
    return content, "%s,%s" % (LABELS[n % 40], LABELS[(n * 3 + 1) % 40]), "%s,%s" % (w1, w2)


def item_max(n):
    """An item at the documented maximum: 255-byte content, 95-byte tags (3 labels of its
    own: 384 catalog labels at 128 items), 127-byte keywords found in the content."""
    tags = ",".join(("%03d%s_" % (n % 1000, "abc"[k]) + "wellbeing_routines_users_x")[:31] for k in range(3))
    kws = ["%03d%s" % (n % 1000, "xyz"[k]) + "_keyword_about_the_users_daily_life_ab"[: 41 - 4] for k in range(3)]
    content = "Fact %d: %s %s %s. " % (n, kws[0], kws[1], kws[2])
    content += ("Remembered in detail while talking about plans for the week number %d. " % n) * 3
    return content[:255], tags, ",".join(kws)


def _item_record(n, maxed, total):
    # Older items are older (6 hours apart), so the 128-item cap drops the oldest, and the
    # newest ones (the update and forget targets) stay.
    content, tags, kws = item_max(n) if maxed else item_fact(n)
    ts = T0 - (total - n) * 6 * 3600
    return espclaw.dumps({"id": "mem-%d-%04d" % (ts, n % 10000), "source": "manual", "content": content,
                          "tags": tags, "keywords": kws, "created_at": ts, "updated_at": ts,
                          "access_count": n % 5, "deleted": False, "summary_ids": []})


def write_records(directory, count, maxed):
    """The records journal of a store of `count` items, in ESP-Claw's format; each system
    derives its index and MEMORY.md from it when it opens (ours) or compacts (ESP-Claw)."""
    _makedirs(directory)
    with open(directory + "/memory_records.jsonl", "w") as f:
        for n in range(count):
            f.write(_item_record(n, maxed, count) + "\n")
    return ["mem-%d-%04d" % (T0 - (count - n) * 6 * 3600, n % 10000) for n in range(count)]


# -- systems ------------------------------------------------------------------------------


def _device(fs, blocks=1024):
    return mount(fs, "/flash", blocks=blocks)


def session_system(name, dev, limit=None):
    d = "/flash/sessions"
    _makedirs(d)
    if name == "ours":
        return Ours("/flash", session_limit=limit)
    if name == "ours-noindex":  # (what the history search index costs a turn)
        return Ours("/flash", session_limit=limit, search_index=False)
    if name == "espclaw":
        return espclaw.EspClawSessions(d, limit=limit or espclaw.LIMIT, truncate=espclaw.model_truncate(dev))
    if name == "chipclaw":
        return peers.RewritePerTurn(d)
    if name == "naive":
        return peers.RewritePerPersist(d)
    raise ValueError(name)


def store_system(name, clock):
    d = "/flash/memory"
    if name == "ours":
        s = Ours("/flash", clock=clock)
        s.warm()
        return s
    if name == "espclaw":
        return espclaw.EspClawStore(d, clock).init()
    if name == "naive":
        return peers.NaiveStore(d, clock)
    raise ValueError(name)


def _compactions(system, store=False):
    if store and isinstance(system, Ours):
        return system.store_compactions()
    return getattr(system, "compactions", 0)


# -- cases: session history ---------------------------------------------------------------


def case_turns(a):
    """Flash and time per persisted turn at several history lengths, averaged over a window
    of turns (the cost depends on where the files' last partial block falls)."""
    dev = _device(a["fs"])
    sysm = session_system(a["system"], dev)
    n = 0
    points = []
    for p in a["points"]:
        while n < p:
            run_turn(sysm, n)
            n += 1
        before = dev.stats()
        c0 = _compactions(sysm)
        sizes = []
        times = []
        for _ in range(a["window"]):
            gc.collect()
            b0 = _bytes(sysm)
            SW.start()
            run_turn(sysm, n)
            times.append(SW.stop())
            b1 = _bytes(sysm)
            if a["system"].startswith("ours") and 0 <= b1 < b0:
                sysm.compactions += 1
            sizes.append(b1)
            n += 1
        d = _delta(dev, before)
        points.append({"turns": p, "window": a["window"], "flash": d, "us": times,
                       "compactions": _compactions(sysm) - c0, "log_bytes": sizes[0]})
    dev.unmount()
    out(case="turns", fs=a["fs"], system=a["system"], points=points)


def _bytes(sysm):
    """Size of the session's history file (-1 when there is none)."""
    if isinstance(sysm, Ours):
        try:
            return sysm.session_bytes(SID)
        except OSError:
            return -1
    return _fsize(sysm.path(SID))


def case_near_limit(a):
    """A long session up to and past the 150 KiB limit: which turns compact, what they cost,
    when the session blocks."""
    dev = _device(a["fs"])
    sysm = session_system(a["system"], dev)
    if a["system"] == "ours":
        sysm.compactions = 0
    turns = []
    blocked = None
    for n in range(a["turns"]):
        gc.collect()
        before = dev.stats()
        b0 = _bytes(sysm)
        c0 = _compactions(sysm)
        SW.start()
        try:
            warn = run_turn(sysm, n)
        except OSError:
            blocked = n
            break
        el = SW.stop()
        b1 = _bytes(sysm)
        if a["system"] == "ours" and 0 <= b1 < b0:
            sysm.compactions += 1
        d = _delta(dev, before)
        turns.append([d["ops"], d["erases"], d["bytes_programmed"], el, _compactions(sysm) - c0, b1])
        if warn:
            blocked = n
            break
    dev.unmount()
    out(case="near_limit", fs=a["fs"], system=a["system"], turns=turns, blocked=blocked)


def _built(ours, n, target):
    # A target below 1000 counts turns, above it bytes of history.
    if target < 1000:
        return n >= target
    return n > 0 and ours.session_bytes(SID) >= target


def case_replay(a):
    """Request start (the history the agent sends) at several history sizes: time, repeated;
    ours against ESP-Claw's loader and the peers on the same history."""
    res = []
    for target in a["sizes"]:
        dev = _device("lfs2", 1024)
        ours = Ours("/flash", session_limit=1 << 30)
        n = 0
        while not _built(ours, n, target):
            run_turn(ours, n)
            n += 1
        ours.close()
        size = ours.session_bytes(SID)
        ours = Ours("/flash", session_limit=1 << 30)
        esp = espclaw.EspClawSessions("/flash/sessions")  # same file names, same format
        chip = peers.RewritePerTurn("/flash/sessions")
        msgs = json.loads(esp.request_body(SID))
        with open(chip.path(SID), "w") as f:
            for m in msgs:
                f.write(espclaw.dumps(m) + "\n")
        msgs = None
        systems = (("ours", lambda: ours.request_start(SID)), ("espclaw", lambda: esp.request_body(SID)),
                   ("chipclaw", lambda: chip.request_body(SID)))
        for _, fn in systems:  # warm: our session cache, ChipClaw's RAM copy
            fn()
        times = {k: [] for k, _ in systems}
        for _ in range(a["reps"]):
            for k, fn in systems:  # interleaved, so load on the machine hits all alike
                gc.collect()
                SW.start()
                fn()
                times[k].append(SW.stop())
        res.append({"turns": n, "bytes": size, "us": times})
        dev.unmount()
    out(case="replay", sizes=res)


# -- cases: long-term store ---------------------------------------------------------------


def _store_image(fs, size):
    dev = _device(fs, 256)
    maxed = size == "cap"
    count = 128 if maxed else size
    ids = write_records("/flash/memory", count, maxed)
    return dev, ids, maxed, count


def _prepare_store(name, fs, size):
    """A store of `size` items as each system has it after its own compaction of the
    written records (which gives the items their labels from their tags)."""
    dev, ids, maxed, count = _store_image(fs, size)
    clock = Clock(T0)
    if name == "ours":
        s = Ours("/flash", clock=clock)
        s.warm()
        s.compact_store()
        s.close()
    elif name == "espclaw":
        espclaw.EspClawStore("/flash/memory", clock).init().compact()
    else:
        s = peers.NaiveStore("/flash/memory", clock)
        s.load_items([json.loads(_item_record(n, maxed, count)) for n in range(count)])
    return dev, ids, maxed, count


def _new_item(n, maxed):
    return item_max(5000 + n) if maxed else item_fact(5000 + n)


def case_store_ops(a):
    """store / update / forget: runs of R[op] operations from the same image, K times; every
    compaction the run triggers is in it. recall and list: R calls each."""
    name, fs, size, R, K = a["system"], a["fs"], a["size"], a["R"], a["K"]
    dev, ids, maxed, count = _prepare_store(name, fs, size)
    image = dev.image()
    s = store_system(name, Clock(T0 + 100000))
    res = {"items": count, "active": len(_active_ids(s))}
    s = None
    originals = set(ids)
    for op in a["ops"]:
        runs = []
        for rep in range(K):
            dev = dev.restore(image)
            gc.collect()
            clock = Clock(T0 + 100000)
            s = store_system(name, clock)
            before = dev.stats()
            c0 = _compactions(s, True)
            times = []
            errors = 0
            used = set()
            for k in range(R[op]):
                target = None
                if op in ("update", "forget"):
                    with dev.uncounted():
                        target = _pick_target(s, originals, used)
                gc.collect()
                SW.start()
                try:
                    _store_op(s, op, k, target, maxed)
                except Exception as e:  # noqa: BLE001 -- reported, e.g. ESP-Claw's NOT_FOUND
                    errors += 1
                    last = "%s %s" % (type(e).__name__, e)
                times.append(SW.stop())
            runs.append({"flash": _delta(dev, before), "us": times, "compactions": _compactions(s, True) - c0,
                         "errors": errors})
            if errors:
                runs[-1]["error"] = last
            if name == "espclaw":
                runs[-1]["items_after"] = len(s.ids())
        res[op] = runs
    dev.unmount()
    out(case="store_ops", system=name, fs=fs, size=size, **res)


def _pick_target(s, originals, used):
    """The newest original item still active in `s` (the 128-item cap drops the oldest;
    ESP-Claw's compaction buffer drops the newest of large items), not used before."""
    best = None
    for i in _active_ids(s):
        if i in originals and i not in used:
            if best is None or int(i.rsplit("-", 1)[1]) > int(best.rsplit("-", 1)[1]):
                best = i
    used.add(best)
    return best


def _active_ids(s):
    if isinstance(s, Ours):
        return s.ids()
    if isinstance(s, espclaw.EspClawStore):
        return s.ids()
    return [it["id"] for it in s.list()]


def _labels_of(s):
    if isinstance(s, Ours):
        return s.labels()
    if isinstance(s, espclaw.EspClawStore):
        return [e["label"] for e in s._load_index()["summaries"]]
    return LABELS


def _store_op(s, op, k, target, maxed):
    if op == "store":
        c, t, kw = _new_item(k, maxed)
        return s.store(c, t, kw)
    if op == "update":
        return s.update(target, _new_item(100 + k, maxed)[0])
    if op == "forget":
        return s.forget(target)
    if op == "recall":
        labs = _labels_of(s)
        return s.recall([labs[(k * 7) % len(labs)]])
    if op == "list":
        return s.list()
    raise ValueError(op)


# -- cases: heap (run with the 32-bit binary; images prepared by case_prepare) ------------


def case_prepare(a):
    """Build a filesystem image in a host file for the heap cases (a host directory for the
    2,000 sessions)."""
    kind = a["what"]
    dev = None
    if kind != "sessions":
        dev = mount(a.get("fs", "lfs2"), "/flash", blocks=a.get("blocks", 1024), image_file=a["image"])
    info = {}
    if kind == "store":
        maxed = a["size"] == "cap"
        write_records("/flash/memory", 128 if maxed else a["size"], maxed)
        s = Ours("/flash", clock=Clock(T0))
        s.warm()
        s.compact_store()  # the items get their labels, as in _prepare_store
        labs = s.labels()
        # What the heap cases operate on, found here so that they need not list the store.
        info = {"labels": len(labs), "label": labs[len(labs) // 2], "target": s.ids()[0]}
        s.close()
    elif kind == "history":
        s = Ours("/flash", session_limit=1 << 30)
        n = 0
        while not _built(s, n, a["bytes"]):
            run_turn(s, n)
            n += 1
        s.close()
        info = {"turns": n, "bytes": s.session_bytes(SID)}
    elif kind == "sessions":
        # A host directory, not the simulated flash: littlefs looks names up by scanning
        # the directory, and listing 2,000 sessions there takes minutes (the heap is what
        # this measures).
        root = a["dir"]
        _makedirs(root + "/sessions")
        esp = espclaw.EspClawSessions(root + "/sessions")  # the same files as ours, quickly
        for k in range(a["count"]):
            # Small sessions (one short exchange): littlefs keeps files under 128 bytes
            # inside the directory, so 2,000 sessions fit a small image.
            esp.persist("chat:bench:room%d:default_01" % k, [(1, None, "hi %d" % k), (2, None, "hello %d" % k)],
                        turn_completed=True)
        Ours(root).close()  # profile files, memory dir: a data root as ours has it
        info["sessions"] = a["count"]
    if dev is not None:
        dev.unmount()
    out(case="prepare", **info)


def _heap_setup(a):
    """(device, system, the operation) for a heap case, everything but the operation done."""
    what = a["what"]
    if what == "open":
        Ours.preload()  # imported before idle: not what is measured
        return None, None, (lambda: Ours(a["dir"]))
    if what == "list_sessions":
        s = Ours(a["dir"])
        return None, s, s.count_sessions
    dev = attach(a["image"], a.get("fs", "lfs2"), "/flash")
    s = Ours("/flash", clock=Clock(T0 + 100000))
    if what == "store":
        s.warm()
        first, lab = a["target"], a["label"]
        maxed = a.get("maxed", True)
        return dev, s, {
            "store": lambda: s.store(*_new_item(1, maxed)),
            "update": lambda: s.update(first, _new_item(2, maxed)[0]),
            "forget": lambda: s.forget(first),
            "recall": lambda: s.recall([lab]),
            "list": s.list,
            "labels": s.labels,
            "compact": s.compact_store,
            "nothing": lambda: None,  # the floor: what setting up alone needs
        }[a["op"]]
    if what in ("request_start", "session_compact", "session_nothing"):
        s.session_bytes(SID)  # the state a persist leaves: the session opened
        if what == "request_start":
            return dev, s, lambda: s.request_start(SID)
        if what == "session_nothing":
            return dev, s, lambda: None
        return dev, s, lambda: s.compact_session(SID)
    raise ValueError(what)


def case_heap(a):
    """Heap above idle of one operation, sampled by heapmeter; with `meter` false only whether
    it succeeds (the driver searches the smallest -X heapsize that works)."""
    ok = True
    err = None
    above = samples = idle = collections = 0
    try:
        dev, s, fn = _heap_setup(a)
    except MemoryError:
        out(case="heap", ok=False, setup_failed=True, error="MemoryError in setup")
        return
    gc.collect()
    idle = gc.mem_alloc()
    free = gc.mem_free()
    t0 = us()
    try:
        if a.get("meter", True):
            with Meter(*library_modules(), stride=a.get("stride", 1)) as m:
                r = fn()
                r = None
            above, samples, collections = m.above, m.samples, m.collections
        else:
            r = fn()
            r = None
    except MemoryError as e:
        ok, err = False, "MemoryError"
        if a.get("verbose"):
            sys.print_exception(e)
    except Exception as e:  # noqa: BLE001 -- reported as measured
        ok, err = False, repr(e)
    out(case="heap", ok=ok, error=err, idle=idle, free=free, above=above, samples=samples,
        collections=collections, us=since(t0))


if __name__ == "__main__":
    # Run the case from the module registered as bench_mp (the meter must not wrap this one).
    import bench_mp

    args = json.loads(sys.argv[2]) if len(sys.argv) > 2 else {}
    getattr(bench_mp, "case_" + sys.argv[1])(args)
