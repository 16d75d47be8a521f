# The memory wired into the reference agent loop, end to end under the unix port with a
# scripted LLM: history across a reboot, blocking, lite mode, failures, profile, providers.
import json
import os

from flashsim import mount
from mptest import eq, ok, raises
from scripted_llm import ScriptedLLM, call, say

import claw_memory
from claw_memory import fsutil
from claw_memory.agent import STAGE_PREFIX, Agent
from claw_memory.core import Request
from claw_memory.reply import LLMError, Reply
from claw_memory.providers import LONG_TERM_PREAMBLE
from claw_memory.session import BLOCK_TEXT

HEAP = "8M"
SID = "chat:web:local:default_01"


def _agent(mem, llm, published=None, **kw):
    return Agent(llm, mem.providers(), mem.hooks(), mem.tools(), "You are a helpful agent.",
                 publish=published.append if published is not None else None, **kw)


def _req(text, sid=SID):
    return Request(text, sid, channel="web", chat_id="local")


def _tea_llm():
    # a tool round that stores a fact, then the answer
    return ScriptedLLM([
        call("memory_store", {"content": "User likes jasmine tea", "tags": "drink", "keywords": "tea"}),
        say("Noted: jasmine tea."),
    ])


async def test_conversation_with_tools_survives_a_reboot():
    dev = mount("lfs2", "/flash", blocks=256)
    published = []
    llm = _tea_llm()
    mem = claw_memory.open("/flash", llm=None)
    out = await _agent(mem, llm, published).run(_req("Please remember that I like jasmine tea"))
    eq(out, "Noted: jasmine tea.", "final answer")
    eq(published, [STAGE_PREFIX % (2, "Memory update: [drink]")], "stage note published")
    ok(published[0].startswith("\U0001f99e [Round 2] "), "lobster prefix")
    first = llm.calls[0]
    ok("## Long-term Memory\n" + LONG_TERM_PREAMBLE + "- (empty)" in first["system"], "empty catalog")
    ok("## Editable Profile Memory\nUser Profile (memory/user.md):" in first["system"], "profile, its path inside the data root")
    ok("## Core Request\nsource_channel: web" in first["system"], "request section")
    eq(first["messages"], [{"role": "user", "content": "Please remember that I like jasmine tea"}],
       "the persisted user message comes from the history provider, once")
    eq(first["tools"], ["memory_store", "memory_recall", "memory_list", "memory_update",
                        "memory_forget", "memory_undo", "profile_read", "profile_update", "memory_search"], "tools")
    second = llm.calls[1]
    eq([m["role"] for m in second["messages"]], ["user", "assistant", "tool"], "tool round in context")
    ok('"ok":true' in second["messages"][2]["content"], "tool result")
    mem.close()
    dev = dev.reboot()
    mem = claw_memory.open("/flash")
    llm2 = ScriptedLLM([call("memory_recall", {"summary_labels": ["drink"]}), say("You like jasmine tea.")])
    out = await _agent(mem, llm2).run(_req("What do I like to drink?"))
    eq(out, "You like jasmine tea.", "answer after the reboot")
    hist = llm2.calls[0]["messages"]
    eq([m["role"] for m in hist], ["user", "assistant", "tool", "assistant", "user"], "history replayed")
    eq(hist[3]["content"], "Noted: jasmine tea.", "previous final answer")
    ok("- drink\n" in llm2.calls[0]["system"], "catalog lists the label")
    recalled = json.loads(llm2.calls[1]["messages"][-1]["content"])
    eq(recalled["items"][0]["content"], "User likes jasmine tea", "recall through the tool")
    eq(len(mem.sessions.messages(SID)), 8, "both turns kept")
    mem.close()
    dev.unmount()


async def test_blocked_session_is_refused_with_the_text():
    dev = mount("lfs2", "/flash", blocks=256)
    mem = claw_memory.open("/flash", session_limit=1500)
    llm = ScriptedLLM([say("x" * 2000)])
    published = []
    await _agent(mem, llm, published).run(_req("fill it up"))
    eq(published, [BLOCK_TEXT], "block warning published when the session blocks")
    ok(mem.sessions.blocked(SID), "blocked")
    before = mem.sessions.stat(SID)
    llm2 = ScriptedLLM([say("never")])
    out = await _agent(mem, llm2).run(_req("hello?"))
    eq(out, BLOCK_TEXT, "refused with the text")
    eq(llm2.calls, [], "no LLM call")
    eq(mem.sessions.stat(SID), before, "nothing persisted")
    out = await _agent(mem, ScriptedLLM(["fine"])).run(Request("no session"))
    eq(out, "fine", "no session id: allowed")
    dev.unmount()


