"""The system prompt is byte for byte what it was before issue 27 (the date, undo, provenance,
expiry and incognito sessions) when the board's clock is not set, and when the date is turned
off (`date=False`) with a set clock: the hashes below are of the prompts the code without it
gives for this scenario (a profile with a time zone line, two memories, one recalled
automatically): first taken at c2cd8d4, then at a6f6559 (history search, issue 26, added its
skill text and the memory_search tool before issue 27 was merged). With the clock set and the date on, the prompt is that one plus the
Current Date section."""

import asyncio
import hashlib
import time

import pytest

import claw_memory
from claw_memory.agent import Agent
from claw_memory.core import Request
from claw_memory.reply import Reply

UNSET = 946688400  # 2000-01-01 01:00 UTC: a board before NTP
SET = 1797033600  # 2026-12-12 00:00 UTC
BEFORE = {UNSET: ("da28464a31f7056b165ece15917e18f3be28b2d78f8996372b95bd697c409be4", 4366),
          SET: ("1b4493eb19ca009b6b33af8424eaf91047dd85486e9db0c9ca3301d327b3b2d9", 4376)}


class _LLM:
    backend = "openai"

    def __init__(self):
        self.systems = []

    async def chat(self, system, messages, tools=None):
        self.systems.append(system)
        return Reply.answer("openai", "ok")


def _prompt(root, clock, **kw):
    mem = claw_memory.open(str(root), clock=lambda: clock, extract=False, **kw)
    mem.profile.write("user", "# User\n\nName: Ada\nTime zone: Europe/Lisbon (UTC+0)\n")
    mem.store.store("User likes jasmine tea", "drink", "tea")
    mem.store.store("User lives in Porto", "city")
    llm = _LLM()
    agent = Agent(llm, mem.providers(), mem.hooks(), mem.tools(), "You are Pip.")
    sid = mem.chats.session_id("uart", "console")
    asyncio.run(agent.run(Request("what tea do I like?", sid, "uart", "console")))
    return llm.systems[0]


@pytest.fixture(autouse=True)
def _utc(monkeypatch):
    # the automatically recalled memories are dated in local time, as when the hashes were taken
    time.tzset()
    yield
    monkeypatch.undo()
    time.tzset()


def _digest(s):
    return hashlib.sha256(s.encode()).hexdigest(), len(s)


def test_without_a_set_clock_the_prompt_is_as_before(tmp_path):
    assert _digest(_prompt(tmp_path / "a", UNSET)) == BEFORE[UNSET]


def test_with_the_date_off_the_prompt_is_as_before(tmp_path):
    assert _digest(_prompt(tmp_path / "a", SET, date=False)) == BEFORE[SET]


def test_with_a_set_clock_the_date_is_the_one_section_added(tmp_path):
    dated = _prompt(tmp_path / "a", SET)
    section = ("\n\n## Current Date\nToday is Saturday, 2026-12-12 (time zone: Europe/Lisbon (UTC+0)). "
               "Write dates as dates (2026-12-24), never as \"tomorrow\" or \"next Friday\".")
    assert section in dated
    assert _digest(dated.replace(section, "")) == BEFORE[SET]
