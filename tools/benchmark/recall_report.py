"""The ranked-recall part of the report: its targets, retrieval quality side by side, the
agent-level cost and the cost of a query on the board."""

from .figures import KIB, target_table, verdict

GROUPS = ("all", "plain", "two facts", "updated", "en", "zh")


def recall_tables(res, out):
    """Write the section; returns whether every recall target holds."""
    rec = res["recall"]
    r, ag = rec["retrieval"], rec["agent"]
    c64, c32 = rec["cost64"], rec.get("cost32")
    esp, ours = ag["0"], ag["5"]
    worst_us = max(c["matches_us"] for c in c64.values())
    heap = c32 or c64
    above = max(c["above"] for c in heap.values())
    stats = max(c["stats"] for c in heap.values())
    gain = r["ours"]["all"]["r5"] - r["rank-bm25"]["all"]["r5"]
    rows = [
        ("recall@5: ours at least 0.03 above desktop BM25 (rank-bm25)", "+%.3f" % gain, gain >= 0.03),
        ("forgotten or superseded items returned (top 5, every question)", "%d" % r["ours"]["forbidden"],
         r["ours"]["forbidden"] == 0),
        ("LLM requests per answered question <= 1.2 (ESP-Claw's flow: %.1f)" % esp["requests"],
         "%.2f" % ours["requests"], ours["requests"] <= 1.2),
        ("input tokens per answered question <= 0.6x ESP-Claw's flow", "%.2fx" % (ours["tokens"] / esp["tokens"]),
         ours["tokens"] <= 0.6 * esp["tokens"]),
        ("system prompt grows by at most 400 tokens", "+%d" % round(ours["system"] - esp["system"]),
         ours["system"] - esp["system"] <= 400),
        ("a query at capacity: host CPU median <= 2 ms (unix port)", "%.2f ms" % (worst_us / 1000.0),
         worst_us <= 2000),
        ("heap of a query <= 8 KiB above idle (%s)" % ("32-bit build" if c32 else "64-bit port: 32-bit missing"),
         "%.1f KiB" % (above / KIB), above <= 8 * KIB),
        ("term statistics of 128 items <= 8 KiB", "%.1f KiB" % (stats / KIB), stats <= 8 * KIB),
    ]
    out("")
    out("## Ranked recall")
    out("")
    out("The retrieval set of `tools/benchmark/recall_set.py` (its docstring says how it is made): "
        "%d stores at capacity, %d items (English and Chinese), %d questions. Ours: the store's ranking "
        "(`claw_memory/store/rank.py`) on CPython, the code the board runs; desktop BM25: rank-bm25's "
        "BM25Okapi over the same active items (content, tags and keywords), lower-cased whitespace tokens; "
        "recency: the newest items first. recall@k: the share of a question's gold items in the top k; "
        "MRR: 1 / the rank of the first gold item (top 10)." % (
            r["set"]["stores"], r["set"]["items"], r["set"]["questions"]))
    target_table(rows, out)
    out("| system | questions | recall@1 | recall@5 | MRR |")
    out("|---|---|---|---|---|")
    for group in GROUPS:
        for name in ("ours", "rank-bm25", "recency"):
            g = r[name].get(group)
            if g:
                out("| %s (%s) | %d | %.3f | %.3f | %.3f |" % (name, group, g["n"], g["r1"], g["r5"], g["mrr"]))
    out("")
    out("Forgotten-fact questions: the forgotten item never comes back; for %.0f%% of them automatic recall "
        "adds nothing at all (the others bring in the same person's other facts)." % (100 * r["ours"]["quiet"]))
    out("")
    out("Agent-level cost: %d questions that need memory through the reference agent, a scripted oracle LLM "
        "(answers at once when every gold fact is in the request, else calls memory_recall with the gold "
        "items' labels, then answers); tokens estimated as `text.estimate_tokens` counts them (system prompt, "
        "messages, tool definitions)." % esp["questions"])
    out("")
    out("| flow | LLM requests / question | input tokens / question | system prompt tokens |")
    out("|---|---|---|---|")
    out("| auto_recall=0 (ESP-Claw's flow) | %.2f | %d | %d |" % (esp["requests"], esp["tokens"], esp["system"]))
    out("| auto_recall=5 (default) | %.2f | %d | %d |" % (ours["requests"], ours["tokens"], ours["system"]))
    out("")
    out("A query on the unix port at capacity (128 items on simulated LittleFS, the store opened afresh): "
        "host CPU median of `Store.matches` (automatic recall's read-only path) and `Store.recall(query=)` "
        "(the tool's: recall lines appended), device estimate CPU x30 / x100 (reading the returned items' "
        "lines costs no program or erase); heap above idle during a query (heapmeter) and the term "
        "statistics' arrays.")
    out("")
    out("| store | questions | matches median (max) | device F=30 / F=100 | recall(query) median | heap above idle "
        "| statistics |")
    out("|---|---|---|---|---|---|---|")
    for lang in sorted(c64):
        c = c64[lang]
        h = heap[lang]
        out("| %s | %d | %.2f ms (%.2f) | %.0f / %.0f ms | %.2f ms | %.1f KiB | %.1f KiB |" % (
            lang, c["n"], c["matches_us"] / 1000.0, c["matches_max_us"] / 1000.0, c["matches_us"] * 30 / 1000.0,
            c["matches_us"] * 100 / 1000.0, c["recall_us"] / 1000.0, h["above"] / KIB, h["stats"] / KIB))
    return all(ok for _, _, ok in rows)
