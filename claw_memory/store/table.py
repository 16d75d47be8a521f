# claw_memory.store.table: what the store keeps in RAM about its items, sized for capacity.
# MIT license
#
# One slot per distinct id in the records file, in arrays of small ints: the offset of the
# id's latest line, two hashes of the id (30 + 16 bits, so a match is the same id), access
# count, recency, up to 3 summary ids, whether it is active; and the dedupe normalisation of
# every active item's content (dedupe must compare with all of them, and recomputing it
# per store would cost a pass over the whole file). Item bodies stay on flash.

from array import array

from .. import item as itm
from .. import text
from .._compat import const

NO_SID = const(0xFFFF)
_H1_MASK = const(0x3FFFFFFF)  # small ints on a 32-bit chip
_H2_SEED = const(0x2B3C4D5E)


def id_hashes(memory_id):
    b = memory_id.encode()
    return text.fnv1a32(b) & _H1_MASK, text.fnv1a32(b, _H2_SEED) & 0xFFFF


class Table:
    def __init__(self):
        self.off = array("I")
        self.h1 = array("I")
        self.h2 = array("H")
        self.acc = array("H")
        self.upd = array("I")
        self.sids = array("H")  # 3 per slot
        self.live = bytearray()
        self.norm = []  # dedupe normalisation of active slots, None for the others
        self.lines = 0  # lines in the records file (items, tombstones, bad lines)
        self.changes = 0  # lines appended since the last compaction (no "summary_labels")
        self.active = 0
        self.max_sid = 0

    def __len__(self):
        return len(self.off)

    def garbage(self):
        """Lines that are not the latest line of an active item."""
        return self.lines - self.active

    def slot(self, memory_id):
        """The slot of an id, or -1."""
        h1, h2 = id_hashes(memory_id)
        h1s = self.h1
        for i in range(len(h1s)):
            if h1s[i] == h1 and self.h2[i] == h2:
                return i
        return -1

    def put(self, it, off, slot=-1):
        """Record the line at `off` as the latest of its id (new slot when `slot` is -1)."""
        if slot < 0:
            slot = len(self.off)
            h1, h2 = id_hashes(it["id"])
            self.off.append(off)
            self.h1.append(h1)
            self.h2.append(h2)
            self.acc.append(0)
            self.upd.append(0)
            self.sids.extend(array("H", (NO_SID, NO_SID, NO_SID)))
            self.live.append(0)
            self.norm.append(None)
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
        live = not it["deleted"]
        self.live[slot] = live
        self.norm[slot] = itm.norm(it["content"]) if live else None
        if live:
            self.active += 1
        return slot

    def active_slots(self):
        return [i for i in range(len(self.off)) if self.live[i]]

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
        order by id: see `tied`)."""
        acc, upd = self.acc, self.upd
        return sorted(slots, key=lambda i: (-acc[i], -upd[i]))

    def same_rank(self, a, b):
        return self.acc[a] == self.acc[b] and self.upd[a] == self.upd[b]
