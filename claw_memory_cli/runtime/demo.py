# The claw_memory demo: the reference agent with memory, a conversation, a reboot.
# MIT license
#
# Under the unix port (the default, offline) the data root lives on simulated LittleFS flash
# at /flash, the LLM is a small offline policy that really drives the memory tools, and the
# reboot rebuilds the flash from the bytes that survived. Under CPython (a real LLM endpoint)
# the data root is a folder and the reboot reopens everything from disk.
#
#   micropython demo.py EXPORT_DIR                    (what `claw-memory demo` runs)
#   python demo.py EXPORT_DIR openai|openai_responses|anthropic [BASE_URL] [MODEL]

import json
import os
import sys

import claw_memory
from claw_memory._compat import dumps
from claw_memory.agent import Agent
from claw_memory.core import Request, Tool
from claw_memory.reply import LLMError

CHANNEL, CHAT = "demo", "ada"
SYSTEM = ("You are Pip, a helpful assistant running on a small ESP32-S3 board. Answer briefly. "
          "Use your memory tools as the Memory Skills section explains.")

BEFORE_REBOOT = [
    "Hi! I'm Ada. I moved to Lisbon last spring and I work as a nurse.",
    "Please remember that I'm allergic to peanuts.",
    "From now on, please call me Captain.",
]
AFTER_REBOOT = [
    "What do you remember about me?",
    "Please forget that I live in Lisbon.",
    "What do you know about me now?",
]


# -- the offline LLMs ------------------------------------------------------------------------


def _catalog(system):
    """Labels listed in the Long-term Memory section of the system prompt."""
    out = []
    if "Summary label catalog:\n" not in system:
        return out
    for line in system.split("Summary label catalog:\n", 1)[1].split("\n"):
        if not line.startswith("- "):
            break
        if line != "- (empty)":
            out.append(line[2:])
    return out


def _last(messages, role):
    for m in reversed(messages):
        if m.get("role") == role:
            return m
    return None


def _after_last_user(messages):
    out = []
    for m in reversed(messages):
        if m.get("role") == "user":
            break
        out.append(m)
    out.reverse()
    return out


class OfflineAgentLLM:
    """A rule-based stand-in for a chat model: it reads the conversation and the tool
    results and calls the memory and profile tools the way the skills tell a model to."""

    backend = "openai"

    async def chat(self, system, messages, tools=None):
        from scripted_llm import call, say

        user = _last(messages, "user")["content"]
        low = user.lower()
        done = _after_last_user(messages)
        results = [json.loads(m["content"]) for m in done if m.get("role") == "tool"]
        last = results[-1] if results else None
        n = len(results)
        if "remember that" in low and n == 0:
            fact = user.split("remember that", 1)[1].strip(" .!")
            fact = "User " + fact.replace("I'm ", "is ").replace("I am ", "is ")
            return call("memory_store", {"content": fact, "tags": "health,allergy",
                                         "keywords": "peanuts"}, "call_store")
        if "remember that" in low:
            return say("Got it, I'll keep that in mind." if last["ok"] else "Sorry, I could not save that.")
        if "call me" in low:
            if n == 0:
                return call("profile_read", {"name": "user"}, "call_read")
            if n == 1:
                name = user.split("call me", 1)[1].strip(" .!")
                body = last["content"].rstrip() + "\n\nPreferred name: %s\n" % name
                return call("profile_update", {"name": "user", "content": body}, "call_profile")
            return say("Aye, I'll call you %s from now on." % user.split("call me", 1)[1].strip(" .!"))
        if "remember about me" in low or "know about me" in low:
            if n == 0:
                return call("memory_recall", {"summary_labels": _catalog(system)[:3], "limit": 8}, "call_recall")
            facts = [it["content"] for it in last.get("items", [])]
            name = "Captain" if "Preferred name: Captain" in system else "Ada"
            if not facts:
                return say("I don't have anything about you yet, %s." % name)
            return say("Here is what I remember, %s: %s." % (name, "; ".join(facts)))
        if "forget" in low:
            what = user.lower().split("forget that", 1)[-1].strip(" .!").replace("i live in", "").strip()
            if n == 0:
                return call("memory_list", {}, "call_list")
            if n == 1:
                for it in last.get("items", []):
                    if what and what in it["content"].lower():
                        return call("memory_forget", {"memory_id": it["id"]}, "call_forget")
                return say("I had nothing about that.")
            return say("Done, I've forgotten that." if last["ok"] else "I could not forget that.")
        return say("Nice to meet you, Ada! Lisbon and nursing: quite a life.")


class OfflineExtractionLLM:
    """A rule-based stand-in for the extraction model: a few sentence patterns."""

    backend = "openai"

    async def chat(self, system, messages, tools=None):
        from scripted_llm import say

        msg = messages[-1]["content"].split("Current user message:\n", 1)[1]
        low = msg.lower()
        mems = []
        if "moved to " in low:
            city = msg[low.index("moved to ") + 9:].split()[0].strip(".,!")
            mems.append({"content": "User lives in " + city, "tags": ["city"], "keywords": [city]})
        if "work as a " in low:
            job = msg[low.index("work as a ") + 10:].split()[0].strip(".,!")
            mems.append({"content": "User works as a " + job, "tags": ["job"], "keywords": [job]})
        return say(dumps({"intent": "none", "memories": mems}))


