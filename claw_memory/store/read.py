# claw_memory.store.read: items read back from the records by the RAM table: decorated with
# their labels, ranked best first, one at a time.
# MIT license

from . import records


def decorate(cat, it, f=None, line=None, at=0):
    """The item with its labels (read from the catalog; `f`: the records file, open; `line`:
    the item's line at offset `at`, where its labels often are)."""
    out = dict(it)
    out["summary_labels"] = cat.labels_of(it["summary_ids"], f, line, at)
    return out


def rank(path, tab, slots, limit=None):
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


def items(path, tab, cat, ranked):
    """A generator function over the active items (best first, or in file order), decorated,
    read one at a time."""

    def gen():
        # Opened per item: a consumer that stops early (an error while writing) must not
        # leave a file open, and MicroPython does not close an abandoned generator's file.
        slots = rank(path, tab, tab.active_slots()) if ranked else tab.file_order()
        for slot in slots:
            with open(path, "rb") as f:  # (the item's labels read with the same open)
                raw = records.line_at(f, tab.off[slot])
                it = None if raw is None else records.parse(raw, tab.off[slot])[0]
                if it is not None:
                    it = decorate(cat, it, f, raw, tab.off[slot])
            if it is not None:
                yield it

    return gen
