# claw_memory.session on simulated flash: names, formats, persist, repair, compaction,
# blocking, replay, paging.
import json
import os
import struct

from flashsim import mount, tree
from mptest import eq, ok, raises

from claw_memory import fsutil, session
from claw_memory.core import SessionBlocked
from claw_memory.session import BLOCK_TEXT, Sessions
from claw_memory.session.format import index_dir, tix as tix_of

HEAP = "8M"
D = "/flash/sessions"


def _fresh(kind="lfs2", **kw):
    dev = mount(kind, "/flash", blocks=256)
    fsutil.makedirs(D)
    return dev, Sessions(D, **kw)


def _read(path):
    with open(path, "rb") as f:
        return f.read()


def _write(path, data):
    with open(path, "wb") as f:
        f.write(data)


def _esp_validate(log):
    """ESP-Claw's session_history_validate_pair (§6.1), byte for byte; returns entries."""
    idx = _read(log + ".idx")
    data = _read(log)
    ok(len(idx) >= 8 and (len(idx) - 8) % 10 == 0, "index size")
    eq(struct.unpack("<IHH", idx[:8]), (0x58444843, 1, 10), "index header")
    ents = []
    for k in range(8, len(idx), 10):
        off, ln, t, fmt = struct.unpack("<IIBB", idx[k:k + 10])
        ok(1 <= t <= 4 and fmt <= 3, "entry type/format")
        ok(ln > 0 and off <= len(data) and ln <= len(data) - off, "entry inside the log")
        eq(data[off + ln - 1:off + ln], b"\n", "record ends with a newline")
        ents.append((off, ln, t, fmt))
    if not ents:
        eq(len(data), 0, "no entries means an empty log")
    return ents


def _turn(sessions, sid, n, tool=True, backend="openai", pad=0):
    sessions.persist(sid, [(1, None, "question %d %s" % (n, "q" * pad))])
    if tool:
        call = '{"role":"assistant","content":null,"tool_calls":[{"id":"c%d","type":"function","function":{"name":"t","arguments":"{}"}}]}' % n
        res = '[{"role":"tool","tool_call_id":"c%d","content":"%s","is_error":false}]' % (n, "r" * pad)
        sessions.persist(sid, [(3, call, None), (4, res, None)], backend=backend)
    return sessions.persist(sid, [(2, '{"role":"assistant","content":"answer %d"}' % n, "answer %d" % n)],
                            turn_completed=True, backend=backend)


def test_file_names_match_esp_claw_vectors():
    eq(session.file_name("chat:feishu:room42:default_01"), "s_chat_feishu_room42_defau_e5deae0b.log", "feishu")
    eq(session.file_name("chat:web:local:default_01"), "s_chat_web_local_default_0_964a2a51.log", "web")
    eq(session.file_name(""), "s_default_811c9dc5.log", "empty")
    eq(session.file_name("会话"), "s________c9d580af.log", "6 underscores for 6 bytes")
    eq(session.file_name("tg-chat-42:room-7"), "s_tg-chat-42_room-7_fba4fa77.log", "'-' is kept")


def test_ids_of_up_to_512_bytes_and_only_log_names_as_files():
    # Session ids are 1..512 bytes; a file name given instead of an id names a log in the
    # sessions folder, never a path through another folder.
    dev, s = _fresh()
    sid = "x" * 512
    s.persist(sid, [(1, None, "hi")])
    eq(s.messages(sid), [{"role": "user", "content": "hi"}], "a 512-byte id")
    eq(s.path(sid), D + "/s_xxxxxxxxxxxxxxxxxxxxxxxx_509c85c5.log", "its file")
    raises(ValueError, s.persist, sid + "x", [(1, None, "hi")])
    for name in ("s_a/../s_b.log", "s_x/y.log", "/s_x.log"):
        raises(ValueError, s.messages, None, file=name)
        raises(ValueError, s.records, None, file=name)
    dev.unmount()


def test_hostile_ids_stay_inside_the_directory():
    dev, s = _fresh()
    for sid in ("../x", "/", "a/../../b", "x\x00y", b"\xff\xfe", "..", "\\..\\"):
        p = s.path(sid)
        name = p[len(D) + 1:]
        ok("/" not in name and "\x00" not in name and name.startswith("s_"), "name %r" % name)
        s.persist(sid, [(1, None, "hi")])
        eq(s.messages(sid), [{"role": "user", "content": "hi"}], "works for %r" % sid)
    ok(all(n.startswith("s_") for n in os.listdir(D)), "everything inside sessions/")
    e = raises(ValueError, s.persist, "x" * 10240, [(1, None, "hi")])
    ok("longer than" in str(e), "10 KB id refused with a clear error")
    raises(ValueError, s.persist, "", [(1, None, "hi")])
    raises(ValueError, s.persist, None, [(1, None, "hi")])
    raises(ValueError, s.persist, 42, [(1, None, "hi")])
    dev.unmount()


