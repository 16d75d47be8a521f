# claw_memory.store.batch: the write path: store, update and forget, alone or together, as
# one append to the records file.
# MIT license
#
# It reads top to bottom as a change runs: a change is validated (candidate, active item,
# duplicate), then its lines are built, each updating the RAM state (state.py) as it is
# added; at the end of the batch the capacity is enforced (evictions, in the same append),
# the lines go to the records file in ONE append, and only then comes housekeeping (sizes,
# digest lines, a compaction), which never reports the saved change as failed. On an
# exception before the append nothing is written and the RAM state is rebuilt from the files.

from array import array

from .. import fsutil, text
from .. import item as itm
from .._compat import ENOSPC, const
from ..core import MissingContent, NotFound
from . import digest
from .read import decorate
from .table import lowest

_ROWS_MAX = const(1024)  # bytes of batched digest rows kept in RAM before they are written
_EVICTED = b',"evicted":true}'


def session_hash(session_id):
    """The "s" of a change mark: fnv1a32 of the session id, 8 hex digits."""
    return "%08x" % text.fnv1a32(text.to_bytes(session_id))


def _expiry(v):
    # An expiry as the caller gives it: unix seconds (0: none).
    if isinstance(v, bool) or not isinstance(v, int) or not 0 <= v <= 0xFFFFFFFF:
        raise ValueError("expires_at must be unix seconds (0: none)")
    return v


