"""The history-search benchmark on CPython: retrieval quality of ours (`mem.search`, the code the
board runs) and of desktop BM25 (rank-bm25's BM25Okapi, plain lower-case whitespace tokens)
on the set of history_set.py, in the same run.

The set is built into a temporary data root through the public API (chat maps and
/session commands, `sessions.persist` turn by turn, with a small session limit so that
compaction moves old turns into the archives). Then every question is asked of ours with its
scope (`chat=(channel, chat_id)`, `session=` or the whole root) and of BM25 over the visible
texts of exactly the records ours can see in that scope (the logs and archives of those
sessions, read back from the root). A BM25 document that shares no token with the question
is not a hit (score 0); ties go to the newer record, as ours breaks them.

Metrics per question: recall@k the share of its gold records in the top k; MRR 1 / the
rank of its first gold record in the top 10 (0 if none). A superseded record (a fact the
dialogue corrected later) is never gold; `superseded first` counts the questions where one
ranks in the top 5 above every gold record.

    (cd tools && ../.venv/bin/python -m benchmark.search_eval [--json FILE] [--markdown])

(tools/bench.py runs it as its `search` section.)
"""

import json
import os
import re
import shutil
import tempfile

from . import history_set

SESSION_LIMIT = 12 * 1024  # small: 22 of the 35 sessions are compacted, a quarter of the gold archived
ARCHIVE_LIMIT = 1 << 20
TOP = 10
K = 5
T0 = 1714000000
SYSTEMS = ("ours", "rank-bm25", "rank-bm25 (words, CJK bigrams)", "bm25s (stemmed, stop words)")
TARGET = ("ours", "rank-bm25")


class _Clock:
    def __init__(self):
        self.t = T0

    def __call__(self):
        self.t += 30
        return self.t


def has_search():
    """Whether this claw_memory has `Memory.search` (issue 26)."""
    from claw_memory.memory import Memory

    return hasattr(Memory, "search")


def build(root, hs, session_limit=SESSION_LIMIT, archive_limit=ARCHIVE_LIMIT):
    """The set's conversations persisted under `root` through the public API, turn by turn
    as an agent persists them (the user message, each tool round, the final answer that
    completes the turn). Returns the open memory."""
    import claw_memory

    kw = {"archive_limit": archive_limit} if has_search() else {}
    mem = claw_memory.open(root, session_limit=session_limit, clock=_Clock(), extract=False, **kw)
    for ev in hs["events"]:
        if ev[0] == "command":
            reply = mem.session_command(ev[1], ev[2], ev[3])
            if not reply.startswith(("Started", "Switched")):
                raise RuntimeError("/session %s: %s" % (ev[3], reply))
            continue
        _, ch, cid, sid, recs = ev
        if mem.chats.session_id(ch, cid) != sid:
            raise RuntimeError("chat %s:%s is not in %s" % (ch, cid, sid))
        batches = [[recs[0]]] + [recs[i:i + 2] for i in range(1, len(recs) - 1, 2)] + [[recs[-1]]]
        for n, batch in enumerate(batches):
            last = n == len(batches) - 1
            warn = mem.sessions.persist(sid, [(r[0], r[1], None if r[1] else r[3]) for r in batch],
                                        turn_completed=last, backend="openai")
            if warn:
                raise RuntimeError("%s blocked: %s" % (sid, warn))
    return mem


def record_text(obj):
    """(role, visible text) of a session record read back (history_set.visible's rule), or
    None when it is no chat record."""
    from claw_memory.messages import visible_text

    if isinstance(obj, list):
        return "tool", "\n".join(visible_text(m.get("content")) for m in obj if isinstance(m, dict))
    if not isinstance(obj, dict):
        return None
    if obj.get("tool_calls"):
        parts = [obj["content"]] if isinstance(obj.get("content"), str) and obj["content"] else []
        for c in obj["tool_calls"]:
            fn = c.get("function") or {}
            parts += [fn.get("name") or "", fn.get("arguments") or ""]
        return "assistant", "\n".join(parts)
    if obj.get("role") in ("user", "assistant"):
        return obj["role"], visible_text(obj.get("content"))
    if obj.get("role") == "tool":
        return "tool", visible_text(obj.get("content"))
    return None


