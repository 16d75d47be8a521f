# The tools the LLM calls: success and error envelopes of every one, and the bookkeeping
# (manual write, labels for the stage note) a write leaves behind.
import json

from flashsim import mount
from mptest import eq, ok

import claw_memory
from claw_memory.core import Request

HEAP = "8M"
SID = "chat:web:local:default_01"


def _setup():
    dev = mount("lfs2", "/flash", blocks=256)
    mem = claw_memory.open("/flash")
    tools = {t.name: t for t in mem.tools(session_command=True)}
    return dev, mem, tools


async def _run(tools, name, args, request=None):
    raw = args if isinstance(args, str) else json.dumps(args)
    ok_, out = await tools[name].handler(raw, request or Request("t", SID, "web", "local"))
    return ok_, out, json.loads(out) if out.startswith("{") else out


def test_schemas_are_esp_claw_s():
    dev, mem, tools = _setup()
    eq(sorted(tools), ["memory_forget", "memory_list", "memory_recall", "memory_search", "memory_store", "memory_undo",
                       "memory_update", "profile_read", "profile_update", "session_command"], "names")
    eq(json.loads(tools["memory_store"].schema),
       {"type": "object", "properties": {"memory_id": {"type": "string"}, "content": {"type": "string"},
                                         "tags": {"type": "string"}, "keywords": {"type": "string"},
                                         "expires": {"type": "string"}},
        "required": ["content"]}, "memory_store schema (ESP-Claw's, and expires)")
    eq(json.loads(tools["memory_update"].schema)["required"], ["memory_id"], "memory_update schema")
    eq(json.loads(tools["memory_recall"].schema),
       {"type": "object", "properties": {"summary_labels": {"type": "array", "items": {"type": "string"}},
                                         "query": {"type": "string"}, "limit": {"type": "integer"}}},
       "memory_recall schema (ESP-Claw's, and query)")
    eq(json.loads(tools["memory_list"].schema), {"type": "object", "properties": {}}, "memory_list schema")
    eq(json.loads(tools["memory_forget"].schema),
       {"type": "object", "properties": {"memory_id": {"type": "string"}}, "required": ["memory_id"]},
       "memory_forget schema")
    for t in tools.values():
        ok(len(t.description) > 20, "%s has a description" % t.name)
    dev.unmount()


async def test_memory_store():
    dev, mem, tools = _setup()
    r = Request("t", SID, "web", "local")
    good, out, js = await _run(tools, "memory_store", {"content": "User likes sushi", "tags": "food", "keywords": "sushi"}, r)
    ok(good, "ok")
    ok(out.startswith('{"ok":true,"action":"memory_store","changed":true,"memory_id":"mem-'), "envelope order")
    eq(js["summary"], "food", "primary label")
    ok(r.id in mem._hooks._manual, "marked as a manual write")
    eq(await mem.hooks().stage_note(r), "Memory update: [food]", "labels noted")
    good, out, js = await _run(tools, "memory_store", {"content": "user likes SUSHI"})
    eq((good, js["changed"], js["action"]), (True, False, "memory_store"), "duplicate: changed false")
    good, out, js = await _run(tools, "memory_store", {"content": "  "})
    eq((good, out), (False, '{"ok":false,"error":"content is required"}'), "empty content")
    good, out, js = await _run(tools, "memory_store", "{broken")
    eq((good, out), (False, '{"ok":false,"error":"invalid_json"}'), "bad JSON")
    good, out, js = await _run(tools, "memory_store", "[1,2]")
    eq(js["error"], "invalid_json", "not an object")
    good, out, js = await _run(tools, "memory_store", {"content": "tags as array", "tags": ["a", "b"]})
    eq(mem.store.get(js["memory_id"])["tags"], "a,b", "array tags accepted")
    good, out, js = await _run(tools, "memory_store", {"content": "x", "memory_id": "../bad"})
    eq((good, js["error"], js["code"]), (False, "memory_store_failed", "ESP_ERR_INVALID_ARG"), "bad id")
    good, out, js = await _run(tools, "memory_store", {"content": 12})
    eq(js["error"], "content is required", "non-string content")
    n = mem.store.count()
    good, out, js = await _run(tools, "memory_store", {"content": "an id that is a number", "memory_id": 42})
    eq((good, js["error"], js["code"], js["message"]), (False, "memory_store_failed", "ESP_ERR_INVALID_ARG",
                                                       "memory_id must be a string"), "non-string id refused")
    eq(mem.store.count(), n, "nothing stored")
    dev.unmount()


