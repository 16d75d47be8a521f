# Scripted workloads with their invariant checks, for power-cut matrices.
# MIT license

import json

import flashsim
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
        # A compaction drops whole oldest turns (hysteresis): what is left of the dialogue is
        # every acknowledged record from some turn k on, and only a compacted log lost any.
        lost = 0
        k = min([n for kind, n in dialogue]) if dialogue else 1 << 30
        for kind, n in acked:
            if kind in ("user", "final") and (kind, n) not in texts and (n >= k or not dialogue):
                lost += 1
        if 0 < k < 1 << 30 and s.stat(SID)["bytes"] > limit:
            raise AssertionError("turns before %d dropped from a log under the limit" % k)
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
RECORDS = "memory_records.jsonl"


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
        # an extraction "replace": the new fact and the forgetting of the old, one append
        ("replace", "User works as a nurse at night", "User works as a teacher during the day"),
        ("store", "User collects old stamps", "hobby"),
        ("close", None, None),  # forgotten text leaves every file; derived files written
        ("forget", "User collects old stamps", None),
        ("store", "User sails on Sundays", "sailing"),
        ("store", "User reads history books", "books"),
        ("update", "User sails on Sundays", "User sails on Saturdays"),  # 5th: compaction, the
        # derived files (written at the close, listing the stamps) still there until it
    ]


_LINES = {"store": 1, "forget": 1, "update": 2, "replace": 2}  # records lines a change appends


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
            if op == "close":
                s.close()
                s = Store(MEMORY_DIR, clock=clock)
            elif op == "store":
                ids[a] = s.store(a, b)[0]["id"]
            elif op == "recall":
                s.recall([b or a])
            elif op == "update":
                ids[b] = s.update(ids[a], content=b)[0]["id"]
            elif op == "forget":
                s.forget(ids[a])
            elif op == "replace":
                with s.batch() as bt:
                    ids[b] = bt.store(b, "work")[0]["id"]
                    bt.forget(ids[a])
            _ack(acked, op)

    def check(acked):
        _forgotten_text_gone(script, acked)
        _no_file_keeps_what_the_records_lost(script, acked)
        s = Store(MEMORY_DIR, clock=lambda: clock_start + 1000)
        items = list(s.list())
        contents = [i["content"] for i in items]
        for c in contents:
            if contents.count(c) != 1:
                raise AssertionError("item %r appears %d times" % (c, contents.count(c)))
        want = {}  # content -> True present / False gone, after the acknowledged ops
        for op, a, b in script[: len(acked)]:
            if op == "store":
                want[a] = True
            elif op in ("update", "replace"):
                want[a] = False
                want[b] = True
            elif op == "forget":
                want[a] = False
        flight = script[len(acked)] if len(acked) < len(script) else None
        maybe = set()  # contents the interrupted operation may or may not have changed
        if flight:
            maybe.add(flight[1])
            if flight[0] in ("update", "replace"):
                maybe.add(flight[2])
                # all or none: the old fact and its replacement are never both there or both gone
                if (flight[1] in contents) == (flight[2] in contents):
                    raise AssertionError("a cut %s is half applied: %r" % (flight[0], contents))
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


