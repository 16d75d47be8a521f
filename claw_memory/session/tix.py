# claw_memory.session.tix: the text index of a session's log or archive segment (`.tix`).
# MIT license
#
# Derived and append-only: an 8-byte header, then blocks, each indexing a run of the file's
# records (docs/FORMAT.md, "Text index"). A block is built in RAM from at most RECS records
# and POSTS postings, so building one needs a few KiB of heap whatever the file's size. A
# query reads a block's header, its lengths and bucket directory, and the buckets of its
# terms, never a whole block.
#
# A block header names the file range it covers and a probe (a hash of the file's bytes
# before the range's end, 256 of them, within the range; 16 in blocks written before: their
# header says which): when the file was rewritten under the index (ESP-Claw's compaction, a
# repair, a delete and a new conversation), the probe of the last block no longer matches
# and the index is rebuilt (16 bytes were often a record's fixed JSON tail alone, and a new
# record of the same shape ending at the same offset kept a stale index); an append by
# another program (ESP-Claw) only leaves the index behind, and the next catch-up indexes the
# new records. A cut while a block was appended leaves a tail that is not a whole block: the
# index is then rebuilt too (a search on a full flash uses its whole blocks meanwhile,
# search._blocks; it is never a reason to refuse a session). Our own compaction writes the
# new log's index from the old one's blocks (session/remap.py): new offsets, and the
# postings of the records it dropped taken out.

import struct

from .. import fsutil, text
from .._compat import const

MAGIC = b"CTIX\x01\x00\x00\x00"  # "CTIX", version 1, reserved
HDR = const(8)
# b"TB", bucket bits, records, probe span, 0, body length, start, end, probe, sum of lengths
_BH = "<2sBBBBHIIII"
BH = const(24)
RECS = const(128)  # records a block holds at most (ordinals fit 7 bits)
POSTS = const(2048)  # postings (term, record) a block holds at most: 8 KiB while it is built
_SPAN = const(4)  # a new block's probe span: 16 << 4 = 256 bytes (0, version 1's: 16)
_TF_MAX = const(4)  # a posting's count (BM25 saturates: 4 scores 0.8 of a count of 100)
# A term is known in a block by the low 21 bits of its hash (its key): the bucket is the key's
# top `bits` bits, the 2-byte tag holds the next 15 (at most; bit 15 of the tag marks a term
# in one record, whose posting then follows without a length), so a block of ~200 terms
# with 32 buckets knows a term by 20 bits: an absent one meets another's key about once in
# 5,000 lookups (the caller checks the records it finds).
KEY = const(0x1FFFFF)
WHOLE = const(6)  # from this many bucket bits on, a term's bucket and tag hold its whole key
ONE = const(0x8000)
_MASK = const(0x3FFFFFFF)
# Bytes of a block's tags, lengths and postings at most: 6 a posting, and at most 4,096
# postings (POSTS, or the terms of one record's TEXT_MAX bytes, which a block always takes)
_POSTS_MAX = const(24576)
_ENTRY_MAX = const(11)  # bytes of a record-table entry at most
_DAMAGED = const("text index damaged")
assert struct.calcsize(_BH) == BH


def probe(f, end, start=0, span=_SPAN):
    """The probe of a file's range [start, end): a hash of its last 16 << span bytes."""
    at = max(start, end - (16 << span))
    f.seek(at)
    return text.fnv1a32(f.read(end - at)) & _MASK


def quant(dl):
    """A record's length in terms in one byte: exact up to 128, then 32 steps per doubling
    (up to ~2,000 terms)."""
    q = x = min(dl, 128)
    while x < dl and q < 255:
        x = x * 1022 // 1000  # 2 ** (1 / 32)
        q += 1
    return q


def unquant(q):
    x = min(q, 128)
    while q > 128:
        x = x * 1022 // 1000
        q -= 1
    return x


def varint(out, v):
    while v > 127:
        out.append(v & 127 | 128)
        v >>= 7
    out.append(v)


def unvarint(b, i):
    v = s = 0
    while True:
        c = b[i]
        i += 1
        v |= (c & 127) << s
        if c < 128:
            return v, i
        s += 7


