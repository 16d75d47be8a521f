# Incognito sessions (issue 27): `/session new --incognito NAME` starts a session whose history
# lives in RAM only, within the token budget: the simulated flash programs and erases nothing
# from its start to its end (its own command included), also when the user asks it to
# remember something or to change the profile; no extraction; long-term memory is still read
# (automatic recall, memory_recall, memory_list); `/session list` marks it; a switch or a
# reboot ends it and the chat is back on its session, which never saw a byte of it.
import json

from flashsim import mount, tree
from mptest import Clock, eq, ok, raises
from scripted_llm import ScriptedLLM, call, say

import claw_memory
from claw_memory.agent import Agent
from claw_memory.core import Request

HEAP = "8M"


def _open(dev_kind="lfs2", **kw):
    dev = mount(dev_kind, "/flash", blocks=256)
    clock = Clock(1800000000)
    return dev, clock, claw_memory.open("/flash", clock=clock, **kw)


async def _turn(mem, llm, text):
    sid = mem.chats.session_id("uart", "console")
    agent = Agent(llm, mem.providers(), mem.hooks(), mem.tools(), "You are Pip.")
    return await agent.run(Request(text, sid, "uart", "console"))


def _files():
    out = {}
    for path in tree("/flash"):
        with open("/flash/" + path, "rb") as f:
            out[path] = f.read()
    return out


def _remember_then_answer(name, args):
    # the model calls one tool, then answers with the tool's result
    return [call(name, args), lambda system, messages, tools: say("tool said: " + messages[-1]["content"])]


async def _incognito_writes_nothing(kind):
    x = ScriptedLLM([say('{"intent":"none","memories":[{"content":"User likes tea","tags":["drink"]}]}'),
                     say('{"intent":"none","memories":[]}')])
    dev, clock, mem = _open(kind, extraction_llm=x)
    llm = ScriptedLLM([say("Nice."), call("memory_store", {"content": "User lives in Porto", "tags": "city"}),
                       say("Noted.")])
    await _turn(mem, llm, "I like tea")  # normal turns first: files, memories (extracted, stored)
    await _turn(mem, llm, "Remember that I live in Porto")
    eq(sorted(i["content"] for i in mem.store.list()), ["User likes tea", "User lives in Porto"], "normal session")
    before = _files()
    stats = dev.stats()
    # -- from here on, nothing may be programmed or erased --
    reply = mem.session_command("uart", "console", "new --incognito secret")
    ok(reply.startswith("Started an incognito session: secret."), reply)
    sid = mem.chats.session_id("uart", "console")
    eq(sid, "chat:uart:console:secret", "the chat's session")
    ok(mem.sessions.is_incognito(sid), "incognito")
    extraction_calls = len(x.calls)
    steps = (_remember_then_answer("memory_store", {"content": "User has a secret", "tags": "secret"})
             + _remember_then_answer("profile_update", {"name": "user", "content": "# User\nSecret\n"})
             + _remember_then_answer("memory_recall", {"query": "where does the user live"})
             + _remember_then_answer("memory_list", {})
             + _remember_then_answer("memory_update", {"memory_id": "x", "content": "y"})
             + _remember_then_answer("memory_forget", {"memory_id": "x"})
             + _remember_then_answer("memory_undo", {}))
    llm = ScriptedLLM(steps)
    out = await _turn(mem, llm, "Remember that I have a secret")
    ok('"error":"incognito_session"' in out and "nothing of it is remembered" in out, out)
    out = await _turn(mem, llm, "Call me Ada from now on")
    ok('"error":"incognito_session"' in out, "profile_update refused: " + out)
    out = await _turn(mem, llm, "Where do I live?")
    ok("User lives in Porto" in out, "memory_recall still reads: " + out)
    ok("Porto" in llm.calls[-2]["system"], "automatic recall still reads")
    out = await _turn(mem, llm, "What do you know?")
    ok('"total":2' in out, "memory_list still reads: " + out)
    for text in ("change it", "forget it", "undo that"):
        out = await _turn(mem, llm, text)
        ok('"error":"incognito_session"' in out, text + ": " + out)
    eq(len(x.calls), extraction_calls, "no extraction of an incognito message")
    hist = mem.sessions.messages(sid)
    eq([m["role"] for m in hist[:3]], ["user", "assistant", "tool"], "its history, in RAM")
    ok(any("I have a secret" in (m.get("content") or "") for m in hist if m["role"] == "user"), "held")
    ok("Sessions:\n* default_01\n* secret (incognito, current)" == mem.session_command("uart", "console", "list"),
       "/session list marks it")
    eq(mem.sessions.stat(sid)["incognito"], True, "stat says it")
    eq(dev.stats()["bytes_programmed"] - stats["bytes_programmed"], 0, "0 bytes programmed")
    eq(dev.stats()["ops"] - stats["ops"], 0, "0 program/erase operations")
    eq(_files(), before, "every file as it was")
    # -- the end: a switch away --
    eq(mem.session_command("uart", "console", "switch default_01"), "Switched to session: default_01", "switch")
    ok(not mem.sessions.is_incognito(sid), "ended")
    eq(mem.sessions.messages(sid), [], "its history is gone")
    ok(not any("secret" in p for p in tree("/flash")), "no file of it")
    llm = ScriptedLLM([say("Back.")])
    await _turn(mem, llm, "hello again")
    ok(all("secret" not in (m.get("content") or "") for m in llm.calls[0]["messages"]),
       "the normal session never saw it")
    ok(dev.stats()["ops"] > stats["ops"], "a normal turn writes again")
    mem.close()
    dev.unmount()


