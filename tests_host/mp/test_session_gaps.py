# Session-history behaviours the rest of the suite did not pin (issue 13). Each test fails when
# its behaviour breaks; expectations are written out by hand or read from the files the way
# ESP-Claw reads them, never computed with the code under test. Public API only.
import json
import os
import struct

from flashsim import mount
from mptest import eq, heap, ok, timeout

import claw_memory
from claw_memory import fsutil, session

HEAP = "8M"
D = "/flash/sessions"
SID = "chat:web:local:gaps_01"
LIMIT = 153600  # ESP-Claw's CLAW_MEMORY_SESSION_SIZE_LIMIT


def _fresh(kind="lfs2", blocks=256, **kw):
    dev = mount(kind, "/flash", blocks=blocks)
    return dev, claw_memory.open("/flash", **kw)


def _log(sid=SID):
    return D + "/" + session.file_name(sid)


def _read(path):
    with open(path, "rb") as f:
        return f.read()


def _write(path, data):
    with open(path, "wb") as f:
        f.write(data)


def _user(n, pad=""):
    return '{"role":"user","content":"user %s%s"}' % (n, pad)


def _final(n, pad=""):
    return '{"role":"assistant","content":"final %s%s"}' % (n, pad)


def _call(n):
    return ('{"role":"assistant","content":null,"tool_calls":[{"id":"c%s","type":"function",'
            '"function":{"name":"t","arguments":"{}"}}]}' % n)


def _result(n, pad=0):
    return '[{"role":"tool","tool_call_id":"c%s","content":"%s","is_error":false}]' % (n, "r" * pad)


def _turn(s, n, tools=True, pad=0, sid=SID):
    s.persist(sid, [(1, _user(n), None)])
    if tools:
        s.persist(sid, [(3, _call(n), None), (4, _result(n, pad), None)])
    return s.persist(sid, [(2, _final(n), None)], turn_completed=True)


def _tags(msgs):
    """("user"|"final"|"call"|"tool", n) of each replayed message."""
    out = []
    for m in msgs:
        if m["role"] == "tool":
            out.append(("tool", m["tool_call_id"][1:]))
        elif m.get("tool_calls"):
            out.append(("call", m["tool_calls"][0]["id"][1:]))
        else:
            kind, n = m["content"].split()[:2]
            out.append((kind, n))
    return out


def _esp_replay(log):
    """What ESP-Claw replays: the records its index points at, after its own validation of
    the pair (header, every entry inside the log, type 1..4, backend 0..3, newline)."""
    idx = _read(log + ".idx")
    data = _read(log)
    eq(idx[:8], b"CHDX\x01\x00\x0a\x00", "index header")
    eq((len(idx) - 8) % 10, 0, "whole entries")
    out = []
    for k in range(8, len(idx), 10):
        off, ln, t, fmt = struct.unpack("<IIBB", idx[k:k + 10])
        ok(1 <= t <= 4 and fmt <= 3, "entry %d: type %d backend %d" % (len(out), t, fmt))
        ok(ln > 0 and off + ln <= len(data), "entry %d inside the log" % len(out))
        eq(data[off + ln - 1:off + ln], b"\n", "entry %d ends with a newline" % len(out))
        out.append(json.loads(data[off:off + ln]))
    return out


# -- a damaged start, a power cut anywhere, and a second cut while recovering --------------

_SCRIPT = [  # (records, turn completed, tags of the records)
    ([(1, _user(2), None)], False, [("user", "2")]),
    ([(3, _call(2), None), (4, _result(2, 40), None)], False, [("call", "2"), ("tool", "2")]),
    ([(2, _final(2), None)], True, [("final", "2")]),
    ([(1, _user(3), None)], False, [("user", "3")]),
    ([(2, _final(3), None)], True, [("final", "3")]),
]
_RECOVER = [  # what the next boot does: one more turn
    ([(1, _user(9), None)], False, [("user", "9")]),
    ([(2, _final(9), None)], True, [("final", "9")]),
]
_BASE = [("user", "0"), ("call", "0"), ("tool", "0"), ("final", "0"),
         ("user", "1"), ("call", "1"), ("tool", "1"), ("final", "1")]


