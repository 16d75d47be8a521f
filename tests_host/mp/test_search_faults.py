# History search under storage faults: a file that cannot be read (EIO) is left out and
# said so, never taken for a session without a turn; a full flash (ENOSPC while a text
# index is written) still answers, scoring the records from the file, and leaves the flash
# as it was.
import json
import os

from flashsim import mount
from mptest import eq, ok
from search_cases import D, turn

import claw_memory
from claw_memory import fsutil
from claw_memory.core import Request
from claw_memory.session import Sessions
from claw_memory.session import search as search_mod

HEAP = "8M"
U1, U2 = "chat:web:u1:default_01", "chat:web:u2:default_01"


class _Flaky:
    """`open` of the library's search path failing with EIO for the paths that end with
    `suffix` and hold `part`, from their `first`-th open on (1: every open)."""

    def __init__(self, part, suffix=".log", first=1):
        self.part = part
        self.suffix = suffix
        self.first = first
        self.seen = 0

    def __call__(self, path, mode="r"):
        if isinstance(path, str) and self.part in path and path.endswith(self.suffix):
            self.seen += 1
            if self.seen >= self.first:
                raise OSError(5, "EIO")
        return open(path, mode)

    def __enter__(self):
        fsutil.open = search_mod.open = self
        return self

    def __exit__(self, *exc):
        del fsutil.open, search_mod.open  # (the builtin again)
        return False


def _root():
    dev = mount("lfs2", "/flash", blocks=256)
    fsutil.makedirs(D)
    s = Sessions(D)
    turn(s, U1, 1)
    turn(s, U2, 11)  # the same topic: both hold "boiler"
    s.close()
    return dev, s


def _snapshot():
    return sorted((n, fsutil.size(D + "/" + n)) for n in os.listdir(D))


def test_a_log_that_cannot_be_opened_is_left_out_and_said_so():
    dev, s = _root()
    eq(sorted(h["session"][:18] for h in Sessions(D).search("boiler", 5, [U1, U2])),
       ["chat:web:u1:defaul", "chat:web:u2:defaul"], "both, with no fault")
    for first, what in ((1, "the first pass"), (2, "the candidates' pass")):
        log = []
        skipped = []
        files = _snapshot()
        with _Flaky("_u2_", first=first) as fl:
            got = Sessions(D, log=log.append).search("boiler", 5, [U1, U2], skipped)
        ok(fl.seen >= first, "the fault fired (%s)" % what)
        eq([h["session"] for h in got], [U1], "the other session's hit (%s)" % what)
        eq(skipped, [U2], "the session left out is reported (%s)" % what)
        ok(any("left out" in m and "_u2_" in m for m in log), "and noted: %r" % log)
        eq(_snapshot(), files, "nothing written (%s)" % what)
    # "not found" is not a fault: a session a chat map names before its first turn
    skipped = []
    eq(len(Sessions(D).search("boiler", 5, [U1, U2, "chat:web:u3:default_01"], skipped)), 2, "found")
    eq(skipped, [], "a session without a file is not reported")
    dev.unmount()


def test_an_index_that_cannot_be_opened_is_not_rewritten():
    dev, s = _root()
    files = _snapshot()
    skipped = []
    with _Flaky("_u2_", ".tix"):
        got = Sessions(D).search("boiler", 5, [U1, U2], skipped)
    eq(([h["session"] for h in got], skipped), ([U1], [U2]), "left out and reported")
    eq(_snapshot(), files, "the unreadable index is not written again")
    eq(len(Sessions(D).search("boiler", 5, [U1, U2])), 2, "both again once it reads")
    dev.unmount()


def test_the_tool_says_its_hits_are_incomplete():
    dev = mount("lfs2", "/flash", blocks=256)
    log = []
    mem = claw_memory.open("/flash", extract=False, log=log.append)
    a = mem.chats.session_id("web", "alice")
    turn(mem.sessions, a, 1)
    mem.session_command("web", "alice", "new trip")
    b = mem.chats.session_id("web", "alice")
    turn(mem.sessions, b, 11)
    mem.sessions.close()
    tool = [t for t in mem.tools() if t.name == "memory_search"][0]

    async def run():
        okay, out = await tool.handler({"query": "boiler"}, Request("q", b, "web", "alice"))
        res = json.loads(out)
        ok(okay and "incomplete" not in res and "note" not in res, out)
        eq(len(res["hits"]), 2, "both sessions")
        with _Flaky(mem.sessions.path(a).rsplit("/", 1)[1]):
            okay, out = await tool.handler({"query": "boiler"}, Request("q", b, "web", "alice"))
        res = json.loads(out)
        ok(okay and res["ok"], "still an answer: %s" % out)
        eq([h["session"] for h in res["hits"]], ["trip"], "the readable session's hit")
        eq(res["incomplete"], True, "said incomplete")
        ok("1 session" in res["note"] and "storage error" in res["note"], res["note"])
        ok(any("left out" in m for m in log), "the log has the error")

    return run()