async def test_an_incognito_session_writes_nothing_on_littlefs():
    await _incognito_writes_nothing("lfs2")


async def test_an_incognito_session_writes_nothing_on_fat():
    await _incognito_writes_nothing("fat")


async def test_a_reboot_ends_it_and_the_chat_is_back_on_its_session():
    dev, clock, mem = _open(extract=False)
    llm = ScriptedLLM([say("hi"), say("psst")])
    await _turn(mem, llm, "hello")
    mem.session_command("uart", "console", "new work")
    eq(mem.session_command("uart", "console", "new --incognito"),
       mem.session_command("uart", "console", "list") and (
           "Started an incognito session: incognito. Nothing of it is written to flash: no history, no new "
           "memories, no profile changes. /session switch <name> (or a reboot) ends it."), "default name")
    await _turn(mem, llm, "a secret")
    dev = dev.reboot()
    mem = claw_memory.open("/flash", clock=clock, extract=False)
    eq(mem.chats.session_id("uart", "console"), "chat:uart:console:work", "back on its map's current session")
    eq(mem.session_command("uart", "console", "list"), "Sessions:\n* default_01\n* work (current)", "listed")
    eq(mem.sessions.messages("chat:uart:console:incognito"), [], "nothing of it")
    dev.unmount()


async def test_commands_around_an_incognito_session():
    dev, clock, mem = _open(extract=False)
    cmd = lambda c: mem.session_command("web", "u1", c)  # noqa: E731
    # a chat whose first use is incognito: no chat map is written for it
    ok(cmd("new --incognito first").startswith("Started an incognito session: first."), "started")
    eq(cmd("list"), "Sessions:\n* first (incognito, current)", "listed, no map")
    ok(not any(p.startswith("sessions/chat_map/") for p in tree("/flash")), "no chat map written")
    eq(cmd("delete first"), 'Cannot delete the current session "first". Switch to another session first.', "delete")
    eq(cmd("switch first"), "Switched to session: first", "already there")
    eq(cmd("switch default_01"), "Switched to session: default_01", "out: the chat's first session")
    eq(cmd("list"), "Sessions:\n* default_01 (current)", "the map, written now")
    # names
    eq(cmd("new --incognito default_01"), 'Cannot create session "default_01": a session with that name already exists.',
       "a name in use")
    eq(cmd("new --incognito bad/name"), cmd("help"), "usage for a bad name")
    # one incognito session per chat: a new one ends the old; /session new ends it too
    cmd("new --incognito a")
    mem.sessions.persist("chat:web:u1:a", [(1, None, "x")])
    cmd("new --incognito b")
    ok(not mem.sessions.is_incognito("chat:web:u1:a") and mem.sessions.is_incognito("chat:web:u1:b"), "a ended")
    ok(cmd("new later").startswith("Started a new session: later"), "new")
    ok(not mem.sessions.is_incognito("chat:web:u1:b"), "b ended")
    eq(mem.chats.incognito("web", "u1"), None, "none")
    # the sessions API: an id with a history on flash cannot become incognito
    mem.sessions.persist("chat:web:u1:later", [(1, None, "on flash")], turn_completed=True)
    raises(ValueError, mem.sessions.incognito, "chat:web:u1:later")
    mem.sessions.incognito("chat:web:u1:api")
    eq(mem.sessions.persist("chat:web:u1:api", [(1, None, "q"), (2, None, "a")], turn_completed=True), None, "kept")
    eq(mem.sessions.records("chat:web:u1:api"), [(1, 1, b'{"role":"user","content":"q"}'),
                                                 (2, 1, b'{"role":"assistant","content":"a"}')], "records")
    raises(ValueError, mem.sessions.persist, "chat:web:u1:api", [(9, None, "bad")])
    eq(mem.sessions.delete("chat:web:u1:api"), True, "deleted: dropped")
    ok(not mem.sessions.is_incognito("chat:web:u1:api"), "gone")
    dev.unmount()


