# /session new|list|switch|delete and the chat maps (ESP-Claw §12).
import json
import os

from flashsim import mount
from mptest import eq, ok

import claw_memory
from claw_memory import chats, fsutil
from claw_memory.chats import USAGE

HEAP = "4M"
MAPS = "/flash/sessions/chat_map"


def _setup():
    dev = mount("lfs2", "/flash", blocks=128)
    return dev, claw_memory.open("/flash")


def test_ids_and_map_files():
    dev, mem = _setup()
    eq(mem.chats.session_id("feishu", "room42"), "chat:feishu:room42:default_01", "first id")
    eq(chats.chat_key("feishu", "room42", agent=2), "agent:2:chat:feishu:room42", "agent key")
    name = chats.map_file("chat:feishu:room42")
    ok(name.startswith("chat_chat_feishu_room42_") and name.endswith(".json"), name)
    eq(os.listdir(MAPS), [name], "one map")
    with open(MAPS + "/" + name) as f:
        eq(json.loads(f.read()), {"chat_key": "chat:feishu:room42", "current_alias": "default_01",
                                  "sessions": ["default_01"]}, "map content")
    eq(chats.map_file("chat:a//b::c!!"), "chat_chat_a_b_c_%08x.json" % chats.text.fnv1a32(b"chat:a//b::c!!"),
       "runs collapsed, trailing _ dropped")
    ok(len(chats.map_file("chat:" + "x" * 100)) == len("chat_") + 24 + 1 + 8 + 5, "cut to 24")
    dev.unmount()


def test_every_command_path():
    dev, mem = _setup()
    c = lambda cmd: mem.session_command("web", "u1", cmd)  # noqa: E731
    mem.chats.session_id("web", "u1")
    eq(c("list"), "Sessions:\n* default_01 (current)", "list")
    eq(c("new"), "Started a new session: default_02", "new without a name")
    eq(c("new project-a"), "Started a new session: project-a", "new with a name")
    eq(mem.chats.session_id("web", "u1"), "chat:web:u1:project-a", "the new session is current")
    eq(c("new project-a"), 'Cannot create session "project-a": a session with that name already exists.', "dup")
    eq(c("switch default_01"), "Switched to session: default_01", "switch")
    eq(c("switch nope"), 'Cannot switch to session "nope": no such session. Send /session list to list sessions.',
       "switch unknown")
    eq(c("delete default_01"), 'Cannot delete the current session "default_01". Switch to another session first.',
       "delete current")
    eq(c("delete nope"), 'Cannot delete session "nope": no such session. Send /session list to list sessions.',
       "delete unknown")
    mem.sessions.persist("chat:web:u1:project-a", [(1, None, "old talk")], turn_completed=True)
    ok(mem.sessions.stat("chat:web:u1:project-a")["records"] == 1, "history exists")
    eq(c("delete project-a"), "Deleted session: project-a", "delete")
    eq(mem.sessions.stat("chat:web:u1:project-a")["records"], 0, "history removed")
    eq(c("list"), "Sessions:\n* default_01 (current)\n* default_02", "after delete")
    eq(c("  list  "), "Sessions:\n* default_01 (current)\n* default_02", "spaces")
    eq(mem.session_command(None, "u1", "list"), "Session command failed: missing chat context.", "no channel")
    eq(mem.session_command("web", "", "list"), "Session command failed: missing chat context.", "no chat id")
    dev.unmount()


def test_usage_for_every_malformed_command():
    dev, mem = _setup()
    for bad in ("", None, "bogus", "list x", "switch", "delete", "new a b", "newer x",
                "new " + "a" * 33, "new ../x", "new a/b", "new é", "new a\x00", "x" * 96, 42,
                "switch ..", "delete /"):
        eq(mem.session_command("web", "u2", bad), USAGE, "usage for %r" % (bad,))
    ok(USAGE.startswith("Usage:\n/session new [name]       Create and switch to a new session\n"), "usage text")
    ok(USAGE.endswith("may only contain A-Z, a-z, 0-9, _ or -."), "usage end")
    eq(mem.session_command("web", "u2", "new " + "a" * 32), "Started a new session: " + "a" * 32, "32 is fine")
    eq(os.listdir(MAPS), [chats.map_file("chat:web:u2")], "hostile names made no files")
    dev.unmount()


