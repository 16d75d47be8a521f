# claw_memory.session.tix: the text index of a session's log or archive segment (`.tix`).
# MIT license
#
# Derived and append-only: an 8-byte header, then blocks, each indexing a run of the file's
# records (docs/FORMAT.md, "Text index"). A block is built in RAM from at most RECS records
# and POSTS postings, so building one needs a few KiB of heap whatever the file's size. A
# query reads a block's header, its lengths and bucket directory, and the buckets of its
# terms, never a whole block.
#
# Its bytes: a term's tag is its whole key (blocks merge without losing key bits), the byte
# length of its postings rides in the tag when it is 1 to 3 (most terms are in one record or
# two), and a posting is a record's ordinal alone (no count: the first pass scores a record
# as if it held each term once; the hits are scored again from their text). Against the
# layout before (counts, a length byte for every term in more than one record, a type byte
# a record), the board set's index is 16.6% of its history instead of 19.1%; merged into
# blocks of up to RECS_MAX records (session/tixmerge.py), 14%.
#
# A block header names the file range it covers and a probe (a hash of the file's 256 bytes
# before the range's end, within the range): when the file was rewritten under the index
# (ESP-Claw's compaction, a repair, a delete and a new conversation), the probe of the last
# block no longer matches and the index is rebuilt; an append by another program (ESP-Claw)
# only leaves the index behind, and the next catch-up indexes the new records. A cut while a
# block was appended leaves a tail that is not a whole block: the index is then rebuilt too
# (a search on a full flash uses its whole blocks meanwhile, search._blocks; it is never a
# reason to refuse a session). Our own compaction writes the new log's index from the old
# one's blocks (session/remap.py): new offsets, and the postings of the records it dropped
# taken out.

import struct

from .. import fsutil, text
from .._compat import const

MAGIC = b"CTIX\x02\x00\x00\x00"  # "CTIX", version 2 (an index of version 1 is written again)
HDR = const(8)
# b"TB", bucket bits, probe span, records, 0, body length, start, end, probe, sum of lengths
_BH = "<2sBBHHIIIII"
BH = const(28)
RECS = const(128)  # records a block built from text holds at most
RECS_MAX = const(1024)  # records a merged block holds at most (session/tixmerge.py)
POSTS = const(2048)  # postings (term, record) a block holds at most: 8 KiB while it is built
_SPAN = const(4)  # a block's probe span: 16 << 4 = 256 bytes
# A term is known in a block by the low 20 bits of its hash (its key): the bucket is the key's
# top `bits` bits (6 to 10), the tag's low 14 bits hold the rest (at most 14), so a block
# knows every term by its whole key: an absent term meets another's key about once in 2,000
# lookups in a block of 500 terms (the caller checks the records it finds), and blocks merge
# without losing key bits. The tag's top 2 bits are the byte length of the term's postings
# when it is 1 to 3 (most terms: one or two records), else 0 and a varint length follows.
KEY = const(0xFFFFF)
KEY_BITS = const(20)
BITS_MIN = const(6)
BITS_MAX = const(10)
_TAG = const(0x3FFF)
_MASK = const(0x3FFFFFFF)
# Bytes of a block's tags, lengths and postings at most: what its 16-bit bucket directory
# can name (a block of POSTS postings needs at most 4 bytes each: 8 KiB)
_POSTS_MAX = const(0xFFFF)
_ENTRY_MAX = const(10)  # bytes of a record-table entry at most
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


def entry(table, gap, ln, k):
    """Append a record-table entry: the record's `gap` from the one before (mostly 0:
    records are back to back), its length with its newline and its type."""
    varint(table, ln << 3 | (k - 1) << 1 | (1 if gap else 0))
    if gap:
        varint(table, gap)


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


def term(out, key, bits, ords):
    """Append a term's entry: its tag (the key's bits below the bucket's, `bits`), its
    postings' length, its postings (the ascending record ordinals `ords`, each the gap from
    the one before less one, as a varint)."""
    p = bytearray()
    prev = -1
    for o in ords:
        if o > prev:  # (a record once, however many of its terms share the key)
            varint(p, o - prev - 1)
            prev = o
    n = len(p)
    tag = key & tag_mask(bits) | (n << 14 if n < 4 else 0)
    out.append(tag & 0xFF)
    out.append(tag >> 8)
    if n >= 4:
        varint(out, n)
    out += p