def _torn_tail_setup():
    # Two turns (the second logged but not indexed: no close), then a torn record at the end
    # of the log, as a cut in the middle of an ESP-Claw append leaves it.
    mem = claw_memory.open("/flash")
    _turn(mem.sessions, 0, pad=40)
    mem.close()
    mem = claw_memory.open("/flash")
    _turn(mem.sessions, 1, pad=40)
    with open(_log(), "ab") as f:
        f.write(b'{"role":"assistant","content":"torn rec')
    return _BASE, _SCRIPT


def _torn_completion_setup():
    # A turn in progress whose completing append was cut inside its first record (a file
    # system without atomic appends): the log ends with the start of the pending record.
    mem = claw_memory.open("/flash")
    _turn(mem.sessions, 0, pad=40)
    _turn(mem.sessions, 1, pad=40)
    mem.close()
    mem = claw_memory.open("/flash")
    mem.sessions.persist(SID, [(1, _user(2), None)])
    with open(_log(), "ab") as f:
        f.write(_user(2).encode()[:15])
    return _BASE + [("user", "2")], _SCRIPT[1:]


def _play(script, acked):
    mem = claw_memory.open("/flash")
    for recs, done, tags in script:
        mem.sessions.persist(SID, recs, turn_completed=done)
        acked.append(tags)
    mem.close()


def _flat(batches):
    return [t for tags in batches for t in tags]


def _check(parts):
    """The replayed records are `parts` in order: (records, required) pairs; an optional part
    (an interrupted batch) may appear in part or not at all. Nothing twice, nothing else."""
    mem = claw_memory.open("/flash")
    got = _tags(mem.sessions.messages(SID))
    mem.close()
    for t in got:
        ok(got.count(t) == 1, "record %r appears %d times in %r" % (t, got.count(t), got))
    i = 0
    for recs, required in parts:
        for r in recs:
            if i < len(got) and got[i] == r:
                i += 1
            elif required:
                raise AssertionError("acknowledged record %r missing or out of order in %r" % (r, got))
    ok(i == len(got), "unexpected records %r in %r" % (got[i:], got))


def _maybe(script, acked):
    return script[len(acked)][2] if len(acked) < len(script) else []


def _double_cut(setup, kind, block_size, torn, every=1, erase=True):
    """Start from the damaged state `setup` leaves, cut the script at every operation, then
    cut the next boot (its recovery and one more turn) at every operation."""
    blocks = 256 * 1024 // block_size
    dev = mount(kind, "/flash", blocks=blocks, block_size=block_size, erase_on_write=erase)
    base_records, script = setup()
    base = dev.image()
    ops0 = dev.ops
    _play(script, [])
    total = dev.ops - ops0
    cuts = seconds = 0
    for n in range(0, total, every):
        dev = dev.restore(base)
        acked = []
        dev.cut_power(n, torn)
        try:
            _play(script, acked)
        except OSError:
            pass
        ok(dev.dead, "cut %d reached" % n)
        dev = dev.reboot()
        first = [(base_records + _flat(acked), True), (_maybe(script, acked), False)]
        after_cut = dev.image()
        # The next boot without a second cut: everything acknowledged, the new turn too.
        r0 = dev.ops
        done = []
        _play(_RECOVER, done)
        r_ops = dev.ops - r0
        _check(first + [(_flat(done), True)])
        cuts += 1
        # The next boot cut at every operation of its recovery and its turn.
        for m in range(r_ops):
            dev = dev.restore(after_cut)
            done = []
            dev.cut_power(m, torn)
            try:
                _play(_RECOVER, done)
            except OSError:
                pass
            dev = dev.reboot()
            _check(first + [(_flat(done), True), (_maybe(_RECOVER, done), False)])
            seconds += 1
    dev.unmount()
    return cuts, seconds


@timeout(900)
def test_torn_tail_then_a_turn_cut_anywhere_and_again_while_recovering_keeps_each_record_once():
    for torn in (False, True):
        cuts, seconds = _double_cut(_torn_tail_setup, "lfs2", 4096, torn)
        print("lfs2 torn=%s: %d first cuts, %d second cuts" % (torn, cuts, seconds))
        ok(cuts > 10 and seconds > 50, "the matrix ran")


@timeout(900)
def test_torn_tail_then_a_turn_cut_anywhere_and_again_on_fat_sd():
    cuts, seconds = _double_cut(_torn_tail_setup, "fat", 512, False, erase=False)
    print("fat-512: %d first cuts, %d second cuts" % (cuts, seconds))
    ok(cuts > 10, "the matrix ran")


