# History search (issue 26): the text index's blocks, BM25 over records across logs and
# archive segments, the archive made by compaction (its bound, paging into it, deletion with
# the session), scopes, the memory_search tool, and an ESP-Claw append or compaction under
# our index.
import os

import espclaw
from flashsim import mount
from mptest import eq, heap, ok, raises
from search_cases import D, SID, TOPICS, Unmerged
from search_cases import archive_run as _archive_run
from search_cases import bm25 as _bm25
from search_cases import fresh as _fresh
from search_cases import records as _records
from search_cases import texts as _texts
from search_cases import turn as _turn

import claw_memory
from claw_memory import fsutil
from claw_memory._compat import dumps as _dumps
from claw_memory.core import Request
from claw_memory.session import Sessions, file_name, remap, tix
from claw_memory.session import archive as arc
from claw_memory.session.format import index_dir, tix as tix_of

HEAP = "8M"


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


def test_a_term_in_one_record_whose_posting_byte_is_127_is_walked_past():
    # record 127 holds term A and no other record does: its one posting is the byte 127 (the
    # gap from the start), the last value a byte holds alone, and its tag says one byte; the
    # query's walk to B, after A in the bucket, and a compaction's (remap.unpack) must step
    # over it
    mount("lfs2", "/flash", blocks=64)
    a, bb, c = 0x11, 0x22, 0x33
    b = tix.Builder()
    for i in range(129):
        if i < 128:
            b.add(i * 10, 10, 1, [a, a, c] if i == 127 else [c])
    raw = tix.MAGIC + b.block(1280, 0)
    ok(raw.find(bytes([0x11, 0x40, 127])) > 0, "A's tag (one byte of postings) and its posting 127")
    b.add(1280, 10, 1, [c])
    b.add(1290, 10, 1, [bb, c])
    raw2 = b.block(1300, 0)
    with open("/flash/t.tix", "wb") as f:
        f.write(raw + raw2)
    blk = tix.blocks("/flash/t.tix")[0][0]
    with open("/flash/t.tix", "rb") as f:
        d = blk.head(f)[1]
        eq(blk.find(f, d, bb), None, "B is not in the first block")
        eq(tix.postings(blk.find(f, d, a)[3]), [127], "A: record 127 (once: a record's term)")
        eq(blk.find(f, d, c)[2], 128, "C: in every record (a varint length)")
        size = blk.postings_size(f)
        f.seek(blk.dir)
        out = []
        remap.unpack(f.read(size), blk.bits, 0, out)
    eq(sorted((v >> 7, v & 0x7F) for v in out if v >> 7 != c), [(a, 127)], "a compaction's copy of A")


def test_a_term_after_one_of_a_long_posting_list_is_found():
    # B follows A in one bucket; A's postings are 128 bytes or more (a two-byte length)
    mount("lfs2", "/flash", blocks=64)
    a, bb = 0x11, 0x22
    b = tix.Builder()
    for i in range(128):
        b.add(i * 10, 10, 1, [a] + ([bb] if i == 77 else []))
    with open("/flash/t.tix", "wb") as f:
        f.write(tix.MAGIC + b.block(1280, 0))
    blk = tix.blocks("/flash/t.tix")[0][0]
    with open("/flash/t.tix", "rb") as f:
        d = blk.head(f)[1]
        got = blk.find(f, d, a)
        eq((got[1], got[2]), (128, 128), "A: 128 bytes, 128 records")
        eq(tix.postings(blk.find(f, d, bb)[3]), [77], "B: record 77, past A")


