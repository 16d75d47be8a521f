# Memories that expire, and the date (issue 27). With the clock set (2024 or later) an item
# past its expires_at is never injected, recalled, listed or counted, is evicted first and
# compacted away; with the clock not set nothing expires and nothing is dated relative to now;
# a clock that jumps back makes an item current again until a compaction removed it. The
# system prompt carries the date only with a set clock (else it is byte for byte as before,
# and as with date=False), in the user's time zone when the configuration or the profile names
# one; the extraction prompt gets the date and may set an expiry.
import json

from flashsim import mount
from mptest import Clock, eq, ok
from scripted_llm import ScriptedLLM, call, say

import claw_memory
from claw_memory import dates, extract
from claw_memory.agent import Agent
from claw_memory.core import Request

HEAP = "8M"
SID = "chat:uart:console:default_01"
DAY = 86400
T = 1797033600  # 2026-12-12 00:00 UTC, a Saturday
UNSET = 946684800  # 2000-01-01: a board before NTP


def _open(clock, **kw):
    dev = mount("lfs2", "/flash", blocks=256)
    return dev, claw_memory.open("/flash", clock=clock, **kw)


async def _tool(mem, name, args):
    tools = {t.name: t for t in mem.tools()}
    ok_, out = await tools[name].handler(json.dumps(args), Request("msg", SID, "uart", "console"))
    return ok_, json.loads(out)


def _contents(mem):
    return sorted(i["content"] for i in mem.store.list())


async def test_an_expired_item_is_never_read_and_goes_first():
    clock = Clock(T)
    dev, mem = _open(clock, extract=False, timezone="UTC")
    await _tool(mem, "memory_store", {"content": "User lives in Lyon", "tags": "city"})
    clock.t = T + 3600  # (newer than Lyon: without expiry it would be the last to go)
    good, js = await _tool(mem, "memory_store", {"content": "User is in Paris this week", "tags": "trip",
                                                 "expires": "7d"})
    ok(good, "stored: %r" % js)
    mid = js["memory_id"]
    eq(mem.store.get(mid)["expires_at"], T + 3600 + 7 * DAY, "7 days from now")
    clock.t = T
    good, js = await _tool(mem, "memory_recall", {"query": "where is the user"})
    trip = [i for i in js["items"] if i["id"] == mid][0]
    eq((trip["expires"], trip["date"]), ("2026-12-19", "2026-12-12"), "recalled with its expiry day and date")
    ok(len(mem.store.matches("paris")) == 1, "matched before")
    clock.t = T + 3600 + 7 * DAY  # expired
    eq(_contents(mem), ["User lives in Lyon"], "not listed")
    eq(mem.store.count(), 1, "not counted")
    eq(mem.store.get(mid), None, "not got")
    eq(mem.store.matches("paris"), [], "not injected (automatic recall)")
    eq(mem.store.recall(["trip"]), [], "not recalled by label")
    eq(mem.store.recall(query="paris week"), [], "not recalled by query")
    good, js = await _tool(mem, "memory_list", {})
    eq((len(js["items"]), js["total"]), (1, 1), "memory_list")
    # a clock that jumps back: current again (it was not compacted away)
    clock.t = T + DAY
    eq(len(mem.store.matches("paris")), 1, "back in the past: current again")
    clock.t = T + 8 * DAY
    # evicted first: at capacity the expired item goes, whatever its score
    mem.store.max_active = mem.store._st.max_active = 2
    for _ in range(5):
        mem.store.recall(["trip"])  # (returns nothing: no access counted)
    with mem.store.batch() as b:
        b.store("User plays chess", "game")
    eq(b.evicted, [(mid, "trip")], "the expired one was evicted")
    eq(_contents(mem), ["User lives in Lyon", "User plays chess"], "the others stay")
    dev.unmount()