def store_evictions(clock_start=1714000000, cap=10):
    """A store at a capacity of `cap` where evictions pend between compactions: stores over
    it (a recall between two evictions), a store+forget batch, an update, more stores, a
    close and stores after it. The check: after a cut the items are the state after the
    last acknowledged step or after the whole step in flight (the states of an uncut run),
    never more than `cap`, and the RAM counts that trigger compaction are a reopen's."""
    from claw_memory.store import Store

    states = []  # the active ids after each step of the uncut run

    def workload(acked):
        t = [clock_start]

        def clock():
            return t[0]

        s = Store(MEMORY_DIR, clock=clock, max_active=cap)
        record = not states

        def ack(what):
            _ack(acked, what)
            if s.count() > cap:
                raise AssertionError("%d items over a capacity of %d" % (s.count(), cap))
            if record:
                states.append(sorted(s.ids_where(lambda it: True)))

        ids = []
        for n in range(cap):
            t[0] += 3600
            ids.append(s.store("Seed fact number %02d" % n, "s%d" % n)[0]["id"])
        s.compact()
        ack("seeded")
        for n in range(8):
            t[0] += 3600
            if n == 1:
                s.recall(["s2"])  # between two evictions: s2 is kept
            if n == 2:
                with s.batch() as b:
                    b.store("Batch new fact %d" % n, "b")
                    b.forget(ids[5])
            elif n == 3:
                s.update(ids[6], "Updated seed six")
            elif n == 5:
                s.close()
                s = Store(MEMORY_DIR, clock=clock, max_active=cap)
            else:
                s.store("Evicting new fact %02d" % n, "e%d" % n)
            ack(n)

    def check(acked):
        s = Store(MEMORY_DIR, clock=lambda: clock_start + 99 * 3600, max_active=cap)
        got = sorted(s.ids_where(lambda it: True))
        k = len(acked)
        want = [states[k - 1]] if k else [[]]
        if k < len(states):
            want.append(states[k])
        if k == 0:
            want = None  # cut while seeding: any prefix of the seed stores
        if want is not None and got not in want:
            raise AssertionError("after %d steps: %r, want one of %r" % (k, got, want))
        if len(got) > cap:
            raise AssertionError("%d items over a capacity of %d" % (len(got), cap))
        again = Store(MEMORY_DIR, clock=s.clock, max_active=cap)
        again.count()
        a = (s._st.tab.lines, s._st.tab.changes, s._st.tab.evicted, s._st.tab.active)
        b = (again._st.tab.lines, again._st.tab.changes, again._st.tab.evicted, again._st.tab.active)
        if a != b:
            raise AssertionError("RAM counts %r, a reopen's %r" % (a, b))
        check_store_consistent(s)
        return 0

    return workload, check


def extract(store, intent, facts, text="a user message"):
    """Apply an extraction answer of `facts` ((content, tag) pairs) with `intent`, as the
    stage note applies one (claw_memory/extract.py); returns the labels it reports."""
    from claw_memory.core import Request
    from claw_memory.extract import Extraction, Job

    job = Job(Request(text, SID), 1)
    job.answer = json.dumps({"intent": intent, "memories": [
        {"content": c, "tags": [t], "keywords": []} for c, t in facts]})
    return Extraction(store, None).apply(job)


def _extraction_script():
    # (intent, facts): results of two and three facts, one that replaces two facts (two
    # stores and two forgets), one with a fact already stored; a close between.
    return [
        ("none", [("User lives in Lisbon near the sea", "city"), ("User has a dog named Rex", "pets")]),
        ("none", [("User drinks green tea every morning", "drink"), ("User works as a night nurse", "work"),
                  ("User plays chess on Fridays", "hobby")]),
        ("replace", [("User lives in Porto by the river", "city"), ("User works as a teacher", "work")]),
        ("close", None),
        ("none", [("User has a dog named Rex", "pets"), ("User speaks Portuguese at home", "language")]),
        ("replace", [("User plays go on Fridays", "hobby"), ("User drinks black coffee", "drink"),
                     ("User has a cat named Miso", "pets")]),
    ]


def extractions(clock_start=1714000000):
    """Extraction results with several facts (_extraction_script), each one append. The
    check: after a cut the items are the state after the last acknowledged result or after
    the whole result in flight (the states of an uncut run), never a part of one."""
    from claw_memory.store import Store

    script = _extraction_script()
    states = []  # the active contents after each step of the uncut run

    def workload(acked):
        t = [clock_start]

        def clock():
            t[0] += 1
            return t[0]

        s = Store(MEMORY_DIR, clock=clock)
        record = not states
        for intent, facts in script:
            if intent == "close":
                s.close()
                s = Store(MEMORY_DIR, clock=clock)
            elif not extract(s, intent, facts):
                raise AssertionError("the extraction result stored nothing")
            _ack(acked, intent)
            if record:
                states.append(sorted(it["content"] for it in s.list()))

    def check(acked):
        s = Store(MEMORY_DIR, clock=lambda: clock_start + 1000)
        got = sorted(it["content"] for it in s.list())
        k = len(acked)
        want = [states[k - 1] if k else []]
        if k < len(states):
            want.append(states[k])
        if got not in want:
            raise AssertionError("after %d results: %r, want one of %r" % (k, got, want))
        check_store_consistent(s)
        extract(s, "none", [("A fact extracted after the reboot", "after"), ("Another one", "after")])
        if len(s.recall(["after"])) != 2:
            raise AssertionError("extraction after the reboot not recalled")
        return 0

    return workload, check


