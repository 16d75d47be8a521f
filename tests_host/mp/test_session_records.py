# Session history: what a record is, read the way ESP-Claw reads it: a key named twice has its
# first value (cJSON), a record of any size is a record (over the replay bound it stays on
# flash, unsent), and no line is read with a buffer sized by a bound instead of by the line.
# Each test fails when its behaviour breaks; expectations are written out by hand or read from
# the files the way ESP-Claw reads them. Public API only.
import builtins
import json
import os
import struct

from flashsim import mount
from mptest import eq, ok
from turns import SID, final as _final, log as _log, user as _user

import claw_memory
from claw_memory import jsonraw, session, wire

HEAP = "8M"
BACKENDS = ("openai", "anthropic", "openai_responses")
DUP_ROLE = '{"role":"user","content":"user 1","role":"assistant"}'


def _fresh(kind="lfs2", blocks=256, **kw):
    dev = mount(kind, "/flash", blocks=blocks)
    return dev, claw_memory.open("/flash", **kw)


def _read(path):
    with open(path, "rb") as f:
        return f.read()


def _types(log):
    idx = _read(log + ".idx")
    return [idx[k + 8] for k in range(8, len(idx), 10)]


def _wire_roles(mem, backend):
    body = b"".join(bytes(c) for c in mem.sessions.history(SID, backend).json_chunks(backend))
    return [m.get("role") for m in json.loads(b"[" + body + b"]")]


def test_a_key_named_twice_has_its_first_value_everywhere():
    # cJSON's lookup returns the first "role": ESP-Claw indexes and replays this record as the
    # user's. Parsed with the last key instead, the history would open with an assistant
    # message (Anthropic rejects that) while the index says user.
    eq(jsonraw.json_value(DUP_ROLE), {"role": "user", "content": "user 1"}, "first key")
    eq(jsonraw.json_value('{"a":"x:y","b":{"c":1,"c":[2]},"a":3}'), {"a": "x:y", "b": {"c": 1}},
       "nested, with a colon inside a string")
    eq(jsonraw.json_value('{"a\\u003a":1,"a:":2}'), {"a:": 1}, "an escaped key naming the same")
    eq(jsonraw.json_value('{"a":1,"a":"\\u003a"}'), {"a": 1}, "an escaped colon hiding the count")
    eq(jsonraw.json_value('[{"k":"a\\"b","k":2 , "z" : 1}]'), [{"k": 'a"b', "z": 1}], "escaped quote")
    for kind in ("lfs2", "fat"):
        for reindex in (False, True):
            dev, mem = _fresh(kind)
            recs = [(1, 1, DUP_ROLE), (2, 1, _final(1)), (1, 1, _user(2)), (2, 1, _final(2))]
            mem.sessions.restore(session.file_name(SID), recs)
            if reindex:
                os.remove(_log() + ".idx")  # rebuilt from the log: classified by its JSON
            for backend in BACKENDS:
                msgs = mem.sessions.messages(SID, backend)
                eq([m["role"] for m in msgs], ["user", "assistant", "user", "assistant"],
                   "%s %s: parsed as indexed" % (kind, backend))
                eq(msgs[0]["content"], "user 1", backend)
                roles = [r for r in _wire_roles(mem, backend) if r is not None]
                eq(roles[0], "user", "%s %s: the wire opens with the user" % (kind, backend))
            mem.close()
            eq(_types(_log()), [1, 2, 1, 2], "%s: indexed as ESP-Claw indexes it" % kind)
            dev.unmount()


def test_tool_arguments_with_a_key_named_twice_go_to_anthropic_with_the_first():
    call = {"role": "assistant", "content": None, "tool_calls": [
        {"id": "c1", "type": "function",
         "function": {"name": "t", "arguments": '{"q":"first","n":1,"q":"second"}'}}]}
    w = wire.convert([{"role": "user", "content": "u"}, call], "anthropic")
    eq(w[1]["content"][0]["input"], {"q": "first", "n": 1}, "cJSON's first key")


def _esp_session(recs, index=True):
    """A session as ESP-Claw writes it, records of any size: (type, backend, JSON) each."""
    os.mkdir("/flash/sessions")
    data = bytearray()
    idx = bytearray(b"CHDX\x01\x00\x0a\x00")
    for t, fmt, js in recs:
        raw = js.encode() + b"\n"
        idx += struct.pack("<IIBB", len(data), len(raw), t, fmt)
        data += raw
    with open(_log(), "wb") as f:
        f.write(data)
    if index:
        with open(_log() + ".idx", "wb") as f:
            f.write(idx)
    return bytes(data)


