# claw_memory.store.keywords: the keyword inverted index inside memory_index.json.
# MIT license
#
# ESP-Claw keeps `"keyword_index":{"term":["id",...],...}` for parity; nothing reads it to
# answer queries. It is derived: written with the index, from the active items, in batches
# of terms (by hash) so that no more than about 64 term/id pairs are held at a time (each
# pass reads the items again: flushes are rare, RAM is short).

from .. import item as itm
from .. import text
from .._compat import const, dumps

_PAIRS_PER_PASS = const(64)


def writer(items, pairs):
    """A writer of the keyword index's entries (without the braces). `items()` yields the
    active items in file order, each time it is called; `pairs` is an upper bound of their
    term/id pairs (it sets the number of passes)."""
    passes = 1 + pairs // _PAIRS_PER_PASS

    def write(out):
        sep = b""
        for p in range(passes):
            groups = {}
            order = []
            for it in items():
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
