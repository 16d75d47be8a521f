# History search (issue 26): text indexes merged into blocks of up to 1,024 records
# (session/tixmerge.py): when a session rests (it leaves the cache, the memory is flushed or
# closed), when a compaction commits its archive segment, when an index is written again; a
# compaction of a log whose index is merged; the same answers as the blocks written.
import os

from mptest import eq, heap, ok
from search_cases import D, SID, TOPICS, Unmerged
from search_cases import fresh as _fresh
from search_cases import texts as _texts
from search_cases import turn as _turn

from claw_memory.session import Sessions, tix, tixmerge
from claw_memory.session.format import index_dir, tix as tix_of

HEAP = "8M"
QUERIES = ("boiler Hendrik", "lookup result 17", "violin", "番茄", "noted 3", "turn 21",
           "Lisbon seat", "carbonara sister", "dentist October")


def _sizes(path):
    return [b.n for b in tix.blocks(tix_of(path))[0]]


def _answers(s, sid=SID):
    return [s.search(q, 6, [sid]) for q in QUERIES]


def _written(turns, pad="", after=None):
    # A session of `turns` turns whose text index keeps the blocks it was written with
    # (`after(s)`: more before its close): (device, its Sessions, its log's path)
    dev, s = _fresh(blocks=512)
    with Unmerged():
        for i in range(turns):
            _turn(s, SID, i, pad=pad)
        if after is not None:
            after(s)
        s.close()
    return dev, s, s.path(SID)


def _named(path):
    # ([(offset, length)] the index of `path` names, [(offset, length)] of the file's lines)
    with open(tix_of(path), "rb") as f:
        named = [(off, ln) for b in tix.blocks(tix_of(path))[0] for off, ln, _ in b.records(f)]
    with open(path, "rb") as f:
        data = f.read()
    lines = []
    at = 0
    while at < len(data):
        end = data.index(b"\n", at) + 1
        lines.append((at, end - at))
        at = end
    return named, lines


def _stray(path):
    # (block, ordinal) of the postings of the index of `path` that name no record of their
    # block (a query skips them: only a look at the bytes shows them)
    import struct

    from claw_memory.session import remap

    out = []
    with open(tix_of(path), "rb") as f:
        for b in tix.blocks(tix_of(path))[0]:
            size = b.postings_size(f)
            f.seek(b.dir)
            raw = f.read(size)
            d0 = 2 * ((1 << b.bits) + 1)
            for bk in range(1 << b.bits):
                for tag, p in remap._bucket_terms(raw, d0, bk):
                    out += [(b.pos, o) for o in tix.postings(p) if o >= b.n]
    return out


def _fresh_answers(size_limit=10 ** 6):
    # The answers from indexes written again from the files (merged by then)
    for name in os.listdir(index_dir(D)):
        os.remove(index_dir(D) + "/" + name)
    return _answers(Sessions(D, size_limit=size_limit))