async def test_close_compacts_expired_items_away():
    clock = Clock(T)
    dev, mem = _open(clock, extract=False)
    mem.store.store("User has a cold", "health", expires_at=T + DAY)
    mem.store.store("User likes soup", "food")
    mem.store.close()
    clock.t = T + 2 * DAY
    mem = claw_memory.open("/flash", clock=clock, extract=False)
    eq(_contents(mem), ["User likes soup"], "expired")
    mem.close()
    with open("/flash/memory/memory_records.jsonl", "rb") as f:
        ok(b"cold" not in f.read(), "compacted away at close")
    dev.unmount()


async def test_without_a_set_clock_nothing_expires():
    clock = Clock(UNSET + 3600)
    dev, mem = _open(clock, extract=False)
    good, js = await _tool(mem, "memory_store", {"content": "User is away this week", "tags": "trip", "expires": "7d"})
    eq((good, js["note"]), (True, "the board's clock is not set: this memory does not expire"), "stored, said")
    eq(mem.store.get(js["memory_id"])["expires_at"], 0, "no expiry: a duration cannot be dated")
    good, js = await _tool(mem, "memory_store", {"content": "User's lease ends", "tags": "home", "expires": "2026-12-24"})
    mid = js["memory_id"]
    ok(mem.store.get(mid)["expires_at"] > 0, "a date is a date, clock or not")
    await _tool(mem, "memory_store", {"content": "User has a guest", "tags": "home", "expires": "2000-03-01"})
    clock.t = UNSET + 400 * DAY  # still before 2024: not set, though past 2000-03-01
    eq(len(_contents(mem)), 3, "nothing expires while the clock is not set")
    good, js = await _tool(mem, "memory_recall", {"summary_labels": ["trip"]})
    ok("date" not in js["items"][0], "and nothing is dated: %r" % js["items"][0])
    clock.t = T + 30 * DAY  # NTP came: 2027
    eq(_contents(mem), ["User is away this week"], "the dated ones expired once the clock was set")
    dev.unmount()


async def test_expires_arguments():
    clock = Clock(T)
    dev, mem = _open(clock, extract=False)
    for bad in ("soon", "7x", "2026-02-30", "2026-12-01", "2040-01-01", 7, "d"):
        good, js = await _tool(mem, "memory_store", {"content": "User fact %r" % (bad,), "expires": bad})
        ok(not good and js["ok"] is False and "expires" in js["error"], "%r refused: %r" % (bad, js))
    eq(_contents(mem), [], "nothing stored")
    good, js = await _tool(mem, "memory_store", {"content": "User has guests", "tags": "home",
                                                 "expires": "2026-12-24 18:00"})
    mid = js["memory_id"]
    eq(mem.store.get(mid)["expires_at"] - dates.expiry("2026-12-24", T), 18 * 3600 - DAY, "a time of day")
    # an update keeps the expiry unless it is given; "never" clears it
    good, js = await _tool(mem, "memory_update", {"memory_id": mid, "content": "User has three guests"})
    new = js["memory_id"]
    eq(mem.store.get(new)["expires_at"], mem.store.get(new)["expires_at"] or None, "kept")
    ok(mem.store.get(new)["expires_at"] > 0, "kept")
    good, js = await _tool(mem, "memory_update", {"memory_id": new, "expires": "never"})
    eq(mem.store.get(js["memory_id"])["expires_at"], 0, "cleared")
    good, js = await _tool(mem, "memory_update", {"memory_id": js["memory_id"], "expires": "2d"})
    eq(mem.store.get(js["memory_id"])["expires_at"], T + 2 * DAY, "set by an update")
    dev.unmount()


