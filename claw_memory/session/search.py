# claw_memory.session.search: BM25 over records (a record is the unit) across session logs
# and archive segments, through their text indexes (session/tix.py).
# MIT license
#
# The first pass walks each file's index once: every block's header (the collection's size
# and mean record length), its lengths and bucket directory, and the buckets of the query's
# terms (each term's document frequency); the postings it finds, each followed by the lengths
# of the records it names (not the whole block's: a term is in few of them), are kept in one
# byte pool (up to _POOL bytes; beyond that, where they are, to be read again). The second
# pass (session/hits.py) scores those records from the pool, keeping the best 2 x limit + 3
# candidates; then their records are read, file by file, and checked: a record that holds
# none of the query's terms (two terms sharing a bucket and key in a block) is left out; a
# position that holds no such record means the index is stale: it is written again and the
# query runs again.
# Records after the text index of a log being written (its last few turns, fewer than
# write.TAIL bytes) are read and scored directly; any other file's are indexed first. The
# pending turn is not searched. On a full flash (the index cannot be written), what a
# file's index lacks is scored from its text the same way, and nothing is kept of the write
# that failed: the first one ends the query's tries (FatFs programs sectors before it
# finds no room). A file
# that cannot be read (an I/O error other than "not found") is left out of the query,
# noted, and its session reported as skipped: one bad file does not hide the others (when it
# fails after the first pass, its candidates may have taken the places of others: the second
# pass scores again without it, and an answer short of `limit` after the candidates' check
# runs the query again without it, six times at most).
# Cost: littlefs looks a name up by reading its folder (5 to 30 KiB in a folder of tens of
# files), so the files a query opens are kept open for the next (session/held.py), a log
# found to match its index is not opened again for that, and a file is opened without a
# stat first.
# Heap: the files held.py keeps open, the pool, 9 bytes per block with matches and 8 per
# term match, 10 per file with matches (its place in the listing, its order and a hash of its path, not its id and path:
# the later passes walk the listing again to the few files they read, and a listing that
# changed meanwhile reruns the query), 14 bytes and one per query term per record scored
# from its text that matches, the candidates, one record. Once those pass _KEEP bytes (a
# whole root of thousands of sessions: about 120 bytes a log for 16 terms), the first pass
# keeps only the statistics of the files after, and the second walks those files again, one
# at a time, scoring each with the whole scope's statistics (their indexes read twice).

import math
from array import array

from .. import fsutil, text
from .._compat import ENOSPC, const
from . import format as fmt_
from . import indexer, tix
from .hits import B, FAR, K1, Again, Stale, path_hash, rest, score, verify
from .write import TAIL

QUERY_MAX = const(512)  # bytes of a query read
TERMS_MAX = const(16)  # distinct terms of a query used
LIMIT_MAX = const(50)
# Bytes of postings and their records' lengths kept from the first pass: 1 KiB reads as
# much as 2 did (the second pass reads the rest from the index, kept open: held.py)
_POOL = const(1024)
_KEEP = const(3072)  # bytes of matches, blocks and files the first pass keeps (hits.rest)
_AGAIN = const(6)  # runs again without files that failed after the first pass (each reads all)


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


def run(sessions, query, limit, ids, skipped=None):
    """Sessions.search: the sessions `ids` (None: every one) of `sessions`."""
    from .held import Held
    from .listing import search_files, search_scope
    from .repair import private

    if not isinstance(query, str):
        raise ValueError("query must be text")
    if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= LIMIT_MAX:
        raise ValueError("limit must be an integer, 1..%d" % LIMIT_MAX)
    sessions._settle()
    # (kept from one query to the next where only this program writes the folder)
    keep = sessions._held is not None or private(sessions)
    held = sessions._held or Held()
    if keep:
        sessions._held = held
    try:
        scope = search_scope(sessions, ids)  # (read once: the passes list the files again)
        return search(lambda: search_files(sessions, scope), query, limit,
                      sessions.max_message_chars, sessions.max_record_bytes, sessions._note,
                      skipped, held)
    finally:
        held.end(keep)  # (not kept: every file closed)
        for st in sessions._cache.values():
            st.tix_end = -1  # a search may have indexed a log