def test_persist_writes_esp_claw_format():
    dev, s = _fresh()
    sid = "chat:web:local:default_01"
    s.persist(sid, [(1, None, "héllo")])
    s.persist(sid, [(3, '{"role":"assistant","tool_calls":[{"id":"a","type":"function","function":{"name":"f","arguments":"{}"}}]}', None),
                    (4, '[{"role":"tool","tool_call_id":"a","content":"ok","is_error":false}]', None)], backend="anthropic")
    s.persist(sid, [(2, None, "done")], turn_completed=True, backend="")
    log = s.path(sid)
    eq(sorted(os.listdir(D)), [session.file_name(sid), session.file_name(sid) + ".idx",
                               session.file_name(sid) + ".pending"],
       "a completed turn leaves the pair and the stale pending file")
    s.close()
    eq(sorted(os.listdir(D)), [session.file_name(sid), session.file_name(sid) + ".idx"],
       "close() leaves exactly ESP-Claw's pair in the sessions folder")
    eq(os.listdir(index_dir(D)), [session.file_name(sid) + ".tix"],
       "and our text index in a folder of its own (one ESP-Claw never opens)")
    eq(tix_of(log), index_dir(D) + "/" + session.file_name(sid) + ".tix", "named after the log")
    eq(index_dir(D), "/flash/search", "beside the sessions folder")
    eq(_read(log).split(b"\n")[0], '{"role":"user","content":"héllo"}'.encode(), "text record shape")
    ents = _esp_validate(log)
    eq([(t, f) for _, _, t, f in ents], [(1, 1), (3, 2), (4, 2), (2, 0)], "types and backend formats")
    eq(ents[0][0], 0, "first offset")
    eq(ents[1][0], ents[0][1], "contiguous")
    eq(_read(log + ".idx")[:8], b"CHDX\x01\x00\x0a\x00", "header bytes")
    dev.unmount()


def test_reads_a_pair_built_by_hand_in_esp_claw_format():
    dev, s = _fresh()
    sid = "chat:feishu:room42:default_01"
    recs = [
        (1, 1, b'{"role":"user","content":"remember lettuce"}'),
        (3, 1, b'{"role":"assistant","content":"","tool_calls":[{"id":"call_1","type":"function","function":{"name":"memory_store","arguments":"{\\"content\\":\\"likes lettuce\\"}"}}]}'),
        (4, 1, b'[{"role":"tool","tool_call_id":"call_1","content":"{\\"ok\\":true}","is_error":false}]'),
        (2, 1, b'{"role":"assistant","content":"Noted."}'),
    ]
    data = b""
    idx = struct.pack("<IHH", 0x58444843, 1, 10)
    for t, fmt, js in recs:
        idx += struct.pack("<IIBB", len(data), len(js) + 1, t, fmt)
        data += js + b"\n"
    data += b"trailing junk ESP-Claw tolerates"
    _write(D + "/s_chat_feishu_room42_defau_e5deae0b.log", data)
    _write(D + "/s_chat_feishu_room42_defau_e5deae0b.log.idx", idx)
    msgs = s.messages(sid)
    eq([m["role"] for m in msgs], ["user", "assistant", "tool", "assistant"], "roles")
    eq(msgs[2]["tool_call_id"], "call_1", "tool result flattened")
    eq(msgs[3]["content"], "Noted.", "final")
    eq(s.stat(sid)["records"], 4, "records")
    dev.unmount()


def test_bad_batch_writes_nothing():
    dev, s = _fresh()
    sid = "s1"
    s.persist(sid, [(1, None, "first")], turn_completed=True)
    s.persist(sid, [(1, None, "second")])
    files = tree(D)
    before = [_read(D + "/" + n) for n in sorted(files)]
    bad = [
        [],
        "not a list",
        [(1, None, "ok"), (9, None, "bad type")],
        [(1, None, "ok"), (3, None, "tool record without JSON")],
        [(1, None, "ok"), (2, None, None)],
        [(1, None, "ok"), (2, "{not json", None)],
        [(1, None, "ok"), (4, '{"role":"tool"}', None)],
        [(1, None, "ok"), (2, "[1,2]", None)],
        [(1, None, "ok"), (1, None, b"\xff\xfe")],
        [(1, None, "ok"), (1, None)],
        [(1, None, "ok"), (2, '{"c":"' + "x" * 70000 + '"}', None)],
    ]
    for batch in bad:
        raises(ValueError, s.persist, sid, batch)
        raises(ValueError, s.persist, sid, batch, True)
    eq(tree(D), files, "same files")
    eq([_read(D + "/" + n) for n in sorted(files)], before, "nothing written")
    dev.unmount()


def test_text_is_cut_on_characters_and_invalid_utf8_dropped():
    dev, s = _fresh(max_message_chars=5)
    s.persist("t", [(1, None, "你好世界abcdef"), (1, None, b"ab\xffcd\xe4")])
    eq([m["content"] for m in s.messages("t")], ["你好世界a", "abcd"], "cut and cleaned")
    dev.unmount()


def test_raw_json_is_written_verbatim_and_one_line():
    dev, s = _fresh()
    raw = '{"role":"assistant","content":"x","reasoning_content":"why","zzz":{"b":1,"a":2}}'
    s.persist("r", [(2, raw, "x")], turn_completed=True)
    eq(_read(s.path("r")), raw.encode() + b"\n", "verbatim")
    s.persist("r", [(2, '{\n  "role": "assistant",\r\n  "content": "multi"\n}', None)], turn_completed=True)
    lines = _read(s.path("r")).split(b"\n")
    eq(len(lines), 3, "pretty JSON kept on one line")
    eq(json.loads(lines[1])["content"], "multi", "still the same JSON")
    dev.unmount()