def _parse_line(raw):
    # A record line of a log or an archive: the JSON from its first bracket on (an archive
    # may frame its records; a frame that is not a record is skipped).
    i = min([p for p in (raw.find(b"{"), raw.find(b"[")) if p >= 0] or [-1])
    if i < 0:
        return None
    try:
        return json.loads(raw[i:].decode("utf-8", "replace"))
    except ValueError:
        return None


def archive_files(mem, sid):
    """The paths of a session's live archive segments, oldest first (the library's own
    catalog decides which are live)."""
    from claw_memory.session import archive

    log = mem.sessions.path(sid)
    return [s[1] for s in archive.segments(mem.sessions.dir, log.rsplit("/", 1)[-1])]


def visible_records(mem, sid):
    """[(role, text, archived)] of every record of a session, its archive's first (older)."""
    out = []
    for arc in archive_files(mem, sid) if has_search() else ():
        with open(arc, "rb") as f:
            for line in f:
                got = record_text(_parse_line(line))
                if got:
                    out.append((got[0], got[1], True))
    if os.path.exists(mem.sessions.path(sid)):
        for kind, fmt, raw in mem.sessions.records(sid):
            got = record_text(json.loads(raw))
            if got:
                out.append((got[0], got[1], False))
    return out


def _tokens(text):
    return text.lower().split()


_CJK = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]")


def word_tokens(text):
    """Words (\\w runs, lower case), CJK runs as character bigrams: a stronger desktop
    tokeniser, shown for reference (the target compares with whitespace tokens)."""
    out = []
    for w in re.findall(r"\w+", text.lower()):
        if _CJK.search(w):
            out += [w[i:i + 2] for i in range(max(1, len(w) - 1))]
        else:
            out.append(w)
    return out


class Desk:
    """Desktop BM25 over a scope's documents: [(key, text, newer)] with key
    (session, role, text) and `newer` larger for newer records."""

    def __init__(self, docs, tokens=_tokens):
        from rank_bm25 import BM25Okapi

        self.docs = docs
        self.tokens = tokens
        self.bm = BM25Okapi([tokens(d[1]) for d in docs]) if docs else None

    def ranked(self, query, top=TOP):
        """Keys of the best documents, best first; only documents with a score above 0."""
        if self.bm is None:
            return []
        scores = self.bm.get_scores(self.tokens(query))
        order = sorted((i for i in range(len(self.docs)) if scores[i] > 0),
                       key=lambda i: (-scores[i], -self.docs[i][2]))
        return [self.docs[i][0] for i in order[:top]]


class StemmedBM25:
    """bm25s with English stop words and the Snowball stemmer (PyStemmer) over [(key, text,
    newer)]: the desktop library a user would pick, with its own tokeniser."""

    def __init__(self, docs):
        import bm25s
        import Stemmer

        self.bm25s = bm25s
        self.stem = Stemmer.Stemmer("english")
        self.docs = docs
        self.bm = None
        if docs:
            self.bm = bm25s.BM25()
            self.bm.index(self._tok([d[1] for d in docs]), show_progress=False)

    def _tok(self, texts):
        return self.bm25s.tokenize(texts, stopwords="en", stemmer=self.stem, show_progress=False)

    def ranked(self, query, top=TOP):
        """Keys of the best documents, best first; only documents with a score above 0 (ties:
        bm25s's order)."""
        if self.bm is None:
            return []
        q = self._tok([query])
        if not q.vocab:  # (only stop words: bm25s has nothing to look up)
            return []
        ids, scores = self.bm.retrieve(q, k=min(top, len(self.docs)), show_progress=False)
        return [self.docs[i][0] for i, sc in zip(ids[0], scores[0]) if sc > 0]