@timeout(900)
def test_a_torn_completing_append_then_cuts_anywhere_keep_each_record_once():
    cuts, seconds = _double_cut(_torn_completion_setup, "lfs2", 4096, False)
    print("lfs2: %d first cuts, %d second cuts" % (cuts, seconds))
    ok(cuts > 10 and seconds > 50, "the matrix ran")


# -- compaction ------------------------------------------------------------------------------


def test_compaction_keeps_the_tool_records_of_an_unfinished_last_turn():
    # ESP-Claw writes every record to the log as it comes, so its last turn may have no final
    # answer yet. A compaction that rewrites the file keeps that turn's tool records.
    dev, mem = _fresh(session_limit=3000)
    recs = []
    for n in range(1, 4):
        recs += [(1, 1, _user(n)), (3, 1, _call(n)), (4, 1, _result(n, 600)), (2, 1, _final(n))]
    recs += [(1, 1, _user(4)), (3, 1, _call(4)), (4, 1, _result(4, 600))]
    mem.sessions.restore(session.file_name(SID), recs)
    before = mem.sessions.stat(SID)["bytes"]
    ok(before > 3000, "over the limit")
    eq(mem.sessions.compact(SID), None, "compacted, not blocked")
    ok(mem.sessions.stat(SID)["bytes"] < before - 1000, "the file was rewritten without old tool records")
    mem.close()
    got = []
    for r in _esp_replay(_log()):
        got += _tags(r if isinstance(r, list) else [r])
    eq(got[-3:], [("user", "4"), ("call", "4"), ("tool", "4")], "the unfinished turn, whole, last")
    ok(("call", "1") not in got, "an old tool round went")
    for t in got:
        ok(got.count(t) == 1, "%r once" % (t,))
    dev.unmount()


def test_a_turn_of_exactly_the_limit_is_not_blocked_and_one_byte_more_is():
    # A session of one turn (user, tool round, answer) of exactly `limit` bytes is kept whole
    # by a compaction; one byte more and even the compacted session is over: blocked.
    for extra, blocked in ((0, False), (1, True)):
        dev = mount("lfs2", "/flash", blocks=256)
        recs = [(1, 1, _user(1)), (3, 1, _call(1)), (4, 1, _result(1, 900)),
                (2, 1, _final(1, "x" * (50 + extra)))]
        limit = sum(len(js) + 1 for _, _, js in recs) - extra
        mem = claw_memory.open("/flash", session_limit=limit)
        mem.sessions.restore(session.file_name(SID), recs)
        warn = mem.sessions.compact(SID)
        eq((warn is not None, mem.sessions.blocked(SID)), (blocked, blocked),
           "a turn of limit+%d bytes" % extra)
        if not blocked:
            eq(mem.sessions.stat(SID)["bytes"], limit, "kept whole")
            eq(len(mem.sessions.messages(SID)), 4, "every record")
        dev.unmount()


# -- the size limit, page and record bounds, pinned exactly ----------------------------------


def _session_of_size(size):
    """A session whose log is `size` bytes after its third turn completes (two big tool turns
    before it); returns the memory."""
    dev, mem = _fresh()
    s = mem.sessions
    used = 0
    for n in (1, 2):
        recs = [_user(n), _call(n), _result(n, 60000), _final(n)]
        _turn(s, n, pad=60000)
        used += sum(len(r) + 1 for r in recs)
    eq(s.stat(SID)["bytes"], used, "log bytes are the records and their newlines")
    fixed = sum(len(r) + 1 for r in (_user(3), _call(3), _result(3, 0), _final(3)))
    _turn(s, 3, pad=size - used - fixed)
    return dev, mem


@heap("16M")
def test_the_size_limit_is_153600_bytes_below_at_and_above():
    eq(session.SIZE_LIMIT, LIMIT, "ESP-Claw's limit")
    for size, compacted in ((LIMIT - 1, False), (LIMIT, False), (LIMIT + 1, True)):
        dev, mem = _session_of_size(size)
        st = mem.sessions.stat(SID)
        if compacted:
            ok(st["bytes"] < 40000, "%d bytes: compacted (%d)" % (size, st["bytes"]))
            eq(st["records"], 8, "two old tool rounds dropped")
        else:
            eq((st["bytes"], st["records"]), (size, 12), "%d bytes: left as it is" % size)
        eq(_tags(mem.sessions.messages(SID))[-4:], [("user", "3"), ("call", "3"), ("tool", "3"),
                                                    ("final", "3")], "newest turn whole")
        dev.unmount()