def test_each_persist_is_one_append():
    dev, s = _fresh(index_every=2)
    calls = []
    real = (fsutil.append, fsutil.write_file, fsutil.write_at)

    def spying(fn):  # every way a persist writes a file
        def spy(path, *args):
            calls.append(path.rsplit(".", 1)[-1])
            return fn(path, *args)
        return spy

    fsutil.append, fsutil.write_file, fsutil.write_at = [spying(fn) for fn in real]
    try:
        got = []
        for turn in range(3):
            s.persist("w", [(1, None, "a")])
            got.append(calls[:])
            calls[:] = []
            s.persist("w", [(3, '{"role":"assistant","tool_calls":[{"id":"x"}]}', None),
                            (4, '[{"role":"tool","tool_call_id":"x","content":"r"}]', None)])
            got.append(calls[:])
            calls[:] = []
            s.persist("w", [(2, None, "b"), (2, None, "c")], turn_completed=True)
            got.append(calls[:])
            calls[:] = []
    finally:
        fsutil.append, fsutil.write_file, fsutil.write_at = real
    eq(got, [["pending"], ["pending"], ["log", "idx"],    # the first turn creates the index
             ["pending"], ["pending"], ["log"],
             ["pending"], ["pending"], ["log", "idx"]],   # index_every=2
       "one append per persist, index batched")
    eq(s.stat("w")["records"], 15, "all records counted")
    s.close()
    eq(len(_esp_validate(s.path("w"))), 15, "close() writes the index")
    dev.unmount()


class _Damaged:
    """A session of 3 tool turns, closed; `reset` writes damaged bytes and reopens."""

    def __init__(self):
        self.dev, s = _fresh()
        self.sid = sid = "rep"
        for n in range(3):
            _turn(s, sid, n)
        s.close()
        self.log = s.path(sid)
        self.good = _read(self.log)
        self.idx = _read(self.log + ".idx")
        self.full = s.messages(sid)
        eq(len(self.full), 12, "3 turns x (user, call, result, final)")

    def reset(self, log_bytes, idx_bytes):
        _write(self.log, log_bytes)
        if idx_bytes is None:
            fsutil.remove(self.log + ".idx")
        else:
            _write(self.log + ".idx", idx_bytes)
        return Sessions(D)


def test_a_torn_tail_is_ignored_and_the_next_record_starts_on_its_own_line():
    d = _Damaged()
    s2 = d.reset(d.good + b'{"role":"us', d.idx)
    eq(s2.messages(d.sid), d.full, "torn tail ignored")
    s2.persist(d.sid, [(1, None, "after torn")], turn_completed=True)
    eq(s2.messages(d.sid)[-1]["content"], "after torn", "next persist works")
    s2.close()
    _esp_validate(d.log)
    eq(s2.repair(d.sid)["records"], 13, "nothing lost")
    d.dev.unmount()


def test_records_the_index_missed_are_reindexed_from_the_log():
    d = _Damaged()
    s2 = d.reset(d.good, d.idx[:8 + 10 * 5])  # cut between the log and the index writes
    eq(s2.messages(d.sid), d.full, "re-indexed from the log")
    ents = _esp_validate(d.log)
    eq([t for _, _, t, _ in ents], [1, 3, 4, 2] * 3, "types derived from the JSON")
    eq(ents[5][3], 1, "backend derived from tool_calls")
    d.dev.unmount()


def test_index_entries_past_the_log_are_dropped():
    d = _Damaged()
    s2 = d.reset(d.good[:len(d.good) - 40], d.idx)
    eq(len(s2.messages(d.sid)), 11, "only the cut final answer is gone")
    _esp_validate(d.log)
    d.dev.unmount()


def test_a_torn_index_entry_is_ignored_and_the_index_rewritten_whole():
    d = _Damaged()
    s2 = d.reset(d.good, d.idx + b"\x01\x02\x03")
    eq(s2.messages(d.sid), d.full, "partial entry ignored")
    eq((fsutil.size(d.log + ".idx") - 8) % 10, 0, "index rewritten whole")
    d.dev.unmount()


def test_a_bad_missing_or_empty_index_is_rebuilt_from_the_log():
    d = _Damaged()
    for bad in (b"XXXX" + d.idx[4:], None, b""):
        s2 = d.reset(d.good, bad)
        eq(s2.messages(d.sid), d.full, "index rebuilt (%r)" % (bad[:4] if bad else bad))
        _esp_validate(d.log)
    d.dev.unmount()


def test_a_garbage_record_is_skipped_and_repair_drops_it():
    d = _Damaged()
    broken = bytearray(d.good)
    broken[2:6] = b"\x00\xff!!"
    s2 = d.reset(bytes(broken), d.idx)
    eq(len(s2.messages(d.sid)), 11, "damaged record skipped in replay")
    rep = s2.verify(d.sid)
    eq(rep["dropped"], 1, "verify counts it")
    eq(_read(d.log + ".idx"), d.idx, "verify writes nothing")
    rep = s2.repair(d.sid)
    eq(rep["dropped"], 1, "repair reports it")
    eq(s2.stat(d.sid)["records"], 11, "dropped from the index")
    d.dev.unmount()