def _forgotten_text_gone(script, acked):
    """Before the store reopens: text forgotten (forget, update, replace) at least 5 changes
    ago, or before an acknowledged close, is in no file (records, index, MEMORY.md)."""
    import os

    done = script[: len(acked)]
    for i, (op, a, b) in enumerate(done):
        if op not in ("forget", "update", "replace"):
            continue
        later = done[i + 1 :]
        lines = _LINES[op] + sum(_LINES.get(o, 0) for o, _, _ in later)
        if lines < 5 and not any(o == "close" for o, _, _ in later):
            continue
        if any(o in ("store", "update", "replace") and (x == a or y == a) for o, x, y in later):
            continue  # stored again later
        for name in os.listdir(MEMORY_DIR):
            with open(MEMORY_DIR + "/" + name, "rb") as f:
                if a.encode() in f.read():
                    raise AssertionError("forgotten %r still in %s" % (a, name))


def _no_file_keeps_what_the_records_lost(script, acked):
    """Before the store reopens, at any cut: text the records file no longer holds (forgotten,
    then compacted away, by an acknowledged operation or the one the cut stopped) is in no
    other file either: the derived files go before the records are replaced."""
    import os

    try:
        names = os.listdir(MEMORY_DIR)
    except OSError:  # (cut before the folder was made)
        return
    if RECORDS not in names:
        return
    with open(MEMORY_DIR + "/" + RECORDS, "rb") as f:
        rec = f.read()
    for op, a, b in script[: len(acked) + 1]:
        if op not in ("forget", "update", "replace") or a.encode() in rec:
            continue
        for name in names:
            with open(MEMORY_DIR + "/" + name, "rb") as f:
                if a.encode() in f.read():
                    raise AssertionError("%r is gone from the records but still in %s" % (a, name))


def check_store_consistent(s):
    """The index agrees with the items: catalog ref counts, stamp, keyword index."""
    import json

    from claw_memory import fsutil
    from claw_memory import item as itm

    s.flush()
    items = list(s.list())
    refs = {}
    terms = {}
    for it in items:
        for sid in it["summary_ids"]:
            refs[sid] = refs.get(sid, 0) + 1
        for t in itm.keyword_terms(it):
            terms.setdefault(t, set()).add(it["id"])
    with open(s.index_path, "rb") as f:
        idx = json.loads(f.read())
    got = {e["summary_id"]: e["ref_count"] for e in idx["summaries"]}
    if got != refs:
        raise AssertionError("catalog %r, items say %r" % (got, refs))
    if idx["records_size"] != fsutil.size(s.records_path):
        raise AssertionError("index stamp behind the records")
    kw = {t: set(ids) for t, ids in idx["keyword_index"].items()}
    if kw != terms:
        raise AssertionError("keyword index %r, items say %r" % (kw, terms))
    # ranked recall: each item found by its own words, nothing but active items returned
    ids = set(it["id"] for it in items)
    for it in items:
        got = [x["id"] for x in s.matches(it["content"], 8)]
        if it["id"] not in got or not ids.issuperset(got):
            raise AssertionError("ranked recall of %r gave %r" % (it["content"], got))


# -- the whole system -------------------------------------------------------------------------

ROOT = "/flash"
CH, CHAT = "web", "u1"


