# claw_memory.session.tixmerge: a text index's blocks merged into larger ones.
# MIT license
#
# Blocks are written small (at most tix.RECS records, built in RAM as turns are persisted),
# and each names every term it holds once: merged, a file's index names a term once per up
# to tix.RECS_MAX records, and a query reads a few blocks a file instead of ten or twenty
# (the board set's index: 14% of its history merged, 16.6% not). A merge streams: it walks
# the key space in 64 ranges (a key's top tix.BITS_MIN bits, every block's bucket unit), each
# range's postings of every part gathered, sorted and written, so that it holds one range's
# postings, not the block's (4 bytes a posting: a few KiB, up to ~20 KiB when a range holds
# terms of most records; a MemoryError leaves the index as it was); it walks them twice,
# first for the sizes of the buckets (whose directory comes before the postings), then for
# the bytes.
#
# When: a session's log when it leaves the cache or the memory is flushed or closed, once two
# small blocks or more would merge (not at every block appended: each merge writes the index
# again whole); an archive segment's when its compaction commits (nothing is appended to a
# segment); any index written again from its file.

import struct
from array import array

from .. import fsutil
from .._compat import const
from . import format as fmt_
from . import tix

_RANGES = const(64)  # key ranges a merge walks: the top tix.BITS_MIN bits of a key
_FINE = const(10)  # bits of the finest buckets whose sizes the first walk sums (tix.BITS_MAX)
# bytes of postings (and directories) of the blocks one merged block takes at most: its
# bucket directory names 16-bit offsets, and merging never makes postings longer
_POSTS_MAX = const(60000)
DROP = const(0xFFFF)  # a record a part leaves out (renum)


def settle_file(path, note=None, fd=None):
    """settle() the text index of the file `path` (a log or an archive segment; `fd`: it
    open, else it is opened); a failure is noted, not raised (derived: the index stays as
    it was)."""
    try:
        if fd is not None:
            settle(fmt_.tix(path), fd)
        else:
            with open(path, "rb") as fd:
                settle(fmt_.tix(path), fd)
    except Exception as e:  # noqa: BLE001 -- derived: a search reads it as it is
        fsutil.remove(fmt_.tix(path) + fmt_.TMP)
        if note:
            note("text index of %s not merged: %r" % (path, e))


def settle(path, fd):
    """Merge runs of the index `path`'s blocks (of the file open as `fd`) into blocks of up
    to tix.RECS_MAX records, when two small blocks or more would merge: the index written
    again (a cut leaves the old one or the new one whole). Whether it was. An index that no
    longer matches its file is left as it is: the merge probes the file again, and would make
    it match."""
    blks, _ = tix.blocks(path, fd.seek(0, 2) if fd else -1, fd)
    if not blks:
        return False
    groups = []
    with open(path, "rb") as f:
        n = size = small = 0
        due = False
        for b in blks:
            s = b.postings_size(f)
            if not groups or n + b.n > tix.RECS_MAX or size + s > _POSTS_MAX:
                groups.append([])
                n = size = small = 0
            groups[-1].append(b)
            n += b.n
            size += s
            small += b.n <= tix.RECS
            due = due or small >= 2
    if not due:
        return False

    def write(out):
        out.write(tix.MAGIC)
        with open(path, "rb") as f:
            for g in groups:
                if len(g) == 1:
                    _copy(out, f, g[0])
                else:
                    _group(out, f, fd, g)

    fsutil.replace(path, write)
    return True


def _copy(out, f, b):
    f.seek(b.pos)
    left = tix.BH + b.body
    while left:
        raw = f.read(min(left, 1024))
        if not raw:
            raise ValueError("text index shorter than its block says")
        out.write(raw)
        left -= len(raw)


