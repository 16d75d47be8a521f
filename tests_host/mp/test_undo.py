# Undo (issue 27): memory_undo, /memory undo and Store.undo() take back the newest change made
# in a session (a store: the item is forgotten; an update: the previous version is active
# again under its id; a forget: the item is active again), as one append; twice in a row, after
# a reboot; never a change made before a compaction (its tombstones, and the forgotten text in
# them, are gone), nor over a later change of another session; a store that evicted gets its
# evicted items back. The compaction a change triggers keeps that change: it can be undone.
import json

from flashsim import mount
from mptest import Clock, eq, ok

import claw_memory
from claw_memory.core import Request
from claw_memory.memory_text import message

HEAP = "8M"
SID = "chat:web:local:default_01"
OTHER = "chat:web:local:work"
R = "/flash/memory/memory_records.jsonl"


def _setup(**kw):
    dev = mount("lfs2", "/flash", blocks=256)
    clock = Clock(1800000000)
    mem = claw_memory.open("/flash", extract=False, clock=clock, **kw)
    return dev, mem, clock, {t.name: t for t in mem.tools()}


async def _run(mem, tools, name, args, sid=SID, text="a message"):
    """A tool call in a request of session `sid`; its stage note is taken (so that the next
    one starts empty). Returns (ok, result, stage note)."""
    req = Request(text, sid, "web", "local")
    ok_, out = await tools[name].handler(json.dumps(args), req)
    return ok_, json.loads(out), await mem.hooks().stage_note(req)


def _active(mem):
    return sorted((i["id"], i["content"]) for i in mem.store.list())


def _lines():
    with open(R, "rb") as f:
        return f.read().split(b"\n")[:-1]


async def test_undo_of_each_kind_of_change_and_twice_in_a_row():
    dev, mem, clock, tools = _setup()
    _, js, _ = await _run(mem, tools, "memory_store", {"content": "User likes jasmine tea", "tags": "drink"})
    first = js["memory_id"]
    clock.t += 60
    _, js, _ = await _run(mem, tools, "memory_update", {"memory_id": first, "content": "User likes green tea"})
    second = js["memory_id"]
    # 1: the update: the previous version active again, under its own id
    good, js, note = await _run(mem, tools, "memory_undo", {})
    eq((good, js["changed"], js["undone"]), (True, True, "update"), "undo update: %r" % js)
    eq(sorted((i["memory_id"], i["now"]) for i in js["items"]), sorted([(second, "forgotten"), (first, "restored")]),
       "new version forgotten, old restored")
    eq(_active(mem), [(first, "User likes jasmine tea")], "jasmine again")
    eq(mem.store.get(first)["summary_labels"], ["drink"], "with its label")
    eq(note, "Memory update: [undone: drink]", "the stage note says it")
    ok(js["message"].startswith("Undone (update): "), js["message"])
    # 2, twice in a row: the store before it
    good, js, _ = await _run(mem, tools, "memory_undo", {})
    eq((js["undone"], js["items"]), ("store", [{"memory_id": first, "summary": "drink",
                                                "content": "User likes jasmine tea", "now": "forgotten"}]),
       "undo store")
    eq(_active(mem), [], "nothing left")
    good, js, _ = await _run(mem, tools, "memory_undo", {})
    eq((good, js["changed"], js["reason"]), (True, False, "nothing"), "nothing more: %r" % js)
    ok("can still be undone" in js["message"], js["message"])
    # 3: a forget: the item active again, under its id
    _, js, _ = await _run(mem, tools, "memory_store", {"content": "User has a cat named Miso", "tags": "pet"})
    cat = js["memory_id"]
    await _run(mem, tools, "memory_forget", {"memory_id": cat})
    eq(_active(mem), [], "forgotten")
    good, js, note = await _run(mem, tools, "memory_undo", {})
    eq((js["undone"], js["items"][0]["memory_id"], js["items"][0]["now"]), ("forget", cat, "restored"), "undo forget")
    eq(_active(mem), [(cat, "User has a cat named Miso")], "the cat is back")
    eq(note, "Memory update: [undone: pet]", "stage note")
    for line in _lines():
        ok(len(line) < 1023, "every line within ESP-Claw's reader")
    dev.unmount()