# -- the run -----------------------------------------------------------------------------------


def _wrap_tools(tools, out):
    def make(handler, name):
        async def h(args, request):
            ok, res = await handler(args, request)
            out("    [tool] %s %s -> %s" % (name, args, res if len(res) < 160 else res[:157] + "..."))
            return ok, res
        return h

    return [Tool(t.name, t.description, t.schema, make(t.handler, t.name)) for t in tools]


class Unreachable(Exception):
    """The endpoint did not answer (no network, a wrong URL or key): every turn would fail alike."""


class Watched:
    """A real LLM client that remembers its first failure to answer: the agent answers a
    failed turn with an apology, and the demo stops there instead of going on."""

    def __init__(self, llm):
        self.llm = llm
        self.failed = None

    def __getattr__(self, name):  # backend, streams_history, ...: the client's own
        return getattr(self.llm, name)

    async def chat(self, system, messages, tools=None):
        try:
            return await self.llm.chat(system, messages, tools)
        except LLMError as e:
            self.failed = self.failed or "%s (%s)" % (e, e.kind)
            raise


async def _talk(mem, llm, messages, out):
    agent = Agent(llm, mem.providers(), mem.hooks(), _wrap_tools(mem.tools(), out), SYSTEM,
                  publish=lambda note: out("    " + note), log=None)
    for text in messages:
        sid = mem.chats.session_id(CHANNEL, CHAT)
        out("\n[Ada] " + text)
        reply = await agent.run(Request(text, sid, CHANNEL, CHAT))
        out("[Pip] " + reply)
        if getattr(llm, "failed", None):
            raise Unreachable(llm.failed)


def _copy_tree(src, dst):
    os.mkdir(dst) if not _isdir(dst) else None
    for entry in os.listdir(src):
        s, d = src + "/" + entry, dst + "/" + entry
        if _isdir(s):
            _copy_tree(s, d)
        else:
            with open(s, "rb") as fi, open(d, "wb") as fo:
                while True:
                    b = fi.read(1024)
                    if not b:
                        break
                    fo.write(b)


def _isdir(p):
    try:
        return os.stat(p)[0] & 0x4000 != 0
    except OSError:
        return False


async def main(export_dir, kind="offline", base_url=None, model=None):
    out = print
    if kind == "offline":
        from flashsim import mount

        dev = mount("lfs2", "/flash", blocks=512)
        root = "/flash"
        llm, xllm = OfflineAgentLLM(), OfflineExtractionLLM()
        out("== claw_memory demo: offline LLM, data root on simulated LittleFS flash (%d KiB) ==" % (
            dev.blocks * dev.block_size // 1024))
    else:
        from claw_memory.llm import from_config

        dev = None
        root = export_dir
        key = os.environ.get("ANTHROPIC_API_KEY" if kind == "anthropic" else "OPENAI_API_KEY")
        kw = {"api_key": key}
        if base_url:
            kw["base_url"] = base_url
        if model:
            kw["model"] = model
        llm = xllm = Watched(from_config(kind, **kw))
        out("== claw_memory demo: %s at %s, data root %s ==" % (kind, base_url or "default", root))
    mem = claw_memory.open(root, llm=llm, extraction_llm=xllm)
    await _talk(mem, llm, BEFORE_REBOOT, out)
    mem.close()
    if dev is not None:
        out("\n== reboot: power cycle; the flash keeps what was written, RAM is gone ==")
        out("   flash wear so far: %d program + %d erase operations, %d bytes programmed" % (
            dev.progs, dev.erases, dev.bytes_programmed))
        dev = dev.reboot()
    else:
        out("\n== reboot: everything reopened from disk ==")
    mem = claw_memory.open(root, llm=llm, extraction_llm=xllm)
    sid = mem.chats.session_id(CHANNEL, CHAT)
    out("history of %s after the reboot: %d messages; long-term items: %d" % (
        sid, len(mem.sessions.messages(sid)), mem.store.count()))
    await _talk(mem, llm, AFTER_REBOOT, out)
    out("\n[Ada] /session new holidays")
    out("[Pip] " + mem.session_command(CHANNEL, CHAT, "new holidays"))
    out("[Ada] /session list")
    out("[Pip] " + mem.session_command(CHANNEL, CHAT, "list"))
    mem.close()
    if dev is not None:
        _copy_tree(root, export_dir)
        out("\n(data root copied from the simulated flash to %s)" % export_dir)


if __name__ == "__main__":
    import asyncio

    a = sys.argv[1:]
    asyncio.run(main(a[0], a[1] if len(a) > 1 else "offline", a[2] if len(a) > 2 else None,
                     a[3] if len(a) > 3 else None))