async def test_memory_recall():
    dev, mem, tools = _setup()
    mem.store.store("User likes sushi", "food")
    mem.store.store("User lives in Osaka", "city")
    good, out, js = await _run(tools, "memory_recall", {"summary_labels": ["food"]})
    ok(good, "ok")
    ok(out.startswith('{"ok":true,"action":"memory_recall","changed":false,"items":[{"id":"mem-'), "envelope")
    eq([i["content"] for i in js["items"]], ["User likes sushi"], "items")
    eq(js["items"][0]["summary_labels"], ["food"], "item shape with labels")
    eq(sorted(js["items"][0]), sorted(["id", "source", "content", "tags", "keywords", "created_at",
                                        "updated_at", "access_count", "deleted", "summary_ids",
                                        "summary_labels", "date"]), "full item, with its date (a set clock)")
    good, out, js = await _run(tools, "memory_recall", {"summary_labels": ["fod"]})
    eq(good, True, "returned as a normal result (ESP-Claw returns it with ESP_OK)")
    eq(js, {"ok": False, "error": "invalid_summary_labels",
            "message": "summary_labels must be copied exactly from the current memory summary label catalog",
            "invalid_label": "fod", "available_summary_labels": ["food", "city"]}, "invalid label")
    good, out, js = await _run(tools, "memory_recall", {})
    eq(len(js["items"]), 2, "no labels: everything")
    good, out, js = await _run(tools, "memory_recall", {"summary_labels": ["food"], "limit": "x"})
    eq(len(js["items"]), 1, "a non-number limit is ignored")
    good, out, js = await _run(tools, "memory_recall", {"summary_labels": "food"})
    eq((good, js), (False, {"ok": False, "error": "memory_recall_failed", "code": "ESP_ERR_INVALID_ARG",
                            "message": "summary_labels must be an array of labels"}), "labels not in an array")
    good, out, js = await _run(tools, "memory_recall", {"summary_labels": ["x" * 70000]})
    ok(len(out) < 2000, "an invalid label is echoed cut, not whole (%d bytes)" % len(out))
    eq(js["invalid_label"], "x" * 61 + "...", "cut to 64 characters")
    good, out, js = await _run(tools, "memory_recall", {"limit": 1})
    eq(len(js["items"]), 1, "limit")
    good, out, js = await _run(tools, "memory_recall", "nonsense")
    eq((good, js["error"]), (False, "invalid_json"), "bad JSON")
    dev.unmount()


async def test_memory_recall_by_query():
    dev, mem, tools = _setup()
    mem.store.store("User likes sushi with green tea", "food")
    mem.store.store("User lives in Osaka near the castle", "city")
    mem.store.store("User drinks green tea at work", "drink")
    good, out, js = await _run(tools, "memory_recall", {"query": "where does the user live?"})
    ok(out.startswith('{"ok":true,"action":"memory_recall","changed":false,"items":[{"id":"mem-'), "envelope")
    eq([i["content"] for i in js["items"]], ["User lives in Osaka near the castle"], "query only")
    eq(sorted(js["items"][0]), sorted(["id", "source", "content", "tags", "keywords", "created_at",
                                        "updated_at", "access_count", "deleted", "summary_ids",
                                        "summary_labels", "date"]), "ESP-Claw's item and its date")
    good, out, js = await _run(tools, "memory_recall", {"query": "green tea", "summary_labels": ["drink"]})
    eq([i["content"] for i in js["items"]], ["User drinks green tea at work"], "labels filter, query ranks")
    good, out, js = await _run(tools, "memory_recall", {"query": "green tea"})
    eq(len(js["items"]), 2, "both tea facts")
    good, out, js = await _run(tools, "memory_recall", {"query": "green tea", "summary_labels": ["drnk"]})
    eq((good, js["error"], js["invalid_label"]), (True, "invalid_summary_labels", "drnk"), "invalid label: ESP-Claw's error")
    good, out, js = await _run(tools, "memory_recall", {"query": "violin lessons"})
    eq(js["items"], [], "nothing matches: no items")
    good, out, js = await _run(tools, "memory_recall", {"query": ""})
    eq(len(js["items"]), 3, "an empty query: as without one")
    for bad in (42, ["green", "tea"], {"q": "tea"}, True):
        good, out, js = await _run(tools, "memory_recall", {"query": bad})
        eq((good, js["error"], js["message"]), (False, "memory_recall_failed", "query must be text"), repr(bad))
    good, out, js = await _run(tools, "memory_recall", {"query": "tea " * 50000 + "\u0000\ud800 osaka"})
    ok(good and len(js["items"]) >= 1, "a huge hostile query is cut and still answered")
    good, out, js = await _run(tools, "memory_recall", {"query": '"},{"ok":false} osaka\n- [x] castle'})
    eq([i["content"] for i in js["items"]], ["User lives in Osaka near the castle"], "structure in a query is text")
    dev.unmount()