def test_a_garbage_index_entry_in_the_middle_is_replaced_by_a_rescan():
    d = _Damaged()
    mid = bytearray(d.idx)
    mid[8 + 10 * 4 + 8] = 77  # type 77
    s2 = d.reset(d.good, bytes(mid))
    eq(s2.messages(d.sid), d.full, "bad entry replaced by a rescan")
    d.dev.unmount()


def test_an_empty_log_with_entries_replays_nothing_and_takes_new_turns():
    d = _Damaged()
    s2 = d.reset(b"", d.idx)
    eq(s2.messages(d.sid), [], "empty log")
    s2.persist(d.sid, [(1, None, "fresh")], turn_completed=True)
    eq(s2.messages(d.sid), [{"role": "user", "content": "fresh"}], "fresh start")
    d.dev.unmount()


def test_directory_in_the_way_is_a_clear_error():
    dev, s = _fresh()
    os.mkdir(s.path("dir"))
    e = raises(OSError, s.persist, "dir", [(1, None, "x")])
    ok("directory" in str(e), "says what is wrong")
    os.mkdir(s.path("dir2") + ".idx")
    raises(OSError, s.messages, "dir2")
    dev.unmount()


def test_replay_degrades_the_other_backend_and_pairs_tools():
    dev, s = _fresh()
    sid = "b"
    s.persist(sid, [(1, None, "hi")])
    s.persist(sid, [(3, '{"role":"assistant","content":[{"type":"text","text":"let me"},{"type":"tool_use","id":"tu1","name":"f","input":{}}]}', None),
                    (4, '[{"role":"tool","tool_call_id":"tu1","content":"r","is_error":false}]', None)], backend="anthropic")
    s.persist(sid, [(2, '{"role":"assistant","content":[{"type":"text","text":"Hel"},{"type":"text","text":"lo"}]}', None)],
              turn_completed=True, backend="anthropic")
    s.persist(sid, [(2, '{"role":"assistant","content":[{"type":"image","source":{}}]}', None)], backend="anthropic")
    s.persist(sid, [(2, '{"role":"assistant","content":"plain"}', None)], backend="anthropic")
    eq(s.messages(sid, backend="openai"),
       [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "Hello"},
        {"role": "assistant", "content": "plain"}], "OpenAI sees plain dialogue only")
    eq(len(s.messages(sid, backend="anthropic")), 6, "same backend: everything")
    eq(len(s.messages(sid, backend="unknown")), 6, "unknown backend: no degradation")
    # A tool call whose results never landed, and a result without its call.
    s.persist(sid, [(3, '{"role":"assistant","tool_calls":[{"id":"x1","type":"function","function":{"name":"f","arguments":"{}"}}]}', None)])
    s.persist(sid, [(4, '[{"role":"tool","tool_call_id":"zz","content":"orphan"}]', None)])
    s.persist(sid, [(1, None, "next")])
    msgs = s.messages(sid, backend="openai")
    ok(all(m.get("tool_call_id") != "zz" for m in msgs), "orphan result dropped")
    ok(all(not m.get("tool_calls") for m in msgs), "unanswered call dropped")
    eq(msgs[-1]["content"], "next", "the rest kept")
    eq(s.messages("nobody"), [], "no history")
    dev.unmount()


def test_page_reader():
    dev, s = _fresh()
    sid = "p"
    for n in range(30):
        _turn(s, sid, n, tool=(n % 3 == 0))
    s.persist(sid, [(2, '{"role":"assistant","content":[{"type":"text","text":"a"},{"type":"tool_use","id":"q"},{"type":"text","text":"b"}]}', None)])
    pg = s.page(sid, limit=4)
    eq(pg["total"], 61, "visible records")
    eq([m["seq"] for m in pg["messages"]], [58, 59, 60, 61], "newest page")
    eq(pg["messages"][-1]["text"], "a\nb", "text parts joined, tool blocks ignored")
    eq((pg["next_before"], pg["has_more"]), (57, True), "cursor")
    pg2 = s.page(sid, before=57, limit=3)
    eq([m["seq"] for m in pg2["messages"]], [55, 56, 57], "older page")
    eq([m["role"] for m in pg2["messages"]], ["user", "assistant", "user"], "roles")
    first = s.page(sid, before=2, limit=50)
    eq(([m["seq"] for m in first["messages"]], first["has_more"]), ([1, 2], False), "first page")
    raises(ValueError, s.page, sid, 0, 0)
    raises(ValueError, s.page, sid, 0, 51)
    raises(ValueError, s.page, sid, -1, 5)
    eq(s.page("none")["messages"], [], "empty")
    # The 32 KB text bound per page.
    for n in range(3):
        s.persist("big", [(1, None, "x" * 4000)] * 5)
    pg = s.page("big", limit=50)
    ok(sum(len(m["text"]) for m in pg["messages"]) <= 32768, "page text bounded")
    ok(pg["has_more"] and pg["next_before"] > 0, "rest reachable")
    dev.unmount()


def _small_turn(s, sid, n, result=600):
    s.persist(sid, [(1, None, "question %d" % n)])
    call = '{"role":"assistant","content":null,"tool_calls":[{"id":"c%d","type":"function","function":{"name":"t","arguments":"{}"}}]}' % n
    res = '[{"role":"tool","tool_call_id":"c%d","content":"%s","is_error":false}]' % (n, "r" * result)
    s.persist(sid, [(3, call, None), (4, res, None)])
    return s.persist(sid, [(2, None, "answer %d" % n)], turn_completed=True)