def test_at_most_32_sessions():
    dev, mem = _setup()
    for n in range(32):
        ok(mem.session_command("web", "u3", "new").startswith("Started"), "session %d" % n)
    full = ("Cannot create a new session: this chat already has 32 sessions. Delete one with "
            "/session delete <name> first.")
    eq(mem.session_command("web", "u3", "new"), full, "33rd refused: the limit, not a storage error")
    eq(mem.session_command("web", "u3", "new named"), full, "a named 33rd too")
    eq(len(mem.chats.aliases("web", "u3")[1]), 32, "nothing added")
    ok("default_32" in mem.session_command("web", "u3", "list"), "default_NN up to 32")
    dev.unmount()


def test_damaged_maps_are_repaired():
    dev, mem = _setup()
    mem.chats.session_id("web", "u4")
    mem.session_command("web", "u4", "new work")
    path = MAPS + "/" + chats.map_file("chat:web:u4")
    for bad, want in (
        (b"{garbage", "default_01"),
        (b'{"chat_key":"chat:web:OTHER","current_alias":"work","sessions":["work"]}', "default_01"),
        (b'{"chat_key":"chat:web:u4","current_alias":"gone","sessions":["ok1","../bad","ok1","ok2"]}', "ok1"),
        (b"[1,2]", "default_01"),
    ):
        with open(path, "wb") as f:
            f.write(bad)
        eq(mem.chats.session_id("web", "u4"), "chat:web:u4:" + want, "repaired %r" % bad[:20])
        with open(path) as f:
            m = json.loads(f.read())
        ok(m["current_alias"] in m["sessions"], "valid map written")
    dev.unmount()


def test_bounds_of_chat_keys_commands_and_agent_numbers_hold_exactly():
    # A chat key of 479 bytes (its ids fit 512 with a 32-character alias) is a chat, 480 is
    # not; a command of 95 bytes is read, 96 is not; agent numbers up to 4294967295 (ten
    # digits) are read from ids, larger ones are no agent's.
    dev, mem = _setup()
    chat = "u" * (479 - len("chat:web:"))
    eq(mem.chats.session_id("web", chat), "chat:web:%s:default_01" % chat, "479 bytes")
    try:
        mem.chats.session_id("web", chat + "u")
        ok(False, "480 bytes accepted")
    except ValueError:
        pass
    eq(mem.session_command("web", "u1", "list" + " " * 91), "Sessions:\n* default_01 (current)", "95 bytes")
    eq(mem.session_command("web", "u1", "list" + " " * 92), USAGE, "96 bytes")
    eq(chats.agent_of("agent:4294967295:chat:web:u1:default_01"), 4294967295, "ten digits")
    eq(chats.agent_of("agent:4294967296:chat:web:u1:default_01"), 0, "over 32 bits")
    eq(chats.agent_of("agent:10000000000:chat:web:u1:default_01"), 0, "eleven digits")
    dev.unmount()


def test_a_repaired_maps_aliases_are_written_back():
    # Aliases named twice, invalid ones, more than 32: the map read keeps the valid ones
    # once, the first 32, and is written back so; a copy of the map under another file name
    # is no chat's (each() lists the chat once).
    dev, mem = _setup()
    key = "chat:web:u9"
    mem.chats.session_id("web", "u9")
    path = MAPS + "/" + chats.map_file(key)
    names = ["s%02d" % n for n in range(34)]
    for sessions, current, want in ((["ok1", "../bad", "ok1", "ok2"], "ok2", ["ok1", "ok2"]),
                                    (names, "s05", names[:32])):
        with open(path, "w") as f:
            f.write(json.dumps({"chat_key": key, "current_alias": current, "sessions": sessions}))
        eq(mem.chats.aliases("web", "u9"), (current, want), "read: %r" % sessions[:4])
        with open(path) as f:
            eq(json.loads(f.read()), {"chat_key": key, "current_alias": current, "sessions": want},
               "written back: %r" % sessions[:4])
    with open(path, "rb") as f:
        raw = f.read()
    with open(MAPS + "/" + chats.map_file("chat:web:other"), "wb") as f:
        f.write(raw)
    eq([(k, c) for k, c, _ in mem.chats.each()], [(key, "s05")], "the copy under another name is skipped")
    eq(len(list(mem.chats.ids())), 32, "its ids once")
    eq(mem.chats.names("chat:web:nomap:default_01"), False, "a chat without a map names no session")
    mem.chats.session_id("web", "nomap")
    eq(mem.chats.names("chat:web:nomap:default_01"), True, "its map, once made, names default_01")
    dev.unmount()


