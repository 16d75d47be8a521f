# Session history: stat and list (an unfinished turn, a pending first turn, records logged after
# the index), and one data root written through several opens (the cache, close, the index ESP-
# Claw replays). Each test fails when its behaviour breaks; expectations are written out by hand
# or read from the files the way ESP-Claw reads them, never computed with the code under test.
# Public API only.
from flashsim import mount
from mptest import eq, ok
from turns import (SID, call as _call, esp_replay as _esp_replay, final as _final, log as _log,
                   result as _result, tags as _tags, turn as _turn, user as _user)

import claw_memory
from claw_memory import fsutil, session

HEAP = "8M"


def _fresh(kind="lfs2", blocks=256, **kw):
    dev = mount(kind, "/flash", blocks=blocks)
    return dev, claw_memory.open("/flash", **kw)


def test_stat_counts_the_records_of_the_unfinished_turn():
    dev, mem = _fresh()
    _turn(mem.sessions, 1)
    mem.sessions.persist(SID, [(1, _user(2), None)])
    st = mem.sessions.stat(SID)
    eq((st["records"], st["pending"]), (5, 1), "4 logged + 1 pending")
    dev.unmount()


def test_list_shows_a_session_whose_first_turn_is_still_pending():
    dev, mem = _fresh()
    mem.sessions.persist(SID, [(1, _user(1), None)])
    got = [(e["file"], e["records"], e["pending"]) for e in mem.sessions.list()]
    eq(got, [(session.file_name(SID), 1, 1)], "listed")
    dev.unmount()


def test_sessions_that_left_the_cache_are_whole_after_close():
    # More sessions than the cache holds, two turns each (the second waits in the index lag):
    # after close() every index holds every record, as ESP-Claw reads it.
    dev, mem = _fresh()
    sids = ["many_%d" % k for k in range(7)]
    for n in (1, 2):
        for sid in sids:
            _turn(mem.sessions, n, tools=False, sid=sid)
    mem.close()
    for sid in sids:
        eq([r["content"] for r in _esp_replay(_log(sid))], ["user 1", "final 1", "user 2", "final 2"],
           "index of %s" % sid)
    dev.unmount()


def test_a_cached_session_sees_turns_written_through_another_open():
    dev, a = _fresh()
    _turn(a.sessions, 1, tools=False)
    eq(len(a.sessions.messages(SID)), 2, "cached in a")
    b = claw_memory.open("/flash")
    eq(len(b.sessions.messages(SID)), 2, "b reads a's turn")
    _turn(b.sessions, 2, tools=False)
    eq(_tags(a.sessions.messages(SID)), [("user", "1"), ("final", "1"), ("user", "2"), ("final", "2")],
       "a sees b's turn")
    _turn(a.sessions, 3, tools=False)
    eq(len(b.sessions.messages(SID)), 6, "b sees a's next turn")
    dev.unmount()


def test_a_cached_session_sees_a_whole_turn_another_open_logged_in_one_call():
    # Turns logged in one persist call each (no pending file), b keeping its index entries in
    # RAM: only the log grew, and a's cached state must notice it.
    dev, a = _fresh()
    a.sessions.persist(SID, [(1, _user(1), None), (2, _final(1), None)], turn_completed=True)
    eq(fsutil.size(_log() + ".pending"), -1, "(no pending file)")
    b = claw_memory.open("/flash")
    b.sessions.persist(SID, [(1, _user(2), None), (2, _final(2), None)], turn_completed=True)
    _turn(a.sessions, 3, tools=False)
    want = [("user", "1"), ("final", "1"), ("user", "2"), ("final", "2"), ("user", "3"), ("final", "3")]
    eq(_tags(a.sessions.messages(SID)), want, "a's history holds b's turn and its own next one")
    a.close()
    b.close()
    eq([(r["role"], r["content"]) for r in _esp_replay(_log())],
       [("user", "user 1"), ("assistant", "final 1"), ("user", "user 2"), ("assistant", "final 2"),
        ("user", "user 3"), ("assistant", "final 3")], "ESP-Claw's replay")
    dev.unmount()