def test_a_block_reads_back_what_was_built():
    mount("lfs2", "/flash", blocks=64)
    b = tix.Builder()
    # hashes chosen so that two terms share a bucket (the key's top bits) and differ in key,
    # and one term repeats in a record (one posting: its record's length counts both)
    h1, h2, h3 = 0x12300601, 0x3F000001, 0x00ABCD02
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
    eq((blk.n, blk.start, blk.end, blk.probe, blk.sumdl, blk.bits), (3, 100, 185, 0x1234, 6, 6),
       "header")
    with open("/flash/t.tix", "rb") as f:
        eq(list(blk.records(f)), [(100, 40, 1), (140, 30, 2), (175, 10, 4)], "record table")
        eq(list(blk.records(f, 2)), [(100, 40, 1), (140, 30, 2)], "its first two records")
        dls, d = blk.head(f)
        eq(list(dls), [3, 1, 2], "lengths")
        eq(list(blk.lengths(f)), [3, 1, 2], "lengths alone")
        got = blk.find(f, d, h1)
        f.seek(got[0])
        eq(tix.postings(f.read(got[1])), [0, 2], "h1: records 0 and 2")
        eq(got[2], 2, "its document frequency")
        got = blk.find(f, d, h2)
        f.seek(got[0])
        eq(tix.postings(f.read(got[1])), [0, 1], "h2")
        eq(blk.find(f, d, 0x3F000101), None, "an absent key in a used bucket")
        eq(blk.find(f, d, h3 | 0x7FF00000)[3], blk.find(f, d, h3)[3], "bits above the key: the same")
        size = blk.postings_size(f)
        f.seek(blk.dir)
        posts = remap.refilter(f.read(size), blk.bits, bytearray([0, 255, 1]))
    # record 1 dropped, record 2 becomes 1: h2 keeps record 0 only, h3 record 1
    b2 = tix.Builder()
    ok(remap.take(b2, 2, posts, blk.bits), "the refiltered postings fit a block")
    b2.record(0, 40, 1, 3)
    b2.record(60, 10, 4, 2)
    with open("/flash/t2.tix", "wb") as f:
        f.write(tix.MAGIC + b2.block(70, 7))
    blk2 = tix.blocks("/flash/t2.tix")[0][0]
    with open("/flash/t2.tix", "rb") as f:
        d = blk2.head(f)[1]
        for h, want in ((h1, [0, 1]), (h2, [0]), (h3, [1])):
            got = blk2.find(f, d, h)
            f.seek(got[0])
            eq(tix.postings(f.read(got[1])), want, "refiltered %x" % h)
        eq(list(blk2.records(f)), [(0, 40, 1), (60, 10, 4)], "new record table (a gap before the second)")


class _Counted:
    # (a file whose reads are counted)
    def __init__(self, f):
        self.f = f
        self.got = 0

    def seek(self, *a):
        return self.f.seek(*a)

    def read(self, n):
        r = self.f.read(n)
        self.got += len(r)
        return r


def test_a_record_tables_first_entries_are_read_about_as_far_as_they_go():
    # Entries of 6 bytes (records of 3,000 bytes, each after a gap of 70,000): the first n
    # are read past the 3 bytes an entry the first read allows, and no further than they
    # need (the candidates' pass reads a table up to its last candidate)
    mount("lfs2", "/flash", blocks=64)
    b = tix.Builder()
    want = []
    for i in range(100):
        off = i * 73000 + 70000
        b.add(off, 3000, 1 + i % 3, [0x1000 + i])
        want.append((off, 3000, 1 + i % 3))
    raw = tix.MAGIC + b.block(want[-1][0] + 3000, 0)
    with open("/flash/t.tix", "wb") as f:
        f.write(raw)
    blk = tix.blocks("/flash/t.tix")[0][0]
    with open("/flash/t.tix", "rb") as f:
        eq(list(blk.records(f)), want, "the whole table")
        whole = blk.next() - blk.dir - blk.postings_size(f)
        ok(whole >= 590, "entries of 6 bytes (the first, no gap: 3): %d" % whole)
        for n in (1, 4, 10, 50, 99, 100):
            c = _Counted(f)
            eq(list(blk.records(c, n)), want[:n], "the first %d" % n)
            ok(c.got <= 2 + 6 * n + 40, "the first %d: %d bytes read" % (n, c.got))


def test_a_record_table_of_padded_entries_is_damage_read_no_further_than_10_bytes_each():
    # Padded varints (0x88 0x80 ... 0x00: a record of 1 byte) sized so that each runs to the
    # end of what was read: read on and on they took megabytes, and a MemoryError, which
    # no caller takes for a damaged index; past 10 bytes an entry they are damage
    mount("lfs2", "/flash", blocks=256)
    n = 200
    tab = bytearray()
    have = 3 * n + 10
    for r in range(n):
        if have - len(tab) < 10:
            have += 3 * (n - r) + 10
        ln = max(1, have - len(tab) - 9)
        tab += b"\x08" if ln == 1 else b"\x88" + b"\x80" * (ln - 2) + b"\x00"
    ok(len(tab) > 10 * n, "the table runs past 10 bytes an entry: %d" % len(tab))
    d = bytes(2 * ((1 << 6) + 1))
    body = n + len(d) + len(tab)
    with open("/flash/t.tix", "wb") as f:
        f.write(tix.MAGIC + tix.header(6, n, body, 0, n, 0, n) + b"\x01" * n + d + tab)
    blk = tix.blocks("/flash/t.tix")[0][0]
    with open("/flash/t.tix", "rb") as f:
        c = _Counted(f)
        try:
            list(blk.records(c))
            ok(False, "padded entries taken for a table")
        except (IndexError, ValueError):
            pass  # (the index's damage: its callers make it again)
        ok(c.got <= 2 + 10 * n, "%d bytes read" % c.got)


