# claw_memory.session.search: BM25 over records (a record is the unit) across session logs
# and archive segments, through their text indexes (session/tix.py).
# MIT license
#
# Two passes over the blocks of every file in scope. The first reads each block's header,
# lengths and bucket directory, and the buckets of the query's terms: the collection's size,
# its mean record length and each term's document frequency, and where each term's postings
# are (a few bytes per match, in arrays). The second reads only those postings and scores
# their records, keeping the best 4 x limit candidates. Then the best candidates' records
# are read and checked: a record that holds none of the query's terms (two terms sharing a
# bucket and key in a block) is left out; a position that holds no record, or another type
# of record, means the index is stale: it is written again and the query runs again.
# Records logged after the text index of a session being written ends (the last few turns,
# fewer than TAIL bytes: the persist path indexes more) are read and scored directly; any
# other file's are indexed first. The pending turn is not searched.
# Heap: the match arrays (6 bytes per block and query term that match), the candidates, one
# block's lengths and one record at a time.

import math
from array import array

from .. import fsutil, text
from .._compat import const
from . import format as fmt_
from . import indexer, tix
from .write import TAIL

K1 = 1.2
B = 0.75
QUERY_MAX = const(512)  # bytes of a query read
TERMS_MAX = const(16)  # distinct terms of a query used
LIMIT_MAX = const(50)


class Stale(Exception):
    """An index names a position that holds no such record: write it again."""


def query_hashes(query):
    """The distinct index hashes of a query's terms (its first QUERY_MAX bytes, at most
    TERMS_MAX terms)."""
    out = []
    for h in indexer.hashes(text.to_bytes(query)[:QUERY_MAX]):
        if h not in out:
            out.append(h)
            if len(out) == TERMS_MAX:
                break
    return out


def search(files, query, limit, max_chars, max_record):
    """Hits best first in `files`, a function returning an iterable of (session id, path,
    archived, end, order, being written) (`end`: where the file's records end, `order`: its
    place in time, larger is newer; a log being written may keep up to TAIL bytes out of its
    index); each hit a dict: session, role, text, score, archived, offset."""
    qh = query_hashes(query)
    if not qh:
        return []
    for _ in range(3):
        try:
            return _search(files(), qh, limit, max_chars, max_record)
        except Stale as e:
            fsutil.remove(e.args[0] + fmt_.TIX)
    return []


class _Top:
    """The best `k` candidates: (score, order, file, block position or -1, ordinal or
    (offset, length, type, terms))."""

    def __init__(self, k):
        self.k = k
        self.items = []

    def push(self, item):
        it = self.items
        if len(it) >= self.k and item[:2] <= it[-1][:2]:
            return
        i = len(it)
        while i and it[i - 1][:2] < item[:2]:
            i -= 1
        it.insert(i, item)
        del it[self.k :]


def _search(files, qh, limit, max_chars, max_record):
    nq = len(qh)
    df = [0] * nq
    stats = [0, 0]  # records, sum of their lengths in terms
    kept = []  # the files with matches: only they are read again
    bfile = array("H")  # per block with matches: its file (in kept), position, matches
    bpos = array("I")
    nmatch = array("B")
    mpos = array("I")  # per match: position of the term's postings in the index
    mterm = array("H")  # per match: query term << 10 | byte length of the postings
    tails = []  # matching records after an index's end: (file, offset, length, type, terms, tf)
    for file in files:
        path, end = file[1], file[3]
        fi = len(kept)
        at = _ready(path, end, TAIL if file[5] else 0, max_record)
        hits = len(tails)
        if at < end:
            _tail(fi, path, at, end, qh, max_record, tails, df, stats)
        found = len(bpos)
        if at:
            _blocks(path, at, qh, fi, df, stats, bfile, bpos, nmatch, mpos, mterm)
        if len(tails) > hits or len(bpos) > found:
            kept.append(file)
    if not stats[0]:
        return []
    avg = stats[1] / stats[0]
    idf = [math.log(1 + (stats[0] - d + 0.5) / (d + 0.5)) for d in df]

    def bm25(tf, dl):
        norm = K1 * (1 - B + B * dl / avg)
        s = 0.0
        for i, c in enumerate(tf):
            if c:
                s += idf[i] * c * (K1 + 1) / (c + norm)
        return s

    top = _Top(4 * limit)
    m = 0
    for j in range(len(bpos)):
        fi = bfile[j]
        pos = bpos[j]
        tfs = {}
        with open(kept[fi][1] + fmt_.TIX, "rb") as f:
            f.seek(pos)
            b = tix.Block(f.read(tix.BH), pos)
            dls = b.head(f)[0]
            for _ in range(nmatch[j]):
                f.seek(mpos[m])
                i = mterm[m] >> 10
                for o, c in tix.postings(f.read(mterm[m] & 1023)):
                    t = tfs.get(o)
                    if t is None:
                        t = tfs[o] = [0] * nq
                    t[i] = c
                m += 1
        for o, t in tfs.items():
            if o < b.n:
                top.push((round(bm25(t, tix.unquant(dls[o])), 4), _order(kept[fi], b.start + o),
                          fi, pos, o))
    for fi, off, ln, k, dl, tf in tails:
        top.push((round(bm25(tf, dl), 4), _order(kept[fi], off), fi, -1, (off, ln, k)))
    return _verify(kept, top.items, qh, bm25, limit, max_chars, max_record)


