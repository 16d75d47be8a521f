"""The recall benchmark on CPython: retrieval quality of ours (claw_memory's store, the same
code as on the board), of desktop BM25 (rank-bm25's BM25Okapi, plain lower-case whitespace
tokens, over the same active items) and of recency alone, on the set of recall_set.py; and
the agent-level cost of automatic recall (the reference agent, a scripted oracle LLM)."""

import asyncio
import json
import os
import shutil
import tempfile

from . import recall_set

T0 = 1714000000
K = 5


class _Clock:
    def __init__(self):
        self.t = T0

    def __call__(self):
        return self.t


def build(root, st, clock, mode_open=None):
    """Store the items of one store of the set under `root` (a data root), then apply its
    updates and forgets. Returns (memory, {key: id}, forbidden ids)."""
    import claw_memory

    mem = (mode_open or claw_memory.open)(root, clock=clock, extract=False)
    ids = {}
    for it in st["items"]:
        clock.t += 600
        got, _ = mem.store.store(it["content"], it["tags"], it["keywords"])
        ids[it["key"]] = got["id"]
    forbidden = set()
    for ch in st["changes"]:
        clock.t += 86400
        if ch[0] == "update":
            new = ch[2]
            got, _ = mem.store.update(ids[ch[1]], new["content"], new["tags"], new["keywords"])
            forbidden.add(ids[ch[1]])
            ids[new["key"]] = got["id"]
        else:
            forbidden.add(ids[ch[1]])
            mem.store.forget(ids[ch[1]])
    return mem, ids, forbidden


def _metrics(ranked, gold):
    g = set(gold)
    r1 = len(g & set(ranked[:1])) / len(g)
    r5 = len(g & set(ranked[:K])) / len(g)
    rr = 0.0
    for i, x in enumerate(ranked[:10]):
        if x in g:
            rr = 1.0 / (i + 1)
            break
    return r1, r5, rr


def retrieval():
    """{system: {group: {"n", "r1", "r5", "mrr"}, "forbidden": n, "quiet": share}} over the set."""
    from rank_bm25 import BM25Okapi

    from claw_memory.providers import AUTO_FLOOR

    systems = ("ours", "rank-bm25", "recency")
    acc = {s: {} for s in systems}
    forbidden_hits = {s: 0 for s in systems}
    quiet = {s: [0, 0] for s in systems}  # forgotten-fact questions with nothing above the floor
    stats_bytes = []
    tmp = tempfile.mkdtemp(prefix="claw-recall-")
    try:
        for no, st in enumerate(recall_set.make()):
            clock = _Clock()
            mem, ids, forbidden = build(os.path.join(tmp, "r%d" % no), st, clock)
            stats_bytes.append(mem.store._st.terms.nbytes())
            active = list(mem.store.list())
            docs = [(it["content"] + " " + it["tags"] + " " + it["keywords"]).lower().split() for it in active]
            bm = BM25Okapi(docs)
            by_recency = [it["id"] for it in sorted(active, key=lambda it: -it["updated_at"])]
            for q in st["questions"]:
                gold = [ids[k] for k in q["gold"]]
                ours = [it["id"] for it in mem.store.matches(q["text"], 10)]
                scores = bm.get_scores(q["text"].lower().split())
                order = sorted(range(len(active)), key=lambda i: -scores[i])
                desk = [active[i]["id"] for i in order[:10]]
                for name, ranked in (("ours", ours), ("rank-bm25", desk), ("recency", by_recency[:10])):
                    forbidden_hits[name] += len(forbidden & set(ranked[:K]))
                    if not gold:
                        quiet[name][1] += 1
                        if name == "ours":
                            quiet[name][0] += not mem.store.matches(q["text"], 5, AUTO_FLOOR)
                        continue
                    m = _metrics(ranked, gold)
                    for group in (q["group"], "all", st["lang"]):
                        a = acc[name].setdefault(group, [0, 0.0, 0.0, 0.0])
                        a[0] += 1
                        a[1] += m[0]
                        a[2] += m[1]
                        a[3] += m[2]
            mem.close()
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    out = {}
    for name in systems:
        out[name] = {g: {"n": a[0], "r1": a[1] / a[0], "r5": a[2] / a[0], "mrr": a[3] / a[0]}
                     for g, a in acc[name].items()}
        out[name]["forbidden"] = forbidden_hits[name]
    out["ours"]["quiet"] = quiet["ours"][0] / max(quiet["ours"][1], 1)
    out["set"] = {"stores": 4, "items": sum(len(s["items"]) for s in recall_set.make()),
                  "questions": sum(len(s["questions"]) for s in recall_set.make()),
                  "stats_bytes": max(stats_bytes)}
    return out


