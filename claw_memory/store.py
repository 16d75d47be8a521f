# claw_memory: the long-term memory store (ESP-Claw's structured memory, byte-compatible).
# MIT license
#
# Files under memory/: `memory_records.jsonl` (event log, the last line per id wins),
# `memory_index.json` (v3: label catalog with ref counts, keyword index, digest offset),
# `memory_digest.log` (tab-separated operations; recall counts live here until compaction)
# and `MEMORY.md` (rendered). docs/FORMAT.md has the details.
#
# RAM: nothing holds all items. Each operation streams the records file: one pass maps every
# id to the offset of its latest line (ids as ints), the next yields the current items one
# at a time. The keyword index is rewritten entry by entry from the old one, and rebuilt at
# compaction in bounded batches.
#
# Durability: one append per operation to the records file, then MEMORY.md and the index
# replaced atomically, the index last: it carries the records file's size, so a cut anywhere
# in between is found on open and repaired by a compaction. Compaction writes every file as
# `.tmp` and commits them together through a journal.

from array import array

from . import fsutil, text
from . import item as itm
from ._compat import const, dumps, local_time_str, unix_time
from .core import NotFound

RECORDS = "memory_records.jsonl"
INDEX = "memory_index.json"
DIGEST = "memory_digest.log"
MEMORY_MD = "MEMORY.md"
JOURNAL = ".compact"

MAX_ACTIVE = const(128)
CHANGE_THRESHOLD = const(5)
SIZE_THRESHOLD = const(32768)
RECALL_LIMIT = const(8)
_LINE_MAX = const(4096)
_DIGEST_LINE = const(256)
# 128 items of full length fill more than 32 KiB, so the size trigger also needs growth since
# the last compaction, or a full store would compact after every write.
_SIZE_GROWTH = const(4096)
_DIGEST_TRIM_AT = const(8192)  # digest size above which compaction trims it...
_DIGEST_KEEP = const(4096)  # ...to its newest lines of at most this size
_DIGEST_FOLD_AT = const(32768)  # a recall folds the digest in when it grows past this
_INDEX_MAX = const(65536)
_KW_ENTRY_MAX = const(16384)
_PAIRS_PER_PASS = const(128)
_MARK = b'"keyword_index":'

MD_DEFAULT = "# Long-term Memory\n\n(empty - ESP-Claw will write memories here as it learns)\n"


def _int(v, lo=0):
    return v if isinstance(v, int) and not isinstance(v, bool) and v >= lo else None


class Index:
    """The label catalog and counters of memory_index.json (the keyword index is streamed)."""

    def __init__(self):
        self.next_id = 1
        self.digest_off = 0
        self.records_size = -1
        self.catalog = []  # [summary_id, label, ref_count], in catalog order

    def ensure(self, label, preferred=0):
        """Summary id of `label`, added to the catalog when new."""
        for e in self.catalog:
            if e[1] == label:
                return e[0]
        used = [e[0] for e in self.catalog]
        sid = preferred if preferred > 0 and preferred not in used else max(self.next_id, 1)
        while sid in used:
            sid += 1
        self.catalog.append([sid, label, 0])
        if sid >= self.next_id:
            self.next_id = sid + 1
        return sid

    def add_refs(self, sids, delta):
        for e in self.catalog:
            if e[0] in sids:
                e[2] = max(e[2] + delta, 0)

    def drop_unused(self):
        self.catalog = [e for e in self.catalog if e[2] > 0]

    def label(self, sid):
        for e in self.catalog:
            if e[0] == sid:
                return e[1]
        return None

    def labels_of(self, item):
        out = []
        for sid in item["summary_ids"]:
            lab = self.label(sid)
            if lab is not None:
                out.append(lab)
        return out

    def head(self):
        """The index JSON up to the keyword index, in our key order."""
        parts = [
            '{"version":3,"next_summary_id":%d,"last_compact_digest_size":%d,"records_size":%d,'
            '"summaries":[' % (self.next_id, self.digest_off, self.records_size)
        ]
        for i, (sid, label, refs) in enumerate(self.catalog):
            parts.append('%s{"summary_id":%d,"label":%s,"ref_count":%d}' % (
                "," if i else "", sid, dumps(label), refs))
        parts.append("],")
        return "".join(parts).encode() + _MARK + b"{"