def test_a_map_with_a_stray_tail_is_read_as_esp_claw_reads_it():
    # ESP-Claw reads a map with cJSON_Parse over the file as a C string: the first value, the
    # rest (a stray byte, a torn second copy, anything after a NUL) ignored. Ours reads the
    # same aliases and leaves the file as it is; a map cut inside its value is still repaired.
    dev, mem = _setup()
    u5 = 'u5 "}{quoted\\"'  # (escapes in the map's strings: the value's end is found past them)
    mem.chats.session_id("web", u5)
    mem.session_command("web", u5, "new work")
    path = MAPS + "/" + chats.map_file("chat:web:" + u5)
    with open(path, "rb") as f:
        good = f.read()
    for tail in (b"x", b"\n}", b'{"chat_key":"chat:web:u5","current', b"\x00garbage", b' ]"}{', b"\x00" * 5000):
        with open(path, "wb") as f:
            f.write(good + tail)
        eq(mem.chats.aliases("web", u5), ("work", ["default_01", "work"]), "tail %r" % tail[:20])
        eq(mem.chats.session_id("web", u5), "chat:web:%s:work" % u5, "current kept, tail %r" % tail[:20])
        eq(mem.chat_sessions(("web", u5)), ("chat:web:%s:default_01" % u5, "chat:web:%s:work" % u5), "scope")
        with open(path, "rb") as f:
            eq(f.read(), good + tail, "not rewritten")
    for bad in (good[:-1], good[:5] + b"\x00" + good[5:], b"x" + good):
        with open(path, "wb") as f:
            f.write(bad)
        eq(mem.chats.session_id("web", u5), "chat:web:%s:default_01" % u5, "cut or preceded: repaired %r" % bad[:8])
        mem.session_command("web", u5, "new work")
    dev.unmount()


def test_an_agent_esp_claws_ids_cannot_name_is_refused():
    # ESP-Claw numbers agents with a uint32 ("agent:%u:..."): anything else is refused, and
    # no chat map is written for it.
    dev, mem = _setup()
    for agent in ("2", -1, 2 ** 32, True, 1.5, None):
        for call in (lambda: mem.session_command("web", "u1", "new side", agent),
                     lambda: mem.chats.session_id("web", "u1", agent),
                     lambda: mem.chat_sessions(("web", "u1"), agent),
                     lambda: mem.search("x", chat=("web", "u1"), agent=agent)):
            try:
                call()
                ok(False, "agent %r accepted" % (agent,))
            except ValueError as e:
                eq(str(e), "agent must be 0..2**32-1", "agent %r" % (agent,))
        ok(mem.memory_command("web", "u1", "undo", agent).startswith("Memory command failed: agent must be"),
           "/memory answers with the reason, agent %r" % (agent,))
    eq(os.listdir(MAPS) if "chat_map" in os.listdir("/flash/sessions") else [], [], "no map written")
    eq(mem.chats.session_id("web", "u1", 2 ** 32 - 1), "agent:4294967295:chat:web:u1:default_01", "the largest")
    eq(chats.agent_of("agent:\u0662:chat:web:u1:default_01"), 0, "an Arabic-Indic digit is no agent number")
    dev.unmount()