class Builder:
    """A block being built: add(offset, length, type, hashes) record by record while
    `room()`, then block(end, probe) its bytes."""

    def __init__(self):
        self.posts = []  # packed in 30 bits: key << 9 | ordinal << 2 | count - 1
        self.recs = bytearray()  # the record table: gap, length, type per record
        self.dls = bytearray()
        self.start = self.at = -1
        self.sumdl = 0

    def __len__(self):
        return len(self.dls)

    def room(self, n_hashes=0):
        """Whether one more record with `n_hashes` terms fits this block."""
        return len(self.dls) < RECS and (not self.dls or len(self.posts) + n_hashes <= POSTS)

    def add(self, off, ln, kind, hashes):
        """Add a record: its offset and length in the file, its type and its terms' index
        hashes (repeats kept)."""
        n = len(self.dls)
        counts = {}
        for h in hashes:
            k = h & KEY  # (terms sharing a key are one term here)
            counts[k] = counts.get(k, 0) + 1
        for k, c in counts.items():
            self.posts.append(k << 9 | n << 2 | min(c, _TF_MAX) - 1)
        self.record(off, ln, kind, quant(len(hashes)))

    def record(self, off, ln, kind, q):
        """The record-table entry alone (remap: the postings are copied or refiltered)."""
        if self.start < 0:
            self.start = self.at = off
        gap = off - self.at
        self.recs.append(kind | (0x80 if gap else 0))  # (records are mostly back to back)
        if gap:
            varint(self.recs, gap)
        varint(self.recs, ln)
        self.at = off + ln
        self.dls.append(q)
        self.sumdl += unquant(q)

    def block(self, end, prb, bits=-1):
        """The block's bytes for the records added, covering up to `end` (`bits`: its
        buckets', -1: chosen for its terms; postings remap.unpack() took from blocks below WHOLE
        bits need the fewest of theirs, and their keys are cut to what those bits hold)."""
        if bits >= 0:
            keep = ((1 << bits) - 1) << (21 - bits) | tag_mask(bits)
            p = self.posts
            for i in range(len(p)):
                p[i] = (p[i] >> 9 & keep) << 9 | p[i] & 0x1FF
        bits, posts = self._postings(bits)
        out = self.frame(end, prb, bits, len(posts)) + posts + self.recs
        self.__init__()
        return out

    def frame(self, end, prb, bits, plen):
        """The header and lengths of a block whose bucket directory and postings (`plen`
        bytes, `bits`) follow, then its record table (`recs`)."""
        body = len(self.dls) + plen + len(self.recs)
        return struct.pack(_BH, b"TB", bits, len(self.dls), _SPAN, 0, body, self.start, end,
                           prb, self.sumdl) + self.dls

    def _postings(self, bits):
        posts = self.posts
        posts.sort()
        self.posts = []
        if bits < 0:
            distinct = 0
            last = -1
            for v in posts:
                if v >> 9 != last:
                    distinct += 1
                    last = v >> 9
            bits = 0
            while bits < 8 and (1 << bits) * 8 < distinct:
                bits += 1
        nb = 1 << bits
        out = bytearray(2 * (nb + 1))
        d0 = len(out)
        i = 0
        k = len(posts)
        term = bytearray()
        shift = 21 - bits
        mask = tag_mask(bits)
        for b in range(nb):
            struct.pack_into("<H", out, 2 * b, len(out) - d0)
            while i < k and posts[i] >> 9 >> shift == b:
                key = posts[i] >> 9
                j = i
                prev = -1
                n = 0
                term[:] = b""
                while j < k and posts[j] >> 9 == key:
                    o = (posts[j] >> 2) & 0x7F
                    c = posts[j] & 3
                    j += 1
                    while j < k and posts[j] >> 2 == posts[j - 1] >> 2:
                        c = min(c + (posts[j] & 3) + 1, _TF_MAX - 1)  # (two keys one once cut)
                        j += 1
                    varint(term, (o - prev - 1) << 2 | c)
                    prev = o
                    n += 1
                tag = key & mask | (ONE if n == 1 else 0)
                out.append(tag & 0xFF)
                out.append(tag >> 8)
                if j - i > 1:
                    varint(out, len(term))
                out += term
                i = j
        struct.pack_into("<H", out, 2 * nb, len(out) - d0)
        if len(out) > 0xFFFF:
            raise ValueError("text index block over 64 KiB")  # (cannot happen: POSTS bounds it)
        return bits, out