def _index_from(obj):
    """An Index from parsed JSON, or None when the shape is wrong."""
    if not isinstance(obj, dict) or not isinstance(obj.get("summaries"), list):
        return None
    idx = Index()
    for e in obj["summaries"]:
        if not isinstance(e, dict):
            return None
        sid = _int(e.get("summary_id"))
        label = e.get("label")
        refs = _int(e.get("ref_count"))
        if sid is None or refs is None or not isinstance(label, str):
            return None
        if label:
            idx.catalog.append([sid, label, refs])
    nxt = _int(obj.get("next_summary_id"), 1)
    top = max([e[0] for e in idx.catalog] or [0]) + 1
    idx.next_id = max(nxt or 1, top)
    idx.digest_off = _int(obj.get("last_compact_digest_size")) or 0
    rs = _int(obj.get("records_size"))
    idx.records_size = -1 if rs is None else rs
    return idx


class Store:
    """Long-term memory items under one directory (the data root's `memory/`)."""

    def __init__(self, directory, clock=unix_time, log=None, max_active=MAX_ACTIVE):
        self.dir = directory
        self.records = directory + "/" + RECORDS
        self.index = directory + "/" + INDEX
        self.digest = directory + "/" + DIGEST
        self.md = directory + "/" + MEMORY_MD
        self.journal = directory + "/" + JOURNAL
        self.max_active = max_active
        self._clock = clock
        self._log = log
        self._ready = False
        self._changes = 0
        self._compacted_size = 0  # records size at open or after the last compaction
        self._seq = 0
        self.bad_lines = 0

    # -- files ----------------------------------------------------------------------------

    def _note(self, msg):
        if self._log:
            self._log(msg)

    def _files(self):
        return [self.records, self.index, self.md, self.digest]

    def _settle(self):
        fsutil.recover(self._files(), journal=self.journal, valid=self._adoptable)

    def _adoptable(self, tmp):
        # Outside a journal only the index and MEMORY.md are replaced one file at a time.
        if tmp == self.index + ".tmp":
            return _index_from(text.json_value(fsutil.read_bounded(tmp, _INDEX_MAX) or b"")) is not None
        if tmp == self.md + ".tmp":
            data = fsutil.read_bounded(tmp, 1 << 20) or b""
            return data.startswith(b"# ") and data.endswith(b"\n")
        return False

    def open(self):
        """Recover, create missing files, and compact when the index is missing, corrupt or
        behind the records. Called by every operation; does the work once."""
        if self._ready:
            return
        fsutil.makedirs(self.dir)
        self._settle()
        for p in (self.records, self.digest):
            if fsutil.size(p) < 0:
                fsutil.write_file(p, b"")
        if fsutil.size(self.md) < 0:
            fsutil.write_file(self.md, MD_DEFAULT.encode())
        idx = self.load_index()
        if idx is None and fsutil.size(self.index) < 0 and fsutil.size(self.records) == 0:
            idx = Index()
            idx.records_size = 0
            fsutil.replace(self.index, idx.head() + b"}}")
        self._seq = self._clock() % 10000
        self._compacted_size = fsutil.size(self.records)
        self._ready = True
        if idx is None or idx.records_size != fsutil.size(self.records):
            self._note("memory index %s: rebuilding from the records" % (
                "missing or corrupt" if idx is None else "behind the records"))
            self.compact()

    def load_index(self):
        """The Index of memory_index.json, or None when missing, corrupt or of a wrong shape.
        Our files are read only up to the keyword index; others whole (bounded)."""
        n = fsutil.size(self.index)
        if n <= 0:
            return None
        with open(self.index, "rb") as f:
            buf = b""
            while True:
                chunk = f.read(512)
                if not chunk:
                    break
                buf += chunk
                at = buf.find(_MARK)
                if at >= 0:
                    idx = _index_from(text.json_value(buf[:at].rstrip(b", \t\r\n") + b"}"))
                    if idx is not None:
                        return idx
                    break
                if len(buf) > _INDEX_MAX:
                    return None
        if n > _INDEX_MAX:
            return None
        return _index_from(text.json_value(fsutil.read_bounded(self.index, _INDEX_MAX)))

    def _lines(self, path, count_bad=False):
        """(offset, line) of each complete line; over-long lines and a torn last line are
        skipped (over-long ones counted as bad)."""
        with open(path, "rb") as f:
            pos = 0
            while True:
                line = f.readline(_LINE_MAX)
                n = len(line)
                if not n:
                    return
                if line[-1] != 10:
                    if n == _LINE_MAX:
                        while line and line[-1] != 10:
                            line = f.readline(_LINE_MAX)
                            n += len(line)
                        if count_bad:
                            self.bad_lines += 1
                    pos += n
                    continue
                yield pos, line
                pos += n

    def _scan(self):
        """{id key: offset of the item's latest line}; counts unreadable lines."""
        latest = {}
        self.bad_lines = 0
        for off, line in self._lines(self.records, True):
            it = itm.from_obj(text.json_value(line))
            if it is None:
                if line.strip():
                    self.bad_lines += 1
                continue
            latest[itm.id_key(it["id"])] = off
        return latest

    def _items(self, latest, path=None, deleted=False):
        """(offset, item) of each current item in file order (`latest` None: every line)."""
        for off, line in self._lines(path or self.records):
            it = itm.from_obj(text.json_value(line))
            if it is None or (latest is not None and latest.get(itm.id_key(it["id"])) != off):
                continue
            if deleted or not it["deleted"]:
                yield off, it

    def _at(self, f, off):
        f.seek(off)
        return itm.from_obj(text.json_value(f.readline(_LINE_MAX)))

    def _get(self, latest, memory_id):
        off = latest.get(itm.id_key(memory_id))
        if off is None:
            return None
        with open(self.records, "rb") as f:
            it = self._at(f, off)
        return None if it is None or it["deleted"] or it["id"] != memory_id else it

    def _index(self):
        idx = self.load_index()
        if idx is None:  # damaged since open: rebuild, then carry on
            self.compact()
            idx = self.load_index() or Index()
        return idx

    # -- rendering ------------------------------------------------------------------------

    def _md_order(self, latest, path):
        """Offsets of the current items, best first (access, recency, id), holding two ints
        per item; ids are read only to order items that tie on both counts."""
        offs = []
        prio = []
        for off, it in self._items(latest, path):
            offs.append(off)
            prio.append(it["access_count"] << 32 | it["updated_at"])
        order = sorted(range(len(offs)), key=lambda i: -prio[i])
        out = []
        i = 0
        n = len(order)
        with open(path, "rb") as f:
            while i < n:
                j = i + 1
                while j < n and prio[order[j]] == prio[order[i]]:
                    j += 1
                if j - i == 1:
                    out.append(offs[order[i]])
                else:
                    run = [(self._at(f, offs[k])["id"], offs[k]) for k in order[i:j]]
                    run.sort()
                    out += [o for _, o in run]
                i = j
        return out

    def _md_writer(self, idx, latest, path=None):
        """A writer of MEMORY.md (ESP-Claw's layout) from the current items."""
        src = path or self.records
        order = self._md_order(latest, src)

        def write(out):
            out.write(b"# Long-term Memory\n\n")
            if idx.catalog:
                out.write(b"## Summary Labels\n\n")
                for sid, label, refs in idx.catalog:
                    out.write(("- %s (refs=%d)\n" % (label, refs)).encode())
                out.write(b"\n")
            if not order:
                out.write(b"(empty - Claw will write memories here as it learns)\n")
                return
            out.write(b"## Active Memories\n\n")
            with open(src, "rb") as f:
                for off in order:
                    it = self._at(f, off)
                    out.write(("- `%s` %s\n  time=%s access=%d labels=%s\n" % (
                        it["id"], it["content"], local_time_str(it["updated_at"]),
                        it["access_count"], dumps(idx.labels_of(it)))).encode())

        return write

    def _kw_entries(self):
        """(term, raw id list) of each keyword-index entry in the current index file, one at a
        time; the list stays JSON text (`["id1","id2"]`), so no entry is held as objects."""
        with open(self.index, "rb") as f:
            buf = b""
            at = -1
            while at < 0:
                chunk = f.read(512)
                if not chunk:
                    return
                buf += chunk
                at = buf.find(_MARK)
                if at < 0:
                    buf = buf[-len(_MARK):]
            buf = buf[at + len(_MARK):]
            i = buf.find(b"{")
            while i < 0:
                chunk = f.read(512)
                if not chunk:
                    return
                buf += chunk
                i = buf.find(b"{")
            i += 1
            while True:
                colon, end, buf, i = _kw_entry(f, buf, i)
                if end < 0:
                    return
                term = text.json_value(buf[i:colon])
                raw = buf[colon + 1 : end].strip()
                if isinstance(term, str) and raw.startswith(b"[") and raw.endswith(b"]"):
                    yield term, raw
                i = end

    def _kw_edit(self, remove=None, add_id=None, add_terms=()):
        """A keyword-index writer: the old entries with one id removed and/or one added,
        edited as text."""
        rm = dumps(remove).encode() if remove is not None else None
        add = dumps(add_id).encode() if add_id is not None else None

        def write(out):
            sep = b""
            seen = []
            for term, ids in self._kw_entries():
                if rm is not None:
                    ids = _list_remove(ids, rm)
                if term in add_terms:
                    seen.append(term)
                    if not _list_has(ids, add):
                        ids = ids[:-1] + (b"," if len(ids) > 2 else b"") + add + b"]"
                if len(ids) > 2:
                    out.write(sep + dumps(term).encode() + b":" + ids)
                    sep = b","
            for term in add_terms:
                if term not in seen:
                    out.write(sep + dumps(term).encode() + b":[" + add + b"]")
                    sep = b","

        return write

    def _kw_rebuild(self, path):
        """A keyword-index writer built from every item of `path`, in batches of terms (by
        hash) so that no more than about 128 term/id pairs are held at a time."""
        pairs = 0
        for off, it in self._items(None, path):
            pairs += len(itm.keyword_terms(it))
        passes = 1 + pairs // _PAIRS_PER_PASS

        def write(out):
            sep = b""
            for p in range(passes):
                groups = {}
                order = []
                for off, it in self._items(None, path):
                    mid = dumps(it["id"]).encode()
                    for term in itm.keyword_terms(it):
                        if passes > 1 and text.fnv1a32(term) % passes != p:
                            continue
                        ids = groups.get(term)
                        if ids is None:
                            groups[term] = ids = bytearray()
                            order.append(term)
                        ids += b"," + mid
                for term in order:
                    out.write(sep + dumps(term).encode() + b":[")
                    out.write(memoryview(groups.pop(term))[1:])
                    out.write(b"]")
                    sep = b","

        return write

    def _write_index(self, idx, kw_writer, tmp_only=False):
        head = idx.head()

        def write(out):
            out.write(head)
            kw_writer(out)
            out.write(b"}}")

        if tmp_only:
            fsutil.write_tmp(self.index, write)
        else:
            fsutil.replace(self.index, write)

    def _digest(self, rows):
        now = self._clock()
        data = "".join("%d\t%s\t%s%s\n" % (now, act, mid, "\t" + extra if extra else "")
                       for act, mid, extra in rows)
        fsutil.append(self.digest, data.encode())

    # -- writes ---------------------------------------------------------------------------

    def _commit(self, items, idx, latest, kw_writer, digest_rows):
        """Append item lines, then MEMORY.md, then the index (the commit stamp), then the
        digest; one write each."""
        lead = b""
        n = fsutil.size(self.records)
        if n > 0:
            with open(self.records, "rb") as f:
                f.seek(n - 1)
                if f.read(1) != b"\n":
                    lead = b"\n"  # a torn last line stays a line of its own
        data = lead + b"".join(itm.to_json(it).encode() + b"\n" for it in items)
        off = fsutil.append(self.records, data) + len(lead)
        # From here the change is durable: what follows only derives from the records, and a
        # failure in it is repaired by a compaction on the next operation, not reported.
        try:
            for it in items:
                latest[itm.id_key(it["id"])] = off
                off += len(itm.to_json(it).encode()) + 1
            fsutil.replace(self.md, self._md_writer(idx, latest))
            idx.records_size = fsutil.size(self.records)
            try:
                self._write_index(idx, kw_writer)
            except ValueError:  # the old keyword index is damaged: rebuild it instead
                self._write_index(idx, self._kw_rebuild(self.records))
            self._digest(digest_rows)
            self._changes += 1
            if self._changes >= CHANGE_THRESHOLD or (
                idx.records_size >= SIZE_THRESHOLD
                and idx.records_size - self._compacted_size >= _SIZE_GROWTH
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
        ckey = itm.key(cand["content"], self._clock())
        cnorm = itm.norm(cand["content"])
        items = self._items(latest)
        try:
            for off, it in items:
                if it["id"] == ignore:
                    continue
                if itm.key(it["content"], self._clock()) == ckey or itm.semantic_match(itm.norm(it["content"]), cnorm):
                    return it
        finally:
            items.close()  # MicroPython does not close an abandoned generator's file
        return None

    def _candidate(self, content, tags, keywords, source):
        if content is not None and not isinstance(content, (str, bytes)):
            raise ValueError("content must be text")
        content, tags, keywords = itm.normalize(content, tags, keywords)
        if not content:
            raise ValueError("content is required")
        src = text.cut_bytes(text.trim(text.clean(source or "")), itm.SOURCE_MAX) or "manual"
        return {"id": "", "source": src, "content": content, "tags": tags, "keywords": keywords,
                "created_at": 0, "updated_at": 0, "access_count": 0, "deleted": False,
                "summary_ids": []}

    def _decorate(self, it, idx=None):
        out = dict(it)
        out["summary_labels"] = (idx or self._index()).labels_of(it)
        return out

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
        if memory_id is not None and self._get(latest, memory_id) is not None:
            raise ValueError("memory %s already exists: use update" % memory_id)
        cand["id"] = memory_id or ""
        idx = self._index()
        self._place(cand, idx, self._clock(), latest)
        out = self._decorate(cand, idx)
        self._commit([cand], idx, latest, self._kw_edit(None, cand["id"], itm.keyword_terms(cand)),
                     [("store", cand["id"], None)])
        return out, True

    def _active(self, memory_id):
        """(id map, item) of an active item; ValueError without an id, NotFound without it."""
        self.open()
        if not isinstance(memory_id, str) or not memory_id:
            raise ValueError("memory_id is required")
        latest = self._scan()
        old = self._get(latest, memory_id)
        if old is None:
            raise NotFound("no active memory %s" % memory_id)
        return latest, old

    def _place(self, it, idx, now, latest):
        # A new item: fresh id and times, its labels referenced in the catalog.
        it["id"] = it["id"] or self._new_id(now, latest)
        it["created_at"] = it["updated_at"] = now
        it["summary_ids"] = [idx.ensure(lab) for lab in itm.labels(it["tags"])]
        idx.add_refs(it["summary_ids"], 1)

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
        now = self._clock()
        idx = self._index()
        hit = self._duplicate(latest, rep, ignore=memory_id)
        lines = []
        rows = []
        terms = ()
        if hit is None:
            self._place(rep, idx, now, latest)
            lines.append(rep)
            rows.append(("update_store", rep["id"], memory_id))
            terms = itm.keyword_terms(rep)
            result = rep
        else:
            result = hit
        lines.append(_tombstone(old, idx, now))
        rows.append(("forget", memory_id, None))
        rows.append(("update", result["id"], memory_id))
        out = self._decorate(result, idx)
        self._commit(lines, idx, latest, self._kw_edit(memory_id, result["id"], terms), rows)
        return out, True

    def forget(self, memory_id):
        """Tombstone an item; returns (the item as it was, True)."""
        latest, old = self._active(memory_id)
        idx = self._index()
        out = self._decorate(old, idx)
        tomb = _tombstone(old, idx, self._clock())
        self._commit([tomb], idx, latest, self._kw_edit(memory_id), [("forget", memory_id, None)])
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
        idx = self._index()
        sids = [e[0] for e in idx.catalog if e[1] in wanted]
        if wanted and not sids:
            return []
        top = []
        for off, it in self._items(self._scan()):
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
        items = [self._decorate(it, idx) for _, it in top]
        if items:
            self._digest([("recall", it["id"], "access_count+1") for it in items])
            if fsutil.size(self.digest) >= _DIGEST_FOLD_AT:
                self.compact()
        return items

    def list(self):
        """Every active item, best first."""
        self.open()
        idx = self._index()
        items = [it for off, it in self._items(self._scan())]
        items.sort(key=itm.priority)
        return [self._decorate(it, idx) for it in items]

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
        fsutil.replace(self.records, b"".join(lines))
        self.compact()

    def ids_where(self, test):
        """Ids of the active items `test(item)` accepts (streamed, not all held)."""
        self.open()
        return [it["id"] for off, it in self._items(self._scan()) if test(it)]

    def get(self, memory_id):
        """One active item by id, or None."""
        self.open()
        it = self._get(self._scan(), memory_id) if isinstance(memory_id, str) and memory_id else None
        return None if it is None else self._decorate(it)

    def labels(self):
        """The label catalog: [{"summary_id","label","ref_count"}] in catalog order."""
        self.open()
        return [{"summary_id": s, "label": lab, "ref_count": r} for s, lab, r in self._index().catalog]

    # -- compaction -----------------------------------------------------------------------

    def _recall_deltas(self, start, end, latest):
        """{id key: [count, newest ts]} from digest recall lines in [start, end)."""
        deltas = {}
        if start >= end:
            return deltas
        with open(self.digest, "rb") as f:
            f.seek(start)
            pos = start
            while pos < end:
                line = f.readline(_DIGEST_LINE)
                if not line:
                    break
                pos += len(line)
                fields = line.rstrip(b"\r\n").split(b"\t")
                if len(fields) < 4 or fields[1] != b"recall" or fields[3] != b"access_count+1":
                    continue
                try:
                    k = itm.id_key(fields[2].decode())
                    ts = int(fields[0]) if fields[0].isdigit() else 0
                except ValueError:
                    continue
                if k in latest:
                    d = deltas.get(k)
                    if d is None:
                        deltas[k] = [1, ts]
                    else:
                        d[0] += 1
                        d[1] = max(d[1], ts)
        return deltas

    def compact(self):
        """Fold recall counts in, merge duplicates, drop tombstones, keep the best 128, and
        rewrite records, index, MEMORY.md (and a trimmed digest) as one atomic unit."""
        self.open()
        now = self._clock()
        old = self.load_index()
        digest_size = max(fsutil.size(self.digest), 0)
        latest = self._scan()
        deltas = self._recall_deltas(old.digest_off if old else 0, digest_size, latest)
        # One slot per distinct item key, in parallel arrays: the first item's offset, the
        # offset of the duplicate whose content wins, access count, recency, creation.
        first, src, acc, upd, made = (array("I") for _ in range(5))
        bykey = {}  # fnv1a32(key) -> slot, or [slots] when different keys share a hash
        with open(self.records, "rb") as f:
            for off, it in self._items(latest):
                d = deltas.get(itm.id_key(it["id"]))
                a, u = it["access_count"], it["updated_at"]
                if d:
                    a = min(a + d[0], 65535)
                    u = max(u, d[1])
                k = itm.key(it["content"], now)
                h = text.fnv1a32(k)
                cand = bykey.get(h)
                cand = [] if cand is None else cand if isinstance(cand, list) else [cand]
                j = -1
                for c in cand:
                    if itm.key(self._at(f, first[c])["content"], now) == k:
                        j = c
                        break
                if j < 0:
                    j = len(first)
                    bykey[h] = j if not cand else cand + [j]
                    for arr, v in ((first, off), (src, off), (acc, a), (upd, u), (made, it["created_at"])):
                        arr.append(v)
                    continue
                acc[j] = max(acc[j], a)
                if u > upd[j]:
                    src[j], upd[j] = off, u
                c0 = it["created_at"]
                if c0 and (not made[j] or c0 < made[j]):
                    made[j] = c0
        bykey = latest = deltas = None  # free before the writing phases
        # Capacity: drop the lowest score (one access ~ three hours of recency) until 128 fit.
        alive = bytearray(b"\x01" * len(first))
        count = len(first)
        while count > self.max_active:
            low = -1
            for i in range(len(first)):
                if alive[i] and (low < 0 or acc[i] * 3 + upd[i] // 3600 < acc[low] * 3 + upd[low] // 3600):
                    low = i
            alive[low] = 0
            count -= 1
        preferred = {}
        idx = Index()
        if old:
            for sid, label, refs in old.catalog:
                preferred[label] = sid
            idx.next_id = old.next_id
        old = None

        def write_records(out):
            with open(self.records, "rb") as f:
                for i in range(len(first)):
                    if not alive[i]:
                        continue
                    it = self._at(f, first[i])
                    if src[i] != first[i]:
                        win = self._at(f, src[i])
                        for k in ("content", "tags", "source"):
                            it[k] = win[k]
                    it["access_count"], it["updated_at"], it["created_at"] = acc[i], upd[i], made[i]
                    it["summary_ids"] = [idx.ensure(lab, preferred.get(lab, 0))
                                         for lab in itm.labels(it["tags"])]
                    idx.add_refs(it["summary_ids"], 1)
                    out.write(itm.to_json(it, []).encode() + b"\n")

        fsutil.write_tmp(self.records, write_records)
        first = src = acc = upd = made = alive = preferred = None
        idx.records_size = fsutil.size(self.records + ".tmp")
        line = ("%d\tcompact\t-\trebuild=index+markdown\n" % now).encode()
        files = [self.records, self.index, self.md]
        trim = digest_size > _DIGEST_TRIM_AT
        if trim:
            fsutil.write_tmp(self.digest, self._digest_tail(digest_size, line))
            idx.digest_off = fsutil.size(self.digest + ".tmp")
            files.append(self.digest)
        else:
            idx.digest_off = digest_size
        tmp = self.records + ".tmp"
        self._write_index(idx, self._kw_rebuild(tmp), tmp_only=True)
        fsutil.write_tmp(self.md, self._md_writer(idx, None, tmp))
        fsutil.commit(self.journal, files)
        if not trim:
            fsutil.append(self.digest, line)
        self._changes = 0
        self._compacted_size = idx.records_size
        self._note("memory compacted: %d labels, %d bytes of records" % (len(idx.catalog), idx.records_size))

    def _digest_tail(self, size, last_line):
        """A writer of the digest's newest whole lines (at most _DIGEST_KEEP bytes) + a line."""

        def write(out):
            with open(self.digest, "rb") as f:
                f.seek(max(size - _DIGEST_KEEP, 0))
                if size > _DIGEST_KEEP:
                    f.readline(_DIGEST_KEEP)  # skip the partial first line
                left = size - f.tell()
                while left > 0:
                    chunk = f.read(min(left, 512))
                    if not chunk:
                        break
                    out.write(chunk)
                    left -= len(chunk)
            out.write(last_line)

        return write

    # -- inspection -----------------------------------------------------------------------

    def verify(self):
        """What is on disk and what repair would do, without writing: a report dict."""
        report = {"items": 0, "tombstones": 0, "bad_lines": 0, "index": "ok",
                  "records_bytes": max(fsutil.size(self.records), 0),
                  "digest_bytes": max(fsutil.size(self.digest), 0),
                  "leftovers": [p for p in self._files() if fsutil.exists(p + ".tmp")]}
        if fsutil.exists(self.journal):
            report["leftovers"].append(self.journal)
        if fsutil.size(self.records) >= 0:
            latest = self._scan()
            report["bad_lines"] = self.bad_lines
            for off, it in self._items(latest, deleted=True):
                report["tombstones" if it["deleted"] else "items"] += 1
        idx = self.load_index()
        if idx is None:
            report["index"] = "missing" if fsutil.size(self.index) < 0 else "corrupt"
        elif idx.records_size != report["records_bytes"]:
            report["index"] = "behind the records"
        return report

    def repair(self):
        """Settle leftovers and compact: every file rebuilt from the records."""
        self._ready = False
        self.open()
        report = self.verify()
        self.compact()
        return report


def _tombstone(old, idx, now):
    """The tombstone line of an item; its labels lose a reference (unused ones leave)."""
    tomb = dict(old)
    tomb["deleted"] = True
    tomb["updated_at"] = now
    idx.add_refs(old["summary_ids"], -1)
    idx.drop_unused()
    return tomb


def _kw_entry(f, buf, i):
    """Locate the keyword-index entry starting at buf[i] (after separators), reading more of
    `f` as needed. Returns (colon, end, buf, start): buf[start:colon] is the term's JSON
    string, buf[colon+1:end] its id list; end < 0 at the closing brace."""
    while True:
        while i < len(buf) and buf[i] in b" ,\t\r\n":
            i += 1
        if i < len(buf):
            break
        chunk = f.read(512)
        if not chunk:
            return -1, -1, buf, i
        buf = buf[i:] + chunk
        i = 0
    if buf[i] == 0x7D:  # "}"
        return -1, -1, buf, i
    j = i
    colon = -1
    in_str = False
    while True:
        if j >= len(buf):
            chunk = f.read(512)
            if not chunk or len(buf) - i > _KW_ENTRY_MAX:
                raise ValueError("damaged keyword index")
            buf = buf[i:] + chunk
            j -= i
            if colon >= 0:
                colon -= i
            i = 0
            continue
        c = buf[j]
        if in_str:
            if c == 0x5C:  # backslash: skip the escaped character
                j += 1
            elif c == 0x22:
                in_str = False
        elif c == 0x22:
            in_str = True
        elif c == 0x3A and colon < 0:  # ":" after the term
            colon = j
        elif c == 0x5D:  # "]" outside a string ends the entry's id list
            return colon, j + 1, buf, i
        j += 1


def _list_has(raw, item):
    # Is the JSON string `item` an element of the JSON array text `raw`?
    at = raw.find(item)
    while at >= 0:
        if raw[at - 1] in b"[," and raw[at + len(item)] in b",]":
            return True
        at = raw.find(item, at + 1)
    return False


def _list_remove(raw, item):
    # The JSON array text `raw` without the string element `item`.
    at = raw.find(item)
    while at >= 0:
        end = at + len(item)
        if raw[at - 1] in b"[," and raw[end] in b",]":
            if raw[end] == 0x2C:  # ","
                return raw[:at] + raw[end + 1 :]
            if raw[at - 1] == 0x2C:
                return raw[: at - 1] + raw[end:]
            return raw[:at] + raw[end:]
        at = raw.find(item, at + 1)
    return raw
