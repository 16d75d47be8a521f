# Provenance (issue 27): every item says where it came from. A memory_store records the
# session and the request's user message, an extraction the message it was extracted from, an
# update keeps the first origin and adds the request that changed it; imports and other
# programs' items are "unknown". Store.why() finds the message again (log or pending file) by a
# key that survives session compaction, says when it is gone (session deleted, compacted away),
# and ESP-Claw's loader, writes and compaction never make it name a wrong origin.
import json

import strictjson
from flashsim import mount
from mptest import Clock, eq, ok
from scripted_llm import ScriptedLLM, call, say

import claw_memory
from claw_memory import inspect
from claw_memory.agent import Agent
from claw_memory.core import Request
from claw_memory.session import origin

HEAP = "8M"
M = "/flash/memory"
R = M + "/memory_records.jsonl"
CHAT = ("uart", "console")


def _open(**kw):
    dev = mount("lfs2", "/flash", blocks=256)
    clock = Clock(1800000000)
    return dev, clock, claw_memory.open("/flash", clock=clock, **kw)


async def _turn(mem, llm, text):
    sid = mem.chats.session_id(*CHAT)
    agent = Agent(llm, mem.providers(), mem.hooks(), mem.tools(), "You are Pip.")
    return await agent.run(Request(text, sid, CHAT[0], CHAT[1]))


def _lines():
    with open(R, "rb") as f:
        return f.read().split(b"\n")[:-1]


async def test_memory_store_update_and_the_chain():
    dev, clock, mem = _open(extract=False)
    llm = ScriptedLLM([call("memory_store", {"content": "User's sister lives in Porto", "tags": "family"}),
                       say("Noted.")])
    await _turn(mem, llm, "Remember that my sister lives in Porto")
    first = list(mem.store.list())[0]["id"]
    w = mem.store.why(first)
    eq((w["origin"]["by"], w["origin"]["session"], w["origin"]["text"], w["origin"]["at"]),
       ("tool", "chat:uart:console:default_01", "Remember that my sister lives in Porto", 1800000000), "origin")
    eq(w["changes"], [], "no update yet")
    # recall carries a short source: the session and the date
    llm = ScriptedLLM([call("memory_recall", {"query": "sister"}), lambda s, m, t: say(m[-1]["content"])])
    out = json.loads(await _turn(mem, llm, "Where does my sister live?"))
    eq(out["items"][0]["from"], "session default_01, " + out["items"][0]["date"], "from: session and date")
    # an update in another session keeps the first origin and records its own request
    mem.session_command(CHAT[0], CHAT[1], "new family")
    clock.t += 86400
    llm = ScriptedLLM([call("memory_update", {"memory_id": first, "content": "User's sister lives in Lisbon"}),
                       say("Updated.")])
    await _turn(mem, llm, "Actually my sister moved to Lisbon")
    second = list(mem.store.list())[0]["id"]
    w = mem.store.why(second)
    eq(w["origin"]["text"], "Remember that my sister lives in Porto", "the fact's first origin")
    eq(len(w["changes"]), 1, "one update")
    c = w["changes"][0]
    eq((c["id"], c["replaced"], c["old_content"], c["session"], c["text"], c["at"]),
       (second, first, "User's sister lives in Porto", "chat:uart:console:family",
        "Actually my sister moved to Lisbon", 1800086400), "the update and its request")
    # the old version's line compacted away: the chain still names it and its request
    mem.store.compact()
    c = mem.store.why(second)["changes"][0]
    eq((c["replaced"], c["old_content"], c["text"]), (first, None, "Actually my sister moved to Lisbon"),
       "after compaction")
    eq(mem.store.why(first), None, "the old id is no longer in the records")
    rows = inspect.items(rows=True, mem=mem)
    eq(rows[0]["from"], "session default_01, " + out["items"][0]["date"], "inspect.items shows it")
    dev.unmount()


async def test_extraction_records_the_message_it_came_from():
    x = ScriptedLLM([say('{"intent":"none","memories":[{"content":"User has a dog named Rex","tags":["pet"]}]}')])
    dev, clock, mem = _open(extraction_llm=x)
    await _turn(mem, ScriptedLLM([say("What a good boy.")]), "My dog Rex is three years old")
    it = list(mem.store.list())[0]
    w = mem.store.why(it["id"])
    eq((w["origin"]["by"], w["origin"]["text"]), ("extract", "My dog Rex is three years old"), "extracted from")
    why = mem.memory_command(*CHAT, "why " + it["id"])
    ok("\nFirst extracted from a message in session chat:uart:console:default_01 on 2027-" in why
       and why.endswith(': "My dog Rex is three years old".'), why)
    dev.unmount()


