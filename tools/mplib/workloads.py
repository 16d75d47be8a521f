# Scripted workloads with their invariant checks, for power-cut matrices.
# MIT license

from claw_memory import fsutil
from claw_memory.session import Sessions

SESSION_DIR = "/flash/sessions"
SID = "chat:test:cut:default_01"


def _call(n):
    return ('{"role":"assistant","content":null,"tool_calls":[{"id":"call%d","type":"function",'
            '"function":{"name":"tool","arguments":"{}"}}]}' % n)


def _result(n, pad):
    return '[{"role":"tool","tool_call_id":"call%d","content":"%s","is_error":false}]' % (n, "r" * pad)


def session_turns(turns=6, pad=500, limit=4000):
    """Several turns with tool records; the log passes `limit` so compaction runs midway."""

    def workload(acked):
        fsutil.makedirs(SESSION_DIR)
        s = Sessions(SESSION_DIR, size_limit=limit)
        for n in range(turns):
            s.persist(SID, [(1, None, "user %d" % n)])
            acked.append(("user", n))
            s.persist(SID, [(3, _call(n), None), (4, _result(n, pad), None)])
            acked.append(("tool", n))
            s.persist(SID, [(2, '{"role":"assistant","content":"final %d"}' % n, None)],
                      turn_completed=True)
            acked.append(("final", n))

    def check(acked):
        s = Sessions(SESSION_DIR, size_limit=limit)
        msgs = s.messages(SID)
        texts = []
        for m in msgs:
            if m["role"] == "tool":
                texts.append(("tool", int(m["tool_call_id"][4:])))
            elif m.get("tool_calls"):
                texts.append(("call", int(m["tool_calls"][0]["id"][4:])))
            else:
                kind, n = m["content"].split()
                texts.append((kind, int(n)))
        for t in texts:
            if texts.count(t) != 1:
                raise AssertionError("record %r appears %d times" % (t, texts.count(t)))
        for i, t in enumerate(texts):  # a call is always followed by its result
            if t[0] == "call" and (i + 1 >= len(texts) or texts[i + 1] != ("tool", t[1])):
                raise AssertionError("tool call %d without its result" % t[1])
        dialogue = [t for t in texts if t[0] in ("user", "final")]
        if dialogue != sorted(dialogue, key=lambda t: (t[1], t[0] == "final")):
            raise AssertionError("records out of order: %r" % dialogue)
        lost = 0
        for kind, n in acked:
            if kind in ("user", "final") and (kind, n) not in texts:
                lost += 1
        tools = [n for kind, n in acked if kind == "tool"]
        if tools and ("tool", tools[-1]) not in texts:
            lost += 1  # the newest acknowledged tool round must survive compaction
        # The next turn works on what survived.
        s.persist(SID, [(1, None, "user 99")])
        if s.messages(SID)[-1] != {"role": "user", "content": "user 99"}:
            raise AssertionError("next persist not replayed")
        return lost

    return workload, check
