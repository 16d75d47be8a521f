# A session with one big tool result, searched and paged in a board's heap (on the 32-bit port:
# tests_host/test_search_heap32.py):
#
#   big_record.py build ROOT KIB     a turn whose tool result holds KIB KiB (the word "zebra")
#   big_record.py OP ROOT            OP: search, tool or page; prints "OP OK" or "OP MemoryError"
# MIT license
import sys

import claw_memory

SID = "chat:uart:console:default_01"


def build(root, kib):
    mem = claw_memory.open(root, extract=False)
    mem.sessions.persist(SID, [(1, None, "fetch the page please")])
    call = ('{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function",'
            '"function":{"name":"web_fetch","arguments":"{\\"url\\":\\"http://x\\"}"}}]}')
    body = ("zebra lorem ipsum dolor sit amet " * (kib * 1024 // 33))[: kib * 1024]
    res = '[{"role":"tool","tool_call_id":"c1","content":"%s","is_error":false}]' % body
    mem.sessions.persist(SID, [(3, call, None), (4, res, None)])
    mem.sessions.persist(SID, [(2, None, "done, it mentions a zebra")], turn_completed=True)
    mem.close()


def run(op, root):
    mem = claw_memory.open(root, extract=False)
    try:
        if op == "search":
            got = sorted(h["role"] for h in mem.search("zebra"))
            if got != ["assistant", "tool"]:
                raise AssertionError(got)
        elif op == "tool":
            import asyncio

            from claw_memory.core import Request

            t = [t for t in mem.tools() if t.name == "memory_search"][0]
            good, out = asyncio.run(t.handler('{"query":"zebra"}', Request("q", SID, "uart", "console")))
            if not good or '"role":"tool"' not in out:
                raise AssertionError(out[:200])
        else:
            got = [m["role"] for m in mem.sessions.page(SID)["messages"]]
            if got != ["user", "assistant"]:
                raise AssertionError(got)
        print(op, "OK")
    except MemoryError:
        print(op, "MemoryError")
    mem.close()


if sys.argv[1] == "build":
    build(sys.argv[2], int(sys.argv[3]))
else:
    run(sys.argv[1], sys.argv[2])