async def test_an_undo_is_one_append_and_survives_a_reboot():
    dev, mem, clock, tools = _setup()
    _, js, _ = await _run(mem, tools, "memory_store", {"content": "User plays the cello", "tags": "music"})
    mid = js["memory_id"]
    await _run(mem, tools, "memory_update", {"memory_id": mid, "content": "User plays the viola"})
    n = len(_lines())
    dev = dev.reboot()  # a power cut: no close(), the old version's tombstone is still there
    mem = claw_memory.open("/flash", extract=False, clock=clock)
    r = mem.store.undo(SID)
    eq((r["changed"], r["undone"]), (True, "update"), "undone after a reboot")
    eq(len(_lines()), n + 2, "one append of two lines")
    chg = [json.loads(x)["chg"] for x in _lines()[-2:]]
    eq([c["u"] for c in chg], [2, 2], "both lines say which change they revert")
    eq((chg[0]["n"], chg[0]["of"]), (chg[1]["n"], 2), "one change of two lines")
    dev = dev.reboot()
    mem = claw_memory.open("/flash", extract=False, clock=clock)
    eq(_active(mem), [(mid, "User plays the cello")], "the previous version, after another reboot")
    eq(mem.store.undo(SID)["undone"], "store", "and the store before it")
    eq(_active(mem), [], "gone")
    dev.unmount()


async def test_nothing_from_before_a_compaction_is_undone():
    dev, mem, clock, tools = _setup()
    _, js, _ = await _run(mem, tools, "memory_store", {"content": "User's PIN is written on the fridge",
                                                       "tags": "home"})
    await _run(mem, tools, "memory_forget", {"memory_id": js["memory_id"]})
    mem.close()  # forgotten text leaves the records (docs/PRIVACY.md), and with it the forget
    with open(R, "rb") as f:
        ok(b"fridge" not in f.read(), "the text is gone")
    mem = claw_memory.open("/flash", extract=False, clock=clock)
    tools = {t.name: t for t in mem.tools()}
    good, js, _ = await _run(mem, tools, "memory_undo", {})
    eq((good, js["changed"], js["reason"]), (True, False, "nothing"), "not possible: %r" % js)
    ok("compacted" in js["message"] and "forgotten text" in js["message"], js["message"])
    eq(mem.memory_command("web", "local", "undo"), js["message"], "/memory undo says the same")
    # A store kept by a compaction is no longer undoable either: its mark is gone, and a later
    # change of the session may have gone with it.
    _, js, _ = await _run(mem, tools, "memory_store", {"content": "User works at the harbour", "tags": "job"})
    mem.store.compact()
    eq(mem.store.undo(SID)["reason"], "nothing", "compacted: not undone")
    eq([c for _, c in _active(mem)], ["User works at the harbour"], "nothing changed")
    dev.unmount()


async def test_the_change_that_triggers_a_compaction_can_still_be_undone():
    dev, mem, clock, tools = _setup()
    ids = []
    for n in range(3):
        _, js, _ = await _run(mem, tools, "memory_store", {"content": "Numbered fact %d" % n, "tags": "n"})
        ids.append(js["memory_id"])
    await _run(mem, tools, "memory_forget", {"memory_id": ids[0]})  # 4 lines: garbage, not 5 yet
    await _run(mem, tools, "memory_forget", {"memory_id": ids[1]})  # the 5th: it compacts
    with open(R, "rb") as f:
        data = f.read()
    ok(b"Numbered fact 0" not in data, "the first forget's text is gone")
    ok(b"Numbered fact 1" in data, "the forget that compacted is kept, as written")
    good, js, _ = await _run(mem, tools, "memory_undo", {})
    eq((js["undone"], js["items"][0]["memory_id"]), ("forget", ids[1]), "undone: %r" % js)
    eq(_active(mem), sorted([(ids[1], "Numbered fact 1"), (ids[2], "Numbered fact 2")]), "back")
    good, js, _ = await _run(mem, tools, "memory_undo", {})
    eq(js["reason"], "nothing", "the first forget was compacted: not undone")
    # and a forget's text still leaves within 5 changes: the 4 after it compact
    await _run(mem, tools, "memory_forget", {"memory_id": ids[2]})
    for n in range(4):
        await _run(mem, tools, "memory_store", {"content": "Later fact %d" % n, "tags": "l"})
    with open(R, "rb") as f:
        ok(b"Numbered fact 2" not in f.read(), "gone within 5 changes")
    dev.unmount()


