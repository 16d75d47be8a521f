# claw_memory.store.store: the Store class, the public API over the store's State
# (state.py): store, update, forget (alone or in a batch: batch.py), recall, list, and
# administration (open, flush, compact, verify, repair, restore).
# MIT license
#
# The records file is the journal and the source of truth: a change is one append (a batch
# of several changes is one append of several lines), and nothing else is written with it.
# What operations need is kept in RAM in compact form (table.py, the Catalog), built by one
# scan at open; memory_index.json and MEMORY.md are derived from it (state.py says when).

from .. import fsutil
from .. import item as itm
from .._compat import EAGAIN, const, unix_time
from .load import assess
from .rank import query_hashes
from .read import rank
from .state import State

MAX_ACTIVE = const(128)
RECALL_LIMIT = const(8)


class Store:
    """Long-term memory items under one directory (the data root's `memory/`). One writer
    per directory: another program's appends are seen (the RAM state is rebuilt when the
    records file changed size behind it), concurrent writes are not supported."""

    def __init__(self, directory, clock=unix_time, log=None, max_active=MAX_ACTIVE):
        self._st = st = State(directory, clock, log, max_active)
        # The files and settings, as given (read-only).
        self.dir = directory
        self.records_path = st.records_path
        self.index_path = st.index_path
        self.digest_path = st.digest_path
        self.md_path = st.md_path
        self.journal_path = st.journal_path
        self.max_active = max_active
        self.clock = clock

    @property
    def compactions(self):
        """Compactions run by this Store (a list() in progress must not outlive one)."""
        return self._st.compactions

    def open(self):
        """Load the store (once; again when the records file changed behind it): settle
        leftovers, create missing files, scan the records, bring stale derived files up to
        date and compact when garbage is due."""
        self._st.open()

    # -- changes --------------------------------------------------------------------------

    def batch(self, by=None):
        """A batch of changes written as one append, all or nothing across a power cut:
            with store.batch() as b:
                it, changed = b.store("User lives in Lisbon now", "city")
                b.forget(old_id)
        Inside, each change sees the ones before it; on an exception nothing is written.
        `by`: the request making it ({"by": "tool" or "extract", "sid": session id, "msg":
        its user record's key, session.origin.key}; None: a program), recorded as the origin
        of what it stores; `b.evicted` then lists (id, label) of what capacity evicted."""
        from .batch import Batch

        return Batch(self._st, by)

    def store(self, content, tags="", keywords="", source="manual", memory_id=None, expires_at=0,
              by=None):
        """Store one fact; returns (item, changed). A duplicate of an active item (same key,
        or one contains the other) returns that item with changed=False and writes nothing.
        `expires_at`: unix time after which it is never read (0: never; dates.expiry)."""
        with self.batch(by) as b:
            return b.store(content, tags, keywords, source, memory_id, expires_at)

    def update(self, memory_id, content=None, tags=None, keywords=None, source=None,
               expires_at=None, by=None):
        """Replace an item: the new version gets a new id and the old one is tombstoned, in
        one append. Returns (item, changed); unchanged fields stay as they were (the expiry
        too, unless `expires_at` is given: 0 clears it). The new version keeps the old one's
        origin and records the old id and `by` (why() follows the chain)."""
        with self.batch(by) as b:
            return b.update(memory_id, content, tags, keywords, source, expires_at)

    def forget(self, memory_id, by=None):
        """Tombstone an item; returns (the item as it was, True)."""
        with self.batch(by) as b:
            return b.forget(memory_id)

    def undo(self, session_id=None):
        """Revert the newest change made in session `session_id` (None: the newest change of
        all) that no undo reverted yet, as one append. Returns {"changed": True, "undone":
        "store"|"update"|"forget"|"change", "items": [(item, "forgotten"|"restored")],
        "evicted": [(id, label)]}, or {"changed": False, "reason": "nothing"|"purged"|
        "changed", ...} when there is nothing to undo, when a line of the change was compacted
        away with its text, or when an item it wrote was changed since ("id")."""
        from . import undo
        from .batch import Batch, session_hash

        st = self._st
        st.open()
        n = undo.newest(st.records_path, None if session_id is None else session_hash(session_id))
        if not n:
            return {"changed": False, "reason": undo.NOTHING}
        lines, of = undo.lines_of(st.records_path, n)
        what = undo.kind(lines)
        if len(lines) < of:
            return {"changed": False, "reason": undo.PURGED, "undone": what}
        moved = undo.check(st, lines)
        if moved is not None:
            return {"changed": False, "reason": undo.CHANGED, "undone": what, "id": moved}
        by = None if session_id is None else {"by": "tool", "sid": session_id}
        with Batch(st, by, n) as b:
            done = undo.revert(b, st, lines)
        return {"changed": True, "undone": what, "items": done, "evicted": b.evicted}

    def why(self, memory_id, sessions_dir=None):
        """Where an item came from, or None for an id the records do not hold:
        {"id", "content", "active", "origin", "changes"}. "origin": the request that first
        stored the fact ({"by": "tool" or "extract", "session", "at", "text": that user
        message while it is on flash, else None with "missing": why}), or None when unknown
        (imported, written by another program or before provenance). "changes": the updates
        since, newest first, each {"id": the version it made, "replaced", "old_content" (while
        that version's line is in the records) and the request as in "origin"}. Messages are
        looked up in `sessions_dir` (default: the sessions/ beside this store's folder)."""
        from . import undo

        st = self._st
        st.open()
        if not isinstance(memory_id, str) or not memory_id:
            return None
        versions = undo.chain(st, memory_id)
        if not versions:
            return None
        if sessions_dir is None:
            sessions_dir = self.dir.rsplit("/", 1)[0] + "/sessions"
        changes = []
        for k, v in enumerate(versions):
            if not v["prev"]:
                break
            c = undo.request(v["edit"], sessions_dir)
            c["id"], c["replaced"] = v["id"], v["prev"]
            c["old_content"] = versions[k + 1]["content"] if k + 1 < len(versions) else None
            changes.append(c)
        top = versions[0]  # (an update copies the origin: every version has the first one's)
        return {"id": top["id"], "content": top["content"], "active": not top["deleted"],
                "origin": undo.request(top["origin"], sessions_dir) if top["origin"] else None,
                "changes": changes}

    # -- reads ----------------------------------------------------------------------------

    def recall(self, labels=(), limit=RECALL_LIMIT, query=None, counted=True):
        """Items carrying any of the first 3 given labels (exact catalog labels; unknown ones
        ignored). Without `query`, best first: access_count, then updated_at, then id (no
        labels: the best of all). With `query` (text), the items matching it ranked by
        relevance (rank.py: BM25 over content, keywords, tags and labels), best first, each
        with its `score`. Records are not rewritten: the returned items add `recall` digest
        lines, in one append (`counted=False`: nothing is written). Expired items are never
        returned."""
        st = self._st
        st.open()
        if not isinstance(limit, int) or isinstance(limit, bool) or limit <= 0:
            limit = RECALL_LIMIT
        if isinstance(labels, str):
            labels = [labels]
        wanted = [lab for lab in labels or () if isinstance(lab, str) and lab][:3]
        cat = st.cat
        sids = [cat.sid(i) for i in (cat.find(lab) for lab in wanted) if i >= 0]
        if wanted and not sids:
            return []
        tab = st.tab
        cand = [i for i in tab.current(st.clock) if not sids or tab.has_sid(i, sids)]
        if isinstance(query, str) and query.strip():
            found = self._ranked(query, limit, 0.0, set(cand) if sids or tab.exp is not None else None)
        else:
            found = [st.decorated(i) for i in rank(st.records_path, tab, cand, limit)]
            found = [it for it in found if it is not None]
        if found and counted:
            st.recalled(found)
        return found

    def matches(self, query, limit=RECALL_LIMIT, floor=0.0):
        """The items most relevant to `query` (text) with a score above `floor` times that of
        one word found in one item (rank.Terms.unit), best first, each with its `score`; read
        only, nothing is written (the Long-term Memory provider's automatic recall)."""
        st = self._st
        st.open()
        if not isinstance(query, str):
            return []
        allowed = set(st.tab.current(st.clock)) if st.tab.exp is not None else None
        return self._ranked(query, limit, floor, allowed)

    def _ranked(self, query, limit, floor, allowed):
        st = self._st
        out = []
        found = st.terms.best(st.tab, query_hashes(query), limit, st.clock(), floor, allowed)
        if not found:
            return out
        with open(st.records_path, "rb") as f:  # one open for the few items returned
            for score, slot in found:
                it = st.decorated(slot, f)
                if it is not None:
                    it["score"] = score
                    out.append(it)
        return out

    def list(self):
        """Every active item (not expired), best first, one at a time (an iterator: at
        capacity the items would not fit in RAM together)."""
        st = self._st
        st.open()
        epoch = st.compactions
        for slot in rank(st.records_path, st.tab, st.tab.current(st.clock)):
            if st.compactions != epoch or st.tab is None:
                raise OSError(EAGAIN, "the store was compacted during list()")
            if not st.tab.live[slot]:
                continue  # forgotten or evicted since list() began
            it = st.decorated(slot)
            if it is not None:
                yield it

    def labels(self):
        """The label catalog, one entry at a time: {"summary_id","label","ref_count"} in
        catalog order."""
        self._st.open()
        for sid, label, refs in self._st.cat.entries():
            yield {"summary_id": sid, "label": label, "ref_count": refs}

    def catalog_text(self, prefix="- ", empty="- (empty)\n"):
        """The catalog's labels as text, one per line (the Long-term Memory provider's)."""
        self._st.open()
        return self._st.cat.listing(prefix, empty)

    def labels_json(self):
        """The catalog's labels as a JSON array (text), built without a list of them."""
        self._st.open()
        return self._st.cat.json()

    def has_label(self, label):
        """Whether `label` is in the catalog (exactly)."""
        self._st.open()
        return isinstance(label, str) and self._st.cat.find(label) >= 0

    def count(self):
        """Active items (expired ones not counted: they are the first to go)."""
        st = self._st
        st.open()
        return st.tab.active if st.tab.exp is None else len(st.tab.current(st.clock))

    def get(self, memory_id):
        """One active item by id (not expired), or None."""
        st = self._st
        st.open()
        if not isinstance(memory_id, str) or not memory_id:
            return None
        slot = st.tab.slot(memory_id)
        live = slot >= 0 and st.tab.live[slot] and not (st.tab.exp is not None and st.tab.expired(slot, st.clock()))
        it = st.decorated(slot) if live else None
        return None if it is None or it["id"] != memory_id else it

    def ids_where(self, test):
        """Ids of the active items `test(item)` accepts, in file order (read one at a time)."""
        self._st.open()
        return self._st.ids_where(test)

    # -- administration -------------------------------------------------------------------

    def compact(self):
        """Fold recall counts in, merge duplicates, drop tombstones, keep the best 128; then
        write every derived file (memory_index.json, MEMORY.md)."""
        st = self._st
        st.open()
        st.compact()
        st.write_derived()

    def flush(self):
        """Write what is only in RAM: batched digest lines, and memory_index.json and
        MEMORY.md when they are stale. After flush() the files are what ESP-Claw expects."""
        st = self._st
        if st.tab is None:
            return
        st.open()
        st.write_rows()
        if not st.fresh:
            st.write_derived()

    def close(self):
        """Flush; forgotten text, expired items and other garbage leave the records first."""
        st = self._st
        if st.tab is None:
            return
        st.open()
        tab = st.tab
        if tab.garbage() or tab.active > st.max_active or len(tab.current(st.clock)) < tab.active:
            st.compact()
        self.flush()

    def restore(self, items):
        """Replace the store's content with `items` (dicts with ESP-Claw's fields, as exported,
        each checked by item.check; a "type" key is ignored), kept as they are, ids and
        counts included; then compact. For import. ValueError before anything is written."""
        lines = []
        for n, obj in enumerate(items):
            try:
                itm.check(obj, ("type",))
            except ValueError as e:
                raise ValueError("item %d: %s" % (n, e))
            it = itm.from_obj(obj)
            if not it["deleted"]:
                lines.append(itm.to_json(it).encode() + b"\n")
        st = self._st
        fsutil.makedirs(st.dir)
        st.drop_derived()
        fsutil.replace(st.records_path, b"".join(lines))
        st.invalidate()
        self.compact()

    def verify(self):
        """What is on disk and what repair would do, without writing: a report dict."""
        st = self._st
        report = {"items": 0, "tombstones": 0, "bad_lines": 0, "index": "ok",
                  "records_bytes": max(fsutil.size(st.records_path), 0),
                  "digest_bytes": max(fsutil.size(st.digest_path), 0),
                  "leftovers": [p + ".tmp" for p in (st.records_path, st.index_path,
                                                     st.md_path, st.digest_path)
                                if fsutil.exists(p + ".tmp")]}
        if fsutil.exists(st.journal_path):
            report["leftovers"].append(st.journal_path)
        if fsutil.size(st.records_path) < 0:
            return report
        a = assess(st, False)  # (no term statistics: a report needs none)
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
        self._st.invalidate()
        self.open()
        if report["bad_lines"] or report["leftovers"] or report["index"] != "ok":
            self.compact()
        else:
            self.flush()
        return report