def metrics(ranked, gold, k=K):
    """(recall@1, recall@k, reciprocal rank within the top TOP) of a ranked list of keys."""
    g = set(map(tuple, gold))
    r1 = len(g & set(ranked[:1])) / len(g)
    rk = len(g & set(ranked[:k])) / len(g)
    rr = 0.0
    for i, x in enumerate(ranked[:TOP]):
        if x in g:
            rr = 1.0 / (i + 1)
            break
    return r1, rk, rr


def superseded_first(ranked, gold, old, k=K):
    """Whether a superseded record ranks in the top k above every gold record."""
    g, o = set(map(tuple, gold)), set(map(tuple, old))
    for x in ranked[:k]:
        if x in g:
            return False
        if x in o:
            return True
    return False


class Acc:
    """Per system and group: n, sums of recall@1, recall@k and reciprocal ranks."""

    def __init__(self):
        self.acc = {}

    def add(self, system, groups, m):
        for group in groups:
            a = self.acc.setdefault(system, {}).setdefault(group, [0, 0.0, 0.0, 0.0])
            a[0] += 1
            for i in range(3):
                a[i + 1] += m[i]

    def result(self):
        return {s: {g: {"n": a[0], "r1": a[1] / a[0], "r5": a[2] / a[0], "mrr": a[3] / a[0]}
                    for g, a in groups.items()} for s, groups in self.acc.items()}


def scope_of(q):
    """The keyword arguments of mem.search for a question's scope."""
    if q["scope"] == "chat":
        return {"chat": tuple(q["chat"])}
    if q["scope"] == "session":
        return {"session": q["session"]}
    return {}


def _in_scope(q, sid):
    if q["scope"] == "chat":
        return sid.startswith("chat:%s:%s:" % tuple(q["chat"]))
    if q["scope"] == "session":
        return sid == q["session"]
    return True


