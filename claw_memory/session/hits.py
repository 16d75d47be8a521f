# claw_memory.session.hits: a query's second pass and its checks (session/search.py runs the
# first): its candidates (the best so far, by score and recency), read and checked: its hits.
# MIT license
#
# The second pass scores the records the first pass found, block by block, from the postings
# it kept in its pool (or read again from an index beyond it), then the records it scored
# from their text, keeping the best 2 x limit + 3 candidates; then (rest()) the files whose
# matches the first pass did not keep, read again one at a time and scored into the same best.
# The candidates are read file by file, block by block: a record's place from its block's
# record table, then the record from its file. A record that holds none of the query's terms
# (two terms sharing a bucket and key in a block) is left out; a position that holds no such
# record means the index is stale (Stale: it is written again and the query runs again).

from array import array

from .. import text
from .._compat import ENOENT, const
from . import format as fmt_
from . import indexer, tix

K1 = 1.2
B = 0.75
FAR = const(0x100000)  # a match whose postings are in the index, not in the pool
_WIN = const(128)  # a block's records scored at once (a merged block holds up to 1,024)
# bytes of postings beyond the pool read for a window: the gap to its first posting (2 bytes
# at most: ordinals are below 1,024), the gaps within it (under 128: one byte each), the
# gap to the next one's (2)
_WIN_READ = const(131)
_MATCHES = const(16)  # a block's matches at most: one a query term (search.TERMS_MAX)
_QUERY = const(512)  # characters and bytes of a query whose terms place an excerpt (search.QUERY_MAX)


class Stale(Exception):
    """An index names a position that holds no such record: write it again (args[0], the
    data file's path; None: the files in scope changed during the query, run it again)."""


class Again(Exception):
    """A file a first pass read could not be read again: it is left out (in the query's
    `exclude`, reported as skipped) and the query runs again without it (its candidates
    would have taken the places of others)."""