def _page_session(sizes):
    dev, mem = _fresh(blocks=256)
    recs = []
    for k, n in enumerate(sizes):
        role = "user" if k % 2 == 0 else "assistant"
        recs.append((1 if role == "user" else 2, 1, '{"role":"%s","content":"%s"}' % (role, chr(97 + k) * n)))
    mem.sessions.restore(session.file_name(SID), recs)
    return dev, mem


def test_a_page_of_exactly_the_page_byte_limit_is_whole():
    dev, mem = _page_session([4096] * 8)
    pg = mem.sessions.page(SID, limit=50)
    eq([m["seq"] for m in pg["messages"]], list(range(1, 9)), "8 x 4096 = 32768 bytes fit")
    eq((pg["next_before"], pg["has_more"]), (0, False), "nothing left")
    dev.unmount()
    dev, mem = _page_session([4097] + [4096] * 7)
    pg = mem.sessions.page(SID, limit=50)
    eq([m["seq"] for m in pg["messages"]], list(range(2, 9)), "one byte over: the oldest waits")
    eq((pg["next_before"], pg["has_more"]), (1, True), "cursor")
    dev.unmount()


def test_paging_back_by_bytes_shows_every_message_once():
    dev, mem = _page_session([4096] * 5 + [3000] * 7 + [100])
    seen = []
    before = 0
    for _ in range(20):
        pg = mem.sessions.page(SID, before=before, limit=50)
        seen = [m["seq"] for m in pg["messages"]] + seen
        if not pg["has_more"]:
            break
        before = pg["next_before"]
    eq(seen, list(range(1, 14)), "every message once, in order")
    dev.unmount()


def test_a_record_of_exactly_max_record_bytes_is_kept_whole_and_none_goes_over():
    dev, mem = _fresh(max_record_bytes=1000)
    exact = '{"role":"user","content":"%s"}' % ("x" * (1000 - 28))
    eq(len(exact), 1000, "test record size")
    mem.sessions.persist(SID, [(1, exact, None)])
    mem.sessions.persist(SID, [(2, _final(1), None)], turn_completed=True)
    eq(mem.sessions.messages(SID)[0]["content"], "x" * 972, "replayed")
    over = '{"role":"user","content":"%s"}' % ("x" * 973)
    try:
        mem.sessions.persist(SID, [(1, over, None)])
        mem.sessions.persist(SID, [(2, _final(2), None)], turn_completed=True)
    except ValueError:
        eq(mem.sessions.stat(SID)["records"], 2, "refused: nothing written")
    mem.close()
    data = _read(_log())
    _esp_replay(_log())
    ok(max(len(line) for line in data.split(b"\n")) <= 1000, "no record over the bound on flash")
    ok(data.startswith(exact.encode() + b"\n"), "the exact record verbatim")
    dev.unmount()


# -- stat, list, several writers -----------------------------------------------------------


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


# -- repair of damaged files -----------------------------------------------------------------


def _closed_session(turns, tools=False):
    dev, mem = _fresh()
    for n in range(turns):
        _turn(mem.sessions, n, tools=tools)
    mem.close()
    return dev


def test_a_repeated_index_entry_replays_its_record_once():
    dev = _closed_session(2)
    idx = _read(_log() + ".idx")
    _write(_log() + ".idx", idx + idx[-10:])  # the last entry again
    mem = claw_memory.open("/flash")
    eq([m["content"] for m in mem.sessions.messages(SID)], ["user 0", "final 0", "user 1", "final 1"], "once")
    mem.close()
    eq(len(_esp_replay(_log())), 4, "index repaired for ESP-Claw")
    dev.unmount()


