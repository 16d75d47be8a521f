# claw_memory.store.store: the Store class: store, update, forget, recall, list, and
# administration (open, verify, repair, restore).
# MIT license
#
# Durability: one append per operation to the records file, then MEMORY.md and the index
# replaced atomically, the index last: it carries the records file's size, so a cut anywhere
# in between is found on open and repaired by a compaction.

from .. import fsutil, text
from .. import item as itm
from .. import memory_md
from .._compat import const, unix_time
from ..core import MissingContent, NotFound, note
from ..paths import STORE_RECORDS
from . import compact as compact_
from . import digest, markdown, records
from . import keywords as kwindex
from .index import MAX as INDEX_MAX
from .index import Catalog, empty, from_obj, load, writer

RECORDS = STORE_RECORDS
INDEX = "memory_index.json"
DIGEST = "memory_digest.log"
MEMORY_MD = memory_md.NAME
JOURNAL = ".compact"

MAX_ACTIVE = const(128)
CHANGE_THRESHOLD = const(5)
SIZE_THRESHOLD = const(32768)
RECALL_LIMIT = const(8)
# 128 items of full length fill more than 32 KiB, so the size trigger also needs growth since
# the last compaction, or a full store would compact after every write.
_SIZE_GROWTH = const(4096)
_DIGEST_FOLD_AT = const(32768)  # a recall folds the digest in when it grows past this


