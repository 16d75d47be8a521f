# Soak: 5,000 turns over 10 sessions (compactions, /session new and delete) and
# more than 1,000 store, update and forget operations through the memory tools. File sizes
# stay bounded, the heap does not grow from turn to turn, nothing raises.
#
# In two phases that run in parallel, each a data root of its own with five of the ten chats:
# every session gets exactly the turns it gets in one run of all ten (the turn numbers, and so
# the compactions and the new/delete points, are the same), and each phase's store sees more
# than 1,000 store/update/forget operations of its own.
import gc
import json

from flashsim import mount
from mptest import ok, timeout

import claw_memory
from claw_memory import fsutil
from claw_memory.core import Request
from claw_memory.session import SIZE_LIMIT

HEAP = "48M"
SLOW = True
TURNS = 5000
CHATS = 10
TOPICS = ("tea", "coffee", "bikes", "music", "garden", "travel", "books", "cats", "chess", "rain",
          "bread", "piano")


def _turn(n):
    call = ('{"role":"assistant","content":null,"tool_calls":[{"id":"c%d","type":"function",'
            '"function":{"name":"sensor","arguments":"{}"}}]}' % n)
    res = '[{"role":"tool","tool_call_id":"c%d","content":"%s","is_error":false}]' % (n, "reading " * 60)
    return ((1, None, "Turn %d: how is the weather today, and should I water the plants?" % n),
            [(3, call, None), (4, res, None)],
            (2, None, "Turn %d: mild and dry, so yes, water them this evening. " % n + "details " * 20))


async def _soak(chats):
    dev = mount("lfs2", "/flash", blocks=1280)  # 5 MiB
    t = [1714000000]

    def clock():
        t[0] += 7
        return t[0]

    mem = claw_memory.open("/flash", clock=clock, extract=False)
    tools = {x.name: x for x in mem.tools()}
    memory_ops = 0
    ids = []
    blocked = deleted = 0
    heap = []
    biggest = {"session": 0, "records": 0, "digest": 0}
    turns = [n for n in range(TURNS) if n % CHATS in chats]  # this phase's turns
    for i, n in enumerate(turns):
        chat = "u%d" % (n % CHATS)
        sid = mem.chats.session_id("web", chat)
        if mem.sessions.blocked(sid) or n % 2500 >= 2500 - CHATS:
            # Now and then a user starts a new session and deletes the old one (what a
            # blocked session would ask for; compaction keeps them from blocking).
            old = sid.rsplit(":", 1)[1]
            ok(mem.session_command("web", chat, "new").startswith("Started"), "new session")
            ok(mem.session_command("web", chat, "delete " + old).startswith("Deleted"), "old deleted")
            blocked += 1
            deleted += 1
            sid = mem.chats.session_id("web", chat)
        user, tool_round, final = _turn(n)
        mem.sessions.persist(sid, [user])
        mem.sessions.persist(sid, tool_round)
        mem.sessions.persist(sid, [final], turn_completed=True)
        size = fsutil.size(mem.sessions.path(sid))
        ok(size <= SIZE_LIMIT + 4096, "session %s within the limit plus one turn: %d" % (sid, size))
        biggest["session"] = max(biggest["session"], size)
        # A memory operation on three turns out of four, through the tools the LLM calls;
        # the number of items stays around 40 (stores and forgets balance).
        r = Request("x", sid, "web", chat)
        k = n % 4
        topic = TOPICS[(n // 4) % len(TOPICS)]
        if k == 0 or (k == 2 and len(ids) <= 40):
            good, out = await tools["memory_store"].handler(json.dumps(
                {"content": "Fact %d: the user thinks about %s at turn %d" % (n, topic, n), "tags": topic,
                 "keywords": topic}), r)
            ok(good, "store")
            ids.append(json.loads(out)["memory_id"])
            memory_ops += 1
        elif k == 1 and ids:
            good, out = await tools["memory_update"].handler(json.dumps(
                {"memory_id": ids.pop(0), "content": "Updated fact at turn %d about %s" % (n, topic)}), r)
            ok(good, "update")
            ids.append(json.loads(out)["memory_id"])
            memory_ops += 1
        elif k == 2:
            good, out = await tools["memory_forget"].handler(json.dumps({"memory_id": ids.pop(0)}), r)
            ok(good, "forget")
            memory_ops += 1
        else:
            await tools["memory_recall"].handler(json.dumps({"summary_labels": [topic]}), r)
        await mem.hooks().stage_note(r)
        if i % 25 == 24:  # every 50 turns of the whole run
            rec = fsutil.size(mem.store.records_path)
            dig = fsutil.size(mem.store.digest_path)
            biggest["records"] = max(biggest["records"], rec)
            biggest["digest"] = max(biggest["digest"], dig)
            ok(rec <= 32768 + 8192, "records bounded: %d" % rec)
            ok(dig <= 32768 + 1024, "digest bounded: %d" % dig)
        if i % 125 == 124:  # every 250 turns of the whole run
            gc.collect()
            heap.append(gc.mem_alloc())
    mem.close()
    print("chats %s: turns %d, memory operations %d, sessions blocked and replaced %d" % (
        chats, len(turns), memory_ops, blocked))
    print("largest session %d B, records %d B, digest %d B" % (
        biggest["session"], biggest["records"], biggest["digest"]))
    print("heap after every 250 turns of the whole run:", heap)
    ok(memory_ops >= 1000, "at least 1000 store/update/forget operations")
    ok(blocked >= len(chats), "every chat went through a new session and a delete")
    ok(not any(mem.sessions.blocked(mem.chats.session_id("web", "u%d" % c)) for c in chats),
       "compaction with hysteresis: no session blocked")
    # Medians of the second and the last quarter: the live heap swings by a few KiB with
    # what the caches hold at the moment of the sample.
    q = len(heap) // 4
    growth = sorted(heap[-q:])[q // 2] - sorted(heap[q:2 * q])[q // 2]
    print("heap growth from the second to the last quarter (medians): %d B" % growth)
    ok(growth <= 4096, "the heap does not grow from turn to turn (%d B)" % growth)
    dev.unmount()


@timeout(900)
async def test_soak_chats_0_to_4():
    await _soak(range(0, 5))


@timeout(900)
async def test_soak_chats_5_to_9():
    await _soak(range(5, 10))