async def test_lite_mode_injects_memory_md():
    dev = mount("lfs2", "/flash", blocks=256)
    fsutil.makedirs("/flash/memory")
    with open("/flash/memory/MEMORY.md", "w") as f:
        f.write("# Long-term Memory\n\n- The user is vegetarian.\n")
    mem = claw_memory.open("/flash", mode="lite")
    llm = ScriptedLLM([say("Vegetarian dishes coming up.")])
    await _agent(mem, llm).run(_req("dinner ideas?"))
    system = llm.calls[0]["system"]
    ok("## Long-term Memory\n### Long-term Memory\n\n- The user is vegetarian." in system,
       "MEMORY.md whole, its heading nested under the section's")
    eq(llm.calls[0]["tools"], ["profile_read", "profile_update", "memory_search"],
       "no long-term memory tools in lite mode; history search")
    eq(mem.hooks().stage_note, None, "no stage note in lite mode")
    ok(mem.store is None, "no store")
    with open("/flash/memory/MEMORY.md") as f:
        ok("vegetarian" in f.read(), "MEMORY.md untouched")
    dev.unmount()


async def test_a_lite_root_is_not_opened_full_over_the_users_notes():
    # FULL's store renders MEMORY.md at its first write: the notes of a LITE root were gone
    # after a default open() and one store; it is refused, the notes kept, LITE still opens
    dev = mount("lfs2", "/flash", blocks=256)
    lite = claw_memory.open("/flash", mode="lite")
    with open(lite.md_path(), "w") as f:
        f.write("# Long-term Memory\n\n- Ada is allergic to penicillin.\n")
    lite.close()
    for kw in ({}, {"mode": "full"}, {"create": False}):
        raises(ValueError, claw_memory.open, "/flash", extract=False, **kw)
    with open("/flash/memory/MEMORY.md") as f:
        ok("penicillin" in f.read(), "the notes kept")
    eq(sorted(os.listdir("/flash/memory")), ["MEMORY.md", "identity.md", "soul.md", "user.md"],
       "no store file made")
    ok("penicillin" in claw_memory.open("/flash", mode="lite").providers()[1].collect(_req("x")),
       "LITE as before")
    dev.unmount()


async def test_lite_mode_after_a_full_run_without_close_reads_a_fresh_memory_md():
    dev = mount("lfs2", "/flash", blocks=256)
    full = claw_memory.open("/flash", extract=False)
    a, _ = full.store.store("The user is vegetarian", "diet")
    full.close()  # MEMORY.md has the item
    full = claw_memory.open("/flash", extract=False)
    full.store.update(a["id"], content="The user is vegan now")
    full.store.store("The user lives in Porto", "city")
    dev = dev.reboot()  # no close(): MEMORY.md still says vegetarian
    lite = claw_memory.open("/flash", mode="lite")
    body = lite.providers()[1].collect(_req("x"))
    ok("The user is vegan now" in body and "The user lives in Porto" in body, "fresh: %r" % body)
    ok("vegetarian" not in body, "the old text is not injected")
    with open("/flash/memory/MEMORY.md", "a") as f:
        f.write("- A note the user added by hand.\n")
    ok("added by hand" in lite.providers()[1].collect(_req("x")), "a fresh MEMORY.md is left alone")
    dev.unmount()


async def test_a_failing_turn_leaves_the_failure_note():
    dev = mount("lfs2", "/flash", blocks=256)
    mem = claw_memory.open("/flash")
    llm = ScriptedLLM([call("memory_list", {}), LLMError("HTTP 500: upstream down", "http", 500)])
    out = await _agent(mem, llm).run(_req("list my memories"))
    ok(out.startswith("Sorry") and "upstream down" in out, "error reply")
    msgs = mem.sessions.messages(SID)
    eq(msgs[-1]["content"], "Session note: the previous request failed before producing a final "
       "answer.\nReason: HTTP 500: upstream down\nTools called before the failure: memory_list",
       "failure note with tool summary")
    # Too many tool rounds is a failure too.
    loop = ScriptedLLM([call("memory_list", {}, call_id="c%d" % n) for n in range(5)])
    out = await _agent(mem, loop, max_iterations=3).run(_req("loop"))
    ok("no final answer after 3" in out, "iteration limit")
    ok(mem.sessions.messages(SID)[-1]["content"].startswith("Session note:"), "noted")
    dev.unmount()


