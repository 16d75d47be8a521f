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


MEMORY_DIR = "/flash/memory"


def _store_script():
    # (op, content, new content or tags)
    return [
        ("store", "User likes green tea in the morning", "drink"),
        ("store", "User lives in Shanghai near the river", "city"),
        ("store", "User has a cat called Miso", "pets"),
        ("recall", "drink", None),
        ("update", "User lives in Shanghai near the river", "User lives in Beijing near the park"),
        ("forget", "User has a cat called Miso", None),
        ("store", "User works as a nurse at night", "work"),  # 5th change: compaction
        ("store", "User plays the violin on weekends", "music"),
        ("recall", "music", None),
        ("update", "User likes green tea in the morning", "User likes black coffee in the morning"),
        ("store", "User is allergic to peanuts", "health"),
    ]


def store_ops(clock_start=1714000000):
    """A store/update/forget/recall workload that compacts midway, with its check."""
    from claw_memory.store import Store

    script = _store_script()

    def workload(acked):
        t = [clock_start]

        def clock():
            t[0] += 1
            return t[0]

        s = Store(MEMORY_DIR, clock=clock)
        ids = {}
        for op, a, b in script:
            if op == "store":
                ids[a] = s.store(a, b)[0]["id"]
            elif op == "recall":
                s.recall([b or a])
            elif op == "update":
                ids[b] = s.update(ids[a], content=b)[0]["id"]
            elif op == "forget":
                s.forget(ids[a])
            acked.append(op)

    def check(acked):
        s = Store(MEMORY_DIR, clock=lambda: clock_start + 1000)
        items = s.list()
        contents = [i["content"] for i in items]
        for c in contents:
            if contents.count(c) != 1:
                raise AssertionError("item %r appears %d times" % (c, contents.count(c)))
        want = {}  # content -> True present / False gone, after the acknowledged ops
        for op, a, b in script[: len(acked)]:
            if op == "store":
                want[a] = True
            elif op == "update":
                want[a] = False
                want[b] = True
            elif op == "forget":
                want[a] = False
        flight = script[len(acked)] if len(acked) < len(script) else None
        maybe = set()  # contents the interrupted operation may or may not have changed
        if flight:
            maybe.add(flight[1])
            if flight[0] == "update":
                maybe.add(flight[2])
        lost = 0
        for c, present in want.items():
            if c in maybe:
                continue
            if present and c not in contents:
                lost += 1
            if not present and c in contents:
                raise AssertionError("forgotten item %r is back" % c)
        for c in contents:
            if c not in want and c not in maybe:
                raise AssertionError("unknown item %r" % c)
        check_store_consistent(s)
        s.store("A fact stored after the reboot", "after")
        if not s.recall(["after"]):
            raise AssertionError("store after reboot not recalled")
        return lost

    return workload, check


def check_store_consistent(s):
    """The index agrees with the items: catalog ref counts, stamp, keyword index."""
    import json

    from claw_memory import fsutil
    from claw_memory import item as itm

    items = s.list()
    refs = {}
    terms = {}
    for it in items:
        for sid in it["summary_ids"]:
            refs[sid] = refs.get(sid, 0) + 1
        for t in itm.keyword_terms(it):
            terms.setdefault(t, set()).add(it["id"])
    with open(s.index, "rb") as f:
        idx = json.loads(f.read())
    got = {e["summary_id"]: e["ref_count"] for e in idx["summaries"]}
    if got != refs:
        raise AssertionError("catalog %r, items say %r" % (got, refs))
    if idx["records_size"] != fsutil.size(s.records):
        raise AssertionError("index stamp behind the records")
    kw = {t: set(ids) for t, ids in idx["keyword_index"].items()}
    if kw != terms:
        raise AssertionError("keyword index %r, items say %r" % (kw, terms))