def _system_script():
    """Every write path: persist with tool records, session compaction and blocking, store,
    update, forget, recall, extraction results with several facts (one replacing three),
    store compaction, profile edit, session delete, /session new and switch. Each step:
    (op, args); an extraction (op, intent, facts, the contents it replaces)."""
    s = []
    for n in range(2):
        s.append(("turn", "default_01", n, 300))
    s += [("store", "User likes green tea", "drink"), ("store", "User lives in Porto", "city"),
          ("recall", "drink"), ("update", "User lives in Porto", "User lives in Lisbon"),
          ("extract", "none", [("User has a sister named Eva", "family"),
                               ("User runs every morning", "sport")], ()),
          ("profile", "# User\n\nName: Ada\n"), ("session", "new work")]
    for n in range(2, 7):
        s.append(("turn", "work", n, 700))  # passes the 4000-byte limit: compaction
    s.append(("ask", "work", 20))  # an unfinished turn in the session deleted below
    s += [("forget", "User likes green tea"), ("session", "switch default_01"),
          ("session", "delete work"), ("store", "User has a dog named Rex", "pets"),
          ("store", "User speaks Portuguese", "language"), ("store", "User cycles to work", "commute"),
          ("extract", "replace", [("User lives in Faro", "city"), ("User walks to work", "commute"),
                                  ("User has a brother named Rui", "family")],
           ("User lives in Lisbon", "User cycles to work", "User has a sister named Eva")),
          ("profile", "# User\n\nName: Ada\nPrefers short answers.\n")]
    s.append(("big", "default_01", 7, 0))  # dialogue too big for the limit: blocked
    s.append(("session", "new after"))
    s.append(("turn", "after", 8, 100))
    return s


class _Model:
    def __init__(self):
        self.dialogue = {}  # alias -> [(kind, n)] user/final records
        self.tools = {}  # alias -> last tool round n
        self.items = set()
        self.user_md = None
        self.current = "default_01"
        self.aliases = ["default_01"]
        self.blocked = set()
        self.deleted = set()  # aliases deleted at some point

    def apply(self, step):
        op = step[0]
        if op in ("ask", "race_start"):  # a user message of a turn that is not finished
            alias = step[1]
            if alias not in self.blocked:
                self.dialogue.setdefault(alias, []).append(("user", step[2]))
            return
        if op == "race_end":  # refused: the session was deleted while the request ran
            return
        if op in ("turn", "big"):
            alias, n = step[1], step[2]
            if alias in self.blocked:
                return
            d = self.dialogue.setdefault(alias, [])
            d += [("user", n), ("final", n)]
            if op == "turn":
                self.tools[alias] = n
            else:
                self.blocked.add(alias)
        elif op == "store":
            self.items.add(step[1])
        elif op == "update":
            self.items.discard(step[1])
            self.items.add(step[2])
        elif op == "forget":
            self.items.discard(step[1])
        elif op == "extract":
            self.items.difference_update(step[3])
            self.items.update(c for c, _ in step[2])
        elif op == "profile":
            self.user_md = step[1]
        elif op == "session":
            sub, alias = step[1].split()
            if sub == "new":
                self.aliases.append(alias)
                self.current = alias
                self.deleted.discard(alias)
            elif sub == "switch":
                self.current = alias
            elif sub == "delete":
                self.aliases.remove(alias)
                self.dialogue.pop(alias, None)
                self.tools.pop(alias, None)
                self.blocked.discard(alias)
                self.deleted.add(alias)


def _ack(acked, what):
    """`what` returned: acknowledged, unless the power was cut before it returned."""
    if not flashsim.alive():
        raise OSError(5, "power cut")
    acked.append(what)


def _session_command(mem, cmd):
    reply = mem.session_command(CH, CHAT, cmd)
    if reply.startswith("Session command failed"):
        raise OSError(5, reply)


def _sid(alias):
    return "chat:%s:%s:%s" % (CH, CHAT, alias)


def _models(script, acked):
    """(done, flight): the model after the acknowledged steps, and after the step in flight."""
    done = _Model()
    flight = _Model()
    for step in script[: len(acked)]:
        done.apply(step)
        flight.apply(step)
    if len(acked) < len(script):
        flight.apply(script[len(acked)])
    return done, flight


def _dialogue(mem, alias):
    got = []
    tools = []
    for m in mem.sessions.messages(_sid(alias), tokens=0):
        if m["role"] == "tool":
            tools.append(int(m["tool_call_id"][4:]))
        elif not m.get("tool_calls"):
            kind, n = m["content"].split()[:2]
            got.append((kind, int(n)))
    for t in got + [("tool", n) for n in tools]:
        if (got + [("tool", n) for n in tools]).count(t) != 1:
            raise AssertionError("%s: record %r twice" % (alias, t))
    return got, tools