async def test_a_store_that_evicts_says_so_and_undo_brings_the_evicted_back():
    dev, mem, clock, tools = _setup()
    mem.store.max_active = mem.store._st.max_active = 3  # a small capacity for the test
    logs = []
    mem.store._st.log = logs.append
    for n in range(3):
        clock.t += 3600
        await _run(mem, tools, "memory_store", {"content": "Seed fact number %d" % n, "tags": "s%d" % n})
    before = _active(mem)
    good, js, _ = await _run(mem, tools, "memory_list", {})
    eq((js["total"], js["capacity"]), (3, 3), "memory_list: how full")
    clock.t += 3600
    good, js, _ = await _run(mem, tools, "memory_store", {"content": "A fourth fact that needs room", "tags": "new"})
    oldest = before[0][0]
    eq(js["evicted"], [{"memory_id": oldest, "summary": "s0"}], "the tool result names what went")
    ok(any(oldest in m and "evicted" in m for m in logs), "and the log: %r" % logs)
    eq(len(_active(mem)), 3, "capacity held")
    good, js, _ = await _run(mem, tools, "memory_undo", {})
    eq(js["undone"], "store", "the store undone: %r" % js)
    eq(sorted((i["memory_id"], i["now"]) for i in js["items"])[0], (oldest, "restored"), "evicted item restored")
    eq(_active(mem), before, "as before the store")
    dev.unmount()


async def test_undo_is_per_session_and_refused_over_a_later_change():
    dev, mem, clock, tools = _setup()
    _, js, _ = await _run(mem, tools, "memory_store", {"content": "User sings in a choir", "tags": "music"})
    mine = js["memory_id"]
    # another session changes our item: our undo would lose that, so it is refused
    await _run(mem, tools, "memory_update", {"memory_id": mine, "content": "User sings in two choirs"}, sid=OTHER)
    good, js, _ = await _run(mem, tools, "memory_undo", {})
    eq((js["changed"], js["reason"], js["undone"]), (False, "changed", "store"), "refused: %r" % js)
    ok(mine in js["message"] and "another session" in js["message"], js["message"])
    eq([c for _, c in _active(mem)], ["User sings in two choirs"], "nothing changed")
    # the other session's undo takes back its own change, not ours
    good, js, _ = await _run(mem, tools, "memory_undo", {}, sid=OTHER)
    eq(js["undone"], "update", "its own change")
    eq([c for _, c in _active(mem)], ["User sings in a choir"], "back")
    # ... and now ours is possible again
    eq(mem.store.undo(SID)["undone"], "store", "ours")
    eq(_active(mem), [], "gone")
    dev.unmount()


async def test_undo_of_an_extraction_result_and_of_a_program_s_change():
    from claw_memory.extract import Extraction, Job

    dev, mem, clock, tools = _setup()
    a = mem.store.store("User lives in Porto", "city")[0]  # a program's change: no session's
    eq(_lines()[0], b'{"id":"%s","source":"manual","content":"User lives in Porto","tags":"city","keywords":"city",'
       b'"created_at":1800000000,"updated_at":1800000000,"access_count":0,"deleted":false,"summary_ids":[1]}'
       % a["id"].encode(), "a program's line is ESP-Claw's, exactly")
    job = Job(Request("I moved to Lisbon, and I have a dog", SID), 1)
    job.answer = json.dumps({"intent": "replace", "memories": [
        {"content": "User lives in Lisbon", "tags": ["city"]}, {"content": "User has a dog", "tags": ["pet"]}]})
    Extraction(mem.store, None).apply(job, mem._memory_hooks().by(SID, job.text, "extract"))
    eq(sorted(c for _, c in _active(mem)), ["User has a dog", "User lives in Lisbon"], "replaced")
    r = mem.store.undo(SID)
    eq(r["undone"], "change", "a result of several facts")
    eq(_active(mem), [(a["id"], "User lives in Porto")], "all of it reverted, Porto back")
    eq(mem.store.undo(SID)["reason"], "nothing", "the program's store is no session's change")
    eq(mem.store.undo()["reason"], "nothing", "nor anyone's")
    dev.unmount()