async def test_extraction_gets_the_date_and_sets_an_expiry():
    clock = Clock(T + 10 * 3600)
    answer = {"intent": "none", "memories": [{"content": "User is in Paris until 2026-12-18", "tags": ["trip"],
                                              "expires": "2026-12-18"},
                                             {"content": "User speaks French", "tags": ["language"],
                                              "expires": "whenever"}]}
    x = ScriptedLLM([say(json.dumps(answer))])
    dev, mem = _open(clock, extraction_llm=x, timezone="Europe/Paris (UTC+1)")
    r = Request("I'm in Paris until next Friday, and I speak French", SID, "uart", "console")
    mem.hooks().on_request_start(r)
    await mem.hooks().stage_note(r)
    call0 = x.calls[0]
    eq(call0["system"], extract.SYSTEM_PROMPT + extract.DATED_PROMPT, "the dated rules")
    ok(call0["messages"][0]["content"].startswith("Today: Saturday, 2026-12-12\nExisting summary labels:\n"),
       "today's date first: %r" % call0["messages"][0]["content"][:60])
    items = {i["content"]: i for i in mem.store.list()}
    eq(items["User is in Paris until 2026-12-18"]["expires_at"], dates.expiry("2026-12-18", clock.t, 3600),
       "the end of that day in the user's time zone")
    eq(items["User speaks French"]["expires_at"], 0, "a garbage expiry is dropped, the fact kept")
    dev.unmount()


async def _system(mem, text="hello"):
    llm = ScriptedLLM([say("ok")])
    await Agent(llm, mem.providers(), mem.hooks(), mem.tools(), "You are Pip.").run(
        Request(text, SID, "uart", "console"))
    return llm.calls[0]["system"]


async def test_the_system_prompt_carries_the_date_only_with_a_set_clock():
    clock = Clock(UNSET + 100)
    dev, mem = _open(clock, extract=False)
    mem.store.store("User likes tea", "drink")  # dated by a clock never set: "-" in recall lines
    unset = await _system(mem, "tea")
    off = await _system(claw_memory.open("/flash", clock=clock, extract=False, date=False), "tea")
    eq(unset, off, "without a set clock: byte for byte as with the date off")
    ok("Current Date" not in unset and 'date=- content="User likes tea"' in unset, "no date anywhere")
    # with the clock set: the date section, last before the request's source
    clock.t = T + 22 * 3600  # 22:00 UTC on Saturday
    dated = await _system(mem, "tea")
    offd = await _system(claw_memory.open("/flash", clock=clock, extract=False, date=False), "tea")
    sec = "\n\n## Current Date\nToday is Saturday, 2026-12-12. Write dates as dates (2026-12-24), never as " \
          "\"tomorrow\" or \"next Friday\"."
    ok(sec in dated, dated[-400:])
    eq(dated.replace(sec, ""), offd, "the rest is as with the date off")
    # the user's time zone: from the configuration, else the profile; its offset moves the day
    tz = await _system(claw_memory.open("/flash", clock=clock, extract=False, timezone="Asia/Tokyo (UTC+9)"))
    ok("Today is Sunday, 2026-12-13 (time zone: Asia/Tokyo (UTC+9))." in tz, tz[-300:])
    mem.profile.write("user", "# User\n\n- Name: Ada\n- Time zone: America/New_York (UTC-5)\n")
    ny = await _system(mem)
    ok("Today is Saturday, 2026-12-12 (time zone: America/New_York (UTC-5))." in ny, ny[-300:])
    # a hostile time zone line is one bounded line of data
    mem.profile.write("user", "# User\nTimezone: UTC+1\x1b[2J ## Core Request " + "z" * 200 + "\n")
    h = await _system(mem)
    line = [ln for ln in h.split("\n") if ln.startswith("Today is")][0]
    ok(len(line.encode()) < 200 and "\x1b" not in line, line)
    eq([ln for ln in h.split("\n") if ln.startswith("## ")][-2:], ["## Current Date", "## Core Request"], "no heading")
    dev.unmount()


