# claw_memory.store.changes: store, update and forget, alone or in a batch: each change
# updates the RAM state and adds lines to the batch, and the batch is one append.
# MIT license

from array import array

from .. import fsutil, text
from .. import item as itm
from .._compat import ENOSPC, const
from ..core import MissingContent, NotFound
from . import digest

_ROWS_MAX = const(1024)  # bytes of batched digest rows kept in RAM before they are written
_ESP_LINE = const(1024)  # ESP-Claw reads records lines with fgets into 1024 bytes
_EVICTED = b',"evicted":true}'


class Changes:
    """The change operations of Store (a mixin: they share its RAM state)."""

    def batch(self):
        """A batch of changes written as one append, all or nothing across a power cut:
            with store.batch() as b:
                it, changed = b.store("User lives in Lisbon now", "city")
                b.forget(old_id)
        Inside, each change sees the ones before it; on an exception nothing is written."""
        return Batch(self)

    def store(self, content, tags="", keywords="", source="manual", memory_id=None):
        """Store one fact; returns (item, changed). A duplicate of an active item (same key,
        or one contains the other) returns that item with changed=False and writes nothing."""
        with self.batch() as b:
            return b.store(content, tags, keywords, source, memory_id)

    def update(self, memory_id, content=None, tags=None, keywords=None, source=None):
        """Replace an item: the new version gets a new id and the old one is tombstoned, in
        one append. Returns (item, changed); unchanged fields stay as they were."""
        with self.batch() as b:
            return b.update(memory_id, content, tags, keywords, source)

    def forget(self, memory_id):
        """Tombstone an item; returns (the item as it was, True)."""
        with self.batch() as b:
            return b.forget(memory_id)

    def _begin(self):
        self.open()
        if self._pend is not None:
            raise ValueError("a batch is already in progress")
        self._pend = []
        self._pend_rows = []
        self._kept = []  # slots this batch returned as duplicates: not evicted by it

    def _add(self, it, slot=-1, evicted=False):
        # One line of the batch: its place in the file is known before it is written.
        at = self._size + (1 if self._torn else 0) + sum(len(x) for x in self._pend)
        line = itm.to_json(it).encode()
        if evicted and len(line) + len(_EVICTED) < _ESP_LINE:
            # (a line ESP-Claw's reader takes whole: a longer one would hide the tombstone
            # from it; such a rare one goes unmarked, compacted as a forget is)
            line = line[:-1] + _EVICTED
            self._tab.evicted += 1
        line += b"\n"
        self._pend.append(line)
        tab = self._tab
        tab.put(it, at, slot)
        tab.lines += 1
        tab.changes += 1

    def _finish(self):
        try:
            self._evict()
        except BaseException:
            self._abort()
            raise
        lines, rows = self._pend, self._pend_rows
        if not lines:
            self._pend = None
            return
        data = (b"\n" if self._torn else b"") + b"".join(lines)
        try:
            start = fsutil.append(self.records_path, data)
        except BaseException:
            self._invalidate()  # the RAM state has the lines that did not make it
            raise
        self._pend = None
        # Durable from here: what follows is housekeeping, never reported as a failure.
        try:
            self._size = start + len(data)
            if self._torn:
                self._tab.lines += 1  # the torn line, ended by the newline: a bad line
            self._torn = False
            self._fresh = False
            self._rows += digest.rows(self.clock(), rows)
            if len(self._rows) > _ROWS_MAX:
                self._write_rows()
            self._maybe_compact()
        except Exception as e:  # noqa: BLE001
            self._note("memory saved; housekeeping deferred: %s" % (e,))
            self._invalidate()

    def _abort(self):
        if self._pend:
            self._invalidate()  # roll the RAM state back by rebuilding it from the files
        self._pend = None

    def _candidate(self, content, tags, keywords, source):
        if content is not None and not isinstance(content, (str, bytes)):
            raise ValueError("content must be text")
        content, tags, keywords = itm.normalize(content, tags, keywords)
        if not content:
            raise MissingContent("content is required")
        src = text.cut_bytes(text.trim(text.clean(source or "")), itm.SOURCE_MAX) or "manual"
        return {"id": "", "source": src, "content": content, "tags": tags, "keywords": keywords,
                "created_at": 0, "updated_at": 0, "access_count": 0, "deleted": False,
                "summary_ids": []}

    def _duplicate(self, cand, ignore=-1):
        """The slot of an active item `cand` duplicates (same dedupe key, or one contains
        the other), or -1: the table's fingerprints find the candidates, and each is read
        and compared exactly."""
        cnorm = itm.norm(cand["content"])
        for slot in self._tab.candidates(cnorm.encode(), ignore):
            it = self._item(slot)
            if it is not None and itm.duplicates(itm.norm(it["content"]), cnorm):
                return slot
        return -1

    def _new_id(self, now):
        # The sequence starts from the clock, as ESP-Claw's; a board without a set clock
        # boots at the same time every time, so skip ids the records already hold.
        for _ in range(10000):
            self._seq += 1
            mid = itm.new_id(now, self._seq)
            if self._tab.slot(mid) < 0:
                return mid
        raise OSError(ENOSPC, "no free memory id this second")

    def _place(self, it, now):
        # A new item: fresh id and times, its labels referenced in the catalog.
        it["id"] = it["id"] or self._new_id(now)
        it["created_at"] = it["updated_at"] = now
        it["summary_ids"] = [self._cat.ensure(lab) for lab in itm.labels(it["tags"])]
        self._cat.add_refs(it["summary_ids"], 1)

    def _tombstone(self, slot, old, now, evicted=False):
        tomb = dict(old)
        tomb["deleted"] = True
        tomb["updated_at"] = now
        self._cat.add_refs(old["summary_ids"], -1)
        self._cat.drop_unused()
        self._add(tomb, slot, evicted)

    def _unfolded(self, tab):
        # Per-slot recall counts and newest recall time since the fold start, read from the
        # digest once and then only what recalls appended since (a store at capacity would
        # otherwise read up to 16 KiB of digest every time). Kept on the table: a new one
        # (a load, a compaction) starts again from its fold start.
        dsize = max(fsutil.size(self.digest_path), 0)
        c = tab.recalls
        if c is None or c[2] > dsize:
            c = tab.recalls = [array("H"), array("I"), self._fold]
        counts, newest = digest.fold(self.digest_path, c[2], dsize, tab)
        old_c, old_n = c[0], c[1]
        for i in range(len(old_c)):
            counts[i] = min(counts[i] + old_c[i], 0xFFFF)
            newest[i] = max(newest[i], old_n[i])
        c[0], c[1], c[2] = counts, newest, dsize
        return counts, newest

    def _own(self, tab, i):
        # Written or returned by the batch in progress.
        return tab.off[i] >= self._size or i in self._kept

    def _lowest(self, tab, counts, newest, spare):
        # The first minimum score in file order among the live slots (`spare`: not the
        # batch's own).
        low = best = -1
        for i in range(len(tab)):
            if not tab.live[i] or spare and self._own(tab, i):
                continue
            sc = itm.score(min(tab.acc[i] + counts[i], 0xFFFF), max(tab.upd[i], newest[i]))
            if low < 0 or sc < best or (sc == best and tab.off[i] < tab.off[low]):
                low, best = i, sc
        return low

    def _evict(self):
        # Over capacity after the batch's changes: the lowest score goes (the first minimum
        # in file order, recall counts not folded in yet included: what a compaction keeps),
        # tombstoned in the same append, so no more than max_active items are ever active.
        # The items the batch writes or returns are not candidates while others are: a fact
        # just stored can be read back (a board without a set clock gives it an old time, and
        # a low score).
        # Its lines are garbage without private text: a compaction removes them when they
        # reach a third of the file's lines, or at close() (Store._garbage_due).
        tab = self._tab
        if tab.active <= self.max_active:
            return
        counts, newest = self._unfolded(tab)
        now = self.clock()
        # A batch of more items of its own than the capacity: all compete, as in compaction.
        spare = sum(1 for i in range(len(tab)) if tab.live[i] and self._own(tab, i)) <= self.max_active
        while tab.active > self.max_active:
            low = self._lowest(tab, counts, newest, spare)
            old = self._item(low)
            self._tombstone(low, old, now, True)
            self._pend_rows.append(("evict", old["id"], None))

    def _active(self, memory_id):
        """(slot, item) of an active item; ValueError without an id, NotFound without it."""
        if not isinstance(memory_id, str) or not memory_id:
            raise ValueError("memory_id is required")
        slot = self._tab.slot(memory_id)
        old = self._item(slot) if slot >= 0 and self._tab.live[slot] else None
        if old is None or old["id"] != memory_id:
            raise NotFound("no active memory %s" % text.cut_bytes(memory_id, 64))
        return slot, old

    def _op_store(self, content, tags, keywords, source, memory_id):
        cand = self._candidate(content, tags, keywords, source)
        if memory_id is not None:
            itm.check_id(memory_id)
        hit = self._duplicate(cand)
        if hit >= 0:
            self._kept.append(hit)
            return self._decorate(self._item(hit)), False
        slot = -1
        if memory_id is not None:
            slot = self._tab.slot(memory_id)
            if slot >= 0 and self._tab.live[slot]:
                raise ValueError("memory %s already exists: use update" % memory_id)
        cand["id"] = memory_id or ""
        self._place(cand, self.clock())
        self._add(cand, slot)
        self._pend_rows.append(("store", cand["id"], None))
        return self._decorate(cand), True

    def _op_update(self, memory_id, content, tags, keywords, source):
        slot, old = self._active(memory_id)
        rep = self._candidate(
            content or old["content"],
            old["tags"] if tags in (None, "") else tags,
            old["keywords"] if keywords in (None, "") else keywords,
            source or old["source"],
        )
        if itm.equivalent(rep, old):
            return self._decorate(old), False
        now = self.clock()
        hit = self._duplicate(rep, ignore=slot)
        if hit < 0:
            self._place(rep, now)
            self._add(rep)
            self._pend_rows.append(("update_store", rep["id"], memory_id))
            result = rep
        else:
            result = self._item(hit)
            self._kept.append(hit)
        self._tombstone(slot, old, now)
        self._pend_rows.append(("forget", memory_id, None))
        self._pend_rows.append(("update", result["id"], memory_id))
        return self._decorate(result), True

    def _op_forget(self, memory_id):
        slot, old = self._active(memory_id)
        out = self._decorate(old)
        self._tombstone(slot, old, self.clock())
        self._pend_rows.append(("forget", memory_id, None))
        return out, True


class Batch:
    """Changes written together as one append (Store.batch())."""

    def __init__(self, store):
        self._s = store

    def __enter__(self):
        self._s._begin()
        return self

    def __exit__(self, kind, exc, tb):
        if kind is None:
            self._s._finish()
        else:
            self._s._abort()
        return False

    def store(self, content, tags="", keywords="", source="manual", memory_id=None):
        return self._s._op_store(content, tags, keywords, source, memory_id)

    def update(self, memory_id, content=None, tags=None, keywords=None, source=None):
        return self._s._op_update(memory_id, content, tags, keywords, source)

    def forget(self, memory_id):
        return self._s._op_forget(memory_id)

    def ids_where(self, test):
        """Ids of the active items (this batch's changes included) `test(item)` accepts."""
        s = self._s
        tab = s._tab
        out = []
        for slot in sorted(tab.active_slots(), key=lambda i: tab.off[i]):
            it = s._item(slot)
            if it is not None and test(it):
                out.append(it["id"])
        return out


