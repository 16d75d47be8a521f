# claw_memory.store.rank: ranked recall: BM25 over the active items' terms, from RAM.
# MIT license
#
# What a query needs of each item (a table slot) is kept in RAM, not its text: the distinct
# terms (claw_memory.terms) of its content, keywords, tags and labels, each a 16-bit hash with
# its count over the four fields (at most 3), as 2-byte postings in one pool, an item's in
# descending order of count; per slot where its postings start, how many, how many count 2
# or more and 3 (one byte), and its length in terms. A query finds each of its terms in the
# pool with bytearray.find (C speed; a hit off a 2-byte boundary is skipped), maps a hit to
# its slot by walking the slots in pool order alongside (hits come in that order), and
# scores BM25; only the items it returns are read from flash.
# Each field counts a term once per occurrence, which weighs the fields as ESP-Claw's
# normalisation fills them: keywords occur in the content or tags and are topped up from the
# tags, labels are the tags; so a content word counts 1, a keyword found in the content 2, a
# tag 3 (tag, keyword, label).
# A change appends the new postings and leaves the old ones as dead bytes, moved out in place
# when the pool is full; compaction and open build the pool anew (no rebuild per change).
# 16-bit hashes: a query of 8 terms over 1,800 postings meets a false hit about once in 5
# queries, and then only adds a small score to one item. Measured on the retrieval benchmark
# (tools/benchmark/recall_eval.py), 16 bits, counts capped at 3 and 14 postings an item give
# the recall@1/@5 of 20 bits, counts up to 15 and 16 postings (0.617/0.912 against
# 0.616/0.914): 3.5 KiB at capacity instead of 6.

import math
from array import array

from .. import item as itm
from .. import text
from .._compat import const
from ..terms import term_hash, terms

K1 = 1.2
B = 0.75
TERMS_MAX = const(14)  # postings kept per item: the most frequent, then the first (worst case
# 128 items x 14 x 2 bytes = 3.5 KiB; the facts an extraction stores have 8 to 16 terms)
_TF_MAX = const(3)  # a tag (tag, keyword, label) already counts 3: more adds nothing measured
_HASH = const(0xFFFF)
QUERY_MAX = const(512)  # bytes of a query read (a question, not a document: bounded work)
_POOL_MAX = const(65535)  # postings (starts are 16-bit); past it an item gets none
_HALF_LIFE = const(2592000)  # 30 days: recency's boost halves
_CLOCK_SET = const(1600000000)  # a board whose clock reads earlier has not set it
RECENT = 0.1  # the boost of an item updated just now (x1.1), half of it at 30 days
RELATIVE = 0.25  # results under this share of the best score are noise (a word like "user")
DUP = 0.85  # share of the larger term set two results have in common to be near-duplicates


def item_terms(it):
    """([16-bit hash], [count], length) of an item's distinct terms over its content,
    keywords, tags and labels, in the order first seen, at most TERMS_MAX (the most frequent,
    then the first)."""
    hs = []
    ws = []
    dl = 0
    for value in [it["content"], it["keywords"], it["tags"]] + itm.labels(it["tags"]):
        for t in terms(value):
            h = term_hash(t) & _HASH
            dl += 1
            try:
                k = hs.index(h)
                ws[k] = min(ws[k] + 1, _TF_MAX)
            except ValueError:
                hs.append(h)
                ws.append(1)
    if len(hs) > TERMS_MAX:
        keep = sorted(range(len(hs)), key=lambda k: (-ws[k], k))[:TERMS_MAX]
        keep.sort()
        hs = [hs[k] for k in keep]
        ws = [ws[k] for k in keep]
    return hs, ws, min(dl, 255)


def query_hashes(query):
    """The distinct 16-bit term hashes of a query (text; its first QUERY_MAX bytes)."""
    out = []
    for t in terms(text.to_bytes(query or "")[:QUERY_MAX]):
        h = term_hash(t) & _HASH
        if h not in out:
            out.append(h)
    return out


def recency(now, updated_at):
    """Recency's factor: 1 + RECENT halved every 30 days of age; 1 when the clock is not set."""
    if now < _CLOCK_SET or updated_at < _CLOCK_SET:
        return 1.0
    return 1.0 + RECENT * math.pow(0.5, max(now - updated_at, 0) / _HALF_LIFE)


