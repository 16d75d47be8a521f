# claw_memory.store.markdown: rendering MEMORY.md (ESP-Claw's layout) from the records.
# MIT license

from .._compat import dumps, local_time_str
from .records import at, items


def order(latest, path):
    """Offsets of the current items, best first (access, recency, id), holding two ints per
    item; ids are read only to order items that tie on both counts."""
    offs = []
    prio = []
    for off, it in items(path, latest):
        offs.append(off)
        prio.append(it["access_count"] << 32 | it["updated_at"])
    ranked = sorted(range(len(offs)), key=lambda i: -prio[i])
    out = []
    i = 0
    n = len(ranked)
    with open(path, "rb") as f:
        while i < n:
            j = i + 1
            while j < n and prio[ranked[j]] == prio[ranked[i]]:
                j += 1
            if j - i == 1:
                out.append(offs[ranked[i]])
            else:
                run = [(at(f, offs[k])["id"], offs[k]) for k in ranked[i:j]]
                run.sort()
                out += [o for _, o in run]
            i = j
    return out


def writer(cat, latest, path):
    """A writer of MEMORY.md from the current items of the records file `path`."""
    ranked = order(latest, path)

    def write(out):
        out.write(b"# Long-term Memory\n\n")
        if cat.labels:
            out.write(b"## Summary Labels\n\n")
            for sid, label, refs in cat.labels:
                out.write(("- %s (refs=%d)\n" % (label, refs)).encode())
            out.write(b"\n")
        if not ranked:
            out.write(b"(empty - Claw will write memories here as it learns)\n")
            return
        out.write(b"## Active Memories\n\n")
        with open(path, "rb") as f:
            for off in ranked:
                it = at(f, off)
                out.write(("- `%s` %s\n  time=%s access=%d labels=%s\n" % (
                    it["id"], it["content"], local_time_str(it["updated_at"]),
                    it["access_count"], dumps(cat.labels_of(it)))).encode())

    return write