def test_two_opens_writing_one_session_leave_an_index_esp_claw_replays_once():
    dev, a = _fresh()
    b = claw_memory.open("/flash")
    _turn(a.sessions, 1, tools=False)
    eq(len(b.sessions.messages(SID)), 2, "b opens the session after a's first turn")
    _turn(b.sessions, 2, tools=False)
    _turn(a.sessions, 3, tools=False)
    _turn(b.sessions, 4, tools=False)
    a.close()
    b.close()
    want = ["user 1", "final 1", "user 2", "final 2", "user 3", "final 3", "user 4", "final 4"]
    eq([r["content"] for r in _esp_replay(_log())], want, "ESP-Claw's replay")
    eq([m["content"] for m in claw_memory.open("/flash").sessions.messages(SID)], want, "ours")
    dev.unmount()


def test_list_counts_records_logged_after_the_index_through_another_open():
    dev, a = _fresh()
    _turn(a.sessions, 1, tools=False)  # the first turn creates the .idx
    _turn(a.sessions, 2, tools=False)  # its entries wait in RAM (index_every 4)
    b = claw_memory.open("/flash")
    eq([(e["records"], e["bytes"]) for e in b.sessions.list()], [(4, fsutil.size(_log()))],
       "every logged record counted")
    dev.unmount()


