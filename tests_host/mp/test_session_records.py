# Session history: what a record is, read the way ESP-Claw reads it: a key named twice has its
# first value (cJSON), a record of any size is a record (over the replay bound it stays on
# flash, unsent), and no line is read with a buffer sized by a bound instead of by the line.
# Each test fails when its behaviour breaks; expectations are written out by hand or read from
# the files the way ESP-Claw reads them. Public API only.
import json
import os
import struct

from flashsim import mount
from mptest import eq, ok
from turns import SID, final as _final, log as _log, user as _user

import claw_memory
from claw_memory import session, text, wire

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
    eq(text.json_value(DUP_ROLE), {"role": "user", "content": "user 1"}, "first key")
    eq(text.json_value('{"a":"x:y","b":{"c":1,"c":[2]},"a":3}'), {"a": "x:y", "b": {"c": 1}},
       "nested, with a colon inside a string")
    eq(text.json_value('{"a\\u003a":1,"a:":2}'), {"a:": 1}, "an escaped key naming the same")
    eq(text.json_value('[{"k":"a\\"b","k":2 , "z" : 1}]'), [{"k": 'a"b', "z": 1}], "escaped quote")
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