async def test_memory_command():
    dev, mem, clock, tools = _setup()
    eq(mem.memory_command("web", "local", ""), mem.memory_command("web", "local", "help"), "usage")
    ok(mem.memory_command("web", "local", "").startswith("Usage:\n/memory undo"), "usage text")
    eq(mem.memory_command(None, "local", "undo"), "Memory command failed: missing chat context.", "no chat")
    sid = mem.chats.session_id("web", "local")
    mem.sessions.persist(sid, [(1, None, "I run every Sunday")])
    await _run(mem, tools, "memory_store", {"content": "User runs on Sundays", "tags": "sport"}, sid=sid,
               text="I run every Sunday")
    mid = list(mem.store.list())[0]["id"]
    why = mem.memory_command("web", "local", "why " + mid)
    ok(why.startswith('%s "User runs on Sundays"' % mid) and '"I run every Sunday"' in why, why)
    ok(mem.memory_command("web", "local", "why nope").startswith("No memory nope"), "unknown id")
    # Agent 2's /memory undo is about agent 2's session of the chat: agent 0's change stays
    a2 = mem.chats.session_id("web", "local", 2)
    mem.sessions.persist(a2, [(1, None, "I swim on Mondays")])
    await _run(mem, tools, "memory_store", {"content": "User swims on Mondays", "tags": "sport"}, sid=a2,
               text="I swim on Mondays")
    eq(mem.memory_command("web", "local", "undo", 2), 'Undone (store): "User swims on Mondays" is forgotten.',
       "agent 2's undo")
    eq(mem.memory_command("web", "local", "undo", 2),
       message({"changed": False, "reason": "nothing"}), "agent 2: nothing more")
    eq(mem.memory_command("web", "local", "undo"), 'Undone (store): "User runs on Sundays" is forgotten.', "undo")
    mem.session_command("web", "local", "new --incognito private")
    eq(mem.memory_command("web", "local", "undo"),
       "This session is incognito: it changes no memory, so there is nothing to undo.", "incognito")
    dev.unmount()
    dev = mount("lfs2", "/flash", blocks=64)
    lite = claw_memory.open("/flash", "lite")
    eq(lite.memory_command("web", "local", "undo"), "Long-term memory is not used in LITE mode.", "LITE")
    dev.unmount()


async def test_a_change_with_a_line_missing_is_not_half_undone():
    # The new version's line is too long for ESP-Claw's reader with a change mark, the old
    # version's tombstone is not: the undo finds one of the change's two lines and refuses.
    dev, mem, clock, tools = _setup()
    _, js, _ = await _run(mem, tools, "memory_store", {"content": "User likes short facts", "tags": "t"})
    mid = js["memory_id"]
    _, js, _ = await _run(mem, tools, "memory_update", {"memory_id": mid, "content": '"' * 250,
                                                        "tags": '"\\' * 40, "keywords": "\\" * 120})
    lines = _lines()
    ok(b'"chg"' not in lines[-2] and b'"chg"' in lines[-1], "the long line went without its mark")
    good, js, _ = await _run(mem, tools, "memory_undo", {})
    eq((js["changed"], js["reason"], js["undone"]), (False, "purged", "forget"), "refused: %r" % js)
    eq(len(_active(mem)), 1, "nothing changed: the new version stays, the old one stays gone")
    dev.unmount()


async def test_undos_do_not_bring_a_compaction_nearer():
    # 4 counted lines, then two undos (4 more lines, not counted): no compaction comes between
    # them, so the second undo still finds the store.
    dev, mem, clock, tools = _setup()
    c0 = mem.store.compactions
    await _run(mem, tools, "memory_store", {"content": "User keeps bees", "tags": "bees"})
    _, js, _ = await _run(mem, tools, "memory_store", {"content": "User brews mead", "tags": "mead"})
    await _run(mem, tools, "memory_update", {"memory_id": js["memory_id"], "content": "User brews cider"})
    eq((await _run(mem, tools, "memory_undo", {}))[1]["undone"], "update", "first")
    eq((await _run(mem, tools, "memory_undo", {}))[1]["undone"], "store", "second")
    eq(mem.store.compactions, c0, "no compaction")
    eq([c for _, c in _active(mem)], ["User keeps bees"], "as after the first store")
    again = claw_memory.open("/flash", extract=False, clock=clock).store
    again.count()
    eq(mem.store._st.tab.changes, again._st.tab.changes, "the count of changes in RAM is the file's")
    eq(again._st.tab.changes, 4, "4: the undos' lines not counted")
    dev.reboot()
    mem = claw_memory.open("/flash", extract=False, clock=clock)
    eq(mem.store.undo(SID)["undone"], "store", "and after a reboot, the first store too")
    dev.unmount()