class Store:
    """Long-term memory items under one directory (the data root's `memory/`)."""

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
        self._ready = False
        self._changes = 0
        self._compacted_size = 0  # records size at open or after the last compaction
        self._seq = 0

    def _note(self, msg):
        note(self._log, msg)

    # -- files ----------------------------------------------------------------------------

    def _files(self):
        return [self.records_path, self.index_path, self.md_path, self.digest_path]

    def _adoptable(self, tmp):
        # Outside a journal only the index and MEMORY.md are replaced one file at a time.
        if tmp == self.index_path + ".tmp":  # whole, not only its head
            return from_obj(text.json_value(fsutil.read_bounded(tmp, INDEX_MAX) or b"")) is not None
        if tmp == self.md_path + ".tmp":
            data = fsutil.read_bounded(tmp, 1 << 20) or b""
            return data.startswith(b"# ") and data.endswith(b"\n")
        return False

    def open(self):
        """Recover, create missing files, and compact when the index is missing, corrupt or
        behind the records. Called by every operation; does the work once."""
        if self._ready:
            return
        fsutil.makedirs(self.dir)
        fsutil.recover(self._files(), journal=self.journal_path, valid=self._adoptable)
        for p in (self.records_path, self.digest_path):
            if fsutil.size(p) < 0:
                fsutil.write_file(p, b"")
        if fsutil.size(self.md_path) < 0:
            fsutil.write_file(self.md_path, memory_md.DEFAULT.encode())
        cat = load(self.index_path)
        if cat is None and fsutil.size(self.index_path) < 0 and fsutil.size(self.records_path) == 0:
            fsutil.replace(self.index_path, empty(0))
            cat = load(self.index_path)
        self._seq = self.clock() % 10000
        self._compacted_size = fsutil.size(self.records_path)
        self._ready = True
        if cat is None or cat.records_size != fsutil.size(self.records_path):
            self._note("memory index %s: rebuilding from the records" % (
                "missing or corrupt" if cat is None else "behind the records"))
            self.compact()

    def catalog_file(self):
        """The Catalog of memory_index.json as it is on disk, or None (missing or corrupt)."""
        return load(self.index_path)

    def _catalog(self):
        cat = load(self.index_path)
        if cat is None:  # damaged since open: rebuild, then carry on
            self.compact()
            cat = load(self.index_path) or Catalog()
        return cat

    def _scan(self):
        return records.scan(self.records_path)[0]

    # -- writes ---------------------------------------------------------------------------

    def _commit(self, lines, cat, latest, kw_writer, digest_rows):
        """Append item lines, then MEMORY.md, then the index (the commit stamp), then the
        digest; one write each."""
        lead = b""
        n = fsutil.size(self.records_path)
        if n > 0:
            with open(self.records_path, "rb") as f:
                f.seek(n - 1)
                if f.read(1) != b"\n":
                    lead = b"\n"  # a torn last line stays a line of its own
        data = lead + b"".join(itm.to_json(it).encode() + b"\n" for it in lines)
        off = fsutil.append(self.records_path, data) + len(lead)
        # From here the change is durable: what follows only derives from the records, and a
        # failure in it is repaired by a compaction on the next operation, not reported.
        try:
            for it in lines:
                latest[itm.id_key(it["id"])] = off
                off += len(itm.to_json(it).encode()) + 1
            fsutil.replace(self.md_path, markdown.writer(cat, latest, self.records_path))
            cat.records_size = fsutil.size(self.records_path)
            try:
                fsutil.replace(self.index_path, writer(cat, kw_writer))
            except ValueError:  # the old keyword index is damaged: rebuild it instead
                fsutil.replace(self.index_path, writer(cat, kwindex.rebuild(self.records_path)))
            digest.append(self.digest_path, digest_rows, self.clock())
            self._changes += 1
            if self._changes >= CHANGE_THRESHOLD or (
                cat.records_size >= SIZE_THRESHOLD
                and cat.records_size - self._compacted_size >= _SIZE_GROWTH
            ):
                self.compact()
        except Exception as e:  # noqa: BLE001
            self._note("memory saved, index or MEMORY.md not updated (repaired next time): %r" % (e,))
            self._ready = False

    def _new_id(self, now, latest):
        # The sequence starts from the clock, as ESP-Claw's; a board without a set clock
        # boots at the same time every time, so skip ids the records already hold.
        for _ in range(10000):
            self._seq += 1
            mid = itm.new_id(now, self._seq)
            if itm.id_key(mid) not in latest:
                return mid
        raise OSError(28, "no free memory id this second")

    def _duplicate(self, latest, cand, ignore=None):
        ckey = itm.key(cand["content"], self.clock())
        cnorm = itm.norm(cand["content"])
        found = records.items(self.records_path, latest)
        try:
            for off, it in found:
                if it["id"] == ignore:
                    continue
                if itm.key(it["content"], self.clock()) == ckey or itm.semantic_match(itm.norm(it["content"]), cnorm):
                    return it
        finally:
            found.close()  # MicroPython does not close an abandoned generator's file
        return None

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

    def _decorate(self, it, cat=None):
        out = dict(it)
        out["summary_labels"] = (cat or self._catalog()).labels_of(it)
        return out

    def _place(self, it, cat, now, latest):
        # A new item: fresh id and times, its labels referenced in the catalog.
        it["id"] = it["id"] or self._new_id(now, latest)
        it["created_at"] = it["updated_at"] = now
        it["summary_ids"] = [cat.ensure(lab) for lab in itm.labels(it["tags"])]
        cat.add_refs(it["summary_ids"], 1)

    def _active(self, memory_id):
        """(id map, item) of an active item; ValueError without an id, NotFound without it."""
        self.open()
        if not isinstance(memory_id, str) or not memory_id:
            raise ValueError("memory_id is required")
        latest = self._scan()
        old = records.get(self.records_path, latest, memory_id)
        if old is None:
            raise NotFound("no active memory %s" % memory_id)
        return latest, old

    def store(self, content, tags="", keywords="", source="manual", memory_id=None):
        """Store one fact; returns (item, changed). A duplicate of an active item (same key,
        or one contains the other) returns that item with changed=False and writes nothing."""
        self.open()
        cand = self._candidate(content, tags, keywords, source)
        if memory_id is not None:
            itm.check_id(memory_id)
        latest = self._scan()
        hit = self._duplicate(latest, cand)
        if hit is not None:
            return self._decorate(hit), False
        if memory_id is not None and records.get(self.records_path, latest, memory_id) is not None:
            raise ValueError("memory %s already exists: use update" % memory_id)
        cand["id"] = memory_id or ""
        cat = self._catalog()
        self._place(cand, cat, self.clock(), latest)
        out = self._decorate(cand, cat)
        self._commit([cand], cat, latest,
                     kwindex.edit(self.index_path, None, cand["id"], itm.keyword_terms(cand)),
                     [("store", cand["id"], None)])
        return out, True

    def update(self, memory_id, content=None, tags=None, keywords=None, source=None):
        """Replace an item: the new version gets a new id and the old one is tombstoned.
        Returns (item, changed); unchanged fields stay as they were."""
        latest, old = self._active(memory_id)
        rep = self._candidate(
            content or old["content"],
            old["tags"] if tags in (None, "") else tags,
            old["keywords"] if keywords in (None, "") else keywords,
            source or old["source"],
        )
        if itm.equivalent(rep, old):
            return self._decorate(old), False
        now = self.clock()
        cat = self._catalog()
        hit = self._duplicate(latest, rep, ignore=memory_id)
        lines = []
        rows = []
        terms = ()
        if hit is None:
            self._place(rep, cat, now, latest)
            lines.append(rep)
            rows.append(("update_store", rep["id"], memory_id))
            terms = itm.keyword_terms(rep)
            result = rep
        else:
            result = hit
        lines.append(_tombstone(old, cat, now))
        rows.append(("forget", memory_id, None))
        rows.append(("update", result["id"], memory_id))
        out = self._decorate(result, cat)
        self._commit(lines, cat, latest, kwindex.edit(self.index_path, memory_id, result["id"], terms), rows)
        return out, True

    def forget(self, memory_id):
        """Tombstone an item; returns (the item as it was, True)."""
        latest, old = self._active(memory_id)
        cat = self._catalog()
        out = self._decorate(old, cat)
        tomb = _tombstone(old, cat, self.clock())
        self._commit([tomb], cat, latest, kwindex.edit(self.index_path, memory_id),
                     [("forget", memory_id, None)])
        return out, True

    # -- reads ----------------------------------------------------------------------------

    def recall(self, labels=(), limit=RECALL_LIMIT):
        """Items carrying any of the first 3 given labels (exact catalog labels; unknown ones
        ignored), best first: access_count, then updated_at, then id. No labels: the best of
        all. Records are not rewritten: each returned item adds one `recall` digest line."""
        self.open()
        if not isinstance(limit, int) or isinstance(limit, bool) or limit <= 0:
            limit = RECALL_LIMIT
        if isinstance(labels, str):
            labels = [labels]
        wanted = [lab for lab in labels or () if isinstance(lab, str) and lab][:3]
        cat = self._catalog()
        sids = [e[0] for e in cat.labels if e[1] in wanted]
        if wanted and not sids:
            return []
        top = []
        for off, it in records.items(self.records_path, self._scan()):
            if sids and not any(s in sids for s in it["summary_ids"]):
                continue
            key = itm.priority(it)
            if len(top) == limit and key >= top[-1][0]:
                continue
            i = len(top)
            while i and key < top[i - 1][0]:
                i -= 1
            top.insert(i, (key, it))
            if len(top) > limit:
                top.pop()
        found = [self._decorate(it, cat) for _, it in top]
        if found:
            digest.append(self.digest_path, [("recall", it["id"], "access_count+1") for it in found],
                          self.clock())
            if fsutil.size(self.digest_path) >= _DIGEST_FOLD_AT:
                self.compact()
        return found

    def list(self):
        """Every active item, best first."""
        self.open()
        cat = self._catalog()
        found = [it for off, it in records.items(self.records_path, self._scan())]
        found.sort(key=itm.priority)
        return [self._decorate(it, cat) for it in found]

    def restore(self, items):
        """Replace the store's content with `items` (dicts with ESP-Claw's fields, as exported),
        kept as they are, ids and counts included; then compact. For import."""
        self.open()
        lines = []
        for n, obj in enumerate(items):
            it = itm.from_obj(obj)
            if it is None or not it["content"]:
                raise ValueError("item %d: needs an id and a content" % n)
            if it["deleted"]:
                continue
            lines.append(itm.to_json(it).encode() + b"\n")
        fsutil.replace(self.records_path, b"".join(lines))
        self.compact()

    def ids_where(self, test):
        """Ids of the active items `test(item)` accepts (streamed, not all held)."""
        self.open()
        return [it["id"] for off, it in records.items(self.records_path, self._scan()) if test(it)]

    def get(self, memory_id):
        """One active item by id, or None."""
        self.open()
        if not isinstance(memory_id, str) or not memory_id:
            return None
        it = records.get(self.records_path, self._scan(), memory_id)
        return None if it is None else self._decorate(it)

    def labels(self):
        """The label catalog: [{"summary_id","label","ref_count"}] in catalog order."""
        self.open()
        return [{"summary_id": s, "label": lab, "ref_count": r} for s, lab, r in self._catalog().labels]

    # -- compaction and inspection --------------------------------------------------------

    def compact(self):
        """Fold recall counts in, merge duplicates, drop tombstones, keep the best 128, and
        rewrite records, index, MEMORY.md (and a trimmed digest) as one atomic unit."""
        self.open()
        cat = compact_.compact(self)
        self._changes = 0
        self._compacted_size = cat.records_size
        self._note("memory compacted: %d labels, %d bytes of records" % (len(cat.labels), cat.records_size))

    def verify(self):
        """What is on disk and what repair would do, without writing: a report dict."""
        report = {"items": 0, "tombstones": 0, "bad_lines": 0, "index": "ok",
                  "records_bytes": max(fsutil.size(self.records_path), 0),
                  "digest_bytes": max(fsutil.size(self.digest_path), 0),
                  "leftovers": [p for p in self._files() if fsutil.exists(p + ".tmp")]}
        if fsutil.exists(self.journal_path):
            report["leftovers"].append(self.journal_path)
        if fsutil.size(self.records_path) >= 0:
            latest, report["bad_lines"] = records.scan(self.records_path)
            for off, it in records.items(self.records_path, latest, deleted=True):
                report["tombstones" if it["deleted"] else "items"] += 1
        cat = load(self.index_path)
        if cat is None:
            report["index"] = "missing" if fsutil.size(self.index_path) < 0 else "corrupt"
        elif cat.records_size != report["records_bytes"]:
            report["index"] = "behind the records"
        return report

    def repair(self):
        """Settle leftovers and compact: every file rebuilt from the records."""
        self._ready = False
        self.open()
        report = self.verify()
        self.compact()
        return report


def _tombstone(old, cat, now):
    """The tombstone line of an item; its labels lose a reference (unused ones leave)."""
    tomb = dict(old)
    tomb["deleted"] = True
    tomb["updated_at"] = now
    cat.add_refs(old["summary_ids"], -1)
    cat.drop_unused()
    return tomb