async def test_the_message_is_found_in_the_pending_file_the_archive_or_gone():
    dev, clock, mem = _open(extract=False, session_limit=3000, archive_limit=5000)
    sid = mem.chats.session_id(*CHAT)
    # mid-turn: the user record is in the pending file only
    mem.sessions.persist(sid, [(1, None, "I am allergic to kiwi")])
    by = mem._memory_hooks().by(sid, "I am allergic to kiwi")
    it = mem.store.store("User is allergic to kiwi", "health", by=by)[0]
    eq(mem.store.why(it["id"])["origin"]["text"], "I am allergic to kiwi", "from the pending file")
    mem.sessions.persist(sid, [(2, None, "Noted.")], turn_completed=True)
    eq(mem.store.why(it["id"])["origin"]["text"], "I am allergic to kiwi", "from the log")
    # the turn compacted out of the log (the session over its limit): found in the archive
    # while the archive keeps it; gone (and said so) once the archive's bound dropped it
    for n in range(20):
        mem.sessions.persist(sid, [(1, None, "filler question %02d %s" % (n, "x" * 60))])
        mem.sessions.persist(sid, [(2, None, "filler answer")], turn_completed=True)
    ok(mem.search("kiwi", 1, session=sid)[0]["archived"], "the turn is archived")
    eq(mem.store.why(it["id"])["origin"]["text"], "I am allergic to kiwi", "from the archive")
    for n in range(40):
        mem.sessions.persist(sid, [(1, None, "filler question %02d %s" % (n, "x" * 60))])
        mem.sessions.persist(sid, [(2, None, "filler answer")], turn_completed=True)
    eq(mem.search("kiwi", 1, session=sid), [], "the archive's bound dropped it")
    o = mem.store.why(it["id"])["origin"]
    eq((o["text"], o["missing"]), (None, "not on flash (compacted away, or never saved)"), "compacted away")
    eq(o["session"], sid, "the session is still named")
    # the session deleted
    mem.session_command(*CHAT, "new other")
    mem.session_command(*CHAT, "delete default_01")
    o = mem.store.why(it["id"])["origin"]
    eq((o["text"], o["missing"]), (None, "the session was deleted"), "deleted")
    # a new session of the same id does not make an old origin point at another message
    mem.session_command(*CHAT, "new default_01")
    mem.sessions.persist(sid, [(1, None, "something else entirely")], turn_completed=True)
    eq(mem.store.why(it["id"])["origin"]["text"], None, "no wrong message")
    dev.unmount()


def test_the_record_key_finds_a_record_among_other_lines():
    # The archive of compacted turns keeps records byte for byte with lines of its own between
    # them: the scan takes a record of the key's length and hash, wherever it is.
    dev = mount("lfs2", "/flash", blocks=64)
    rec = b'{"role":"user","content":"where is my bike"}'
    k = origin.key("where is my bike")
    eq(k, "%d-%08x" % (len(rec), __import__("claw_memory.text").text.fnv1a32(rec)), "the key")
    with open("/flash/arc", "wb") as f:
        f.write(b'#turn 1\n{"role":"user","content":"where is my car"}\n' + b"x" * 5000 + b"\n12" + rec
                + b"\n" + rec + b"\n")
    ln, h = int(k.split("-")[0]), int(k.split("-")[1], 16)
    eq(origin.scan("/flash/arc", ln, h), rec, "found after a long line, a pending-style line first")
    eq(origin.scan("/flash/arc", ln, h ^ 1), None, "another hash: nothing")
    eq(origin.key(""), None, "an empty message has no record")
    dev.unmount()


async def test_imported_and_other_programs_items_are_unknown():
    dev, clock, mem = _open(extract=False)
    mem.store.restore([{"id": "mem-1-0001", "content": "User likes chess", "tags": "game"}])
    eq(mem.store.why("mem-1-0001")["origin"], None, "imported: unknown")
    tools = {t.name: t for t in mem.tools()}
    ok_, out = await tools["memory_recall"].handler('{"query":"chess"}', Request("x", "chat:a:b:c"))
    ok('"from"' not in out, "no from for an unknown origin: " + out)
    eq(inspect.items(rows=True, mem=mem)[0]["from"], "unknown", "inspect says unknown")
    ok(mem.memory_command(*CHAT, "why mem-1-0001").endswith(
        "Origin unknown: imported, written by another program, or stored before provenance was recorded."),
       "/memory why")
    # hostile keys another program wrote are not an origin
    with open(R, "ab") as f:
        f.write(b'{"id":"x-1","content":"User likes go","origin":{"by":"tool","sid":7,"msg":"nope","at":-5},'
                b'"chg":{"n":"1","of":1},"prev":"../etc","edit":[1]}\n')
    w = mem.store.why("x-1")
    eq((w["origin"], w["changes"]), ({"by": "tool", "session": None, "at": 0, "text": None,
                                      "missing": "not recorded"}, []), "only what checks out")
    eq(mem.store.undo()["reason"], "nothing", "no change mark")
    dev.unmount()


