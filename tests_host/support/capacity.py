# The long-term store at its documented capacity (128 items with maximum-size content, tags
# and keywords, 3 labels each: 384 labels), a session at the 150 KiB limit and 2,000 other
# sessions, and a run of every store operation and the session operations that read much
# (request start, compaction, listing, a search rebuilding the session's text index) in a heap of a given free size
# (tests_host/test_heap32.py and tools/heap32.py, on the 32-bit port).
#
#   capacity.py build ROOT
#   capacity.py run ROOT FREE_KIB [whole|meter|meter:N] [STEP,STEP,...]
#   capacity.py lite ROOT FREE_KIB [whole|meter|meter:N] [STEP,STEP,...]
#   capacity.py held ROOT
#
# FREE_KIB is left free after the package is imported, or with `whole` before: then the
# imports, the open memory and each operation all come out of it, as on a board. `meter`
# (no ballast) prints each step's whole-heap peak: what the imports and the open memory hold
# plus the sampled high-water mark of the step (heapmeter.py, at every call or every Nth:
# quicker, but measured to miss up to 10 KiB; meter one step per process: the meter grows the
# module dicts it patches). STEPs: run only these, or -STEP,...: all but these
# (the memory is always opened and its store loaded). `held`: what an agent script holds as
# it sets up, each figure the whole heap from before `import claw_memory` (see held()).
# MIT license
import gc
import os
import sys


def build(root, n=128):
    """A data root whose store holds `n` full items (closed: derived files written)."""
    import claw_memory

    t = [1714000000]

    def clock():
        t[0] += 1
        return t[0]

    mem = claw_memory.open(root, extract=False, clock=clock, session_limit=1 << 30)
    ids = []
    # Each stored as the memory_store tool stores it, with its provenance (a marked line: its
    # parse needs claw_memory.provenance, as every line of a board's store does).
    by = mem.by("chat:uart:console:default_01", "Remember what I tell you")
    for k in range(n):
        words = ["w%03d%s" % (k, c * 5) for c in "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOP"]
        content = ("Fact %03d: " % k + " ".join(words))[:255]
        tags = ",".join("label%03d%s%s" % (k, c, "x" * 25) for c in "abc")[:95]
        ids.append(mem.store.store(content, tags, ",".join(words[:3]), by=by)[0]["id"])
        gc.collect()  # (set-up, not measured: the ids kept must not pin every part of the heap,
        # or a session read of 64 KiB below finds no room in a 4 MB heap)
    with open(root + ".ids", "w") as f:  # beside the root: what update and forget run on alone
        f.write("\n".join(ids[:2]))
    # A session at the limit: turns of a user message, a tool round and an answer.
    sid = "chat:uart:console:default_01"
    n = 0
    while mem.sessions.stat(sid)["bytes"] < 150 * 1024:
        mem.sessions.persist(sid, [(1, None, "Turn %d: how warm is the living room, and should I open "
                                             "a window before the guests arrive?" % n)])
        call = ('{"role":"assistant","content":null,"tool_calls":[{"id":"c%d","type":"function",'
                '"function":{"name":"read_sensor","arguments":"{}"}}]}' % n)
        res = ('[{"role":"tool","tool_call_id":"c%d","content":"{\\"celsius\\":24.5,\\"note\\":\\"%s\\"}",'
               '"is_error":false}]' % (n, "steady " * 40))
        mem.sessions.persist(sid, [(3, call, None), (4, res, None)])
        mem.sessions.persist(sid, [(2, None, "It is 24.5 C (turn %d): open it for ten minutes." % n)], True)
        n += 1
    mem.close()
    # 2,000 small sessions, written as ESP-Claw writes them (quicker than 2,000 persists).
    from claw_memory.session import file_name

    for k in range(2000):
        log = root + "/sessions/" + file_name("chat:web:u%d:default_01" % k)
        data = b'{"role":"user","content":"hi %d"}\n' % k
        with open(log, "wb") as f:
            f.write(data)
        with open(log + ".idx", "wb") as f:
            f.write(b"CHDX\x01\x00\x0a\x00" + len(data).to_bytes(4, "little").join(
                [b"\x00\x00\x00\x00", b"\x01\x01"]))