def test_a_responses_session_emptied_by_firmware_without_format_3_opens_empty():
    # Records persisted under openai_responses are indexed with backend format 3 (ESP-Claw's
    # line A). Firmware whose session_history_backend_format_valid() accepts 0..2 takes that
    # .idx for an invalid pair and session_history_recreate_file() empties the log and
    # rewrites the .idx as a bare header; we then open an empty, valid session and go on.
    import struct

    dev, mem = _fresh(extract=False)
    mem.sessions.persist(SID, [(1, None, "where is the wombat")], backend="openai_responses")
    mem.sessions.persist(SID, [(2, '{"role":"assistant","content":"in the zoo"}', None)],
                         turn_completed=True, backend="openai_responses")
    mem.close()
    log = "/flash/sessions/" + session.file_name(SID)
    with open(log + ".idx", "rb") as f:
        idx = f.read()
    eq([idx[8 + 10 * i + 9] for i in range((len(idx) - 8) // 10)], [3, 3], "format 3, user record too")
    with open(log, "wb"):
        pass
    with open(log + ".idx", "wb") as f:
        f.write(struct.pack("<IHH", 0x58444843, 1, 10))
    mem = claw_memory.open("/flash", extract=False)
    eq(mem.sessions.messages(SID), [], "emptied")
    eq(mem.search("wombat"), [], "no stale hit from the text index")
    rep = mem.sessions.verify(SID)
    eq((rep["records"], rep["dropped"], rep["rebuilt_index"]), (0, 0, False), "a valid, empty pair")
    mem.sessions.persist(SID, [(1, None, "hello again")], turn_completed=True)
    eq(mem.sessions.messages(SID), [{"role": "user", "content": "hello again"}], "and used again")
    mem.close()
    dev.unmount()


def test_list_of_a_fresh_open_marks_pending_and_blocked_sessions_exactly():
    # The listing learns which sessions have a pending turn or a block marker from one walk
    # of the folder, and each log's size from it (no lookup of those names per session): a
    # fresh open (nothing cached), named and unnamed sessions, each with and without a
    # pending turn or a marker, on LittleFS and FAT, row by row against the files.
    import os

    for kind in ("lfs2", "fat"):
        dev, mem = _fresh(kind)
        mem.chats.session_id("web", "a")
        for alias in ("b", "c", "d"):
            mem.session_command("web", "a", "new " + alias)
        named = ["chat:web:a:" + x for x in ("default_01", "b", "c", "d")]
        loose = ["loose_%d" % k for k in range(4)]
        for i, sid in enumerate(named + loose):
            if i % 4 != 3:  # (the fourth of each: only a pending first turn)
                _turn(mem.sessions, 1, tools=False, sid=sid)
            if i % 2:
                mem.sessions.persist(sid, [(1, _user(2), None)])  # (a turn not completed)
        mem.close()
        for sid in (named[1], loose[2]):
            with open(_log(sid) + ".blocked", "wb") as f:
                f.write(b"")
        mem = claw_memory.open("/flash")
        got = {}
        for r in mem.sessions.list():
            got[r["file"]] = (r["id"], r["bytes"], r["records"], r["pending"], r["blocked"])
        want = {}
        for i, sid in enumerate(named + loose):
            try:
                size = os.stat(_log(sid))[6]
            except OSError:
                size = 0
            logged = 0 if i % 4 == 3 else 2
            pend = i % 2
            want[session.file_name(sid)] = (sid if i < 4 else None, size, logged + pend, pend,
                                            sid in (named[1], loose[2]))
        eq(got, want, "%s: every row" % kind)
        dev.unmount()


class _Lookups:
    """Counts the look-ups of the session's files through fsutil.size/exists (the checks
    that a cached session's files are still as it knows them, and of its block marker)."""

    def __init__(self, log):
        self.log = log
        self.n = 0
        self.size, self.exists = fsutil.size, fsutil.exists

    def _count(self, fn):
        def w(path):
            if path.startswith(self.log):
                self.n += 1
            return fn(path)
        return w

    def __enter__(self):
        fsutil.size, fsutil.exists = self._count(self.size), self._count(self.exists)
        return self

    def __exit__(self, *exc):
        fsutil.size, fsutil.exists = self.size, self.exists
        return False


def _agent_turn(mem, n, sid=SID):
    import asyncio

    from scripted_llm import ScriptedLLM, call, say

    from claw_memory.agent import Agent
    from claw_memory.core import Request

    llm = ScriptedLLM([call("memory_list", {}), say("answer %d" % n)])
    ag = Agent(llm, mem.providers(), mem.hooks(), mem.tools(), "You are a helpful agent.")
    return asyncio.run(ag.run(Request("question %d" % n, sid, channel="web", chat_id="u1")))


def test_a_turn_checks_its_session_files_only_after_other_writes():
    # On the board's flash only this program writes: a cached session's sizes and its block
    # marker are looked up again only when something was written since they were checked
    # (each look-up reads the folder's metadata; a turn used to make 12). A turn through the
    # agent (gate, the user's record, the history, a tool round, the answer) then makes one.
    # A write by another open (or the store) moves fsutil.writes: the next use checks again,
    # and sees the other open's turn or block marker.
    for kind in ("lfs2", "fat"):
        dev, mem = _fresh(kind, extract=False)
        _agent_turn(mem, 1)
        with _Lookups(_log()) as lk:
            _agent_turn(mem, 2)
        eq(lk.n, 1, kind + ": a turn nothing else wrote in checks only its log's size, once (the "
                        "pending file's header names it)")
        eq(len(mem.sessions.messages(SID)), 8, kind + ": two turns of a tool round each")
        other = claw_memory.open("/flash", extract=False)
        _turn(other.sessions, 3, tools=False)
        with _Lookups(_log()) as lk:
            got = _tags(mem.sessions.messages(SID))[-2:]
        eq(got, [("user", "3"), ("final", "3")], kind + ": the other open's turn seen")
        ok(lk.n >= 3, kind + ": after it, the files looked up again: %d" % lk.n)
        eq(mem.sessions.blocked(SID), False, kind + ": not blocked")
        fsutil.write_file(_log() + ".blocked", b"")  # (as another open's compaction)
        mem.sessions.messages(SID)  # (its sizes checked again: the same, the marker not one)
        eq(mem.sessions.blocked(SID), True, kind + ": a block marker seen after another write")
        other.close()
        mem.close()
        dev.unmount()


class _Reads:
    """Counts the opens of `path` for reading (each one a look-up of its name)."""

    def __init__(self, path):
        import builtins

        self.b = builtins
        self.path = path
        self.n = 0

    def __enter__(self):
        self.open = self.b.open

        def counted(path, mode="r", *a):
            if path == self.path and mode == "rb":
                self.n += 1
            return self.open(path, mode, *a)

        self.b.open = counted
        return self

    def __exit__(self, *exc):
        self.b.open = self.open
        return False


def test_a_requests_passes_take_a_small_pending_turn_from_ram():
    # The turn's user message is in the pending file when the request's history is made: the
    # session keeps the bytes it wrote there (up to 1 KiB: State.pcopy), and the snapshot, the
    # passes (the length, then the body of each LLM call) and the completion read them there,
    # not through opens of the file. A longer message is read from the file each time. Both
    # are sent whole.
    import asyncio

    from scripted_llm import ScriptedLLM, call, say

    from claw_memory.agent import Agent
    from claw_memory.core import Request

    for kind in ("lfs2", "fat"):
        dev, mem = _fresh(kind, blocks=512, extract=False)
        _agent_turn(mem, 1)
        # (a longer one: the snapshot, the length, two bodies, ScriptedLLM's messages() check
        # of each, the completion)
        for text, opens in (("water the tomatoes on Friday?", 0), ("long " * 300, 7)):
            llm = ScriptedLLM([call("memory_list", {}), say("done")])
            ag = Agent(llm, mem.providers(), mem.hooks(), mem.tools(), "You are a helpful agent.")
            with _Reads(_log() + ".pending") as rd:
                asyncio.run(ag.run(Request(text, SID, channel="web", chat_id="u1")))
            eq(rd.n, opens, "%s, %d bytes: the pending file read never, or at every step"
               % (kind, len(text)))
            for c in llm.calls:  # (ScriptedLLM checks the streamed bytes against messages())
                users = [m["content"] for m in c["messages"] if m.get("role") == "user"]
                eq(users[-1], text, "%s: the turn's message sent whole" % kind)
        mem.close()
        dev.unmount()


def test_a_pending_turn_another_writer_changed_is_read_from_the_file():
    # The session's copy of the pending turn it wrote is used only while nothing was written
    # since its files were checked: a rewrite of the same length (FAT rewrites in place)
    # by another writer is what the history shows and the completion logs.
    from claw_memory import fsutil

    for kind in ("lfs2", "fat"):
        dev, mem = _fresh(kind, blocks=512, extract=False)
        s = mem.sessions
        _turn(s, 0, tools=False)
        s.persist(SID, [(1, None, "feed the cat")])
        pend = _log() + ".pending"
        with open(pend, "rb") as f:
            data = f.read()
        fsutil.write_file(pend, data.replace(b"feed the cat", b"walk the dog"))  # (the count moves)
        eq([m["content"] for m in s.messages(SID)][-1], "walk the dog", kind + ": the history")
        s.persist(SID, [(2, None, "done")], turn_completed=True)
        with open(_log(), "rb") as f:
            logged = f.read()
        ok(b"walk the dog" in logged and b"feed the cat" not in logged, kind + ": the log")
        mem.close()
        dev.unmount()


def test_a_relative_folder_on_the_flash_is_taken_as_the_boards():
    # (a board's scripts often open the data root by a path relative to "/")
    import os

    dev = mount("lfs2", "/flash", blocks=256)
    here = os.getcwd()
    os.chdir("/flash")
    try:
        mem = claw_memory.open("data", extract=False)
        sid = "chat:web:rel:default_01"
        mem.sessions.persist(sid, [(1, None, "one"), (2, None, "two")], turn_completed=True)
        with _Lookups(mem.sessions.path(sid)) as lk:
            eq(len(mem.sessions.messages(sid)), 2, "read")
            mem.sessions.persist(sid, [(1, None, "three"), (2, None, "four")], turn_completed=True)
            mem.sessions.persist(sid, [(1, None, "five"), (2, None, "six")], turn_completed=True)
        eq(lk.n, 1, "nothing looked up again but the block marker, once")
        mem.close()
    finally:
        os.chdir(here)
    dev.unmount()


def test_on_the_hosts_filesystem_every_use_checks_the_files():
    # Another process may write a folder of the host's: nothing is taken as checked there.
    import os
    import time

    d = "/tmp/claw_opens_%d" % time.ticks_us()
    mem = claw_memory.open(d, extract=False)
    sid = "chat:web:host:default_01"
    try:
        mem.sessions.persist(sid, [(1, None, "one"), (2, None, "two")], turn_completed=True)
        log = mem.sessions.path(sid)
        with open(log, "ab") as f:  # (another process's append, its index entry missing)
            f.write(b'{"role":"user","content":"three"}\n')
        with _Lookups(log) as lk:
            got = [m["content"] for m in mem.sessions.messages(sid)]
        eq(got, ["one", "two", "three"], "the other process's record seen")
        ok(lk.n >= 1, "its files looked up")
    finally:
        mem.close()
        _rmtree(d)


def _rmtree(path):
    import os

    for name, kind, *_ in os.ilistdir(path):
        p = path + "/" + name
        if kind == 0x4000:
            _rmtree(p)
        else:
            os.remove(p)
    os.rmdir(path)


def test_close_leaves_the_turn_another_open_began_after_its_own():
    # One open's turn leaves the pending file stale; another open on the root then begins a
    # turn there (the file holds its acknowledged record). The first open's close must not
    # take the file for its own stale one: the other open completes its turn whole. (On the
    # host's filesystem too, where nothing is taken as checked.)
    import time

    for kind in ("lfs2", "fat", "host"):
        root = "/tmp/claw_close_%d" % time.ticks_us() if kind == "host" else "/flash"
        dev = None if kind == "host" else mount(kind, "/flash", blocks=256)
        a = claw_memory.open(root, extract=False)
        b = claw_memory.open(root, extract=False)
        _turn(a.sessions, 0, tools=False)
        _turn(a.sessions, 1)  # (a longer turn: FAT then rewrites the file in place, its size kept)
        b.sessions.persist(SID, [(1, _user(2), None)])
        a.close()
        b.sessions.persist(SID, [(2, _final(2), None)], turn_completed=True)
        want = [("user", "0"), ("final", "0"), ("user", "1"), ("call", "1"), ("tool", "1"),
                ("final", "1"), ("user", "2"), ("final", "2")]
        eq(_tags(b.sessions.messages(SID, tokens=0)), want, kind + ": the other open's turn whole")
        b.close()
        eq(_tags(claw_memory.open(root, extract=False).sessions.messages(SID, tokens=0)), want,
           kind + ": reopened")
        if dev is None:
            _rmtree(root)
        else:
            dev.unmount()


def test_index_entries_are_dropped_for_a_log_another_open_rewrote_with_an_index_as_long():
    # Another open of the program rewrote the log and its index (as a compaction does), the
    # new index as long as the one this open's state names: the end its append finds is
    # the one expected, but the entries waiting in RAM point into the old log. They are
    # dropped (the next open indexes what the log holds), never appended.
    from claw_memory.session import format as fmt_

    for kind in ("lfs2", "fat"):
        dev, mem = _fresh(kind, extract=False)
        _turn(mem.sessions, 1, tools=False)  # (the first turn's entries reach the index)
        _turn(mem.sessions, 2, tools=False)
        _turn(mem.sessions, 3, tools=False)  # (these two wait in RAM: index_every 4)
        with open(_log(), "rb") as f:
            lines = f.read().split(b"\n")[:-1]
        kept = lines[-2:]  # (the newest turn, as a compaction keeps it)
        ents = fmt_.entry(0, len(kept[0]) + 1, 1, 0) + fmt_.entry(len(kept[0]) + 1, len(kept[1]) + 1, 2, 0)
        eq(fsutil.size(_log() + ".idx"), len(fmt_.HEADER + ents), "(an index of the same size)")
        fsutil.write_file(_log(), b"\n".join(kept) + b"\n")  # (through the library: counted)
        fsutil.write_file(_log() + ".idx", fmt_.HEADER + ents)
        mem.sessions.flush()
        eq([m["content"] for m in _esp_replay(_log())], ["user 3", "final 3"],
           kind + ": the other open's index as it wrote it")
        mem.close()
        dev.unmount()


def test_a_turn_another_open_went_on_with_is_completed_whole():
    # a begins a turn, b (another open of the root) persists its tool round, a completes it:
    # the turn holds every record, in order, for both and for ESP-Claw.
    for kind in ("lfs2", "fat"):
        dev = mount(kind, "/flash", blocks=256)
        a = claw_memory.open("/flash")
        _turn(a.sessions, 0, tools=False)
        a.sessions.persist(SID, [(1, _user(1), None)])
        b = claw_memory.open("/flash")
        b.sessions.persist(SID, [(3, _call(1), None), (4, _result(1), None)])
        a.sessions.persist(SID, [(2, _final(1), None)], turn_completed=True)
        want = [("user", "0"), ("final", "0"), ("user", "1"), ("call", "1"), ("tool", "1"), ("final", "1")]
        eq(_tags(a.sessions.messages(SID)), want, "%s: a's history" % kind)
        eq(_tags(b.sessions.messages(SID)), want, "%s: b's history" % kind)
        a.close()
        b.close()
        got = []
        for r in _esp_replay(_log()):
            got += _tags(r if isinstance(r, list) else [r])
        eq(got, want, "%s: ESP-Claw's replay" % kind)
        dev.unmount()