def test_a_deletion_cut_while_its_journal_is_written_deletes_no_other_session():
    # A cut while /session delete writes its journal leaves it empty (or unreadable): that
    # names no alias, so nothing is deleted on the next read of the map, not even the
    # session whose id is the chat key with an empty alias (any id is a session's id).
    dev = mount("lfs2", "/flash", blocks=128)
    mem = claw_memory.open("/flash")
    mem.chats.session_id("web", "u5")
    eq(mem.session_command("web", "u5", "new work"), "Started a new session: work", "new")
    eq(mem.session_command("web", "u5", "switch default_01"), "Switched to session: default_01", "switch")
    for sid in ("chat:web:u5:work", "chat:web:u5:default_01", "chat:web:u5:"):
        mem.sessions.persist(sid, [(1, None, "talk in " + sid)], turn_completed=True)
    mem.close()
    image = dev.image()
    dev = dev.restore(image)
    ops0 = dev.ops
    eq(claw_memory.open("/flash").session_command("web", "u5", "delete work"), "Deleted session: work", "delete")
    total = dev.ops - ops0
    empty = 0
    for n in range(total):
        dev = dev.restore(image)
        dev.cut_power(n)
        try:
            claw_memory.open("/flash").session_command("web", "u5", "delete work")
        except OSError:
            pass
        dev = dev.reboot()
        path = MAPS + "/" + chats.map_file("chat:web:u5") + ".deleting"
        try:
            with open(path, "rb") as f:
                empty += f.read() == b""
        except OSError:
            pass
        mem = claw_memory.open("/flash")
        current, aliases = mem.chats.aliases("web", "u5")
        work = [m["content"] for m in mem.sessions.messages("chat:web:u5:work")]
        if "work" in aliases:
            eq(work, ["talk in chat:web:u5:work"], "cut %d: work listed, with its history" % n)
        else:
            eq(work, [], "cut %d: work deleted, its history too" % n)
        eq((current, [a for a in aliases if a != "work"]), ("default_01", ["default_01"]), "cut %d: map" % n)
        for sid in ("chat:web:u5:default_01", "chat:web:u5:"):
            eq([m["content"] for m in mem.sessions.messages(sid)], ["talk in " + sid], "cut %d: %s kept" % (n, sid))
    ok(empty > 0, "some cut left an empty journal")
    dev.unmount()


def test_a_deletion_journal_whose_chat_map_is_gone_is_finished():
    # The journal of a /session delete, and no chat map any more (another program removed it):
    # the session goes, the journal too, and the chat reads as one without a map.
    dev = mount("lfs2", "/flash", blocks=128)
    mem = claw_memory.open("/flash")
    mem.chats.session_id("web", "u6")
    mem.sessions.persist("chat:web:u6:work", [(1, None, "talk")], turn_completed=True)
    mem.close()
    path = mem.chats._path("chat:web:u6")
    with open(path + ".deleting", "wb") as f:
        f.write(b"work")
    os.remove(path)
    mem = claw_memory.open("/flash")  # (a journal is left by a cut: the next boot finds it)
    eq(mem.chats.aliases("web", "u6"), None, "no map")
    ok(not mem.sessions.messages("chat:web:u6:work"), "the session deleted")
    eq(sorted(n for n in os.listdir("/flash/sessions/chat_map")), [], "no journal left")
    dev.unmount()


def _chat_with_work(kind, chat, *others):
    # A fresh flash whose sector writes are whole (as an SD card's: on raw flash a cut
    # between a sector's erase and its program loses the folder), and a chat with two
    # sessions: default_01 (current) and work, which holds one turn ("talk").
    dev = mount(kind, "/flash", blocks=128, erase_on_write=False)
    mem = claw_memory.open("/flash")
    for c in (chat,) + others:
        mem.chats.session_id("web", c)
    eq(mem.session_command("web", chat, "new work"), "Started a new session: work", "new")
    mem.sessions.persist("chat:web:%s:work" % chat, [(1, None, "talk")], turn_completed=True)
    eq(mem.session_command("web", chat, "switch default_01"), "Switched to session: default_01", "switch")
    return dev, mem


