# The tools at their edges: a duplicate store (not a manual write, no new label), memory_list's
# 16 KiB bound and its closing tail, an update of the tags alone, the summary a write reports,
# empty arguments, the error envelope's key order, a blank profile update, and an extraction
# that replaces an item sharing only a keyword. Each test fails when its behaviour breaks;
# expectations are written out by hand. Public API only.
import json

from flashsim import mount
from mptest import eq, ok
from scripted_llm import ScriptedLLM, say

import claw_memory
from claw_memory._compat import local_time_str
from claw_memory.core import Request

HEAP = "8M"
SID = "chat:web:local:default_01"


def _answer(intent="none", *mems):
    return say(json.dumps({"intent": intent, "memories": [
        {"content": c, "tags": t, "keywords": k} for c, t, k in mems]}))


def _setup(**kw):
    dev = mount("lfs2", "/flash", blocks=256)
    mem = claw_memory.open("/flash", **kw)
    tools = {t.name: t for t in mem.tools()}
    return dev, mem, tools


async def _run(tools, name, args, request=None):
    raw = args if isinstance(args, str) else json.dumps(args)
    good, out = await tools[name].handler(raw, request or Request("t", SID, "web", "local"))
    return good, out, json.loads(out)


async def test_a_duplicate_memory_store_is_not_a_manual_write_and_adds_no_label():
    x = ScriptedLLM([_answer("none", ("User lives in Lisbon", ["city"], ["Lisbon"]))])
    dev, mem, tools = _setup(extraction_llm=x)
    mem.store.store("User likes sushi", "food")
    r = Request("I live in Lisbon and I like sushi", SID, "web", "local")
    mem.hooks().on_request_start(r)
    good, out, js = await _run(tools, "memory_store", {"content": "user likes SUSHI", "tags": "food"}, r)
    eq((good, js["changed"]), (True, False), "a duplicate")
    eq(await mem.hooks().stage_note(r), "Memory update: [city]", "the extraction is applied; food not noted")
    eq(sorted(i["content"] for i in mem.store.list()), ["User likes sushi", "User lives in Lisbon"], "stored")
    dev.unmount()


async def test_memory_list_never_exceeds_16384_bytes_and_fills_them():
    dev, mem, tools = _setup()
    for n in range(60):  # 255-byte contents of 3-byte characters, distinct from their first one
        mem.store.store(chr(0x4E00 + n) + "\u4e8c" * 84, "\u6807\u7b7e%d" % (n % 3), "\u4e8c")
    good, out, js = await _run(tools, "memory_list", {})
    size = len(out.encode())
    ok(size <= 16384, "%d bytes" % size)
    ok(size > 16384 - 1024, "no room left for another item (%d bytes)" % size)
    eq((js["truncated"], js["total"]), (True, 60), "truncated")
    dev.unmount()


def _listed(mid, content):
    # An item of memory_list as ESP-Claw's fields give it (stored at T0 with tags "t"), and its
    # date (no "from": a program's item, of unknown origin).
    return ('{"id":"%s","source":"manual","content":"%s","tags":"t","keywords":"t","created_at":1714000000,'
            '"updated_at":1714000000,"access_count":0,"deleted":false,"summary_ids":[1],"summary_labels":["t"],'
            '"date":"%s"}' % (mid, content, local_time_str(1714000000)[:10]))


async def test_memory_list_keeps_room_for_its_closing_tail():
    # Sizes by hand: the head {"ok":true,"action":"memory_list","changed":false,"items":[ is 59
    # bytes, an item 212 + its content, each after the first a comma more; the tail
    # ],"truncated":true,"total":60,"capacity":128} is 45. m000 (160-byte content: 372) and 47
    # more items (120-byte contents: 333 each with the comma) make 59 + 372 + 47 * 333 = 16082
    # bytes; one more item would make 16415, over 16384.
    dev, mem, tools = _setup(clock=lambda: 1714000000)
    first = "Fact 000 " + "x" * 151
    mem.store.store(first, "t", memory_id="m000")
    for n in range(1, 60):
        mem.store.store("Fact %03d " % n + "y" * 111, "t", memory_id="m%03d" % n)
    good, out, js = await _run(tools, "memory_list", {})
    ok(good, "listed")
    ok(len(out.encode()) <= 16384, "at most 16384 bytes (%d)" % len(out.encode()))
    ok(out.startswith('{"ok":true,"action":"memory_list","changed":false,"items":[' + _listed("m000", first) + ","),
       "the sizes above hold: %s" % out[:300])
    eq([i["id"] for i in js["items"]], ["m%03d" % n for n in range(48)], "48 items")
    eq((js["truncated"], js["total"], js["capacity"]), (True, 60, 128), "truncated")
    eq(len(out.encode()), 16127, "bytes")
    ok(out.endswith('],"truncated":true,"total":60,"capacity":128}'), "the tail whole")
    dev.unmount()