def test_two_terms_of_one_record_sharing_a_key_are_one_term_there():
    # A block knows a term by 20 bits of its hash: two terms of one record that share them
    # are one posting (their records are checked when a query finds them).
    mount("lfs2", "/flash", blocks=64)
    b = tix.Builder()
    same = (0x00012301, 0x2FF12301)  # the same low 20 bits: one key
    b.add(0, 20, 1, [same[0], same[1], 0x5])
    with open("/flash/k.tix", "wb") as f:
        f.write(tix.MAGIC + b.block(20, 0))
    blk = tix.blocks("/flash/k.tix")[0][0]
    with open("/flash/k.tix", "rb") as f:
        got = blk.find(f, blk.head(f)[1], same[1])
        eq(tix.postings(got[3]), [0], "one posting")
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
        ok(fsutil.size(tix_of(s.path(SID))) > 0, "close() writes the text index")
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


def test_ids_and_keys_of_tool_records_are_not_searched():
    # A tool call's id and its result's tool_call_id (the same made-up token), and the keys
    # of its arguments, say nothing of the call: none is found; the tool's name, its
    # arguments' values and its result are.
    dev, s = _fresh()
    s.persist(SID, [(1, None, "how warm is it")])
    call = ('{"role":"assistant","content":null,"tool_calls":[{"id":"callq7zx9","type":"function",'
            '"function":{"name":"weather","arguments":"{\\"city\\":\\"Lisbon\\"}"}}]}')
    res = '[{"role":"tool","tool_call_id":"callq7zx9","content":"sunny 24","is_error":false}]'
    s.persist(SID, [(3, call, None), (4, res, None)])
    s.persist(SID, [(2, None, "it is sunny")], turn_completed=True)
    for word in ("callq7zx9", "city"):
        eq(s.search(word, 5, [SID]), [], word + ": not searched")
    eq(sorted(h["role"] for h in s.search("Lisbon weather sunny", 5, [SID])),
       ["assistant", "assistant", "tool"], "the call, its result and the answer")
    dev.unmount()


def test_a_tool_call_hit_shows_its_name_and_arguments():
    # What the model asked for, as it wrote it: the tool's name and its arguments (OpenAI's
    # tool_calls), or its text, the tool's name and its input (Anthropic's tool_use blocks)
    dev, s = _fresh()
    s.persist(SID, [(1, None, "how warm is it")])
    call = ('{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function",'
            '"function":{"name":"weather","arguments":"{\\"city\\":\\"Lisbon\\"}"}}]}')
    use = ('{"role":"assistant","content":[{"type":"text","text":"checking"},{"type":"tool_use",'
           '"id":"tu1","name":"forecast","input":{"town":"Porto"}}]}')
    res = '[{"role":"tool","tool_call_id":"c1","content":"sunny 24","is_error":false}]'
    s.persist(SID, [(3, call, None), (4, res, None), (3, use, None)])
    s.persist(SID, [(2, None, "it is sunny")], turn_completed=True)
    eq(_texts(s.search("Lisbon", 3, [SID])), [("assistant", 'weather\n{"city":"Lisbon"}')], "OpenAI")
    eq(_texts(s.search("Porto", 3, [SID])), [("assistant", "checking\nforecast\n" + _dumps({"town": "Porto"}))],
       "Anthropic")
    dev.unmount()


def test_a_tool_argument_nested_in_an_object_is_searched():
    dev, s = _fresh()
    s.persist(SID, [(1, None, "book it")])
    call = ('{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function",'
            '"function":{"name":"book","arguments":"{\\"trip\\":{\\"to\\":{\\"city\\":\\"Tromso\\"}}}"}}]}')
    s.persist(SID, [(3, call, None)])
    s.persist(SID, [(2, None, "booked")], turn_completed=True)
    eq([h["role"] for h in s.search("Tromso", 3, [SID])], ["assistant"], "its value, two objects deep")
    dev.unmount()


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


