# The cost of history search on the unix port: micropython search_cost.py search_cost
# '{"path": EVENTS.jsonl, "questions": QUESTIONS.json, "session_limit": N, "image": FILE}'
# (the questions: [[text, channel or null, chat id or null], ...]; the image: a host file
# for the simulated flash, so that the heap holds only the library's).
# MIT license
#
# The events (written by tools/benchmark/search_eval.py): conversations persisted turn by
# turn through Sessions on simulated LittleFS, compaction moving old turns into archive
# segments; then the memory is closed (every text index whole) and opened afresh, and each
# question is searched as the memory_search tool does (its chat's sessions) and over the
# whole data root: host CPU time (median), bytes read from the flash (the simulated device's
# counter: what littlefs reads, folder lookups included), and the heap above idle of a
# query (heapmeter). Also: the history's bytes (logs and segments), its text indexes', and
# the flash cost of persisting it.
import gc
import json
import os
import sys

from bench_mp import SW, out
from flashsim import attach, mount
from heapmeter import Meter, library_modules
from readtrace import Trace

import claw_memory

D = "/flash/sessions"
IX = "/flash/search"  # (session/format.py: index_dir)


def _events(path):
    with open(path) as f:
        for line in f:
            yield json.loads(line)


def build(a):
    dev = mount("lfs2", "/flash", blocks=a.get("blocks", 2048), image_file=a["image"])
    mem = claw_memory.open("/flash", extract=False, session_limit=a["session_limit"])
    dev.reset_stats()
    turns = 0
    chats = set()
    for ev in _events(a["path"]):
        if ev[0] == "command":
            mem.session_command(ev[1], ev[2], ev[3])
            continue
        if (ev[1], ev[2], ev[3]) not in chats:  # its chat map (made by /session, or here)
            chats.add((ev[1], ev[2], ev[3]))
            if mem.chats.session_id(ev[1], ev[2]) != ev[3]:
                alias = ev[3].rsplit(":", 1)[1]
                if not mem.session_command(ev[1], ev[2], "switch " + alias).startswith("Switched"):
                    mem.session_command(ev[1], ev[2], "new " + alias)
        sid, recs = ev[3], ev[4]
        batches = [[recs[0]]] + [recs[i:i + 2] for i in range(1, len(recs) - 1, 2)] + [[recs[-1]]]
        for n, batch in enumerate(batches):
            mem.sessions.persist(sid, [(r[0], r[1], None if r[1] else r[3]) for r in batch],
                                 turn_completed=n == len(batches) - 1)
        turns += 1
    st = dev.stats()
    mem.close()
    sz = sizes()
    dev.unmount()
    return turns, st, sz


def sizes():
    """{logs, segments, logs' indexes, segments' indexes}: bytes."""
    out = {"logs": 0, "segments": 0, "log_tix": 0, "segment_tix": 0}
    for d in (D, IX):
        for name in os.listdir(d):
            n = os.stat(d + "/" + name)[6]
            arc = ".log.arc" in name
            if name.endswith(".tix"):
                out["segment_tix" if arc else "log_tix"] += n
            elif arc:
                out["segments"] += n
            elif name.endswith(".log"):
                out["logs"] += n
    return out


def _copy_out(src, dst):
    # The data root's files to a host folder (the unix port's own filesystem: reads in C, as
    # a board's flash driver does them, not through the simulated device's Python).
    for name in os.listdir(src):
        p = src + "/" + name
        if os.stat(p)[0] & 0x4000:
            try:
                os.mkdir(dst + "/" + name)
            except OSError:
                pass
            _copy_out(p, dst + "/" + name)
            continue
        with open(p, "rb") as f, open(dst + "/" + name, "wb") as g:
            while True:
                b = f.read(4096)
                if not b:
                    break
                g.write(b)


def _queries(mem, questions, scope, dev=None):
    """Each question searched in `scope` ("chat": its chat, those with one; "root"): the
    sorted host times, the sorted bytes read from `dev` (none without it) and the hits."""
    times = []
    reads = []
    hits = 0
    for text, ch, cid in questions:
        if scope == "chat" and not ch:
            continue
        gc.collect()
        r0 = dev.bytes_read if dev else 0
        SW.start()
        got = mem.search(text, 5, chat=(ch, cid) if scope == "chat" else None)
        times.append(SW.stop())
        if dev:
            reads.append(dev.bytes_read - r0)
        hits += len(got)
    times.sort()
    reads.sort()
    return times, reads, hits