class Builder:
    """A block being built: add(offset, length, type, hashes) record by record while
    `room()`, then block(end, probe) its bytes."""

    def __init__(self):
        self.posts = []  # packed: key << 7 | ordinal
        self.recs = bytearray()  # the record table: length and type, gap, per record
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
        hashes (repeats kept: they count in its length; terms sharing a key are one)."""
        n = len(self.dls)
        keys = set()
        for h in hashes:
            keys.add(h & KEY)
        for k in keys:
            self.posts.append(k << 7 | n)
        self.record(off, ln, kind, quant(len(hashes)))

    def record(self, off, ln, kind, q):
        """The record-table entry alone (remap: the postings are copied or refiltered)."""
        if self.start < 0:
            self.start = self.at = off
        entry(self.recs, off - self.at, ln, kind)
        self.at = off + ln
        self.dls.append(q)
        self.sumdl += unquant(q)

    def block(self, end, prb):
        """The block's bytes for the records added, covering up to `end`."""
        posts = self.posts
        posts.sort()
        self.posts = []
        distinct = 0
        last = -1
        for v in posts:
            if v >> 7 != last:
                distinct += 1
                last = v >> 7
        bits = BITS_MIN
        while bits < 8 and (1 << bits) * 8 < distinct:
            bits += 1
        nb = 1 << bits
        out = bytearray(2 * (nb + 1))
        d0 = len(out)
        i = 0
        k = len(posts)
        shift = KEY_BITS - bits
        for b in range(nb):
            struct.pack_into("<H", out, 2 * b, len(out) - d0)
            while i < k and posts[i] >> 7 >> shift == b:
                key = posts[i] >> 7
                j = i
                while j < k and posts[j] >> 7 == key:
                    j += 1
                term(out, key, bits, [posts[x] & 0x7F for x in range(i, j)])
                i = j
        struct.pack_into("<H", out, 2 * nb, len(out) - d0)
        if len(out) - d0 > _POSTS_MAX:
            raise ValueError("text index block over 64 KiB")  # (cannot happen: POSTS bounds it)
        body = len(self.dls) + len(out) + len(self.recs)
        raw = (header(bits, len(self.dls), body, self.start, end, prb, self.sumdl) + self.dls + out
               + self.recs)
        self.__init__()
        return raw


