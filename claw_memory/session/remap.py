# claw_memory.session.remap: a compaction's text indexes, made from the old log's (the new
# log's and its archive segment's): blocks split at the cut, their postings copied, or
# refiltered without the records that moved, and merged while they fit a block.
# MIT license

import struct
from array import array

from .. import fsutil
from . import format as fmt_
from . import indexer, tix, tixmerge


def remap(log, new_log, seg, moves, cut, out, aout, limit):
    """The text indexes of a compacted log and of its new archive segment `seg` (None: no
    archive), from the old log's (which must cover it whole): `moves` gives (old offset,
    length, offset in the new log or -1, offset in the segment or -1) of every record of the
    old log in order; the segment begins with the log's first `cut` bytes as they are.
    Blocks before `cut` go to the segment's index `aout`; a block across `cut` is indexed
    again from its records (a merged one is split as later blocks are); later blocks are
    split between the two indexes with new record tables and probes, their postings copied
    or refiltered. What follows each other in one
    index is merged while it fits a block: a compaction splits every block, and a query
    reads an index block by block (merged, a compacted session's indexes keep about half
    their blocks, with fewer bytes: a term is named once a block). Writes to
    the Buffered `out` and `aout`; False when the old index does not name the log's records
    (what was written is of no use: the caller drops it)."""
    blks, _ = tix.blocks(fmt_.tix(log))
    if blks is None:
        return False
    mv = iter(moves)
    m = next(mv, None)
    with open(log, "rb") as f, open(fmt_.tix(log), "rb") as fi, open(new_log, "rb") as fn, (
            open(seg, "rb") if seg else fsutil.Nothing()) as fa:
        merged = (_Merged(out, fn), _Merged(aout, fa))
        for b in blks:
            # (a merged block of few records can hold ten times a block's postings, which the
            # Builder would hold as one list: its record lengths' sum bounds them)
            if b.n > tix.RECS or b.sumdl > tix.POSTS:
                ok, m = _split(b, m, mv, merged, fi)
                if not ok:
                    return False
                continue
            if b.end <= cut:
                # to the segment's index at the same offsets, once its records are the log's
                # (a rewrite by another program that left the probed bytes as they were can
                # leave an index naming others; a segment's index is never probed again)
                ents = []
                for j, (off, ln, k) in enumerate(b.records(fi)):
                    while m is not None and m[0] < off:
                        m = next(mv, None)
                    if m is None or (m[0], m[1]) != (off, ln):
                        return False
                    ents.append((off, ln, k, j, off))
                    m = next(mv, None)
                if aout is not None:
                    merged[1].add(b, ents, None, False, fi, f, limit)
                continue
            parts = (([], bytearray(b"\xff" * b.n)), ([], bytearray(b"\xff" * b.n)))
            for j, (off, ln, k) in enumerate(b.records(fi)):
                while m is not None and m[0] < off:
                    m = next(mv, None)
                if m is None or m[0] != off or m[1] != ln:
                    return False
                for p, to, o in ((parts[0], m[2], out), (parts[1], m[3], aout)):
                    if to >= 0 and o is not None:
                        p[1][j] = len(p[0])
                        p[0].append((to, ln, k, j, off))
                m = next(mv, None)
            for (ents, renum), mg in zip(parts, merged):
                if ents:
                    mg.add(b, ents, renum, b.start < cut, fi, f, limit)
        for mg in merged:
            mg.flush()
    return True


def _split(b, m, mv, merged, fi):
    # A merged block (session/tixmerge.py) between the new log's index and the segment's,
    # streamed: each side's ordinals, lengths and record table made as its records are met
    # (a list of a thousand records' places would take ~40 KiB), its postings renumbered as
    # tixmerge writes them. (Whether the moves named its records, the moves' next.)
    dls = b.lengths(fi)
    sides = []
    for mg in merged:
        sides.append([array("H", b"\xff\xff" * b.n), bytearray(), bytearray(), -1, 0, 0]
                     if mg.out is not None else None)
    for j, (off, ln, k) in enumerate(b.records(fi)):
        while m is not None and m[0] < off:
            m = next(mv, None)
        if m is None or m[0] != off or m[1] != ln:
            return False, m
        for s, to in zip(sides, m[2:4]):
            if to >= 0 and s is not None:
                # renum, lengths, record table, start, end so far, sum of lengths
                s[0][j] = len(s[1])
                s[1].append(dls[j])
                if s[3] < 0:
                    s[3] = s[4] = to
                tix.entry(s[2], to - s[4], ln, k)
                s[4] = to + ln
                s[5] += tix.unquant(dls[j])
        m = next(mv, None)
    for s, mg in zip(sides, merged):
        if s is not None and s[1]:
            mg.flush()
            tixmerge.write(mg.out, fi, [(b, s[0], 0)], s[1], s[2], s[3], s[4],
                           tix.probe(mg.fd, s[4], s[3]), s[5])
    return True, m


