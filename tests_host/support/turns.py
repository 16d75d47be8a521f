# Session records as the session tests write them (a user message, a tool call and its result,
# a final answer: ESP-Claw's record types 1, 3, 4 and 2), a whole turn, the tags of replayed
# messages, and what ESP-Claw replays from a session's index.
# MIT license
import json
import struct

from mptest import eq, ok

from claw_memory import session

D = "/flash/sessions"
SID = "chat:web:local:gaps_01"


def espclaw_files(names):
    """The names ESP-Claw knows among a sessions folder's: ours (archive segments, the
    archive catalog) left out."""
    return sorted(n for n in names if not (".log.arc" in n or n == "archive.list"))


def log(sid=SID):
    return D + "/" + session.file_name(sid)


def _read(path):
    with open(path, "rb") as f:
        return f.read()


def user(n, pad=""):
    return '{"role":"user","content":"user %s%s"}' % (n, pad)


def final(n, pad=""):
    return '{"role":"assistant","content":"final %s%s"}' % (n, pad)


def call(n):
    return ('{"role":"assistant","content":null,"tool_calls":[{"id":"c%s","type":"function",'
            '"function":{"name":"t","arguments":"{}"}}]}' % n)


def result(n, pad=0):
    return '[{"role":"tool","tool_call_id":"c%s","content":"%s","is_error":false}]' % (n, "r" * pad)


def turn(s, n, tools=True, pad=0, sid=SID):
    s.persist(sid, [(1, user(n), None)])
    if tools:
        s.persist(sid, [(3, call(n), None), (4, result(n, pad), None)])
    return s.persist(sid, [(2, final(n), None)], turn_completed=True)


def tags(msgs):
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


def esp_replay(log):
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
