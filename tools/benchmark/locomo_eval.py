"""History search on a public set: LoCoMo's conversations (Maharana et al., 2024,
github.com/snap-research/locomo; its data is not in this repository: CC BY-NC 4.0).

Each of LoCoMo's ten conversations (two people, 19-35 sessions, 5,882 turns in all) becomes
one chat: each of its sessions a session of that chat (`/session new s<N>`), each turn a
record persisted through `sessions.persist` (the first speaker's turns as user messages, the
second's as assistant answers, each text as "<speaker>: <text>", a shared photo's caption
appended as "[shares <caption>]"). Each question with evidence is asked of `mem.search` with
its chat's scope, as the `memory_search` tool asks it, and of desktop BM25 over the same
records: rank-bm25's BM25Okapi (plain lower-case whitespace tokens: the target's baseline;
and words) and bm25s with its English stop words and the Snowball stemmer (PyStemmer), the
desktop library a user would pick. Gold: the turns the question's evidence names. recall@k:
the share of them in the top k; MRR: 1 / the rank of the first one (top 10).

    (cd tools && ../.venv/bin/python -m benchmark.locomo_eval LOCOMO [--markdown])

LOCOMO: the repository's `data/locomo10.json` (a list of samples), or a folder of
`locomo10_v2` conversations (`data/multimodal_dialog/locomo10_v2/*.json` in its zip).
"""

import glob
import json
import os
import shutil
import tempfile

from .search_eval import TOP, Desk, StemmedBM25, _Clock, metrics, word_tokens

K = 5
# (the category numbers as the set has them, named as its paper names them)
CATEGORIES = {1: "1 multi-hop", 2: "2 temporal", 3: "3 open-domain", 4: "4 single-hop", 5: "5 adversarial"}
SYSTEMS = ("ours", "rank-bm25", "rank-bm25 (words)", "bm25s (stemmed, stop words)")
TARGET = ("ours", "rank-bm25")


def conversations(path):
    """[(name, conversation dict, qa list)] of a LoCoMo file or folder."""
    if os.path.isdir(path):
        out = []
        for p in sorted(glob.glob(os.path.join(path, "*.json"))):
            with open(p) as f:
                d = json.load(f)
            out.append((os.path.basename(p)[:-5], d, d["qa"]))
        return out
    with open(path) as f:
        data = json.load(f)
    return [(str(s.get("sample_id", n)), s["conversation"], s["qa"]) for n, s in enumerate(data)]


def turn_text(t):
    s = "%s: %s" % (t["speaker"], t["text"])
    if t.get("blip_caption"):
        s += " [shares %s]" % t["blip_caption"]
    return s


def sessions_of(conv):
    """[(number, turns)] of a conversation's non-empty sessions, in order."""
    out = []
    n = 1
    while "session_%d" % n in conv or "session_%d_date_time" % n in conv:
        if conv.get("session_%d" % n):
            out.append((n, conv["session_%d" % n]))
        n += 1
    return out


def build(root, name, conv):
    """One conversation persisted under `root`: (memory, chat id, {dia_id: key}, [(key, text,
    newer)]), a key being (session id, text)."""
    import claw_memory

    mem = claw_memory.open(root, clock=_Clock(), extract=False)
    first = conv["speaker_a"]
    gold, docs = {}, []
    for n, turns in sessions_of(conv):
        reply = mem.session_command("locomo", name, "new s%d" % n)
        if not reply.startswith("Started"):
            raise RuntimeError("/session new s%d: %s" % (n, reply))
        sid = mem.chats.session_id("locomo", name)
        for i, t in enumerate(turns):
            txt = turn_text(t)
            user = t["speaker"] == first
            # A turn is completed by the second speaker's answer, or by the session's end.
            done = not user or i == len(turns) - 1
            mem.sessions.persist(sid, [(1 if user else 2, None, txt)], turn_completed=done)
            gold[t["dia_id"]] = (sid, txt)
            docs.append(((sid, txt), txt, len(docs)))
    return mem, gold, docs