async def test_memory_update_of_the_tags_alone_changes_the_tags():
    dev, mem, tools = _setup()
    a, _ = mem.store.store("User drinks green tea every morning", "drink", "tea")
    good, out, js = await _run(tools, "memory_update", {"memory_id": a["id"], "tags": "beverage"})
    eq((good, js["changed"], js["summary"]), (True, True, "beverage"), "envelope")
    got = mem.store.get(js["memory_id"])
    eq((got["content"], got["tags"], got["keywords"]), ("User drinks green tea every morning", "beverage", "tea,drink,beverage"),
       "tags changed; keywords kept (drink occurs in the content) and topped up")
    dev.unmount()


async def test_the_summary_of_a_write_is_its_first_label():
    dev, mem, tools = _setup()
    r = Request("t", SID, "web", "local")
    good, out, js = await _run(tools, "memory_store", {"content": "User eats ramen in Tokyo", "tags": "food,japan"}, r)
    eq(js["summary"], "food", "first label")
    eq(await mem.hooks().stage_note(r), "Memory update: [food;japan]", "both labels noted")
    dev.unmount()


async def test_empty_arguments_are_an_empty_object():
    dev, mem, tools = _setup()
    mem.store.store("User likes sushi", "food")
    good, out, js = await _run(tools, "memory_recall", "")
    eq((good, js["ok"], len(js["items"])), (True, True, 1), "recall with no arguments")
    dev.unmount()


async def test_arguments_that_run_the_heap_out_by_their_shape_are_invalid_json():
    # 8,000 nested arrays (16 KB) as a tool call's arguments: about 0.5 MB to parse here;
    # with less free, the handler answers invalid_json (never a MemoryError the agent sees)
    import gc

    dev, mem, tools = _setup()
    bomb = "[" * 8000 + "]" * 8000
    gc.collect()
    hog = []
    while gc.mem_free() > 340000:
        hog.append(bytearray(32768))
    for name in ("memory_store", "memory_recall", "memory_update", "profile_update"):
        good, out = await tools[name].handler(bomb, Request("t", SID, "web", "local"))
        eq((good, out), (False, '{"ok":false,"error":"invalid_json"}'), name)
    del hog
    dev.unmount()


async def test_an_error_envelope_keeps_esp_claw_s_key_order():
    dev, mem, tools = _setup()
    good, out, js = await _run(tools, "memory_forget", {"memory_id": "mem-1-0001"})
    eq(good, False, "failed")
    ok(out.startswith('{"ok":false,"error":"memory_forget_failed","message":'), "order: %s" % out)
    ok(out.endswith(',"code":"ESP_ERR_NOT_FOUND"}'), "code last: %s" % out)
    dev.unmount()


async def test_profile_update_refuses_blank_text_and_reports_no_change():
    dev, mem, tools = _setup()
    before = mem.profile.read("user")
    good, out, js = await _run(tools, "profile_update", {"name": "user", "content": " \n\t "})
    eq((good, js["error"]), (False, "content is required"), "blank refused")
    eq(mem.profile.read("user"), before, "profile kept")
    good, out, js = await _run(tools, "profile_update", {"name": "user", "content": before})
    eq((good, js["changed"]), (True, False), "same text: unchanged")
    dev.unmount()


async def test_a_replace_forgets_an_item_sharing_only_a_keyword():
    x = ScriptedLLM([_answer("replace", ("User moved from Lisbon to Porto", ["home"], ["Lisbon"]))])
    dev, mem, tools = _setup(extraction_llm=x)
    mem.store.store("User lives in Lisbon", "city", "Lisbon")
    r = Request("I moved from Lisbon to Porto", SID, "web", "local")
    mem.hooks().on_request_start(r)
    eq(await mem.hooks().stage_note(r), "Memory update: [home]", "stored")
    eq([i["content"] for i in mem.store.list()], ["User moved from Lisbon to Porto"], "the old fact is forgotten")
    dev.unmount()


def test_a_profile_document_is_read_with_one_look_up_of_its_name():
    # The profile goes into every request: each document is opened once (a look-up of its
    # name reads the folder's metadata), not looked up for its size and opened again; what
    # it reads is still bounded by the document's size and max_bytes.
    from claw_memory import fsutil
    from claw_memory import profile as profile_mod

    for kind in ("lfs2", "fat"):
        dev = mount(kind, "/flash", blocks=256)
        mem = claw_memory.open("/flash", extract=False)
        mem.profile.write("user", "Name: Ada. " + "x" * 50)
        names = []

        def counting(path, *a):  # (every open and stat of the library's profile and fsutil)
            names.append(path.rsplit("/", 1)[-1])
            return open(path, *a)

        real_stat = fsutil._stat

        def stat(path):
            names.append(path.rsplit("/", 1)[-1])
            return real_stat(path)

        fsutil.open = profile_mod.open = counting
        fsutil._stat = stat
        try:
            docs = mem.profile.read()
        finally:
            del fsutil.open, profile_mod.open  # (the builtin again)
            fsutil._stat = real_stat
        eq(sorted(names), ["identity.md", "soul.md", "user.md"], kind + ": one look-up each")
        eq(docs["user"], "Name: Ada. " + "x" * 50, kind + ": the text")
        with open("/flash/memory/soul.md", "wb") as f:
            f.write(b"s" * (mem.profile.max_bytes + 100))
        eq(len(mem.profile.read("soul")), mem.profile.max_bytes, kind + ": cut at max_bytes")
        mem.close()
        dev.unmount()
