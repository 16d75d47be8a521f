# On the board: open memory, run a conversation with a scripted LLM through the reference
# agent (tool calls, extraction, stage notes). Prints DEVTEST PASS at the end.
import asyncio

from devtest_config import ROOT
from scripted_llm import ScriptedLLM, call, say

import claw_memory
from claw_memory.agent import Agent
from claw_memory.core import Request


async def main():
    xllm = ScriptedLLM(['{"intent":"none","memories":[{"content":"User lives in Lisbon","tags":["city"],'
                        '"keywords":["Lisbon"]}]}', '{"intent":"none","memories":[]}'])
    llm = ScriptedLLM([
        say("Nice to meet you!"),
        call("memory_store", {"content": "User is allergic to peanuts", "tags": "health", "keywords": "peanuts"}),
        say("Noted."),
    ])
    mem = claw_memory.open(ROOT, llm=llm, extraction_llm=xllm)
    notes = []
    agent = Agent(llm, mem.providers(), mem.hooks(), mem.tools(), "You are a device test.",
                  publish=notes.append)
    sid = mem.chats.session_id("devtest", "board")
    for text in ("Hi, I moved to Lisbon.", "Remember that I am allergic to peanuts."):
        reply = await agent.run(Request(text, sid, "devtest", "board"))
        print("reply:", reply)
    mem.close()
    print("notes:", notes)
    assert notes == ["\U0001f99e [Round 1] Memory update: [city]", "\U0001f99e [Round 2] Memory update: [health]"], notes
    print("DEVTEST PASS conversation")


asyncio.run(main())
