# History search at its edges (issue 24's test strength applied to issue 26): varints and
# records around 128 bytes, a block's bounds, a word across a 1 KiB piece, the tf cap, the
# probe as docs/FORMAT.md defines it, query terms, key collisions, postings beyond the pool,
# damaged lines, another program's rewrites under the index, the archive's bound.
import os

from faults import failing_remove
from mptest import eq, heap, ok
from search_cases import D, SID, Unmerged
from search_cases import archive_run as _archive_run
from search_cases import bm25 as _bm25
from search_cases import fresh as _fresh
from search_cases import records as _records
from search_cases import texts as _texts
from search_cases import turn as _turn

from claw_memory import fsutil, terms
from claw_memory._compat import dumps as _dumps
from claw_memory.session import Sessions, file_name, tix, tixmerge
from claw_memory.session import archive as arc
from claw_memory.session.format import index_dir, tix as tix_of

HEAP = "8M"


def _covers(path):
    """Where the text index of `path` ends when it is whole and matches its file, else None."""
    with open(path, "rb") as f:
        blks, _ = tix.blocks(tix_of(path), fsutil.size(path), f)
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


def test_the_terms_after_a_one_record_term_in_its_bucket_are_found():
    # A term said 4 times in record 15 alone (one posting, one byte: its tag says so), and
    # terms after it in its bucket: each is read where it is.
    def key(w):
        return terms.index_hash(terms.terms(w)[0]) & tix.KEY

    words = ["kiwi", "pear", "fig", "lime", "plum"]
    ok(any(key(w) > key("zebra") for w in words), "(a term after zebra in its bucket)")
    dev, s = _fresh()
    for n in range(21):
        s.persist(SID, [(1, None, words[n - 16] if n > 15 else "plum")])
        s.persist(SID, [(2, None, "zebra zebra zebra zebra" if n == 15 else "ok")], turn_completed=True)
    s.close()
    eq(_texts(s.search("zebra", 3, [SID])), [("assistant", "zebra zebra zebra zebra")], "zebra")
    for w in words:
        eq(_texts(s.search(w, 1, [SID])), [("user", w)], w)
    dev.unmount()


def test_a_log_holding_no_record_is_searched_again_without_error():
    # Lines that are no record (another program's): the text index holds no block, its
    # header alone; the next search, which brings it up to date, finds nothing, again, and
    # writes nothing (the index is as up to date as it can be)
    dev, s = _fresh()
    s.close()
    log = s.path(SID)
    with open(log, "wb") as f:
        f.write(b'{"nonsense": true}\nnot json at all\n')
    for n in range(3):
        s2 = Sessions(D)
        ops = dev.ops
        eq(s2.search("nonsense", 3), [], "search %d" % n)
        with open(tix_of(log), "rb") as f:
            eq(f.read(), tix.MAGIC, "search %d: an index of no block" % n)
        if n:
            eq(dev.ops, ops, "search %d: nothing written" % n)
    dev.unmount()


def test_a_log_ending_in_lines_that_are_no_record_is_searched_without_writing():
    # The same after records: a search indexes the records once, then writes nothing
    # (each search appended nothing to the index: a flash operation per search and file)
    dev, s = _fresh()
    _turn(s, SID, 1)
    s.close()
    log = s.path(SID)
    with open(log, "ab") as f:
        f.write(b'{"role":"system","content":"boiler"}\nnot json\n')
    for n in range(3):
        s2 = Sessions(D)
        ops = dev.ops
        eq(_texts(s2.search("boiler", 3))[0][1][:7], "turn 1:", "search %d" % n)
        if n:
            eq(dev.ops, ops, "search %d: nothing written" % n)
    dev.unmount()