def _where(mem, questions, dev):
    """Where the flash reads of the chat-scope queries go (readtrace.Trace): the median of
    each share, bytes (and of the opens, a count). The files a search keeps open are let go
    first (mem.sessions.close()), to be opened again through the trace."""
    rows = []
    mem.sessions.close()
    with Trace(dev) as t:
        for text, ch, cid in questions:
            if not ch:
                continue
            gc.collect()
            t.reset()
            mem.search(text, 5, chat=(ch, cid))
            t.lap()
            rows.append((t.total, t.lookups(), t.opens, t.flash["index"], t.asked["index"],
                         t.flash["records"], t.asked["records"]))
    names = ("total", "lookups", "opens", "index_read", "index_asked", "records_read", "records_asked")
    return {k: sorted(r[i] for r in rows)[len(rows) // 2] for i, k in enumerate(names)}


def _reads_after(mem, questions, dev, before):
    """The median bytes read by a chat's query, each after `before(n, channel, chat id)`."""
    reads = []
    for n, (text, ch, cid) in enumerate(questions):
        if not ch:
            continue
        before(n, ch, cid)
        gc.collect()
        r0 = dev.bytes_read
        mem.search(text, 5, chat=(ch, cid))
        reads.append(dev.bytes_read - r0)
    reads.sort()
    return reads[len(reads) // 2]


def _cold(mem, questions, dev):
    """A chat's query that finds no file kept open (each after mem.sessions.close(): the
    first query after the memory is opened): the median bytes read."""
    return _reads_after(mem, questions, dev, lambda n, ch, cid: mem.sessions.close())


def _after_turns(mem, questions, dev):
    """A chat's query after a turn was persisted in the chat's current session (as the tool
    is used: between two of the user's messages; the session's files written since are
    opened again): the median bytes read. The turns stay in the history: measured last."""

    def turn(n, ch, cid):
        sid = mem.chats.session_id(ch, cid)
        mem.sessions.persist(sid, [(1, None, "a note %d for later" % n)])
        mem.sessions.persist(sid, [(2, None, "noted %d" % n)], turn_completed=True)

    return _reads_after(mem, questions, dev, turn)


def main(a):
    with open(a["questions"]) as f:
        a["questions"] = json.load(f)
    turns, st, sz = build(a)
    gc.collect()
    dev = attach(a["image"], "lfs2", "/flash")
    mem = claw_memory.open("/flash", extract=False, session_limit=a["session_limit"])
    mem.search("warm up", 5)  # (the modules a search imports: bytecode, when from .mpy)
    res = {}
    for scope in ("chat", "root"):
        times, reads, hits = _queries(mem, a["questions"], scope, dev)
        res[scope] = {"n": len(times), "median_us": times[len(times) // 2],
                      "p90_us": times[len(times) * 9 // 10], "max_us": times[-1],
                      "read_median": reads[len(reads) // 2], "read_max": reads[-1], "hits": hits}
    res["chat"]["reads"] = _where(mem, a["questions"], dev)
    res["chat"]["read_cold_median"] = _cold(mem, a["questions"], dev)
    # The heap above idle of a query that opens its files and keeps them open (what it keeps
    # stays after it, counted here: the figure of the first query after the memory is opened)
    mem.sessions.close()
    above = 0
    for text, ch, cid in a["questions"][:12]:
        gc.collect()
        with Meter(*library_modules()) as m:
            r = mem.search(text, 5, chat=(ch, cid) if ch else None)
            r = None
        above = max(above, m.above)
    native = {}
    if a.get("host_dir"):
        for p in ("/memory", "/sessions", "/sessions/chat_map", "/search"):
            try:
                os.mkdir(a["host_dir"] + p)
            except OSError:
                pass
        _copy_out("/flash/sessions", a["host_dir"] + "/sessions")
        _copy_out(IX, a["host_dir"] + "/search")
        _copy_out("/flash/memory", a["host_dir"] + "/memory")
        host = claw_memory.open(a["host_dir"], extract=False, session_limit=a["session_limit"])
        host.search("warm up", 5)
        for scope in ("chat", "root"):
            times = _queries(host, a["questions"], scope)[0]
            native[scope] = times[len(times) // 2]
    res["chat"]["read_turn_median"] = _after_turns(mem, a["questions"], dev)  # (last: it writes)
    out(case="search_cost", turns=turns, history=sz["logs"] + sz["segments"],
        index=sz["log_tix"] + sz["segment_tix"], sizes=sz, scopes=res, above=above, persist=st,
        native_median_us=native)


main(json.loads(sys.argv[2]))