def evaluate(path):
    """{(system, group): [questions, recall@1, recall@K, MRR sums]} and the set's counts."""
    res = {}
    counts = {"conversations": 0, "sessions": 0, "turns": 0, "questions": 0}
    for name, conv, qa in conversations(path):
        root = tempfile.mkdtemp(prefix="claw-locomo-")
        try:
            mem, gold, docs = build(root, name, conv)
            counts["conversations"] += 1
            counts["sessions"] += len(sessions_of(conv))
            counts["turns"] += len(docs)
            desks = {"rank-bm25": Desk(docs), "rank-bm25 (words)": Desk(docs, word_tokens),
                     "bm25s (stemmed, stop words)": StemmedBM25(docs)}
            for q in qa:
                want = [gold[e] for e in q.get("evidence") or () if e in gold]
                if not want:
                    continue
                counts["questions"] += 1
                hits = mem.search(q["question"], TOP, chat=("locomo", name))
                ranked = {"ours": [(h["session"], h["text"]) for h in hits]}
                for system, d in desks.items():
                    ranked[system] = d.ranked(q["question"])
                for system in SYSTEMS:
                    m = metrics(ranked[system], want)
                    for g in ("all", CATEGORIES.get(q.get("category"), "other")):
                        acc = res.setdefault((system, g), [0, 0.0, 0.0, 0.0])
                        acc[0] += 1
                        for i in range(3):
                            acc[i + 1] += m[i]
            mem.close()
        finally:
            shutil.rmtree(root, ignore_errors=True)
    return res, counts


def lines(res, counts, markdown=False):
    """The result as text lines (or docs/PERFORMANCE.md's table)."""
    out = []
    ours, base = res[(TARGET[0], "all")], res[(TARGET[1], "all")]
    a, b = ours[2] / ours[0], base[2] / base[0]
    verdict = "PASS" if a >= b else "FAIL"
    if markdown:
        out.append("LoCoMo (`tools/benchmark/locomo_eval.py`: %(conversations)d conversations, "
                   "%(sessions)d sessions, %(turns)d turns, %(questions)d questions with evidence), "
                   "each conversation one chat, each question asked with its chat's scope:" % counts)
        out.append("")
        out.append("| target | measured | |")
        out.append("|---|---|---|")
        out.append("| recall@%d of mem.search at least desktop BM25's (rank-bm25) | %.3f vs %.3f | %s |"
                   % (K, a, b, verdict))
        out.append("")
        out.append("| system | questions | recall@1 | recall@%d | MRR |" % K)
        out.append("|---|---|---|---|---|")
    groups = ["all"] + [CATEGORIES[c] for c in sorted(CATEGORIES)]
    for g in groups:
        for system in SYSTEMS:
            acc = res.get((system, g))
            if not acc:
                continue
            row = (system, g, acc[0], acc[1] / acc[0], acc[2] / acc[0], acc[3] / acc[0])
            if markdown:
                out.append("| %s (%s) | %d | %.3f | %.3f | %.3f |" % row)
            else:
                out.append("%-28s %-12s n=%4d  r@1 %.3f  r@5 %.3f  MRR %.3f" % row)
    if not markdown:
        out.append("recall@%d: ours %.3f, rank-bm25 %.3f: %s" % (K, a, b, verdict))
    return out


def main(argv=None):
    import argparse

    ap = argparse.ArgumentParser(description="history search on LoCoMo: ours against desktop BM25")
    ap.add_argument("locomo", help="LoCoMo's locomo10.json, or a folder of locomo10_v2 conversations")
    ap.add_argument("--markdown", action="store_true", help="print docs/PERFORMANCE.md's section")
    args = ap.parse_args(argv)
    res, counts = evaluate(args.locomo)
    for line in lines(res, counts, args.markdown):
        print(line)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