async def test_esp_claw_reads_our_lines_and_its_writes_and_compaction_leave_origins_unknown():
    import espclaw
    import espclaw_boot

    dev, clock, mem = _open(extract=False)
    long_sid = "chat:uart:" + "c" * 200 + ":default_01"
    tools = {t.name: t for t in mem.tools()}
    req = Request("remember these", long_sid, "uart", "c")
    mem.sessions.persist(long_sid, [(1, None, "remember these")])
    for content in ("User likes jasmine tea", '"' * 250, "User rides a bike to work"):
        await tools["memory_store"].handler(json.dumps({"content": content, "tags": '"\\' * 40,
                                                        "keywords": "\\" * 120}), req)
    for line in _lines():
        ok(len(line) + 1 <= 1023, "every line within ESP-Claw's fgets buffer (%d)" % len(line))
        strictjson.check(line)
    ours = sorted(i["id"] for i in mem.store.list())
    eq(sorted(espclaw.EspClawStore(M, clock).ids()), ours, "ESP-Claw's loader reads every item")
    near = [x for x in _lines() if b'\\"\\"\\"' in x]
    eq(len(near), 1, "the long item")
    ok(b'"origin"' not in near[0] and b'"chg"' not in near[0],
       "a line near the limit keeps ESP-Claw's fields whole, without keys of ours (%d bytes)" % len(near[0]))
    tea = [i for i in mem.store.list() if i["content"] == "User likes jasmine tea"][0]["id"]
    ok(mem.store.why(tea)["origin"] is not None, "ours: known")
    # ESP-Claw's firmware forgets the bike, then updates the tea: its lines carry no key of ours
    bike = [i for i in mem.store.list() if "bike" in i["content"]][0]["id"]
    esp = espclaw.EspClawStore(M, clock)
    esp.forget(bike)
    mem = claw_memory.open("/flash", clock=clock, extract=False)
    r = mem.store.undo(long_sid)
    eq((r["changed"], r["reason"], r.get("id")), (False, "changed", bike), "our store is not undone over theirs")
    clock.t += 60
    new_tea = espclaw.EspClawStore(M, clock).update(tea, "User likes green tea")[0]["id"]
    mem = claw_memory.open("/flash", clock=clock, extract=False)
    eq(mem.store.why(new_tea)["origin"], None, "ESP-Claw's version: unknown, not our first origin")
    # ESP-Claw's boot compaction rewrites every line without our keys: every origin unknown
    clock.t += 60
    espclaw_boot.compact(M, clock.t)
    mem = claw_memory.open("/flash", clock=clock, extract=False)
    for it in mem.store.list():
        eq(mem.store.why(it["id"])["origin"], None, "unknown after ESP-Claw's compaction: %s" % it["id"])
    eq(mem.store.undo(long_sid)["reason"], "nothing", "and nothing to undo")
    dev.unmount()


def test_our_compaction_takes_the_origin_with_the_content_it_keeps():
    # Two duplicates (another program wrote the newer one): the compaction keeps the newer
    # content, and with it the newer one's origin (unknown), never the older one's.
    dev, clock, mem = _open(extract=False)
    sid = "chat:web:u:default_01"
    mem.sessions.persist(sid, [(1, None, "I like tea")])
    mem.store.store("User likes tea", "drink", by=mem._memory_hooks().by(sid, "I like tea"))
    with open(R, "ab") as f:
        f.write(b'{"id":"esp-9","source":"manual","content":"User likes TEA!","tags":"drink",'
                b'"keywords":"tea","created_at":1800000100,"updated_at":1800000100,"access_count":0,'
                b'"deleted":false,"summary_ids":[1]}\n')
    mem = claw_memory.open("/flash", clock=clock, extract=False)
    mem.store.compact()
    items = list(mem.store.list())
    eq([i["content"] for i in items], ["User likes TEA!"], "merged: the newer content")
    eq(mem.store.why(items[0]["id"])["origin"], None, "its origin: unknown, not the older item's")
    dev.unmount()


async def test_a_message_over_the_cut_is_found_as_the_log_holds_it():
    dev, clock, mem = _open(extract=False, max_message_chars=100)
    sid = mem.chats.session_id(*CHAT)
    long = "I live in Porto. " + "and more " * 50
    mem.sessions.persist(sid, [(1, None, long)], turn_completed=False)
    it = mem.store.store("User lives in Porto", "city", by=mem.by(sid, long))[0]
    eq(mem.store.why(it["id"])["origin"]["text"], long[:100], "the message as kept: cut to 100 characters")
    dev.unmount()
