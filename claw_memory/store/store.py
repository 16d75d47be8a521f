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

from .. import fsutil, text
from .. import item as itm
from .. import memory_md
from .._compat import const, unix_time
from ..core import MissingContent, NotFound, note
from ..paths import STORE_RECORDS
from . import compact as compact_
from . import digest, index, keywords, markdown, records
from .index import Catalog
from .table import Table

RECORDS = STORE_RECORDS
INDEX = "memory_index.json"
DIGEST = "memory_digest.log"
MEMORY_MD = memory_md.NAME
JOURNAL = ".compact"

MAX_ACTIVE = const(128)
CHANGE_THRESHOLD = const(5)  # changes since the last compaction that make garbage worth folding
RECALL_LIMIT = const(8)
SIZE_BOUND = const(131072)  # a records file over this with garbage in it is compacted
_DIGEST_FOLD_AT = const(16384)  # a digest this large is folded in (and trimmed)
_ROWS_MAX = const(1024)  # bytes of batched digest rows kept in RAM before they are written


class Store:
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
        self._epoch = 0  # compactions so far (a list() in progress must not outlive one)

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
                fsutil.write_file(self.md_path, memory_md.DEFAULT.encode())
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
        a = _assess(self)
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
        return _decorate(self._cat, it)

    # -- changes --------------------------------------------------------------------------

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

    def _add(self, it, slot=-1):
        # One line of the batch: its place in the file is known before it is written.
        at = self._size + (1 if self._torn else 0) + sum(len(x) for x in self._pend)
        line = itm.to_json(it).encode() + b"\n"
        self._pend.append(line)
        tab = self._tab
        tab.put(it, at, slot)
        tab.lines += 1
        tab.changes += 1

    def _finish(self):
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
        the other), or -1."""
        now = self.clock()
        cnorm = itm.norm(cand["content"])
        ckey = itm.key_of(cnorm, now)
        tab = self._tab
        for i in range(len(tab)):
            n = tab.norm[i]
            if n is None or i == ignore:
                continue
            if itm.key_of(n, now) == ckey or itm.semantic_match(n, cnorm):
                return i
        return -1

    def _new_id(self, now):
        # The sequence starts from the clock, as ESP-Claw's; a board without a set clock
        # boots at the same time every time, so skip ids the records already hold.
        for _ in range(10000):
            self._seq += 1
            mid = itm.new_id(now, self._seq)
            if self._tab.slot(mid) < 0:
                return mid
        raise OSError(28, "no free memory id this second")

    def _place(self, it, now):
        # A new item: fresh id and times, its labels referenced in the catalog.
        it["id"] = it["id"] or self._new_id(now)
        it["created_at"] = it["updated_at"] = now
        it["summary_ids"] = [self._cat.ensure(lab) for lab in itm.labels(it["tags"])]
        self._cat.add_refs(it["summary_ids"], 1)

    def _tombstone(self, slot, old, now):
        tomb = dict(old)
        tomb["deleted"] = True
        tomb["updated_at"] = now
        self._cat.add_refs(old["summary_ids"], -1)
        self._cat.drop_unused()
        self._add(tomb, slot)

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
        found = [self._decorate(self._item(i)) for i in _rank(self.records_path, tab, cand, limit)]
        if found:
            rows = digest.rows(self.clock(), [("recall", it["id"], "access_count+1") for it in found])
            fsutil.append(self.digest_path, self._rows + rows)
            self._rows = b""
            if fsutil.size(self.digest_path) >= _DIGEST_FOLD_AT:
                self._due = True
                self._maybe_compact()
        return found

    def list(self):
        """Every active item, best first, one at a time (an iterator: at capacity the items
        would not fit in RAM together)."""
        self.open()
        epoch = self._epoch
        for slot in _rank(self.records_path, self._tab, self._tab.active_slots()):
            if self._epoch != epoch or self._tab is None:
                raise OSError(11, "the store was compacted during list()")
            it = self._item(slot)
            if it is not None:
                yield self._decorate(it)

    def labels(self):
        """The label catalog, one entry at a time: {"summary_id","label","ref_count"} in
        catalog order."""
        self.open()
        for sid, label, refs in self._cat.entries():
            yield {"summary_id": sid, "label": label, "ref_count": refs}

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
        fsutil.replace(self.md_path, markdown.writer(cat, _items(path, tab, cat, True)))
        kw = keywords.writer(_items(path, tab, cat, False), 3 * tab.active)
        fsutil.replace(self.index_path, index.writer(self._cat, self._fold, self._size, kw))
        self._fresh = True

    def _write_rows(self):
        if self._rows:
            fsutil.append(self.digest_path, self._rows)
            self._rows = b""

    def _garbage_due(self):
        tab = self._tab
        g = tab.garbage()
        # Over capacity, evictions wait for a batch of them (as ESP-Claw's store grows by up
        # to 5 items between compactions).
        return (tab.changes >= CHANGE_THRESHOLD and g > 0) or (
            tab.active >= self.max_active + CHANGE_THRESHOLD) or (g > 0 and self._size > SIZE_BOUND)

    def _maybe_compact(self):
        if self._due or self._garbage_due():
            try:
                self._compact()
            except Exception as e:  # noqa: BLE001 -- the change that triggered it is saved
                self._due = True
                self._note("memory compaction failed, retried at the next change: %s" % (e,))
                self._load()  # the old files, or the committed new ones: read them again

    def _compact(self):
        tab, cat, fold = compact_.compact(self, self._tab, self._cat, self._fold, self._rows)
        self._tab, self._cat, self._fold = tab, cat, fold
        self._rows = b""
        self._size = fsutil.size(self.records_path)
        self._torn = False
        self._fresh = False
        self._due = False
        self._epoch += 1
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
        a = _assess(self)
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


class _Assessment:
    pass


def _scan(path):
    """(Table, unreadable lines, whether the last line is torn) of a records file."""
    tab = Table()
    bad = 0
    found = records.lines(path)
    try:
        for off, raw in found:
            tab.lines += 1
            if raw is None:
                bad += 1
                continue
            it, compacted = records.parse(raw, off)
            if it is None:
                bad += 1
                continue
            tab.put(it, off, tab.slot(it["id"]))
            if not compacted:
                tab.changes += 1
    finally:
        found.close()  # MicroPython does not close an abandoned generator's file
    size = fsutil.size(path)
    torn = False
    if size > 0:
        with open(path, "rb") as f:
            f.seek(size - 1)
            torn = f.read(1) != b"\n"
    return tab, bad, torn


def _assess(store):
    """Everything open() needs, read from the files without writing: the table, the catalog
    (from the index when it describes the records, else derived from the items), the fold
    start, and whether the derived files are fresh (and why not)."""
    a = _Assessment()
    a.size = fsutil.size(store.records_path)
    a.tab, a.bad, a.torn = _scan(store.records_path)
    tab = a.tab
    idx = index.read(store.index_path)
    counts = {}
    for i in tab.active_slots():
        for s in tab.slot_sids(i):
            counts[s] = counts.get(s, 0) + 1
    cat = Catalog()
    missing = []
    if idx.ok:
        for sid, label, refs in idx.catalog.entries():
            if counts.get(sid) and cat.find(label) < 0:
                cat.add(sid, label, counts[sid])
    for s in counts:
        if cat.index_of(s) < 0:
            missing.append(s)
    if missing:
        _labels_from_items(store.records_path, tab, missing, cat, counts)
    dsize = max(fsutil.size(store.digest_path), 0)
    fold, dnext = digest.last_compact(store.digest_path, dsize) if dsize else (0, 0)
    if idx.ok and idx.records_size is None and idx.digest_off and idx.digest_off <= dsize:
        fold = max(fold, idx.digest_off)  # ESP-Claw's own fold point
    cat.next_id = max(idx.catalog.next_id if idx.ok else 1, tab.max_sid + 1, dnext, cat.next_id, 1)
    a.cat, a.fold = cat, fold
    a.why = ""
    if not idx.ok:
        a.why = "missing" if fsutil.size(store.index_path) < 0 else "corrupt"
    elif not fsutil.exists(store.md_path):
        a.why = "MEMORY.md missing"
    elif idx.records_size is not None and idx.records_size != a.size:
        a.why = "behind the records"
    elif idx.cleaned:
        a.why = "labels to normalise"
    elif idx.records_size is None and (missing or len(cat) != len(idx.catalog) or _refs_differ(idx.catalog, cat)):
        a.why = "does not match the records"
    elif idx.records_size is None and not _md_matches(store, tab, cat):
        a.why = "MEMORY.md does not match the records"
    a.fresh = not a.why
    return a


class _Compare:
    # A file-like sink that compares what is written with a file's bytes.
    def __init__(self, f):
        self.f = f
        self.same = True

    def write(self, data):
        if self.same and self.f.read(len(data)) != bytes(data):
            self.same = False


def _md_matches(store, tab, cat):
    """Whether MEMORY.md is what we would render (an index without our stamp, ESP-Claw's,
    says nothing about it)."""
    with open(store.md_path, "rb") as f:
        cmp = _Compare(f)
        markdown.writer(cat, _items(store.records_path, tab, cat, True))(cmp)
        return cmp.same and not f.read(1)


def _decorate(cat, it):
    out = dict(it)
    out["summary_labels"] = cat.labels_of(it["summary_ids"])
    return out


def _rank(path, tab, slots, limit=None):
    """`slots` best first: access count, then recency, then id (ids are read from the
    records only for slots that tie on both counts); at most `limit`."""
    ranked = tab.ranked(slots)
    out = []
    i = 0
    n = len(ranked)
    while i < n and (limit is None or len(out) < limit):
        j = i + 1
        while j < n and tab.same_rank(ranked[i], ranked[j]):
            j += 1
        if j - i == 1:
            out.append(ranked[i])
        else:
            tied = [(records.read_item(path, tab.off[s])["id"], s) for s in ranked[i:j]]
            tied.sort()
            out += [s for _, s in tied]
        i = j
    return out if limit is None else out[:limit]


def _items(path, tab, cat, ranked):
    """A generator function over the active items (best first, or in file order), decorated,
    read one at a time."""

    def gen():
        # Opened per item: a consumer that stops early (an error while writing) must not
        # leave a file open, and MicroPython does not close an abandoned generator's file.
        slots = _rank(path, tab, tab.active_slots()) if ranked else sorted(
            tab.active_slots(), key=lambda i: tab.off[i])
        for slot in slots:
            it = records.read_item(path, tab.off[slot])
            if it is not None:
                yield _decorate(cat, it)

    return gen


def _refs_differ(old, new):
    for sid, label, refs in old.entries():
        i = new.index_of(sid)
        if i < 0 or new.refs[i] != refs or new.label_at(i) != label:
            return True
    return False


def _labels_from_items(path, tab, missing, cat, counts):
    # Labels of summary ids the index does not name, from the tags of the items that use
    # them (an item's labels and summary ids are in the same order).
    for slot in sorted(tab.active_slots(), key=lambda i: tab.off[i]):
        sids = tab.slot_sids(slot)
        if not any(s in missing for s in sids):
            continue
        it = records.read_item(path, tab.off[slot])
        if it is None:
            continue
        for s, lab in zip(it["summary_ids"], itm.labels(it["tags"])):
            if s in missing and cat.index_of(s) < 0 and cat.find(lab) < 0:
                cat.add(s, lab, counts[s])
        if all(cat.index_of(s) >= 0 for s in missing):
            break
    # An id whose label cannot be found contributes no label, as in ESP-Claw.