def _check_sessions(mem, done, flight):
    """The chat map is the done or the in-flight state, and every session agrees with it:
    a live alias holds that state's dialogue (each record once, in order; a compaction may
    have dropped whole oldest turns), a deleted one has no file at all. Returns (map state,
    acknowledged records lost)."""
    # A chat without a map starts at default_01 (what its first use creates).
    state = mem.chats.aliases(CH, CHAT) or ("default_01", ["default_01"])
    if state not in ((done.current, done.aliases), (flight.current, flight.aliases)):
        raise AssertionError("chat map %r, expected %r or %r" % (
            state, (done.current, done.aliases), (flight.current, flight.aliases)))
    lost = 0
    for alias in state[1]:
        got, tools = _dialogue(mem, alias)
        want = done.dialogue.get(alias, [])  # acknowledged
        maybe = want + flight.dialogue.get(alias, [])  # what the step in flight may have added
        if [r for r in got if r not in maybe]:
            raise AssertionError("%s: records nobody wrote: %r" % (alias, got))
        if got != sorted(got, key=lambda r: (r[1], r[0] == "final")):
            raise AssertionError("%s: records out of order: %r" % (alias, got))
        # A compaction drops whole oldest turns (hysteresis), never the newest one.
        first = got[0][1] if got else 1 << 30
        lost += len([r for r in want if r not in got and (r[1] >= first or not got)])
        # The newest acknowledged tool round survives compaction (None: none expected).
        if not any(m.tools.get(alias) is None or m.tools.get(alias) in tools for m in (done, flight)):
            lost += 1
    # Deleted sessions leave nothing behind and never come back.
    for alias in (done.deleted | flight.deleted) - set(state[1]):
        log = mem.sessions.path(_sid(alias))
        if fsutil.exists(log) or fsutil.exists(log + ".pending") or mem.sessions.messages(_sid(alias)):
            raise AssertionError("deleted session %s still has files" % alias)
    return state, lost


def handover():
    """A mixed hand-over: we persist turns and stop without close() (a reset), ESP-Claw's
    firmware appends a turn to the same session (after our records it has no entries for),
    we open it again and go on."""
    import espclaw

    def workload(acked):
        s = Sessions(SESSION_DIR)
        for n in range(3):  # indexed on the first turn, then lagging in RAM: lost by the reset
            s.persist(SID, [(1, None, "user %d" % n)])
            s.persist(SID, [(3, _call(n), None), (4, _result(n, 60), None)])
            s.persist(SID, [(2, '{"role":"assistant","content":"final %d"}' % n, None)],
                      turn_completed=True)
            acked.append(n)
        esp = espclaw.EspClawSessions(SESSION_DIR)
        esp.persist(SID, [(1, '{"role":"user","content":"user 10"}', None)])
        esp.persist(SID, [(2, '{"role":"assistant","content":"final 10"}', None)], True)
        _ack(acked, 10)
        s = Sessions(SESSION_DIR)
        s.persist(SID, [(1, None, "user 11")])
        s.persist(SID, [(2, None, "final 11")], turn_completed=True)
        _ack(acked, 11)
        s.close()

    def check(acked):
        if not fsutil.is_dir(SESSION_DIR):
            return len(acked)
        s = Sessions(SESSION_DIR)
        texts = [m["content"] for m in s.messages(SID, tokens=0) if m["role"] != "tool" and not m.get("tool_calls")]
        recs = [(int(t.split()[1]), t.split()[0] == "final") for t in texts]
        if recs != sorted(recs) or len(set(recs)) != len(recs):
            raise AssertionError("records doubled or out of order: %r" % texts)
        lost = len([n for n in acked if (n, False) not in recs or (n, True) not in recs])
        # After our open, ESP-Claw's own reader sees every record too (the gap indexed).
        s.close()
        esp = espclaw.EspClawSessions(SESSION_DIR)
        body = esp.request_body(SID)
        seen = [m["content"] for m in json.loads(body) if m.get("role") != "tool"
                and not m.get("tool_calls")] if body else []
        # (but an unfinished turn: it is in our pending file until it completes)
        extra = texts[len(seen):]
        if seen != texts[: len(seen)] or [t for t in extra if not t.startswith("user ")] or len(extra) > 1:
            raise AssertionError("ESP-Claw reads %r, we read %r" % (seen, texts))
        return lost

    return workload, check