async def test_the_search_tool_says_when_a_query_has_no_word_to_search_for():
    # "hits": [] alone read as "that was never said"; the model can ask again with words
    import json

    from claw_memory.chat_tools import SearchTool

    dev, s = _fresh()
    for n in range(3):
        _turn(s, SID, n)
    tool = SearchTool(s, None)
    for q in ("the and of", "\uff0c\u3002\uff01", "C++", "?!"):
        okay, out = await tool.memory_search(json.dumps({"query": q}), Request("q", SID))
        e = json.loads(out)
        ok(okay and e["ok"] and e["hits"] == [] and "no word to search for" in e["note"], out)
    okay, out = await tool.memory_search('{"query":"pangolin"}', Request("q", SID))
    eq(json.loads(out), {"ok": True, "action": "memory_search", "changed": False, "hits": []},
       "words that match nothing: no note")
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
        eq(sum(e[1] for e in arc.read(D) if e[4]), sum(fsutil.size(p) for seq, p, size in segs), kind + ": the catalog's sizes")
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


def test_the_search_tool_s_own_calls_and_results_are_not_searched():
    # A memory_search call holds the query's words, its result copies of the hits: after a
    # few searches they pushed the record that said it out of the answer
    dev, s = _fresh()
    said = "we adopted a pangolin and named him Bruno"
    s.persist(SID, [(1, None, said)])
    s.persist(SID, [(2, None, "What a lovely name.")], turn_completed=True)
    for n in range(3):
        s.persist(SID, [(1, None, "what was my pangolin called?")])
        hits = '{"ok":true,"action":"memory_search","changed":false,"hits":[{"session":"default_01","role":"user","text":"%s","archived":false}]}' % said
        call = ('{"role":"assistant","content":null,"tool_calls":[{"id":"c%d","type":"function",'
                '"function":{"name":"memory_search","arguments":"{\\"query\\":\\"pangolin name Bruno\\"}"}}]}' % n)
        res = '[{"role":"tool","tool_call_id":"c%d","content":%s,"is_error":false}]' % (n, _dumps(hits))
        s.persist(SID, [(3, call, None), (4, res, None)])
        s.persist(SID, [(2, None, "He is called Bruno.")], turn_completed=True)
    s.close()
    got = _texts(s.search("pangolin name Bruno", 10, [SID]))
    eq([r for r, t in got if r == "tool" or r == "assistant" and "memory_search" in t], [],
       "no call or result of the search tool: %r" % got)
    eq(got[0], ("user", said), "the record that said it first")
    dev.unmount()


async def test_the_search_tool_shows_the_part_of_a_long_message_about_the_query():
    # A hit's text is cut for the model: from its start it showed 480 characters of filler
    # and not the locker code it was found for
    import json

    from claw_memory.chat_tools import SearchTool

    dev, s = _fresh()
    long = "I wrote down the rota for the week, who cleans what and when. " * 20
    s.persist(SID, [(1, None, long + "My gym locker code is zebra4412, remember it. " + long)])
    s.persist(SID, [(1, None, "Lockers at the pool are free on Sundays.")])
    s.persist(SID, [(2, None, "noted")], turn_completed=True)
    okay, out = await SearchTool(s, None).memory_search('{"query":"gym locker code"}', Request("q", SID))
    hits = json.loads(out)["hits"]
    ok(okay and "zebra4412" in hits[0]["text"] and len(hits[0]["text"]) <= 480, out)
    ok(hits[0]["text"].startswith("...") and hits[0]["text"].endswith("..."), "cut both ends")
    eq(hits[1]["text"], "Lockers at the pool are free on Sundays.", "a short one whole")
    got = s.search("gym locker code", 1)[0]["text"]
    ok(len(got) > 2000 and "zebra4412" in got, "mem.search: the whole text")
    from claw_memory.session.hits import excerpt, query_words

    eq(excerpt(got, query_words("the of and"), 60), got[:57] + "...", "no term: its start")
    eq(excerpt(got, query_words("rota"), 60), got[:57] + "...", "a term in its first characters: its start")
    t = "x " * 300 + "locker zebra4412 " + "y " * 300 + "code"
    ok("zebra4412" in excerpt(t, query_words("locker code"), 60), "the first of the terms in the text, not the last asked")
    dev.unmount()