def test_a_block_holds_128_records():
    # 100 short turns: the first block takes exactly 128 records, the index stays whole.
    def word(n):
        cons = "bcdfghjkmnpqrtvwxz"  # no vowels: no stemming merges two of them
        return "xk" + cons[n % 18] + cons[n // 18]

    for merged, want in ((False, [128, 72]), (True, [200])):
        dev, s = _fresh()
        with Unmerged():
            for n in range(100):
                s.persist(SID, [(1, None, word(n))])
                s.persist(SID, [(2, None, "ok")], turn_completed=True)
            s.close()
        if merged:  # (session/tixmerge.py: the two as one)
            tixmerge.settle_file(s.path(SID))
        eq(_covers(s.path(SID)), fsutil.size(s.path(SID)), "a whole index")
        eq([b.n for b in tix.blocks(tix_of(s.path(SID)))[0]], want, "blocks: %r" % want)
        for n in (0, 63, 64, 99):  # records 0, 126 (block 1), 128, 198 (block 2)
            eq(_texts(s.search(word(n), 3, [SID])), [("user", word(n))], "turn %d" % n)
        dev.unmount()


def test_a_block_of_many_distinct_terms_finds_each():
    # A tool result listing 700 numbers: a block of over 512 distinct terms has 7 bucket bits,
    # and its tags hold the 14 key bits below them; every term of it is found.
    dev, s = _fresh()
    s.persist(SID, [(1, None, "the part numbers please")])
    res = ('[{"role":"tool","tool_call_id":"c1","content":"%s","is_error":false}]'
           % " ".join(str(10000 + 7 * i) for i in range(700)))
    s.persist(SID, [(4, res, None)])
    s.persist(SID, [(2, None, "listed")], turn_completed=True)
    s.close()
    blk = tix.blocks(tix_of(s.path(SID)))[0][0]
    eq(blk.bits, 7, "7 bucket bits")
    for i in range(0, 700, 23):
        eq([h["role"] for h in s.search(str(10000 + 7 * i), 3, [SID])], ["tool"], "number %d" % i)
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


def test_a_cjk_run_across_a_1024_byte_piece_is_cut_between_characters():
    # A run with no separator is cut on a character boundary (byte 1024 falls inside the
    # 342nd character): the next piece starts with that character, whose bigram is found;
    # only the bigram across the cut is lost.
    dev, s = _fresh()
    body = "花" * 341 + "王医" + "花" * 400
    s.persist(SID, [(1, None, body)])
    s.persist(SID, [(2, None, "ok")], turn_completed=True)
    eq([h["role"] for h in s.search("王医", 3, [SID])], ["user"], "scored from its text")
    s.close()
    eq([h["role"] for h in s.search("王医", 3, [SID])], ["user"], "indexed")
    dev.unmount()


def test_a_record_is_searched_by_its_first_8_kib():
    # docs: a record's first TEXT_MAX (8,192) bytes are indexed and shown; a word after them
    # is not found, whether the record is indexed or scored from its text.
    dev, s = _fresh(max_message_chars=20000)
    body = "lorem " * 1400 + "zeppelin"  # 8,400 bytes: zeppelin after the first 8 KiB
    s.persist(SID, [(1, None, body + " museum")])
    s.persist(SID, [(2, None, "ok")], turn_completed=True)
    eq(s.search("zeppelin", 3, [SID]), [], "scored from its text")
    s.close()
    eq(s.search("zeppelin", 3, [SID]), [], "indexed")
    eq([h["role"] for h in s.search("lorem", 3, [SID])], ["user"], "its first 8 KiB are")
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


def test_long_records_add_their_length_to_the_mean_as_counted():
    # A record of 300 terms keeps its length in one byte (quant: 32 steps a doubling over
    # 128); a block's sum of lengths adds the lengths back (unquant), so the mean length, and
    # every score, stay BM25's within that step.
    dev, s = _fresh()
    texts = []
    for t in (" ".join("w%d" % i for i in range(300)), "kiwi tart", "the kiwi orchard by the river"):
        s.persist(SID, [(1, None, t)])
        s.persist(SID, [(2, None, "ok")], turn_completed=True)
        texts += [t, "ok"]
    s.close()
    eq(_covers(s.path(SID)), fsutil.size(s.path(SID)), "(all indexed)")
    want = _bm25(texts, "kiwi")
    got = s.search("kiwi", 5, [SID])
    eq(len(got), 2, "both kiwi records")
    for h in got:
        w = want[texts.index(h["text"])]
        ok(abs(h["score"] - w) < 0.002 * w, "%r: %r, BM25 %r" % (h["text"], h["score"], w))
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
    # last 16 bytes the probe hashes change): the index is written again, the new words found;
    # also when the session is open in the Sessions that searches (its history read first):
    # the index is still compared with the log before it is trusted.
    for opened in (False, True):
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
        if opened:
            ok(any("plum" in str(m) for m in s2.messages(SID)), "(open: the new words read)")
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
    # a word said again is one term: 20 repeats take one of the 16, not all of them
    eq(s.search(" ".join(["zzaa"] * 20 + ["boiler"]), 3), s.search("boiler", 3),
       "repeats count once")
    # and its first 512 bytes: a word after them is not searched
    pad = "zzaa " * 101  # (505 bytes)
    eq(s.search(pad + "boiler", 3), s.search("boiler", 3), "a word within 512 bytes counts")
    eq(s.search(pad + "       boiler", 3), [], "one after them does not")
    dev.unmount()


def test_left_out_candidates_are_replaced_by_the_next_ones():
    # "crkbe" and "kiwi" share the 20 bits a block knows a term by: the index offers the kiwi
    # records for "crkbe" (rare, so they score first); the check leaves them out, and the
    # plum records after them still fill the limit.
    def key(w):
        return terms.index_hash(terms.terms(w)[0]) & tix.KEY

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


def test_postings_beyond_the_pool_score_the_same():
    # 1,200 records holding "kiwi": their postings and lengths pass the 2 KiB the first pass
    # keeps in RAM; the newer blocks' are read again from the index, with the same scores
    _beyond_the_pool(False)


def test_postings_beyond_the_pool_in_merged_blocks_score_the_same():
    # The same merged (blocks of up to 1,024 records: a block's records scored 128 at a
    # time, its postings beyond the pool read in pieces, a window at a time)
    _beyond_the_pool(True)


def _beyond_the_pool(merged):
    dev, s = _fresh(blocks=512)
    texts = []
    with Unmerged():
        for n in range(600):  # (each term once a record: the first pass scores as BM25 does)
            t = "kiwi %s%sn%d" % ("pear " if n % 5 else "", "fig " * (n % 7), n)
            s.persist(SID, [(1, None, t)])
            s.persist(SID, [(2, None, "kiwi noted carefully today")], turn_completed=True)
            texts += [t, "kiwi noted carefully today"]
        s.close()
    if merged:
        tixmerge.settle_file(s.path(SID))
    sizes = [b.n for b in tix.blocks(tix_of(s.path(SID)))[0]]
    if merged:
        ok(len(sizes) == 2 and sizes[0] > 1000 and sum(sizes) == 1200, "(merged: %r)" % sizes)
    else:
        ok(len(sizes) >= 9 and max(sizes) <= 128, "(many blocks)")
    s = Sessions(D)
    ops = dev.ops
    scores = _bm25(texts, "kiwi")
    best = sorted(range(len(texts)), key=lambda i: (scores[i], i), reverse=True)[:50]
    eq([(h["text"], h["score"]) for h in s.search("kiwi", 50, [SID])],
       [(texts[i], scores[i]) for i in best], "the best 50, newest first on a tie")
    # two terms: a block's first term's postings in the pool, the second's beyond it (its
    # lengths read again from the index)
    scores = _bm25(texts, "kiwi pear")
    best = sorted(range(len(texts)), key=lambda i: (scores[i], i), reverse=True)[:50]
    eq([(h["text"], h["score"]) for h in s.search("kiwi pear", 50, [SID])],
       [(texts[i], scores[i]) for i in best], "two terms, the pool full in between")
    # the oldest record, in the first window of the first block: found by its own number
    eq(_texts(s.search("n3 fig", 1, [SID])), [("user", texts[6])], "the oldest records scored too")
    eq(dev.ops, ops, "the index read as it is: nothing written")
    dev.unmount()


@heap("16M")
def test_a_whole_root_past_what_the_first_pass_keeps_scores_the_same():
    # 150 sessions, each with the three terms: the first pass keeps the matches of the first
    # ~70 files (search._KEEP), only the statistics of the others, which a second walk
    # scores: the best 10 are BM25's over every record, the best one in the last file listed.
    from claw_memory.session.listing import logs

    dev, s = _fresh(blocks=1024)
    texts = []
    for k in range(150):
        t = "kiwi pear plum note %d%s" % (k, " filler" * (k % 13))
        s.persist("chat:web:u%d:default_01" % k, [(1, None, t)])
        s.persist("chat:web:u%d:default_01" % k, [(2, None, "ok")], turn_completed=True)
        texts += [t, "ok"]
    last = list(logs(D))[-1][0]
    sid = [("chat:web:u%d:default_01" % k) for k in range(150)
           if D + "/" + file_name("chat:web:u%d:default_01" % k) == last][0]
    best = "kiwi kiwi kiwi pear pear plum"
    s.persist(sid, [(1, None, best)])
    s.persist(sid, [(2, None, "ok")], turn_completed=True)
    texts += [best, "ok"]
    s.close()
    scores = _bm25(texts, "kiwi pear plum")
    got = s.search("kiwi pear plum", 10)
    eq((got[0]["text"], got[0]["session"], got[0]["score"]), (best, last.rsplit("/", 1)[1], max(scores)),
       "the best record, in the last file listed")
    eq(sorted(h["score"] for h in got), sorted(scores)[-10:], "the best 10 scores of every record")
    for h in got:
        ok((h["text"], h["score"]) in list(zip(texts, scores)), "a hit as scored: %r" % h["text"])
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


def test_a_short_block_before_a_long_record_probes_within_its_range():
    # A record with more terms than a block takes ends the block before it early: that block
    # (a few short records, under 256 bytes) still probes only the bytes of its own range.
    dev, s = _fresh()
    with Unmerged():
        for n in range(2):
            s.persist(SID, [(1, None, "kiwi %d " % n + "番茄" * 2100)])
            s.persist(SID, [(2, None, "ok")], turn_completed=True)
            if not n:
                _turn(s, SID, 1, tool=False)
        s.close()
    with open(s.path(SID), "rb") as f:
        data = f.read()
    blks = tix.blocks(tix_of(s.path(SID)))[0]
    ok(any(0 < b.start and b.end - b.start < 256 for b in blks), "(a short block after the first)")
    for b in blks:
        eq(b.probe, _fnv1a(data[max(b.start, b.end - 256) : b.end]) & 0x3FFFFFFF,
           "the probe of [%d, %d)" % (b.start, b.end))
    dev.unmount()


def test_block_headers_name_their_range_and_probe_as_documented():
    # docs/FORMAT.md: blocks cover the log back to back from 0 to its end; a block's probe is
    # the FNV-1a of the file's 16 << span bytes before its end (span 4: 256; within the
    # block's range), masked to 30 bits. As appended (small blocks), then merged at close.
    import struct

    dev, s = _fresh()
    with Unmerged():
        for n in range(30):
            _turn(s, SID, n, pad="q" * 300)  # > 8 KiB: blocks appended on the way, then at close
        s.close()
    with open(s.path(SID), "rb") as f:
        data = f.read()
    for merged in (False, True):
        if merged:
            tixmerge.settle_file(s.path(SID))
        with open(tix_of(s.path(SID)), "rb") as f:
            raw = f.read()
        eq(raw[:8], b"CTIX\x02\x00\x00\x00", "header")
        pos = 8
        ranges = []
        while pos < len(raw):
            tag, bits, span, n, _, body, start, end, prb, sumdl = struct.unpack_from("<2sBBHHIIIII", raw, pos)
            eq(tag, b"TB", "a block at %d" % pos)
            ok(1 <= n <= (1024 if merged else 128) and 6 <= bits <= 10, "its counts")
            eq(span, 4, "the probe's span")
            eq(prb, _fnv1a(data[max(start, end - 256) : end]) & 0x3FFFFFFF,
               "the probe of [%d, %d)" % (start, end))
            ranges.append((start, end))
            pos += 28 + body
        eq(pos, len(raw), "whole blocks")
        if merged:
            eq(len(ranges), 1, "merged: one block")
        else:
            ok(len(ranges) >= 2, "(appended in steps)")
        eq([r[0] for r in ranges], [0] + [r[1] for r in ranges[:-1]], "back to back")
        eq(ranges[-1][1], len(data), "to the log's end")
    dev.unmount()


def test_records_moved_by_a_byte_under_an_index_are_found_where_they_are():
    # Another program rewrites the log: one record a byte longer, a later one a byte shorter
    # (the same size, the same last bytes: the probe matches). The records between moved by
    # one byte; what the index names there is no whole line, so the index is written again
    # and the hit's offset is where its record now is.
    dev, s = _fresh()
    for n in range(8):
        _turn(s, SID, n, tool=False)
    s.close()
    log = s.path(SID)
    with open(log, "rb") as f:
        data = f.read()
    new = data.replace(b'"noted 0"', b'"noted 00"').replace(b'"noted 3"', b'"noted3"')
    eq((len(new), new[-300:]), (len(data), data[-300:]), "(same size, same last bytes)")
    with open(log, "wb") as f:
        f.write(new)
    got = Sessions(D).search("Hendrik boiler", 1, [SID])
    eq(_texts(got)[0][1][:7], "turn 1:", "found")
    with open(log, "rb") as f:
        f.seek(got[0]["offset"])
        ok(f.readline().startswith(b'{"role":"user","content":"turn 1:'), "at its offset")
    dev.unmount()


def test_a_log_esp_claw_rewrote_with_records_of_the_same_shape_is_reindexed():
    # ESP-Claw deletes a session (its log, .idx, .blocked: our .tix stays) and a new
    # conversation fills it, of the same shape: the same lengths, the same replies, ending
    # at the same offset (a probe of the 16 bytes before the end, `","role":"assistant"}` and
    # a newline, kept the stale index, which missed the new records).
    import espclaw

    dev, s = _fresh()
    s.close()
    esp = espclaw.EspClawSessions(D)
    for code in ("1234", "5678"):
        esp.persist(SID, [(1, None, "door code %s" % code)])
        esp.persist(SID, [(2, None, "ok")], turn_completed=True)
    s = Sessions(D)
    eq(_texts(s.search("1234", 5)), [("user", "door code 1234")], "indexed")
    s.close()
    log = s.path(SID)
    size = fsutil.size(log)
    for suf in ("", ".idx", ".blocked"):
        fsutil.remove(log + suf)
    esp = espclaw.EspClawSessions(D)
    for code in ("9999", "4321"):
        esp.persist(SID, [(1, None, "door code %s" % code)])
        esp.persist(SID, [(2, None, "ok")], turn_completed=True)
    eq(fsutil.size(log), size, "(the same size)")
    s = Sessions(D)
    eq(_texts(s.search("9999", 5)), [("user", "door code 9999")], "the new records found")
    eq(s.search("1234", 5), [], "not the old ones")
    dev.unmount()


def test_an_index_of_the_version_before_is_written_again():
    # An index of version 1 (its blocks another layout): not read, written again from the
    # log by the first search that meets it, which answers as from a fresh index
    dev, s = _fresh()
    for n in range(4):
        _turn(s, SID, n)
    s.close()
    log = s.path(SID)
    want = _texts(Sessions(D).search("boiler Hendrik", 1))
    with open(tix_of(log), "rb") as f:
        raw = bytearray(f.read())
    raw[4] = 1
    with open(tix_of(log), "wb") as f:
        f.write(raw)
    eq(tix.blocks(tix_of(log)), (None, 0), "not an index of this version")
    eq(_texts(Sessions(D).search("boiler Hendrik", 1)), want, "found as before")
    with open(tix_of(log), "rb") as f:
        eq(f.read(8), tix.MAGIC, "written again")
    eq(_covers(log), fsutil.size(log), "whole")
    dev.unmount()


def test_an_index_whose_block_header_cannot_be_is_written_again():
    # A block naming no record, a range that ends before it starts, or a body too short for
    # its lengths, bucket directory and record table (the file ending there): not an index,
    # whichever program wrote it; a search writes it again and finds what the log holds.
    import struct

    for what in ("no record", "start after end", "body too short"):
        dev, s = _fresh()
        _turn(s, SID, 1)
        s.close()
        log = s.path(SID)
        with open(tix_of(log), "rb") as f:
            raw = bytearray(f.read())
        b = tix.Block(bytes(raw[8 : 8 + tix.BH]), 8)
        eq(b.next(), len(raw), "(one block)")
        if what == "no record":
            struct.pack_into("<H", raw, 8 + 4, 0)
        elif what == "start after end":
            struct.pack_into("<I", raw, 8 + 12, b.end + 1)
        else:
            short = b.posts - 8 - tix.BH + b.n - 1  # (a record table needs a byte a record)
            struct.pack_into("<I", raw, 8 + 8, short)
            raw = raw[: 8 + tix.BH + short]
        with open(tix_of(log), "wb") as f:
            f.write(raw)
        eq(tix.blocks(tix_of(log)), (None, 0), what + ": not an index")
        eq(_texts(Sessions(D).search("boiler Hendrik", 1))[0][1][:7], "turn 1:", what + ": found")
        eq(_covers(log), fsutil.size(log), what + ": written again")
        dev.unmount()


def test_an_index_cut_inside_a_block_header_is_written_again():
    # A cut while a block was appended, inside its 24-byte header: the index is torn, so the
    # next catch-up writes it again (never appends after the torn bytes).
    dev, s = _fresh()
    _turn(s, SID, 1)
    s.close()
    log = s.path(SID)
    with open(tix_of(log), "rb") as f:
        raw = f.read()
    with open(tix_of(log), "ab") as f:
        f.write(raw[8:18])  # the first 10 bytes of a block header
    eq(tix.blocks(tix_of(log)), (None, 0), "torn: not an index")
    s = Sessions(D)
    _turn(s, SID, 7)
    s.close()
    eq(_covers(log), fsutil.size(log), "a whole index after the catch-up")
    eq(_texts(s.search("Hendrik", 1))[0][1][:7], "turn 1:", "the old turn found")
    eq(_texts(s.search("Lisbon", 1))[0][1][:7], "turn 7:", "the new one found")
    dev.unmount()


def test_an_index_with_blocks_twice_is_written_again():
    # Two writers appending the same blocks (overlapping ranges): not an index; the archive
    # segment's is made again, and neither paging nor search sees a record twice.
    dev, s = _archive_run()
    s.close()
    seg = arc.segments(D, file_name(SID))[0][1]
    with open(tix_of(seg), "rb") as f:
        raw = f.read()
    with open(tix_of(seg), "ab") as f:
        f.write(raw[8:])
    eq(tix.blocks(tix_of(seg))[0], None, "overlapping blocks: no index")
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
    with open(tix_of(segs[-1][1]), "rb") as f:
        raw = f.read()
    with open(tix_of(segs[0][1]), "wb") as f:
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
    for p in (s.path(gone), s.path(gone) + ".idx", tix_of(s.path(gone))):
        os.remove(p)
    s = Sessions(D, size_limit=6000)
    for i in range(30):
        _turn(s, SID, i, pad="p" * 40)
    ok(arc.segments(D, file_name(SID)), "(the other session archived)")
    eq(arc.segments(D, file_name(gone)), [], "no live segment of the deleted log")
    for seq, p, size in segs:
        ok(not fsutil.exists(p) and not fsutil.exists(tix_of(p)), "segment %d removed" % seq)
    eq(s.search("sister Lena", 50, [gone]), [], "nothing of it found")
    dev.unmount()



def _named(path):
    """(offset, length) of every record the text index of `path` names."""
    out = []
    with open(tix_of(path), "rb") as f:
        for b in tix.blocks(tix_of(path))[0]:
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
        eq(len(tix.blocks(tix_of(log))[0]), 1, "(one block: the next compaction's cut falls in it)")
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
    ok(fsutil.size(tix_of(log)) > 0, "(the log has a text index)")
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


def test_the_files_found_again_are_the_ones_kept():
    # A query keeps a file with matches by its place in the listing (session/search.py): a
    # listing that comes back in another order in a later pass is noticed (the file's path
    # does not match) and the query runs again; every hit is its own session's record.
    from claw_memory.session import search as srch
    from claw_memory.session.held import Held
    from claw_memory.session.listing import search_files, search_scope

    dev, s = _fresh()
    sids = ["chat:web:u%d:default_01" % k for k in range(3)]
    for k, sid in enumerate(sids):
        s.persist(sid, [(1, None, "the lantern of user %d is in the shed" % k)])
        s.persist(sid, [(2, None, "noted %d" % k)], turn_completed=True)
    s.close()
    calls = [0]

    def files():
        calls[0] += 1
        got = list(search_files(s, search_scope(s, sids)))
        return got[::-1] if calls[0] == 2 else got  # the first query's second pass: reordered

    held = Held()
    hits = srch.search(files, "lantern", 5, 4096, 65536, None, None, held)
    held.close()
    eq(sorted((h["session"], h["text"]) for h in hits),
       [(sid, "the lantern of user %d is in the shed" % k) for k, sid in enumerate(sids)],
       "each hit with its own session")
    eq(calls[0], 4, "the query ran again, its two listings alike")
    for sid in sids:
        ok(fsutil.exists(tix_of(s.path(sid))), "no index taken for stale")
    dev.unmount()


def _all_pages(s):
    got = []
    before = 0
    while True:
        p = s.page(SID, before, 50)
        got = [m["text"] for m in p["messages"]] + got
        if not p["has_more"]:
            return got
        before = p["next_before"]


def test_an_archive_compaction_failing_after_its_commit_is_finished_by_the_next_use():
    # A rename of the compaction's finish fails (EIO) after the journal says "commit": the
    # persist that compacted succeeds (its turn is on flash); the next use of the same
    # Sessions finishes the compaction, so no turn is both archived and in the log.
    for target in (".log.idx", ".log"):
        dev, s = _fresh(blocks=512, size_limit=6000)

        class Failing:
            fail = target

            def __getattr__(self, name):
                return getattr(os, name)

            def rename(self, a, b):
                if Failing.fail is not None and b.endswith(Failing.fail) and ".arc" not in b:
                    Failing.fail = None
                    raise OSError(5, "EIO")
                return os.rename(a, b)

        arc.os = Failing()
        try:
            n = 0
            while Failing.fail is not None and n < 80:
                eq(_turn(s, SID, n, pad="p" * 40), None, "turn %d logged" % n)
                n += 1
            ok(Failing.fail is None, target + ": the failure happened")
        finally:
            arc.os = os
        for k in range(n, n + 3):
            _turn(s, SID, k, pad="p" * 40)
        for what, sessions in (("the same Sessions", s), ("a fresh one", Sessions(D))):
            got = _all_pages(sessions)
            eq(len(got), len(set(got)), "%s, %s: no message twice" % (target, what))
            eq(len([t for t in got if t.startswith("turn ")]), n + 3, "%s, %s: every turn" % (target, what))
        dev.unmount()


def test_a_deletion_failing_midway_is_finished_by_the_next_use():
    # A removal fails (EIO) halfway through /session delete of an archived session: the next
    # use of the same Sessions finishes it, so no part of the session is left to read.
    dev, s = _archive_run()
    name = file_name(SID)
    real = fsutil.remove
    calls = [0]

    def failing(path):
        calls[0] += 1
        if calls[0] == 4:
            raise OSError(5, "EIO")
        return real(path)

    fsutil.remove = failing
    try:
        try:
            s.delete(SID)
            ok(False, "the failure surfaced")
        except OSError:
            pass
    finally:
        fsutil.remove = real
    eq(s.page(SID, 0, 5)["total"], 0, "nothing of it to page")
    eq(s.search("turn", 5), [], "nor to find")
    eq([n for n in os.listdir(D) if n.startswith(name[:-4]) or n == ".deleting"], [], "none of its files left")
    dev.unmount()


def test_a_tool_result_of_thousands_of_nested_arrays_is_indexed_as_its_text():
    # A tool result's JSON text is read as JSON for its values; 8,000 nested arrays in it
    # (a hostile page a tool fetched) would take about 0.5 MB to parse: read as text instead,
    # never a MemoryError in the persist or the search
    import gc

    dev, s = _fresh()
    bomb = '{"b":"zebra quokka","a":' + "[" * 8000 + "]" * 8000 + "}"
    res = '[{"role":"tool","tool_call_id":"c1","content":%s,"is_error":false}]' % _dumps(bomb)
    call = ('{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function",'
            '"function":{"name":"fetch","arguments":"{}"}}]}')
    gc.collect()
    hog = []
    while gc.mem_free() > 340000:
        hog.append(bytearray(32768))
    s.persist(SID, [(1, None, "fetch the page")])
    s.persist(SID, [(3, call, None), (4, res, None)])
    s.persist(SID, [(2, None, "done")], turn_completed=True)
    s.close()
    got = s.search("quokka", 3, [SID])
    eq([h["role"] for h in got], ["tool"], "found as text")
    del hog
    dev.unmount()


def _damage(path, what, at=tix.HDR):
    # The block at `at` (the first) of the index `path` with its postings, its bucket
    # directory's end or its record table overwritten (its header whole: only reading the
    # body shows it)
    import struct

    with open(path, "rb") as f:
        b = bytearray(f.read())
    _, bits, _, n, _, body = struct.unpack_from("<2sBBHHI", b, at)
    d = at + tix.BH + n
    end = d + 2 * (1 << bits)
    posts = end + 2
    table = posts + struct.unpack_from("<H", b, end)[0]
    if what == "postings":
        b[posts:table] = b"\xff" * (table - posts)
    elif what == "directory":
        struct.pack_into("<H", b, end, 0xFFF0)
    elif what == "range":  # whole entries, each naming 127 bytes: past the block's range
        n = at + tix.BH + body - table
        b[table : table + n] = (b"\xf8\x07" * n)[:n]
    else:
        b[table : at + tix.BH + body] = b"\x85" * (at + tix.BH + body - table)
    with open(path, "wb") as f:
        f.write(b)


def test_a_damaged_text_index_is_made_again_and_the_search_answers():
    # Postings, a bucket directory or a record table overwritten (a flash fault, a hand
    # edit): derived data, made again from the log; before, every search of the session
    # failed (IndexError, or a read of a negative length: MemoryError)
    for what in ("postings", "directory", "table"):
        dev, s = _fresh()
        for n in range(12):
            _turn(s, SID, n)
        s.close()
        want = _texts(s.search("lookup result 7", 3, [SID]))
        ok(want, "hits before")
        log = s.path(SID)
        _damage(tix_of(log), what)
        s2 = Sessions(D)
        eq(_texts(s2.search("lookup result 7", 3, [SID])), want, what + ": the same hits")
        eq(_covers(log), fsutil.size(log), what + ": the index made again whole")
        dev.unmount()


def _readable(path):
    # Whether every block of the index `path` reads whole: its directory and each bucket
    with open(path, "rb") as f:
        for b in tix.blocks(path)[0]:
            try:
                d = b.head(f)[1]
                for k in range(1 << b.bits):
                    b.bucket(d, k << (tix.KEY_BITS - b.bits))
            except ValueError:
                return False
    return True


def test_a_bucket_directory_naming_bytes_past_its_postings_is_made_again():
    # A bucket's end past the postings' (its terms then read into the record table), or the
    # postings' end past the block (into the next one): the search that meets it makes the
    # index again, whatever it asks, and the answers are the same
    import struct

    for what in ("bucket", "end"):
        dev, s = _fresh()
        for n in range(12):
            _turn(s, SID, n)
        s.close()
        want = _texts(s.search("lookup result 7", 3, [SID]))
        log = s.path(SID)
        with open(tix_of(log), "rb") as f:
            b = bytearray(f.read())
        blk = tix.blocks(tix_of(log))[0][0]
        nb = 1 << blk.bits
        pend = struct.unpack_from("<H", b, blk.dir + 2 * nb)[0]
        for word in ("zyzzyva", "quokka", "xylophone", "wombat", "yodel", "vex"):
            h = terms.index_hash(terms.terms(word)[0])
            k = (h & tix.KEY) >> (tix.KEY_BITS - blk.bits)
            if k + 1 < nb:
                break
        if what == "bucket":  # bucket k ends 40 bytes past the postings
            struct.pack_into("<H", b, blk.dir + 2 * (k + 1), pend + 40)
        else:  # the postings end 40 bytes past the block
            struct.pack_into("<H", b, blk.dir + 2 * nb, blk.next() - blk.posts + 40)
        with open(tix_of(log), "wb") as f:
            f.write(b)
        s2 = Sessions(D)
        eq(s2.search(word, 3, [SID]), [], what + ": " + word + " found nowhere")
        with open(tix_of(log), "rb") as f:
            ok(f.read() != b, what + ": the index made again")
        ok(_readable(tix_of(log)), what + ": and whole")
        eq(_texts(s2.search("lookup result 7", 3, [SID])), want, what + ": the same hits")
        dev.unmount()


def _pages(s):
    # (total, every message) paged from the newest back
    got = []
    before = 0
    while True:
        p = s.page(SID, before, 50)
        got = p["messages"] + got
        if not p["has_more"]:
            return p["total"], got
        before = p["next_before"]


def test_a_damaged_or_missing_segment_leaves_paging_whole():
    dev, s = _archive_run()
    total, want = _pages(s)
    s.close()
    segs = sorted(n for n in os.listdir(D) if ".arc" in n)
    ok(len(segs) >= 2, "segments: %r" % segs)
    for what in ("table", "range"):
        _damage(tix_of(D + "/" + segs[0]), what)
        eq(_pages(Sessions(D, size_limit=6000)), (total, want), what + ": a damaged segment index: made again")
    seg = D + "/" + segs[-1]
    with open(seg, "rb") as f:
        gone = sum(1 for ln in f if b'"role":"user"' in ln or b'"role":"assistant","content":"' in ln)
    os.remove(seg)
    n, got = _pages(Sessions(D, size_limit=6000))
    eq((n, len(got)), (total - gone, len(want) - gone), "a missing segment: its records left out")
    eq([m["text"] for m in got[-5:]], [m["text"] for m in want[-5:]], "the newest page as before")
    dev.unmount()


def test_a_segment_index_damaged_after_its_first_block_leaves_paging_whole():
    # The records of its first block are given, then its second block's table is found
    # damaged: the index is made again and paging goes on after the last record given, once
    dev, s = _fresh(blocks=512, size_limit=40000)
    with Unmerged():
        for i in range(240):
            _turn(s, SID, i, tool=False, pad="p" * 40)  # (a block's last record is a message)
        total, want = _pages(s)
        first = s.page(SID, 0, 50)
        s.close()
    segs = [n for n in os.listdir(index_dir(D)) if ".arc" in n]
    eq(len(segs), 1, "(one segment)")
    blks = tix.blocks(index_dir(D) + "/" + segs[0])[0]
    eq(len(blks), 2, "(of two blocks)")
    _damage(index_dir(D) + "/" + segs[0], "range", blks[1].pos)
    eq(Sessions(D, size_limit=40000).page(SID, 0, 50), first, "the newest page: every message once")
    eq(_pages(Sessions(D, size_limit=40000)), (total, want), "and every page")
    dev.unmount()


def test_a_record_over_16_kib_is_searched_from_the_start_of_its_text():
    # A tool result of 20 KiB is not parsed whole (a 24 KiB one ran a board's heap out in a
    # search): its type from a copy with long strings cut, its text the start of its content
    # string, decoded (escapes and all), as far as TEXT_MAX bytes are indexed
    dev, s = _fresh()
    body = 'Line one\\n\\"quoted\\" zebra ' + "lorem ipsum " * 250 + "quokka " + "dolor " * 2500
    res = '[{"role":"tool","tool_call_id":"c1","content":"%s","is_error":false}]' % body
    ok(16384 < len(res) < 65536, "over the parse bound, under the record bound: %d" % len(res))
    call = ('{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function",'
            '"function":{"name":"fetch","arguments":"{}"}}]}')
    s.persist(SID, [(1, None, "fetch the page")])
    s.persist(SID, [(3, call, None), (4, res, None)])
    s.persist(SID, [(2, None, "done")], turn_completed=True)
    s.close()
    got = s.search("quokka", 3, [SID])  # (in a board's heap: tests_host/test_search_heap32.py)
    eq([h["role"] for h in got], ["tool"], "found in the tool result")
    ok(got[0]["text"].startswith('Line one\n"quoted" zebra lorem'), repr(got[0]["text"][:40]))
    eq(len(got[0]["text"]), 4096, "cut to max_message_chars")
    eq(s.search("role tool_call_id", 3, [SID]), [], "its JSON keys are not its text")
    # its first TEXT_MAX bytes end inside an escape (a backslash, then the 8,193rd byte): the
    # string before it, decoded all the same
    pre = '[{"role":"tool","tool_call_id":"c2","content":"'
    head = 'Line two\\n narwhal '
    fill = 8191 - len(pre) - len(head)
    body = head + "lorem " * (fill // 6) + "y" * (fill % 6) + "\\n" + "dolor " * 2500
    s.persist(SID, [(1, None, "fetch another")])
    s.persist(SID, [(4, pre + body + '","is_error":false}]', None)])
    s.persist(SID, [(2, None, "done")], turn_completed=True)
    s.close()
    got = s.search("narwhal", 3, [SID])
    eq([h["role"] for h in got], ["tool"], "found")
    ok(got[0]["text"].startswith("Line two\n narwhal lorem"), repr(got[0]["text"][:40]))
    dev.unmount()


@heap("16M")  # four 2 MiB simulated flashes
def test_a_deletion_of_an_archive_only_session_failing_midway_is_finished_by_the_next_use():
    # ESP-Claw removed the session's log (its archive segments stay, ours): /session delete
    # then has only the segments to remove, under the same journal. A removal that fails
    # (EIO) halfway is finished by the next use, whichever removal it was.
    for fail in (1, 3, 5, 7):
        dev, s = _archive_run()
        name = file_name(SID)
        s.close()
        for p in ("", ".idx", ".pending"):
            fsutil.remove(D + "/" + name + p)
        fsutil.remove(tix_of(D + "/" + name))
        ok(arc.segments(D, name), "(its segments stay)")
        s = Sessions(D)
        calls = failing_remove(fail, lambda: s.delete(SID))
        ok(calls >= fail, "remove %d: the failure happened" % fail)
        eq(s.page(SID, 0, 5)["total"], 0, "remove %d: nothing of it to page" % fail)
        eq([n for n in os.listdir(D) if n.startswith(name[:-4]) or n == ".deleting"], [],
           "remove %d: none of its files left" % fail)
        eq([e for e in arc.read(D) if e[3] == name], [], "remove %d: nor a catalog entry" % fail)
        dev.unmount()


def test_an_archiving_journal_that_names_no_compaction_removes_nothing():
    # A journal cut while its first line was written (no newline: the number may be cut
    # short), or whose number is not one, names no compaction: it goes, and every segment
    # stays, the one whose number it seems to name too.
    dev, s = _archive_run()
    name = file_name(SID)
    s.close()
    segs = arc.segments(D, name)
    ok(segs, "(archived)")
    want = s.search("Hendrik boiler", 10, [SID])
    for journal in (b"%s %d" % (name.encode(), segs[0][0]), b"%s x%d\n" % (name.encode(), segs[0][0])):
        with open(D + "/.archiving", "wb") as f:
            f.write(journal)
        s = Sessions(D)
        eq(s.search("Hendrik boiler", 10, [SID]), want, "%r: the same hits" % journal)
        ok(not fsutil.exists(D + "/.archiving"), "%r: the journal gone" % journal)
        eq(arc.segments(D, name), segs, "%r: every segment" % journal)
        ok(all(fsutil.exists(p) and fsutil.exists(tix_of(p)) for _, p, _ in segs), "%r: their files" % journal)
    dev.unmount()


def test_a_catalog_line_with_another_field_is_damaged():
    # docs/FORMAT.md: a catalog line has four fields and a print; a line with more is damaged
    # (its segment is not listed), the others are read.
    dev, s = _fresh()
    s.close()
    name = file_name(SID)
    with open(D + "/archive.list", "wb") as f:
        f.write(b"CARC 1\n3 100 0 %s 0000abcd\n4 200 0 %s 0000abcd extra\n5 300 0 %s\n"
                % (name.encode(), name.encode(), name.encode()))
    eq([(e[0], e[1], e[5]) for e in arc.read(D)], [(3, 100, (0xABCD,)), (5, 300, ())], "lines 3 and 5")
    dev.unmount()


def test_segments_of_a_catalog_written_before_prints_stay_their_logs():
    # docs/FORMAT.md: a catalog line without a print (written before prints existed) names a
    # segment that is always its log's: it is searched and kept, not taken for another log's.
    dev, s = _archive_run()
    name = file_name(SID)
    s.close()
    want = s.search("Hendrik boiler", 10, [SID])
    ok(True in [h["archived"] for h in want], "(archived hits)")
    with open(D + "/archive.list", "rb") as f:
        lines = f.read().split(b"\n")
    with open(D + "/archive.list", "wb") as f:
        f.write(b"\n".join(b" ".join(ln.split(b" ")[:4]) if ln[:1] != b"C" else ln for ln in lines))
    segs = [(n, p) for n, p, _ in arc.segments(D, name)]
    ok(segs and all(not e[5] for e in arc.read(D)), "(no prints)")
    s = Sessions(D)
    eq(s.search("Hendrik boiler", 10, [SID]), want, "the same hits, the archived ones too")
    eq([(n, p) for n, p, _ in arc.segments(D, name)], segs, "every segment listed")
    ok(all(fsutil.exists(p) for _, p in segs), "and kept")
    dev.unmount()


def test_a_limit_lowered_to_exactly_the_archive_keeps_every_segment():
    # A Sessions opened with a lower archive_limit applies it at its first use: exactly the
    # live segments' total keeps them all; one byte less drops the oldest alone.
    dev, s = _archive_run(n=40, archive_limit=1 << 20)
    s.close()
    sizes = [e[1] for e in arc.read(D) if e[4]]
    ok(len(sizes) >= 2, "(several segments)")
    s = Sessions(D, size_limit=6000, archive_limit=sum(sizes))
    s.stat(SID)
    eq([(e[1], e[4]) for e in arc.read(D)], [(n, True) for n in sizes], "every segment kept")
    s = Sessions(D, size_limit=6000, archive_limit=sum(sizes) - 1)
    s.stat(SID)
    eq([e[1] for e in arc.read(D)], sizes[1:], "the oldest dropped, from the catalog too")
    eq(len(arc.segments(D, file_name(SID))), len(sizes) - 1, "the others live")
    dev.unmount()


@heap("16M")  # two 2 MiB simulated flashes
def test_a_segment_names_the_time_of_its_move():
    # The catalog gives each segment the clock's time when the compaction moved it (export
    # bundles carry it); 0 while the clock is not set.
    for now, want in ((1700000000, 1700000000), (-1, 0)):
        dev, s = _archive_run(n=30, clock=lambda: now)
        times = [e[2] for e in arc.read(D)]
        ok(times, "(segments)")
        eq(times, [want] * len(times), "the time of the move")
        dev.unmount()