def search(files, query, limit, max_chars, max_record, note, skipped, held):
    """Hits best first in `files`, a function returning an iterable of (session id, path,
    archived, end, order, being written, check) (`end`: where the file's records end, -1:
    its size; `order`: its place in time, larger is newer; a log being written may keep up to
    TAIL bytes out of its index; `check`: compare its index with it first, else trust it);
    each hit a dict: session, role, text, score, archived, offset. A file that cannot be read
    is passed to `note` and its session id appended to the list `skipped` (once); `held`:
    a held.Held, the files it keeps open."""
    qh = query_hashes(query)
    if not qh:
        return []
    # (in the order of their buckets, the same in every block: a block's buckets are then read
    # forward, and two in one stretch of the file come from littlefs's cache of it, not the
    # flash: a chat's query read 9 KiB less of 274)
    qh.sort(key=lambda h: h & tix.KEY)
    exclude = []  # (path, session id) of files left out after a first pass had them
    tries = 3
    again = _AGAIN
    while tries:
        lost = []  # (this run's: a file an earlier run could not read may read now)
        q = _Query(qh, max_record, files, note, lost, exclude, again > 0, held)
        try:
            hits = q.run(limit, max_chars)
        except Stale as e:
            tries -= 1
            if e.args[0] is not None:
                fsutil.remove(fmt_.tix(e.args[0]))
                held.forget(e.args[0])  # (compared with its log again, not trusted)
            continue
        except Again:
            again -= 1  # (files in `exclude` whose candidates took the places of others)
            continue
        _report(skipped, exclude, lost)
        return hits
    _report(skipped, exclude, ())
    return []


def _report(skipped, exclude, lost):
    # The sessions left out: the files excluded on a run again, and the last run's
    if skipped is not None:
        for sid in [x[1] for x in exclude] + list(lost):
            if sid not in skipped:
                skipped.append(sid)