def _biggest():
    # The largest block that can be allocated now (fragmentation shows here).
    lo, hi = 0, gc.mem_free()
    while lo < hi:
        mid = (lo + hi + 1) // 2
        try:
            b = bytearray(mid)
            b = None
            lo = mid
        except MemoryError:
            hi = mid - 1
    return lo


def persist_turn(mem, sid):
    """A turn persisted as the agent does: the user record, then the answer that completes
    the turn (on a session at the limit, that compacts it)."""
    mem.sessions.persist(sid, [(1, None, "Is the window still open?")])
    mem.sessions.persist(sid, [(2, None, "Yes: close it in five minutes.")], True)


def run(root, free_kib, how="", only="", mode="full"):
    """Import FULL mode, leave `free_kib` KiB free (after the imports, or before them with
    how="whole"), then run every store operation and the memory tools at capacity; prints one
    line per step and ALL-OK at the end. mode="lite": the LITE piece (profile, MEMORY.md,
    session history) and what a LITE board does: a request start and a persisted turn."""
    import asyncio

    meter = None
    if how.startswith("meter"):
        from heapmeter import Meter as meter  # before the baseline: not the library's heap

        stride = int(how[6:] or 1)
    gc.collect()
    if how == "whole":
        if gc.mem_free() < free_kib * 1024:
            raise MemoryError("the heap has %d bytes free, not %d KiB" % (gc.mem_free(), free_kib))
        ballast = bytearray(gc.mem_free() - free_kib * 1024)  # noqa: F841 -- holds the rest
        gc.collect()
        print("free %d biggest %d" % (gc.mem_free(), _biggest()))
    gc.collect()
    a0 = gc.mem_alloc()
    print("start %d" % a0)  # the interpreter and this script
    import claw_memory

    if mode != "lite":
        import claw_memory.memory
        import claw_memory.memory_tools
        import claw_memory.store
    from claw_memory.core import Request

    gc.collect()
    print("from %s" % claw_memory.__file__)
    print("imports %d" % (gc.mem_alloc() - a0))
    if how != "whole" and free_kib:
        ballast = bytearray(gc.mem_free() - free_kib * 1024)  # noqa: F841 -- holds the rest
        gc.collect()
        print("free %d biggest %d" % (gc.mem_free(), _biggest()))
    skip = only[1:].split(",") if only.startswith("-") else ()
    only = only.split(",") if only and not skip else None
    mem = claw_memory.open(root, mode, extract=False, clock=lambda: 1800000000)

    def step(name, fn):
        chosen = (not only or name in only) and name not in skip
        if not chosen and name != "open":
            return
        gc.collect()
        before = gc.mem_free()
        peak = ""
        if meter and chosen:
            held = gc.mem_alloc() - a0
            with meter(stride=stride) as m:
                fn()
            peak = "  peak %d" % (held + m.above)
            m = None  # its lists of the wrapped functions: not in "opened"
        else:
            fn()
        gc.collect()
        print("%-12s ok  idle %+6d  biggest block %d%s" % (name, before - gc.mem_free(), _biggest(), peak))
        if name == "open":
            gc.collect()  # _biggest() left garbage
            print("ready %d" % (gc.mem_alloc() - a0))  # (FULL: the tools made, this script's own)

    sid = "chat:uart:console:default_01"

    def provide(k):
        # A provider skips its part when it fails (MemoryError included): that is no success.
        if not mem.providers()[k].collect(Request("x")):
            raise AssertionError("provider %d gave nothing" % k)

    def request_start():
        h = mem.providers()[2].collect(Request("x", sid))[0]
        n = h.json_length("openai")
        got = 0
        for c in h.json_chunks("openai"):
            got += len(c)
        if got != n or not n:
            raise AssertionError("history %d of %d bytes" % (got, n))

    if mode == "lite":
        step("open", lambda: None)
        step("provider", lambda: provide(1))
        step("history", request_start)
        step("persist", lambda: persist_turn(mem, sid))
        step("close", mem.close)
        print("ALL-OK")
        return
    tools = {t.name: t for t in mem.tools()}
    s = mem.store
    ids = []
    if only and ("update" in only or "forget" in only):
        with open(root + ".ids") as f:
            ids = f.read().split()[::-1]  # forget takes the last, update the one before

    def store():
        ids.append(s.store("A brand new fact about sailing boats in the harbour at dawn " * 4,
                           "sailing,boats,harbour", "sailing")[0]["id"])

    def tool(name, args):
        ok, out = asyncio.run(tools[name].handler(args, Request("x", "s", "c", "d")))
        if not ok:
            raise AssertionError("%s: %s" % (name, out[:200]))

    step("open", s.count)
    step("labels", lambda: sum(1 for _ in s.labels()))
    step("provider", lambda: provide(1))
    step("recall", lambda: s.recall(["label005axxxxxxxxxxxxxxx"]))
    step("list", lambda: sum(1 for _ in s.list()))
    step("store", store)
    step("update", lambda: ids.append(s.update(ids[-1], content="An updated fact about rowing "
                                                                "boats on the river " * 4)[0]["id"]))
    step("forget", lambda: s.forget(ids[-1]))
    step("compact", s.compact)
    step("verify", s.verify)
    step("tool_list", lambda: tool("memory_list", "{}"))
    step("tool_recall", lambda: tool("memory_recall", '{"summary_labels":["label010bxxxxxxxxxxxxxxx"]}'))
    step("tool_bad_label", lambda: tool("memory_recall", '{"summary_labels":["no such label"]}'))
    step("tool_store", lambda: tool("memory_store", '{"content":"User owns a red kayak","tags":"kayak"}'))

    step("history", request_start)
    step("persist", lambda: persist_turn(mem, sid))
    step("sessions", lambda: sum(1 for _ in mem.sessions.list()))

    def search_rebuild():
        # The 150 KiB session's text index gone: the search writes it again from the log
        # (session/indexer.py, 1 KiB pieces), then ranks and verifies its hits.
        from claw_memory.session import file_name
        from claw_memory.session.format import tix as tix_of

        try:
            os.remove(tix_of(root + "/sessions/" + file_name(sid)))
        except OSError:  # (a run cut short by a smaller heap left none: the search writes it)
            pass
        if not mem.search("open the window before the guests", 5, session=sid):
            raise AssertionError("no hit")

    step("s_search", search_rebuild)
    step("s_compact", lambda: mem.sessions.compact(sid))
    step("close", mem.close)
    print("ALL-OK")