def verify(q, cands, limit, max_chars):
    """The best `limit` of the candidates `cands` (score()'s), their records read and
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
        before = out[:]
        try:
            _hits(q, file, cands[i:j], out, limit, max_chars)
        except OSError as e:
            if e.args and e.args[0] == ENOENT:
                raise Stale(None)  # (gone since the first pass: the listing changed)
            out[:] = before  # (none of a file left out: its session is reported skipped)
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
    f = q.take(fmt_.tix(path)) if cands[-1][3] >= 0 else None
    try:
        i = 0
        while i < len(cands):
            c = cands[i]
            if c[3] < 0:
                recs.append(c[4] + (c[0], c[1]))
                i += 1
                continue
            j = i  # (the candidates of one block: its record table read once)
            while j < len(cands) and cands[j][3] == c[3]:
                j += 1
            f.seek(c[3])
            last = max(x[4] for x in cands[i:j])
            try:
                for o, rec in enumerate(tix.Block(f.read(tix.BH), c[3]).records(f, last + 1)):
                    for x in cands[i:j]:
                        if x[4] == o:
                            recs.append(rec + (x[0], x[1]))
            except (ValueError, IndexError):
                raise Stale(path)  # (its record table damaged: the index is made again)
            i = j
    finally:
        if f is not None:
            q.held.give(f)
    lf = q.take(path)
    try:
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
    finally:
        q.held.give(lf)



def score(q, k, top=None):
    """The second pass: the best `k` candidates of the query `q` (search._Query), scored from
    the postings its first pass kept (in its pool, or read again from an index), and the
    records it scored from their text (a Top; given `top`, into it). An index that fails here
    is left out, and the rest scored again (its candidates took others' places)."""
    bad = []
    while True:
        t = Top(k) if top is None else top
        try:
            _score(q, t, bad)
            return t
        except _Bad:
            t.items = [c for c in t.items if c[2] not in bad]


class _Bad(Exception):
    pass


def _score(q, top, bad):
    acc = array("f", bytes(4 * _WIN))  # the scores of a window of a block's records
    # per match of a block: bytes of its postings read, the last ordinal, postings read
    cp = array("H", bytes(2 * _MATCHES))
    co = array("h", bytes(2 * _MATCHES))
    ca = array("H", bytes(2 * _MATCHES))
    m = 0
    f = None
    open_fi = -1
    pool = memoryview(q.pool)
    kept = Kept(q)  # (only when postings beyond the pool are read again)
    try:
        for j in range(len(q.bpos)):
            fi = q.bfile[j]
            n = q.bn[j]
            k = q.bm[j]
            if fi in bad:
                m += k
                continue
            dls = None  # (the block's lengths, read again for postings beyond the pool)
            for t in range(k):
                cp[t] = ca[t] = 0
                co[t] = -1
            order = order_of(q.korder[fi], q.bpos[j])
            w0 = 0
            while w0 < n:  # (a merged block's records, _WIN at a time)
                w1 = min(w0 + _WIN, n)
                for o in range(w1 - w0):
                    acc[o] = 0.0
                for t in range(k):
                    v = q.mterm[m + t]
                    size = v & 0xFFFF
                    p = cp[t]
                    if p >= size:
                        continue
                    far = v & FAR
                    if far:
                        try:
                            f, open_fi = _reopen(q, f, open_fi, fi, kept)
                            if dls is None:
                                f.seek(q.bpos[j])
                                dls = tix.Block(f.read(tix.BH), q.bpos[j]).lengths(f)
                            f.seek(q.mat[m + t] + p)
                            raw = f.read(min(size - p, _WIN_READ))
                        except OSError as e:
                            if e.args and e.args[0] == ENOENT:
                                raise Stale(None)  # (gone since the first pass)
                            q.lost(kept.get(fi), e)
                            bad.append(fi)
                            raise _Bad()
                        except ValueError:  # (its lengths damaged: short)
                            raise Stale(kept.get(fi)[1])
                        i = 0
                    else:
                        raw = pool[q.mat[m + t] : q.mat[m + t] + size]
                        lens = pool[q.mat[m + t] + size :]  # (by the posting's place)
                        i = p
                    w = q.idf[v >> 16 & 0xF] * (K1 + 1)
                    o = co[t]
                    at = ca[t]  # (the posting's place: its record's length in the pool)
                    end = len(raw)
                    try:  # (the pool's were read once in the first pass; others' may be damaged)
                        while i < end:
                            x = raw[i]
                            i2 = i + 1
                            if x > 127:  # (a varint of two bytes or more: most are one)
                                x, i2 = tix.unvarint(raw, i)
                            if o + x + 1 >= w1:
                                break  # (the next window's, or past the block: damaged)
                            i = i2
                            o += x + 1
                            dl = dls[o] if far else lens[at]
                            acc[o - w0] += w / (1 + q.norm(tix.unquant(dl)))
                            at += 1
                    except IndexError:
                        raise Stale(kept.get(fi)[1])
                    cp[t] = p + i if far else i
                    co[t] = o
                    ca[t] = at
                for o in range(w1 - w0):
                    if acc[o]:
                        top.push((round(acc[o], 4), order + w0 + o, fi, q.bpos[j], w0 + o))
                w0 = w1
            m += k
    finally:
        if f is not None:
            q.held.give(f)
        kept.close()
    nq = len(q.qh)
    for t in range(len(q.toff)):
        fi, off, kd = q.tfile[t], q.toff[t], q.tkdl[t]
        if fi in bad:
            continue
        top.push((round(q.bm25(q.ttf[t * nq : t * nq + nq], kd & 0xFFFFFF), 4),
                  order_of(q.korder[fi], off), fi, -1, (off, q.tlen[t], kd >> 24)))

def rest(q, top):
    """The files from the query `q`'s `cut` on, whose matches its first pass did not keep
    (only their statistics): walked again one at a time, each scored into `top` (score()'s)
    with the statistics of the whole scope; a file keeps its place in `kept` only while it
    has a candidate there. Its candidates."""
    q.keep = True
    q.clear()
    for i, file in enumerate(q.files()):
        if i < q.cut or i in q.failed or q.excluded(file[1]):
            continue
        try:
            q._file(file, i)
        except OSError as e:
            q.clear()
            q.lost(file, e)  # (its statistics counted: as a file lost after the first pass)
            continue
        fi = len(q.kept) - 1
        if len(q.bpos) or len(q.toff):
            q.hand = (fi, file)
            score(q, 0, top)
            q.hand = None
            q.clear()
            for c in top.items:
                if c[2] == fi:
                    break
            else:
                for a in (q.kept, q.korder, q.kpath):
                    a[fi:] = a[:0]
    return top.items


def _reopen(q, f, open_fi, fi, kept):
    if open_fi != fi:
        if f is not None:
            q.held.give(f)
        f = q.take(fmt_.tix(kept.get(fi)[1]))
    return f, fi


class Kept:
    """The kept files found again, by walking the listing forward to their places (asked for
    in ascending order; a place behind starts the listing again)."""

    def __init__(self, q):
        self.hand = q.hand  # (place in kept, file) of the file rest() scores
        self.files = q.files
        self.kept = q.kept
        self.kpath = q.kpath
        self.it = None
        self.at = -1
        self.file = None

    def get(self, fi):
        if self.hand is not None and self.hand[0] == fi:
            return self.hand[1]
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


def query_words(query):
    """The terms of `query` as text (a word's stem, a number, a CJK pair), for excerpt():
    made once for an answer's hits, not once a hit."""
    from ..terms import terms

    out = []
    for w in terms(text.to_bytes(query[:_QUERY])[:_QUERY]):
        try:
            out.append(w.decode())
        except UnicodeError:
            pass  # (a CJK pair the cut split)
    return out


def excerpt(t, words, n):
    """A hit's text `t` cut to `n` characters around the first of the query's terms
    (`words`: query_words()) it holds: a long record's part about the query, not its first
    `n` characters (from its start when that part is in them, or none is found)."""
    if len(t) <= n:
        return t
    low = t.lower()
    at = -1
    for w in words:
        i = low.find(w)
        if i >= 0 and (at < 0 or i < at):
            at = i
    if at < n - n // 4:  # (none found, or in the first n with room after it)
        return text.cut(t, n)
    return "..." + text.cut(t[at - n // 4 :], n - 3)


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
