# What an agent turn reads from flash on a data root of many sessions, on the unix port:
#
#   micropython -X heapsize=32M tools/benchmark/mp/turn_cost.py [SESSIONS ...]
#
# N small sessions written as ESP-Claw writes them (a chat map, a log of one user message and
# its index), then one chat talked in through the agent: a user message, a tool round, the
# answer, the history streamed into each request as the LLM clients stream it (its length,
# then its bytes). The bytes littlefs or FatFs read in a turn (median of turns 3-8: the first
# ones open the session and the store) and how many of the session's files were opened or
# looked up: each name look-up reads the sessions folder's metadata, so a turn's reads grow
# with the sessions in the folder.
# MIT license
import builtins
import os
import sys

_HERE = __file__.rsplit("/", 1)[0] if "/" in __file__ else "."
sys.path[:0] = [_HERE, _HERE + "/../../../claw_memory_cli/runtime", _HERE + "/../../.."]

import asyncio  # noqa: E402

from flashsim import mount  # noqa: E402
from list_cost import esp_sessions  # noqa: E402
from scripted_llm import call, say  # noqa: E402

import claw_memory  # noqa: E402
from claw_memory import fsutil  # noqa: E402
from claw_memory.agent import Agent  # noqa: E402
from claw_memory.core import Request  # noqa: E402

_IMAGE = "/tmp/claw-turn-cost.img"
_TURNS = 8


class StreamLLM:
    """Answers from a script; each streamed history element is measured and written out as
    the clients' transport.Body does (json_length, then json_chunks)."""

    streams_history = True

    def __init__(self):
        self.steps = []

    async def chat(self, system, messages, tools=None):
        for m in messages:
            if not isinstance(m, dict):
                m.json_length("openai")
                for _ in m.json_chunks("openai"):
                    pass
        return self.steps.pop(0)


def build(kind, n):
    dev = mount(kind, "/flash", blocks=12288, image_file=_IMAGE)
    mem = claw_memory.open("/flash", extract=False)
    esp_sessions(mem, n)
    mem.close()
    return dev


class _Count:
    # Opens and look-ups (fsutil.size/exists) of the talked-in session's files
    def __init__(self, log):
        self.log = log
        self.n = 0
        self.inside = False

    def __enter__(self):
        self.o, self.s, self.e = builtins.open, fsutil.size, fsutil.exists

        def wrap(fn):
            def w(path, *a):
                if self.inside or not (isinstance(path, str) and path.startswith(self.log)):
                    return fn(path, *a)
                self.n += 1
                self.inside = True  # (fsutil.size opens the file: one look-up)
                try:
                    return fn(path, *a)
                finally:
                    self.inside = False
            return w

        builtins.open, fsutil.size, fsutil.exists = wrap(self.o), wrap(self.s), wrap(self.e)
        return self

    def __exit__(self, *exc):
        builtins.open, fsutil.size, fsutil.exists = self.o, self.s, self.e


def run(kind, n):
    dev = build(kind, n)
    mem = claw_memory.open("/flash", extract=False)
    llm = StreamLLM()
    agent = Agent(llm, mem.providers(), mem.hooks(), mem.tools(), "You are a helpful agent.")
    sid = mem.chats.session_id("web", "talker")
    log = mem.sessions.path(sid)
    reads, files = [], []
    for t in range(_TURNS):
        llm.steps = [call("memory_list", {}), say("Noted, turn %d: the garden needs water." % t)]
        r0 = dev.bytes_read
        with _Count(log) as c:
            asyncio.run(agent.run(Request("turn %d: water the tomatoes on Friday?" % t, sid,
                                          channel="web", chat_id="talker")))
        if t >= 2:
            reads.append(dev.bytes_read - r0)
            files.append(c.n)
    mem.close()
    dev.unmount()
    os.remove(_IMAGE)
    reads.sort()
    files.sort()
    kib = reads[len(reads) // 2] / 1024
    print("%-4s %5d sessions: %7.1f KiB read a turn (%d of its session's files opened or looked "
          "up; ~%d ms at 0.1 ms a KiB)" % (kind, n, kib, files[len(files) // 2], kib / 10))


for arg in sys.argv[1:] or ["70", "500"]:
    run("lfs2", int(arg))
    run("fat", int(arg))