async def test_mid_run_user_messages_are_injected_and_persisted():
    dev = mount("lfs2", "/flash", blocks=256)
    mem = claw_memory.open("/flash")
    agent = None

    def during_tool(system, messages, tools):
        agent.inject("also: make it quick")
        return call("memory_list", {})

    llm = ScriptedLLM([during_tool, say("Quick answer.")])
    agent = _agent(mem, llm)
    await agent.run(_req("slow question"))
    eq(llm.calls[1]["messages"][-1], {"role": "user", "content": "also: make it quick"}, "injected")
    roles = [m["role"] for m in mem.sessions.messages(SID)]
    eq(roles, ["user", "assistant", "tool", "user", "assistant"], "persisted as a user record")
    for n in range(4):
        ok(agent.inject("m%d" % n), "room for 4")
    ok(not agent.inject("fifth"), "fifth refused")
    dev.unmount()


async def test_unknown_tool_bad_arguments_and_raising_tool():
    dev = mount("lfs2", "/flash", blocks=256)
    mem = claw_memory.open("/flash")
    llm = ScriptedLLM([call("no_such_tool", {}), call("memory_store", "{not json"), say("done")])
    await _agent(mem, llm).run(_req("x"))
    res = [m for m in llm.calls[2]["messages"] if m["role"] == "tool"]
    eq([(json.loads(m["content"])["error"], m["is_error"]) for m in res],
       [("unknown_tool", True), ("invalid_json", True)], "errors reported to the model")
    dev.unmount()


async def test_provider_errors_never_fail_the_request():
    dev = mount("lfs2", "/flash", blocks=256)
    logs = []
    mem = claw_memory.open("/flash", log=logs.append)

    def boom():
        raise OSError(5, "flash read error")

    mem.store.catalog_text = boom
    llm = ScriptedLLM([say("still answering")])
    out = await _agent(mem, llm).run(_req("hi"))
    eq(out, "still answering", "request succeeded")
    ok("## Long-term Memory" not in llm.calls[0]["system"], "provider skipped")
    ok(any("Long-term Memory failed" in l for l in logs), "logged")
    dev.unmount()


async def test_persist_failure_does_not_stop_the_answer():
    dev = mount("lfs2", "/flash", blocks=256)
    mem = claw_memory.open("/flash")
    dev.cut_power(after=0)  # every write fails from now on
    llm = ScriptedLLM([say("answer anyway")])
    out = await _agent(mem, llm).run(_req("hello"))
    eq(out, "answer anyway", "answered")
    eq(llm.calls[0]["messages"], [{"role": "user", "content": "hello"}], "user message sent directly")
    dev.unmount()


def test_profile_defaults_seed_and_bounds():
    dev = mount("lfs2", "/flash", blocks=256)
    os.mkdir("/flash/seed")
    with open("/flash/seed/soul.md", "w") as f:
        f.write("# Soul\n\nI am Claw, a small careful agent.\n")
    mem = claw_memory.open("/flash", seed_dir="/flash/seed")
    p = mem.profile.read()
    eq(p["soul"], "# Soul\n\nI am Claw, a small careful agent.\n", "copied from the seed")
    eq(p["identity"], "# Identity Card\n\n- Name:\n- Role:\n- Personality:\n- Strengths:\n", "default")
    ok(p["user"].startswith("# User\n"), "default user.md")
    with open("/flash/memory/user.md", "w") as f:
        f.write("# User\n\nName: Ada\n")
    mem2 = claw_memory.open("/flash", seed_dir="/flash/seed")
    eq(mem2.profile.read("user"), "# User\n\nName: Ada\n", "never overwritten")
    with open("/flash/memory/identity.md", "wb") as f:
        f.write(b"x" * 20000 + b"\xe4\xbd")
    ok(len(mem2.profile.read("identity")) == 8192, "read bounded")
    raises(ValueError, mem2.profile.read, "../etc")
    eq(mem2.profile.write("user", "# User\n\nName: Ada Lovelace\n"), True, "written")
    eq(mem2.profile.write("user", "# User\n\nName: Ada Lovelace\n"), False, "unchanged")
    raises(ValueError, mem2.profile.write, "user", "   ")
    raises(ValueError, mem2.profile.write, "soul", "x" * 9000)
    dev.unmount()