async def test_the_search_tool_s_errors_name_it_and_are_not_searched():
    # The tool's error answers (bad arguments, no session, a failed search) name the tool, as
    # its hits do, so that the history search leaves them out like its other answers
    import json

    from claw_memory.chat_tools import SearchTool

    dev, s = _fresh()

    class Broken:
        def search(self, *a):
            raise OSError(5, "EIO reading the carbonara index")

    tool = SearchTool(s, None)
    outs = []
    for raw, req in (("not json", Request("q", SID)), ('{"query":""}', Request("q", SID)),
                     ('{"query":"carbonara"}', Request("q"))):
        okay, out = await tool.memory_search(raw, req)
        outs.append(out)
    okay, out = await SearchTool(Broken(), None).memory_search('{"query":"carbonara"}', Request("q", SID))
    outs.append(out)
    for out in outs:
        e = json.loads(out)
        ok(not e["ok"] and e["action"] == "memory_search" and e["error"], out)
    eq([json.loads(o)["error"] for o in outs],
       ["invalid_json", "query is required", "no_session", "memory_search_failed"], "the errors")
    s.persist(SID, [(1, None, "my carbonara needs guanciale, query the butcher")])
    for n, out in enumerate(outs):
        call = ('{"role":"assistant","content":null,"tool_calls":[{"id":"c%d","type":"function",'
                '"function":{"name":"memory_search","arguments":"{}"}}]}' % n)
        res = '[{"role":"tool","tool_call_id":"c%d","content":%s,"is_error":true}]' % (n, _dumps(out))
        s.persist(SID, [(3, call, None), (4, res, None)])
    s.persist(SID, [(2, None, "Noted.")], turn_completed=True)
    s.close()
    got = _texts(s.search("carbonara query required invalid json session index failed", 10, [SID]))
    eq([r for r, t in got if r == "tool"], [], "no error answer of the tool: %r" % got)
    eq(got[0][0], "user", "the record that said it")
    dev.unmount()


def test_a_session_no_chat_map_names_is_searched_again_by_its_file_name():
    # Without a chat map a hit names its session by its log's file name (archived or not):
    # that name, given back as the scope, searches that session, its archive included.
    dev, s = _archive_run()
    got = s.search("Hendrik boiler", 10)
    eq({h["session"] for h in got}, {file_name(SID)}, "the file's name")
    ok({h["archived"] for h in got} == {True, False}, "(in the archive and in the log)")
    eq(s.search("Hendrik boiler", 10, [file_name(SID)]), got, "searched again by that name")
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
    for limit in (1, 3, 7, 50):  # every window: archive, log and across them, and past either end
        for before in (0, 1, 2, 5, 59, 60, 61, 119, 120, 121, 500):
            p = s.page(SID, before, limit)
            end = before if 0 < before < 120 else 120
            start = max(0, end - limit)
            eq(([m["seq"] for m in p["messages"]], p["next_before"], p["has_more"], p["total"]),
               (list(range(start + 1, end + 1)), start, start > 0, 120), "page(%d, %d)" % (before, limit))
            eq([m["text"].rstrip("p").rstrip() for m in p["messages"]],
               [w.rstrip("p").rstrip() for w in want[start:end]], "page(%d, %d): texts" % (before, limit))
    s.close()
    for name in os.listdir(index_dir(D)):  # the text indexes are derived: paging makes them again
        os.remove(index_dir(D) + "/" + name)
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
    _searches_as_rebuilt(s, queries, 6000)
    dev.unmount()


def _searches_as_rebuilt(s, queries, size_limit):
    # The hits of `queries` in `s` (returned), then again from indexes written afresh: the same.
    first = [s.search(q, 8) for q in queries]
    ok(any(first), "the queries find something")
    s.close()
    for name in os.listdir(index_dir(D)):
        os.remove(index_dir(D) + "/" + name)
    s = Sessions(D, size_limit=size_limit)
    eq([s.search(q, 8) for q in queries], first, "the same hits and scores from fresh indexes")
    s.close()
    return first


