# claw_memory.store.store: the Store class: store, update, forget (alone or in a batch),
# recall, list, and administration (open, flush, compact, verify, repair, restore).
# MIT license
#
# The records file is the journal and the source of truth: a change is one append (a batch
# of several changes is one append of several lines), and nothing else is written with it.
# What operations need is kept in RAM in compact form (table.py, the Catalog), built by one
# scan at open. memory_index.json and MEMORY.md are derived: written by flush()/close(), by
# an explicit compact(), and on open when their records-size stamp (or, for ESP-Claw's
# index, a consistency check) shows they are stale. Compaction runs on garbage derived
# from the file (changes since the last compaction and lines no active item needs), so a
# reboot does not reset it; forgotten text leaves every file within 5 changes or at close().

from .. import fsutil
from .. import item as itm
from .._compat import const, unix_time
from ..core import note
from ..paths import MEMORY_MD, MEMORY_MD_INIT, STORE_INDEX, STORE_RECORDS
from . import compact as compact_
from . import digest, index, keywords, markdown, records
from .changes import Changes
from .load import assess
from .read import decorate, items, rank

RECORDS = STORE_RECORDS
INDEX = STORE_INDEX
DIGEST = "memory_digest.log"
JOURNAL = ".compact"

MAX_ACTIVE = const(128)
CHANGE_THRESHOLD = const(5)  # changes since the last compaction that make garbage worth folding
RECALL_LIMIT = const(8)
SIZE_BOUND = const(131072)  # a records file over this with garbage in it is compacted
_DIGEST_FOLD_AT = const(16384)  # a digest this large is folded in (and trimmed)


