# claw_memory.store.compact: fold recall counts in, merge duplicates, drop tombstones, keep
# the best 128, and rewrite the records and the digest as one unit (ESP-Claw §7.12, docs/DESIGN.md).
# MIT license
#
# RAM: the slots' arrays are already in RAM; the merge adds a few ints per slot, and the
# items are read and written one at a time. Records and digest are written as `.tmp` and
# committed together through a journal; memory_index.json and MEMORY.md are derived and will
# no longer describe the records, so they are removed first (they may hold forgotten text)
# and written again at the next flush.

from array import array

from .. import fsutil
from .. import item as itm
from . import digest, records
from .rank import Terms
from .table import NO_SID, Table, lowest


class Blocks:
    """Items of an open records file read through whole aligned 4 KiB blocks, for a reader
    that writes between its reads (compaction). MicroPython's FatFs has one sector window
    for all files: a partial-sector read moves it, writing out the FAT sector the writer's
    last piece allocated, once per piece; whole aligned sectors are read past it."""

    def __init__(self, f, size=4096):
        self.f = f
        self.buf = bytearray(size)
        self.base = -1  # file offset of buf[0]; -1: nothing read
        self.n = 0

    def item(self, off):
        """The item on the line at `off` (a line the scan found whole, under LINE_MAX), or
        None."""
        size = len(self.buf)
        out = b""
        pos = off
        while len(out) < records.LINE_MAX:
            blk = pos - pos % size
            if blk != self.base:
                self.f.seek(blk)
                self.base, self.n = blk, self.f.readinto(self.buf)
            i = pos - blk
            if i >= self.n:
                return None  # no newline: a torn line is not an item
            k = self.buf.find(b"\n", i, self.n)
            if k >= 0:
                return records.parse(out + self.buf[i : k + 1], off)[0]
            out += self.buf[i : self.n]
            pos = blk + self.n
        return None


def _groups(path, tab, now, keep):
    """Duplicate groups among the active slots (same dedupe key; expired items, and those
    whose line is at `keep` or after, left out), in file order, as two arrays: each group's
    first slot, and each slot's group (-1: none). Keys are compared by hash and, where two
    match, exactly (read from the records)."""
    live = [i for i in tab.file_order() if not tab.expired(i, now) and tab.off[i] < keep]
    heads = array("H")
    gid = array("h", bytes(2 * len(tab.off)))  # 0: read as "group 0" only for active slots
    for i in live:
        found = -1
        for g in range(len(heads)):
            f = heads[g]
            if tab.same_key(f, i) and _key(path, tab, f) == _key(path, tab, i):
                found = g
                break
        if found < 0:
            found = len(heads)
            heads.append(i)
        gid[i] = found
    return heads, gid, live


def _key(path, tab, slot):
    return itm.key(records.read_item(path, tab.off[slot])["content"])