class Block:
    """One block's header, read from an open index at `pos`."""

    def __init__(self, raw, pos):
        (magic, self.bits, self.n, self.span, _, self.body, self.start, self.end, self.probe,
         self.sumdl) = struct.unpack(_BH, raw)
        self.pos = pos
        self.dir = pos + BH + self.n  # the bucket directory, after the lengths
        self.posts = self.dir + 2 * ((1 << self.bits) + 1)
        self.ok = (magic == b"TB" and self.bits <= 8 and 0 < self.n <= RECS and self.span <= 12
                   and self.start <= self.end
                   and self.body >= self.posts - pos - BH + 3 * self.n)

    def next(self):
        return self.pos + BH + self.body

    def matches(self, f):
        """Whether the open file `f` still holds the bytes this block's probe hashed."""
        return probe(f, self.end, self.start, self.span) == self.probe

    def head(self, f):
        """(lengths, bucket directory) as bytes; ValueError when the directory's end does
        not fit the block (a damaged index: derived, its callers make it again)."""
        raw = _read_at(f, self.pos + BH, self.posts - self.pos - BH)
        self.pend = struct.unpack_from("<H", raw, len(raw) - 2)[0]  # (where the postings end)
        if self.pend > _POSTS_MAX or self.posts + self.pend > self.next():
            raise ValueError(_DAMAGED)
        return raw[: self.n], raw[self.n :]

    def bucket(self, d, h):
        """(file position, length) of the bucket of hash `h` (`d`: the directory head()
        returned)."""
        b = (h & KEY) >> (21 - self.bits)
        a, z = struct.unpack_from("<HH", d, 2 * b)
        if not a <= z <= self.pend:
            raise ValueError(_DAMAGED)
        return self.posts + a, z - a

    def find(self, f, d, h):
        """(file position, byte length, how many, bytes) of term `h`'s postings in this
        block, or None (a term whose bucket and key another term shares finds that one's:
        the caller checks the records it returns)."""
        at, ln = self.bucket(d, h)
        if ln <= 0:
            return None
        f.seek(at)
        raw = f.read(ln)
        key = h & tag_mask(self.bits)
        i = 0
        while i < ln:
            # (term_span inlined: the query's hottest loop, a bucket's terms walked for each
            # term in each block; two calls a term cost more than the rest of the walk)
            tag = raw[i] | raw[i + 1] << 8
            j = i = i + 2
            if tag & ONE:
                while raw[i] > 127:
                    i += 1
                i += 1
            else:
                i = raw[j]
                j += 1
                if i > 127:  # (postings of 128 bytes or more)
                    i, j = unvarint(raw, j - 1)
                i += j
            if tag & 0x7FFF == key:
                p = raw[j:i]
                return at + j, i - j, i - j - continued(p), p
        return None

    def records(self, f):
        """[(offset, length, type)] of the block's records, in order (ValueError or
        IndexError: a damaged index)."""
        at = self.dir + self.postings_size(f)
        raw = _read_at(f, at, min(self.next() - at, _ENTRY_MAX * RECS))
        out = []
        pos = self.start
        i = 0
        for _ in range(self.n):
            pos, ln, k, i = self._entry(raw, i, pos)
            out.append((pos, ln, k))
            pos += ln
        return out

    def record(self, f, i):
        """(offset, length, type) of record i (the table read up to it)."""
        at = self.dir + self.postings_size(f)
        raw = _read_at(f, at, min(self.next() - at, _ENTRY_MAX * (i + 1)))
        pos = self.start
        j = 0
        for n in range(i + 1):
            pos, ln, k, j = self._entry(raw, j, pos)
            if n < i:
                pos += ln
        return pos, ln, k

    def _entry(self, raw, i, pos):
        # (offset, length, type, next i) of the record-table entry at raw[i:], the previous
        # record ending at `pos`: a type byte (bit 7: a gap follows), the gap, the length
        k = raw[i]
        i += 1
        if k & 0x80:
            gap, i = unvarint(raw, i)
            pos += gap
            k &= 0x7F
        ln, i = unvarint(raw, i)
        if pos + ln > self.end:
            raise ValueError(_DAMAGED)  # (a record beyond the range the block covers)
        return pos, ln, k, i

    def postings_size(self, f):
        """Bytes of the bucket directory and postings."""
        d = 2 * (1 << self.bits)
        return d + 2 + struct.unpack("<H", _read_at(f, self.dir + d, 2))[0]


def tag_mask(bits):
    """The key's bits below the bucket's that a tag holds (at most 15)."""
    return (1 << min(15, 21 - bits)) - 1


def term_span(raw, i, tag):
    """(length of a term's postings, where they start) after its tag at raw[i:]."""
    if tag & ONE:
        j = i
        while raw[j] > 127:
            j += 1
        return j + 1 - i, i
    return unvarint(raw, i)


def postings(raw):
    """[(ordinal, count)] of one term's postings bytes."""
    out = []
    o = -1
    i = 0
    while i < len(raw):
        v, i = unvarint(raw, i)
        o += (v >> 2) + 1
        out.append((o, (v & 3) + 1))
    return out


def continued(b):
    """Bytes of a varint run that another byte follows (high bit set)."""
    n = 0
    for c in b:
        n += c >> 7
    return n


def _read_at(f, at, n):
    if n < 0:
        raise ValueError(_DAMAGED)
    f.seek(at)
    raw = f.read(n)
    if len(raw) != n:
        raise ValueError("text index shorter than its block says")
    return raw


def blocks(path, data_size=-1, f_data=None):
    """The whole blocks of an index, in order, and where they end; (None, 0) when the index
    is missing, not an index, torn after its last whole block, or (with `f_data`, the
    indexed file open, of `data_size` bytes) no longer matching the file it indexes."""
    size = fsutil.size(path)
    if size < HDR:
        return None, 0
    out = []
    with open(path, "rb") as f:
        if f.read(HDR) != MAGIC:
            return None, 0
        pos = HDR
        while pos < size:
            raw = f.read(BH)
            if len(raw) < BH:
                return None, 0
            b = Block(raw, pos)
            if not b.ok or b.next() > size or (out and b.start < out[-1].end):
                return None, 0
            out.append(b)
            pos = b.next()
            f.seek(pos)
    if out and f_data is not None:
        last = out[-1]
        if last.end > data_size or not last.matches(f_data):
            return None, 0
    return out, pos