def test_a_compaction_merges_the_small_blocks_it_splits():
    # One block a turn (a flush after each), then a compaction that archives the older turns
    # and drops the newer turns' tool records: merged, the indexes hold half as many blocks
    # at most.
    dev, s = _fresh(blocks=512, size_limit=100000)
    with Unmerged():
        for i in range(24):
            _turn(s, SID, i)
            s.flush()
        log = D + "/" + file_name(SID)
        eq(len(tix.blocks(tix_of(log))[0]), 24, "a block a turn")
        queries = ("boiler Hendrik", "lookup result 17", "violin", "番茄", "noted 3", "turn 21")
        s.close()
        s = Sessions(D, size_limit=2500)
        eq(s.compact(SID), None, "compacted")
    segs = [n for n in os.listdir(index_dir(D)) if ".arc" in n]
    eq(len(segs), 1, "one segment")
    seg_blocks = tix.blocks(index_dir(D) + "/" + segs[0])[0]
    log_blocks = tix.blocks(tix_of(log))[0]
    eq(sum(b.n for b in seg_blocks) + sum(b.n for b in log_blocks), 24 * 4, "every record once")
    # (split, not merged, each of the 24 blocks would leave a block in one index or both)
    ok(len(seg_blocks) + len(log_blocks) <= 12, "merged: %d and %d blocks" % (len(seg_blocks), len(log_blocks)))
    for bs, path in ((seg_blocks, index_dir(D) + "/" + segs[0]), (log_blocks, tix_of(log))):
        for a, b in zip(bs, bs[1:]):
            ok(a.end <= b.start, "in order, apart")
    ok(all(_searches_as_rebuilt(s, queries, 2500)), "every query finds something")
    dev.unmount()


def test_a_compaction_keeps_the_terms_of_a_block_of_many():
    # A tool result of 300 numbers, a block of its own: copied by a compaction (merged with
    # the small blocks of the turns around it), each of its terms is found as before
    dev, s = _fresh(blocks=512, size_limit=100000)
    nums = ["%d" % (20000 + 13 * i) for i in range(300)]
    for i in range(12):
        _turn(s, SID, i)
        if i in (3, 9):
            s.persist(SID, [(1, None, "list the parts")])
            res = ('[{"role":"tool","tool_call_id":"c%d","content":"%s","is_error":false}]'
                   % (i, " ".join(nums)))
            s.persist(SID, [(4, res, None)])
            s.persist(SID, [(2, None, "listed")], turn_completed=True)
        s.flush()
    log = D + "/" + file_name(SID)
    s.close()
    s = Sessions(D, size_limit=2500)
    eq(s.compact(SID), None, "compacted")
    for n in nums[::29]:
        got = s.search(n, 3, [SID])
        eq((len(got), all(h["text"] == " ".join(nums) for h in got)), (2, True), "both copies: " + n)
    dev.unmount()


def test_the_archive_keeps_within_its_limit_oldest_first():
    dev, s = _archive_run(n=90, archive_limit=8000)
    entries = arc.read(D)
    live = [e for e in entries if e[4]]
    ok(live and sum(e[1] for e in live) <= 8000, "within the limit: %r" % entries)
    for e in entries:
        ok(e[4] == fsutil.exists(arc.seg_path(D, e[3], e[0])), "dead entries have no file")
    names = [n for n in os.listdir(D) if ".arc" in n]
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


def test_a_lower_archive_limit_drops_the_oldest_segments_at_the_next_open():
    # The bound was applied only as a compaction added a segment: a limit lowered since (0:
    # keep none, PRIVACY.md) kept the whole archive, searchable, for good
    dev, s = _archive_run(n=90)
    s.close()
    live = [e for e in arc.read(D) if e[4]]
    ok(len(live) >= 3, "segments: %r" % live)
    keep = live[-1][1] + live[-2][1]  # the newest two fit
    s = Sessions(D, size_limit=6000, archive_limit=keep)
    total = s.page(SID, 0, 5)["total"]
    eq([e[0] for e in arc.read(D) if e[4]], [live[-2][0], live[-1][0]], "the newest two kept")
    eq(sorted(n for n in os.listdir(D) if ".arc" in n),
       sorted(file_name(SID) + ".arc%d" % e[0] for e in live[-2:]), "the others' files gone")
    s = Sessions(D, size_limit=6000, archive_limit=0)
    ok(s.page(SID, 0, 5)["total"] < total, "fewer turns")
    eq([n for n in os.listdir(D) if ".arc" in n], [], "0: no segment left")
    eq(arc.read(D), [], "and none listed")
    eq([h for h in s.search("sister Lena carbonara Osteria", 5) if h["archived"]], [], "none searched")
    dev.unmount()