def test_close_merges_the_blocks_a_session_was_written_with():
    dev, s = _fresh(blocks=512)
    for i in range(60):
        _turn(s, SID, i, pad="p" * 60)
    log = s.path(SID)
    before = _sizes(log)
    ok(len(before) >= 2 and max(before) <= tix.RECS, "(small blocks as written: %r)" % before)
    want = _answers(s)
    s.close()
    after = _sizes(log)
    eq(sum(after), 60 * 4, "every record once (the last ones indexed at close)")
    ok(len(after) < len(before) and max(after) > tix.RECS, "merged: %r" % after)
    eq(_answers(Sessions(D)), want, "the same answers")
    ok(os.stat(tix_of(log))[6] < os.stat(log)[6] * 15 // 100, "the index under 15% of its log")
    dev.unmount()


def test_a_session_leaving_the_cache_is_merged_and_one_small_block_waits():
    # Five sessions through a cache of four: the first leaves it and is merged. A merged
    # block and one small block after it wait for a second (each merge writes the index whole)
    dev, s = _fresh(blocks=512)
    sids = ["chat:web:u%d:default_01" % k for k in range(5)]
    for i in range(60):
        _turn(s, sids[0], i)
    s.flush()
    sizes = _sizes(s.path(sids[0]))
    ok(len(sizes) == 1 and sizes[0] > tix.RECS, "flushed: merged (%r)" % sizes)
    for i in range(60, 90):
        _turn(s, sids[0], i, pad="p" * 200)  # (more than 8 KiB: a block appended)
    for k in range(1, 5):
        _turn(s, sids[k], k)
    sizes = _sizes(s.path(sids[0]))
    eq(len(sizes), 2, "left the cache: a merged block and the one appended after: %r" % sizes)
    ok(sizes[0] > tix.RECS >= sizes[1], "(one of each)")
    eq(tixmerge.settle(tix_of(s.path(sids[0])), None), False, "one small block: nothing to do")
    dev.unmount()


def test_a_compaction_of_a_merged_index_answers_as_a_fresh_index():
    # A log merged at close, then compacted with an archive: its merged blocks split between
    # the new log's index and the segment's (renumbered a record at a time), the segment's
    # merged when its compaction commits; the answers are those of indexes written afresh
    dev, s = _fresh(blocks=512)
    for i in range(90):
        _turn(s, SID, i, pad="q" * 40)
    s.close()
    log = s.path(SID)
    ok(max(_sizes(log)) > tix.RECS, "(merged)")
    s = Sessions(D, size_limit=12000)
    eq(s.compact(SID), None, "compacted")
    segs = [D + "/" + n[:-4] for n in os.listdir(index_dir(D)) if ".arc" in n]
    eq(len(segs), 1, "one segment")
    eq(len(tix.blocks(tix_of(segs[0]))[0]), 1, "the segment's index merged at its commit")
    for path in (log, segs[0]):  # (as the compaction wrote them: not made again by a search)
        named, lines = _named(path)
        eq(named, lines, "%s: its index names its records" % path[-12:])
        eq(_stray(path), [], "%s: every posting names one of its block's records" % path[-12:])
    got = _answers(s)
    ok(all(got[:3]), "found")
    s.close()
    eq(got, _fresh_answers(12000), "the same answers as fresh indexes")
    dev.unmount()


def test_a_compaction_without_an_archive_keeps_a_merged_index_true():
    dev, s = _fresh(blocks=512)
    for i in range(90):
        _turn(s, SID, i, pad="q" * 40)
    s.close()
    s = Sessions(D, size_limit=12000, archive_limit=0)
    eq(s.compact(SID), None, "compacted")
    eq([n for n in os.listdir(D) if ".arc" in n], [], "(no archive)")
    got = _answers(s)
    s.close()
    eq(got, _fresh_answers(12000), "the same answers as fresh indexes")
    dev.unmount()


def test_merged_and_written_blocks_answer_the_same():
    # The same history indexed as written (small blocks) and merged: every query's hits and
    # scores are the same (the first pass scores a record the same in either)
    dev, s = _fresh(blocks=512)
    with Unmerged():
        for i in range(70):
            _turn(s, SID, i, pad="r" * (i % 9) * 20)
        s.close()
    small = _answers(Sessions(D))
    tixmerge.settle_file(s.path(SID))
    ok(max(_sizes(s.path(SID))) > tix.RECS, "(merged)")
    eq(_answers(Sessions(D)), small, "the same answers")
    for t in TOPICS[:4]:
        word = t.split()[-1]
        eq(Sessions(D).search(word, 3), Sessions(D).search(word, 3), "(stable)")
    dev.unmount()


@heap("16M")
def test_a_merge_keeps_blocks_within_their_bounds():
    # 2,300 records: merged blocks of 1,024 records at most, whole small blocks each
    dev, s = _fresh(blocks=1024)
    with Unmerged():
        for i in range(1150):
            s.persist(SID, [(1, None, "kiwi %d" % i)])
            s.persist(SID, [(2, None, "ok %d" % (i % 7))], turn_completed=True)
        s.close()
    before = _sizes(s.path(SID))
    tixmerge.settle_file(s.path(SID))
    after = _sizes(s.path(SID))
    eq(sum(after), sum(before), "every record")
    ok(len(after) == 3 and max(after) <= tix.RECS_MAX, "three merged blocks: %r" % after)
    for n in (0, 511, 1023, 1149):
        eq(_texts(s.search("kiwi %d" % n, 1, [SID])), [("user", "kiwi %d" % n)], "kiwi %d" % n)
    dev.unmount()


@heap("16M")
def test_a_damaged_merged_block_is_written_again():
    # Its record table overwritten: a search that meets it writes the index again (merged)
    # and finds what the log holds
    dev, s = _fresh(blocks=512)
    for i in range(60):
        _turn(s, SID, i)
    s.close()
    log = s.path(SID)
    b = tix.blocks(tix_of(log))[0][0]
    ok(b.n > tix.RECS, "(a merged block)")
    with open(tix_of(log), "rb") as f:
        raw = bytearray(f.read())
        table = b.dir + b.postings_size(f)  # (its first entries: every candidate's lookup)
    raw[table : table + 40] = b"\x85" * 40
    with open(tix_of(log), "wb") as f:
        f.write(raw)
    eq(_texts(Sessions(D).search("boiler Hendrik", 1, [SID]))[0][1][:8], "turn 51:", "found")
    eq(_sizes(log), [b.n], "written again, merged")
    dev.unmount()


def test_a_stale_index_is_left_stale_not_merged_under_new_probes():
    # The log rewritten under its index (another program; the same size): the index no longer
    # matches it, and a merge, which probes the file again for the blocks it writes, must not
    # make it match (its records would then be read where the log holds others)
    dev, s, log = _written(40)
    ok(len(_sizes(log)) >= 2, "(small blocks)")
    with open(log, "rb") as f:
        raw = f.read()
    with open(log, "wb") as f:
        f.write(raw.replace(b"noted", b"kiwis"))
    from claw_memory.session import indexer

    with open(log, "rb") as f:
        eq(indexer.covered(log, len(raw), f), -1, "(stale)")
    tixmerge.settle_file(log)
    with open(log, "rb") as f:
        eq(indexer.covered(log, len(raw), f), -1, "still stale: written again when searched")
    eq(len(Sessions(D).search("kiwis", 50, [SID])), 40, "every kiwis found")
    dev.unmount()


def _words(i, n):
    # `n` words of letters no other record of the test holds (each a distinct term)
    out = []
    for j in range(n):
        v = i * n + j
        w = ""
        for _ in range(4):
            w += "bcdfghjklmnpqrstvwz"[v % 19]
            v //= 19
        out.append("zo" + w)
    return " ".join(out)


@heap("16M")
def test_a_compaction_holds_no_more_postings_of_a_merged_block_than_a_block_holds():
    # Records of 300 terms each: blocks of a few records, merged into blocks of 60,000 bytes
    # of postings and fewer than 128 records. A compaction must not gather such a block's
    # postings in RAM as one list (~20,000 postings: 80 KiB on the board), as it does a small
    # block's: it splits it as it splits a block of more records, streamed
    dev, s = _fresh(blocks=1024)
    for i in range(60):
        _turn(s, SID, i, tool=False, pad=_words(i, 300))
    s.close()
    log = s.path(SID)
    big = [b for b in tix.blocks(tix_of(log))[0] if b.n <= tix.RECS and b.sumdl > tix.POSTS]
    ok(big, "(merged blocks of few records and many postings)")
    most = [0]
    block = tix.Builder.block

    def counted(bld, end, prb):
        most[0] = max(most[0], len(bld.posts))
        return block(bld, end, prb)

    tix.Builder.block = counted
    try:
        s = Sessions(D, size_limit=60000)
        eq(s.compact(SID), None, "compacted")
    finally:
        tix.Builder.block = block
    ok(most[0] <= tix.POSTS, "postings held at once: %d" % most[0])
    got = _answers(s)
    s.close()
    eq(got, _fresh_answers(60000), "the same answers as fresh indexes")
    dev.unmount()


def test_a_merge_cut_in_a_segment_leaves_nothing_once_the_session_is_deleted():
    # A cut while a segment's index was merged (on LittleFS: its `.tix.tmp` written in part)
    # leaves the `.tmp` beside the segment; the segment's files go with it
    dev, s = _fresh(blocks=512)
    for i in range(90):
        _turn(s, SID, i, pad="q" * 40)
    s.close()
    s = Sessions(D, size_limit=12000)
    eq(s.compact(SID), None, "compacted")
    seg = [D + "/" + n[:-4] for n in os.listdir(index_dir(D)) if ".arc" in n][0]
    with open(tix_of(seg) + ".tmp", "wb") as f:
        f.write(tix.MAGIC + b"TB")
    s.close()
    s = Sessions(D)
    ok(s.delete(SID), "deleted")
    s.close()
    eq([n for n in os.listdir(D) if ".arc" in n], [], "no file of its segments left")
    dev.unmount()


def test_a_rare_term_far_apart_in_a_merged_block_scores_as_bm25():
    # "zebra" in records 10 and 900 of one merged block: its postings' gap needs two bytes,
    # and its document frequency is 2, not their byte length (the scores are BM25's)
    from search_cases import bm25

    dev, s = _fresh(blocks=512)
    texts = []
    with Unmerged():
        for n in range(500):
            t = "kiwi %s n%d" % ("zebra" if n in (5, 450) else "plum", n)
            s.persist(SID, [(1, None, t)])
            s.persist(SID, [(2, None, "ok")], turn_completed=True)
            texts += [t, "ok"]
        s.close()
    tixmerge.settle_file(s.path(SID))
    ok(_sizes(s.path(SID))[0] > 900, "(one merged block holds both)")
    scores = bm25(texts, "zebra kiwi")
    best = sorted(range(len(texts)), key=lambda i: (scores[i], i), reverse=True)[:3]
    eq([(h["text"], h["score"]) for h in Sessions(D).search("zebra kiwi", 3, [SID])],
       [(texts[i], scores[i]) for i in best], "BM25's scores")
    dev.unmount()


def test_a_merge_ending_in_a_short_block_probes_the_merged_range():
    # The last block covers one short record (under the 256 bytes a probe hashes): the merged
    # block's probe hashes the 256 bytes before its end, as a reader checks it (a probe of the
    # last block's range alone would make the merged index stale at once)
    def short(s):
        s.flush()
        s.persist(SID, [(1, None, "ok")])
        s.persist(SID, [(2, None, "k")], turn_completed=True)

    dev, s, log = _written(40, after=short)
    blks = tix.blocks(tix_of(log))[0]
    ok(blks[-1].end - blks[-1].start < 256 and len(blks) > 1, "(a short last block)")
    tixmerge.settle_file(log)
    with open(log, "rb") as f:
        size = f.seek(0, 2)
        merged, _ = tix.blocks(tix_of(log), size, f)
    ok(merged and len(merged) == 1, "merged, and it matches its log")
    dev.unmount()


def test_a_segment_is_merged_when_its_compaction_commits():
    # A log of small blocks compacted into the archive: the segment's index, made of the
    # blocks' parts, is merged once (nothing is ever appended to a segment)
    dev, s, log = _written(90, pad="q" * 40)
    ok(len(_sizes(log)) > 2, "(small blocks)")
    s = Sessions(D, size_limit=12000)
    eq(s.compact(SID), None, "compacted")
    segs = [D + "/" + n[:-4] for n in os.listdir(index_dir(D)) if ".arc" in n]
    sizes = _sizes(segs[0])
    ok(len(sizes) == 1 and sizes[0] > tix.RECS, "the segment's index merged: %r" % sizes)
    eq(_named(segs[0])[0], _named(segs[0])[1], "its records")
    dev.unmount()
