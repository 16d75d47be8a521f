# claw_memory.store.compact: fold recall counts in, merge duplicates, drop tombstones, keep
# the best 128, and rewrite the records and the digest as one unit (ESP-Claw §7.12).
# MIT license
#
# RAM: the slots' arrays are already in RAM; the merge adds a few ints per slot, and the
# items are read and written one at a time. Records and digest are written as `.tmp` and
# committed together through a journal; memory_index.json and MEMORY.md are derived and no
# longer describe the records, so they are removed (they may hold forgotten text) and
# written again at the next flush.

from array import array

from .. import fsutil
from .. import item as itm
from . import digest, records
from .index import Catalog
from .table import Table


def _groups(path, tab):
    """Duplicate groups among the active slots (same dedupe key), in file order: a list of
    lists of slots, the first being the group's first item. Keys are compared by hash and,
    where two match, exactly (read from the records)."""
    live = sorted(tab.active_slots(), key=lambda i: tab.off[i])
    groups = []
    for i in live:
        found = -1
        for g in range(len(groups)):
            f = groups[g][0]
            if tab.same_key(f, i) and _key(path, tab, f) == _key(path, tab, i):
                found = g
                break
        if found < 0:
            groups.append([i])
        else:
            groups[found].append(i)
    return groups


def _key(path, tab, slot):
    return itm.key(records.read_item(path, tab.off[slot])["content"])


def compact(store, tab, cat, fold_start, pending_rows):
    """Compact the store's files; returns the new (Table, Catalog, fold start)."""
    now = store.clock()
    path = store.records_path
    dsize = max(fsutil.size(store.digest_path), 0)
    counts, newest = digest.fold(store.digest_path, fold_start, dsize, tab)
    groups = _groups(path, tab)
    n = len(groups)
    acc, upd, win = array("H"), array("I"), array("I")  # per group; win: whose content
    for g in groups:
        w = g[0]
        a = min(tab.acc[w] + counts[w], 0xFFFF)
        u = max(tab.upd[w], newest[w])
        for i in g[1:]:
            a = max(a, min(tab.acc[i] + counts[i], 0xFFFF))
            ui = max(tab.upd[i], newest[i])
            if ui > u:  # a newer duplicate brings its content
                u, w = ui, i
        acc.append(a)
        upd.append(u)
        win.append(w)
    counts = newest = None
    alive = bytearray(b"\x01" * n)
    left = n
    while left > store.max_active:  # drop the lowest score (first minimum) until they fit
        low = -1
        for j in range(n):
            if alive[j] and (low < 0 or itm.score(acc[j], upd[j]) < itm.score(acc[low], upd[low])):
                low = j
        alive[low] = 0
        left -= 1
    # The new table and catalog are reserved before the writing phase's garbage (table.py).
    new_tab = Table(left)
    new_cat = Catalog(cat.size())
    new_cat.next_id = cat.next_id
    pos = [0]

    def write_records(out):
        with open(path, "rb") as f:
            for j in range(n):
                if not alive[j]:
                    continue
                g = groups[j]
                it = records.item_at(f, tab.off[g[0]])
                if win[j] != g[0]:
                    w = records.item_at(f, tab.off[win[j]])
                    for k in ("content", "tags", "source"):
                        it[k] = w[k]
                made = it["created_at"]
                for i in g[1:]:
                    c = records.item_at(f, tab.off[i])["created_at"]
                    if c and (not made or c < made):
                        made = c
                it["access_count"], it["updated_at"], it["created_at"] = acc[j], upd[j], made
                it["summary_ids"] = [new_cat.ensure(lab, _preferred(cat, lab))
                                     for lab in itm.labels(it["tags"])]
                new_cat.add_refs(it["summary_ids"], 1)
                line = itm.to_json(it, []).encode() + b"\n"
                out.write(line)
                new_tab.put(it, pos[0])
                new_tab.lines += 1
                pos[0] += len(line)

    fsutil.write_tmp(path, write_records)
    line = digest.compact_line(now, new_cat.next_id)
    fsutil.write_tmp(store.digest_path, digest.tail_writer(store.digest_path, dsize, pending_rows + line))
    fsutil.commit(store.journal_path, [path, store.digest_path])
    for p in (store.index_path, store.md_path):
        fsutil.remove(p)
    new_cat.pages.release()
    return new_tab, new_cat, fsutil.size(store.digest_path) - len(line)


def _preferred(cat, label):
    i = cat.find(label)
    return cat.sids[i] if i >= 0 else 0