@heap("16M")
def test_a_look_without_the_apps_limit_drops_none_of_its_archive():
    # The app keeps more than 1 MiB of archive (its archive_limit); a look opens the root
    # without knowing it (inspect from the REPL, the host's claw-memory): it dropped the
    # oldest segments past the default 1 MiB at its first use, for good. Not given, the
    # default applies only as a compaction archives.
    from claw_memory import inspect

    dev = mount("lfs2", "/flash", blocks=640)
    fsutil.makedirs(D)
    s = Sessions(D, size_limit=100000, archive_limit=4 << 20, max_message_chars=32000)
    pad = " ".join("w%d" % (i % 500) for i in range(6000))  # (~30 KB a turn)
    for i in range(44):
        s.persist(SID, [(1, None, "turn %d: %s %s" % (i, "aardvarkian" if i == 0 else "x", pad))])
        eq(s.persist(SID, [(2, None, "noted %d" % i)], turn_completed=True), None, "turn %d" % i)
    s.close()
    live = [e[:2] for e in arc.read(D) if e[4]]
    ok(sum(e[1] for e in live) > 1 << 20, "more than 1 MiB archived: %r" % live)
    eq(inspect.search("aardvarkian", 1, root="/flash", rows=True)[0]["archived"], True,
       "inspect finds the oldest turn")
    eq([e[:2] for e in arc.read(D) if e[4]], live, "inspect kept every segment")
    s = Sessions(D, size_limit=100000, max_message_chars=32000)
    eq(len(s.search("aardvarkian", 1)), 1, "a Sessions without a limit finds it")
    eq([e[:2] for e in arc.read(D) if e[4]], live, "and keeps every segment")
    for i in range(44, 48):  # (its own compaction applies the default: 1 MiB)
        s.persist(SID, [(1, None, "turn %d: x %s" % (i, pad))])
        s.persist(SID, [(2, None, "noted %d" % i)], turn_completed=True)
    ok(sum(e[1] for e in arc.read(D) if e[4]) <= 1 << 20, "compaction bounded it to 1 MiB")
    eq(s.search("aardvarkian", 1), [], "the oldest gone")
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
    for bad in (5, ("web", "alice"), [a1], b"x"):  # session= takes an id (was TypeError, AttributeError)
        raises(ValueError, mem.search, "x", 5, None, bad)
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
        for bad in ("not json", '{"query":""}', '{"query":" \\n "}', '{"query":5}', '{"limit":3}', "[1]"):
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


async def test_the_tools_hits_say_where_they_are_and_are_cut():
    # memory_search's hits: "archived" as the search gives it (true for a turn compaction
    # moved into the archive), a message's text cut to 480 characters.
    import json

    from claw_memory.chat_tools import SearchTool

    dev, s = _archive_run()
    long = "kumquat " + "x" * 900
    s.persist(SID, [(1, None, long)])
    s.persist(SID, [(2, None, "ok")], turn_completed=True)
    tool = SearchTool(s, None)
    okay, out = await tool.memory_search({"query": "Hendrik boiler", "limit": 10}, Request("q", SID))
    want = [h["archived"] for h in s.search("Hendrik boiler", 10, [SID])]
    ok(okay and True in want and False in want, "(hits in the archive and in the log)")
    eq([h["archived"] for h in json.loads(out)["hits"]], want, "archived as the search says")
    okay, out = await tool.memory_search({"query": "kumquat"}, Request("q", SID))
    eq([h["text"] for h in json.loads(out)["hits"]], [long[:477] + "..."], "cut to 480 characters")
    dev.unmount()


