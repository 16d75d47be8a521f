# claw_memory.store.state: the one object that holds what the store knows about its files
# (the RAM table, the catalog, the records size, counters), and what brings it in line with
# them: open (settle leftovers, load), invalidate, the derived files and compaction.
# MIT license
#
# The records file is the journal and the source of truth; State describes one size of it.
# A batch (batch.py) changes State through the names declared in __init__, compaction
# (compact.py) reads it and returns the new table and catalog, Store (store.py) reads it.
# memory_index.json and MEMORY.md are derived: written by flush()/close(), by an explicit
# compact(), and on open when their records-size stamp (or, for ESP-Claw's index, a
# consistency check) shows they are stale. Compaction runs on garbage derived from the file
# (changes since the last compaction and lines no active item needs), so a reboot does not
# reset it; forgotten text leaves every file within 5 changes or at close().

from .. import fsutil
from .._compat import EBUSY, const
from ..core import note
from ..paths import MEMORY_MD, MEMORY_MD_INIT, STORE_INDEX, STORE_RECORDS
from . import digest, index, records
from .load import assess
from .read import decorate, items

RECORDS = STORE_RECORDS
INDEX = STORE_INDEX
DIGEST = "memory_digest.log"
JOURNAL = ".compact"

CHANGE_THRESHOLD = const(5)  # changes since the last compaction that make garbage worth folding
SIZE_BOUND = const(131072)  # a records file over this with garbage in it is compacted
_DIGEST_FOLD_AT = const(16384)  # a digest this large is folded in (and trimmed)