def _group(out, f, fd, g):
    # The blocks `g`, one after another in the index open as `f`, as one block
    dls = bytearray()
    table = bytearray()
    parts = []
    at = g[0].start
    sumdl = 0
    for b in g:
        parts.append((b, None, len(dls)))
        dls += b.lengths(f)
        sumdl += b.sumdl
        for off, ln, k in b.records(f):
            tix.entry(table, off - at, ln, k)
            at = off + ln
    end = g[-1].end
    write(out, f, parts, dls, table, g[0].start, end, tix.probe(fd, end, g[0].start), sumdl)


def write(out, f, parts, dls, table, start, end, prb, sumdl):
    """Write one block to `out`: the postings of `parts`, [(block, renum, base)] of the index
    open as `f` (renum: an array mapping each of the block's ordinals to the new block's, or
    DROP; None: its ordinals moved up by `base`), the records' lengths `dls` and record
    table `table` (theirs, in order), the range [start, end) with the probe `prb`.
    ValueError (or IndexError): a part is damaged."""
    dirs = [bytes(b.head(f)[1]) for b, _, _ in parts]  # (not views: each would keep its lengths)
    fine = array("H", bytes(2 << _FINE))  # bytes of each finest bucket's terms
    distinct = 0
    buf = bytearray()
    for r in range(_RANGES):
        for key, ords in _terms(f, parts, dirs, r):
            tix.term(buf, key, tix.BITS_MIN, ords)  # (its size: the same whatever the bits)
            fine[key >> (tix.KEY_BITS - _FINE)] += len(buf)
            buf[:] = b""
            distinct += 1
    bits = tix.BITS_MIN
    while bits < tix.BITS_MAX and (1 << bits) * 8 < distinct:
        bits += 1
    nb = 1 << bits
    d = bytearray(2 * (nb + 1))
    pend = 0
    step = 1 << (_FINE - bits)
    for b in range(nb):
        struct.pack_into("<H", d, 2 * b, pend)
        for x in range(b * step, b * step + step):
            pend += fine[x]
    fine = None
    if pend > 0xFFFF:
        raise ValueError("merged text index block over 64 KiB")
    struct.pack_into("<H", d, 2 * nb, pend)
    out.write(tix.header(bits, len(dls), len(dls) + len(d) + pend + len(table), start, end, prb,
                         sumdl))
    out.write(dls)
    out.write(d)
    for r in range(_RANGES):
        for key, ords in _terms(f, parts, dirs, r):
            tix.term(buf, key, bits, ords)
        out.write(buf)
        buf[:] = b""
    out.write(table)


def _terms(f, parts, dirs, r):
    # (key, ascending ordinals) of every term of key range `r` in the parts, by key
    got = []
    for (b, renum, base), d in zip(parts, dirs):
        shift = b.bits - tix.BITS_MIN
        lo = r << shift
        a = struct.unpack_from("<H", d, 2 * lo)[0]
        z = struct.unpack_from("<H", d, 2 * ((r + 1) << shift))[0]
        if a >= z:
            continue
        f.seek(b.posts + a)
        raw = f.read(z - a)
        if len(raw) != z - a:
            raise ValueError("text index shorter than its block says")
        mask = tix.tag_mask(b.bits)
        kb = tix.KEY_BITS - b.bits
        for bk in range(lo, (r + 1) << shift):
            i = struct.unpack_from("<H", d, 2 * bk)[0] - a
            e = struct.unpack_from("<H", d, 2 * bk + 2)[0] - a
            for tag, p in tix.bucket_terms(raw, i, e):
                key = (bk << kb | tag & mask) << 10
                for o in tix.postings(p):
                    if renum is None:
                        got.append(key | base + o)
                    elif renum[o] != DROP:
                        got.append(key | renum[o])
    got.sort()
    i = 0
    k = len(got)
    while i < k:
        key = got[i] >> 10
        j = i
        while j < k and got[j] >> 10 == key:
            j += 1
        yield key, [got[x] & 0x3FF for x in range(i, j)]
        i = j