class _Query:
    def __init__(self, qh, max_record, files, note, skipped, exclude, again, held):
        self.qh = qh
        self.held = held
        self.exclude = exclude
        self.again = again  # whether it may run again without a file that failed (lost())
        self.dropped = False  # a file's candidates dropped in their check
        self.files = files
        self.max_record = max_record
        self.note = note
        self.skipped = [] if skipped is None else skipped
        self.df = [0] * len(qh)
        self.keep = True  # whether the first pass keeps matches (not only statistics)
        self.cut = -1  # the place in the listing from which it did not (hits.rest)
        self.failed = []  # the places of the files the first pass left out (few)
        self.hand = None  # (see hits.Kept)
        self.full = False  # an index write failed for want of room: no other is tried
        self.n = 0  # records in scope
        self.sumdl = 0
        self.kept = array("H")  # the files with matches (their places in the listing)
        self.korder = array("I")  # and their orders (see hits.order_of)
        self.kpath = array("I")  # and their paths' hashes (_Kept checks it found them)
        self.pool = bytearray(_POOL)
        self.npool = 0  # bytes of the pool in use
        # per block with matches: its file (in kept), position, records, matches
        self.bfile = array("H")
        self.bpos = array("I")
        self.bn = array("H")
        self.bm = array("B")
        # per match: query term << 16 | byte length (| FAR), where (in the pool: the postings,
        # then one length per posting; FAR: the postings in the index)
        self.mterm = array("I")
        self.mat = array("I")
        # per record scored from its text that matches (after an index's end; a whole file
        # on a full flash): its file (in kept), offset, length, type << 24 | length in
        # terms, and len(qh) bytes of term counts (14 + len(qh) bytes a record)
        self.tfile = array("H")
        self.toff = array("I")
        self.tlen = array("I")
        self.tkdl = array("I")
        self.ttf = bytearray()

    def take(self, path):
        """`path` open for the candidates' pass (held.Held.open: give it back to self.held)."""
        return self.held.open(path)

    def run(self, limit, max_chars):
        for i, file in enumerate(self.files()):
            if self.excluded(file[1]):
                continue
            marks = self._mark()
            try:
                self._file(file, i)
            except OSError as e:
                self._undo(marks)
                self.skip(file, e)
                self.failed.append(i)
            if self.keep and self._held() > _KEEP:
                self.keep = False
                self.cut = i + 1
        if not self.n:
            return []
        self.avg = self.sumdl / self.n
        self.idf = [math.log(1 + (self.n - d + 0.5) / (d + 0.5)) for d in self.df]
        top = score(self, 2 * limit + 3)
        cands = rest(self, top) if self.cut >= 0 else top.items
        # what the first pass kept is no longer needed: the records' reading below has its room
        self.pool = self.bfile = self.bpos = self.bn = self.bm = None
        self.mterm = self.mat = self.tfile = self.toff = self.tlen = self.tkdl = self.ttf = None
        hits = verify(self, cands, limit, max_chars)
        if self.dropped and len(hits) < limit and self.again:
            # (the dropped file's candidates had taken others' places; a full answer is
            # right as it is: every other candidate scored at most what it holds)
            raise Again()
        return hits

    def _held(self):
        return (9 * len(self.bpos) + 8 * len(self.mat) + 10 * len(self.kept)
                + (14 + len(self.qh)) * len(self.toff))

    def clear(self):
        """The matches kept so far let go (hits.rest scores the files one at a time)."""
        self._undo((0, 0, 0, 0, self.n, self.sumdl, self.df))

    def excluded(self, path):
        return self.exclude and _listed(self.exclude, path)

    def norm(self, dl):
        return K1 * (1 - B + B * dl / self.avg)

    def bm25(self, tf, dl):
        norm = self.norm(dl)
        s = 0.0
        for i, c in enumerate(tf):
            if c:
                s += self.idf[i] * c * (K1 + 1) / (c + norm)
        return s

    def skip(self, file, e):
        # A file that cannot be read: left out, and said so (never "no turn yet")
        if self.note:
            self.note("search: %s left out, not readable: %r" % (file[1], e))
        if file[0] not in self.skipped:
            self.skipped.append(file[0])

    def lost(self, file, e):
        """A file that failed after the first pass: left out. The second pass scores again
        without it (from RAM); the candidates' check drops it, and the query runs again
        without it when the answer falls short (run())."""
        self.skip(file, e)  # (in this run's list: a run again reports it from `exclude`)
        self.exclude.append((file[1], file[0]))
        self.dropped = True

    # -- the first pass ----------------------------------------------------------------

    def _file(self, file, place):
        # `check`: compare the index's last probe with the file (a log another program may
        # have rewritten); a segment, or a log whose index this program just wrote or found
        # matching it (the log not written since: held.py), is trusted (a stale one shows
        # when a candidate's record is read: Stale).
        path, end, tail, check = file[1], file[3], TAIL if file[5] else 0, file[6]
        fi = len(self.kept)
        marks = self._mark()
        lf = None
        known = self.held.checked(path) if check else -1
        if known >= 0:
            check = False
            end = known
        if check or end < 0:
            lf = self.held.open(path, True)
            if lf is None:  # a session the chat map names that has no turn yet
                return
        found = False
        try:
            if end < 0:
                end = lf.seek(0, 2)
            at = self._blocks(path, lf if check else None, fi)
            if (at < 0 or end - at > tail) and self._index(path, end):
                self._undo(marks)
                at = self._blocks(path, None, fi)
                if at < 0:
                    raise Stale(path)  # (not after a fresh write: the file changed meanwhile)
            if check and at >= 0:
                self.held.check(path, end)
            at = max(at, 0)  # (not indexed, on a full flash: every record from its text)
            if at < end:
                if lf is None:
                    lf = self.held.open(path)
                self._tail(fi, lf, at, end)
            found = len(self.bpos) > marks[0] or len(self.toff) > marks[2]
        finally:
            if lf is not None:
                self.held.give(lf)
        if found:
            self.kept.append(place)
            self.korder.append(file[4])
            self.kpath.append(path_hash(file[1]))

    def _index(self, path, end):
        # The index of `path` brought up to `end`; False when the flash is full: nothing of
        # the attempt is left (the caller scores what the index lacks from the text, as a
        # log's last turns are: a search answers on a full flash, a little slower). After
        # one such failure the query writes no other index: on a full FAT volume every
        # attempt programs sectors before it fails (a whole-root search of a root ESP-Claw
        # wrote programmed 24 MB trying each of its 2,000 sessions in turn).
        if self.full:
            return False
        try:
            indexer.update(path, self.max_record, end)
            return True
        except OSError as e:
            if e.args[0] != ENOSPC:
                raise
            self.full = True
            fsutil.remove(fmt_.tix(path) + fsutil.TMP)  # (a rewrite's; an append's is undone)
            if self.note:
                self.note("search: %s scored from its text, its index not written: %r" % (path, e))
            return False

    def _mark(self):
        return (len(self.bpos), len(self.mat), len(self.toff), self.npool, self.n,
                self.sumdl, list(self.df))

    def _undo(self, marks):
        # (MicroPython's arrays and bytearrays shrink by slice assignment, not `del`)
        nb, nm, nt, self.npool, self.n, self.sumdl, self.df = marks
        for a in (self.bfile, self.bpos, self.bn, self.bm):
            a[nb:] = a[:0]
        self.mterm[nm:] = self.mterm[:0]
        self.mat[nm:] = self.mat[:0]
        for a in (self.tfile, self.toff, self.tlen, self.tkdl):
            a[nt:] = a[:0]
        self.ttf[nt * len(self.qh):] = b""

    def _blocks(self, path, lf, fi):
        """Walk the index of `path`: statistics and matches; where its whole blocks end (a
        torn last block, what FatFs kept of an append that failed, is left to the caller: it
        writes the index again or, on a full flash, scores those records from their text),
        -1 when it is damaged or (with `lf`, the data open) does not match the data (nothing
        of it kept)."""
        marks = self._mark()
        f = self.held.open(fmt_.tix(path), True)
        if f is None:
            return 0
        try:
            size = f.seek(0, 2)
            f.seek(0)
            if size < tix.HDR or f.read(tix.HDR) != tix.MAGIC:
                return -1
            pos = tix.HDR
            last = None
            damaged = False
            while pos < size:
                raw = f.read(tix.BH)
                if len(raw) < tix.BH:
                    break  # (torn)
                b = tix.Block(raw, pos)
                if not b.ok or (last and b.start < last.end):
                    self._undo(marks)
                    return -1
                if b.next() > size:
                    break  # (torn)
                try:
                    self._block(f, b, fi)
                except (ValueError, IndexError):
                    damaged = True  # (a block's body: the index is written again whole)
                    break
                last = b
                pos = b.next()
                f.seek(pos)
        finally:
            self.held.give(f)
        if damaged:
            self._undo(marks)
            fsutil.remove(fmt_.tix(path))  # (not caught up by an append: made again)
            return -1
        if lf is not None and last is not None and not last.matches(lf):
            self._undo(marks)
            return -1
        return last.end if last is not None else 0

    def _block(self, f, b, fi):
        self.n += b.n
        self.sumdl += b.sumdl
        dls, d = b.head(f)
        k = 0
        for i, h in enumerate(self.qh):
            got = b.find(f, d, h)
            if got is None:
                continue
            self.df[i] += got[2]
            if not self.keep:
                continue  # (statistics only: hits.rest reads it again)
            if self.npool + got[1] + got[2] <= _POOL:
                self.mterm.append(i << 16 | got[1])
                self.mat.append(self._keep(got[3], dls))
            else:
                self.mterm.append(i << 16 | got[1] | FAR)
                self.mat.append(got[0])
            k += 1
        if k:
            self.bfile.append(fi)
            self.bpos.append(b.pos)
            self.bn.append(b.n)
            self.bm.append(k)

    def _keep(self, raw, dls):
        # The postings `raw` into the pool, then the length of each record they name (`dls`:
        # the block's); where they are
        at = self.npool
        pool = self.pool
        pool[at : at + len(raw)] = raw
        p = at + len(raw)
        o = -1
        i = 0
        while i < len(raw):
            x = raw[i]
            i += 1
            if x > 127:  # (a varint of two bytes or more: most are one)
                x, i = tix.unvarint(raw, i - 1)
            o += x + 1
            pool[p] = dls[o] if o < len(dls) else 0
            p += 1
        self.npool = p
        return at

    def _tail(self, fi, lf, start, end):
        # Records after the index's end, scored from their text: all count in the
        # statistics, the ones that hold a query term are kept.
        for off, ln in indexer.scan(lf, start, end):
            if not ln:
                continue
            k, rec = indexer.read_record(lf, off, ln, self.max_record)
            if not k:
                continue
            tf, dl = indexer.counts(indexer.record_text(rec, k), self.qh)
            rec = None
            self.n += 1
            self.sumdl += dl
            if any(tf):
                for i, c in enumerate(tf):
                    self.df[i] += c > 0
                if not self.keep:
                    continue
                self.tfile.append(fi)
                self.toff.append(off)
                self.tlen.append(ln)
                self.tkdl.append(k << 24 | min(dl, 0xFFFFFF))
                self.ttf.extend(bytes(tf))


def _listed(exclude, path):
    for p, _ in exclude:
        if p == path:
            return True
    return False