class State:
    """The files of one store directory and the RAM state that describes them."""

    def __init__(self, directory, clock, log, max_active):
        self.dir = directory
        self.records_path = directory + "/" + RECORDS
        self.index_path = directory + "/" + INDEX
        self.digest_path = directory + "/" + DIGEST
        self.md_path = directory + "/" + MEMORY_MD
        self.journal_path = directory + "/" + JOURNAL
        self.max_active = max_active
        self.clock = clock
        self.log = log
        self.tab = None  # Table; None: not loaded (or to be rebuilt from the files)
        self.cat = None  # Catalog
        self.terms = None  # rank.Terms: the term statistics of the table's slots
        self.size = -1  # size of the records file the RAM state describes
        self.torn = False  # the records file ends with a torn line
        self.fold = 0  # digest offset from which recall lines are not folded in yet
        self.rows = b""  # digest lines of changes, not written yet
        self.fresh = False  # memory_index.json and MEMORY.md describe the records
        self.due = False  # a compaction failed: retried at the next change
        self.seq = 0  # the memory id sequence (batch.py)
        self.pend = None  # lines of the batch in progress: in the table, not in the file yet
        self.compactions = 0  # run by this store (a list() in progress must not outlive one)

    def note(self, msg):
        note(self.log, msg)

    # -- loading --------------------------------------------------------------------------

    def settle(self):
        # A committed compaction is finished; other leftovers are unfinished writes. Derived
        # files are never adopted from a .tmp: they are rebuilt from the records instead.
        fsutil.recover([self.records_path, self.digest_path], journal=self.journal_path)
        for p in (self.index_path, self.md_path):
            fsutil.remove(p + ".tmp")

    def open(self):
        """Load (once; again when the records file changed behind it): settle leftovers,
        create missing files, scan the records, bring stale derived files up to date and
        compact when garbage is due."""
        if self.tab is not None and fsutil.size(self.records_path) == self.size:
            return
        if self.pend is not None:
            raise OSError(EBUSY, "the records file changed during a batch")
        why = self.load()
        self.maybe_compact()
        if not self.fresh and self.size == 0 and not self.tab.lines:
            # A new store: ESP-Claw's initial files (claw_memory_init).
            if not fsutil.exists(self.md_path):
                fsutil.write_file(self.md_path, MEMORY_MD_INIT.encode())
            fsutil.replace(self.index_path, index.empty())
            self.fresh = True
        if not self.fresh:
            self.note("memory index or MEMORY.md %s: rewritten" % why)
            try:
                self.write_derived()
            except OSError as e:  # they stay stale: written again at the next flush
                self.note("memory index or MEMORY.md not written: %s" % (e,))

    def load(self):
        """Read the files into RAM (load.assess); returns why the derived files are stale
        ("" when fresh)."""
        fsutil.makedirs(self.dir)
        self.settle()
        for p in (self.records_path, self.digest_path):
            if fsutil.size(p) < 0:
                fsutil.write_file(p, b"")
        a = assess(self)
        self.tab, self.cat, self.fold, self.terms = a.tab, a.cat, a.fold, a.terms
        self.size, self.torn = a.size, a.torn
        self.fresh = a.fresh
        self.pend = None
        self.seq = self.clock() % 10000
        return a.why

    def invalidate(self):
        # RAM no longer matches the files (a failed write or compaction): rebuild at next use.
        self.tab = None
        self.terms = None
        self.pend = None

    # -- reading --------------------------------------------------------------------------

    def item(self, slot):
        """The item of a slot (its latest line), from the batch in progress or from flash."""
        off = self.tab.off[slot]
        if off >= self.size:
            at = self.size + (1 if self.torn else 0)
            for line in self.pend or ():
                if at == off:
                    return records.parse(line, 1)[0]
                at += len(line)
            return None
        return records.read_item(self.records_path, off)

    def decorated(self, slot, f=None):
        """The item of a slot with its labels (read.decorate), item and labels read through one
        open of the records file (`f`, open, or opened here), a label within the item's own
        line taken from it; None when its line is not an item."""
        off = self.tab.off[slot]
        if off >= self.size:  # a line of the batch in progress
            it = self.item(slot)
            return None if it is None else decorate(self.cat, it)
        if f is None:
            with open(self.records_path, "rb") as f:
                return self.decorated(slot, f)
        raw = records.line_at(f, off)
        it = None if raw is None else records.parse(raw, off)[0]
        return None if it is None else decorate(self.cat, it, f, raw, off)

    def read_into(self, f, off, buf):
        """Fill `buf` (a memoryview) with the records' bytes at `off` of the open records file
        `f`: a label (catalog.py). (A batch places its new labels in its lines when it encodes
        them, just before their append; nothing reads a label in between, and a failed append
        drops the RAM state.)"""
        f.seek(off)
        f.readinto(buf)

    def ids_where(self, test):
        """Ids of the active items (a batch's changes included) `test(item)` accepts, in
        file order (read one at a time)."""
        out = []
        for slot in self.tab.file_order():
            it = self.item(slot)
            if it is not None and test(it):
                out.append(it["id"])
        return out

    # -- the digest, derived files, compaction --------------------------------------------

    def write_rows(self):
        if self.rows:
            digest.append(self.digest_path, self.rows)
            self.rows = b""

    def recalled(self, found):
        """The recall lines of the items `found`, appended with the batched lines in one
        append; a digest grown large is folded in by a compaction."""
        rows = digest.rows(self.clock(), [("recall", it["id"], "access_count+1") for it in found])
        digest.append(self.digest_path, self.rows + rows)
        self.rows = b""
        if fsutil.size(self.digest_path) >= _DIGEST_FOLD_AT:
            self.due = True
            self.maybe_compact()

    def write_derived(self):
        """MEMORY.md, then memory_index.json (its stamp marks both as describing the
        records)."""
        from . import markdown

        tab, cat, path = self.tab, self.cat, self.records_path
        fsutil.replace(self.md_path, markdown.writer(cat, items(path, tab, cat, True)))
        kw = index.keyword_writer(items(path, tab, cat, False), 3 * tab.active)
        fsutil.replace(self.index_path, index.writer(self.cat, self.fold, self.size, kw))
        self.fresh = True

    def drop_derived(self):
        """Remove memory_index.json and MEMORY.md. Before the records are replaced
        (compaction, restore): an index left beside new records could carry a records_size
        stamp the new file happens to match, and be taken as describing it (and both may
        hold forgotten text)."""
        for p in (self.index_path, self.md_path):
            fsutil.remove(p)

    def garbage_due(self):
        # Text the user asked to lose leaves within 5 changes; evicted items' lines (text
        # nobody asked to lose, gone from every read already) wait until they are a third of
        # the lines (the file at most 1.5 times its live size), so that a store at capacity
        # rewrites the file every 32nd time at 128 items, not every 5th: its flash cost per
        # store stays within 2x of a small store's.
        tab = self.tab
        return (tab.changes >= CHANGE_THRESHOLD and tab.private() > 0) or (
            tab.evicted and 6 * tab.evicted >= tab.lines) or (
            tab.garbage() > 0 and self.size > SIZE_BOUND) or tab.active > self.max_active

    def maybe_compact(self, keep=None):
        """Compact when garbage is due; `keep`: where the lines of the change that asks start
        (compact.py keeps them as they are)."""
        if self.due or self.garbage_due():
            try:
                self.compact(keep)
            except Exception as e:  # noqa: BLE001 -- the change that triggered it is saved
                self.due = True
                self.note("memory compaction failed, retried at the next change: %s" % (e,))
                self.load()  # the old files, or the committed new ones: read them again

    def compact(self, keep=None):
        """Rewrite the records and the digest (compact.py) and take its table and catalog."""
        from . import compact as compact_

        self.terms = None  # built anew by the compaction, in the room the old one leaves
        try:
            tab, cat, fold, terms = compact_.compact(self, keep)
        except BaseException:
            self.invalidate()  # the old table was shed, the catalog rebuilt in place
            raise
        self.tab, self.cat, self.fold, self.terms = tab, cat, fold, terms
        self.rows = b""
        self.size = fsutil.size(self.records_path)
        self.torn = False
        self.fresh = False
        self.due = False
        self.compactions += 1
        self.note("memory compacted: %d items, %d labels, %d bytes" % (tab.active, len(cat), self.size))
