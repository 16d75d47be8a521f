# A request's history keeps its log open from one pass to the next (window._held): the length,
# then the body of each LLM call, each an open and a look-up of the log's name before (on FAT
# with thousands of sessions, hundreds of KiB each). What it sends is what a fresh open would
# read; a turn's completion and close() let it go; a volume mounted again is no error.
import asyncio
import builtins

from flashsim import mount
from mptest import eq, heap, ok
from scripted_llm import ScriptedLLM, call, say
from turns import SID, log as _log, tags as _tags, turn as _turn

import claw_memory
from claw_memory.agent import Agent
from claw_memory.core import Request
from claw_memory.session import window

HEAP = "8M"


class _Reads:
    """Counts the opens of `path` for reading."""

    def __init__(self, path):
        self.path = path
        self.n = 0

    def __enter__(self):
        self.open = builtins.open

        def counted(path, mode="r", *a):
            if path == self.path and mode == "rb":
                self.n += 1
            return self.open(path, mode, *a)

        builtins.open = counted
        return self

    def __exit__(self, *exc):
        builtins.open = self.open
        return False


def _agent_turn(mem, text, llm=None):
    llm = llm or ScriptedLLM([call("memory_list", {}), say("done: " + text)])
    ag = Agent(llm, mem.providers(), mem.hooks(), mem.tools(), "You are a helpful agent.")
    asyncio.run(ag.run(Request(text, SID, channel="web", chat_id="u1")))
    return llm


@heap("16M")
def test_a_turn_opens_its_log_once_for_its_history_and_lets_it_go():
    for kind in ("lfs2", "fat"):
        dev = mount(kind, "/flash", blocks=512)
        mem = claw_memory.open("/flash", extract=False)
        _agent_turn(mem, "first")
        with _Reads(_log()) as rd:
            llm = _agent_turn(mem, "second")
        # (the turn's first record checks the log's size: an open, fsutil.size; then the
        # length, two bodies and ScriptedLLM's messages() check of each: one open)
        eq(rd.n, 2, "%s: the log opened once for the request's passes" % kind)
        eq(window._held[1], None, "%s: closed when the turn completed" % kind)
        for c in llm.calls:
            eq([m["content"] for m in c["messages"] if m.get("role") == "user"], ["first", "second"], kind)
        mem.close()
        dev.unmount()


@heap("16M")
def test_a_history_after_an_append_reads_the_log_as_it_is_now():
    # The passes of one history, then a turn appended, then another history: the log is opened
    # again (FatFs's open file knows the size it had: the new turn would be cut off).
    for kind in ("lfs2", "fat"):
        dev = mount(kind, "/flash", blocks=512)
        mem = claw_memory.open("/flash", extract=False)
        s = mem.sessions
        for n in range(3):
            _turn(s, n, tools=False)
        h = s.history(SID)
        eq(len(h.messages()), 6, kind)
        ok(window._held[1] is not None, "%s: kept open after the pass" % kind)
        body = b"".join(bytes(p) for p in h.json_chunks("openai"))
        ok(body.count(b'"role":"user"') == 3, "%s: the kept file serves the next pass" % kind)
        other = claw_memory.open("/flash", extract=False)  # (another open appends a turn)
        _turn(other.sessions, 3, tools=False)
        _turn(s, 4, tools=False)  # (ours too: the state's log size moves)
        got = _tags(s.history(SID).messages())
        eq(got[-4:], [("user", "3"), ("final", "3"), ("user", "4"), ("final", "4")], kind)
        other.close()
        mem.close()
        eq(window._held[1], None, "%s: closed by close()" % kind)
        dev.unmount()


@heap("16M")
def test_a_volume_mounted_again_is_no_error():
    # The history kept the log of a FAT volume whose device then died (a cut, a card taken
    # out: closing that file fails): the next history, on the volume mounted again, lets
    # that file go quietly and reads its own.
    dev = mount("fat", "/flash", blocks=512)
    mem = claw_memory.open("/flash", extract=False)
    for n in range(2):
        _turn(mem.sessions, n, tools=False)
    eq(len(mem.sessions.history(SID).messages()), 4, "read")
    ok(window._held[1] is not None, "kept open")
    dev.dead = True
    dev = dev.reboot()
    mem = claw_memory.open("/flash", extract=False)
    eq(len(mem.sessions.history(SID).messages()), 4, "read again, no error")

    class Gone:  # (a driver whose close fails once its card is out)
        def close(self):
            raise OSError(5, "EIO")

    window._held[0], window._held[1] = None, Gone()  # (another state's: let go first)
    eq(len(mem.sessions.history(SID).messages()), 4, "a file that fails to close: let go")
    mem.close()
    dev.unmount()
