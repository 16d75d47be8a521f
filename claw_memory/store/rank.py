# claw_memory.store.rank: ranked recall: BM25 over the active items' terms, from RAM.
# MIT license
#
# What a query needs of each item (a table slot) is kept in RAM, not its text: the distinct
# terms (claw_memory.terms) of its content, keywords, tags and labels, each a 20-bit hash with
# its count over the four fields, as 3-byte postings in one pool (bytes 0-1: the hash's low 16
# bits; byte 2: its high 4 bits << 4 | the count, at most 15); per slot where its postings
# start, how many, and its length in terms. A query finds each of its terms in the pool with
# bytearray.find (C speed; a hit off a 3-byte boundary is skipped), maps a hit to its slot by
# walking the slots in pool order alongside (hits come in that order), and scores BM25; only
# the items it returns are read from flash.
# Each field counts a term once per occurrence, which weighs the fields as ESP-Claw's
# normalisation fills them: keywords occur in the content or tags and are topped up from the
# tags, labels are the tags; so a content word counts 1, a keyword found in the content 2, a
# tag 3 (tag, keyword, label).
# A change appends the new postings and leaves the old ones as dead bytes, moved out in place
# when the pool is full; compaction and open build the pool anew (no rebuild per change).
# 20-bit hashes: a query of 8 terms over 2000 postings meets a false hit about once in 60
# queries, and then only adds a small score to one item.

import math
from array import array

from .. import item as itm
from .. import text
from .._compat import const
from ..terms import term_hash, terms

K1 = 1.2
B = 0.75
TERMS_MAX = const(16)  # postings kept per item: the most frequent, then the first (worst case
# 128 items x 16 x 3 bytes = 6 KiB; the facts an extraction stores have 8 to 16 terms)
_TF_MAX = const(15)
_HASH = const(0xFFFFF)
QUERY_MAX = const(512)  # bytes of a query read (a question, not a document: bounded work)
_POOL_MAX = const(65535)  # postings (starts are 16-bit); past it an item gets none
_HALF_LIFE = const(2592000)  # 30 days: recency's boost halves
_CLOCK_SET = const(1600000000)  # a board whose clock reads earlier has not set it
RECENT = 0.1  # the boost of an item updated just now (x1.1), half of it at 30 days
RELATIVE = 0.25  # results under this share of the best score are noise (a word like "user")
DUP = 0.85  # share of the larger term set two results have in common to be near-duplicates


def item_terms(it):
    """([20-bit hash], [count], length) of an item's distinct terms over its content,
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
    """The distinct 20-bit term hashes of a query (text; its first QUERY_MAX bytes)."""
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
        self.pool = bytearray(3 * TERMS_MAX * min(slots, 128))
        self.used = 0  # postings in the pool, dead ones included
        self.live = 0  # postings of live slots
        self.docs = 0  # slots with terms
        self.total = 0  # their lengths
        self._order = None  # slots with postings in pool order (built by a query)

    def nbytes(self):
        """RAM held by the statistics' arrays."""
        return len(self.pool) + 4 * len(self.cnt)

    def _room(self, slot):
        if slot < len(self.cnt):
            return
        size = max(2 * len(self.cnt), slot + 1, 16)
        start = array("H", bytes(2 * size))
        start[: len(self.start)] = self.start
        self.start = start
        for name in ("cnt", "dl"):
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
        self._order = None  # (again below: a repack for this slot's room builds one without it)
        if it["deleted"]:
            return
        hs, ws, dl = item_terms(it)
        if not dl:
            return
        self.docs += 1
        self.total += dl
        self.dl[slot] = dl
        n = len(hs)
        if 3 * (self.used + n) > len(self.pool):
            self.repack(n)
        if self.used + n > _POOL_MAX:
            return  # (only a records file of thousands of items before its compaction)
        at = 3 * self.used
        pool = self.pool
        for h, w in zip(hs, ws):
            pool[at] = h & 0xFF
            pool[at + 1] = (h >> 8) & 0xFF
            pool[at + 2] = ((h >> 16) << 4) | w
            at += 3
        self.start[slot] = self.used
        self.cnt[slot] = n
        self.used += n
        self.live += n
        self._order = None

    def repack(self, need=0):
        """Drop the dead postings (the live ones moved down in place, a few bytes at a time),
        then grow the pool when `need` more do not fit (with an eighth to spare): at capacity
        the pool is rewritten where it is, not allocated again."""
        order = self.order()
        pool = self.pool
        at = 0
        for s in order:
            a = self.start[s]
            n = self.cnt[s]
            if a != at:
                pool[3 * at : 3 * (at + n)] = pool[3 * a : 3 * (a + n)]
                self.start[s] = at
            at += n
        self.used = at
        size = at + need
        if 3 * size > len(pool):
            grown = bytearray(3 * (size + size // 8 + 8))
            grown[: 3 * at] = memoryview(pool)[: 3 * at]
            self.pool = grown
        self._order = order

    def order(self):
        """The slots with postings, in pool order."""
        if self._order is None:
            start = self.start
            self._order = sorted((s for s in range(len(self.cnt)) if self.cnt[s]),
                                 key=lambda s: start[s])
        return self._order

    def hashes(self, slot):
        """The 20-bit term hashes of a slot."""
        p = self.pool
        a = 3 * self.start[slot]
        return [p[i] | p[i + 1] << 8 | (p[i + 2] >> 4) << 16 for i in range(a, a + 3 * self.cnt[slot], 3)]

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
        pool, end = self.pool, 3 * self.used
        for q in qh:
            pat = bytes((q & 0xFF, (q >> 8) & 0xFF))
            hi = q >> 16
            hits = []
            pos = 0
            j = 0  # hits come in pool order: the owning slot's place in `order` only grows
            while True:
                p = pool.find(pat, pos, end)
                if p < 0:
                    break
                if p % 3:
                    pos = p + 1
                    continue
                pos = p + 3
                if pool[p + 2] >> 4 != hi:
                    continue
                k = p // 3
                while j < last and start[order[j + 1]] <= k:
                    j += 1
                s = order[j] if order else -1
                if s >= 0 and start[s] <= k < start[s] + cnt[s]:  # else a dead posting
                    hits.append((s, pool[p + 2] & 0xF))
            if not hits:
                continue
            df = len(hits)
            idf = math.log(1 + (self.docs - df + 0.5) / (df + 0.5))
            for s, tf in hits:
                if allowed is not None and s not in allowed:
                    continue
                norm = K1 * (1 - B + B * self.dl[s] / avg)
                out[s] = out.get(s, 0.0) + idf * tf * (K1 + 1) / (tf + norm)
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
