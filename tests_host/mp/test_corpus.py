# The bad-input corpus (tests_host/corpus, written by tools/gen_corpus.py): damaged files,
# hostile ids, aliases and labels, garbage LLM answers and tool arguments. Each gets a clear
# error or a repair, and what was acknowledged before the damage is still there.
import json
import os

from flashsim import mount, tree
from mptest import eq, ok, raises
from scripted_llm import expand

import claw_memory
from claw_memory.core import Request
from claw_memory.extract import Job

HEAP = "16M"
CORPUS = "tests_host/corpus/"
SID = "chat:corpus:c1:default_01"


def _lines(name):
    with open(CORPUS + name) as f:
        return [json.loads(l) for l in f.read().split("\n") if l]


def _good():
    mem = claw_memory.open("/flash", extract=False)
    for n in range(3):
        mem.sessions.persist(SID, [(1, None, "user %d" % n)])
        mem.sessions.persist(SID, [(3, '{"role":"assistant","content":null,"tool_calls":[{"id":"c%d","type":"function","function":{"name":"t","arguments":"{}"}}]}' % n, None),
                                   (4, '[{"role":"tool","tool_call_id":"c%d","content":"r%d"}]' % (n, n), None)])
        mem.sessions.persist(SID, [(2, None, "final %d" % n)], turn_completed=True)
    for fact, tag in (("User likes tea", "drink"), ("User lives in Oslo", "city"), ("User has a cat", "pets")):
        mem.store.store(fact, tag)
    mem.sessions.persist(SID, [(1, None, "pending question")])  # an unfinished turn
    mem.close()
    return mem


def _target(mem, target):
    log = mem.sessions.path(SID)
    return {"log": log, "idx": log + ".idx", "pending": log + ".pending",
            "records": mem.store.records_path, "index": mem.store.index_path, "digest": mem.store.digest_path,
            "memory_md": mem.store.md_path}.get(target) or mem.layout.memory + "/" + target