def damaged_session():
    """A session with three turns and an unfinished one, then a garbage line between two
    entries, a torn tail and a garbage pending line (setup for repair())."""
    import struct

    fsutil.makedirs(SESSION_DIR)
    s = Sessions(SESSION_DIR)
    for n in range(3):
        s.persist(SID, [(1, None, "user %d" % n), (2, None, "final %d" % n)], turn_completed=True)
    s.persist(SID, [(1, None, "user 3")])
    s.close()
    log = s.path(SID)
    with open(log, "rb") as f:
        good = f.read()
    at = good.index(b"\n") + 1
    with open(log, "wb") as f:
        f.write(good[:at] + b"garbage line\n" + good[at:] + b'{"role":"user","content":"tor')
    with open(log + ".idx", "rb") as f:
        idx = bytearray(f.read())
    for k in range(8, len(idx), 10):
        off, ln, t, fmt = struct.unpack("<IIBB", idx[k:k + 10])
        if off >= at:
            idx[k:k + 10] = struct.pack("<IIBB", off + 13, ln, t, fmt)
    with open(log + ".idx", "wb") as f:
        f.write(idx)
    with open(log + ".pending", "ab") as f:
        f.write(b"12garbage")


def repair_run():
    """repair() of a damaged session, then a turn: a cut anywhere leaves every record."""

    def workload(acked):
        s = Sessions(SESSION_DIR)
        s.repair(SID)
        _ack(acked, "repair")
        s.persist(SID, [(2, None, "final 3")], turn_completed=True)
        _ack(acked, "final 3")

    def check(acked):
        s = Sessions(SESSION_DIR)
        got = [m["content"] for m in s.messages(SID, tokens=0)]
        want = ["user 0", "final 0", "user 1", "final 1", "user 2", "final 2", "user 3"]
        if got[:7] != want or got[7:] not in ([], ["final 3"]):
            raise AssertionError("records after a cut in repair: %r" % got)
        if "final 3" in acked and got[7:] != ["final 3"]:
            return 1
        s.repair(SID)  # whatever the cut left, a repair ends clean
        rep = Sessions(SESSION_DIR).verify(SID)
        if rep["dropped"] or rep["torn_tail_bytes"] or rep["pending_dropped"] or rep["leftovers"]:
            raise AssertionError("not clean after a repair: %r" % rep)
        return 0

    return workload, check


def lifecycle(limit=1500):
    """/session new, switch and delete with unfinished turns and compactions, a session
    deleted while a request on it runs (its answer refused), an alias used again."""
    import claw_memory
    from claw_memory.core import Request, SessionDeleted

    script = [("turn", "default_01", 0, 50), ("session", "new work"), ("turn", "work", 1, 400),
              ("turn", "work", 2, 400), ("turn", "work", 3, 400), ("ask", "work", 4),
              ("session", "switch default_01"), ("session", "delete work"), ("session", "new work"),
              ("turn", "work", 5, 50), ("session", "new racy"), ("race_start", "racy", 6),
              ("session", "switch work"), ("session", "delete racy"), ("race_end", "racy", 6),
              ("session", "new racy"), ("turn", "racy", 7, 50)]

    def workload(acked):
        mem = claw_memory.open(ROOT, "lite", session_limit=limit)
        hooks = mem.hooks()
        mem.chats.session_id(CH, CHAT)
        racing = {}
        for step in script:
            op = step[0]
            if op in ("turn", "ask"):
                sid, n = _sid(step[1]), step[2]
                mem.sessions.persist(sid, [(1, None, "user %d" % n)])
                if op == "turn":
                    mem.sessions.persist(sid, [(3, _call(n), None), (4, _result(n, step[3]), None)])
                    mem.sessions.persist(sid, [(2, '{"role":"assistant","content":"final %d"}' % n, None)],
                                         turn_completed=True)
            elif op == "race_start":
                req = racing[step[1]] = Request("user %d" % step[2], _sid(step[1]), CH, CHAT)
                if hooks.request_gate(req) is None:
                    hooks.persist(req, [(1, None, "user %d" % step[2])])
            elif op == "race_end":
                try:
                    hooks.persist(racing[step[1]], [(2, None, "final %d" % step[2])], True)
                except SessionDeleted:
                    pass
                else:
                    raise AssertionError("an answer persisted to a deleted session")
            elif op == "session":
                _session_command(mem, step[1])
            _ack(acked, op)
        mem.close()

    def check(acked):
        done, flight = _models(script, acked)
        mem = claw_memory.open(ROOT, "lite", session_limit=limit)
        state, lost = _check_sessions(mem, done, flight)
        # The next turn works.
        sid = _sid(state[0])
        mem.sessions.persist(sid, [(1, None, "user 99")])
        mem.sessions.persist(sid, [(2, None, "final 99")], turn_completed=True)
        if mem.sessions.messages(sid)[-1]["content"] != "final 99":
            raise AssertionError("next turn not replayed")
        mem.close()
        return lost

    return workload, check