def test_a_map_write_that_failed_is_settled_by_the_same_memory():
    # A chat's leftovers of an interrupted write are looked for once (not on every turn), so
    # a write of the map, or a deletion, that fails in a running memory (the flash gone, then
    # back: the same Chats) must make the next use look again. FAT's replace removes the map
    # before the rename: a cut there leaves only the tmp, and a chat that did not adopt it
    # would lose its sessions (its next turn makes a fresh map); a deletion's journal left
    # would delete the session at the next boot, after the chat had it back.
    before = ("default_01", ["default_01", "work"])
    cases = (("switch work", (before, ("work", ["default_01", "work"]))),
             ("delete work", (before, ("default_01", ["default_01"]))))
    for kind in ("fat", "lfs2"):
        for command, outcomes in cases:
            dev, mem = _chat_with_work(kind, "u7", "other")
            path = mem.chats._path("chat:web:u7")
            image = dev.image()
            ops0 = dev.ops
            ok(mem.session_command("web", "u7", command).split()[0] in ("Switched", "Deleted"), command)
            total = dev.ops - ops0
            lost = 0
            for n in range(total):
                what = "%s, %s, cut %d" % (kind, command, n)
                dev = dev.restore(image)
                mem = claw_memory.open("/flash")
                mem.chats.session_id("web", "other")  # (another chat's map settled first)
                eq(mem.chats.aliases("web", "u7"), before, what + ": before")
                dev.cut_power(n)
                mem.session_command("web", "u7", command)  # (its failure: an answer)
                dev = dev.reboot()
                lost += not fsutil.exists(path)
                got = mem.chats.aliases("web", "u7")  # (the same memory: no reboot of ours)
                ok(got in outcomes, "%s: %r" % (what, got))
                ok(not fsutil.exists(path + ".tmp") and not fsutil.exists(path + ".deleting"), what + ": leftovers")
                talk = [m["content"] for m in mem.sessions.messages("chat:web:u7:work")]
                eq(talk, ["talk"] if "work" in got[1] else [], what + ": the session's history")
            ok(kind == "lfs2" or command != "switch work" or lost, "fat: some cut left the map only as its tmp")
            dev.unmount()


def test_a_map_write_that_failed_in_another_memory_is_settled_too():
    # Several claw_memory.open() on one root may take turns (docs/FORMAT.md): a chat that
    # memory A has looked at (its leftovers settled) and that memory B then fails to write
    # (the flash gone, then back) must not lose its sessions in A: on FAT a cut inside the
    # replace leaves the map only as its tmp, which A's next turn must adopt, not start a
    # fresh map over; and B's deletion journal left must not delete, at the next boot, the
    # session A's user has switched to and talked in since.
    before = ("default_01", ["default_01", "work"])
    cases = (("switch work", (before, ("work", before[1]))),
             ("delete work", (before, ("default_01", ["default_01"]))))
    for kind in ("fat", "lfs2"):
        for command, outcomes in cases:
            dev, mem = _chat_with_work(kind, "u8")
            mem.close()
            image = dev.image()
            b = claw_memory.open("/flash")
            ops0 = dev.ops
            b.session_command("web", "u8", command)
            total = dev.ops - ops0
            b.close()
            for n in range(total):
                what = "%s, %s, cut %d" % (kind, command, n)
                dev = dev.restore(image)
                a = claw_memory.open("/flash")
                b = claw_memory.open("/flash")
                eq(a.chats.aliases("web", "u8"), before, what + ": A before")
                dev.cut_power(n)
                b.session_command("web", "u8", command)  # (its failure: an answer)
                dev = dev.reboot()
                sid = a.chats.session_id("web", "u8")  # (A's next turn)
                got = a.chats.aliases("web", "u8")
                ok(got in outcomes and sid.endswith(":" + got[0]), "%s: A's chat %r" % (what, got))
                back = "work" in got[1]  # (A's user goes back to the session A lists)
                if back:
                    reply = a.session_command("web", "u8", "switch work")
                    # (B's deletion, journaled, may be finished first: then work is gone)
                    back = reply == "Switched to session: work"
                    ok(back or reply.startswith('Cannot switch to session "work": no such'), what + ": " + reply)
                if back:
                    a.sessions.persist("chat:web:u8:work", [(2, None, "more")], turn_completed=True)
                a.close()
                c = claw_memory.open("/flash")  # (the next boot)
                eq(c.chats.aliases("web", "u8"), ("work", before[1]) if back else
                   ("default_01", ["default_01"]) if command == "delete work" else before,
                   what + ": the next boot's view")
                talk = [m["content"] for m in c.sessions.messages("chat:web:u8:work")]
                eq(talk, ["talk", "more"] if back else [] if command == "delete work" else ["talk"],
                   what + ": work's history")
                c.close()
            dev.unmount()
