# Session history: the 150 KiB size limit pinned below, at and above it, compaction (an
# unfinished last turn's tool records, the target it leaves free, a newest turn over it), page
# and record bounds. Each test fails when its behaviour breaks; expectations are written out by
# hand or read from the files the way ESP-Claw reads them, never computed with the code under
# test. Public API only.
from flashsim import mount
from mptest import eq, heap, ok
from turns import (SID, call as _call, esp_replay as _esp_replay, final as _final, log as _log,
                   result as _result, tags as _tags, turn as _turn, user as _user)

import claw_memory
from claw_memory import session

HEAP = "8M"
LIMIT = 153600  # ESP-Claw's CLAW_MEMORY_SESSION_SIZE_LIMIT


def _fresh(kind="lfs2", blocks=256, **kw):
    dev = mount(kind, "/flash", blocks=blocks)
    return dev, claw_memory.open("/flash", **kw)


def _read(path):
    with open(path, "rb") as f:
        return f.read()


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


def _dialogue(n):
    return [(1, 1, '{"role":"user","content":"user %d %s"}' % (n, "q" * 180)),
            (2, 1, '{"role":"assistant","content":"final %d %s"}' % (n, "a" * 230))]


def _tool_turn(n, size):
    return [(1, 1, _user(n)), (3, 1, _call(n)), (4, 1, _result(n, size)), (2, 1, _final(n))]


@heap("16M")  # four 1 MiB simulated flashes, allocated whole, in one process
def test_one_large_tool_turn_does_not_evict_the_dialogue():
    # 212 dialogue turns (~100 KB) and one 63 KB tool turn: the room for 20 more turns is sized
    # by the median turn, not by that one. As the newest turn it is kept whole and the oldest
    # dialogue makes only the room the limit needs (its tool records go at the next
    # compaction); as an older turn its tool records go first and no dialogue goes at all.
    # (Sized by the mean, the compaction kept 38 of the 212 dialogue turns.)
    dialogue = []
    for n in range(212):
        dialogue += _dialogue(n)
    turn = sum(len(js) + 1 for _, _, js in _dialogue(0))  # 475 bytes a dialogue turn
    for kind in ("lfs2", "fat"):
        for newest in (True, False):
            dev, mem = _fresh(kind)
            recs = dialogue + _tool_turn(900, 63000)
            if not newest:
                for n in range(212, 222):
                    recs += _dialogue(n)
            mem.sessions.restore(session.file_name(SID), recs)
            what = "%s, the tool turn %s" % (kind, "newest" if newest else "older")
            ok(mem.sessions.stat(SID)["bytes"] > LIMIT, what + ": over the limit")
            eq(mem.sessions.compact(SID), None, what + ": compacted, not blocked")
            size = mem.sessions.stat(SID)["bytes"]
            ok(size + 20 * turn <= LIMIT, "%s: room for 20 more turns (%d bytes)" % (what, size))
            msgs = mem.sessions.messages(SID, tokens=0)
            users = [m["content"].split()[1] for m in msgs if m["role"] == "user"]
            tools = [m["tool_call_id"] for m in msgs if m["role"] == "tool"]
            if newest:
                ok(len(users) >= 212 - 50, "%s: %d of 212 dialogue turns kept" % (what, len(users) - 1))
                eq(users[-1], "900", what + ": the tool turn whole")
                eq(tools, ["c900"], what + ": its result kept")
                eq(users, [str(n) for n in range(212 - len(users) + 1, 212)] + ["900"],
                   what + ": the oldest dialogue went")
            else:
                eq(len(users), 223, what + ": every dialogue turn kept")
                eq(tools, [], what + ": the old tool result went first")
            mem.close()
            dev.unmount()


def test_the_room_left_is_sized_by_the_newest_turns():
    # Twenty short turns, then twenty-five long ones: a compaction leaves room for 20 more
    # turns like the newest (the long ones), not like the oldest, so the next one is 20 turns
    # away again. Explicit, under the limit: the oldest turns go down to that room.
    dev, mem = _fresh(session_limit=40000)
    recs = []
    for n in range(20):
        recs += [(1, 1, _user(n)), (2, 1, _final(n))]
    for n in range(20, 45):
        recs += [(1, 1, _user(n, " " + "q" * 450)), (2, 1, _final(n, " " + "a" * 450))]
    long_turn = len(_user(44, " " + "q" * 450)) + len(_final(44, " " + "a" * 450)) + 2
    mem.sessions.restore(session.file_name(SID), recs)
    eq(mem.sessions.compact(SID), None, "compacted")
    size = mem.sessions.stat(SID)["bytes"]
    ok(size + 20 * long_turn <= 40000, "room for 20 more long turns (%d bytes)" % size)
    users = [m["content"].split()[1] for m in mem.sessions.messages(SID, tokens=0) if m["role"] == "user"]
    eq(users, [str(n) for n in range(45 - len(users), 45)], "the newest turns kept, in order")
    ok(len(users) >= 19, "%d turns kept" % len(users))
    dev.unmount()