def held(root):
    """The heap an agent script holds, measured from before `import claw_memory` (nothing
    else imported first, as a board's main.py): "opened", `claw_memory.open(root)` in FULL
    mode with its store loaded (the modules that imports included); "tools", the model's
    tools made as well (mem.tools(): the tool modules and objects); "request", a request
    started on the 150 KiB session too (the providers' parts collected, the history's JSON
    streamed), what stays held between requests."""
    gc.collect()
    a0 = gc.mem_alloc()
    print("start %d" % a0)
    import claw_memory

    mem = claw_memory.open(root, extract=False, clock=lambda: 1800000000)
    mem.store.count()
    gc.collect()
    print("opened %d" % (gc.mem_alloc() - a0))
    tools = mem.tools()
    gc.collect()
    print("tools %d" % (gc.mem_alloc() - a0))
    from claw_memory.core import Request

    req = Request("Is the window still open?", "chat:uart:console:default_01")
    parts = [p.collect(req) for p in mem.providers()]
    for c in parts[2][0].json_chunks("openai"):
        pass
    parts = c = req = None
    gc.collect()
    print("request %d" % (gc.mem_alloc() - a0))
    tools = None  # noqa: F841
    mem.close()
    print("ALL-OK")


if __name__ == "__main__":
    if sys.argv[1] == "build":
        build(sys.argv[2])
    elif sys.argv[1] == "held":
        held(sys.argv[2])
    else:  # run (FULL) or lite
        run(sys.argv[2], int(sys.argv[3]), *(sys.argv[4:] + ["", ""])[:2],
            mode="lite" if sys.argv[1] == "lite" else "full")
