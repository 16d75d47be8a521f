# History search (issue 26): the text index's blocks, BM25 over records across logs and
# archive segments, the archive made by compaction (its bound, paging into it, deletion with
# the session), scopes, the memory_search tool, and an ESP-Claw append or compaction under
# our index.
import math
import os

import espclaw
from flashsim import mount
from mptest import eq, heap, ok, raises

import claw_memory
from claw_memory import fsutil, terms
from claw_memory.core import Request
from claw_memory.session import Sessions, file_name, tix
from claw_memory.session import archive as arc

HEAP = "8M"
D = "/flash/sessions"
SID = "chat:web:u1:default_01"

TOPICS = [
    "my sister Lena recommends Osteria Dodo on Via Roma for carbonara",
    "the boiler service is booked for March 14 with Hendrik",
    "our daughter's violin lesson moved to Thursdays at five",
    "I keep the spare bicycle key under the blue flower pot",
    "the wifi password for the garden shed router is written on the fridge",
    "Grandma's apple cake needs 200 grams of butter and three eggs",
    "the dentist said to come back in October for a cleaning",
    "we are flying to Lisbon on the 3rd of June, seat 14C",
    "花园里的番茄今年长得特别好",
    "明天下午三点和王医生预约了体检",
]


def _fresh(kind="lfs2", blocks=256, **kw):
    dev = mount(kind, "/flash", blocks=blocks)
    fsutil.makedirs(D)
    return dev, Sessions(D, **kw)


def _turn(s, sid, n, tool=True, pad=""):
    topic = TOPICS[n % len(TOPICS)]
    s.persist(sid, [(1, None, "turn %d: %s %s" % (n, topic, pad))])
    if tool:
        call = ('{"role":"assistant","content":null,"tool_calls":[{"id":"c%d","type":"function",'
                '"function":{"name":"lookup","arguments":"{\\"n\\":%d}"}}]}' % (n, n))
        res = '[{"role":"tool","tool_call_id":"c%d","content":"lookup result %d","is_error":false}]' % (n, n)
        s.persist(sid, [(3, call, None), (4, res, None)])
    return s.persist(sid, [(2, None, "noted %d" % n)], turn_completed=True)


def _texts(hits):
    return [(h["role"], h["text"]) for h in hits]


# -- the block format ---------------------------------------------------------------------