def _apply(path, how, data):
    old = b""
    try:
        with open(path, "rb") as f:
            old = f.read()
    except OSError:
        pass
    if how == "replace":
        new = data
    elif how == "append":
        new = old + data
    else:  # overwrite in the middle (on an entry boundary for an index)
        at = len(old) // 2
        if path.endswith(".idx"):
            at = 8 + 10 * ((len(old) - 8) // 20)
        new = old[:at] + data + old[at + len(data):]
    with open(path, "wb") as f:
        f.write(new)


def test_damaged_files():
    with open(CORPUS + "cases.json") as f:
        cases = json.loads(f.read())
    ok(len(cases) >= 30, "the corpus has cases")
    for c in cases:
        dev = mount("lfs2", "/flash", blocks=512)
        mem = _good()
        with open(CORPUS + c["name"], "rb") as f:
            data = f.read()
        _apply(_target(mem, c["target"]), c["how"], data)
        logs = []
        mem = claw_memory.open("/flash", extract=False, log=logs.append)
        what = "%s (%s)" % (c["name"], c["why"])
        msgs = mem.sessions.messages(SID)
        logged = [m for m in msgs if m.get("content") != "pending question"]
        if c["target"] in ("log", "idx", "pending"):
            ok(len(logged) >= c["keep"], "%s: %d of %d records kept" % (what, len(logged), c["keep"]))
            finals = [m["content"] for m in msgs if m["role"] == "assistant" and not m.get("tool_calls")]
            if c["keep"] == 12:
                eq(finals, ["final 0", "final 1", "final 2"], what + ": dialogue")
            if c["target"] != "pending":
                eq(msgs[-1]["content"], "pending question", what + ": the unfinished turn")
        else:
            eq(len(logged), 12, what + ": history untouched")
        items = sorted(i["content"] for i in list(mem.store.list()))
        want = ["User has a cat", "User likes tea", "User lives in Oslo"]
        if c["name"] == "jsonl_invalid_utf8.bin":  # (read with the byte dropped: docs/DESIGN.md, 4)
            want.append("bad  bytes")
        eq(items, want, what + ": items")
        got = {p.name: p.collect(Request("x", SID)) for p in mem.providers()}
        eq([l for l in logs if "provider" in l], [], what + ": no provider failed")
        ok(isinstance(got["Editable Profile Memory"], str), what + ": profile section")
        for lab in ("drink", "city", "pets"):
            ok("- %s\n" % lab in got["Long-term Memory"], what + ": catalog lists " + lab)
        hist = got["Session History"]
        ok(isinstance(hist, list) and len(hist) == 1, what + ": history section, one streamed element")
        for backend in ("anthropic", "openai_responses", "openai"):
            sent = expand(hist, backend)  # its bytes are those of its messages, converted
        ok(len(sent) >= min(c["keep"], 1) if c["target"] in ("log", "idx", "pending") else sent == msgs,
           what + ": history section")
        ok(isinstance(got["Memory Skills"], str) and "memory_recall" in got["Memory Skills"],
           what + ": skills section")
        prof = mem.profile.read()
        ok(all(isinstance(v, str) and len(v.encode()) <= 8192 for v in prof.values()), what + ": profile")
        # The next turn and the next store work, and repair agrees.
        mem.sessions.persist(SID, [(2, None, "final after")], turn_completed=True)
        eq(mem.sessions.messages(SID)[-1]["content"], "final after", what + ": next turn")
        mem.store.store("User learned to swim", "sport")
        eq(len(list(mem.store.list())), len(want) + 1, what + ": next store")
        mem.sessions.repair(SID)
        mem.flush()
        eq(mem.store.verify()["index"], "ok", what + ": index consistent")
        dev.unmount()


def test_lite_mode_with_a_binary_memory_md():
    dev = mount("lfs2", "/flash", blocks=256)
    os.mkdir("/flash/memory")
    with open(CORPUS + "memory_md_binary.bin", "rb") as f, open("/flash/memory/MEMORY.md", "wb") as g:
        g.write(f.read())
    logs = []
    mem = claw_memory.open("/flash", mode="lite", log=logs.append)
    body = mem.providers()[1].collect(Request("x"))
    eq(logs, [], "the provider did not fail")
    ok(body is None or isinstance(body, str), "cleaned text or nothing")
    if body:
        eq(body.encode().decode(), body, "valid UTF-8")
    dev.unmount()


def test_hostile_session_ids_stay_inside_the_data_root():
    dev = mount("lfs2", "/flash", blocks=256)
    mem = claw_memory.open("/flash", extract=False)
    for sid in _lines("hostile_session_ids.txt") + [b"\xff\xfe\x00", "x" * 513]:
        try:
            mem.sessions.persist(sid, [(1, None, "hi")], turn_completed=True)
        except ValueError as e:
            ok(str(e), "a clear error for %r" % (sid,))
            continue
        eq(mem.sessions.messages(sid), [{"role": "user", "content": "hi"}], "works for %r" % (sid,))
        mem.sessions.delete(sid)
    for path in tree("/flash"):
        ok(path.startswith(("sessions/", "memory/")), "nothing outside the layout: %s" % path)
    eq([p for p in tree("/flash") if p.startswith("sessions/")], [], "all deleted again")
    dev.unmount()


def test_hostile_aliases():
    dev = mount("lfs2", "/flash", blocks=256)
    mem = claw_memory.open("/flash", extract=False)
    mem.chats.session_id("web", "u")
    for alias in _lines("hostile_aliases.txt"):
        for cmd in ("new", "switch", "delete"):
            reply = mem.session_command("web", "u", "%s %s" % (cmd, alias))
            ok(isinstance(reply, str) and reply, "a reply for %s %r" % (cmd, alias))
    for channel, chat in (("../x", "y"), ("a/b", "../../c"), ("\x00", "\x00")):
        sid = mem.chats.session_id(channel, chat)
        mem.sessions.persist(sid, [(1, None, "x")], turn_completed=True)
    for path in tree("/flash"):
        ok(path.startswith(("sessions/", "memory/")), "inside the layout: %s" % path)
        ok(path.count("/") <= 2, "no extra directories: %s" % path)
    dev.unmount()


def test_hostile_labels():
    dev = mount("lfs2", "/flash", blocks=256)
    mem = claw_memory.open("/flash", extract=False)
    for n, label in enumerate(_lines("hostile_labels.txt")):
        it, _ = mem.store.store("Fact number %d with a strange label" % n, label, label)
        for lab in it["summary_labels"]:
            ok(0 < len(lab) <= 24 and len(lab.encode()) <= 39, "label bounded: %r" % lab)
            ok("," not in lab and ";" not in lab and "|" not in lab and "/" not in lab, "no separators")
        eq(mem.store.recall([label])[:0], [], "recall by a hostile label does not fail")
    for path in tree("/flash"):
        ok(path.startswith(("sessions/", "memory/")), "inside the layout: %s" % path)
    dev.unmount()


def test_garbage_llm_answers_store_nothing():
    dev = mount("lfs2", "/flash", blocks=256)

    class Never:
        backend = "openai"

    mem = claw_memory.open("/flash", extraction_llm=Never())
    ex = mem.extraction
    for n, answer in enumerate(_lines("llm_answers.txt")):
        job = Job(Request("hello", SID, request_id=n + 1), n + 1)
        job.answer = answer
        labels = ex.apply(job)
        ok(isinstance(labels, list), "labels list for %r" % answer[:30])
    items = sorted(i["content"] for i in list(mem.store.list()))
    eq(items, ["A" * 255, "x"], "only string facts in a memories list (the oversized one cut)")
    ok(ex.stats["garbage"] >= 8, "garbage counted")
    dev.unmount()


async def test_garbage_tool_arguments():
    dev = mount("lfs2", "/flash", blocks=256)
    mem = claw_memory.open("/flash", extract=False)
    mem.store.store("User likes tea", "drink")
    tools = mem.tools(session_command=True)
    for raw in _lines("tool_args.txt"):
        for t in tools:
            good, out = await t.handler(raw, Request("x", SID, "web", "u"))
            ok(isinstance(out, str), "%s returns text for %r" % (t.name, raw[:30]))
            if t.name != "session_command":
                js = json.loads(out)
                ok(js["ok"] in (True, False), "%s envelope for %r" % (t.name, raw[:30]))
    for path in tree("/flash"):
        ok(path.startswith(("sessions/", "memory/")), "inside the layout: %s" % path)
    ok(len(list(mem.store.list())) >= 1, "store still works")
    raises(ValueError, mem.profile.path, "../user")
    dev.unmount()
