# Session history: repair of damaged files (a repeated or wrong index entry, a lone torn index
# temp file, a record without its newline, records that are not chat records, garbage, a torn
# tail) and records of a backend we do not know. Each test fails when its behaviour breaks;
# expectations are written out by hand or read from the files the way ESP-Claw reads them, never
# computed with the code under test. Public API only.
import struct

from flashsim import mount
from mptest import eq, ok
from turns import (D, SID, call as _call, esp_replay as _esp_replay, final as _final, log as _log,
                   result as _result, tags as _tags, turn as _turn, user as _user)

import claw_memory
from claw_memory import fsutil, session

HEAP = "8M"


def _fresh(kind="lfs2", blocks=256, **kw):
    dev = mount(kind, "/flash", blocks=blocks)
    return dev, claw_memory.open("/flash", **kw)


def _read(path):
    with open(path, "rb") as f:
        return f.read()


def _write(path, data):
    with open(path, "wb") as f:
        f.write(data)


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


def test_verify_names_a_leftover_of_an_interrupted_rewrite_and_leaves_it():
    # A journal or a temp file that an interrupted rewrite left beside the log: verify names
    # it and removes nothing (the next write settles it).
    name = _log().rsplit("/", 1)[-1]
    for left in [name + s for s in (".commit", ".tmp", ".idx.tmp", ".pending.tmp")] + [
            "../search/%s.tix.tmp" % name]:  # (the text index's, in its own folder)
        dev = _closed_session(2)
        _write(D + "/" + left, b"x")
        mem = claw_memory.open("/flash")
        rep = mem.sessions.verify(SID)
        eq(rep["leftovers"], [left.replace("../", "")], left + ": named")
        ok(fsutil.exists(D + "/" + left), left + ": left where it is")
        dev.unmount()


def test_an_index_whose_log_is_gone_is_removed_before_the_session_is_written_again():
    # Someone removed the log and not its index: the index describes records that are not
    # there, so it goes; the next turn starts a log and an index of its own.
    dev = _closed_session(2)
    fsutil.remove(_log())
    mem = claw_memory.open("/flash")
    eq(mem.sessions.messages(SID), [], "no log, no history")
    _turn(mem.sessions, 5, tools=False)
    mem.close()
    eq(fsutil.size(_log() + ".idx"), 8 + 10 * 2, "the index holds the new turn's two records only")
    eq(len(_esp_replay(_log())), 2, "what ESP-Claw replays: the new turn")
    dev.unmount()


def test_a_compaction_after_a_torn_tail_leaves_a_log_without_garbage():
    # A power cut left a torn record after the last turn; a compaction then rewrites the log
    # with whole records only, so the next turn is appended right after them: no closer for
    # a fragment that is gone, nothing for verify to find, and ESP-Claw reads every record.
    dev, mem = _fresh(session_limit=3000)
    for n in range(4):
        _turn(mem.sessions, n, pad=300)
    mem.close()
    with open(_log(), "ab") as f:
        f.write(b'{"role":"user","con')  # a power cut in the next append
    mem = claw_memory.open("/flash", session_limit=3000)
    eq(mem.sessions.verify(SID)["torn_tail_bytes"], 19, "(the torn tail)")
    eq(mem.sessions.compact(SID), None, "compacted")
    _turn(mem.sessions, 4, tools=False)
    mem.close()
    rep = mem.sessions.verify(SID)
    eq((rep["dropped"], rep["torn_tail_bytes"]), (0, 0), "no garbage line in the log")
    got = []
    for r in _esp_replay(_log()):
        got += _tags(r if isinstance(r, list) else [r])
    eq(got[-2:], [("user", "4"), ("final", "4")], "the newest turn last")
    eq(_read(_log()).count(b"\x00"), 0, "no closer written")
    dev.unmount()


def test_verify_finds_nothing_in_a_session_whose_newest_turns_wait_to_be_indexed():
    # Index entries wait in RAM for a few turns: that is no damage, and verify says so.
    dev, mem = _fresh()
    for n in range(6):
        _turn(mem.sessions, n)
    rep = mem.sessions.verify(SID)
    eq((rep["records"], rep["reindexed"], rep["dropped"], rep["index_entries_dropped"],
        rep["rebuilt_index"], rep["pending"], rep["leftovers"]), (24, 0, 0, 0, False, 0, []),
       "a sound session: nothing to repair")
    dev.unmount()
