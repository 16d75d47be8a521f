# Forget removes an item everywhere: from every file within 5 changes, or at close(), across
# a reboot too, and from pending extraction answers that would store it again. Deleting a
# session removes its history files.
import json

from flashsim import mount
from mptest import Clock, eq, ok
from scripted_llm import ScriptedLLM, say

import claw_memory
from claw_memory.core import Request

HEAP = "8M"
SID = "chat:web:u:default_01"
SECRET = "User's PIN is 4711"


def _read(path):
    with open(path, "rb") as f:
        return f.read()


# (the tests' clock is fixed: a real one puts "4711" into an id or a time now and then, and
# the secret's keyword would then be found where it is not)
def _everywhere(mem):
    from claw_memory import fsutil

    return {name: fsutil.exists(path) and (SECRET.encode() in _read(path) or b"4711" in _read(path))
            for name, path in (("records", mem.store.records_path), ("index", mem.store.index_path),
                               ("md", mem.store.md_path), ("digest", mem.store.digest_path))}


_NOWHERE = {"records": False, "index": False, "md": False, "digest": False}


async def test_forget_removes_the_item_everywhere():
    dev = mount("lfs2", "/flash", blocks=256)
    x = ScriptedLLM([say(json.dumps({"intent": "none", "memories": [{"content": SECRET, "tags": ["pin"],
                                                                     "keywords": ["4711"]}]}))])
    mem = claw_memory.open("/flash", extraction_llm=x, clock=Clock())
    it, _ = mem.store.store(SECRET, "pin", "4711")
    mem.store.store("User likes tea", "drink")
    mem.flush()
    eq(_everywhere(mem), {"records": True, "index": True, "md": True, "digest": False}, "stored everywhere")
    # A request whose extraction would store the secret again is still pending...
    pending = Request("my PIN is 4711", "chat:web:other:default_01", "web", "other")
    mem.hooks().on_request_start(pending)
    # ...when another request forgets it.
    tools = {t.name: t for t in mem.tools()}
    good, out = await tools["memory_forget"].handler(json.dumps({"memory_id": it["id"]}),
                                                     Request("forget my PIN", SID, "web", "u"))
    ok(good, "forgotten")
    eq(await mem.hooks().stage_note(pending), None, "the pending extraction does not store it again")
    mem.close()
    eq(_everywhere(mem), _NOWHERE, "gone from every file at close()")
    eq([i["content"] for i in list(mem.store.list())], ["User likes tea"], "the rest kept")
    dev.unmount()


def test_forgotten_text_leaves_every_file_within_5_changes_across_a_reboot():
    dev = mount("lfs2", "/flash", blocks=256)
    mem = claw_memory.open("/flash", extract=False, clock=Clock())
    it, _ = mem.store.store(SECRET, "pin", "4711")
    for n in range(5):
        mem.store.store("Filler fact number %d about gardens" % n, "garden")
    mem.store.compact()  # records, index and MEMORY.md hold the secret; no change since
    mem.store.forget(it["id"])  # change 1 since the last compaction
    ok(_everywhere(mem) != _NOWHERE, "not yet everywhere gone: compaction waits for 5 changes")
    dev = dev.reboot()  # no close(): a power cut
    mem = claw_memory.open("/flash", extract=False, clock=Clock())
    changes = 0
    while _everywhere(mem) != _NOWHERE:
        mem.store.store("Another fact number %d about boats" % changes, "boat")
        changes += 1
        ok(changes <= 4, "gone within 5 changes of the forget (the reboot did not reset the count)")
    eq(mem.store.get(it["id"]), None, "forgotten")
    dev.unmount()


def test_deleting_a_session_removes_its_files():
    dev = mount("lfs2", "/flash", blocks=256)
    mem = claw_memory.open("/flash", extract=False, clock=Clock())
    mem.chats.session_id("web", "u")
    mem.session_command("web", "u", "new secret")
    sid = mem.chats.session_id("web", "u")
    mem.sessions.persist(sid, [(1, None, "private words")], turn_completed=True)
    mem.sessions.persist(sid, [(1, None, "unfinished private words")])
    mem.session_command("web", "u", "switch default_01")
    eq(mem.session_command("web", "u", "delete secret"), "Deleted session: secret", "deleted")
    import os
    eq([n for n in os.listdir("/flash/sessions") if n.startswith("s_chat_web_u_secret")], [], "no files left")
    dev.unmount()