class Block:
    """One block's header, read from an open index at `pos`."""

    def __init__(self, raw, pos):
        (magic, self.bits, self.span, self.n, _, self.body, self.start, self.end, self.probe,
         self.sumdl) = struct.unpack(_BH, raw)
        self.pos = pos
        self.dir = pos + BH + self.n  # the bucket directory, after the lengths
        self.ok = (magic == b"TB" and BITS_MIN <= self.bits <= BITS_MAX and 0 < self.n <= RECS_MAX
                   and self.span <= 12 and self.start <= self.end)
        self.posts = self.dir + 2 * ((1 << self.bits) + 1) if self.ok else 0
        self.ok = self.ok and self.body >= self.posts - pos - BH + self.n

    def next(self):
        return self.pos + BH + self.body

    def matches(self, f):
        """Whether the open file `f` still holds the bytes this block's probe hashed."""
        return probe(f, self.end, self.start, self.span) == self.probe

    def head(self, f):
        """(lengths, bucket directory), views of one read; ValueError when the directory's
        end does not fit the block (a damaged index: derived, its callers make it again)."""
        raw = _read_at(f, self.pos + BH, self.posts - self.pos - BH)
        self.pend = struct.unpack_from("<H", raw, len(raw) - 2)[0]  # (where the postings end)
        if self.posts + self.pend > self.next():
            raise ValueError(_DAMAGED)
        # (views, not slices: a merged block's are up to 3 KiB, copied they were twice that
        # at the query's heap peak)
        raw = memoryview(raw)
        return raw[: self.n], raw[self.n :]

    def lengths(self, f):
        """The records' lengths in terms (one byte each), without the directory (not
        checked: head() checks it); ValueError when the index is shorter."""
        return _read_at(f, self.pos + BH, self.n)

    def bucket(self, d, h):
        """(file position, length) of the bucket of hash `h` (`d`: the directory head()
        returned)."""
        b = (h & KEY) >> (KEY_BITS - self.bits)
        a, z = struct.unpack_from("<HH", d, 2 * b)
        if not a <= z <= self.pend:
            raise ValueError(_DAMAGED)
        return self.posts + a, z - a

    def find(self, f, d, h):
        """(file position, byte length, how many, bytes) of term `h`'s postings in this
        block, or None (a term whose key another term shares finds that one's: the caller
        checks the records it returns)."""
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
            j = i + 2
            n = tag >> 14
            if not n:
                n = raw[j]
                j += 1
                if n > 127:  # (postings of 128 bytes or more)
                    n, j = unvarint(raw, j - 1)
            i = j + n
            if tag & _TAG == key:
                if i > ln:
                    raise ValueError(_DAMAGED)
                p = raw[j:i]
                return at + j, n, n - continued(p), p
        if i != ln:
            raise ValueError(_DAMAGED)  # (its terms do not end where the bucket does)
        return None

    def records(self, f, n=-1):
        """(offset, length, type) of the block's records (its first `n`), in order, one at a
        time (a merged block's table as a list would take ~30 KiB), once the table is
        read and checked whole; ValueError or IndexError: a damaged index."""
        if n < 0:
            n = self.n
        at = self.dir + self.postings_size(f)
        # (an entry is 1 to _ENTRY_MAX bytes, most of them 2: the first n's are read about
        # as far as they go, more when they go further, never past _ENTRY_MAX bytes each:
        # a table of padded varints is damage, not megabytes read; read at _ENTRY_MAX bytes
        # each, a query's candidates read about twice the tables they needed)
        left = min(self.next() - at, _ENTRY_MAX * n)
        raw = _read_at(f, at, min(left, 3 * n + _ENTRY_MAX))
        for check in (True, False):  # (nothing of a damaged table is given: a pager goes on
            pos = self.start  # after the last record it was given)
            i = 0
            for r in range(n):
                if check and len(raw) - i < _ENTRY_MAX and len(raw) < left:
                    raw += _read_at(f, at + len(raw), min(left - len(raw), 3 * (n - r) + _ENTRY_MAX))
                v, i = unvarint(raw, i)
                if v & 1:
                    gap, i = unvarint(raw, i)
                    pos += gap
                ln = v >> 3
                if ln <= 0 or pos + ln > self.end:
                    raise ValueError(_DAMAGED)  # (a record beyond the range the block covers)
                if not check:
                    yield pos, ln, (v >> 1 & 3) + 1
                pos += ln

    def postings_size(self, f):
        """Bytes of the bucket directory and postings."""
        d = 2 * (1 << self.bits)
        return d + 2 + struct.unpack("<H", _read_at(f, self.dir + d, 2))[0]


def header(bits, n, body, start, end, prb, sumdl):
    """A block's header: `n` records, `body` bytes after it."""
    return struct.pack(_BH, b"TB", bits, _SPAN, n, 0, body, start, end, prb, sumdl)


def tag_mask(bits):
    """The key's bits below the bucket's, which a tag holds."""
    return (1 << (KEY_BITS - bits)) - 1


def term_span(raw, i, tag):
    """(length of a term's postings, where they start) after its tag at raw[i:]."""
    n = tag >> 14
    if n:
        return n, i
    return unvarint(raw, i)


def bucket_terms(raw, i, end):
    """(tag, postings bytes) of each term of raw[i:end], a run of a block's buckets;
    ValueError when its terms do not end where the run does (a damaged index)."""
    while i < end:
        tag = raw[i] | raw[i + 1] << 8
        size, j = term_span(raw, i + 2, tag)
        i = j + size
        yield tag, raw[j:i]
    if i != end:
        raise ValueError(_DAMAGED)


def postings(raw):
    """The record ordinals of one term's postings bytes."""
    out = []
    o = -1
    i = 0
    while i < len(raw):
        v, i = unvarint(raw, i)
        o += v + 1
        out.append(o)
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
