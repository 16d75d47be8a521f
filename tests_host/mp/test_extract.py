# Background extraction: stores, dedupes, replaces, ignores forget, yields to manual writes,
# survives garbage, a full queue, an LLM error and a timeout.
import asyncio
import json

from flashsim import mount
from mptest import eq, ok
from scripted_llm import ScriptedLLM, call, say

import claw_memory
from claw_memory import extract
from claw_memory.agent import Agent
from claw_memory.core import Request
from claw_memory.reply import LLMError
from claw_memory import fsutil

HEAP = "8M"
SID = "chat:web:local:default_01"


def _answer(intent="none", *mems):
    return say(json.dumps({"intent": intent, "memories": [
        {"content": c, "tags": t, "keywords": k} for c, t, k in mems]}))


def _open(xllm, **kw):
    dev = mount("lfs2", "/flash", blocks=256)
    return dev, claw_memory.open("/flash", extraction_llm=xllm, **kw)


async def _request(mem, text):
    r = Request(text, SID, "web", "local")
    mem.hooks().on_request_start(r)
    note = await mem.hooks().stage_note(r)
    return r, note


async def test_stores_and_reports_labels():
    x = ScriptedLLM([_answer("none", ("User lives in Lisbon", ["city"], ["Lisbon"]))])
    dev, mem = _open(x, clock=lambda: 946684800)  # a clock never set: the prompt as it always was
    r, note = await _request(mem, "I moved to Lisbon last year")
    eq(note, "Memory update: [city]", "label reported")
    it = list(mem.store.list())[0]
    eq((it["content"], it["source"], it["keywords"]), ("User lives in Lisbon", "auto_llm", "Lisbon,city"), "stored")
    call0 = x.calls[0]
    eq(call0["system"], extract.SYSTEM_PROMPT, "system prompt")
    eq(call0["messages"], [{"role": "user", "content": "Existing summary labels:\n- (empty)\n\n"
                            "Current user message:\nI moved to Lisbon last year\n"}], "user prompt")
    eq(call0["tools"], [], "no tools")
    # The same fact again: deduplicated, nothing reported.
    x.add(_answer("none", ("user lives in LISBON", ["city"], [])))
    r, note = await _request(mem, "Lisbon is home")
    eq((note, len(list(mem.store.list()))), (None, 1), "duplicate")
    ok("- city\n" in x.calls[1]["messages"][0]["content"], "catalog in the prompt")
    for rule in ("intent", "forget", "replace", "At most 3", "persona", "Questions"):
        ok(rule in extract.SYSTEM_PROMPT, "prompt covers %s" % rule)
    dev.unmount()


async def test_replace_forgets_conflicts_and_forget_stores_nothing():
    x = ScriptedLLM([_answer("none", ("User lives in Lisbon", ["city"], ["Lisbon"])),
                     _answer("replace", ("User lives in Porto", ["city"], ["Porto"])),
                     _answer("forget", ("User lives nowhere", ["city"], []))])
    dev, mem = _open(x)
    await _request(mem, "I live in Lisbon")
    r, note = await _request(mem, "Actually I moved to Porto")
    eq(note, "Memory update: [city]", "replacement reported")
    eq([i["content"] for i in list(mem.store.list())], ["User lives in Porto"], "old city forgotten")
    r, note = await _request(mem, "Forget where I live")
    eq((note, [i["content"] for i in list(mem.store.list())]), (None, ["User lives in Porto"]), "forget: nothing stored")
    dev.unmount()


async def test_a_result_is_one_append_and_its_facts_do_not_replace_each_other():
    x = ScriptedLLM([_answer("replace", ("User lives in Porto", ["city"], []),
                             ("User works in the old town of Porto", ["city", "work"], []),
                             ("User has a dog", ["pets"], []))])
    dev, mem = _open(x)
    mem.store.store("User lives in Lisbon", "city")
    appends = []
    append = fsutil.append

    def count(path, data):
        if path == mem.store.records_path:
            appends.append(data.count(b"\n"))
        return append(path, data)

    fsutil.append = count  # the store's write path looks it up at each call
    try:
        r, note = await _request(mem, "I moved to Porto, I work in its old town, and I have a dog")
    finally:
        fsutil.append = append
    eq(appends, [4], "three facts and the forgotten Lisbon: one append of four lines")
    eq(note, "Memory update: [city;work;pets]", "labels of the three facts")
    eq(sorted(i["content"] for i in mem.store.list()),
       ["User has a dog", "User lives in Porto", "User works in the old town of Porto"],
       "the contradicted item forgotten, never a fact of the same result")
    eq(mem.extraction.stats["stored"], 3, "three stored")
    dev.unmount()