def test_the_tool_searches_the_calling_agents_sessions_and_its_own():
    # ESP-Claw's agent n > 0 keeps its chats under `agent:<n>:chat:...`: the tool searches
    # the calling agent's sessions of the chat (agent 0's ids unchanged), and always the
    # request's own session, which a chat map need not name.
    import json

    from claw_memory.chats import agent_of

    dev = mount("lfs2", "/flash", blocks=256)
    mem = claw_memory.open("/flash", extract=False)
    a0 = mem.chats.session_id("web", "alice")
    a1 = mem.chats.session_id("web", "alice", agent=1)
    eq((a0, a1), ("chat:web:alice:default_01", "agent:1:chat:web:alice:default_01"), "ids")
    for sid, said in ((a0, "agent zero: the zebra code is 1234"),
                      (a1, "agent one: the yak lives in the barn")):
        mem.sessions.persist(sid, [(1, None, said)])
        mem.sessions.persist(sid, [(2, None, "ok")], turn_completed=True)
    own = "web-alice-2024"  # an app's own id, in no chat map
    mem.sessions.persist(own, [(1, None, "my locker code is 4711")])
    mem.sessions.persist(own, [(2, None, "noted")], turn_completed=True)
    eq(mem.chat_sessions(("web", "alice"), 1), (a1,), "agent 1's sessions of the chat")
    eq([h["session"] for h in mem.search("yak zebra", 5, chat=("web", "alice"), agent=1)], [a1],
       "mem.search with agent=")
    raises(ValueError, mem.chat_sessions, ("web", "alice"), -1)
    eq([agent_of(x) for x in (a0, a1, "agent:12:chat:x:y:z", "agent:01:chat:x", "agent:x:chat",
                              "agent:4294967296:chat:a:b:c", "agent:7", None)],
       [0, 1, 12, 0, 0, 0, 0, 0], "agent_of")
    tool = [t for t in mem.tools() if t.name == "memory_search"][0]

    async def run():
        def names(out):
            return [(h["session"], h["text"]) for h in json.loads(out[1])["hits"]]

        eq(names(await tool.handler({"query": "zebra yak"}, Request("q", a1, "web", "alice"))),
           [("default_01", "agent one: the yak lives in the barn")], "agent 1: its own sessions")
        eq(names(await tool.handler({"query": "zebra yak"}, Request("q", a0, "web", "alice"))),
           [("default_01", "agent zero: the zebra code is 1234")], "agent 0: its own")
        eq(names(await tool.handler({"query": "locker"}, Request("q", own, "web", "alice"))),
           [(own, "my locker code is 4711")], "the request's session, in no chat map")
        eq(names(await tool.handler({"query": "locker zebra"}, Request("q", own))),
           [(own, "my locker code is 4711")], "no chat: the request's session alone")

    return run()


def _said_in_two_sessions(user, chatter):
    # The same words said in the chat's first session, after `chatter`, and then in its
    # second ("trip", current): (device, memory, first session's id, second's).
    dev = mount("lfs2", "/flash", blocks=256)
    mem = claw_memory.open("/flash", extract=False)
    old = mem.chats.session_id("web", user)
    for text in chatter + ["where did I park the red scooter"]:
        mem.sessions.persist(old, [(1, None, text)])
        mem.sessions.persist(old, [(2, None, "fine")], turn_completed=True)
    mem.session_command("web", user, "new trip")
    new = mem.chats.session_id("web", user)
    mem.sessions.persist(new, [(1, None, "where did I park the red scooter")])
    mem.sessions.persist(new, [(2, None, "fine")], turn_completed=True)
    return dev, mem, old, new


def test_a_tie_between_a_chats_sessions_goes_to_the_newer_however_far_into_the_older_log():
    # The older session's record lies more than 64 KiB into its log (a log grows to 150 KiB
    # before compaction): the newer session's record, at the start of its log, still comes
    # first on a tie.
    dev, mem, old, new = _said_in_two_sessions("eve", ["chatter %d %s" % (i, "filler " * 300) for i in range(36)])
    got = mem.search("red scooter park", 2, chat=("web", "eve"))
    eq(got[0]["score"], got[1]["score"], "(a tie)")
    ok(max(h["offset"] for h in got) > 1 << 16, "(the old one over 64 KiB into its log)")
    eq([h["session"] for h in got], [new, old], "the newer session's first")
    dev.unmount()


def test_ties_between_a_chats_sessions_go_to_the_current_one():
    # The same words said in two sessions of a chat: the older session's record lies further
    # into its log, but the current session's comes first (a chat's sessions in the order
    # its map made them, the current one last); after a switch, the other one's.
    import json

    dev, mem, old, new = _said_in_two_sessions("bob", ["some chatter number %d" % i for i in range(8)])
    eq(mem.chat_sessions(("web", "bob")), (old, new), "the current session last")
    got = mem.search("red scooter park", 2, chat=("web", "bob"))
    eq(got[0]["score"], got[1]["score"], "(a tie)")
    ok(got[1]["offset"] < got[0]["offset"] or got[0]["session"] == new, "(the old one further in)")
    eq([h["session"] for h in got], [new, old], "the current session's first")
    tool = [t for t in mem.tools() if t.name == "memory_search"][0]

    async def run():
        out = await tool.handler({"query": "red scooter park", "limit": 2}, Request("q", old, "web", "bob"))
        eq([h["session"] for h in json.loads(out[1])["hits"]], ["default_01", "trip"],
           "the tool: the request's session first on a tie")
        mem.session_command("web", "bob", "switch default_01")
        eq(mem.chat_sessions(("web", "bob")), (new, old), "switched: default_01 last")
        eq([h["session"] for h in mem.search("red scooter park", 2, chat=("web", "bob"))], [old, new],
           "after the switch, default_01's first")

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
