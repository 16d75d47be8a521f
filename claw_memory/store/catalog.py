# claw_memory.store.catalog: the summary-label catalog in RAM: summary ids, reference counts
# and where each label's bytes are, in catalog order (384 labels at capacity), in arrays of
# small ints. memory_index.json (index.py) stores it.
# MIT license
#
# The labels stay on flash. A label is a tag of the items that carry it, and a records line
# holds its tags as they are (JSON escapes only '"', '\' and control characters, and a label
# holds no control character), so the catalog keeps where one copy of each label is in the
# records file, with its length, and reads it from there when it is needed: 7 bytes a label
# instead of the label (about 3 KiB at capacity instead of 14). Labels with no such copy known
# are kept in RAM, in 1 KiB pages: the index's labels while open scans the records (each is
# found in the first line that carries it, and the pages are given back), a new label until
# its line is built (batch.py), and the rare label no line holds as it is ('"' or '\' in it,
# or another program's line). A compaction finds each label again in the new lines it writes.
# Pages, not one growing blob: MicroPython collects garbage only when the heap is full, so
# blocks allocated one by one during a scan end up spread among its garbage (measured: after a
# scan, 105 KiB free and no free block over 5 KiB); the index's labels are reserved in one go
# before the scan.
# Six bits of each label's hash and its length find a label with one read.

from array import array

from .._compat import const, dumps

PAGE = const(1024)
_SHIFT = const(24)  # a location: the label's length from this bit, 6 bits of its hash from
_KEY = const(18)  # this one (find()'s test), its place below: offsets in the records up to
_PLACE = const(0x3FFFF)  # 256 KiB (a label found past them stays in RAM), or in the pages
_LEN_MAX = const(63)
_CHUNK = const(16)  # labels read per open by entries()


def _tag(b):
    # A label's length and 6 bits of its hash (in RAM only: hash() may differ between runs).
    return len(b) << 6 | (hash(b) & 63)


