"""The history-search quality part of the report (search_eval.py's results): its target and
the two systems side by side, overall and per group."""

from .figures import verdict
from .search_eval import GROUPS, SYSTEMS, TARGET


def search_tables(res, out):
    """Write the section; returns whether its target holds (not measured: it does not)."""
    r = res["search"]
    st = r["set"]
    ours = r["ours"]
    if ours:
        a, b = (r["systems"][s]["all"]["r5"] for s in TARGET)
        row = ("recall@5 of mem.search at least desktop BM25's (rank-bm25)", "%.3f vs %.3f" % (a, b), a >= b)
    else:
        row = ("recall@5 of mem.search at least desktop BM25's (rank-bm25)",
               "not measured: this claw_memory has no Memory.search", False)
    out("")
    out("## History search: quality")
    out("")
    out("The conversation set of `tools/benchmark/history_set.py` (its docstring says how it is made): "
        "%d sessions in %d chats (English and Chinese), %d turns, %d records, %d questions with their gold "
        "records, built through the public API with `session_limit=%d`%s. Ours: `mem.search` with the "
        "question's scope (a chat, a session or the whole root), on CPython; desktop BM25: rank-bm25's "
        "BM25Okapi over the visible texts of the records ours can see in that scope (logs and archives), "
        "lower-cased whitespace tokens; the same with words and CJK bigrams for reference. recall@k: the "
        "share of a question's gold records in the top k; MRR: 1 / the rank of the first one (top 10)."
        % (st["sessions"], st["chats"], st["turns"], st["records"], st["questions"],
           st["session_limit"],
           ": %d sessions compacted, %d records archived (%d of the %d gold records), %d records gone"
           % (st["compacted_sessions"], st["records_archived"], st["gold_archived"], st["gold"],
              st["records_lost"]) if ours else " (no archive in this build: BM25 ranks every record said)"))
    out("")
    out("| target | measured | |")
    out("|---|---|---|")
    out("| %s | %s | %s |" % (row[0], row[1], verdict(row[2])))
    if ours:
        out("| hits outside the question's scope (every question) | %d | %s |"
            % (r["out_of_scope"], verdict(r["out_of_scope"] == 0)))
    out("")
    out("| system | questions | recall@1 | recall@5 | MRR |")
    out("|---|---|---|---|---|")
    for group in GROUPS:
        for name in SYSTEMS:
            g = r["systems"].get(name, {}).get(group)
            if g:
                out("| %s (%s) | %d | %.3f | %.3f | %.3f |" % (name, group, g["n"], g["r1"], g["r5"], g["mrr"]))
    out("")
    out("Corrected facts: of %d questions about a fact the dialogue corrected later, the superseded record "
        "ranks in the top 5 above the correction for %s." % (
            st["superseded_questions"],
            ", ".join("%s %d" % (k, v) for k, v in sorted(r["superseded_first"].items()))))
    if ours and st["records_lost"]:
        by = st["records_lost_by_type"]
        out("")
        out("Records no longer in the root, neither in a log nor in an archive (compaction removed them): "
            "%d (user %s, final answers %s, tool calls %s, tool results %s), %d of them gold records."
            % (st["records_lost"], by["1"], by["2"], by["3"], by["4"], len(st["gold_lost"])))
    ok = row[2] and (not ours or r["out_of_scope"] == 0)
    return ok
