# claw_memory.session.hits: a query's candidates (the best so far, by score and recency), read and
# checked: its hits (session/search.py).
# MIT license
#
# The candidates are read file by file, block by block: a record's place from its block's
# record table, then the record from its file. A record that holds none of the query's terms
# (two terms sharing a bucket and key in a block) is left out; a position that holds no such
# record means the index is stale (Stale: it is written again and the query runs again).

from .. import fsutil, text
from .._compat import ENOENT
from . import format as fmt_
from . import indexer, tix


class Stale(Exception):
    """An index names a position that holds no such record: write it again (args[0], the
    data file's path; None: the files in scope changed during the query, run it again)."""


class Again(Exception):
    """A file a first pass read could not be read again: it is left out (in the query's
    `exclude`, reported as skipped) and the query runs again without it (its candidates
    would have taken the places of others)."""


def verify(q, cands, limit, max_chars):
    """The best `limit` of the candidates `cands` (_Query._score's), their records read and
    checked, as hits; Stale when an index names a position that holds no such record."""
    kept = Kept(q)
    try:
        return _check(q, cands, limit, max_chars, kept)
    finally:
        kept.close()


def _check(q, cands, limit, max_chars, kept):
    out = []
    cands.sort(key=lambda c: (c[2], c[3]))  # file by file, block by block
    i = 0
    while i < len(cands):
        fi = cands[i][2]
        j = i
        while j < len(cands) and cands[j][2] == fi:
            j += 1
        file = kept.get(fi)
        try:
            _hits(q, file, cands[i:j], out, limit, max_chars)
        except OSError as e:
            if e.args and e.args[0] == ENOENT:
                raise Stale(None)  # (gone since the first pass: the listing changed)
            q.lost(file, e)
        i = j
    out.sort(key=lambda r: (r[0], r[1]), reverse=True)
    res = []
    for score, _, hit in out[:limit]:
        hit["score"] = score
        res.append(hit)
    return res


def _hits(q, file, cands, out, limit, max_chars):
    # One file's candidates read and checked into `out` (the best `limit` so far)
    sid, path, archived = file[:3]
    qh = q.qh
    recs = []  # (offset, length, type, score, order) of this file's candidates
    with open(path + fmt_.TIX, "rb") if cands[-1][3] >= 0 else fsutil.Nothing() as f:
        for c in cands:
            if c[3] < 0:
                recs.append(c[4] + (c[0], c[1]))
                continue
            f.seek(c[3])
            rec = tix.Block(f.read(tix.BH), c[3]).record(f, c[4])
            recs.append(rec + (c[0], c[1]))
    with open(path, "rb") as lf:
        size = lf.seek(0, 2)
        for off, ln, k, score, order in recs:
            got, rec = indexer.read_record(lf, off, ln, q.max_record) if (
                off + ln <= size) else (0, None)
            if got != k:
                raise Stale(path)
            tf, dl = indexer.counts(indexer.record_text(rec, k), qh)
            if not any(tf):
                continue  # a collision of two terms' bucket and key in a block
            key = (round(q.bm25(tf, dl), 4), order)
            if len(out) == limit and key <= out[-1][:2]:
                continue  # (only the best `limit` get their text made)
            out.append(key + ({
                "session": sid, "role": indexer.ROLES[k],
                "text": text.clean(indexer.shown_text(rec, k), max_chars), "score": 0.0,
                "archived": archived, "offset": off},))
            rec = None
            out.sort(key=lambda r: (r[0], r[1]), reverse=True)
            del out[limit:]



class Kept:
    """The kept files found again, by walking the listing forward to their places (asked for
    in ascending order; a place behind starts the listing again)."""

    def __init__(self, q):
        self.files = q.files
        self.kept = q.kept
        self.kpath = q.kpath
        self.it = None
        self.at = -1
        self.file = None

    def get(self, fi):
        want = self.kept[fi]
        if self.it is None or want < self.at:
            self.close()
            self.it = iter(self.files())
            self.at = -1
        while self.at < want:
            file = next(self.it, None)
            if file is None:
                break
            self.at += 1
            self.file = file
        if self.at != want or path_hash(self.file[1]) != self.kpath[fi]:
            raise Stale(None)
        return self.file

    def close(self):
        # (a listing left open would hold its directory until garbage is collected)
        close = getattr(self.it, "close", None)  # (a generator: search_files)
        if close is not None:
            close()
        self.it = None


def path_hash(path):
    # (hash() is the same for the same text within a run, and costs no Python loop)
    return hash(path) & 0x3FFFFFFF


class Top:
    """The best `k` candidates: (score, order, file, block position or -1, ordinal or
    (offset, length, type))."""

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


def order_of(order, off):
    # Recency, the tie-breaker: a newer file first (the log after its archive), then the
    # later record in it (`order`: the file's, search()'s).
    return order * (1 << 24) + off