def compact(st, keep=None):
    """Compact the files of `st` (a State: its table, catalog, fold start and batched digest
    lines); returns the new (Table, Catalog, fold start, term statistics). `keep`: where the
    lines of the change that triggered it start: they stay as they are, after the compacted
    items (that change can still be undone: store/undo.py; whatever it forgot leaves at the
    next compaction, within 5 changes)."""
    tab, cat = st.tab, st.cat
    now = st.clock()
    path = st.records_path
    if keep is None:
        keep = st.size
    kept = sum(1 for i in tab.active_slots() if tab.off[i] >= keep)
    dsize = max(fsutil.size(st.digest_path), 0)
    counts, newest = digest.fold(st.digest_path, st.fold, dsize, tab)
    heads, gid, live = _groups(path, tab, now, keep)
    n = len(heads)
    acc, upd, win = array("H", bytes(2 * n)), array("I", bytes(4 * n)), array("H", heads)  # per group
    for g in range(n):
        w = heads[g]
        acc[g] = min(tab.acc[w] + counts[w], 0xFFFF)
        upd[g] = max(tab.upd[w], newest[w])
    for i in live:
        g = gid[i]
        if i == heads[g]:
            continue
        acc[g] = max(acc[g], min(tab.acc[i] + counts[i], 0xFFFF))
        ui = max(tab.upd[i], newest[i])
        if ui > upd[g]:  # a newer duplicate brings its content
            upd[g], win[g] = ui, i
    counts = newest = None
    many = bytearray(n)  # groups of more than one item
    for i in live:
        if i != heads[gid[i]]:
            many[gid[i]] = 1
    alive = bytearray(b"\x01" * n)
    left = n

    def score(j):
        return itm.score(acc[j], upd[j]) if alive[j] else None

    while left > max(st.max_active - kept, 0):  # the eviction rule (groups in file order) until they fit
        alive[lowest(n, score)] = 0
        left -= 1
    # The new table is reserved before the writing phase's garbage (table.py), where most of
    # the old one was; the catalog is rebuilt in place: its labels keep their ids (ESP-Claw's
    # preferred id), new ones get the next, and the ones no kept item uses go at the end.
    # Either way the store's RAM state is gone: a failure from here makes it read the files.
    tab.shed()
    new_tab = Table(left)
    terms = Terms(left)
    cat.reset_refs()
    # Each kept item's labels resolved now, before anything is written: finding a label reads
    # it from the records (from the item's own line when it is there), and a read between the
    # writes would make a FAT partition write its allocation table once more per piece
    # (catalog.py). Three ids per kept group.
    picked = array("H", b"\xff\xff" * (3 * n))
    with open(path, "rb") as f:
        for j in range(n):
            if alive[j]:
                off = tab.off[win[j]]
                raw = records.line_at(f, off)
                got = [cat.ensure(lab, 0, raw, off) for lab in itm.labels(records.parse(raw, off)[0]["tags"])]
                cat.add_refs(got, 1)
                picked[3 * j : 3 * j + len(got)] = array("H", got)
    cat.begin_move()
    pos = [0]

    def write_records(out):
        with open(path, "rb") as f:
            f = Blocks(f)
            for j in range(n):
                if not alive[j]:
                    continue
                h = heads[j]
                it = f.item(tab.off[h])
                if win[j] != h:
                    w = f.item(tab.off[win[j]])
                    for k in ("content", "tags", "source", "expires_at", "origin", "prev", "edit"):
                        it[k] = w[k]  # provenance goes with the content
                it["chg"] = None  # no change of before a compaction can be undone (store/undo.py)
                made = it["created_at"]
                for i in live if many[j] else ():
                    if gid[i] == j and i != h:
                        c = f.item(tab.off[i])["created_at"]
                        if c and (not made or c < made):
                            made = c
                it["access_count"], it["updated_at"], it["created_at"] = acc[j], upd[j], made
                it["summary_ids"] = [s for s in picked[3 * j : 3 * j + 3] if s != NO_SID]
                line = itm.to_json(it, []).encode() + b"\n"
                out.write(line)
                cat.moved_to(it["summary_ids"], itm.labels(it["tags"]), line, pos[0])
                terms.put(new_tab.put(it, pos[0]), it)
                new_tab.lines += 1
                pos[0] += len(line)
        for off, raw in records.lines(path, keep) if keep < st.size else ():
            if raw is None:
                continue
            line = bytes(raw)
            it, kind = records.parse(line, off)
            out.write(line)
            new_tab.lines += 1
            if it is not None:
                terms.put(new_tab.put(it, pos[0], new_tab.slot(it["id"])), it)
                if not it["deleted"]:
                    cat.add_refs(it["summary_ids"], 1)
                    # (our batch wrote it: its ids are its labels in order, as on any line of ours)
                    cat.moved_to(it["summary_ids"], itm.labels(it["tags"]), line, pos[0])
                new_tab.changes += not kind & records.NO_CHANGE
                new_tab.evicted += bool(kind & records.EVICTED)
            pos[0] += len(line)

    fsutil.write_tmp(path, write_records)
    line = digest.compact_line(now, cat.next_id)
    fsutil.write_tmp(st.digest_path, digest.tail_writer(st.digest_path, dsize, st.rows + line))
    st.drop_derived()  # before the commit
    fsutil.commit(st.journal_path, [path, st.digest_path])
    cat.moved()
    cat.drop_unused()
    terms.repack()
    new_tab.chg = max(new_tab.chg, tab.chg)  # change numbers keep growing
    return new_tab, cat, fsutil.size(st.digest_path) - len(line), terms