async def test_memory_list_update_forget():
    dev, mem, tools = _setup()
    a, _ = mem.store.store("User likes sushi", "food")
    good, out, js = await _run(tools, "memory_list", "ignored, even invalid JSON")
    eq((good, js["action"], js["changed"], len(js["items"])), (True, "memory_list", False, 1), "list")
    r = Request("t", SID, "web", "local")
    good, out, js = await _run(tools, "memory_update", {"memory_id": a["id"], "content": "User likes ramen"}, r)
    ok(good and js["changed"] and js["memory_id"] != a["id"], "update gives a new id")
    eq(js["summary"], "food", "summary label")
    ok(r.id in mem._hooks._manual, "manual write")
    new_id = js["memory_id"]
    good, out, js = await _run(tools, "memory_update", {"memory_id": new_id, "content": "User likes ramen"})
    eq((js["changed"], js["memory_id"]), (False, new_id), "unchanged: same id")
    good, out, js = await _run(tools, "memory_update", {"content": "x"})
    eq((good, out), (False, '{"ok":false,"error":"memory_id is required"}'), "missing id")
    good, out, js = await _run(tools, "memory_update", {"memory_id": a["id"], "content": "x"})
    eq((good, js["error"], js["code"]), (False, "memory_update_failed", "ESP_ERR_NOT_FOUND"), "old id gone")
    good, out, js = await _run(tools, "memory_forget", {"memory_id": new_id})
    eq(js, {"ok": True, "action": "memory_forget", "changed": True, "memory_id": new_id, "summary": "food"},
       "forget envelope")
    good, out, js = await _run(tools, "memory_forget", {"memory_id": new_id})
    eq((good, js["error"], js["code"]), (False, "memory_forget_failed", "ESP_ERR_NOT_FOUND"), "twice")
    good, out, js = await _run(tools, "memory_forget", {})
    eq(js["error"], "memory_id is required", "missing id")
    good, out, js = await _run(tools, "memory_forget", "{")
    eq(js["error"], "invalid_json", "bad JSON")
    dev.unmount()


async def test_memory_list_is_bounded():
    dev, mem, tools = _setup()
    for n in range(120):
        mem.store.store("A long distinct memory number %d about %s" % (n, "x" * 150), "bulk%d" % (n % 7))
    good, out, js = await _run(tools, "memory_list", {})
    ok(len(out.encode()) <= 16384, "bounded output: 16 KiB of UTF-8, envelope included")
    eq((js["truncated"], js["total"]), (True, 120), "says it is truncated")
    ok(0 < len(js["items"]) < 120, "some items")
    dev.unmount()


async def test_profile_tools():
    dev, mem, tools = _setup()
    good, out, js = await _run(tools, "profile_read", {"name": "soul"})
    eq((good, js["name"], js["path"]), (True, "soul", "/flash/memory/soul.md"), "read")
    ok(js["content"].startswith("# Soul"), "content")
    good, out, js = await _run(tools, "profile_update", {"name": "identity", "content": "# Identity Card\n\n- Name: Pip\n"})
    eq((good, js["changed"]), (True, True), "updated")
    eq(mem.profile.read("identity"), "# Identity Card\n\n- Name: Pip\n", "on disk")
    for bad, err in (({"name": "../x", "content": "y"}, "name must be one of user, soul, identity"),
                     ({"name": "user"}, "content is required"), ("{", "invalid_json")):
        good, out, js = await _run(tools, "profile_update", bad)
        eq((good, js["error"]), (False, err), "error %r" % (bad,))
    good, out, js = await _run(tools, "profile_read", {"name": 5})
    eq(js["error"], "name must be one of user, soul, identity", "bad name")
    dev.unmount()


async def test_session_command_tool():
    dev, mem, tools = _setup()
    eq(mem.chats.session_id("web", "local"), SID, "first use of the chat")
    good, out, js = await _run(tools, "session_command", {"command": "new project-a"})
    eq(out, "Started a new session: project-a", "new")
    good, out, js = await _run(tools, "session_command", {"command": "list"})
    eq(out, "Sessions:\n* default_01\n* project-a (current)", "list")
    good, out, js = await _run(tools, "session_command", {"command": "list"}, Request("t", SID))
    eq(out, "Session command failed: missing chat context.", "no chat context")
    good, out, js = await _run(tools, "session_command", "[1]")
    ok(out.startswith("Usage:"), "not an object: usage")
    # Agent 2's request manages agent 2's sessions of the chat, not agent 0's
    a2 = Request("t", mem.chats.session_id("web", "local", 2), "web", "local")
    good, out, js = await _run(tools, "session_command", {"command": "new side"}, a2)
    eq(out, "Started a new session: side", "agent 2: new")
    eq(mem.chats.session_id("web", "local", 2), "agent:2:chat:web:local:side", "agent 2's current session")
    eq(mem.chats.session_id("web", "local"), "chat:web:local:project-a", "agent 0's unchanged")
    good, out, js = await _run(tools, "session_command", {"command": "list"}, a2)
    eq(out, "Sessions:\n* default_01\n* side (current)", "agent 2: its own list")
    eq(mem.session_command("web", "local", "switch default_01", 2), "Switched to session: default_01",
       "Memory.session_command with agent=")
    eq(mem.chats.session_id("web", "local", 2), "agent:2:chat:web:local:default_01", "agent 2 switched")
    eq(mem.chats.session_id("web", "local"), "chat:web:local:project-a", "agent 0's still unchanged")
    dev.unmount()