def system(limit=4000):
    """The whole-system workload and its check (see _system_script)."""
    import claw_memory

    script = _system_script()

    def workload(acked):
        t = [1714000000]

        def clock():
            t[0] += 1
            return t[0]

        mem = claw_memory.open(ROOT, session_limit=limit, clock=clock, extract=False)
        mem.chats.session_id(CH, CHAT)
        ids = {}
        for step in script:
            op = step[0]
            if op == "turn":
                sid = _sid(step[1])
                n, pad = step[2], step[3]
                mem.sessions.persist(sid, [(1, None, "user %d" % n)])
                mem.sessions.persist(sid, [(3, _call(n), None), (4, _result(n, pad), None)])
                mem.sessions.persist(sid, [(2, '{"role":"assistant","content":"final %d"}' % n, None)],
                                     turn_completed=True)
            elif op == "ask":
                mem.sessions.persist(_sid(step[1]), [(1, None, "user %d" % step[2])])
            elif op == "big":
                sid = _sid(step[1])
                n = step[2]
                mem.sessions.persist(sid, [(1, None, "user %d" % n)])
                warn = mem.sessions.persist(sid, [(2, '{"role":"assistant","content":"final %d %s"}' % (
                    n, "x" * (limit + 100)), None)], turn_completed=True)
                if not warn:
                    raise AssertionError("the big turn did not block the session")
            elif op == "store":
                ids[step[1]] = mem.store.store(step[1], step[2])[0]["id"]
            elif op == "recall":
                mem.store.recall([step[1]])
            elif op == "update":
                ids[step[2]] = mem.store.update(ids[step[1]], content=step[2])[0]["id"]
            elif op == "forget":
                mem.store.forget(ids[step[1]])
            elif op == "extract":
                extract(mem.store, step[1], step[2])
            elif op == "profile":
                mem.profile.write("user", step[1])
            elif op == "session":
                _session_command(mem, step[1])
            _ack(acked, op)
        mem.close()

    def check(acked):
        done, flight = _models(script, acked)
        mem = claw_memory.open(ROOT, session_limit=limit, extract=False)
        state, lost = _check_sessions(mem, done, flight)
        # Blocking.
        for alias in done.blocked & flight.blocked:
            if not mem.sessions.blocked(_sid(alias)):
                raise AssertionError("session %s should be blocked" % alias)
        # Long-term items.
        contents = set(i["content"] for i in list(mem.store.list()))
        if contents not in (done.items, flight.items):
            missing = done.items - contents - (flight.items - done.items)
            extra = contents - done.items - flight.items
            if extra:
                raise AssertionError("unexpected items %r" % extra)
            lost += len(missing) or 1
        check_store_consistent(mem.store)
        # The profile.
        user = mem.profile.read("user")
        if done.user_md is not None and user not in (done.user_md, flight.user_md):
            lost += 1
        # The next turn works (a blocked session refuses it, as it must).
        sid = _sid(state[0])
        if not mem.sessions.blocked(sid):
            mem.sessions.persist(sid, [(1, None, "user 99")])
            mem.sessions.persist(sid, [(2, None, "final 99")], turn_completed=True)
            if mem.sessions.messages(sid)[-1]["content"] != "final 99":
                raise AssertionError("next turn not replayed")
        mem.store.store("A fact after the reboot", "after")
        mem.close()
        return lost

    return workload, check