def test_a_lone_torn_index_tmp_is_not_adopted():
    # A cut left `.idx.tmp` half written and no `.idx`: the torn rewrite is discarded and the
    # index rebuilt from the log (its one whole entry is wrong: it spans two records).
    dev = _closed_session(2)
    span = len(_user(0)) + 1 + len(_final(0)) + 1
    fsutil.remove(_log() + ".idx")
    _write(_log() + ".idx.tmp", b"CHDX\x01\x00\x0a\x00" + struct.pack("<IIBB", 0, span, 1, 1) + b"\x00\x00\x00")
    mem = claw_memory.open("/flash")
    eq([m["content"] for m in mem.sessions.messages(SID)], ["user 0", "final 0", "user 1", "final 1"], "rebuilt")
    ok(not fsutil.exists(_log() + ".idx.tmp"), "tmp removed")
    dev.unmount()


def test_an_index_entry_with_a_backend_above_3_is_replaced():
    dev = _closed_session(2)
    idx = bytearray(_read(_log() + ".idx"))
    idx[-1] = 9  # backend format of the last entry
    _write(_log() + ".idx", idx)
    mem = claw_memory.open("/flash")
    eq([m["content"] for m in mem.sessions.messages(SID)], ["user 0", "final 0", "user 1", "final 1"], "replayed")
    mem.close()
    eq(len(_esp_replay(_log())), 4, "every entry valid for ESP-Claw")
    dev.unmount()


def test_an_indexed_record_without_its_newline_is_not_left_in_the_index():
    # A cut lost the newline of the last record while its index entry survived (FAT writes
    # are not atomic): the entry is dropped and the record counts as a torn tail.
    dev = _closed_session(2)
    data = _read(_log())
    _write(_log(), data[:-1] + b" ")
    mem = claw_memory.open("/flash")
    eq([m["content"] for m in mem.sessions.messages(SID)], ["user 0", "final 0", "user 1"], "torn record left out")
    _turn(mem.sessions, 2, tools=False)
    mem.close()
    eq([r["content"] for r in _esp_replay(_log())], ["user 0", "final 0", "user 1", "user 2", "final 2"],
       "ESP-Claw's replay after the next turn")
    dev.unmount()


def test_repair_drops_json_records_that_are_not_chat_records():
    dev = _closed_session(2)
    data = _read(_log())
    rec = _user(1).encode()
    bad = b'{"x":"' + b"y" * (len(rec) - 8) + b'"}'
    eq(len(bad), len(rec), "same length")
    _write(_log(), data.replace(rec, bad))
    mem = claw_memory.open("/flash")
    rep = mem.sessions.repair(SID)
    eq(rep["dropped"], 1, "dropped")
    eq(mem.sessions.stat(SID)["records"], 3, "three chat records left")
    eq(mem.sessions.verify(SID)["dropped"], 0, "nothing left to repair")
    mem.close()
    eq([r["content"] for r in _esp_replay(_log())], ["user 0", "final 0", "final 1"], "ESP-Claw's replay")
    dev.unmount()


def test_repair_of_a_garbage_record_keeps_every_other_record_past_64_entries():
    dev = _closed_session(35)
    data = _read(_log())
    rec = _user(1).encode()
    _write(_log(), data.replace(rec, b"#" * len(rec)))  # record 2 of 70
    mem = claw_memory.open("/flash")
    eq(mem.sessions.repair(SID)["dropped"], 1, "one record dropped")
    got = [m["content"] for m in mem.sessions.messages(SID)]
    want = []
    for n in range(35):
        want += ["user %d" % n, "final %d" % n]
    want.remove("user 1")
    eq(got, want, "69 records, the 67th (third of the second index chunk) included")
    eq(mem.sessions.verify(SID)["dropped"], 0, "repaired")
    dev.unmount()


def test_records_of_an_unknown_backend_replay_whole_with_their_tools():
    # Backend format 0 ("unknown", as ESP-Claw writes for an unnamed backend) is not foreign:
    # its tool records are replayed, not left out.
    dev, mem = _fresh()
    mem.sessions.restore(session.file_name(SID), [(1, 0, _user(1)), (3, 0, _call(1)),
                                                   (4, 0, _result(1, 3)), (2, 0, _final(1))])
    eq(_tags(mem.sessions.messages(SID, backend="openai")),
       [("user", "1"), ("call", "1"), ("tool", "1"), ("final", "1")], "whole turn")
    dev.unmount()


# -- issue 13, mutation refresh: repair, compaction target, listing, deletion ----------------


