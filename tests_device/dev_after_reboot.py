# On the board, after a soft reset: history and memories survived; the next turn works.
import asyncio

from devtest_config import ROOT
from scripted_llm import ScriptedLLM, call, say

import claw_memory
from claw_memory.agent import Agent
from claw_memory.core import Request


async def main():
    mem = claw_memory.open(ROOT, extract=False)
    sid = mem.chats.session_id("devtest", "board")
    msgs = mem.sessions.messages(sid)
    roles = [m["role"] for m in msgs]
    assert roles == ["user", "assistant", "user", "assistant", "tool", "assistant"], roles
    assert msgs[-1]["content"] == "Noted.", msgs[-1]
    items = sorted(i["content"] for i in mem.store.list())
    assert items == ["User is allergic to peanuts", "User lives in Lisbon"], items
    llm = ScriptedLLM([call("memory_recall", {"summary_labels": ["health"]}), say("You are allergic to peanuts.")])
    agent = Agent(llm, mem.providers(), mem.hooks(), mem.tools(), "You are a device test.")
    reply = await agent.run(Request("What am I allergic to?", sid, "devtest", "board"))
    assert reply == "You are allergic to peanuts.", reply
    assert "- health\n" in llm.calls[0]["system"]
    mem.close()
    print("history %d messages, %d items" % (len(msgs), len(items)))
    print("DEVTEST PASS after reboot")


asyncio.run(main())