class Batch:
    """Changes written together as one append (Store.batch()); each sees the ones before
    it, and on an exception inside the `with` nothing is written.

    `by`: who makes the change ({"by": "tool" or "extract", "sid": session id, "msg": the
    user record's key}; None: a program through the API). New items record it as their
    origin, an update as its edit; every line carries the change's mark ("chg"), which
    Store.undo() reverts by. After the `with`, `evicted` lists (id, primary label) of the
    items the batch evicted for capacity."""

    def __init__(self, st, by=None, undoes=0):
        self._st = st  # the State; its `pend` holds this batch's lines
        self._by = by
        self._undoes = undoes  # the change number an undo reverts (0: none)
        self._rows = None  # digest rows of the changes: (action, id, extra)
        self._kept = None  # slots this batch returned as duplicates: not evicted by it
        self._its = None  # (item, slot, evicted) of each line, encoded for good at commit
        self.evicted = []

    def __enter__(self):
        st = self._st
        st.open()
        if st.pend is not None:
            raise ValueError("a batch is already in progress")
        st.pend = []
        self._touched = False  # the catalog changed (before the first line is in st.pend)
        self._rows = []
        self._kept = []
        self._its = []
        self.evicted = []
        return self

    def __exit__(self, kind, exc, tb):
        if kind is None:
            self._commit()
        else:
            self._abort()
        return False

    # -- the changes ----------------------------------------------------------------------

    def store(self, content, tags="", keywords="", source="manual", memory_id=None, expires_at=0):
        st = self._st
        cand = self._candidate(content, tags, keywords, source)
        cand["expires_at"] = _expiry(expires_at)
        if memory_id is not None:
            itm.check_id(memory_id)
        hit = self._duplicate(cand)
        if hit >= 0:
            self._kept.append(hit)
            return decorate(st.cat, st.item(hit)), False
        slot = -1
        if memory_id is not None:
            slot = st.tab.slot(memory_id)
            if slot >= 0 and st.tab.live[slot]:
                raise ValueError("memory %s already exists: use update" % memory_id)
        cand["id"] = memory_id or ""
        now = st.clock()
        self._place(cand, now)
        cand["origin"] = self._mark(now)
        self._add(cand, slot)
        self._rows.append(("store", cand["id"], None))
        return decorate(st.cat, cand), True

    def update(self, memory_id, content=None, tags=None, keywords=None, source=None, expires_at=None):
        """`expires_at`: None keeps the old version's expiry, 0 clears it."""
        st = self._st
        slot, old = self._active(memory_id)
        rep = self._candidate(
            content or old["content"],
            old["tags"] if tags in (None, "") else tags,
            old["keywords"] if keywords in (None, "") else keywords,
            source or old["source"],
        )
        rep["expires_at"] = old["expires_at"] if expires_at is None else _expiry(expires_at)
        if itm.equivalent(rep, old) and rep["expires_at"] == old["expires_at"]:
            return decorate(st.cat, old), False
        now = st.clock()
        hit = self._duplicate(rep, ignore=slot)
        if hit < 0:
            self._place(rep, now)
            # The chain: the fact's first origin, and (a change made in a session) the version
            # it replaces and the request that changed it.
            rep["origin"] = old["origin"]
            if self._by is not None:
                rep["prev"], rep["edit"] = memory_id, self._mark(now)
            self._add(rep)
            self._rows.append(("update_store", rep["id"], memory_id))
            result = rep
        else:
            result = st.item(hit)
            self._kept.append(hit)
        self._tombstone(slot, old, now)
        self._rows.append(("forget", memory_id, None))
        self._rows.append(("update", result["id"], memory_id))
        return decorate(st.cat, result), True

    def forget(self, memory_id):
        st = self._st
        slot, old = self._active(memory_id)
        out = decorate(st.cat, old)
        self._tombstone(slot, old, st.clock())
        self._rows.append(("forget", memory_id, None))
        return out, True

    def restore(self, tomb):
        """Make an item active again under its id from its tombstone (an undo: store/undo.py):
        its fields as they were, its labels referenced again."""
        st = self._st
        slot = st.tab.slot(tomb["id"])
        if slot >= 0 and st.tab.live[slot]:
            raise ValueError("memory %s is active" % tomb["id"])
        it = dict(tomb)
        it["deleted"] = False
        cat = st.cat
        it["summary_ids"] = [cat.ensure(lab) for lab in itm.labels(it["tags"])]
        cat.add_refs(it["summary_ids"], 1)
        self._add(it, slot)
        self._kept.append(st.tab.slot(it["id"]))
        self._rows.append(("undo", it["id"], "restored"))
        return decorate(cat, it)

    def ids_where(self, test):
        """Ids of the active items (this batch's changes included) `test(item)` accepts."""
        return self._st.ids_where(test)

    def _mark(self, now):
        # The provenance mark of a new version: who made it, when.
        if self._by is None:
            return None
        out = dict(self._by)
        out["at"] = now
        return out

    # -- validation -----------------------------------------------------------------------

    def _candidate(self, content, tags, keywords, source):
        if content is not None and not isinstance(content, (str, bytes)):
            raise ValueError("content must be text")
        content, tags, keywords = itm.normalize(content, tags, keywords)
        if not content:
            raise MissingContent("content is required")
        src = text.cut_bytes(text.trim(text.clean(source or "")), itm.SOURCE_MAX) or "manual"
        return {"id": "", "source": src, "content": content, "tags": tags, "keywords": keywords,
                "created_at": 0, "updated_at": 0, "access_count": 0, "deleted": False,
                "summary_ids": [], "expires_at": 0, "origin": None, "prev": None, "edit": None,
                "chg": None}

    def _active(self, memory_id):
        """(slot, item) of an active item; ValueError without an id, NotFound without it."""
        if not isinstance(memory_id, str) or not memory_id:
            raise ValueError("memory_id is required")
        st = self._st
        slot = st.tab.slot(memory_id)
        old = st.item(slot) if slot >= 0 and st.tab.live[slot] else None
        if old is None or old["id"] != memory_id:
            raise NotFound("no active memory %s" % text.cut_bytes(memory_id, 64))
        return slot, old

    def _duplicate(self, cand, ignore=-1):
        """The slot of an active item `cand` duplicates (same dedupe key, or one contains
        the other), or -1: the table's fingerprints find the candidates, and each is read
        and compared exactly."""
        st = self._st
        cnorm = itm.norm(cand["content"])
        for slot in st.tab.candidates(cnorm.encode(), ignore):
            it = st.item(slot)
            if it is not None and itm.duplicates(itm.norm(it["content"]), cnorm):
                return slot
        return -1

    # -- the lines ------------------------------------------------------------------------

    def _new_id(self, now):
        # The sequence starts from the clock, as ESP-Claw's; a board without a set clock
        # boots at the same time every time, so skip ids the records already hold.
        st = self._st
        for _ in range(10000):
            st.seq += 1
            mid = itm.new_id(now, st.seq)
            if st.tab.slot(mid) < 0:
                return mid
        raise OSError(ENOSPC, "no free memory id this second")

    def _place(self, it, now):
        # A new item: fresh id and times, its labels referenced in the catalog.
        cat = self._st.cat
        self._touched = True
        it["id"] = it["id"] or self._new_id(now)
        it["created_at"] = it["updated_at"] = now
        it["summary_ids"] = [cat.ensure(lab) for lab in itm.labels(it["tags"])]
        cat.add_refs(it["summary_ids"], 1)

    def _tombstone(self, slot, old, now, evicted=False):
        cat = self._st.cat
        self._touched = True
        tomb = dict(old)
        tomb["deleted"] = True
        tomb["updated_at"] = now
        cat.add_refs(old["summary_ids"], -1)
        cat.drop_unused()
        self._add(tomb, slot, evicted)

    def _add(self, it, slot=-1, evicted=False):
        # One line of the batch, in the table at once (later changes of the batch see it).
        # Its bytes are final only at the commit, when the change's mark (its number of
        # lines) is known: until then a draft without it holds its place.
        st = self._st
        tab = st.tab
        at = st.size + (1 if st.torn else 0) + sum(len(x) for x in st.pend)
        st.pend.append(itm.to_json(it).encode() + b"\n")
        slot = tab.put(it, at, slot)
        st.terms.put(slot, it)
        self._its.append((it, slot, evicted))
        tab.lines += 1
        if not self._undoes:  # (an undo does not bring a compaction nearer: store/undo.py)
            tab.changes += 1

    def _encode(self):
        # The lines for good, at their final offsets: a change made in a session (and an
        # undo) with its mark on each; a program's change through the API exactly ESP-Claw's.
        st = self._st
        tab = st.tab
        mark = None
        if self._undoes or self._by is not None and "sid" in self._by:
            tab.chg += 1
            mark = {"n": tab.chg, "of": len(self._its)}
            if self._by is not None and "sid" in self._by:
                mark["s"] = session_hash(self._by["sid"])
            if self._undoes:
                mark["u"] = self._undoes
        at = st.size + (1 if st.torn else 0)
        out = []
        for it, slot, evicted in self._its:
            it["chg"] = mark
            line = itm.to_json(it, reserve=len(_EVICTED) - 1 if evicted else 0).encode()
            if evicted and len(line) + len(_EVICTED) < itm.ESP_LINE:
                # (a line ESP-Claw's reader takes whole: a longer one would hide the tombstone
                # from it; such a rare one goes unmarked, compacted as a forget is)
                line = line[:-1] + _EVICTED
                tab.evicted += 1
            line += b"\n"
            tab.off[slot] = at  # (a slot written twice by the batch: its last line)
            at += len(line)
            out.append(line)
        st.pend = out
        at = st.size + (1 if st.torn else 0)
        for (it, _, _), line in zip(self._its, out):  # its new labels are read from there
            st.cat.place(it["summary_ids"], line, at)
            at += len(line)

    # -- capacity -------------------------------------------------------------------------

    def _unfolded(self, tab):
        # Per-slot recall counts and newest recall time since the fold start, read from the
        # digest once and then only what recalls appended since (a store at capacity would
        # otherwise read up to 16 KiB of digest every time). Kept on the table: a new one
        # (a load, a compaction) starts again from its fold start.
        st = self._st
        dsize = max(fsutil.size(st.digest_path), 0)
        c = tab.recalls
        if c is None or c[2] > dsize:
            c = tab.recalls = [array("H"), array("I"), st.fold]
        counts, newest = digest.fold(st.digest_path, c[2], dsize, tab)
        old_c, old_n = c[0], c[1]
        for i in range(len(old_c)):
            counts[i] = min(counts[i] + old_c[i], 0xFFFF)
            newest[i] = max(newest[i], old_n[i])
        c[0], c[1], c[2] = counts, newest, dsize
        return counts, newest

    def _own(self, tab, i):
        # Written or returned by this batch.
        return tab.off[i] >= self._st.size or i in self._kept

    def _evict(self):
        # Over capacity after the batch's changes: the lowest score goes (table.lowest, the
        # rule compaction keeps by: recall counts not folded in yet included), tombstoned in
        # the same append, so no more than max_active items are ever active.
        # The items the batch writes or returns are not candidates while others are: a fact
        # just stored can be read back (a board without a set clock gives it an old time, and
        # a low score).
        # Its lines are garbage without private text: a compaction removes them when they
        # reach a third of the file's lines, or at close() (State.garbage_due).
        st = self._st
        tab = st.tab
        if tab.active <= st.max_active:
            return
        counts, newest = self._unfolded(tab)
        now = st.clock()
        # A batch of more items of its own than the capacity: all compete, as in compaction.
        spare = sum(1 for i in range(len(tab)) if tab.live[i] and self._own(tab, i)) <= st.max_active

        def score(i):
            if not tab.live[i] or spare and self._own(tab, i):
                return None
            if tab.expired(i, now):
                return -1  # expired items go first
            return itm.score(min(tab.acc[i] + counts[i], 0xFFFF), max(tab.upd[i], newest[i]))

        while tab.active > st.max_active:
            low = lowest(len(tab), score, tab.off)
            old = st.item(low)
            labels = st.cat.labels_of(old["summary_ids"])
            self.evicted.append((old["id"], labels[0] if labels else ""))
            self._tombstone(low, old, now, True)
            self._rows.append(("evict", old["id"], None))

    # -- the append -----------------------------------------------------------------------

    def _commit(self):
        st = self._st
        try:
            self._evict()
            if st.pend:
                self._encode()
        except BaseException:
            self._abort()
            raise
        lines = st.pend
        if not lines:
            st.pend = None
            return
        head = b"\n" if st.torn else b""
        try:
            data = head + b"".join(lines)  # (a MemoryError here is a failed append too)
            start = fsutil.append(st.records_path, data)
        except BaseException:
            st.invalidate()  # the RAM state has the lines that did not make it
            raise
        st.pend = None
        # Durable from here: what follows is housekeeping, never reported as a failure.
        try:
            st.size = start + len(data)
            if st.torn:
                st.tab.lines += 1  # the torn line, ended by the newline: a bad line
            st.torn = False
            st.fresh = False
            st.rows += digest.rows(st.clock(), self._rows)
            for mid, label in self.evicted:  # not silent: the tool result says it too
                st.note("memory full (%d items): %s (%s) evicted" % (st.max_active, mid, label or "-"))
            if len(st.rows) > _ROWS_MAX:
                st.write_rows()
            if not self._undoes:  # (an undo leaves the change before it undoable: the next change compacts)
                st.maybe_compact(start + len(head))  # (it keeps this change: it can be undone)
        except Exception as e:  # noqa: BLE001
            st.note("memory saved; housekeeping deferred: %s" % (e,))
            st.invalidate()

    def _abort(self):
        st = self._st
        if st.pend or self._touched:
            st.invalidate()  # roll the RAM state back by rebuilding it from the files
        st.pend = None