class _Merged:
    """One index's parts of remapped blocks (remap), written as one block while they fit."""

    def __init__(self, out, fd):
        self.out = out
        self.fd = fd  # the file the index is of (the probes)
        self.bld = tix.Builder()
        self.end = 0

    def add(self, b, ents, renum, fresh, fi, f, limit):
        # `ents`: (new offset, length, type, ordinal in b, old offset) of b's records that
        # come here; `fresh`: b is across the cut, its records indexed again from their text
        if fresh:
            self.flush()
            for to, ln, k, _, off in ents:
                got, rec = indexer.read_record(f, off, ln, limit)
                self.bld.add(to, ln, k, indexer.hashes(indexer.record_text(rec, k)) if got == k else ())
            self.end = to + ln
            self.flush()
            return
        size = b.postings_size(fi)
        fi.seek(b.dir)
        posts = fi.read(size)
        if len(ents) < b.n:
            posts = refilter(posts, b.bits, renum)
        if len(self.bld) and not take(self.bld, len(ents), posts, b.bits):
            self.flush()
        if not len(self.bld):
            take(self.bld, len(ents), posts, b.bits)
        dls = b.lengths(fi)
        for to, ln, k, j, _ in ents:
            self.bld.record(to, ln, k, dls[j])
        self.end = ents[-1][0] + ents[-1][1]

    def flush(self):
        if len(self.bld):
            bld = self.bld
            self.out.write(bld.block(self.end, tix.probe(self.fd, self.end, bld.start)))


def take(bld, n, raw, bits):
    """Unpack the postings `raw` (with `bits`) of the `n` records bld.record() adds next into
    the tix.Builder `bld`, if they fit its block; whether they did."""
    if len(bld.dls) + n > tix.RECS:
        return False
    at = len(bld.posts)
    unpack(raw, bits, len(bld.dls), bld.posts)
    if at and len(bld.posts) > tix.POSTS:
        del bld.posts[at:]
        return False
    return True


def refilter(raw, bits, new):
    """The bucket directory and postings `raw` (of a block with `bits`) without the records
    whose ordinal maps to 255 in `new`, the others renumbered to new[ordinal]."""
    nb = 1 << bits
    out = bytearray(2 * (nb + 1))
    d0 = len(out)
    shift = tix.KEY_BITS - bits
    for b in range(nb):
        struct.pack_into("<H", out, 2 * b, len(out) - d0)
        for tag, p in _bucket_terms(raw, d0, b):
            ords = [new[o] for o in tix.postings(p) if new[o] != 255]
            if ords:
                tix.term(out, b << shift | tag & tix.tag_mask(bits), bits, ords)
    struct.pack_into("<H", out, 2 * nb, len(out) - d0)
    return out


def unpack(raw, bits, base, out):
    """Append the postings `raw` (a block's bucket directory and postings, with `bits`) to
    `out` as Builder packs them (key << 7 | ordinal), their ordinals moved up by `base`
    (remap merges blocks; a block knows each term by its whole key)."""
    nb = 1 << bits
    d0 = 2 * (nb + 1)
    shift = tix.KEY_BITS - bits
    mask = tix.tag_mask(bits)
    for b in range(nb):
        for tag, p in _bucket_terms(raw, d0, b):
            key = b << shift | tag & mask
            for o in tix.postings(p):
                out.append(key << 7 | base + o)


def _bucket_terms(raw, d0, b):
    """(tag, postings bytes) of each term of bucket `b` in `raw`, a block's bucket directory
    (`d0` bytes) and postings."""
    a, z = struct.unpack_from("<HH", raw, 2 * b)
    return tix.bucket_terms(raw, d0 + a, d0 + z)