def test_compaction_keeps_dialogue_and_last_tool_turn():
    # Big tool results, short dialogue: ESP-Claw's rule alone brings it under the target.
    dev, s = _fresh(size_limit=20000)
    sid = "c"
    for n in range(24):
        _small_turn(s, sid, n)
    log = s.path(sid)
    ok(fsutil.size(log) <= 20000 // 4, "compacted well under the limit")
    msgs = s.messages(sid, tokens=0)
    users = [m["content"].split()[1] for m in msgs if m["role"] == "user"]
    eq(users, [str(n) for n in range(24)], "every user record kept")
    finals = [m for m in msgs if m["role"] == "assistant" and not m.get("tool_calls")]
    eq(len(finals), 24, "every final answer kept")
    tools = [m["tool_call_id"] for m in msgs if m["role"] == "tool"]
    ok(tools[-1] == "c23", "last tool turn kept")
    ok("c0" not in tools, "old tool records dropped")
    dev.unmount()


def _dialogue_turn(s, sid, n, size):
    s.persist(sid, [(1, None, "question %d %s" % (n, "q" * size))])
    return s.persist(sid, [(2, None, "answer %d %s" % (n, "a" * size))], turn_completed=True)


def test_compaction_drops_the_oldest_turns_to_leave_room():
    # Dialogue alone past the limit (ESP-Claw would block): the oldest whole turns go, down to
    # a target that leaves room for 20 more turns like these (and no further).
    from claw_memory.session.compact import target

    limit = 20000
    dev, s = _fresh(size_limit=limit)
    sid = "c"
    sizes = []
    compactions = []
    for n in range(90):
        before = s.stat(sid)["bytes"]
        eq(_dialogue_turn(s, sid, n, 200), None, "never blocked (turn %d)" % n)
        after = s.stat(sid)["bytes"]
        sizes.append(after)
        if after < before:
            compactions.append(n)
    turn = sizes[1] - sizes[0]  # one turn's records
    goal = target(limit, turn)
    ok(len(compactions) >= 2, "it compacted: %r" % compactions)
    for n in compactions:
        ok(goal - turn < sizes[n] <= goal, "turn %d: down to the goal, not further: %d (goal %d, turn %d)"
           % (n, sizes[n], goal, turn))
    gaps = [b - a for a, b in zip(compactions, compactions[1:])]
    ok(min(gaps) >= 20, "20 turns at least between compactions: %r" % compactions)
    users = [int(m["content"].split()[1]) for m in s.messages(sid, tokens=0) if m["role"] == "user"]
    eq(users, list(range(users[0], 90)), "whole oldest turns dropped, the rest in order")
    ok(0 < users[0] < 80, "some dropped, many kept: from %d" % users[0])
    _esp_validate(s.path(sid))
    dev.unmount()


def test_compaction_with_tool_rounds_keeps_as_many_turns_as_fit():
    # ESP-Claw's rule (old tool records go) first; then only as many oldest turns as needed.
    from claw_memory.session.compact import target

    dev, s = _fresh(size_limit=6000)
    sid = "c"
    for n in range(16):
        before = s.stat(sid)["bytes"]
        _turn(s, sid, n, pad=150)
        after = s.stat(sid)["bytes"]
        if after < before:
            break
    users = [m for m in s.messages(sid, tokens=0) if m["role"] == "user"]
    ok(len(users) > 2, "more than the newest turns kept: %d" % len(users))
    ok(after <= target(6000, 10 ** 6) or after <= 6000 * 3 // 4, "under the target: %d" % after)
    tools = [m["tool_call_id"] for m in s.messages(sid, tokens=0) if m["role"] == "tool"]
    eq(tools, ["c%d" % n], "the newest tool round kept, the older ones dropped")
    dev.unmount()


def test_compaction_keeps_unfinished_turns():
    dev, s = _fresh(size_limit=20000)
    sid = "c"
    for n in range(24):
        _small_turn(s, sid, n)
    log = s.path(sid)
    _esp_validate(log)
    ok(not any(n.endswith(".tmp") or n.endswith(".commit") for n in os.listdir(D)), "no leftovers")
    # An unfinished turn (pending) is untouched by a compaction.
    s.persist(sid, [(1, None, "unfinished")])
    s.persist(sid, [(3, '{"role":"assistant","tool_calls":[{"id":"u1","type":"function","function":{"name":"t","arguments":"{}"}}]}', None),
                    (4, '[{"role":"tool","tool_call_id":"u1","content":"' + "p" * 3000 + '"}]', None)])
    s2 = Sessions(D, size_limit=20000)
    s2.compact(sid)
    msgs = s2.messages(sid)
    eq(msgs[-1]["tool_call_id"], "u1", "unfinished turn's tool records kept")
    eq(s2.stat(sid)["pending"], 3, "still pending")
    # An unfinished turn found in the log (ESP-Claw writes turns record by record) is kept.
    s2.persist(sid, [(2, None, "done")], turn_completed=True)
    s2.close()
    data = _read(log)
    idx = _read(log + ".idx")
    extra = [b'{"role":"user","content":"esp turn"}',
             b'{"role":"assistant","tool_calls":[{"id":"e1","type":"function","function":{"name":"t","arguments":"{}"}}]}',
             b'[{"role":"tool","tool_call_id":"e1","content":"' + b"e" * 3000 + b'"}]']
    for t, js in zip((1, 3, 4), extra):
        idx += struct.pack("<IIBB", len(data), len(js) + 1, t, 1)
        data += js + b"\n"
    _write(log, data)
    _write(log + ".idx", idx)
    s3 = Sessions(D, size_limit=20000)
    s3.compact(sid)
    eq(s3.messages(sid)[-1]["tool_call_id"], "e1", "unfinished logged turn kept whole")
    dev.unmount()


def test_blocking_when_the_newest_turn_alone_is_too_big():
    dev, s = _fresh(size_limit=3000)
    sid = "blk"
    for n in range(3):
        eq(_turn(s, sid, n, pad=300), None, "older turns can be dropped: no block")
    warn = _turn(s, sid, 3, pad=1600)
    eq(warn, BLOCK_TEXT, "warning returned by the persist that blocked")
    ok("  " not in BLOCK_TEXT and BLOCK_TEXT.endswith("limited storage space."), "whole, no stray spaces")
    ok(s.blocked(sid), "blocked flag")
    e = raises(SessionBlocked, s.persist, sid, [(1, None, "more")])
    eq(str(e.args[1]), BLOCK_TEXT, "refusal carries the text")
    ok(isinstance(e, OSError), "an OSError")
    eq(s.delete(sid), True, "delete")
    ok(not s.blocked(sid), "unblocked")
    s.persist(sid, [(1, None, "new start")])
    eq(len(s.messages(sid)), 1, "fresh")
    dev.unmount()


def test_list_stat_delete():
    dev, s = _fresh()
    s.persist("a", [(1, None, "x")])
    s.persist("b", [(1, None, "y"), (2, None, "z")], turn_completed=True)
    rows = list(s.list())
    eq(len(rows), 2, "two sessions")
    byname = {r["file"]: r for r in rows}
    ra = byname[session.file_name("a")]
    eq((ra["records"], ra["pending"], ra["bytes"]), (1, 1, 0), "a first turn still pending")
    rb = byname[session.file_name("b")]
    eq((rb["records"], rb["blocked"]), (2, False), "records and flag")
    eq(rb["bytes"], fsutil.size(s.path("b")), "bytes")
    eq(s.stat("b")["records"], 2, "stat")
    eq(s.delete("a"), True, "deleted")
    eq(s.delete("a"), False, "nothing left")
    eq(len(list(s.list())), 1, "one left")
    eq(s.stat("a")["records"], 0, "a deleted session is empty")
    dev.unmount()


def test_a_deleted_session_leaves_none_of_its_files():
    # Deleting a session removes everything written for it: the pair, the pending file, the
    # text index (it holds the words of every message), the block marker.
    dev, s = _fresh(size_limit=3000)
    for n in range(4):
        _turn(s, "a", n, pad=300)
    s.persist("a", [(1, None, "unfinished")])
    s.close()
    name = session.file_name("a")
    have = sorted(n for n in os.listdir(D) if n.startswith(name))
    ok(name + ".pending" in have and fsutil.exists(tix_of(D + "/" + name)), "(its files: %r)" % have)
    eq(s.delete("a"), True, "deleted")
    eq([n for n in os.listdir(D) if n.startswith(name)], [], "no file of it left")
    eq(os.listdir(index_dir(D)), [], "nor its text index")
    eq(s.search("unfinished user"), [], "nothing of it found")
    dev.unmount()


def test_a_session_deleted_and_started_again_survives_the_next_open():
    # A finished deletion leaves no journal behind: a session started again under the same id
    # after it is not deleted again by the next Sessions (after a reboot).
    dev, s = _fresh()
    s.persist("a", [(1, None, "old"), (2, None, "gone")], turn_completed=True)
    eq(s.delete("a"), True, "deleted")
    ok(not fsutil.exists(D + "/.deleting"), "no journal left")
    s.persist("a", [(1, None, "new"), (2, None, "kept")], turn_completed=True)
    s.close()
    eq([m["content"] for m in Sessions(D).messages("a")], ["new", "kept"], "the new session is kept")
    dev.unmount()


def test_a_memory_error_after_a_turn_is_appended_is_no_failure():
    # The turn is on flash once its append returns: a MemoryError updating RAM after it (here
    # where the state takes the turn's index entries, halfway) does not make persist raise (a
    # caller would send the turn again), and the history has the turn once.
    from claw_memory.session import write

    dev, s = _fresh()
    s.persist("a", [(1, None, "q1"), (2, None, "a1")], turn_completed=True)
    real = write.logged

    def failing(st, ents):
        st.log_size = st.end
        st.torn = 0
        raise MemoryError("injected")

    write.logged = failing
    try:
        eq(s.persist("a", [(1, None, "q2"), (2, None, "a2")], turn_completed=True), None, "no failure")
    finally:
        write.logged = real
    eq([m["content"] for m in s.messages("a")], ["q1", "a1", "q2", "a2"], "the same Sessions")
    s.close()
    eq([m["content"] for m in Sessions(D).messages("a")], ["q1", "a1", "q2", "a2"], "after a reopen")
    dev.unmount()


def test_lost_index_rewrite_is_adopted_from_tmp():
    # FAT's remove-then-rename inside an index rewrite: the index is gone, its .tmp whole.
    dev, s = _fresh()
    _turn(s, "i", 1)
    s.close()
    log = s.path("i")
    idx = _read(log + ".idx")
    os.rename(log + ".idx", log + ".idx.tmp")
    eq(len(Sessions(D).messages("i")), 4, "history intact")
    eq(_read(log + ".idx"), idx, "same index, backends included")
    dev.unmount()


def test_compaction_journal_recovery():
    dev, s = _fresh()
    _turn(s, "j", 1)
    s.close()
    log = s.path("j")
    good_log = _read(log)
    # Unfinished compaction (no journal): tmp files are dropped, old pair kept.
    _write(log + ".tmp", b"partial")
    _write(log + ".idx.tmp", b"CHDX")
    eq(len(Sessions(D).messages("j")), 4, "old pair kept")
    ok(not fsutil.exists(log + ".tmp") and not fsutil.exists(log + ".idx.tmp"), "tmps gone")
    # Committed compaction interrupted between the renames (FAT: log already removed).
    new_log = good_log.split(b"\n")[0] + b"\n"
    new_idx = b"CHDX\x01\x00\x0a\x00" + struct.pack("<IIBB", 0, len(new_log), 1, 1)
    fsutil.remove(log)
    _write(log + ".tmp", new_log)
    _write(log + ".idx.tmp", new_idx)
    _write(log + ".commit", b"")
    eq(len(Sessions(D).messages("j")), 1, "commit finished")
    eq((_read(log), _read(log + ".idx")), (new_log, new_idx), "new pair in place")
    ok(not fsutil.exists(log + ".commit"), "journal gone")
    dev.unmount()


def _pending_setup():
    dev, s = _fresh()
    sid = "pend"
    _turn(s, sid, 0)
    s.close()
    s.persist(sid, [(1, None, "user 1")])
    s.persist(sid, [(3, '{"role":"assistant","tool_calls":[{"id":"k1","type":"function","function":{"name":"t","arguments":"{}"}}]}', None),
                    (4, '[{"role":"tool","tool_call_id":"k1","content":"res"}]', None)], backend="openai")
    log = s.path(sid)
    return dev, sid, log


def test_unfinished_turn_survives_a_reboot_in_the_pending_file():
    dev, sid, log = _pending_setup()
    ok(fsutil.exists(log + ".pending"), "mid-turn records are pending")
    dev = dev.reboot()
    s = Sessions(D)
    msgs = s.messages(sid)
    eq([m.get("content") for m in msgs[-3:-1]], ["user 1", None], "pending records replayed")
    eq(msgs[-1]["tool_call_id"], "k1", "pending tool result")
    eq(s.page(sid)["messages"][-1]["text"], "user 1", "pending user text paged")
    s.persist(sid, [(2, None, "final 1")], turn_completed=True, backend="anthropic")
    eq(s.stat(sid)["pending"], 0, "completed: nothing pending")
    s.close()
    ok(not fsutil.exists(log + ".pending"), "closed: the stale pending file gone")
    ents = _esp_validate(log)
    eq([(t, f) for _, _, t, f in ents][-4:], [(1, 1), (3, 1), (4, 1), (2, 2)], "backends kept")
    dev.unmount()


def test_cut_after_the_log_append_does_not_duplicate():
    dev, sid, log = _pending_setup()
    pend = _read(log + ".pending")
    s = Sessions(D)
    s.persist(sid, [(2, None, "final 1")], turn_completed=True)
    s.close()
    full = s.messages(sid)
    # The cut came after the log append, before the pending file was removed.
    _write(log + ".pending", pend)
    s2 = Sessions(D)
    eq(s2.messages(sid), full, "no record twice")
    ok(not fsutil.exists(log + ".pending"), "stale pending file removed")
    # The cut tore the log append after the first two pending records.
    data = _read(log)
    body = data[:data.index(b'{"role":"user","content":"user 1"}')]
    lines = [l[2:] for l in pend.split(b"\n")[1:] if l]
    _write(log, body + lines[0] + b"\n" + lines[1] + b"\n" + lines[2][:10])
    _write(log + ".pending", pend)
    fsutil.remove(log + ".idx")
    s3 = Sessions(D)
    msgs = s3.messages(sid)
    eq([m.get("role") for m in msgs][-3:], ["user", "assistant", "tool"], "each record once")
    eq(s3.stat(sid)["pending"], 1, "only the unlogged record stays pending")
    s3.persist(sid, [(2, None, "final again")], turn_completed=True)
    eq(s3.messages(sid)[-1]["content"], "final again", "next turn works")
    eq(len(s3.messages(sid)), 8, "nothing doubled")
    dev.unmount()


def test_torn_or_garbage_pending_lines_are_dropped():
    dev, sid, log = _pending_setup()
    pend = _read(log + ".pending")
    _write(log + ".pending", pend + b'11{"role":"user","cont')
    s = Sessions(D)
    eq(s.stat(sid)["pending"], 3, "torn last line dropped")
    eq(_read(log + ".pending"), pend, "file rewritten without it")
    _write(log + ".pending", pend + b"garbage line\n")
    eq(Sessions(D).stat(sid)["pending"], 3, "garbage line dropped")
    _write(log + ".pending", b"not a header\n" + pend)
    s = Sessions(D)
    eq(s.stat(sid)["pending"], 0, "unreadable pending file removed")
    eq(len(s.messages(sid)), 4, "logged history intact")
    dev.unmount()


def test_index_lag_is_recovered_after_a_reboot():
    dev, s = _fresh(index_every=4)
    sid = "lag"
    for n in range(3):
        _turn(s, sid, n)
    log = s.path(sid)
    eq(len(_esp_validate(log)), 4, "index written at the first turn only")
    dev = dev.reboot()  # no close(): the index lags two turns
    s2 = Sessions(D)
    eq(len(s2.messages(sid)), 12, "lagging records re-indexed from the log")
    eq(len(_esp_validate(log)), 12, "and written to the index")
    dev.unmount()


def test_raw_records_that_are_not_chat_records_and_non_int_types_are_refused():
    dev, s = _fresh()
    raises(ValueError, s.persist, "r", [(2, '{"content":"no role"}', None)], True)
    raises(ValueError, s.persist, "r", [(2.0, None, "x")], True)
    raises(ValueError, s.persist, "r", [(True, None, "x")], True)
    eq(list(s.list()), [], "nothing written")
    dev.unmount()


def _unterminated_completing_append():
    # A turn whose completing append was cut right before one record's newline.
    dev, s = _fresh()
    s.persist("t", [(1, None, "u0")])
    s.persist("t", [(2, None, "f0")], turn_completed=True)
    s.persist("t", [(1, None, "u1")])
    s.persist("t", [(3, '{"role":"assistant","tool_calls":[{"id":"k1"}]}', None),
                    (4, '[{"role":"tool","tool_call_id":"k1","content":"r"}]', None)])
    s.close()
    log = s.path("t")
    first = _read(log + ".pending").split(b"\n")[1][2:]
    with open(log, "ab") as f:
        f.write(first)
    return dev, log


def test_a_record_lacking_only_its_newline_is_not_taken_as_logged():
    dev, log = _unterminated_completing_append()
    s2 = Sessions(D)
    eq(s2.stat("t")["pending"], 3, "the unterminated record stays pending")
    s2.persist("t", [(2, None, "f1")], turn_completed=True)
    want = ["u0", "f0", "u1", None, "r", "f1"]
    eq([m.get("content") for m in s2.messages("t")], want, "each record once")
    s2.close()
    eq([m.get("content") for m in Sessions(D).messages("t")], want, "also after a cold open")
    dev.unmount()


def test_an_over_long_unterminated_last_line_is_a_torn_tail():
    dev, s = _fresh()
    s.persist("t", [(1, None, "u0"), (2, None, "f0")], turn_completed=True)
    s.close()
    with open(s.path("t"), "ab") as f:
        f.write(b'{"role":"user","content":"' + b"z" * 70000)
    s3 = Sessions(D)
    s3.persist("t", [(1, None, "after the long tear")], turn_completed=True)
    eq(Sessions(D).messages("t")[-1]["content"], "after the long tear", "survives a cold open")
    eq([m["content"] for m in Sessions(D).messages("t")], ["u0", "f0", "after the long tear"],
       "nothing else lost or added")
    dev.unmount()


def test_a_pending_rewrite_cut_inside_fat_rename_is_adopted():
    dev, s = _fresh()
    s.persist("t", [(1, None, "u0"), (2, None, "f0")], turn_completed=True)
    s.persist("t", [(1, None, "mid-turn")])
    log = s.path("t")
    os.rename(log + ".pending", log + ".pending.tmp")
    eq(Sessions(D).messages("t")[-1]["content"], "mid-turn", "pending .tmp adopted")
    dev.unmount()


def test_export_skips_damaged_records_and_a_page_survives_a_64k_record():
    dev, s4 = _fresh()
    s4.persist("big", [(2, '{"role":"assistant","content":"' + "y" * 65500 + '"}', None)], turn_completed=True)
    eq(s4.page("big")["messages"][0]["role"], "assistant", "a 64 KiB record does not break the page")
    with open(s4.path("big"), "r+b") as f:
        f.seek(5)
        f.write(b"\xff\xfe")
    eq(list(Sessions(D).records("big")), [], "damaged record not exported")
    dev.unmount()


def test_a_failed_index_flush_of_another_session_does_not_break_this_one():
    dev, s = _fresh()
    for n in range(4):
        s.persist("s%d" % n, [(1, None, "x")], turn_completed=True)
        s.persist("s%d" % n, [(1, None, "y")], turn_completed=True)  # index lags one turn
    os.remove(s.path("s0") + ".idx")
    os.mkdir(s.path("s0") + ".idx")  # s0's index flush will fail at its eviction
    s.persist("s4", [(1, None, "z")], turn_completed=True)
    eq(len(s.messages("s4")), 1, "the new session works")
    s.close()  # no KeyError
    os.rmdir(s.path("s0") + ".idx")
    eq(len(Sessions(D).messages("s0")), 2, "s0 re-indexed from its log")
    dev.unmount()
