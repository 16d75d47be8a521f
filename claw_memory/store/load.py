# claw_memory.store.load: what open() and verify() find in the files, without writing: the
# RAM table (one scan of the records), the catalog (from memory_index.json when it describes
# the records, else derived from the items), where unfolded recall lines start, and whether
# the derived files are fresh.
# MIT license

from .. import fsutil
from .. import item as itm
from . import digest, index, records
from .catalog import Catalog
from .rank import Terms
from .read import items
from .table import Table

class _Assessment:
    pass

def scan(path, ranked=True, cat=None):
    """(Table, its term statistics (None unless `ranked`), unreadable lines, whether the last
    line is torn) of a records file; the labels of `cat` (a Catalog) kept in RAM are found in
    the lines that carry them (Catalog.place)."""
    # Reserve the table now, before the scan's garbage (see catalog.py): one slot per line at
    # most; normalisations at most 159 bytes of content each, and about a third of a line.
    n = records.count_lines(path)
    tab = Table(n)
    terms = Terms(n) if ranked else None
    bad = 0
    found = records.lines(path)
    try:
        for off, raw in found:
            tab.lines += 1
            if raw is None:
                bad += 1
                continue
            it, kind = records.parse(raw, off)
            if it is None:
                bad += 1
                continue
            slot = tab.put(it, off, tab.slot(it["id"]))
            if cat is not None and cat.held:
                cat.place(it["summary_ids"], raw, off, False)
            if terms is not None:
                terms.put(slot, it)
            if not kind & records.NO_CHANGE:  # (an undo's lines do not count: store/undo.py)
                tab.changes += 1
            if kind & records.EVICTED:
                tab.evicted += 1
    finally:
        found.close()  # MicroPython does not close an abandoned generator's file
    if terms is not None:
        terms.repack()  # the dead postings of replaced lines out
    return tab, terms, bad, fsutil.ends_torn(path)

def assess(st, ranked=True):
    """Everything open() needs, read from the files of `st` (a State) without writing: the
    table, the catalog (from the index when it describes the records, else derived from the
    items), the fold start, and whether the derived files are fresh (and why not)."""
    a = _Assessment()
    a.size = fsutil.size(st.records_path)
    idx = index.read(st.index_path)  # first: its labels are kept until the scan (catalog.py)
    cat = idx.catalog if idx.ok else Catalog()
    cat.home = st
    a.tab, a.terms, a.bad, a.torn = scan(st.records_path, ranked, cat)
    tab = a.tab
    counts = {}
    for i in tab.active_slots():
        for s in tab.slot_sids(i):
            counts[s] = counts.get(s, 0) + 1
    if idx.ok:
        # The file's ids and counts, to compare: two flat copies of the arrays (a list of
        # pairs would be 384 small objects spread through the scan's garbage).
        was = bytes(cat.ids) + bytes(cat.refs)
        cat.retain(counts)
    missing = []
    for s in counts:
        if cat.index_of(s) < 0:
            missing.append(s)
    if missing:
        _labels_from_items(st.records_path, tab, missing, cat, counts)
    dsize = max(fsutil.size(st.digest_path), 0)
    fold, dnext = digest.last_compact(st.digest_path, dsize) if dsize else (0, 0)
    if idx.ok and idx.records_size is None and idx.digest_off and idx.digest_off <= dsize:
        fold = max(fold, idx.digest_off)  # ESP-Claw's own fold point
    cat.next_id = max(tab.max_sid + 1, dnext, cat.next_id, 1)
    cat.settle()  # the index's labels the scan found in the records leave RAM
    a.cat, a.fold = cat, fold
    a.why = ""
    if not idx.ok:
        a.why = "missing" if fsutil.size(st.index_path) < 0 else "corrupt"
    elif not fsutil.exists(st.md_path):
        a.why = "MEMORY.md missing"
    elif idx.records_size is not None and idx.records_size != a.size:
        a.why = "behind the records"
    elif idx.cleaned:
        a.why = "labels to normalise"
    elif idx.records_size is None and (missing or was != bytes(cat.ids) + bytes(cat.refs)):
        a.why = "does not match the records"
    elif idx.records_size is None and not _md_matches(st, tab, cat):
        a.why = "MEMORY.md does not match the records"
    a.fresh = not a.why

    return a

def _md_matches(st, tab, cat):
    """Whether MEMORY.md is what we would render (an index without our stamp, ESP-Claw's,
    says nothing about it)."""
    from . import markdown  # (only for ESP-Claw's files: not imported by every open)

    return markdown.matches(st.md_path, cat, items(st.records_path, tab, cat, True))


def _labels_from_items(path, tab, missing, cat, counts):
    # Labels of summary ids the index does not name, from the tags of the items that use
    # them (an item's labels and summary ids are in the same order), found in their lines.
    for slot in tab.file_order():
        sids = tab.slot_sids(slot)
        if not any(s in missing for s in sids):
            continue
        off = tab.off[slot]
        with open(path, "rb") as f:
            raw = records.line_at(f, off)
        it = records.parse(raw, off)[0] if raw else None
        if it is None:
            continue
        for s, lab in zip(it["summary_ids"], itm.labels(it["tags"])):
            if s in missing and cat.index_of(s) < 0 and cat.find(lab) < 0:
                cat.add(s, lab, counts[s])
        cat.place(it["summary_ids"], raw, off, False)
        if all(cat.index_of(s) >= 0 for s in missing):
            break
    # An id whose label cannot be found contributes no label, as in ESP-Claw.
