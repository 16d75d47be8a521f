# claw_memory.store.table: what the store keeps in RAM about its items, sized for capacity.
# MIT license
#
# One slot per distinct id in the records file, in arrays of small ints reserved before the
# scan: the offset of the id's latest line, two hashes of the id (30 + 16 bits, so a match
# is the same id), access count, recency, up to 3 summary ids, whether it is active; and, for
# deduplication, a fingerprint of the normalised content instead of the content itself (a
# 96-bit set of its byte pairs, its length and a 16-bit hash of its 36-byte key: 15 bytes,
# where the normalisation would take up to 159). A store compares the new fact with every
# item: the fingerprints rule almost all of them out (one normalisation inside another has
# all its byte pairs in the other's set), and the few that remain are read from flash and
# compared exactly. A normalisation of the maximum 159 bytes sets about 81% of the bits, so
# against such an item a 12-byte fact passes one time in 9 by chance, a 20-byte one in 40, a
# 40-byte one in 900 (a 128-bit set: 1 in 37, 400, 100,000; at capacity with every item at
# the maximum, a 20-byte fact reads 3 items instead of 0.3, for 512 bytes of RAM less).
# Item bodies stay on flash: 38 bytes per slot.

from array import array

from .. import item as itm
from .. import text
from .._compat import const

NO_SID = const(0xFFFF)
_H1_MASK = const(0x3FFFFFFF)  # small ints on a 32-bit chip
_KH_MASK = const(0xFFFF)  # the key hash: equal hashes are compared exactly
_H2_SEED = const(0x2B3C4D5E)
_KEY = const(36)  # bytes of the dedupe key
_SEMANTIC_MIN = const(12)
_BITS = const(12)  # bytes of the byte-pair set
# The arrays of small ints: name, type code, bytes per slot (the offsets first: shed() keeps them).
_ARRAYS = const((("off", "I", 4), ("h1", "I", 4), ("h2", "H", 2), ("acc", "H", 2), ("upd", "I", 4),
                 ("sids", "H", 6), ("kh", "H", 2)))


def id_hashes(memory_id):
    b = memory_id.encode()
    return text.fnv1a32(b) & _H1_MASK, text.fnv1a32(b, _H2_SEED) & 0xFFFF


def key_of(norm):
    """The dedupe key of a normalisation (bytes): at most 36 bytes, cut on a character
    boundary (empty: none; item.key then uses "memory-<now>")."""
    if len(norm) <= _KEY:
        return norm
    i = _KEY
    while i > 0 and norm[i] & 0xC0 == 0x80:
        i -= 1
    return norm[:i]


def pairs(norm, out=None, at=0):
    """The set of byte pairs of a normalisation, as 96 bits (12 bytes) at out[at:]."""
    if out is None:
        out = bytearray(_BITS)
    for i in range(len(norm) - 1):
        h = (norm[i] * 31 + norm[i + 1]) % 96
        out[at + (h >> 3)] |= 1 << (h & 7)
    return out


def _within(a, ai, b, bi):
    # Every bit of a[ai:ai+12] is in b[bi:bi+12].
    for k in range(_BITS):
        x = a[ai + k]
        if x & b[bi + k] != x:
            return False
    return True


def lowest(n, score, off=None):
    """The eviction rule, one for batches and compaction: of the candidates 0..n-1 (`score(i)`
    their capacity score, item.score; None: not a candidate) the lowest score goes, the
    first in file order on a tie (`off[i]`: candidate i's file offset; None: 0..n-1 are in
    file order already). Returns -1 when there is no candidate."""
    low = best = -1
    for i in range(n):
        sc = score(i)
        if sc is None:
            continue
        if low < 0 or sc < best or (sc == best and off is not None and off[i] < off[low]):
            low, best = i, sc
    return low