def test_providers_content():
    dev = mount("lfs2", "/flash", blocks=256)
    mem = claw_memory.open("/flash")
    provs = {p.name: p for p in mem.providers()}
    eq([p.name for p in mem.providers()],
       ["Editable Profile Memory", "Long-term Memory", "Session History", "Memory Skills", "Current Date"],
       "ESP-Claw's order plus skills, then the date")
    for name in ("user", "soul", "identity"):
        with open(mem.profile.path(name), "w") as f:
            f.write("  \n")
    r = _req("x")
    eq(provs["Editable Profile Memory"].collect(r), None, "all empty: skipped")
    with open(mem.profile.path("soul"), "w") as f:
        f.write("\n# Soul\nKind.\n\n")
    eq(provs["Editable Profile Memory"].collect(r), "Agent Soul (memory/soul.md):\n### Soul\nKind.\n\n",
       "title, path, trimmed text")
    mem.store.store("User likes chess", "games")
    ok(provs["Long-term Memory"].collect(r).endswith("Summary label catalog:\n- games\n"), "catalog")
    eq(provs["Session History"].collect(r), None, "no history yet")
    eq(provs["Session History"].collect(Request("x")), None, "no session id")
    ok("memory_recall" in provs["Memory Skills"].collect(r), "skills text")
    eq(set(mem.skills()), {"memory_ops", "profile_memory_ops", "history_search"}, "skills")
    dev.unmount()


async def test_hooks_directly():
    dev = mount("lfs2", "/flash", blocks=256)
    mem = claw_memory.open("/flash")
    h = mem.hooks()
    eq(h.request_gate(Request("x")), None, "no session id: allow")
    eq(h.request_gate(_req("x")), None, "unblocked: allow")
    eq(h.persist(Request("x"), [(1, None, "kept nowhere")], False), None, "no session: nothing")
    eq(os.listdir("/flash/sessions"), [], "nothing written")
    r = _req("x")
    eq(await h.stage_note(r), None, "no labels: no note")
    eq(await h.stage_note(Request("x")), None, "no session: no note")
    mem._hooks.note_labels(SID, ["a", "b"])
    mem._hooks.note_labels(SID, "b\nc")
    eq(await h.stage_note(r), "Memory update: [a;b;c]", "merged labels")
    eq(await h.stage_note(r), None, "taken once")
    dev.unmount()


class _Offline:
    """An offline stand-in written with core's builders, as the README's TinyLLM."""

    def __init__(self, backend):
        self.backend = backend

    async def chat(self, system, messages, tools=None):
        last = messages[-1]
        if tools is None:  # the extraction call: the JSON document it asks for
            return Reply.answer(self.backend, '{"intent":"none","memories":[]}')
        if last["role"] == "user":
            return Reply.calls(self.backend, [("memory_store", {"content": last["content"], "tags": "drink"})])
        return Reply.answer(self.backend, "Noted.")


async def test_an_offline_llm_from_core_builders_needs_no_llm_package():
    import sys

    dev = mount("lfs2", "/flash", blocks=256)
    for n, backend in enumerate(("openai", "anthropic", "openai_responses")):
        root = "/flash/r%d" % n
        logged = []
        llm = _Offline(backend)
        mem = claw_memory.open(root, llm=llm, log=logged.append)
        published = []
        out = await _agent(mem, llm, published).run(_req("I like jasmine tea"))
        eq(out, "Noted.", backend + ": final answer")
        eq(published, [STAGE_PREFIX % (2, "Memory update: [drink]")], backend + ": stage note")
        ok(not [m for m in logged if "extraction answer" in m], backend + ": extraction understood")
        eq(mem.extraction.stats["garbage"], 0, backend + ": no garbage answer")
        mem.close()
        mem = claw_memory.open(root)
        hist = mem.sessions.messages(SID, backend)
        eq([m["role"] for m in hist], ["user", "assistant", "tool", "assistant"], backend + ": replayed")
        eq([i["content"] for i in mem.store.list()], ["I like jasmine tea"], backend + ": stored")
        mem.close()
    loaded = [m for m in sys.modules if m.startswith("claw_memory.llm") or m.startswith("aiohttp")]
    eq(loaded, [], "nothing of the aiohttp piece was imported")
    dev.unmount()


async def test_a_publish_that_fails_does_not_undo_the_answer():
    # The stage note's channel fails (a closed socket): the answer is still the answer, saved
    # once in the history, and the failure is noted.
    dev = mount("lfs2", "/flash", blocks=256)
    notes = []
    mem = claw_memory.open("/flash", llm=None)

    def publish(text):
        raise OSError(104, "ECONNRESET")

    agent = Agent(_tea_llm(), mem.providers(), mem.hooks(), mem.tools(), "You are a helpful agent.",
                  publish=publish, log=notes.append)
    out = await agent.run(_req("Please remember that I like jasmine tea"))
    eq(out, "Noted: jasmine tea.", "the answer")
    eq([m["content"] for m in mem.sessions.messages(SID) if m["role"] == "assistant" and m.get("content")],
       ["Noted: jasmine tea."], "saved once, no failure note")
    ok(any("publish failed" in n for n in notes), "the failure noted")
    dev.unmount()