def _blocks(path, at, qh, fi, df, stats, bfile, bpos, nmatch, mpos, mterm):
    # The first pass over one index: statistics, and where the query's terms are.
    with open(path + fmt_.TIX, "rb") as f:
        pos = tix.HDR
        while True:
            f.seek(pos)
            raw = f.read(tix.BH)
            if len(raw) < tix.BH:
                return
            b = tix.Block(raw, pos)
            if not b.ok or b.end > at:
                return
            stats[0] += b.n
            stats[1] += b.sumdl
            d = b.head(f)[1]
            k = 0
            for i, h in enumerate(qh):
                got = b.find(f, d, h)
                if got is not None:
                    df[i] += got[2]
                    mpos.append(got[0])
                    mterm.append(i << 10 | got[1])
                    k += 1
            if k:
                bfile.append(fi)
                bpos.append(pos)
                nmatch.append(k)
            pos = b.next()


def _order(file, off):
    # Recency, the tie-breaker: a newer file first (the log after its archive), then the
    # later record in it.
    return file[4] * (1 << 24) + off


def _ready(path, end, tail, max_record):
    """Where the index of `path` ends (0: none); indexed first when more than `tail` bytes
    wait, or when it no longer matches the file."""
    with open(path, "rb") as f:
        at = indexer.covered(path, end, f)
    if at < 0 or end - at > tail:
        at = indexer.update(path, max_record, end)
    return at


def _tail(fi, path, start, end, qh, max_record, tails, df, stats):
    # Records after the index's end, scored from their text: all count in the statistics,
    # the ones that hold a query term are kept.
    with open(path, "rb") as f:
        for off, ln in indexer.scan(path, start, end):
            if not ln:
                continue
            k, txt = indexer.read_record(f, off, ln, max_record)
            if not k:
                continue
            hs = indexer.hashes(txt)
            tf = [min(hs.count(h), 4) for h in qh]
            stats[0] += 1
            stats[1] += len(hs)
            if any(tf):
                for i, c in enumerate(tf):
                    df[i] += c > 0
                tails.append((fi, off, ln, k, len(hs), tf))


def _verify(files, cands, qh, bm25, limit, max_chars, max_record):
    out = []
    recs = {}  # record tables of the blocks read, by (file, position)
    for score, order, fi, pos, o in cands:
        sid, path, archived, end = files[fi][:4]
        if pos >= 0:
            key = (fi, pos)
            table = recs.get(key)
            if table is None:
                with open(path + fmt_.TIX, "rb") as f:
                    f.seek(pos)
                    table = recs[key] = tix.Block(f.read(tix.BH), pos).records(f)
            off, ln, k = table[o]
        else:
            off, ln, k = o
        with open(path, "rb") as f:
            got, txt = indexer.read_record(f, off, ln, max_record) if off + ln <= end else (0, "")
        if got != k:
            raise Stale(path)
        hs = indexer.hashes(txt)
        tf = [min(hs.count(h), 4) for h in qh]
        if not any(tf):
            continue  # a collision of two terms' bucket and key in a block
        out.append((round(bm25(tf, len(hs)), 4), order, {
            "session": sid, "role": indexer.ROLES[k], "text": text.clean(txt, max_chars),
            "score": 0.0, "archived": archived, "offset": off}))
    out.sort(key=lambda r: (r[0], r[1]), reverse=True)
    res = []
    for score, _, hit in out[:limit]:
        hit["score"] = score
        res.append(hit)
    return res