def evaluate(hs=None, session_limit=SESSION_LIMIT, ours=None):
    """Build the set and score every question: a dict with "set" (what was built: sessions,
    records, compacted sessions, archived and lost records, gold records archived and lost),
    "systems" ({system: {group: {"n", "r1", "r5", "mrr"}}}), "superseded_first" and, for
    ours, "out_of_scope" (hits from sessions outside the question's scope) and
    "archived_mismatch" (hits whose `archived` flag disagrees with where the record is).
    `ours`: whether to run mem.search (default: when this claw_memory has it)."""
    hs = hs or history_set.make()
    ours = has_search() if ours is None else ours
    tmp = tempfile.mkdtemp(prefix="claw-search-")
    try:
        mem = build(os.path.join(tmp, "root"), hs, session_limit)
        mem.flush()
        res = _score(mem, hs, ours, session_limit)
        mem.close()
        return res
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _score(mem, hs, ours, session_limit):
    newer = {(r["session"], r["role"], r["text"]): i for i, r in enumerate(hs["records"])}
    where = {}  # key: archived
    per_session = {}
    said = {}
    for r in hs["records"]:
        said.setdefault(r["session"], []).append((r["role"], r["text"], False))
    for s in hs["sessions"]:
        docs = []
        # Without search (a claw_memory before issue 26) compaction deletes what an archive
        # would keep: BM25 then ranks every record said, the archive's promise.
        for role, text, archived in visible_records(mem, s["id"]) if ours else said[s["id"]]:
            key = (s["id"], role, text)
            where[key] = archived
            docs.append((key, text, newer.get(key, -1)))
        per_session[s["id"]] = docs
    lost = [k for k in newer if k not in where]
    gold = {tuple(g) for q in hs["questions"] for g in q["gold"]}
    desks = {}

    def desk(q, name):
        scope = (q["scope"], tuple(q["chat"] or ()), q["session"])
        if (scope, name) not in desks:
            docs = [d for sid, ds in per_session.items() if _in_scope(q, sid) for d in ds]
            desks[(scope, name)] = (StemmedBM25(docs) if name == SYSTEMS[3]
                                    else Desk(docs, word_tokens if name == SYSTEMS[2] else _tokens))
        return desks[(scope, name)]

    acc = Acc()
    sup = {s: 0 for s in (SYSTEMS if ours else SYSTEMS[1:])}
    out_of_scope = mismatch = 0
    for q in hs["questions"]:
        gk = [tuple(g) for g in q["gold"]]
        if any(g not in where for g in gk):
            place = "gold gone"  # compaction removed it: no system can find it
        elif any(where[g] for g in gk):
            place = "gold archived"
        else:
            place = "gold in the log"
        groups = ("all", q["category"], q["lang"], "scope: " + q["scope"], place)
        runs = {}
        if ours:
            hits = mem.search(q["text"], limit=TOP, **scope_of(q))
            runs["ours"] = [(h["session"], h["role"], h["text"]) for h in hits]
            for h in hits:
                out_of_scope += not _in_scope(q, h["session"])
                k = (h["session"], h["role"], h["text"])
                mismatch += k in where and where[k] != h["archived"]
        for name in SYSTEMS[1:]:
            runs[name] = desk(q, name).ranked(q["text"])
        for name, ranked in runs.items():
            acc.add(name, groups, metrics(ranked, gk))
            if q["superseded"]:
                sup[name] += superseded_first(ranked, gk, q["superseded"])
    logs = {s["id"]: sum(1 for d in per_session[s["id"]] if not where[d[0]]) for s in hs["sessions"]}
    st = history_set.stats(hs)
    st.update({
        "session_limit": session_limit,
        "compacted_sessions": sum(1 for sid, docs in per_session.items() if any(where[d[0]] for d in docs)),
        "records_archived": sum(1 for v in where.values() if v),
        "records_in_logs": sum(logs.values()),
        "records_lost": len(lost),
        "records_lost_by_type": {str(t): sum(1 for k in lost if hs["records"][newer[k]]["type"] == t)
                                 for t in (1, 2, 3, 4)},
        "gold": len(gold),
        "gold_archived": sum(1 for g in gold if where.get(g)),
        "gold_lost": sorted(g for g in gold if g not in where),
        "superseded_questions": sum(1 for q in hs["questions"] if q["superseded"]),
    })
    res = {"set": st, "systems": acc.result(), "superseded_first": sup, "ours": ours}
    if ours:
        res["out_of_scope"] = out_of_scope
        res["archived_mismatch"] = mismatch
    return res


GROUPS = ("all",) + history_set.CATEGORIES + ("en", "zh", "scope: chat", "scope: session", "scope: root",
                                              "gold in the log", "gold archived", "gold gone")


def lines(res):
    """The evaluation as text lines (the CLI's output)."""
    st = res["set"]
    out = ["history search: %d sessions, %d turns, %d records (%d in logs, %d archived, %d gone), "
           "%d questions; session_limit %d bytes, %d sessions compacted; gold records %d, archived %d, gone %d"
           % (st["sessions"], st["turns"], st["records"], st["records_in_logs"], st["records_archived"],
              st["records_lost"], st["questions"], st["session_limit"], st["compacted_sessions"], st["gold"],
              st["gold_archived"], len(st["gold_lost"]))]
    if not res["ours"]:
        out.append("ours: not measured (this claw_memory has no Memory.search); BM25 over every record said")
    out.append("%-34s %-18s %5s %8s %8s %7s" % ("system", "group", "n", "recall@1", "recall@5", "MRR"))
    for group in GROUPS:
        for name in SYSTEMS:
            g = res["systems"].get(name, {}).get(group)
            if g:
                out.append("%-34s %-18s %5d %8.3f %8.3f %7.3f" % (name, group, g["n"], g["r1"], g["r5"], g["mrr"]))
    out.append("superseded record ranked above the correction (top 5, of %d questions): %s" % (
        st["superseded_questions"], ", ".join("%s %d" % kv for kv in sorted(res["superseded_first"].items()))))
    if res["ours"]:
        out.append("ours: hits outside the scope %d; archived flag wrong %d" % (
            res["out_of_scope"], res["archived_mismatch"]))
        a, b = (res["systems"][s]["all"]["r5"] for s in TARGET)
        out.append("target recall@5 ours >= rank-bm25: %.3f vs %.3f: %s" % (a, b, "PASS" if a >= b else "FAIL"))
    return out