class Terms:
    """The term statistics of a table's slots (see the header)."""

    def __init__(self, slots=0):
        """`slots`: how many are expected; their arrays and the pool of 128 items at most are
        reserved now, whole, before the scan's garbage (see table.py): a pool grown during the
        scan would leave its old blocks as holes in the heap."""
        self.start = array("H", bytes(2 * slots))
        self.cnt = bytearray(slots)
        self.dl = bytearray(slots)  # lengths, at most 255 terms (a full item has about 120)
        self.tfs = bytearray(slots)  # of its postings: how many count 3 << 4 | how many 2 or 3
        self.hs = bytearray(2 * TERMS_MAX * min(slots, 128))  # the postings, little-endian
        self.used = 0  # postings in the pool, dead ones included
        self.live = 0  # postings of live slots
        self.docs = 0  # slots with terms
        self.total = 0  # their lengths

    def nbytes(self):
        """RAM held by the statistics' arrays."""
        return len(self.hs) + 5 * len(self.cnt)

    def _room(self, slot):
        if slot < len(self.cnt):
            return
        # (an eighth more, as the table grows: at capacity every store adds a slot)
        size = max(slot + 1, len(self.cnt) + max(16, len(self.cnt) // 8))
        start = array("H", bytes(2 * size))
        start[: len(self.start)] = self.start
        self.start = start
        for name in ("cnt", "dl", "tfs"):
            old = getattr(self, name)
            new = bytearray(size)
            new[: len(old)] = old
            setattr(self, name, new)

    def put(self, slot, it):
        """The slot's latest line is now `it` (a tombstone: no terms)."""
        self._room(slot)
        if self.dl[slot]:
            self.docs -= 1
            self.total -= self.dl[slot]
        self.live -= self.cnt[slot]
        self.cnt[slot] = 0
        self.dl[slot] = 0
        if it["deleted"]:
            return
        hs, ws, dl = item_terms(it)
        if not dl:
            return
        self.docs += 1
        self.total += dl
        self.dl[slot] = dl
        n = len(hs)
        if 2 * (self.used + n) > len(self.hs):
            self.repack(n)
        if self.used + n > _POOL_MAX:
            return  # (only a records file of thousands of items before its compaction)
        at = 2 * self.used
        c2 = c3 = 0
        for w in (3, 2, 1):  # by count: a posting's place gives its count (scores())
            for h, c in zip(hs, ws):
                if c == w:
                    self.hs[at] = h & 0xFF
                    self.hs[at + 1] = h >> 8
                    at += 2
                    c2 += w > 1
                    c3 += w > 2
        self.tfs[slot] = c3 << 4 | c2
        self.start[slot] = self.used
        self.cnt[slot] = n
        self.used += n
        self.live += n

    def repack(self, need=0):
        """Drop the dead postings (the live ones moved down in place, a few bytes at a time),
        then grow the pool when `need` more do not fit (with an eighth to spare): at capacity
        the pool is rewritten where it is, not allocated again."""
        hs = self.hs
        at = 0
        for s in self.order():
            a = self.start[s]
            n = self.cnt[s]
            if a != at:
                hs[2 * at : 2 * (at + n)] = hs[2 * a : 2 * (a + n)]
                self.start[s] = at
            at += n
        self.used = at
        size = at + need
        if 2 * size > len(hs):
            grown = bytearray(2 * (size + size // 8 + 8))
            grown[: 2 * at] = memoryview(hs)[: 2 * at]
            self.hs = grown

    def order(self):
        """The slots with postings, in pool order (made for each use: not held between).
        Sorted as ints start * slots + slot: MicroPython's sort is quadratic on a list already
        in order (as this one mostly is), which with a key function costs 0.5 ms at 128 slots."""
        m = len(self.cnt)
        out = [self.start[s] * m + s for s in range(m) if self.cnt[s]]
        out.sort()
        for i in range(len(out)):
            out[i] %= m
        return out

    def hashes(self, slot):
        """The term hashes of a slot."""
        hs = self.hs
        a = 2 * self.start[slot]
        return [hs[i] | hs[i + 1] << 8 for i in range(a, a + 2 * self.cnt[slot], 2)]

    def scores(self, qh, allowed=None):
        """{slot: BM25 score} of the slots holding a term of `qh` (query_hashes), among
        `allowed` (a collection of slots; None: all)."""
        out = {}
        if not self.docs:
            return out
        avg = self.total / self.docs
        order = self.order()
        start, cnt = self.start, self.cnt
        last = len(order) - 1
        hs, tfs, end = self.hs, self.tfs, 2 * self.used
        for q in qh:
            pat = bytes((q & 0xFF, q >> 8))
            hits = []
            pos = 0
            j = 0  # hits come in pool order: the owning slot's place in `order` only grows
            while True:
                p = hs.find(pat, pos, end)
                if p < 0:
                    break
                if p & 1:
                    pos = p + 1
                    continue
                pos = p + 2
                k = p >> 1
                while j < last and start[order[j + 1]] <= k:
                    j += 1
                s = order[j] if order else -1
                if s >= 0 and start[s] <= k < start[s] + cnt[s]:  # else a dead posting
                    k -= start[s]  # (the slot's postings are in descending order of count)
                    hits.append((s, 1 + (k < tfs[s] & 0xF) + (k < tfs[s] >> 4)))
            if not hits:
                continue
            df = len(hits)
            idf = math.log(1 + (self.docs - df + 0.5) / (df + 0.5))
            for s, w in hits:
                if allowed is not None and s not in allowed:
                    continue
                norm = K1 * (1 - B + B * self.dl[s] / avg)
                out[s] = out.get(s, 0.0) + idf * w * (K1 + 1) / (w + norm)
        return out

    def unit(self):
        """The score of one word found once in one item of average length: what a floor is
        measured in (a word in many items scores less, several words more)."""
        return math.log(1 + (self.docs - 0.5) / 1.5) if self.docs else 0.0

    def best(self, tab, qh, limit, now, floor=0.0, allowed=None):
        """[(score, slot)] best first, at most `limit`, scores above `floor` units and at
        least RELATIVE of the best (recency's factor in), near-duplicates of a better result
        left out; ties: access count, then the newer line."""
        sc = self.scores(qh, allowed)
        ranked = []
        floor *= self.unit()
        for s, v in sc.items():
            v = round(v * recency(now, tab.upd[s]), 4)
            if v > floor:
                ranked.append((-v, -tab.acc[s], -tab.off[s], s))
        ranked.sort()
        if ranked:
            cut = RELATIVE * -ranked[0][0]
            ranked = [r for r in ranked if -r[0] >= cut]
        out = []
        kept = []
        for v, _, _, s in ranked:
            if len(out) >= limit:
                break
            mine = self.hashes(s)
            if any(_near(mine, other) for other in kept):
                continue
            kept.append(mine)
            out.append((-v, s))
        return out


def _near(a, b):
    common = sum(1 for h in a if h in b)
    return common >= DUP * max(len(a), len(b))
