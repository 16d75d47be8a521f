"""The whole stack under CPython with the real aiohttp clients against the loopback server:
the agent loop with memory tools, and background extraction, for both backends."""

import asyncio
import json

import pytest

import claw_memory
from claw_memory.agent import Agent
from claw_memory.core import Request
from claw_memory.llm import Anthropic, OpenAI

from llm_server import LLMServer

SID = "chat:web:local:default_01"


def _client(kind, srv, timeout=5):
    if kind == "openai":
        return OpenAI(base_url=srv.openai_url, model="test-model", api_key="k", timeout=timeout)
    return Anthropic(base_url=srv.anthropic_url, model="test-model", api_key="k", timeout=timeout)


@pytest.mark.parametrize("kind", ["openai", "anthropic"])
def test_agent_turns_with_memory_tools(tmp_path, kind):
    async def main(srv):
        llm = _client(kind, srv)
        mem = claw_memory.open(str(tmp_path), llm=llm, extract=False)
        published = []
        agent = Agent(llm, mem.providers(), mem.hooks(), mem.tools(), "system", publish=published.append)
        srv.reply("", tool_calls=[("memory_store", {"content": "User plays the cello", "tags": "music"})])
        srv.reply("I will remember the cello.")
        out = await agent.run(Request("Remember: I play the cello", SID, "web", "local"))
        assert out == "I will remember the cello."
        assert published == ["\U0001f99e [Round 2] Memory update: [music]"]
        srv.reply("", tool_calls=[("memory_recall", {"summary_labels": ["music"]})])
        srv.reply("You play the cello.")
        out = await agent.run(Request("What instrument do I play?", SID, "web", "local"))
        assert out == "You play the cello."
        mem.close()
        return mem

    with LLMServer() as srv:
        asyncio.run(main(srv))
    # The third request carried the whole first turn as history, in the wire format.
    body = srv.requests[2].body
    roles = [m["role"] for m in body["messages"]]
    if kind == "openai":
        assert roles == ["system", "user", "assistant", "tool", "assistant", "user"]
        assert body["messages"][3]["content"].startswith('{"ok":true,"action":"memory_store"')
    else:
        assert roles == ["user", "assistant", "user", "assistant", "user"]
        assert body["messages"][2]["content"][0]["type"] == "tool_result"
        assert "Long-term Memory" in body["system"]
    recalled = srv.requests[3].body["messages"][-1]
    text = recalled["content"] if kind == "openai" else recalled["content"][0]["content"]
    assert json.loads(text)["items"][0]["content"] == "User plays the cello"
    # On disk: ESP-Claw's pair with the backend format of each record.
    fmt = 1 if kind == "openai" else 2
    mem2 = claw_memory.open(str(tmp_path))
    raw = (tmp_path / "sessions" / mem2.sessions.path(SID).rsplit("/", 1)[1]).with_suffix(".log.idx").read_bytes()
    formats = [raw[8 + 10 * i + 9] for i in range((len(raw) - 8) // 10)]
    assert formats == [fmt] * 8
    assert [m["role"] for m in mem2.sessions.messages(SID, kind)] == [
        "user", "assistant", "tool", "assistant"] * 2


@pytest.mark.parametrize("kind", ["openai", "anthropic"])
def test_extraction_through_the_real_client(tmp_path, kind):
    async def main(srv):
        llm = _client(kind, srv)
        mem = claw_memory.open(str(tmp_path), extraction_llm=llm)
        answer = json.dumps({"intent": "none", "memories": [
            {"content": "User is learning Japanese", "tags": ["language"], "keywords": ["Japanese"]}]})
        srv.reply("Here you go:\n" + answer)
        req = Request("I started learning Japanese this spring", SID, "web", "local")
        mem.hooks().on_request_start(req)
        note = await mem.hooks().stage_note(req)
        srv.error(500, "overloaded")
        req2 = Request("I also like tennis", SID, "web", "local")
        mem.hooks().on_request_start(req2)
        note2 = await mem.hooks().stage_note(req2)
        srv.delay(2.0, text=answer)
        mem._hooks.wait = 0.2
        req3 = Request("Slow one", SID, "web", "local")
        mem.hooks().on_request_start(req3)
        note3 = await mem.hooks().stage_note(req3)
        stats = dict(mem.extraction.stats)
        items = list(mem.store.list())
        mem.close()
        return note, note2, note3, stats, items

    with LLMServer() as srv:
        note, note2, note3, stats, items = asyncio.run(main(srv))
    assert note == "Memory update: [language]"
    assert note2 is None and note3 is None
    assert stats["errors"] == 1 and stats["timeouts"] == 1
    assert [i["content"] for i in items] == ["User is learning Japanese"]
    first = srv.requests[0].body
    # the host's clock is set: the message starts with the day (docs/CONTRACT.md, the extraction call)
    head, rest = first["messages"][-1]["content"].split("\n", 1)
    assert head.startswith("Today: ") and rest.startswith("Existing summary labels:\n- (empty)\n")
    assert "tools" not in first
