# claw_memory.store.compact: fold recall counts in, merge duplicates, drop tombstones, keep
# the best 128, and rewrite records, index, MEMORY.md (and a trimmed digest) as one unit.
# MIT license
#
# ESP-Claw's semantics (§7.12). RAM: one pass keeps five ints per distinct item in arrays and
# a hash per dedupe key; the writing passes read items one at a time by offset. Every file is
# written as `.tmp` and committed together through a journal (fsutil.commit).

from array import array

from .. import fsutil, text
from .. import item as itm
from .._compat import const
from . import digest, keywords, markdown, records
from .index import Catalog, writer

_DIGEST_TRIM_AT = const(8192)  # digest size above which compaction trims it


def _merge(path, latest, deltas, now):
    """Parallel arrays over the distinct items (by dedupe key), in file order: the first
    item's offset, the offset of the duplicate whose content wins, access count, recency,
    creation."""
    first, src, acc, upd, made = (array("I") for _ in range(5))
    bykey = {}  # fnv1a32(key) -> slot, or [slots] when different keys share a hash
    with open(path, "rb") as f:
        for off, it in records.items(path, latest):
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
                if itm.key(records.at(f, first[c])["content"], now) == k:
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
    return first, src, acc, upd, made


def _keep(acc, upd, max_active):
    """Which slots stay: drop the lowest capacity score until `max_active` fit."""
    alive = bytearray(b"\x01" * len(acc))
    count = len(acc)
    while count > max_active:
        low = -1
        for i in range(len(acc)):
            if alive[i] and (low < 0 or itm.score(acc[i], upd[i]) < itm.score(acc[low], upd[low])):
                low = i
        alive[low] = 0
        count -= 1
    return alive


def compact(store):
    """Compact `store` (a Store); returns the new Catalog."""
    now = store.clock()
    old = store.catalog_file()
    digest_size = max(fsutil.size(store.digest_path), 0)
    latest = records.scan(store.records_path)[0]
    deltas = digest.recall_deltas(store.digest_path, old.digest_off if old else 0, digest_size, latest)
    first, src, acc, upd, made = _merge(store.records_path, latest, deltas, now)
    latest = deltas = None  # free before the writing phases
    alive = _keep(acc, upd, store.max_active)
    preferred = {}
    cat = Catalog()
    if old:
        for sid, label, refs in old.labels:
            preferred[label] = sid
        cat.next_id = old.next_id
    old = None

    def write_records(out):
        with open(store.records_path, "rb") as f:
            for i in range(len(first)):
                if not alive[i]:
                    continue
                it = records.at(f, first[i])
                if src[i] != first[i]:
                    win = records.at(f, src[i])
                    for k in ("content", "tags", "source"):
                        it[k] = win[k]
                it["access_count"], it["updated_at"], it["created_at"] = acc[i], upd[i], made[i]
                it["summary_ids"] = [cat.ensure(lab, preferred.get(lab, 0))
                                     for lab in itm.labels(it["tags"])]
                cat.add_refs(it["summary_ids"], 1)
                out.write(itm.to_json(it, []).encode() + b"\n")

    fsutil.write_tmp(store.records_path, write_records)
    first = src = acc = upd = made = alive = preferred = None
    tmp = store.records_path + ".tmp"
    cat.records_size = fsutil.size(tmp)
    line = digest.compact_line(now)
    files = [store.records_path, store.index_path, store.md_path]
    trim = digest_size > _DIGEST_TRIM_AT
    if trim:
        fsutil.write_tmp(store.digest_path, digest.tail_writer(store.digest_path, digest_size, line))
        cat.digest_off = fsutil.size(store.digest_path + ".tmp")
        files.append(store.digest_path)
    else:
        cat.digest_off = digest_size
    fsutil.write_tmp(store.index_path, writer(cat, keywords.rebuild(tmp)))
    fsutil.write_tmp(store.md_path, markdown.writer(cat, None, tmp))
    fsutil.commit(store.journal_path, files)
    if not trim:
        fsutil.append(store.digest_path, line)
    return cat