async def test_manual_write_discards_the_extraction():
    x = ScriptedLLM([_answer("none", ("User likes opera", ["music"], []))])
    dev, mem = _open(x)
    llm = ScriptedLLM([call("memory_store", {"content": "User loves opera by Verdi", "tags": "music"}), say("ok")])
    published = []
    agent = Agent(llm, mem.providers(), mem.hooks(), mem.tools(), publish=published.append)
    await agent.run(Request("remember I love Verdi operas", SID, "web", "local"))
    eq([i["content"] for i in list(mem.store.list())], ["User loves opera by Verdi"], "only the manual write")
    eq(mem.extraction.stats["discarded"], 1, "extraction discarded")
    eq(published, ["\U0001f99e [Round 2] Memory update: [music]"], "note from the manual write")
    dev.unmount()


async def test_garbage_and_odd_answers():
    x = ScriptedLLM([
        say("I think the user likes things."),
        say('Sure! Here it is: {"intent":"none","memories":[{"content":"User owns a bike","tags":"bike"}]} Hope that helps.'),
        say('[{"content":"User speaks Dutch","tags":["language"]}]'),
        say('{"intent":"none","memories":"not a list"}'),
        say('{"memories":[{"content":""},{"content":42},{"content":"User is 30","summary_labels":["age"]},'
            '{"content":"A fourth is never read","tags":"x"}]}'),
        say(""),
    ])
    logged = []
    dev, mem = _open(x, log=logged.append)
    notes = []
    for t in ("a", "b", "c", "d", "e", "f"):
        notes.append((await _request(mem, "message " + t))[1])
    eq(notes, [None, "Memory update: [bike]", "Memory update: [language]", None, "Memory update: [age]", None],
       "garbage skipped, prose and arrays parsed")
    eq(mem.extraction.stats["garbage"], 2, "garbage counted")
    hint = [m for m in logged if "not JSON" in m]
    ok(hint and all('{"intent":"none","memories":[...]}' in m and "docs/CONTRACT.md" in m for m in hint),
       "the log says what the extraction call must answer: %r" % (hint,))
    eq(sorted(i["content"] for i in list(mem.store.list())), ["User is 30", "User owns a bike", "User speaks Dutch"],
       "only real facts")
    dev.unmount()


async def test_llm_error_is_counted_and_a_full_queue_skips_extraction():
    x = ScriptedLLM([LLMError("HTTP 500", "http", 500)])
    dev, mem = _open(x)
    r, note = await _request(mem, "I like cats")
    eq((note, mem.extraction.stats["errors"], list(mem.store.list())), (None, 1, []), "LLM error: counted, nothing stored")
    # Full queue: 4 waiting jobs, the 5th request goes on without extraction.
    ex = mem.extraction
    reqs = [Request("fact %d" % n, SID) for n in range(5)]
    started = [ex.start(r) for r in reqs]
    eq(started, [True, True, True, True, False], "depth 4")
    eq(ex.stats["queue_full"], 1, "counted")
    dev.unmount()


async def test_a_failure_reporting_a_failed_extraction_does_not_stop_the_next_ones():
    # The first extraction fails and so does its log line (a full flash, a MemoryError): that
    # job is over, and the requests after it get their extraction as before.
    x = ScriptedLLM([LLMError("HTTP 500", "http", 500),
                     _answer("none", ("User lives in Lisbon", ["city"], []))])
    fail = [1]

    def log(msg):
        if fail[0]:
            fail[0] -= 1
            raise OSError(28, "ENOSPC")

    dev, mem = _open(x, log=log, stage_note_wait=5)
    r, note = await _request(mem, "hi")
    eq(note, None, "the failed one: no note")
    r, note = await _request(mem, "I moved to Lisbon")
    eq([it["content"] for it in mem.store.list()], ["User lives in Lisbon"], "the next one stored")
    eq(mem.extraction.stats["timeouts"], 0, "nothing waited in vain")
    dev.unmount()


class SlowLLM:
    backend = "openai"

    def __init__(self, delay, answer):
        self.delay = delay
        self.answer = answer

    async def chat(self, system, messages, tools=None):
        await asyncio.sleep(self.delay)
        return self.answer