# -- the cost of a query on the unix port ----------------------------------------------------


COST_SEEDS = (26, 27)  # two draws of the set, in chats of their own: a little over 1 MiB
# (layout, session limit): "board", a board used for long by one user: every turn of the two
# draws in six sessions of one chat, compacted at the default limit into archives (the
# memory_search tool's scope is then the whole history); "chats", the set's sessions as they
# are (70 in 14 chats), compacted at 24 KiB: many small files.
COST_LAYOUTS = (("board", 153600), ("chats", 24 * 1024))
_BOARD_CHATS = 6


def cost_events(path, layout="chats"):
    """Write the events of a cost run (JSON lines) to `path`: the set drawn twice, the second
    in chats of its own (chat ids suffixed), or (`board`) all of it in six sessions; returns
    the questions as [[text, channel, chat id]] (root questions with no chat)."""
    qs = []
    board = {}
    with open(path, "w") as f:
        for n, seed in enumerate(COST_SEEDS):
            hs = history_set.make(seed)
            sfx = "" if not n else "-%d" % n
            for ev in hs["events"]:
                if layout == "board":
                    if ev[0] == "turn":
                        k = board.setdefault((ev[1], ev[2] + sfx), len(board) % _BOARD_CHATS)
                        f.write(json.dumps(["turn", "board", "owner", "chat:board:owner:s%d" % k,
                                            ev[4]]) + "\n")
                elif ev[0] == "command":
                    f.write(json.dumps(["command", ev[1], ev[2] + sfx, ev[3]]) + "\n")
                else:
                    sid = ev[3].replace(":%s:" % ev[2], ":%s:" % (ev[2] + sfx), 1)
                    f.write(json.dumps(["turn", ev[1], ev[2] + sfx, sid, ev[4]]) + "\n")
            for q in hs["questions"]:
                chat = q["chat"] if q["scope"] != "root" else None
                if chat and layout == "board":
                    chat = ["board", "owner"]
                elif chat:
                    chat = [chat[0], chat[1] + sfx]
                qs.append([q["text"], chat[0] if chat else None, chat[1] if chat else None])
    return qs


def query_cost(run, bits=64):
    """search_cost.py's figures for each layout of the cost set (64-bit: host time; 32-bit:
    heap): {layout: figures}."""
    out = {}
    for layout, limit in COST_LAYOUTS:
        tmp = tempfile.mkdtemp(prefix="claw-scost-")
        try:
            path = os.path.join(tmp, "events.jsonl")
            qpath = os.path.join(tmp, "questions.json")
            with open(qpath, "w") as f:
                json.dump(cost_events(path, layout), f)
            host = os.path.join(tmp, "root")
            os.mkdir(host)
            out[layout] = run.run("search_cost", {"path": path, "questions": qpath, "session_limit": limit,
                                                  "image": os.path.join(tmp, "flash.img"),
                                                  "host_dir": host},
                                  heap="8M", bits=bits, script="search_cost.py", timeout=3600)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
    return out


def main(argv=None):
    import argparse

    ap = argparse.ArgumentParser(description="history search quality: ours against desktop BM25")
    ap.add_argument("--json", metavar="FILE", help="also save the results as JSON")
    ap.add_argument("--session-limit", type=int, default=SESSION_LIMIT)
    ap.add_argument("--markdown", action="store_true",
                    help="print docs/PERFORMANCE.md's section (search_report.py) instead of the text")
    args = ap.parse_args(argv)
    res = evaluate(session_limit=args.session_limit)
    if args.markdown:
        from .search_report import search_tables

        out = []
        search_tables({"search": res}, out.append)
        print("\n".join(out))
    else:
        print("\n".join(lines(res)))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(res, f, indent=1)


if __name__ == "__main__":
    main()