def _big_result(n, size):
    # Escapes at every offset, so that some straddle the pieces a long record is read by.
    unit = 'ab\\"c\\\\d\\u00e9 :{['
    body = (unit * (size // len(unit) + 1))[:size]
    while body.endswith("\\") or body[-6:].find("\\u") >= 0:
        body = body[:-1]
    return '[{"role":"tool","tool_call_id":"c%s","content":"%s","is_error":false}]' % (n, body)


def _call(n):
    return ('{"role":"assistant","content":null,"tool_calls":[{"id":"c%s","type":"function",'
            '"function":{"name":"t","arguments":"{}"}}]}' % n)


def _anthropic_call(n, size):
    return ('{"role":"assistant","content":[{"type":"text","text":"%s"},{"type":"tool_use",'
            '"id":"c%s","name":"t","input":{}}]}' % ("t" * size, n))


def test_a_valid_record_over_the_bound_is_a_record_never_deleted_and_never_sent():
    # ESP-Claw writes records without a size limit. One over max_record_bytes (64 KiB) is a
    # record: kept by repair whatever its size (with the index rebuilt from the log too), left
    # out of what a request sends with its tool exchange. A line of the same size that is no
    # JSON record is still damage.
    big = 70000
    recs = [(1, 1, _user(1)), (3, 1, _call(1)), (4, 0, _big_result(1, big)), (2, 1, _final(1)),
            (1, 1, '{"role":"user","content":"%s"}' % ("u" * big)), (2, 1, _final(2)),
            (1, 1, _user(3)), (3, 2, _anthropic_call(3, big)),
            (1, 1, '{"role":"user","content":"%s"}' % ("m" * 5000)),  # within the bound: sent
            (4, 0, '[{"role":"tool","tool_call_id":"c3","content":"r","is_error":false}]'),
            (2, 1, _final(3)), (1, 1, _user(4)), (2, 1, _final(4))]
    for kind in ("lfs2", "fat"):
        for index in (True, False):
            dev = mount(kind, "/flash", blocks=256)
            data = _esp_session(recs, index)
            mem = claw_memory.open("/flash", history_tokens=0)
            rep = mem.sessions.verify(SID)
            what = "%s, index %s" % (kind, index)
            eq((rep["records"], rep["dropped"], rep["reindexed"]), (13, 0, 0 if index else 13), what)
            rep = mem.sessions.repair(SID)
            eq(rep["dropped"], 0, what)
            eq(_read(_log()), data, "%s: the log is as ESP-Claw wrote it" % what)
            eq(_types(_log()), [t for t, fmt, js in recs], "%s: indexed by type" % what)
            msgs = mem.sessions.messages(SID, "openai")
            got = [(m["role"], m.get("content")) for m in msgs]
            eq(got, [("user", "user 1"), ("assistant", "final 1"), ("assistant", "final 2"),
                     ("user", "user 3"), ("user", "m" * 5000), ("assistant", "final 3"), ("user", "user 4"),
                     ("assistant", "final 4")], "%s: the big records and their calls unsent" % what)
            for backend in BACKENDS:  # the streamed request body too
                roles = [r for r in _wire_roles(mem, backend) if r is not None]
                eq(len(roles), 8, "%s %s: what is sent" % (what, backend))
            budgeted = mem.sessions.messages(SID, "openai", tokens=6144)
            eq([(m["role"], m.get("content")) for m in budgeted], got,
               "%s: what is never sent takes none of the token budget" % what)
            mem.close()
            dev.unmount()
    # A line as long that is no record (cut inside a string, then ESP-Claw's next append).
    dev = mount("lfs2", "/flash", blocks=256)
    _esp_session([(1, 1, _user(1)), (2, 1, _final(1)), (1, 1, _user(2))], False)
    with open(_log(), "ab") as f:
        f.write(_big_result(9, big)[:-40].encode() + _user(3).encode() + b"\n" + _final(3).encode() + b"\n")
    mem = claw_memory.open("/flash", history_tokens=0)
    rep = mem.sessions.verify(SID)
    eq((rep["records"], rep["dropped"]), (4, 1), "the garbage line is damage")
    mem.sessions.repair(SID)
    eq([m["content"] for m in mem.sessions.messages(SID)], ["user 1", "final 1", "user 2", "final 3"],
       "repaired without it")
    mem.close()
    dev.unmount()


_BOUND = 4096  # "a few KiB": the most a read may reserve beyond what the file still holds


class _Watched:
    """A file whose reads are checked: readline(n) only with 0 <= n <= _BOUND (MicroPython
    reserves n bytes), read(n) only for at most _BOUND bytes or what is left of the file."""

    bad = []
    lines = 0
    biggest = 0  # the largest read(n)

    def __init__(self, f, path):
        self.f = f
        self.path = path

    def __enter__(self):
        return self

    def __exit__(self, *a):
        self.f.close()

    def __getattr__(self, name):
        return getattr(self.f, name)

    def readline(self, n=-1):
        _Watched.lines += 1
        if not 0 <= n <= _BOUND:
            _Watched.bad.append(("readline", n, self.path))
        return self.f.readline(n)

    def read(self, n=-1):
        _Watched.biggest = max(_Watched.biggest, n)
        if n < 0 or n > _BOUND:
            pos = self.f.tell()
            end = self.f.seek(0, 2)
            self.f.seek(pos)
            if n < 0 or n > end - pos:
                _Watched.bad.append(("read", n, end - pos, self.path))
        return self.f.read(n)


def test_every_session_read_reserves_at_most_a_few_kib_beyond_the_line():
    # Each place the session code reads a line or a record (the pending file at a turn's end,
    # at a request start, on open and in a listing; the log when an index is rebuilt, checked
    # or repaired; the pending file's header after a compaction; pages and export), with a
    # pending turn, a big ESP-Claw record and garbage to read around, on LittleFS and FAT.
    real = builtins.open

    def watched(path, mode="r", *a):
        return _Watched(real(path, mode, *a), path)

    for kind in ("lfs2", "fat"):
        dev = mount(kind, "/flash", blocks=256)
        _esp_session([(1, 1, _user(1)), (3, 1, _call(1)), (4, 0, _big_result(1, 70000)),
                      (2, 1, _final(1))], index=False)
        with open(_log(), "ab") as f:
            f.write(b'{"role":"us\n')  # garbage between records
        _Watched.bad = []
        _Watched.biggest = 0
        builtins.open = watched
        try:
            mem = claw_memory.open("/flash", session_limit=90000)
            s = mem.sessions
            counts = []
            for step in range(3):
                _Watched.lines = 0
                s.persist(SID, [(1, _user("p%d" % step), None)])
                s.persist(SID, [(3, _call("p%d" % step), None), (4, '[{"role":"tool","tool_call_id":"cp%d","content":"ok","is_error":false}]' % step, None)])
                h = s.history(SID, "openai")  # a request start with a turn in progress
                b"".join(bytes(c) for c in h.json_chunks("openai"))
                s.messages(SID, "anthropic")
                s.page(SID)
                list(s.records(SID))
                list(s.list())
                counts.append(_Watched.lines)
                _Watched.lines = 0
                s.persist(SID, [(2, _final("p%d" % step), None)], turn_completed=True)
                counts.append(_Watched.lines)
            mem.close()
            for fresh in range(2):  # an open that settles the pending file, and a rebuild
                if fresh:
                    os.remove(_log() + ".idx")
                mem = claw_memory.open("/flash", session_limit=90000)
                mem.sessions.persist(SID, [(1, _user("q%d" % fresh), None)])
                mem.close()
                mem = claw_memory.open("/flash", session_limit=90000)
                _Watched.lines = 0
                mem.sessions.verify(SID)
                mem.sessions.repair(SID)
                mem.sessions.stat(SID)
                counts.append(_Watched.lines)
                mem.sessions.compact(SID)  # with the pending file: its header rewritten
                mem.close()
        finally:
            builtins.open = real
        eq(_Watched.bad, [], "%s: no read reserves more than %d bytes beyond the line" % (kind, _BOUND))
        ok(_Watched.biggest <= 65536 + 1, "%s: the 70,000-byte record, over the 64 KiB bound, is "
           "never read in one piece (the largest read: %d bytes)" % (kind, _Watched.biggest))
        # (the watch works: a pending turn this program wrote, at most 1 KiB, is read from RAM
        # afterwards, so the later steps of a session read no line of it from the file)
        ok(counts[0] > 0 and min(counts[6:]) > 0, "%s: the first step and the opens read lines (%r)"
           % (kind, counts))
        dev.unmount()