class Table:
    def __init__(self, slots=0):
        """`slots`: how many are expected, reserved now (a few blocks allocated before the
        scan's garbage, not many among it: MicroPython collects only when the heap is full,
        so objects allocated during a scan end up spread through it)."""
        self.n = 0  # slots in use
        self.off = array("I", bytes(4 * slots))
        self.h1 = array("I", bytes(4 * slots))
        self.h2 = array("H", bytes(2 * slots))
        self.acc = array("H", bytes(2 * slots))
        self.upd = array("I", bytes(4 * slots))
        self.sids = array("H", bytes(6 * slots))  # 3 per slot
        self.live = bytearray(slots)
        self.kh = array("H", bytes(2 * slots))  # hash of the dedupe key
        self.nlen = bytearray(slots)  # length of the normalisation (at most 159)
        self.bits = bytearray(_BITS * slots)  # its byte pairs
        self.lines = 0  # lines in the records file (items, tombstones, bad lines)
        self.changes = 0  # lines appended since the last compaction (no "summary_labels")
        self.evicted = 0  # tombstones of items dropped for capacity (2 garbage lines each)
        self.recalls = None  # [counts, newest, digest size]: unfolded recalls, for evictions
        self.active = 0
        self.max_sid = 0
        self.chg = 0  # the highest change number of a line ("chg", batch.py)
        self.exp = None  # expiry per slot (array "I", 0: none); None while no item has one

    def __len__(self):
        return self.n

    def garbage(self):
        """Lines that are not the latest line of an active item."""
        return self.lines - self.active

    def private(self):
        """Garbage lines that may hold text the user asked to lose (a forgotten or replaced
        version, an unreadable line): all but evicted items' last lines and tombstones."""
        return self.garbage() - 2 * self.evicted

    def slot(self, memory_id):
        """The slot of an id, or -1."""
        h1, h2 = id_hashes(memory_id)
        h1s, h2s = self.h1, self.h2
        for i in range(self.n):
            if h1s[i] == h1 and h2s[i] == h2:
                return i
        return -1

    def _room(self, need):
        if need <= len(self.live):
            return
        # A few slots more, not twice as many: at capacity every store adds an id (the
        # evicted one keeps its slot until compaction), and doubling 128 slots would hold
        # 8 KiB more for the 16 or so stores before the next compaction.
        size = max(need, len(self.live) + max(16, len(self.live) // 8))
        for name, code, k in _ARRAYS:
            old = getattr(self, name)
            new = array(code, bytes(k * size))
            new[: len(old)] = old
            setattr(self, name, new)
        for name, k in (("live", 1), ("nlen", 1), ("bits", _BITS)):
            old = getattr(self, name)
            new = bytearray(k * size)
            new[: len(old)] = old
            setattr(self, name, new)
        if self.exp is not None:
            self.exp = _grown(self.exp, size)

    def put(self, it, off, slot=-1, norm=None):
        """Record the line at `off` as the latest of its id (new slot when `slot` is -1);
        `norm`: the item's normalised content when the caller has it."""
        if slot < 0:
            slot = self.n
            self._room(slot + 1)
            self.h1[slot], self.h2[slot] = id_hashes(it["id"])
            self.n += 1
        elif self.live[slot]:
            self.active -= 1
        self.off[slot] = off
        self.acc[slot] = it["access_count"]
        self.upd[slot] = it["updated_at"]
        sids = it["summary_ids"]
        for k in range(3):
            self.sids[3 * slot + k] = sids[k] if k < len(sids) else NO_SID
        for s in sids:
            if s > self.max_sid:
                self.max_sid = s
        c = it.get("chg")
        if c and c["n"] > self.chg:
            self.chg = c["n"]
        exp = it.get("expires_at", 0)
        if exp and self.exp is None:
            self.exp = array("I", bytes(4 * len(self.live)))
        if self.exp is not None:
            self.exp[slot] = exp
        live = not it["deleted"]
        self.live[slot] = live
        at = _BITS * slot
        self.bits[at : at + _BITS] = bytes(_BITS)
        if live:
            if norm is None:
                norm = itm.norm(it["content"]).encode()
            self.nlen[slot] = len(norm)
            self.kh[slot] = text.fnv1a32(key_of(norm)) & _KH_MASK
            pairs(norm, self.bits, at)
            self.active += 1
        else:
            self.nlen[slot] = 0
            self.kh[slot] = 0
        return slot

    def shed(self):
        """Free all but the offsets and liveness (a compaction needs no more of the old table
        once its groups are known: its replacement is reserved in the room this leaves)."""
        for name, code, _ in _ARRAYS[1:]:
            setattr(self, name, array(code))
        self.nlen = bytearray(0)
        self.bits = bytearray(0)
        self.recalls = None
        self.exp = None

    def active_slots(self):
        return [i for i in range(self.n) if self.live[i]]

    def expired(self, slot, now):
        """Whether the item of an active slot has expired at `now` (dates.expired)."""
        if self.exp is None:
            return False
        from ..dates import expired  # (only once an item has an expiry)

        return expired(self.exp[slot], now)

    def current(self, clock):
        """The active slots whose items have not expired (`clock()`: now, asked only when an
        item has an expiry)."""
        if self.exp is None:
            return self.active_slots()
        from ..dates import expired

        now = clock()
        return [i for i in range(self.n) if self.live[i] and not expired(self.exp[i], now)]

    def file_order(self):
        """The active slots in file order (of their latest lines)."""
        off = self.off
        return sorted(self.active_slots(), key=lambda i: off[i])

    def candidates(self, cnorm, ignore=-1):
        """Active slots that may duplicate the normalisation `cnorm` (bytes): same key hash,
        or a length and byte-pair set that allow one to contain the other. A superset of
        the duplicates, to be checked exactly (see item.key and item.semantic_match)."""
        c = len(cnorm)
        kh = text.fnv1a32(key_of(cnorm)) & _KH_MASK
        mine = pairs(cnorm)
        out = []
        for i in range(self.n):
            if not self.live[i] or i == ignore:
                continue
            ln = self.nlen[i]
            if self.kh[i] == kh or (not ln and not c):
                out.append(i)
            elif ln and c and (ln == c or (ln >= _SEMANTIC_MIN and c >= _SEMANTIC_MIN)):
                at = _BITS * i
                if (ln >= c and _within(mine, 0, self.bits, at)) or (
                        ln <= c and _within(self.bits, at, mine, 0)):
                    out.append(i)
        return out

    def same_key(self, a, b):
        """Whether two active slots may have the same dedupe key (to be checked exactly)."""
        return self.kh[a] == self.kh[b] or (not self.nlen[a] and not self.nlen[b])

    def has_sid(self, slot, wanted):
        for k in range(3):
            s = self.sids[3 * slot + k]
            if s != NO_SID and s in wanted:
                return True
        return False

    def slot_sids(self, slot):
        return [s for s in self.sids[3 * slot : 3 * slot + 3] if s != NO_SID]

    def ranked(self, slots):
        """`slots` best first by access count then recency (ties left for the caller to
        order by id: see read.rank)."""
        acc, upd = self.acc, self.upd
        return sorted(slots, key=lambda i: (-acc[i], -upd[i]))

    def same_rank(self, a, b):
        return self.acc[a] == self.acc[b] and self.upd[a] == self.upd[b]


def _grown(a, size):
    new = array("I", bytes(4 * size))
    new[: len(a)] = a
    return new