def test_repair_of_a_log_whose_only_damage_is_a_torn_tail_removes_it():
    dev, mem = _fresh()
    _turn(mem.sessions, 1)
    _turn(mem.sessions, 2, tools=False)
    mem.close()
    log = _log()
    good = _read(log)
    with open(log, "ab") as f:
        f.write(b'{"role":"user","con')  # a power cut in the next append
    mem = claw_memory.open("/flash")
    eq(mem.sessions.verify(SID)["torn_tail_bytes"], 19, "found")
    eq(mem.sessions.repair(SID)["torn_tail_bytes"], 19, "repaired")
    eq(_read(log), good, "the log rewritten without the torn tail")
    eq(mem.sessions.verify(SID)["torn_tail_bytes"], 0, "nothing left for verify")
    dev.unmount()


def test_a_compaction_of_small_turns_leaves_a_quarter_of_the_limit_free():
    # Small turns: room for 20 more would be almost the whole limit; the target is capped at
    # 75% of it, so the next compaction is many turns away.
    dev, mem = _fresh(session_limit=20000)
    n = size = 0
    while True:
        n += 1
        _turn(mem.sessions, n, tools=False)
        now = mem.sessions.stat(SID)["bytes"]
        if now < size:
            break
        size = now
    turn = len(_user(n)) + len(_final(n)) + 2
    ok(size <= 20000 < size + turn, "compacted after the turn that went over the limit")
    ok(15000 - 2 * 80 < now <= 15000, "down to 75%% of the limit: %d bytes" % now)
    eq(_tags(mem.sessions.messages(SID, tokens=0))[-2:], [("user", str(n)), ("final", str(n))],
       "the newest turn kept")
    dev.unmount()


def test_a_newest_turn_over_the_target_is_all_a_compaction_keeps():
    # Ten small turns, then one of 17.7 KB: over the target (at most 75% of 20,000 bytes),
    # under the limit. Every older turn goes; the session is not blocked.
    dev, mem = _fresh(session_limit=20000)
    s = mem.sessions
    for n in range(1, 11):
        _turn(s, n)
    eq(_turn(s, 11, pad=17500), None, "no block warning")
    newest = sum(len(r) + 1 for r in (_user(11), _call(11), _result(11, 17500), _final(11)))
    eq(s.stat(SID)["bytes"], newest, "only the newest turn is left")
    eq(_tags(s.messages(SID, tokens=0)), [("user", "11"), ("call", "11"), ("tool", "11"), ("final", "11")],
       "whole")
    ok(not s.blocked(SID), "not blocked")
    dev.unmount()


def test_list_counts_records_logged_after_the_index_through_another_open():
    dev, a = _fresh()
    _turn(a.sessions, 1, tools=False)  # the first turn creates the .idx
    _turn(a.sessions, 2, tools=False)  # its entries wait in RAM (index_every 4)
    b = claw_memory.open("/flash")
    eq([(e["records"], e["bytes"]) for e in b.sessions.list()], [(4, fsutil.size(_log()))],
       "every logged record counted")
    dev.unmount()


def _whole_or_gone(torn):
    dev = mount("lfs2", "/flash", blocks=64)
    mem = claw_memory.open("/flash")
    _turn(mem.sessions, 1)
    mem.sessions.persist(SID, [(1, _user(2), None)])  # a pending turn: a .pending file too
    mem.close()
    base = dev.image()
    ops0 = dev.ops
    claw_memory.open("/flash").sessions.delete(SID)
    total = dev.ops - ops0
    outcomes = set()
    for n in range(total):
        dev = dev.restore(base)
        dev.cut_power(n, torn)
        try:
            claw_memory.open("/flash").sessions.delete(SID)
        except OSError:
            pass
        dev = dev.reboot()
        s = claw_memory.open("/flash").sessions
        got = _tags(s.messages(SID, tokens=0))  # the first use finishes a journalled deletion
        left = sorted(os.listdir(D)) if fsutil.is_dir(D) else []
        if got:
            eq(got, [("user", "1"), ("call", "1"), ("tool", "1"), ("final", "1"), ("user", "2")],
               "cut %d: the session whole" % n)
        else:
            eq(left, [], "cut %d: gone, no file of it left" % n)
        outcomes.add(bool(got))
    eq(outcomes, {True, False}, "cuts before and after the deletion began")
    dev.unmount()


@timeout(600)
def test_a_deletion_cut_anywhere_leaves_the_session_whole_or_gone():
    for torn in (False, True):
        _whole_or_gone(torn)