class Store(Changes):
    """Long-term memory items under one directory (the data root's `memory/`). One writer
    per directory: another program's appends are seen (the RAM state is rebuilt when the
    records file changed size behind it), concurrent writes are not supported."""

    def __init__(self, directory, clock=unix_time, log=None, max_active=MAX_ACTIVE):
        self.dir = directory
        self.records_path = directory + "/" + RECORDS
        self.index_path = directory + "/" + INDEX
        self.digest_path = directory + "/" + DIGEST
        self.md_path = directory + "/" + MEMORY_MD
        self.journal_path = directory + "/" + JOURNAL
        self.max_active = max_active
        self.clock = clock
        self._log = log
        self._tab = None  # Table; None: not loaded (or to be rebuilt from the files)
        self._cat = None  # Catalog
        self._size = -1  # size of the records file the RAM state describes
        self._torn = False  # the records file ends with a torn line
        self._fold = 0  # digest offset from which recall lines are not folded in yet
        self._rows = b""  # digest lines of changes, not written yet
        self._fresh = False  # memory_index.json and MEMORY.md describe the records
        self._due = False  # a compaction failed: retried at the next change
        self._seq = 0
        self._pend = None  # lines of the batch in progress
        self.compactions = 0  # run by this Store (a list() in progress must not outlive one)

    def _note(self, msg):
        note(self._log, msg)

    # -- loading --------------------------------------------------------------------------

    def _settle(self):
        # A committed compaction is finished; other leftovers are unfinished writes. Derived
        # files are never adopted from a .tmp: they are rebuilt from the records instead.
        fsutil.recover([self.records_path, self.digest_path], journal=self.journal_path)
        for p in (self.index_path, self.md_path):
            fsutil.remove(p + ".tmp")

    def open(self):
        """Load the store (once; again when the records file changed behind it): settle
        leftovers, create missing files, scan the records, bring stale derived files up to
        date and compact when garbage is due."""
        if self._tab is not None and fsutil.size(self.records_path) == self._size:
            return
        if self._pend is not None:
            raise OSError(16, "the records file changed during a batch")
        why = self._load()
        self._maybe_compact()
        if not self._fresh and self._size == 0 and not self._tab.lines:
            # A new store: ESP-Claw's initial files (claw_memory_init).
            if not fsutil.exists(self.md_path):
                fsutil.write_file(self.md_path, MEMORY_MD_INIT.encode())
            fsutil.replace(self.index_path, index.empty())
            self._fresh = True
        if not self._fresh:
            self._note("memory index or MEMORY.md %s: rewritten" % why)
            try:
                self._write_derived()
            except OSError as e:  # they stay stale: written again at the next flush
                self._note("memory index or MEMORY.md not written: %s" % (e,))

    def _load(self):
        fsutil.makedirs(self.dir)
        self._settle()
        for p in (self.records_path, self.digest_path):
            if fsutil.size(p) < 0:
                fsutil.write_file(p, b"")
        a = assess(self)
        self._tab, self._cat, self._fold = a.tab, a.cat, a.fold
        self._size, self._torn = a.size, a.torn
        self._fresh = a.fresh
        self._pend = None
        self._seq = self.clock() % 10000
        return a.why

    def _invalidate(self):
        # RAM no longer matches the files (a failed write or compaction): rebuild at next use.
        self._tab = None
        self._pend = None

    def _item(self, slot):
        """The item of a slot (its latest line), from the pending batch or from flash."""
        off = self._tab.off[slot]
        if off >= self._size:
            at = self._size + (1 if self._torn else 0)
            for line in self._pend or ():
                if at == off:
                    return records.parse(line, 1)[0]
                at += len(line)
            return None
        return records.read_item(self.records_path, off)

    def _decorate(self, it):
        return decorate(self._cat, it)

    # -- changes --------------------------------------------------------------------------

    # -- reads ----------------------------------------------------------------------------

    def recall(self, labels=(), limit=RECALL_LIMIT):
        """Items carrying any of the first 3 given labels (exact catalog labels; unknown ones
        ignored), best first: access_count, then updated_at, then id. No labels: the best of
        all. Records are not rewritten: the returned items add `recall` digest lines, in one
        append."""
        self.open()
        if not isinstance(limit, int) or isinstance(limit, bool) or limit <= 0:
            limit = RECALL_LIMIT
        if isinstance(labels, str):
            labels = [labels]
        wanted = [lab for lab in labels or () if isinstance(lab, str) and lab][:3]
        cat = self._cat
        sids = [cat.sids[i] for i in range(len(cat)) if cat.label_at(i) in wanted]
        if wanted and not sids:
            return []
        tab = self._tab
        cand = [i for i in tab.active_slots() if not sids or tab.has_sid(i, sids)]
        found = [self._decorate(self._item(i)) for i in rank(self.records_path, tab, cand, limit)]
        if found:
            rows = digest.rows(self.clock(), [("recall", it["id"], "access_count+1") for it in found])
            digest.append(self.digest_path, self._rows + rows)
            self._rows = b""
            if fsutil.size(self.digest_path) >= _DIGEST_FOLD_AT:
                self._due = True
                self._maybe_compact()
        return found

    def list(self):
        """Every active item, best first, one at a time (an iterator: at capacity the items
        would not fit in RAM together)."""
        self.open()
        epoch = self.compactions
        for slot in rank(self.records_path, self._tab, self._tab.active_slots()):
            if self.compactions != epoch or self._tab is None:
                raise OSError(11, "the store was compacted during list()")
            if not self._tab.live[slot]:
                continue  # forgotten or evicted since list() began
            it = self._item(slot)
            if it is not None:
                yield self._decorate(it)

    def labels(self):
        """The label catalog, one entry at a time: {"summary_id","label","ref_count"} in
        catalog order."""
        self.open()
        for sid, label, refs in self._cat.entries():
            yield {"summary_id": sid, "label": label, "ref_count": refs}

    def catalog_text(self, prefix="- ", empty="- (empty)\n"):
        """The catalog's labels as text, one per line (the Long-term Memory provider's)."""
        self.open()
        return self._cat.listing(prefix, empty)

    def labels_json(self):
        """The catalog's labels as a JSON array (text), built without a list of them."""
        self.open()
        return self._cat.json()

    def has_label(self, label):
        """Whether `label` is in the catalog (exactly)."""
        self.open()
        return isinstance(label, str) and self._cat.find(label) >= 0

    def count(self):
        """Active items."""
        self.open()
        return self._tab.active

    def get(self, memory_id):
        """One active item by id, or None."""
        self.open()
        if not isinstance(memory_id, str) or not memory_id:
            return None
        slot = self._tab.slot(memory_id)
        it = self._item(slot) if slot >= 0 and self._tab.live[slot] else None
        return None if it is None or it["id"] != memory_id else self._decorate(it)

    def ids_where(self, test):
        """Ids of the active items `test(item)` accepts, in file order (read one at a time)."""
        self.open()
        tab = self._tab
        out = []
        for slot in sorted(tab.active_slots(), key=lambda i: tab.off[i]):
            it = self._item(slot)
            if it is not None and test(it):
                out.append(it["id"])
        return out

    # -- derived files, compaction --------------------------------------------------------

    def _write_derived(self):
        """MEMORY.md, then memory_index.json (its stamp marks both as describing the
        records)."""
        tab, cat, path = self._tab, self._cat, self.records_path
        fsutil.replace(self.md_path, markdown.writer(cat, items(path, tab, cat, True)))
        kw = keywords.writer(items(path, tab, cat, False), 3 * tab.active)
        fsutil.replace(self.index_path, index.writer(self._cat, self._fold, self._size, kw))
        self._fresh = True

    def _drop_derived(self):
        # Before the records are replaced (compaction, restore): an index left beside new
        # records could carry a records_size stamp the new file happens to match, and be
        # taken as describing it (and both may hold forgotten text).
        for p in (self.index_path, self.md_path):
            fsutil.remove(p)

    def _write_rows(self):
        if self._rows:
            digest.append(self.digest_path, self._rows)
            self._rows = b""

    def _garbage_due(self):
        # Text the user asked to lose leaves within 5 changes; evicted items' lines (text
        # nobody asked to lose, gone from every read already) wait until they are a third of
        # the lines (the file at most 1.5 times its live size), so that a store at capacity
        # rewrites the file every 32nd time at 128 items, not every 5th: its flash cost per
        # store stays within 2x of a small store's.
        tab = self._tab
        return (tab.changes >= CHANGE_THRESHOLD and tab.private() > 0) or (
            tab.evicted and 6 * tab.evicted >= tab.lines) or (
            tab.garbage() > 0 and self._size > SIZE_BOUND) or tab.active > self.max_active

    def _maybe_compact(self):
        if self._due or self._garbage_due():
            try:
                self._compact()
            except Exception as e:  # noqa: BLE001 -- the change that triggered it is saved
                self._due = True
                self._note("memory compaction failed, retried at the next change: %s" % (e,))
                self._load()  # the old files, or the committed new ones: read them again

    def _compact(self):
        try:
            tab, cat, fold = compact_.compact(self, self._tab, self._cat, self._fold, self._rows)
        except BaseException:
            self._invalidate()  # the old table was shed, the catalog rebuilt in place
            raise
        self._tab, self._cat, self._fold = tab, cat, fold
        self._rows = b""
        self._size = fsutil.size(self.records_path)
        self._torn = False
        self._fresh = False
        self._due = False
        self.compactions += 1
        self._note("memory compacted: %d items, %d labels, %d bytes" % (tab.active, len(cat), self._size))

    def compact(self):
        """Fold recall counts in, merge duplicates, drop tombstones, keep the best 128; then
        write every derived file (memory_index.json, MEMORY.md)."""
        self.open()
        self._compact()
        self._write_derived()

    def flush(self):
        """Write what is only in RAM: batched digest lines, and memory_index.json and
        MEMORY.md when they are stale. After flush() the files are what ESP-Claw expects."""
        if self._tab is None:
            return
        self.open()
        self._write_rows()
        if not self._fresh:
            self._write_derived()

    def close(self):
        """Flush; forgotten text and other garbage leave the records first."""
        if self._tab is None:
            return
        self.open()
        if self._tab.garbage() or self._tab.active > self.max_active:
            self._compact()
        self.flush()

    def restore(self, items):
        """Replace the store's content with `items` (dicts with ESP-Claw's fields, as exported),
        kept as they are, ids and counts included; then compact. For import."""
        lines = []
        for n, obj in enumerate(items):
            it = itm.from_obj(obj)
            if it is None or not it["content"]:
                raise ValueError("item %d: needs an id and a content" % n)
            if not it["deleted"]:
                lines.append(itm.to_json(it).encode() + b"\n")
        fsutil.makedirs(self.dir)
        self._drop_derived()
        fsutil.replace(self.records_path, b"".join(lines))
        self._invalidate()
        self.compact()

    def verify(self):
        """What is on disk and what repair would do, without writing: a report dict."""
        report = {"items": 0, "tombstones": 0, "bad_lines": 0, "index": "ok",
                  "records_bytes": max(fsutil.size(self.records_path), 0),
                  "digest_bytes": max(fsutil.size(self.digest_path), 0),
                  "leftovers": [p + ".tmp" for p in (self.records_path, self.index_path,
                                                     self.md_path, self.digest_path)
                                if fsutil.exists(p + ".tmp")]}
        if fsutil.exists(self.journal_path):
            report["leftovers"].append(self.journal_path)
        if fsutil.size(self.records_path) < 0:
            return report
        a = assess(self)
        report["items"] = a.tab.active
        report["tombstones"] = sum(1 for i in range(len(a.tab)) if not a.tab.live[i])
        report["bad_lines"] = a.bad
        if not a.fresh:
            report["index"] = a.why
        return report

    def repair(self):
        """Settle leftovers, drop unreadable lines and tombstones (a compaction), and write
        every derived file; returns what was found (verify's report)."""
        report = self.verify()
        self._invalidate()
        self.open()
        if report["bad_lines"] or report["leftovers"] or report["index"] != "ok":
            self.compact()
        else:
            self.flush()
        return report
