"""The history-search part of the report (search_eval.py's results): its quality target and
the two systems side by side, overall and per group; the cost of a query over a megabyte of
history (search_cost.py on the unix port) and what the index costs on flash."""

from .figures import FACTORS, KIB, fmt_ms, target_table, verdict
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
        "lower-cased whitespace tokens; the same with words and CJK bigrams for reference; bm25s with its "
        "English stop words and Snowball stemmer (PyStemmer), the desktop library a user would pick, with "
        "its own tokeniser. recall@k: the "
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
    if r.get("cost64"):
        ok = cost_tables(r, out) and ok
    return ok


# SPI flash read on an ESP32-S3 through its partition driver: about 10 MB/s (quad I/O at
# 80 MHz gives 40 MB/s raw; the driver's small reads and cache misses cost the rest).
READ_MS_PER_KIB = 0.1
LAYOUT = {"board": "one chat, six sessions (a board used for long by one user; default session limit)",
          "chats": "70 sessions in 14 chats (many small files; 24 KiB session limit)"}


def _kib(n):
    return "-" if n is None else "%.0f KiB" % (n / KIB)


def cost_tables(r, out):
    """The cost of a query: host CPU on the unix port (simulated LittleFS, and the same files
    on the host's own filesystem: the library's CPU without the simulator's), bytes read,
    heap, the device estimate; the index's size and the flash cost of writing it."""
    c64, c32 = r["cost64"], r.get("cost32")
    heap = c32 or c64
    board = c64["board"]
    chat = board["scopes"]["chat"]
    native = board["native_median_us"].get("chat", chat["median_us"])
    hit_bytes = 5 * 512  # (five hits of up to max_message_chars, about)
    read_ok = chat["read_median"] <= 64 * KIB + hit_bytes
    dev30 = native * 30 / 1000.0 + chat["read_median"] / KIB * READ_MS_PER_KIB
    above = max(x["above"] for x in heap.values())
    rows = [
        ("a query over about 1 MiB of history (the tool's scope): host CPU median <= 10 ms (unix port, "
         "the host's filesystem; on the simulated flash, whose Python code adds its own)",
         "%.1f ms (%.1f simulated)" % (native / 1000.0, chat["median_us"] / 1000.0), native <= 10000),
        ("bytes read from flash <= 64 KiB + the hit records (median; queries one after another, the "
         "files kept open from one to the next)", "%.0f KiB (after a turn in the chat: %s; the first "
         "query after opening: %s)" % (chat["read_median"] / KIB, _kib(chat.get("read_turn_median")),
                                       _kib(chat.get("read_cold_median"))), read_ok),
        ("device estimate at x30 under ~300 ms (CPU on the host's filesystem x30 + flash reads)",
         "%.0f ms" % dev30, dev30 <= 300),
        ("heap of a query <= 16 KiB above idle (%s)" % ("32-bit build" if c32 else "64-bit port: 32-bit missing"),
         "%.1f KiB" % (above / KIB), bool(c32) and above <= 16 * KIB),
    ]
    shares = [(layout, 100.0 * c64[layout]["index"] / c64[layout]["history"])
              for layout in ("board", "chats") if c64.get(layout)]
    rows.append(("the text indexes at most 15% of the history they index (logs and segments, each layout)",
                 ", ".join("%s %.1f%%" % s for s in shares), all(s <= 15.0 for _, s in shares)))
    out("")
    out("## History search: cost of a query")
    out("")
    out("`tools/benchmark/mp/search_cost.py` on the unix port: two draws of the conversation set "
        "persisted turn by turn through `Sessions` on simulated LittleFS (compaction into archive "
        "segments, the text index written as the history is), the memory closed and opened afresh, "
        "then each question searched as the `memory_search` tool does (its chat: `chat=`) and over the "
        "whole data root (the owner's view). Host CPU median (and p90); the same files copied to the "
        "host's own filesystem and searched again (the simulated device is Python code: its share of "
        "the first figure is not the library's); bytes read from the simulated flash (what littlefs "
        "reads: its metadata and file skip-lists included). Device estimate: CPU on the host's "
        "filesystem x%s, plus flash reads at %.1f ms a KiB." % (" / x".join(str(f) for f in FACTORS),
                                                                 READ_MS_PER_KIB))
    target_table(rows, out)
    out("| layout | history (logs + segments) | text indexes | scope | queries | host median (p90) ms "
        "| host's filesystem median ms | read median (max) KiB | device x30 / x100 ms | heap above idle KiB |")
    out("|---|---|---|---|---|---|---|---|---|---|")
    for layout in ("board", "chats"):
        c = c64.get(layout)
        if not c:
            continue
        h = (c32 or {}).get(layout, c)
        for scope in ("chat", "root"):
            sc = c["scopes"][scope]
            nat = c["native_median_us"].get(scope)
            cpu = nat if nat is not None else sc["median_us"]
            rd = sc["read_median"] / KIB * READ_MS_PER_KIB
            out("| %s | %.0f KB | %.0f KB (%.1f%%) | %s | %d | %s (%s) | %s | %.0f (%.0f) | %s | %.1f |" % (
                layout, c["history"] / 1000.0, c["index"] / 1000.0, 100.0 * c["index"] / c["history"], scope,
                sc["n"], fmt_ms(sc["median_us"] / 1000.0), fmt_ms(sc["p90_us"] / 1000.0),
                fmt_ms(nat / 1000.0) if nat is not None else "-", sc["read_median"] / KIB, sc["read_max"] / KIB,
                " / ".join(fmt_ms(cpu * f / 1000.0 + rd) for f in FACTORS), h["above"] / KIB))
    out("")
    for layout in ("board", "chats"):
        c = c64.get(layout)
        if c:
            out("- %s: %s; %d turns persisted." % (layout, LAYOUT[layout], c["turns"]))
    out("")
    out("Bytes read: each file in scope costs littlefs a lookup of its name (it reads the folder's "
        "metadata: several KiB a name in a folder of many files) and a walk of its skip-list at each "
        "seek, the text index is read in the pieces a query needs (a block's header, lengths and "
        "bucket directory, the query's terms' postings, a candidate's record-table entry) and the "
        "candidates' records are read whole (the hits' text is verified against them). A lookup "
        "reads the folder's metadata log, which every commit in the folder lengthens (an append "
        "to a log, a rename) until littlefs compacts it: the same queries cost more or less to "
        "look up by when that last happened (60 appends to the board set's logs doubled what "
        "opening each of its files costs). The figures are taken after the memory was closed "
        "and opened again; the close merged each session's text index (session/tixmerge.py: "
        "three commits each), which the lookups include. A search keeps the first 6 files it "
        "opens open for the next query (session/held.py; each holds littlefs's handle and its "
        "128-byte cache, with its entry about 480 bytes on the 32-bit port, within the query's "
        "16 KiB of heap), until their paths are "
        "written: queries one after another open fewer files; after a turn, the chat's current "
        "session's files are opened again; the first query after opening opens every file.")
    for layout in ("board", "chats"):
        w = (c64.get(layout) or {}).get("scopes", {}).get("chat", {}).get("reads")
        if w:
            out("")
            out("Where a query's reads go (`tools/benchmark/mp/readtrace.py`; %s layout, its chat's scope, "
                "medians): %.0f KiB in all; %.0f KiB finding names (%d files opened); %.0f KiB reading "
                "the text indexes, for %.1f KB the search asked for; %.1f KiB reading records, for %.1f KB."
                % (layout, w["total"] / KIB, w["lookups"] / KIB, w["opens"], w["index_read"] / KIB,
                   w["index_asked"] / 1000.0, w["records_read"] / KIB, w["records_asked"] / 1000.0))
    return all(ok for _, _, ok in rows)