class Catalog:
    """The label catalog: summary ids, labels and reference counts, in catalog order. Where
    label i is, `locs[i]`: >= 0, length << 24 | hash << 18 | offset in the records file (read
    through `home`, the State: State.read_into); < 0, ~(the same with its place in the RAM
    pages)."""

    def __init__(self, reserve=0):
        """`reserve`: bytes of labels expected in RAM, its pages allocated now."""
        self.next_id = 1
        self.ids = bytearray()  # summary ids, 2 bytes each (little-endian): searched in C
        self.refs = bytearray()  # an array "H" once a count passes 255 (_count)
        self.locs = array("i")
        self.pages = [bytearray(PAGE) for _ in range((reserve + PAGE - 1) // PAGE)]
        self.cur = 0  # the page being filled
        self.used = 0  # bytes used in it
        self.held = 0  # labels in RAM
        self.home = None  # the State whose records file holds the labels
        self.moving = None  # while a compaction writes: which labels it placed (moved_to)

    def __len__(self):
        return len(self.refs)

    def sid(self, i):
        return self.ids[2 * i] | self.ids[2 * i + 1] << 8

    def length(self, i):
        v = self.locs[i]
        return (v if v >= 0 else ~v) >> _SHIFT

    def size(self):
        """Bytes of labels."""
        n = 0
        for i in range(len(self)):
            n += self.length(i)
        return n

    def add(self, sid, label, refs=0):
        b = label.encode()
        if not 0 < len(b) <= _LEN_MAX:
            raise ValueError("a label has 1 to %d bytes" % _LEN_MAX)
        self.ids.append(sid & 0xFF)
        self.ids.append(sid >> 8)
        self.refs.append(0)
        self._count(len(self.refs) - 1, refs)
        self.locs.append(self._keep(b, _tag(b)))
        self.held += 1
        if self.moving is not None:
            self.moving.append(0)
        if sid >= self.next_id:
            self.next_id = sid + 1

    # -- the RAM pages ----------------------------------------------------------------------

    def _keep(self, b, tag):
        """Store a label whole in one page; returns its location (< 0)."""
        n = len(b)
        if self.used + n > PAGE or not self.pages:
            if self.pages and self.used:
                self.cur += 1
            self.used = 0
            if self.cur >= len(self.pages):
                self.pages.append(bytearray(PAGE))
        at = self.used
        self.pages[self.cur][at : at + n] = b
        self.used += n
        return ~(tag << _KEY | (self.cur * PAGE + at))

    def release(self):
        """Give back the pages reserved and not used."""
        del self.pages[self.cur + 1 :]

    def settle(self):
        """The RAM pages hold only what is still in RAM: none when every label is placed,
        rebuilt compactly when most of them is garbage."""
        if self.moving is not None:
            return
        if not self.held:
            self.pages, self.cur, self.used = [], 0, 0
            return
        live = 0
        for i in range(len(self)):
            if self.locs[i] < 0:
                live += self.length(i)
        if self.cur * PAGE + self.used <= 2 * live + PAGE:
            return
        old = self.pages
        self.pages = [bytearray(PAGE) for _ in range((live + PAGE - 1) // PAGE)]
        self.cur = self.used = 0
        for i in range(len(self)):
            v = self.locs[i]
            if v < 0:
                v = ~v
                k = v & _PLACE
                self.locs[i] = self._keep(memoryview(old[k // PAGE])[k % PAGE : k % PAGE + (v >> _SHIFT)],
                                          v >> _KEY)
        self.release()

    # -- reading labels ---------------------------------------------------------------------

    def _open(self):
        # The records file, when a label is there (None: every label is in RAM).
        if self.held < len(self) and self.home is not None:
            return open(self.home.records_path, "rb")
        return None

    def _into(self, i, f, buf, at):
        """Copy label i to buf[at:]; returns its length. `f`: the open records file."""
        v = self.locs[i]
        if v < 0:
            v = ~v
            n = v >> _SHIFT
            k = v & _PLACE
            buf[at : at + n] = memoryview(self.pages[k // PAGE])[k % PAGE : k % PAGE + n]
        else:
            n = v >> _SHIFT
            self.home.read_into(f, v & _PLACE, memoryview(buf)[at : at + n])
        return n

    def _bytes(self, i, f):
        buf = bytearray(self.length(i))
        self._into(i, f, buf, 0)
        return buf

    def find(self, label, line=None, at=0):
        """Index of a label, or -1; a candidate within `line` (the records' bytes at `at`, read
        already) is compared there."""
        b = label.encode()
        tag = _tag(b)
        f = None
        try:
            for i in range(len(self)):
                v = self.locs[i]
                if (v if v >= 0 else ~v) >> _KEY != tag:
                    continue
                k = (v & _PLACE) - at
                if v >= 0 and line is not None and 0 <= k and k + len(b) <= len(line):
                    if line[k : k + len(b)] == b:
                        return i
                    continue
                if f is None and v >= 0:
                    f = self._open()
                if self._bytes(i, f) == b:
                    return i
        finally:
            if f is not None:
                f.close()
        return -1

    def index_of(self, sid):
        pat = bytes((sid & 0xFF, sid >> 8))
        i = self.ids.find(pat)
        while i >= 0:
            if not i & 1:
                return i >> 1
            i = self.ids.find(pat, i + 1)
        return -1

    def labels_of(self, sids, f=None, line=None, at=0):
        """The labels of `sids` (unknown ones left out); `f`: the records file, open; a label
        within `line` (the records' bytes at `at`, read already) is taken from it."""
        out = []
        own = None
        try:
            for s in sids:
                i = self.index_of(s)
                if i < 0:
                    continue
                v = self.locs[i]
                k = (v & _PLACE) - at
                if v >= 0 and line is not None and 0 <= k and k + (v >> _SHIFT) <= len(line):
                    out.append(str(line[k : k + (v >> _SHIFT)], "utf-8"))
                    continue
                if f is None and v >= 0:
                    f = own = self._open()
                out.append(str(self._bytes(i, f), "utf-8"))
        finally:
            if own is not None:
                own.close()
        return out

    # -- changes ----------------------------------------------------------------------------

    def ensure(self, label, preferred=0, line=None, at=0):
        """Summary id of `label`, added to the catalog when new (ESP-Claw's rule: the
        preferred id when it is free, else next_summary_id); `line`, `at`: as find()."""
        i = self.find(label, line, at)
        if i >= 0:
            return self.sid(i)
        sid = preferred if preferred > 0 and self.index_of(preferred) < 0 else max(self.next_id, 1)
        while self.index_of(sid) >= 0:
            sid += 1
        self.add(sid, label)
        return sid

    def _count(self, i, v):
        v = max(min(v, 0xFFFF), 0)
        if v > 0xFF and isinstance(self.refs, bytearray):
            old = self.refs  # (array("H", a bytearray) would take its bytes two by two)
            self.refs = array("H", bytes(2 * len(old)))
            for k in range(len(old)):
                self.refs[k] = old[k]
        self.refs[i] = v

    def add_refs(self, sids, delta):
        for s in sids:
            i = self.index_of(s)
            if i >= 0:
                self._count(i, self.refs[i] + delta)

    def drop_unused(self):
        """Drop the labels no item references (the arrays moved down in place; not while a
        compaction writes: it drops them once moved())."""
        n = len(self)
        w = 0
        for i in range(n):
            if not self.refs[i]:
                if self.locs[i] < 0:
                    self.held -= 1
                continue
            if w != i:
                self.ids[2 * w] = self.ids[2 * i]
                self.ids[2 * w + 1] = self.ids[2 * i + 1]
                self.refs[w] = self.refs[i]
                self.locs[w] = self.locs[i]
            w += 1
        if w == n:
            return
        self.ids[2 * w :] = b""
        self.refs[w:] = self.refs[:0]
        self.locs[w:] = self.locs[:0]
        self.settle()

    def reset_refs(self):
        for i in range(len(self.refs)):
            self.refs[i] = 0

    def retain(self, counts):
        """Set the reference counts to `counts` ({summary id: items}) and drop the labels
        no item references."""
        for i in range(len(self)):
            self._count(i, counts.get(self.sid(i), 0))
        self.drop_unused()

    # -- where the labels are ---------------------------------------------------------------

    def place(self, sids, line, at, tidy=True):
        """The labels of `sids` kept in RAM that `line` (a records line at offset `at`: read,
        or about to be appended) holds as they are are read from there from now on. `tidy`
        False: the RAM pages are left as they are (open's scan: settle() after it)."""
        raw = None
        for s in sids:
            if not self.held:
                break
            i = self.index_of(s)
            if i < 0 or self.locs[i] >= 0:
                continue
            if raw is None:
                raw = line if isinstance(line, bytes) else bytes(line)
            b = self._bytes(i, None)
            p = raw.find(b)
            if p >= 0 and at + p <= _PLACE:
                self.locs[i] = (~self.locs[i] >> _KEY) << _KEY | (at + p)
                self.held -= 1
        if tidy and (not self.held or self.cur > 1):
            self.settle()

    # A compaction writes the records anew: begin_move(), then moved_to() for each line it
    # writes (the labels of its items, as their text, resolved before the writing starts: a
    # label read from the old records between the writes would cost a FAT partition a write
    # of its allocation table per piece), then moved() once the new file is committed.

    def begin_move(self):
        self.moving = bytearray(len(self))  # 1: placed in the new file (or kept in RAM)

    def moved_to(self, sids, labels, line, at):
        """The new records' line `line` at `at` carries `labels` (their text), whose ids are
        `sids`: a label not placed yet is placed in it, or kept in RAM if the line does not
        hold it as it is."""
        for s, lab in zip(sids, labels):
            i = self.index_of(s)
            if i < 0 or self.moving[i]:
                continue
            self.moving[i] = 1
            b = lab.encode()
            p = line.find(b)
            if p >= 0 and at + p <= _PLACE:
                self.locs[i] = _tag(b) << _KEY | (at + p)
            elif self.locs[i] >= 0:  # (its old place goes with the old file)
                self.locs[i] = self._keep(b, _tag(b))

    def moved(self):
        """The new records file is committed: the labels are read from their new places."""
        self.moving = None
        self.held = 0
        for i in range(len(self)):
            if self.locs[i] < 0:
                self.held += 1
        self.settle()

    # -- the catalog as text ----------------------------------------------------------------

    def listing(self, prefix, empty):
        """The labels as text, one per line after `prefix` ("- "), or `empty` when there is
        none; built in one buffer of the exact size (384 labels make about 11 KB, and a
        list of per-label strings first would need three times that), one read a label."""
        n = len(self)
        if not n:
            return empty
        p = prefix.encode()
        buf = bytearray(n * (len(p) + 1) + self.size())
        at = 0
        f = self._open()
        try:
            for i in range(n):
                buf[at : at + len(p)] = p
                at += len(p)
                at += self._into(i, f, buf, at)
                buf[at] = 10
                at += 1
        finally:
            if f is not None:
                f.close()
        return str(buf, "utf-8")

    def json(self):
        """The labels as a JSON array, built in one buffer of the exact size (each label
        read twice: to size the buffer, then to fill it)."""
        parts = 0
        f = self._open()
        try:
            for i in range(len(self)):
                parts += len(dumps(str(self._bytes(i, f), "utf-8")).encode()) + 1
            buf = bytearray(max(parts + 1, 2))
            buf[0] = 91  # "["
            at = 1
            for i in range(len(self)):
                js = dumps(str(self._bytes(i, f), "utf-8")).encode()
                buf[at : at + len(js)] = js
                at += len(js)
                buf[at] = 44  # ","
                at += 1
        finally:
            if f is not None:
                f.close()
        buf[max(at - 1, 1)] = 93  # "]" over the last comma
        return str(memoryview(buf)[: max(at, 2)], "utf-8")

    def entries(self):
        """(summary id, label, ref count) of each entry, one at a time (read a few per open
        of the records file: a generator abandoned by its consumer would leave it open)."""
        i = 0
        while i < len(self):
            part = []
            f = self._open()
            try:
                for j in range(i, min(i + _CHUNK, len(self))):
                    part.append((self.sid(j), str(self._bytes(j, f), "utf-8"), self.refs[j]))
            finally:
                if f is not None:
                    f.close()
            i += len(part)
            for e in part:
                yield e
