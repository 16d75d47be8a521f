# claw_memory.store.catalog: the summary-label catalog in RAM: summary ids, labels and
# reference counts, in catalog order (384 labels at capacity), as one blob of labels in small
# pages and arrays of small ints. memory_index.json (index.py) stores it.
# MIT license

from array import array

from .._compat import dumps
from .pages import PAGE, Pages


class Catalog:
    """The label catalog: summary ids, labels and reference counts, in catalog order. The
    labels are kept as "\n" + label + "\n" in small pages (pages.py)."""

    def __init__(self, reserve=0):
        self.next_id = 1
        self.sids = array("H")
        self.refs = array("H")
        self.starts = array("I")  # page handle of each label's first byte
        self.lens = array("B")
        self.pages = Pages(reserve)

    def __len__(self):
        return len(self.sids)

    def size(self):
        """Bytes of labels held (to reserve a catalog like this one)."""
        return self.pages.size()

    def add(self, sid, label, refs=0):
        b = label.encode()
        self.sids.append(sid)
        self.refs.append(min(refs, 0xFFFF))
        self.starts.append(self.pages.add(b"\n" + b + b"\n") + 1)
        self.lens.append(len(b))
        if sid >= self.next_id:
            self.next_id = sid + 1

    def label_at(self, i):
        return self.pages.get(self.starts[i], self.lens[i]).decode()

    def find(self, label):
        """Index of a label, or -1."""
        at = self.pages.search(b"\n" + label.encode() + b"\n")
        if at < 0:
            return -1
        for i in range(len(self.starts)):
            if self.starts[i] == at + 1:
                return i
        return -1

    def index_of(self, sid):
        for i in range(len(self.sids)):
            if self.sids[i] == sid:
                return i
        return -1

    def label(self, sid):
        i = self.index_of(sid)
        return None if i < 0 else self.label_at(i)

    def ensure(self, label, preferred=0):
        """Summary id of `label`, added to the catalog when new (ESP-Claw's rule: the
        preferred id when it is free, else next_summary_id)."""
        i = self.find(label)
        if i >= 0:
            return self.sids[i]
        sid = preferred if preferred > 0 and self.index_of(preferred) < 0 else max(self.next_id, 1)
        while self.index_of(sid) >= 0:
            sid += 1
        self.add(sid, label)
        return sid

    def add_refs(self, sids, delta):
        for s in sids:
            i = self.index_of(s)
            if i >= 0:
                self.refs[i] = max(min(self.refs[i] + delta, 0xFFFF), 0)

    def drop_unused(self):
        """Drop the labels no item references: in place (their bytes blanked in the pages)
        unless the pages would then hold more garbage than labels (rebuilt compactly)."""
        dead = [i for i in range(len(self.refs)) if not self.refs[i]]
        if not dead:
            return
        live = sum(self.lens[i] + 2 for i in range(len(self.lens)) if self.refs[i])
        if self.pages.size() > 2 * live + PAGE:
            keep = Catalog(live)  # its arrays and pages are taken; next_id stays ours
            for i in range(len(self.sids)):
                if self.refs[i]:
                    keep.add(self.sids[i], self.label_at(i), self.refs[i])
            keep.pages.release()
            self.sids, self.refs, self.starts, self.lens, self.pages = (
                keep.sids, keep.refs, keep.starts, keep.lens, keep.pages)
            return
        for i in dead:  # blanked: find() never matches them again (labels hold no NUL)
            self.pages.blank(self.starts[i] - 1, self.lens[i] + 2)
        kept = [i for i in range(len(self.sids)) if self.refs[i]]
        self.sids = array("H", [self.sids[i] for i in kept])
        self.refs = array("H", [self.refs[i] for i in kept])
        self.starts = array("I", [self.starts[i] for i in kept])
        self.lens = array("B", [self.lens[i] for i in kept])

    def reset_refs(self):
        for i in range(len(self.refs)):
            self.refs[i] = 0

    def retain(self, counts):
        """Set the reference counts to `counts` ({summary id: items}) and drop the labels
        no item references."""
        for i in range(len(self.sids)):
            self.refs[i] = min(counts.get(self.sids[i], 0), 0xFFFF)
        self.drop_unused()

    def listing(self, prefix, empty):
        """The labels as text, one per line after `prefix` ("- "), or `empty` when there is
        none; built in one buffer of the exact size (384 labels make about 11 KB, and a
        list of per-label strings first would need three times that)."""
        n = len(self.sids)
        if not n:
            return empty
        p = prefix.encode()
        size = 0
        for i in range(n):
            size += len(p) + self.lens[i] + 1
        buf = bytearray(size)
        at = 0
        for i in range(n):
            buf[at : at + len(p)] = p
            at += len(p)
            k = self.lens[i]
            h = self.starts[i]
            buf[at : at + k] = memoryview(self.pages.pages[h // PAGE])[h % PAGE : h % PAGE + k]
            at += k
            buf[at] = 10
            at += 1
        return buf.decode()

    def json(self):
        """The labels as a JSON array, built in one buffer of the exact size."""
        parts = 0
        for i in range(len(self.sids)):
            parts += len(dumps(self.label_at(i)).encode()) + 1
        buf = bytearray(max(parts + 1, 2))
        buf[0] = 91  # "["
        at = 1
        for i in range(len(self.sids)):
            js = dumps(self.label_at(i)).encode()
            buf[at : at + len(js)] = js
            at += len(js)
            buf[at] = 44  # ","
            at += 1
        buf[max(at - 1, 1)] = 93  # "]" over the last comma
        return str(memoryview(buf)[: max(at, 2)], "utf-8")

    def labels_of(self, sids):
        out = []
        for s in sids:
            lab = self.label(s)
            if lab is not None:
                out.append(lab)
        return out

    def entries(self):
        """(summary id, label, ref count) of each entry, one at a time."""
        for i in range(len(self.sids)):
            yield self.sids[i], self.label_at(i), self.refs[i]