def test_a_refused_or_failed_command_leaves_the_incognito_session_as_it_was():
    # /session new with a name in use, and /session switch or new whose chat map cannot be
    # written: the command answers so, and the incognito session goes on with its history.
    from claw_memory import fsutil

    dev, clock, mem = _open(extract=False)
    cmd = lambda c: mem.session_command("web", "u1", c)  # noqa: E731
    cmd("new two")
    cmd("new --incognito secret")
    sid = "chat:web:u1:secret"
    mem.sessions.persist(sid, [(1, None, "hi"), (2, None, "hello")], turn_completed=True)
    eq(cmd("new two"), 'Cannot create session "two": a session with that name already exists.', "refused")
    real = fsutil.replace

    def full(*a):
        raise OSError(28, "ENOSPC")

    fsutil.replace = full
    try:
        for c in ("switch two", "new three"):
            ok(cmd(c).startswith("Session command failed"), c + ": the failure answered")
    finally:
        fsutil.replace = real
    eq(mem.chats.incognito("web", "u1"), "secret", "still incognito")
    eq([m["content"] for m in mem.sessions.messages(sid)], ["hi", "hello"], "its history kept")
    eq(cmd("switch two"), "Switched to session: two", "then the switch works")
    eq(mem.chats.incognito("web", "u1"), None, "and ends it")
    dev.unmount()


async def test_its_history_is_bounded_by_the_token_budget():
    dev, clock, mem = _open(extract=False, history_tokens=300)
    mem.session_command("uart", "console", "new --incognito long")
    sid = mem.chats.session_id("uart", "console")
    for n in range(40):
        mem.sessions.persist(sid, [(1, None, "question %02d " % n + "x" * 100)])
        mem.sessions.persist(sid, [(2, None, "answer %02d " % n + "y" * 100)], turn_completed=True)
    msgs = mem.sessions.messages(sid)
    ok(len(msgs) < 10, "old turns dropped (%d messages kept)" % len(msgs))
    eq(msgs[-1]["content"][:9], "answer 39", "the newest turn kept")
    eq(msgs[0]["role"], "user", "whole turns")
    # one newest turn over the budget stays whole
    mem.sessions.persist(sid, [(1, None, "big " + "z" * 3000), (2, None, "ok")], turn_completed=True)
    eq([m["content"][:3] for m in mem.sessions.messages(sid)], ["big", "ok"], "the newest turn, whole")
    ok(not any("long" in p for p in tree("/flash")), "nothing on flash")
    dev.unmount()


async def test_its_history_is_sent_as_messages_with_tool_rounds():
    dev, clock, mem = _open(extract=False)
    mem.session_command("uart", "console", "new --incognito t")
    llm = ScriptedLLM([call("memory_list", {}), say("You have none."), say("Still here.")])
    await _turn(mem, llm, "what do you know?")
    await _turn(mem, llm, "and now?")
    eq([m["role"] for m in llm.calls[2]["messages"]], ["user", "assistant", "tool", "assistant", "user"],
       "the previous turn, its tool round paired, then the new message")
    anthropic = mem.sessions.messages("chat:uart:console:t", "anthropic")
    eq([m["role"] for m in anthropic], ["user", "assistant", "user", "assistant"],
       "another backend: tool rounds left out, as for a session on flash")
    dev.unmount()