async def test_stage_note_waits_a_bounded_time():
    dev, mem = _open(SlowLLM(0.5, _answer("none", ("User likes slow jazz", ["music"], []))), stage_note_wait=0.1)
    r, note = await _request(mem, "I like slow jazz")
    eq(note, None, "not ready in time: no note, no wait forever")
    eq(mem.extraction.stats["timeouts"], 1, "counted")
    await asyncio.sleep(0.6)
    eq(list(mem.store.list()), [], "a late answer is never applied")
    eq(await mem.hooks().stage_note(r), None, "asking again finds no job")
    eq(list(mem.store.list()), [], "still nothing applied")
    dev.unmount()
    dev, mem = _open(SlowLLM(0.05, _answer("none", ("User likes slow jazz", ["music"], []))), stage_note_wait=2)
    r, note = await _request(mem, "I like slow jazz")
    eq(note, "Memory update: [music]", "waited for a slow but timely answer")
    dev.unmount()


async def test_unclaimed_answers_are_swept():
    x = ScriptedLLM([_answer("none", ("User likes kites", ["hobby"], []))] * 3)
    dev, mem = _open(x)
    ex = mem.extraction
    ex.sweep_ms = 0
    ex.start(Request("I fly kites", SID, request_id=9001))
    await asyncio.sleep(0.05)
    ex.start(Request("other", SID, request_id=9002))  # sweeps the finished, unclaimed job
    eq(ex.stats["dropped"], 1, "dropped")
    eq(await ex.take(Request("x", SID, request_id=9001), 1), None, "gone")
    dev.unmount()


def _kites_under_way():
    # "User likes kites" stored, and a request whose extraction will answer it again
    x = ScriptedLLM([_answer("none", ("User likes kites", ["hobby"], []))])
    dev, mem = _open(x)
    it, _ = mem.store.store("User likes kites", "hobby")
    r = Request("I like kites", SID, "web", "local")
    mem.hooks().on_request_start(r)
    return dev, mem, it, r, {t.name: t for t in mem.tools()}


async def test_a_fact_forgotten_meanwhile_is_not_stored_again():
    dev, mem, it, r, tools = _kites_under_way()
    await tools["memory_forget"].handler(json.dumps({"memory_id": it["id"]}), Request("forget kites", "other"))
    note = await mem.hooks().stage_note(r)
    eq((note, list(mem.store.list())), (None, []), "not resurrected")
    dev.unmount()


async def test_a_forget_failing_anywhere_says_what_happened_and_nothing_comes_back():
    # A MemoryError at each call of item.norm during memory_forget (the forgotten mark, the
    # store's own): the tool's answer matches the store, and a forgotten fact is not stored
    # again by an answer under way.
    from claw_memory import item

    real = item.norm
    for fail_at in range(1, 6):
        dev, mem, it, r, tools = _kites_under_way()
        calls = [0]

        def norm(text, calls=calls, fail_at=fail_at):
            calls[0] += 1
            if calls[0] == fail_at:
                raise MemoryError("injected")
            return real(text)

        item.norm = norm
        try:
            done, _ = await tools["memory_forget"].handler(json.dumps({"memory_id": it["id"]}),
                                                           Request("forget kites", "other"))
        finally:
            item.norm = real
        gone = mem.store.get(it["id"]) is None
        eq(done, gone, "failing at call %d: the tool says what happened" % fail_at)
        await mem.hooks().stage_note(r)
        if gone:
            eq(list(mem.store.list()), [], "failing at call %d: not stored again" % fail_at)
        dev.unmount()


async def test_a_storage_error_while_applying_keeps_the_answer():
    x = ScriptedLLM([_answer("none", ("User likes figs", ["fruit"], []))])
    dev, mem = _open(x)

    def broken(*a, **k):
        raise OSError(5, "flash error")

    mem.store.batch = broken  # the one write path of an extraction result
    llm = ScriptedLLM([say("Figs are great.")])
    out = await Agent(llm, mem.providers(), mem.hooks(), mem.tools()).run(Request("I like figs", SID, "web", "local"))
    eq(out, "Figs are great.", "the answer is not replaced by an apology")
    eq(mem.sessions.messages(SID)[-1]["content"], "Figs are great.", "and it is persisted")
    dev.unmount()