# -- agent-level cost ------------------------------------------------------------------------


class Oracle:
    """A scripted LLM: answers at once when every gold fact is in the request (system prompt
    or tool results), else calls memory_recall with the gold items' labels (an oracle for
    ESP-Claw's label choice), then answers. Counts requests and input tokens."""

    backend = "openai"

    def __init__(self):
        self.gold = []  # contents of the current question's gold items
        self.labels = []
        self.requests = 0
        self.tokens = 0
        self.system_tokens = []

    async def chat(self, system, messages, tools=None):
        from claw_memory._compat import dumps
        from claw_memory.reply import Reply
        from claw_memory.text import estimate_tokens

        if tools is None:
            return Reply.answer(self.backend, '{"intent":"none","memories":[]}')
        self.requests += 1
        defs = [{"name": t.name, "description": t.description, "parameters": t.schema} for t in tools]
        body = system + dumps(messages) + dumps(defs)
        self.tokens += estimate_tokens(body)
        self.system_tokens.append(estimate_tokens(system))
        seen = system + dumps(messages)
        if all(json.dumps(c)[1:-1] in seen or c in seen for c in self.gold):
            return Reply.answer(self.backend, "Here is what I know.")
        if messages and messages[-1].get("role") == "tool":
            return Reply.answer(self.backend, "Here is what I found.")
        return Reply.calls(self.backend, [("memory_recall", {"summary_labels": self.labels})])


def agent_cost(n=60):
    """{"0" and "5" (auto_recall): {"questions", "requests", "tokens", "system"}} over `n` questions of
    the set that need memory (half English, half Chinese), ESP-Claw's flow (0) and the default."""
    import claw_memory
    from claw_memory.agent import Agent
    from claw_memory.core import Request
    from claw_memory.memory import Memory

    sets = recall_set.make()[:2]
    out = {}
    for auto in (0, 5):
        tmp = tempfile.mkdtemp(prefix="claw-agent-")
        try:
            llm = Oracle()
            asked = 0
            sys_first = []
            for no, st in enumerate(sets):
                clock = _Clock()

                def opener(root, **kw):
                    return Memory(root, llm=llm, auto_recall=auto, **kw)

                mem, ids, _ = build(os.path.join(tmp, "r%d" % no), st, clock, opener)
                agent = Agent(llm, mem.providers(), mem.hooks(), mem.tools(), "You are Pip.")
                qs = [q for q in st["questions"] if q["gold"]][: n // 2]
                for i, q in enumerate(qs):
                    items = [mem.store.get(ids[k]) for k in q["gold"]]
                    llm.gold = [it["content"] for it in items]
                    llm.labels = sorted(set(lab for it in items for lab in it["summary_labels"]))[:3]
                    sid = mem.chats.session_id("web", "q%d_%d" % (no, i))
                    before = len(llm.system_tokens)
                    asyncio.run(agent.run(Request(q["text"], sid, "web", "q%d_%d" % (no, i))))
                    sys_first.append(llm.system_tokens[before])
                    asked += 1
                mem.close()
            out[str(auto)] = {"questions": asked, "requests": llm.requests / asked, "tokens": llm.tokens / asked,
                         "system": sum(sys_first) / len(sys_first)}
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
    return out


# -- query cost on the unix port -------------------------------------------------------------


def query_cost(run, bits=64):
    """One English and one Chinese store at capacity: {lang: recall_cost.py's figures}."""
    out = {}
    tmp = tempfile.mkdtemp(prefix="claw-qcost-")
    try:
        for st in recall_set.make()[:2]:
            path = os.path.join(tmp, st["lang"] + ".json")
            with open(path, "w") as f:
                json.dump({"items": [[i["content"], i["tags"], i["keywords"]] for i in st["items"]],
                           "questions": [q["text"] for q in st["questions"]]}, f)
            out[st["lang"]] = run.run("recall_cost", {"path": path}, heap="8M", bits=bits,
                                      script="recall_cost.py")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return out