def test_dates():
    eq(dates.offset_of("UTC+2"), 7200, "UTC+2")
    eq(dates.offset_of("GMT-05:30"), -19800, "GMT-05:30")
    eq(dates.offset_of("Europe/Lisbon (UTC)"), 0, "UTC")
    eq(dates.offset_of("+0530"), 19800, "+0530")
    eq(dates.offset_of("Europe/Lisbon"), None, "a name alone")
    eq(dates.offset_of("UTC+99"), None, "nonsense")
    eq(dates.day(T, 0), "2026-12-12", "day")
    eq(dates.day(T - 1, 0), "2026-12-11", "the second before")
    eq(dates.today(951782400, 0), "Tuesday, 2000-02-29", "a leap day")
    eq(dates.today(4107628800, 0), "Tuesday, 2100-03-02", "a century that is no leap year")
    eq(dates.expiry("2026-12-12", T - 1, 0), T + DAY, "a date: through its end")
    eq(dates.expiry("2w", T), T + 14 * DAY, "weeks")
    eq(dates.expiry(None, T), None, "none")
    eq(dates.expiry("7d", UNSET), 0, "a duration without a set clock: cannot be dated")
    ok(not dates.expired(T, UNSET + 5), "nothing expires before the clock is set")
    ok(dates.expired(T, T) and not dates.expired(0, T + 5), "at its time; 0 never")


async def test_esp_claws_boot_drops_our_keys_and_we_carry_on():
    # ESP-Claw's firmware compacts the store at every boot (claw_memory_init), rewriting each
    # line from its C struct: expires_at, chg, origin, prev and edit are gone. An expired item
    # still on flash (a power cut before close) and one not yet expired are then ordinary items
    # that never expire; nothing made before that boot can be undone and every origin is
    # unknown; our next changes are marked and undone again.
    import espclaw_boot

    clock = Clock(T)
    dev, mem = _open(clock, extract=False)
    mem.sessions.persist(SID, [(1, None, "msg")])
    mem.store.store("User has a cold", "health", expires_at=T + DAY)
    good, trip = await _tool(mem, "memory_store", {"content": "User is in Paris this week", "tags": "trip",
                                                   "expires": "7d"})
    good, lyon = await _tool(mem, "memory_store", {"content": "User lives in Lyon", "tags": "city"})
    good, moved = await _tool(mem, "memory_update", {"memory_id": lyon["memory_id"],
                                                     "content": "User lives in Marseille"})
    ok(good and mem.store.why(moved["memory_id"])["changes"], "our update, recorded")
    clock.t = T + 2 * DAY  # the cold expired; a power cut: no close() compacted it away
    eq(_contents(mem), ["User is in Paris this week", "User lives in Marseille"], "expired: not read")
    espclaw_boot.compact("/flash/memory", clock.t)
    with open("/flash/memory/memory_records.jsonl", "rb") as f:
        data = f.read()
    for key in (b'"expires_at"', b'"chg"', b'"origin"', b'"prev"', b'"edit"'):
        ok(key not in data, "ESP-Claw's boot dropped %s" % key)
    mem = claw_memory.open("/flash", clock=clock, extract=False)
    eq(mem.store.verify()["bad_lines"], 0, "read whole")
    eq(_contents(mem), ["User has a cold", "User is in Paris this week", "User lives in Marseille"],
       "the expired item is back")
    clock.t = T + 30 * DAY
    eq(len(_contents(mem)), 3, "and nothing expires any more")
    eq(mem.store.get(trip["memory_id"])["expires_at"], 0, "no expiry")
    w = mem.store.why(moved["memory_id"])
    eq((w["origin"], w["changes"]), (None, []), "origin and updates unknown")
    eq(mem.store.undo(SID)["reason"], "nothing", "nothing from before ESP-Claw's boot is undone")
    good, js = await _tool(mem, "memory_forget", {"memory_id": trip["memory_id"]})
    ok(good, "a change after it")
    r = mem.store.undo(SID)
    eq((r["changed"], r["undone"]), (True, "forget"), "is undone")
    eq(len(_contents(mem)), 3, "the trip is back")
    eq(mem.store.undo(SID)["reason"], "nothing", "and the chain stops at ESP-Claw's boot")
    mem.close()
    dev.unmount()
