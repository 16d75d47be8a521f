# The cost of one ranked query on the unix port: micropython recall_cost.py recall_cost
# '{"path": SET.json}'.
# MIT license
#
# The set (written by tools/benchmark/recall_eval.py): one store's 128 items and its
# questions. The items are stored on simulated LittleFS flash, the store is opened afresh (the
# term statistics built by the open scan), then each question is asked twice: host CPU time
# of Store.matches (the provider's read-only path) and of Store.recall(query=...) (the tool's,
# which appends recall lines), and the heap above idle of a query, sampled by heapmeter.
import gc
import json
import sys

from bench_mp import SW, Clock, out
from flashsim import mount
from heapmeter import Meter, library_modules

from claw_memory.store import Store

M = "/flash/memory"


def main(path):
    with open(path) as f:
        data = json.load(f)
    mount("lfs2", "/flash", blocks=256)
    clock = Clock()
    s = Store(M, clock=clock)
    for content, tags, keywords in data["items"]:
        s.store(content, tags, keywords)
    s.close()
    gc.collect()
    before = gc.mem_alloc()
    s = Store(M, clock=clock)
    s.open()
    gc.collect()
    opened = gc.mem_alloc() - before
    stats = s._st.terms.nbytes()  # noqa: SLF001 -- the statistics' arrays, what the budget counts
    times = {"matches": [], "recall": []}
    for q in data["questions"]:
        for name, fn in (("matches", lambda: s.matches(q, 5)), ("recall", lambda: s.recall(query=q, limit=5))):
            gc.collect()
            SW.start()
            fn()
            times[name].append(SW.stop())
    above = 0
    for q in data["questions"][:40]:
        gc.collect()
        idle = gc.mem_alloc()
        with Meter(*library_modules()) as m:
            r = s.matches(q, 5)
            r = None
        above = max(above, m.above)
        del idle
    for v in times.values():
        v.sort()
    out(case="recall_cost", n=len(data["questions"]), stats=stats, opened=opened, above=above,
        matches_us=times["matches"][len(times["matches"]) // 2],
        recall_us=times["recall"][len(times["recall"]) // 2],
        matches_max_us=times["matches"][-1])


main(json.loads(sys.argv[2])["path"])
