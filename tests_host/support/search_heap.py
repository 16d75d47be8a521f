# The heap of a history search across many sessions, on the 32-bit port (the package from
# source: tests_host/test_search_heap32.py):
#
#   search_heap.py ROOT SESSIONS [terms]
#
# SESSIONS chats of four turns each, every one with a turn about the lantern (so that every
# log has a match and is kept through the query), closed (their text indexes written); then
# opened afresh and the word searched over the whole data root and in one chat, each under
# the heap meter: prints "root ABOVE" and "chat ABOVE" (bytes above idle) and SEARCH-OK.
# `terms`: instead, a query of 16 terms that every log holds, over the whole data root
# ("terms ABOVE"): each file's matches of each term (what the first pass keeps) in every log.
# MIT license
import gc
import sys

from heapmeter import Meter, library_modules

import claw_memory


def build(root, n):
    mem = claw_memory.open(root, extract=False, clock=lambda: 1800000000)
    for k in range(n):
        sid = mem.chats.session_id("web", "u%d" % k)  # (its chat map, as the agent makes it)
        for q, a in ((
                ("Where did I leave the lantern, user %d?" % k, "In the shed, by the door."),
                ("What is the weather like today?", "Mild, with some rain later."),
                ("Remind me to call the plumber on Monday.", "Noted: call the plumber Monday."),
                ("Which book am I reading now?", "A novel about sailing, chapter %d." % k))):
            mem.sessions.persist(sid, [(1, None, q)])
            mem.sessions.persist(sid, [(2, None, a)], True)
    mem.close()


_TERMS = ("where did I leave the lantern user weather like today remind call plumber monday "
          "which book")


def main(root, n, terms):
    build(root, n)
    gc.collect()
    mem = claw_memory.open(root, extract=False, clock=lambda: 1800000000)
    mem.search("warm up", 5)  # (the modules a search imports)
    mem.search("warm up", 5, chat=("web", "u1"))
    scopes = (("terms", None),) if terms else (("root", None), ("chat", ("web", "u%d" % (n // 2))))
    for scope, chat in scopes:
        gc.collect()
        with Meter(*library_modules()) as m:
            hits = mem.search(_TERMS if terms else "the lantern", 5, chat=chat)
            got = len(hits)
            hits = None
        if got != (5 if chat is None else 1):
            raise AssertionError("%s: %d hits" % (scope, got))
        print("%s %d" % (scope, m.above))
    mem.close()
    print("SEARCH-OK")


main(sys.argv[1], int(sys.argv[2]), sys.argv[3:] == ["terms"])