def test_lengths_keep_one_byte_and_order():
    prev = -1
    for dl in list(range(0, 300)) + [500, 1000, 2000, 10 ** 6]:
        q = tix.quant(dl)
        ok(0 <= q <= 255, "one byte")
        ok(q >= prev, "monotone")
        prev = q
        if dl <= 128:
            eq(tix.unquant(q), dl, "exact up to 128")
        elif dl < 1600:
            ok(abs(tix.unquant(q) - dl) <= dl // 40 + 1, "within 2.5%% at %d" % dl)


def test_a_block_reads_back_what_was_built():
    mount("lfs2", "/flash", blocks=64)
    b = tix.Builder()
    # hashes chosen so that two terms share a bucket (the key's top bits: a block this small
    # has one bucket) and differ in key, and one term repeats in a record (its count)
    h1, h2, h3 = 0x12345601, 0x3F000001, 0x00ABCD02
    recs = [(100, 40, 1, [h1, h2, h1]), (140, 30, 2, [h2]), (175, 10, 4, [h3, h1])]
    for off, ln, k, hs in recs:
        ok(b.room(len(hs)), "room")
        b.add(off, ln, k, hs)
    raw = tix.MAGIC + b.block(185, 0x1234)
    with open("/flash/t.tix", "wb") as f:
        f.write(raw)
    blks, end = tix.blocks("/flash/t.tix")
    eq(len(blks), 1, "one block")
    eq(end, len(raw), "it ends the file")
    blk = blks[0]
    eq((blk.n, blk.start, blk.end, blk.probe, blk.sumdl), (3, 100, 185, 0x1234, 6), "header")
    with open("/flash/t.tix", "rb") as f:
        eq(blk.records(f), [(100, 40, 1), (140, 30, 2), (175, 10, 4)], "record table")
        dls, d = blk.head(f)
        eq(list(dls), [3, 1, 2], "lengths")
        got = blk.find(f, d, h1)
        f.seek(got[0])
        eq(tix.postings(f.read(got[1])), [(0, 2), (2, 1)], "h1: records 0 (twice) and 2")
        eq(got[2], 2, "its document frequency")
        got = blk.find(f, d, h2)
        f.seek(got[0])
        eq(tix.postings(f.read(got[1])), [(0, 1), (1, 1)], "h2")
        eq(blk.find(f, d, 0x2F000101), None, "an absent key in a used bucket")
        eq(blk.find(f, d, h3 | 0x7FE00000)[3], blk.find(f, d, h3)[3], "bits above the key: the same")
        size = blk.postings_size(f)
        f.seek(blk.dir)
        posts = tix.refilter(f.read(size), blk.bits, bytearray([0, 255, 1]))
    # record 1 dropped, record 2 becomes 1: h2 keeps record 0 only, h3 record 1
    b2 = tix.Builder()
    b2.record(0, 40, 1, 3)
    b2.record(40, 10, 4, 2)
    with open("/flash/t2.tix", "wb") as f:
        f.write(tix.MAGIC + b2.frame(50, 7, blk.bits, len(posts)) + posts + b2.recs)
    blk2 = tix.blocks("/flash/t2.tix")[0][0]
    with open("/flash/t2.tix", "rb") as f:
        d = blk2.head(f)[1]
        for h, want in ((h1, [(0, 2), (1, 1)]), (h2, [(0, 1)]), (h3, [(1, 1)])):
            got = blk2.find(f, d, h)
            f.seek(got[0])
            eq(tix.postings(f.read(got[1])), want, "refiltered %x" % h)
        eq(blk2.records(f), [(0, 40, 1), (40, 10, 4)], "new record table")


def test_two_terms_of_one_record_sharing_a_key_are_one_term_there():
    # A block knows a term by 21 bits of its hash: two terms of one record that share them
    # are one posting of both counts (their records are checked when a query finds them).
    mount("lfs2", "/flash", blocks=64)
    b = tix.Builder()
    same = (0x00012301, 0x2FE12301)  # the same low 21 bits: one key
    b.add(0, 20, 1, [same[0], same[1], 0x5])
    with open("/flash/k.tix", "wb") as f:
        f.write(tix.MAGIC + b.block(20, 0))
    blk = tix.blocks("/flash/k.tix")[0][0]
    with open("/flash/k.tix", "rb") as f:
        got = blk.find(f, blk.head(f)[1], same[1])
        eq(tix.postings(got[3]), [(0, 2)], "one posting, both counts")
    dev, s = _fresh()
    s.persist(SID, [(1, None, "w304 and w1109 and the kiwi")])  # (a pair that once collided)
    s.persist(SID, [(2, None, "ok")], turn_completed=True)
    s.close()
    eq(_texts(s.search("kiwi", 2, [SID])), [("user", "w304 and w1109 and the kiwi")], "indexed")
    dev.unmount()


def test_a_torn_or_foreign_index_is_no_index():
    mount("lfs2", "/flash", blocks=64)
    with open("/flash/x.tix", "wb") as f:
        f.write(b"not an index at all")
    eq(tix.blocks("/flash/x.tix")[0], None, "not an index")
    b = tix.Builder()
    b.add(0, 10, 1, [1, 2, 3])
    raw = tix.MAGIC + b.block(10, 0)
    with open("/flash/x.tix", "wb") as f:
        f.write(raw[:-3])
    eq(tix.blocks("/flash/x.tix")[0], None, "a block cut short")


# -- BM25 -----------------------------------------------------------------------------------


def _bm25(docs, query):
    """Scores of `docs` (texts) for `query`, BM25 k1 1.2 b 0.75, computed here from the terms."""
    qs = []
    for t in terms.terms(query):
        if t not in qs:
            qs.append(t)
    toks = [terms.terms(d) for d in docs]
    n = len(docs)
    avg = sum(len(t) for t in toks) / n
    dfs = [sum(1 for u in toks if q in u) for q in qs]
    out = []
    for t in toks:
        s = 0.0
        for q, df in zip(qs, dfs):
            tf = min(t.count(q), 4)
            if tf:
                idf = math.log(1 + (n - df + 0.5) / (df + 0.5))
                s += idf * tf * 2.2 / (tf + 1.2 * (0.25 + 0.75 * len(t) / avg))
        out.append(round(s, 4))
    return out


def test_scores_are_bm25_over_records_indexed_or_not():
    dev, s = _fresh()
    docs = ["the blue bicycle key is under the flower pot",
            "a blue car and a blue house", "lunch with Lena on Friday",
            "Lena's bicycle is red", "nothing relevant at all here"]
    for i, d in enumerate(docs):
        s.persist(SID, [(1, None, d)])
        s.persist(SID, [(2, None, "ok %d" % i)], turn_completed=True)
    texts = []
    for d in docs:
        texts += [d, "ok %d" % docs.index(d)]
    for q in ("blue bicycle", "Lena", "bicycle Lena red"):
        want = sorted(((sc, t) for sc, t in zip(_bm25(texts, q), texts) if sc), reverse=True)
        tail = s.search(q, 10)  # the records are not indexed yet: scored from their text
        eq(sorted(((h["score"], h["text"]) for h in tail), reverse=True), want, "tail: " + q)
        s.close()
        ok(fsutil.size(s.path(SID) + ".tix") > 0, "close() writes the text index")
        got = s.search(q, 10)
        eq(sorted(((h["score"], h["text"]) for h in got), reverse=True), want, "indexed: " + q)
        eq([h["score"] for h in got], sorted([h["score"] for h in got], reverse=True), "best first")
    dev.unmount()


def test_ties_go_to_the_newer_record_and_limit_holds():
    dev, s = _fresh()
    for i in range(6):
        _turn(s, SID, 3, tool=False, pad=str(i))  # the same words each time
    got = s.search("spare bicycle key", 3)
    eq(len(got), 3, "limit")
    eq([h["text"][-1] for h in got], ["5", "4", "3"], "the newest first on equal scores")
    dev.unmount()


# -- what is searched -----------------------------------------------------------------------


def test_every_role_is_found_but_the_pending_turn():
    dev, s = _fresh()
    _turn(s, SID, 1)
    s.persist(SID, [(1, None, "what about the zeppelin museum")])  # pending, not completed
    eq(s.search("zeppelin", 5, [SID]), [], "the turn in progress is not searched")
    got = s.search("lookup", 5, [SID])
    eq(sorted(h["role"] for h in got), ["assistant", "tool"], "tool call and result text")
    got = s.search("boiler Hendrik", 5, [SID])
    eq(_texts(got)[0], ("user", "turn 1: the boiler service is booked for March 14 with Hendrik "),
       "user text")
    eq(got[0]["session"], SID, "its session")
    eq(got[0]["archived"], False, "in the log")
    with open(s.path(SID), "rb") as f:
        f.seek(got[0]["offset"])
        ok(b"boiler" in f.readline(), "offset: where the record is in the log")
    dev.unmount()


def test_cjk_and_hostile_queries():
    dev, s = _fresh()
    for n in range(10):
        _turn(s, SID, n)
    eq(_texts(s.search("番茄", 3))[0][1], "turn 8: 花园里的番茄今年长得特别好 ", "CJK bigram")
    eq(_texts(s.search("王医生 体检", 3))[0][1], "turn 9: 明天下午三点和王医生预约了体检 ", "CJK words")
    for q in ("", "   ", "the and of", "，。！？、", "\x00\x01\x1b[J", "\u202e\u200b"):
        eq(s.search(q, 5), [], "no terms: %r" % q)
    eq(_texts(s.search("x" * (1 << 20) + " boiler", 2)), [], "a 1 MB query reads its first 512 bytes")
    ok(s.search(("boiler " * 100) + "x" * (1 << 16), 2), "long queries still search")
    raises(ValueError, s.search, None, 5)
    raises(ValueError, s.search, b"boiler", 5)
    for bad in (0, 51, True, 2.0, "5"):
        raises(ValueError, s.search, "boiler", bad)
    dev.unmount()


def test_a_record_over_the_bound_is_found_by_its_first_bytes():
    dev, s = _fresh()
    _turn(s, SID, 1)
    big = '{"role":"user","content":"%s and then the kiwi orchard"}' % ("filler " * 12000)
    with open(s.path(SID), "ab") as f:  # as ESP-Claw writes it: no size limit
        f.write(big.encode() + b"\n")
    s2 = Sessions(D)
    ok(not s2.search("kiwi", 3), "past the first 8 KiB: not indexed")
    got = s2.search("filler", 3)
    eq([h["role"] for h in got], ["user"], "found, as a user record")
    ok(len(got[0]["text"]) <= 4096, "its text cut to max_message_chars")
    dev.unmount()


# -- the archive ----------------------------------------------------------------------------


def _archive_run(kind="lfs2", n=60, **kw):
    dev, s = _fresh(kind, blocks=512, size_limit=6000, **kw)
    for i in range(n):
        eq(_turn(s, SID, i, pad="p" * 40), None, "turn %d not blocked" % i)
    return dev, s


def _records(path):
    with open(path, "rb") as f:
        return [ln for ln in f.read().split(b"\n") if ln]


@heap("16M")  # two 2 MiB simulated flashes
def test_compaction_moves_whole_turns_to_the_archive_once():
    for kind in ("lfs2", "fat"):
        dev, s = _archive_run(kind)
        s.close()
        segs = arc.segments(D, file_name(SID))
        ok(len(segs) >= 2, "%s: several compactions archived turns" % kind)
        archived = []
        for seq, p, size in segs:
            archived += _records(p)
        logged = _records(s.path(SID))
        eq([r for r in logged if r in archived], [], kind + ": no record in both")
        users = [r for r in archived + logged if b'"role":"user"' in r]
        eq([int(u.split(b"turn ")[1].split(b":")[0]) for u in users], list(range(60)),
           kind + ": every turn's user message once, in order")
        calls = sorted(int(r.split(b'"id":"c')[1].split(b'"')[0]) for r in archived + logged
                       if b'"tool_calls"' in r)
        eq(calls, list(range(60)), kind + ": no tool call deleted (the archive has the old ones)")
        eq(len([r for r in archived + logged if r.startswith(b"[")]), 60, kind + ": nor a result")
        for seq, p, size in segs:
            ok(_records(p)[0].startswith(b'{"role":"user"'), kind + ": a segment starts a turn")
        hit = s.search("turn 2 violin daughter", 1)[0]
        ok(hit["archived"] and hit["text"].startswith("turn 2:"), kind + ": archived turns are found")
        eq(arc.size(D), sum(fsutil.size(p) for seq, p, size in segs), kind + ": the catalog's sizes")
        dev.unmount()


def test_an_archived_hit_carries_its_session_id():
    dev = mount("lfs2", "/flash", blocks=512)
    mem = claw_memory.open("/flash", extract=False, session_limit=6000)
    sid = mem.chats.session_id("web", "carol")
    for n in range(40):
        _turn(mem.sessions, sid, n, pad="p" * 40)
    ok(arc.segments(D, file_name(sid)), "compacted into the archive")
    for chat in (("web", "carol"), None):
        hits = [h for h in mem.search("turn 2 violin daughter", 5, chat=chat) if h["archived"]]
        ok(hits and hits[0]["text"].startswith("turn 2:"), "an archived turn is found (%r)" % (chat,))
        eq({h["session"] for h in hits}, {sid}, "its session's id, not its file's name (%r)" % (chat,))
    mem.close()
    dev.unmount()


def test_paging_continues_into_the_archive():
    dev, s = _archive_run()
    want = []
    for i in range(60):
        want += ["turn %d: %s p" % (i, TOPICS[i % len(TOPICS)]), "noted %d" % i]
    got = []
    before = 0
    while True:
        p = s.page(SID, before, 7)
        eq(p["total"], 120, "every visible record counts")
        got = [m["text"].rstrip("p").rstrip() if m["role"] == "user" else m["text"]
               for m in p["messages"]] + got
        if not p["has_more"]:
            break
        before = p["next_before"]
    eq(got, [w.rstrip("p").rstrip() for w in want], "pages back to the first turn, in order")
    s.close()
    for name in os.listdir(D):  # the text indexes are derived: paging makes them again
        if name.endswith(".tix"):
            os.remove(D + "/" + name)
    s = Sessions(D, size_limit=6000)
    p = s.page(SID, 2, 2)  # the first two records: in the oldest segment
    eq(p["total"], 120, "every record without the text indexes")
    eq([m["text"].rstrip("p").rstrip() for m in p["messages"]], [w.rstrip("p").rstrip() for w in want[:2]],
       "the archive's first turn")
    dev.unmount()


def test_ties_go_to_the_newer_record_across_the_archive_and_the_log():
    dev, s = _archive_run()
    got = s.search("sister Lena carbonara Osteria", 3)  # turns 0, 10, ..., 50: the same score
    eq([h["text"].split(":")[0] for h in got], ["turn 50", "turn 40", "turn 30"], "newest first")
    eq(len(set(h["score"] for h in got)), 1, "(a tie)")
    eq(len(set(h["archived"] for h in got)), 2, "(in the log and in the archive)")
    dev.unmount()


def test_the_remapped_index_searches_as_a_rebuilt_one():
    dev, s = _archive_run(n=80)
    queries = ("boiler Hendrik", "lookup result 77", "violin", "番茄", "noted 3", "Lisbon seat")
    first = [s.search(q, 8) for q in queries]
    s.close()
    for name in os.listdir(D):
        if name.endswith(".tix"):
            os.remove(D + "/" + name)
    s = Sessions(D, size_limit=6000)
    eq([s.search(q, 8) for q in queries], first, "the same hits and scores from fresh indexes")
    dev.unmount()


def test_the_archive_keeps_within_its_limit_oldest_first():
    dev, s = _archive_run(n=90, archive_limit=8000)
    entries = arc.read(D)
    live = [e for e in entries if e[4]]
    ok(live and sum(e[1] for e in live) <= 8000, "within the limit: %r" % entries)
    for e in entries:
        ok(e[4] == fsutil.exists(arc.seg_path(D, e[3], e[0])), "dead entries have no file")
    names = [n for n in os.listdir(D) if ".arc" in n and not n.endswith(".tix")]
    eq(sorted(names), sorted(file_name(SID) + ".arc%d" % e[0] for e in live), "only live segments")
    ok(min(e[0] for e in live) > 1, "the oldest went")
    seqs = [e[0] for e in entries]
    eq(seqs, sorted(set(seqs)), "each segment its own number, in the order they were made")
    for e in live:
        eq(fsutil.size(arc.seg_path(D, e[3], e[0])), e[1], "segment %d: the size its entry names" % e[0])
    eq([h for h in s.search("turn 0 sister", 5) if h["text"].startswith("turn 0:")], [],
       "the oldest turns are gone")
    dev.unmount()


def test_archive_limit_zero_drops_turns_as_esp_claw():
    dev, s = _archive_run(archive_limit=0)
    eq([n for n in os.listdir(D) if ".arc" in n or n == "archive.list"], [], "no archive")
    ok(s.page(SID, 0, 5)["total"] < 120, "the oldest turns are gone")
    dev.unmount()


def test_deleting_a_session_takes_its_archive_and_indexes():
    dev = mount("lfs2", "/flash", blocks=512)
    mem = claw_memory.open("/flash", session_limit=6000, extract=False)
    ch = mem.chats
    mem.session_command("web", "u1", "new work")
    work = ch.session_id("web", "u1")
    for i in range(60):
        _turn(mem.sessions, work, i, pad="p" * 40)
    mem.session_command("web", "u1", "new other")
    other = ch.session_id("web", "u1")
    for i in range(60):
        _turn(mem.sessions, other, i, pad="p" * 40)
    mem.flush()
    eq(mem.sessions.page(other, 0, 5)["total"], 120, "a session pages its own archive only")
    eq(len(mem.search("boiler Hendrik", 50, session=other)), 6, "its own six boiler turns")
    mine = file_name(work)
    ok(any(n.startswith(mine + ".arc") for n in os.listdir(D)), "work has archive segments")
    eq(mem.session_command("web", "u1", "delete work"), "Deleted session: work", "deleted")
    eq([n for n in os.listdir(D) if n.startswith(mine)], [], "no file of it left")
    eq([e for e in arc.read(D) if e[3] == mine], [], "not in the catalog")
    ok(arc.segments(D, file_name(other)), "the other session's archive stays")
    ok(mem.search("boiler", 3, session=other), "and is searched")
    eq(mem.search("boiler", 3, session=work), [], "nothing of the deleted one")
    dev.unmount()


# -- scopes and the tool --------------------------------------------------------------------


def test_scopes_and_the_tool_never_cross_chats():
    dev = mount("lfs2", "/flash", blocks=512)
    mem = claw_memory.open("/flash", extract=False)
    a1 = mem.chats.session_id("web", "alice")
    _turn(mem.sessions, a1, 0)  # Lena, carbonara
    mem.session_command("web", "alice", "new trip")
    a2 = mem.chats.session_id("web", "alice")
    _turn(mem.sessions, a2, 7)  # Lisbon
    b1 = mem.chats.session_id("web", "bob")
    mem.sessions.persist(b1, [(1, None, "Bob's secret: Lisbon carbonara plans with Lena")])
    mem.sessions.persist(b1, [(2, None, "ok")], turn_completed=True)
    sessions = {h["session"] for h in mem.search("Lisbon Lena carbonara", 10)}
    eq(sessions, {a1, a2, b1}, "the whole root")
    eq({h["session"] for h in mem.search("Lisbon Lena carbonara", 10, chat=("web", "alice"))},
       {a1, a2}, "one chat: its sessions")
    eq({h["session"] for h in mem.search("Lisbon", 10, session=a1)}, set(), "one session")
    eq(mem.search("Lisbon", 10, chat=("web", "nobody")), [], "a chat without a map")
    mem.session_command("web", "alice", "new empty")  # named by the chat map, no turn yet
    eq({h["session"] for h in mem.search("Lisbon Lena carbonara", 10, chat=("web", "alice"))},
       {a1, a2}, "a session without a turn is passed over")
    mem.session_command("web", "alice", "switch trip")
    raises(ValueError, mem.search, "x", 5, ("web", "alice"), a1)
    raises(ValueError, mem.search, "x", 5, "web:alice")
    tool = [t for t in mem.tools() if t.name == "memory_search"][0]

    async def run():
        import json

        req = Request("q", a2, "web", "alice")
        okay, out = await tool.handler('{"query":"Lisbon carbonara Lena","limit":10}', req)
        res = json.loads(out)
        ok(okay and res["ok"] and res["action"] == "memory_search" and not res["changed"], out)
        eq({h["session"] for h in res["hits"]}, {"default_01", "trip"}, "names in this chat")
        ok(all("secret" not in h["text"] for h in res["hits"]), "never another chat's records")
        req = Request("q", b1)  # no chat: its own session only
        okay, out = await tool.handler({"query": "Lena"}, req)
        eq([h["session"] for h in json.loads(out)["hits"]], [b1], "the request's session")
        for bad in ("not json", '{"query":""}', '{"query":5}', '{"limit":3}', "[1]"):
            okay, out = await tool.handler(bad, req)
            ok(not okay and not json.loads(out)["ok"], "rejected: %r" % bad)
        okay, out = await tool.handler('{"query":"Lena"}', Request("q"))
        eq(json.loads(out)["error"], "no_session", "a request without a session")
        for lim, n in ((0, 1), (99, 3), ("2", 3), (True, 3)):
            okay, out = await tool.handler({"query": "Lisbon Lena carbonara", "limit": lim},
                                           Request("q", a2, "web", "alice"))
            ok(len(json.loads(out)["hits"]) <= max(n, 3), "limit %r" % (lim,))
        okay, out = await tool.handler({"query": "filler"}, Request("q", a2, "web", "alice"))
        eq(json.loads(out)["hits"], [], "nothing matched: an empty list")

    return run()


def test_lite_mode_searches_too():
    dev = mount("lfs2", "/flash", blocks=256)
    mem = claw_memory.open("/flash", mode="lite")
    sid = mem.chats.session_id("web", "u")
    _turn(mem.sessions, sid, 1)
    ok(mem.search("boiler", 2), "LITE has history search")
    ok("memory_search" in [t.name for t in mem.tools()], "and its tool")
    dev.unmount()


# -- another program on the same root -------------------------------------------------------


def test_an_esp_claw_append_or_compaction_under_our_index():
    dev, s = _fresh(blocks=512)
    for n in range(8):
        _turn(s, SID, n)
    s.close()
    esp = espclaw.EspClawSessions(D, truncate=espclaw.model_truncate(dev))
    esp.persist(SID, [(1, '{"role":"user","content":"the quokka enclosure opens at noon"}', None)])
    esp.persist(SID, [(2, '{"role":"assistant","content":"noted quokka"}', None)], turn_completed=True)
    s = Sessions(D)
    eq(sorted(_texts(s.search("quokka", 5))),
       [("assistant", "noted quokka"), ("user", "the quokka enclosure opens at noon")],
       "ESP-Claw's append is found (our index was only behind)")
    s.close()
    # ESP-Claw compacts in place: its tool records go, the log is rewritten under our index.
    esp = espclaw.EspClawSessions(D, limit=1500, truncate=espclaw.model_truncate(dev))
    esp.persist(SID, [(1, None, "one more")])
    esp.persist(SID, [(2, None, "done")], turn_completed=True)
    s = Sessions(D)
    got = s.search("lookup result", 5)
    with open(s.path(SID), "rb") as f:
        data = f.read()
    for h in got:
        ok(h["text"].encode() in data or b"lookup" in data, "a hit is there: %r" % h)
    eq(_texts(s.search("boiler Hendrik", 1))[0][1][:7], "turn 1:", "found where it now is")
    dev.unmount()


# -- limits at their edges, caches, scopes (issue 24's test strength) -----------------------


def _covers(path):
    """Where the text index of `path` ends when it is whole and matches its file, else None."""
    with open(path, "rb") as f:
        blks, _ = tix.blocks(path + ".tix", fsutil.size(path), f)
    return blks[-1].end if blks else None


def test_varints_and_records_around_128_bytes():
    # 128 is the first value a varint writes in two bytes; record lengths around it, and a
    # term whose postings skip 32 records (a gap written as 128), read back exactly.
    for v in (0, 1, 127, 128, 129, 255, 16383, 16384, 1 << 21):
        out = bytearray()
        tix.varint(out, v)
        eq(tix.unvarint(out, 0), (v, len(out)), "varint %d" % v)
    dev, s = _fresh()
    base = len('{"role":"user","content":"w"}\n')
    words = []
    for n, ln in enumerate(range(124, 133)):
        w = "zq" + "abcdefghij"[n]  # one unique word per record
        body = w + " " + "k" * (ln - (base - 1) - len(w) - 1)  # a line of `ln` bytes
        s.persist(SID, [(1, None, body)])
        s.persist(SID, [(2, None, "ok")], turn_completed=True)
        words.append((w, body))
    for n in range(40):  # "lonely" in records 0 and 33 of this run: 32 ordinals between
        s.persist(SID, [(1, None, "lonely start" if n == 0 else "filler %d" % n)])
        s.persist(SID, [(2, None, "lonely start" if n == 16 else "ok")], turn_completed=True)
    s.close()
    eq(_covers(s.path(SID)), fsutil.size(s.path(SID)), "the index covers the log")
    with open(s.path(SID), "rb") as f:
        for w, body in words:
            got = s.search(w, 3, [SID])
            eq(_texts(got), [("user", body)], "found by its word: " + w)
            f.seek(got[0]["offset"])
            eq(len(f.readline()), base + len(body) - 1, "its offset (a line of that length)")
    eq(sorted(_texts(s.search("lonely", 5, [SID]))),
       [("assistant", "lonely start"), ("user", "lonely start")], "both")
    dev.unmount()


def test_a_record_with_more_terms_than_a_block_takes():
    # 4,096 CJK characters (the first 8 KiB of which make ~2,700 bigrams, more than a block's
    # 2,048 postings) is a block of its own; the records around it are found too.
    dev, s = _fresh()
    s.persist(SID, [(1, None, "kiwi " + "番茄" * 2100)])  # the first record: a block's first
    s.persist(SID, [(2, None, "noted the long one")], turn_completed=True)
    _turn(s, SID, 1)
    _turn(s, SID, 7)
    s.close()
    eq(_covers(s.path(SID)), fsutil.size(s.path(SID)), "a whole index")
    eq([h["role"] for h in s.search("kiwi", 3, [SID])], ["user"], "the long record")
    eq(_texts(s.search("Hendrik", 3, [SID]))[0][1][:7], "turn 1:", "the ones after")
    eq(_texts(s.search("Lisbon", 3, [SID]))[0][1][:7], "turn 7:", "the ones after")
    dev.unmount()


def test_a_block_holds_128_records():
    # 100 short turns: the first block takes exactly 128 records, the index stays whole.
    def word(n):
        cons = "bcdfghjkmnpqrtvwxz"  # no vowels: no stemming merges two of them
        return "xk" + cons[n % 18] + cons[n // 18]

    dev, s = _fresh()
    for n in range(100):
        s.persist(SID, [(1, None, word(n))])
        s.persist(SID, [(2, None, "ok")], turn_completed=True)
    s.close()
    eq(_covers(s.path(SID)), fsutil.size(s.path(SID)), "a whole index")
    eq([b.n for b in tix.blocks(s.path(SID) + ".tix")[0]], [128, 72], "a full block, then the rest")
    for n in (0, 63, 64, 99):  # records 0, 126 (block 1), 128, 198 (block 2)
        eq(_texts(s.search(word(n), 3, [SID])), [("user", word(n))], "turn %d" % n)
    dev.unmount()


def test_a_word_across_a_1024_byte_piece_is_one_term():
    # A long text's terms are made in pieces of ~1 KiB cut after a separator: a word across
    # byte 1024 stays whole, whether the record is indexed or scored from its text.
    dev, s = _fresh()
    body = "lorem " * 170 + "zeppelin museum"  # "zeppelin" spans bytes 1020-1027
    s.persist(SID, [(1, None, body)])
    s.persist(SID, [(2, None, "ok")], turn_completed=True)
    eq([h["role"] for h in s.search("zeppelin", 3, [SID])], ["user"], "scored from its text")
    s.close()
    eq([h["role"] for h in s.search("zeppelin", 3, [SID])], ["user"], "indexed")
    eq(s.search("zepp", 3, [SID]) + s.search("elin", 3, [SID]), [], "no halves")
    dev.unmount()


def test_a_term_counts_at_most_four_times_indexed_or_not():
    dev, s = _fresh()
    docs = ["kiwi kiwi kiwi kiwi kiwi kiwi kiwi and a plum", "one kiwi here",
            "kiwi kiwi and plums", "nothing of it"]
    texts = []
    for i, d in enumerate(docs):
        s.persist(SID, [(1, None, d)])
        s.persist(SID, [(2, None, "ok %d" % i)], turn_completed=True)
        texts += [d, "ok %d" % i]
    want = sorted(((sc, t) for sc, t in zip(_bm25(texts, "kiwi plum"), texts) if sc), reverse=True)
    eq(sorted(((h["score"], h["text"]) for h in s.search("kiwi plum", 10)), reverse=True), want, "tail")
    s.close()
    eq(sorted(((h["score"], h["text"]) for h in s.search("kiwi plum", 10)), reverse=True), want, "indexed")
    dev.unmount()


def test_a_record_of_exactly_the_record_bound_is_a_whole_record():
    dev, s = _fresh(max_record_bytes=200)
    head = '{"role":"user","content":"quokka '
    msg = head + "z" * (200 - len(head) - 2) + '"}'
    eq(len(msg), 200, "(the bound)")
    s.persist(SID, [(1, msg, None)])
    s.persist(SID, [(2, None, "ok")], turn_completed=True)
    s.close()
    got = s.search("quokka", 3, [SID])
    eq(_texts(got), [("user", "quokka " + "z" * (200 - len(head) - 2))], "its visible text, not JSON")
    dev.unmount()


def test_the_index_covers_the_log_after_close_and_a_search_catch_up():
    # Written with its header at the first close, appended to at the next, and a search of a
    # log another program appended to indexes the records its index lacks.
    dev, s = _fresh()
    for n in range(3):
        _turn(s, SID, n)
    s.close()
    log = s.path(SID)
    eq(_covers(log), fsutil.size(log), "first close: a whole index")
    for n in range(3, 5):
        _turn(s, SID, n)
    s.close()
    eq(_covers(log), fsutil.size(log), "second close: caught up, no block twice")
    before = _covers(log)
    with open(log, "ab") as f:  # as ESP-Claw appends
        f.write(b'{"role":"user","content":"the quokka enclosure"}\n')
        f.write(b'{"role":"assistant","content":"noted"}\n')
    s2 = Sessions(D)
    eq(_texts(s2.search("quokka", 3, [SID])), [("user", "the quokka enclosure")], "found")
    ok(_covers(log) > before, "the search indexed the appended records")
    eq(_covers(log), fsutil.size(log), "up to the log's end")
    dev.unmount()


def test_an_index_whose_log_was_rewritten_in_place_is_rebuilt():
    # Another program rewrites the log with records at the same places but other words (the
    # last 16 bytes the probe hashes change): the index is written again, the new words found.
    dev, s = _fresh()
    _turn(s, SID, 1, tool=False)
    s.persist(SID, [(1, None, "the kiwi orchard")])
    s.persist(SID, [(2, None, "noted kiwi")], turn_completed=True)
    s.close()
    log = s.path(SID)
    with open(log, "rb") as f:
        data = f.read()
    with open(log, "wb") as f:
        f.write(data.replace(b"kiwi", b"plum"))
    s2 = Sessions(D)
    eq(sorted(_texts(s2.search("plum", 3, [SID]))),
       [("assistant", "noted plum"), ("user", "the plum orchard")], "the new words")
    eq(s2.search("kiwi", 3, [SID]), [], "not the old ones")
    dev.unmount()


def test_a_query_uses_its_first_16_terms():
    dev, s = _fresh()
    _turn(s, SID, 1)
    absent = ["zz%s%s" % (chr(97 + n // 4), chr(97 + n % 4)) for n in range(16)]
    eq(len(set(terms.terms(" ".join(absent)))), 16, "(16 distinct terms)")
    eq(s.search(" ".join(absent[:15] + ["boiler"]), 3), s.search("boiler", 3), "the 16th term counts")
    eq(s.search(" ".join(absent + ["boiler"]), 3), [], "the 17th does not")
    dev.unmount()


def test_left_out_candidates_are_replaced_by_the_next_ones():
    # "crkbe" and "kiwi" share the 21 bits a block knows a term by: the index offers the kiwi
    # records for "crkbe" (rare, so they score first); the check leaves them out, and the
    # plum records after them still fill the limit.
    def key(w):
        return terms.index_hash(terms.terms(w)[0]) & 0x1FFFFF

    eq(key(b"crkbe"), key(b"kiwi"), "(a collision in the index)")
    dev, s = _fresh()
    for n in range(4):
        s.persist(SID, [(1, None, "kiwi number %d" % n)])
        s.persist(SID, [(2, None, "ok")], turn_completed=True)
    for n in range(10):
        s.persist(SID, [(1, None, "plum number %d" % n)])
        s.persist(SID, [(2, None, "ok")], turn_completed=True)
    s.close()
    got = s.search("crkbe plum", 3, [SID])
    eq([h["text"] for h in got], ["plum number 9", "plum number 8", "plum number 7"],
       "three plum records, no kiwi one")
    eq(sorted(h["text"] for h in s.search("crkbe plum", 20, [SID])),
       ["plum number %d" % n for n in range(10)], "every plum record, still no kiwi one")
    eq(s.search("crkbe", 5, [SID]), [], "a record without any query term is never a hit")
    dev.unmount()


@heap("16M")
def test_postings_beyond_the_pool_score_the_same():
    # 1,200 records holding "kiwi": their postings and lengths pass the 2 KiB the first pass
    # keeps in RAM; the newer blocks' are read again from the index, with the same scores.
    dev, s = _fresh(blocks=512)
    texts = []
    for n in range(600):
        t = "kiwi %sn%d" % ("pear " * (n % 5), n)
        s.persist(SID, [(1, None, t)])
        s.persist(SID, [(2, None, "kiwi noted carefully today")], turn_completed=True)
        texts += [t, "kiwi noted carefully today"]
    s.close()
    ok(len(tix.blocks(s.path(SID) + ".tix")[0]) >= 9, "(many blocks)")
    scores = _bm25(texts, "kiwi")
    best = sorted(range(len(texts)), key=lambda i: (scores[i], i), reverse=True)[:50]
    eq([(h["text"], h["score"]) for h in s.search("kiwi", 50, [SID])],
       [(texts[i], scores[i]) for i in best], "the best 50, newest first on a tie")
    dev.unmount()


def test_a_record_after_a_damaged_line_is_found_where_it_is():
    # A line that is no record (torn, or another program's) is left out of the index: the
    # record after it is placed past it.
    dev, s = _fresh()
    _turn(s, SID, 1)
    s.close()
    with open(s.path(SID), "ab") as f:
        f.write(b'{"role":"user","content":"torn half\n{"nonsense": true}\n')
        f.write(b'{"role":"user","content":"the quokka enclosure"}\n')
    s2 = Sessions(D)
    got = s2.search("quokka", 3, [SID])
    eq(_texts(got), [("user", "the quokka enclosure")], "found")
    with open(s.path(SID), "rb") as f:
        f.seek(got[0]["offset"])
        eq(f.readline(), b'{"role":"user","content":"the quokka enclosure"}\n', "at its offset")
    dev.unmount()


def _fnv1a(b):
    h = 0x811C9DC5
    for c in b:
        h = ((h ^ c) * 0x01000193) & 0xFFFFFFFF
    return h


def test_block_headers_name_their_range_and_probe_as_documented():
    # docs/FORMAT.md: blocks cover the log back to back from 0 to its end; a block's probe is
    # the FNV-1a of the file's 16 bytes before its end, masked to 30 bits.
    import struct

    dev, s = _fresh()
    for n in range(30):
        _turn(s, SID, n, pad="q" * 300)  # > 8 KiB: blocks appended on the way, then at close
    s.close()
    with open(s.path(SID), "rb") as f:
        data = f.read()
    with open(s.path(SID) + ".tix", "rb") as f:
        raw = f.read()
    eq(raw[:8], b"CTIX\x01\x00\x00\x00", "header")
    pos = 8
    ranges = []
    while pos < len(raw):
        tag, bits, n, _, _, body, start, end, prb, sumdl = struct.unpack_from("<2sBBBBHIIII", raw, pos)
        eq(tag, b"TB", "a block at %d" % pos)
        ok(1 <= n <= 128 and bits <= 8, "its counts")
        eq(prb, _fnv1a(data[end - 16 : end]) & 0x3FFFFFFF, "the probe of [%d, %d)" % (start, end))
        ranges.append((start, end))
        pos += 24 + body
    eq(pos, len(raw), "whole blocks")
    ok(len(ranges) >= 2, "(appended in steps)")
    eq([r[0] for r in ranges], [0] + [r[1] for r in ranges[:-1]], "back to back")
    eq(ranges[-1][1], len(data), "to the log's end")
    dev.unmount()


def test_an_index_with_blocks_twice_is_written_again():
    # Two writers appending the same blocks (overlapping ranges): not an index; the archive
    # segment's is made again, and neither paging nor search sees a record twice.
    dev, s = _archive_run()
    s.close()
    seg = arc.segments(D, file_name(SID))[0][1]
    with open(seg + ".tix", "rb") as f:
        raw = f.read()
    with open(seg + ".tix", "ab") as f:
        f.write(raw[8:])
    eq(tix.blocks(seg + ".tix")[0], None, "overlapping blocks: no index")
    s = Sessions(D, size_limit=6000)
    eq(s.page(SID, 0, 5)["total"], 120, "every record once")
    got = s.search("turn 0 sister", 3)
    eq(len([h for h in got if h["text"].startswith("turn 0:")]), 1, "found once")
    dev.unmount()


def test_a_segment_index_naming_other_records_is_found_stale_and_rebuilt():
    # An archive segment's index is trusted without a probe (no one appends to a segment);
    # one that names positions holding other records (here: another segment's index) shows
    # when its candidates are read: it is written again and the query runs again.
    dev, s = _archive_run()
    queries = ("sister Lena", "lookup result", "noted")
    want = [s.search(q, 8) for q in queries]
    s.close()
    segs = sorted(arc.segments(D, file_name(SID)), key=lambda x: x[2])
    ok(segs[-1][2] > segs[0][2], "(segments of different sizes)")
    with open(segs[-1][1] + ".tix", "rb") as f:
        raw = f.read()
    with open(segs[0][1] + ".tix", "wb") as f:
        f.write(raw)
    s = Sessions(D, size_limit=6000)
    eq([s.search(q, 8) for q in queries], want, "the same hits")
    with open(segs[0][1], "rb") as f:
        eq(_covers(segs[0][1]), len(f.read()), "its own index again")
    dev.unmount()


def test_the_bound_keeps_the_newest_turns_whole_over_several_segments():
    # Room for three segments: the oldest go as new ones come, each new one under a number
    # no other segment had; the turns kept are the newest ones, each once, none missing.
    dev, s = _archive_run(n=90, archive_limit=15000)
    s.close()
    entries = arc.read(D)
    live = [e for e in entries if e[4]]
    ok(len(live) >= 2, "(several live segments)")
    seqs = [e[0] for e in entries]
    eq(seqs, sorted(set(seqs)), "each segment its own number, in the order they were made")
    recs = []
    for seq, p, size in arc.segments(D, file_name(SID)):
        eq(fsutil.size(p), size, "segment %d: the size its entry names" % seq)
        recs += _records(p)
    recs += _records(s.path(SID))
    users = [int(r.split(b"turn ")[1].split(b":")[0]) for r in recs if b'"role":"user"' in r]
    ok(users[0] > 0, "the oldest turns went")
    eq(users, list(range(users[0], 90)), "the newest turns, each once, in order")
    dev.unmount()


def test_the_bound_is_one_for_the_data_root_oldest_first():
    # One session archives, then another: the second one's compactions drop the first one's
    # segments (the oldest of the data root), the live total stays within the limit.
    dev, s = _fresh(blocks=512, size_limit=6000, archive_limit=15000)
    other = "chat:web:u2:default_01"
    for i in range(60):
        _turn(s, SID, i, pad="p" * 40)
    first = [e[0] for e in arc.read(D) if e[4]]
    ok(len(first) >= 2, "(the first session's segments)")
    for i in range(60):
        _turn(s, other, i, pad="p" * 40)
    live = [e for e in arc.read(D) if e[4]]
    ok(sum(e[1] for e in live) <= 15000, "within the limit: %r" % live)
    eq([e for e in live if e[0] in first[:-1]], [], "the first session's oldest segments went")
    ok(arc.segments(D, file_name(other)), "the newest stay")
    dev.unmount()


@heap("16M")  # two 2 MiB simulated flashes
def test_the_bound_keeps_an_archive_exactly_at_its_limit():
    # The same turns twice: with room for everything, then with a limit of exactly the
    # segments' total: at the limit nothing goes.
    dev, s = _archive_run(archive_limit=1 << 20)
    sizes = [e[1] for e in arc.read(D)]
    ok(len(sizes) >= 3, "(several segments)")
    dev.unmount()
    dev, s = _archive_run(archive_limit=sum(sizes))
    eq([(e[1], e[4]) for e in arc.read(D)], [(n, True) for n in sizes], "every segment kept")
    dev.unmount()


def test_the_segments_of_a_log_esp_claw_deleted_go_at_the_next_compaction():
    # ESP-Claw deletes a session's log and index and knows nothing of its segments: the next
    # compaction into the archive marks them dead and removes them.
    dev, s = _fresh(blocks=512, size_limit=6000)
    gone = "chat:web:u2:default_01"
    for i in range(30):
        _turn(s, gone, i, pad="p" * 40)
    s.close()
    segs = arc.segments(D, file_name(gone))
    ok(segs, "(it has segments)")
    for suffix in ("", ".idx", ".tix"):
        os.remove(s.path(gone) + suffix)
    s = Sessions(D, size_limit=6000)
    for i in range(30):
        _turn(s, SID, i, pad="p" * 40)
    ok(arc.segments(D, file_name(SID)), "(the other session archived)")
    eq(arc.segments(D, file_name(gone)), [], "no live segment of the deleted log")
    for seq, p, size in segs:
        ok(not fsutil.exists(p) and not fsutil.exists(p + ".tix"), "segment %d removed" % seq)
    eq(s.search("sister Lena", 50, [gone]), [], "nothing of it found")
    dev.unmount()



def _named(path):
    """(offset, length) of every record the text index of `path` names."""
    out = []
    with open(path + ".tix", "rb") as f:
        for b in tix.blocks(path + ".tix")[0]:
            out += [(off, ln) for off, ln, k in b.records(f)]
    return out


def _lines(path):
    out = []
    pos = 0
    with open(path, "rb") as f:
        for ln in f.read().split(b"\n")[:-1]:
            out.append((pos, len(ln) + 1))
            pos += len(ln) + 1
    return out


def _rewrite_two(log, turn, word):
    """As another program would: the log and its .idx rewritten, `word` in the turn's user
    message one byte longer, its final answer one byte shorter (the size and end unchanged)."""
    from claw_memory.session import format as fmt

    with open(log, "rb") as f:
        lines = f.read().split(b"\n")[:-1]
    with open(log + ".idx", "rb") as f:
        idx = f.read()
    ents = [fmt.unpack(idx, 8 + 10 * n) for n in range((len(idx) - 8) // 10)]
    eq(len(ents), len(lines), "(one entry per line)")
    i = [k for k, ln in enumerate(lines) if b"turn %d:" % turn in ln][0]
    j = lines.index(b'{"role":"assistant","content":"noted %d"}' % turn)
    lines[i] = lines[i].replace(word, word + b"x")
    lines[j] = b'{"role":"assistant","content":"note %d"}' % turn
    data = b"".join(ln + b"\n" for ln in lines)
    eq(len(data), fsutil.size(log), "(the same size)")
    out = bytearray(fmt.HEADER)
    pos = 0
    for ln, e in zip(lines, ents):
        out += fmt.entry(pos, len(ln) + 1, e[2], e[3])
        pos += len(ln) + 1
    with open(log, "wb") as f:
        f.write(data)
    with open(log + ".idx", "wb") as f:
        f.write(out)


def _rewritten_then_compacted(first, turn, word, more):
    # `first` turns closed, turn `turn` rewritten by another program (`word` one byte longer
    # in its user message, its answer a byte shorter: same size, same probed end), then
    # turns up to `more`: (Sessions, log path, its segments).
    dev, s = _fresh(blocks=512, size_limit=6000)
    for i in range(first):
        _turn(s, SID, i, pad="p" * 40)
    s.close()
    log = s.path(SID)
    if first == 14:
        eq(arc.segments(D, file_name(SID)), [], "(not compacted yet)")
        eq(len(tix.blocks(log + ".tix")[0]), 1, "(one block: the next compaction's cut falls in it)")
    _rewrite_two(log, turn, word)
    s = Sessions(D, size_limit=6000)
    for i in range(first, more):
        _turn(s, SID, i, pad="p" * 40)
    s.close()
    segs = arc.segments(D, file_name(SID))
    ok(segs, "(compacted into the archive)")
    return dev, s, log, segs


def _names_its_records(log, segs):
    for p in [log] + [p for seq, p, size in segs]:
        eq(_named(p), _lines(p), "the index of %s names its records" % p)


def test_a_compaction_does_not_copy_a_block_naming_other_records_into_the_archive():
    # The rewritten turn is in a block wholly before the compaction's cut, which goes to the
    # segment's index as it is, unless its records are not the log's: the segment's index
    # (never probed) would then name other records for good.
    dev, s, log, segs = _rewritten_then_compacted(8, 1, b"Hendrik", 16)
    ok(fsutil.size(log + ".tix") > 0, "(the log has a text index)")
    hit = s.search("Hendrikx", 1)[0]
    ok(hit["archived"] and hit["text"].startswith("turn 1:"), "the rewritten words found: %r" % hit)
    _names_its_records(log, segs)
    dev.unmount()


def test_a_compaction_does_not_carry_over_an_index_naming_other_records():
    # The compaction's cut falls in the block of the rewritten turn: it sees that the index
    # no longer names the log's records and does not carry it over.
    dev, s, log, segs = _rewritten_then_compacted(14, 6, b"dentist", 18)
    eq(_texts(s.search("dentistx", 1))[0][1][:7], "turn 6:", "the rewritten words found")
    _names_its_records(log, segs)  # (the search indexed what had none)
    dev.unmount()
