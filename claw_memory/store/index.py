# claw_memory.store.index: `memory_index.json` (v3): the summary-label catalog (catalog.py),
# its counters, our records-size stamp and the keyword inverted index.
# MIT license
#
# The file is read as ESP-Claw's cJSON reads it (any key order, a UTF-8 BOM, whitespace,
# unknown keys) by a streaming scanner that keeps only the top-level numbers and the
# catalog entries, one at a time: the keyword index is skipped, never loaded.
#
# ESP-Claw keeps `"keyword_index":{"term":["id",...],...}` for parity; nothing reads it to
# answer queries. It is derived: written with the index, from the active items, in batches
# of terms (by hash) so that no more than about 64 term/id pairs are held at a time (each
# pass reads the items again: flushes are rare, RAM is short).

from .. import fsutil
from .. import item as itm
from .. import jsonraw, text
from .._compat import ENOENT, const, dumps
from .catalog import Catalog

MARK = b'"keyword_index":'
_CHUNK = const(512)
_ENTRY_MAX = const(1024)  # bytes of one catalog entry
_DEPTH_MAX = const(64)
_RESERVE_MAX = const(16384)
_PAIRS_PER_PASS = const(64)


class IndexFile:
    """What memory_index.json holds, as read: the catalog in file order and the counters
    (None where a key is absent). `ok` is False when the file is not a usable index."""

    def __init__(self, reserve=0):
        self.ok = False
        self.catalog = Catalog(reserve)
        self.next_id = None
        self.digest_off = None
        self.records_size = None  # our stamp; ESP-Claw writes none
        self.cleaned = False  # a label was normalised (or dropped) on reading


def writer(cat, digest_off, records_size, kw_writer):
    """A writer of the whole index file: the catalog, then the keyword index `kw_writer`
    (keyword_writer) writes."""
    def write(out):
        _head(out, cat, digest_off, records_size)
        kw_writer(out)
        out.write(b"}}")

    return write


def _head(out, cat, digest_off, records_size):
    # Up to the keyword index's opening brace, in our key order, one entry at a time. A
    # function of its own: the entry loop's last values leave with its frame, not held
    # through the keyword passes (measured: 350 B more at capacity when inlined).
    out.write(('{"version":3,"next_summary_id":%d,"last_compact_digest_size":%d,"records_size":%d,'
               '"summaries":[' % (cat.next_id, digest_off, records_size)).encode())
    for i, (sid, label, refs) in enumerate(cat.entries()):
        out.write(('%s{"summary_id":%d,"label":%s,"ref_count":%d}' % (
            "," if i else "", sid, dumps(label), refs)).encode())
    out.write(b"]," + MARK + b"{")


def keyword_writer(items, pairs):
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


def empty():
    """The index of an empty store."""
    return b'{"version":3,"next_summary_id":1,"last_compact_digest_size":0,"records_size":0,' \
           b'"summaries":[],' + MARK + b"{}}"


# -- streaming reader ---------------------------------------------------------------------


class _Reader:
    # A byte cursor over a file read in chunks; the value being taken goes into one buffer
    # reused for every value (a bytearray grown byte by byte would realloc and fragment).
    def __init__(self, f):
        self.f = f
        self.buf = b""
        self.i = 0
        self.out = bytearray(_ENTRY_MAX)
        self.n = -1  # bytes taken so far; -1 when skipping

    def peek(self):
        if self.i >= len(self.buf):
            self.buf = self.f.read(_CHUNK)
            self.i = 0
            if not self.buf:
                return -1
        return self.buf[self.i]

    def next(self):
        c = self.peek()
        self.i += 1
        if self.n >= 0:
            if c < 0 or self.n >= len(self.out):
                raise ValueError("value too long or cut short")
            self.out[self.n] = c
            self.n += 1
        return c

    def skip_ws(self):
        c = self.peek()
        while c in (32, 9, 10, 13):
            self.i += 1
            c = self.peek()
        return c

    def take(self):
        """The bytes of the next JSON value (string, number, literal, object or array), at
        most 1 KiB; ValueError when longer, unbalanced or cut."""
        self.n = 0
        try:
            self._value(0)
            return bytes(self.out[: self.n])
        finally:
            self.n = -1

    def skip(self):
        self._value(0)

    def _value(self, depth):
        c = self.skip_ws()
        if c == 34:  # '"'
            self.next()
            while True:
                c = self.next()
                if c < 0:
                    raise ValueError("cut short")
                if c == 92:  # backslash: the next byte is escaped
                    self.next()
                elif c == 34:
                    return
        elif c == 123 or c == 91:  # '{' '['
            if depth > _DEPTH_MAX:
                raise ValueError("nested too deep")
            close = 125 if c == 123 else 93
            self.next()
            if self.skip_ws() == close:
                self.next()
                return
            while True:
                self._value(depth + 1)
                c = self.skip_ws()
                if c == 58 and close == 125:  # ':' after a key
                    self.next()
                    self._value(depth + 1)
                    c = self.skip_ws()
                if c == 44:  # ','
                    self.next()
                elif c == close:
                    self.next()
                    return
                else:
                    raise ValueError("not JSON")
        elif c < 0:
            raise ValueError("cut short")
        else:  # number or literal
            while c >= 0 and c not in b",]}: \t\r\n":
                self.next()
                c = self.peek()


def _small_int(raw):
    v = jsonraw.json_value(raw)
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        return None
    if isinstance(v, float):
        v = jsonraw.exact_int(raw)
    return v if v is not None and v >= 0 else None


def read(path):
    """The IndexFile of an index (missing or damaged: `ok` False)."""
    # The labels' pages reserved before reading (a third of the file, as a catalog entry
    # is about 3 times its label; capped); the unused ones are given back (and the rest
    # once open's scan has found the labels in the records: catalog.py).
    out = IndexFile(min(max(fsutil.size(path), 0) // 3, _RESERVE_MAX))
    try:
        with open(path, "rb") as f:
            r = _Reader(f)
            if r.peek() == 0xEF:  # a UTF-8 BOM, as cJSON accepts it
                for want in (0xEF, 0xBB, 0xBF):
                    if r.next() != want:
                        return out
            if r.skip_ws() != 123:
                return out
            r.next()
            seen = False
            while True:
                c = r.skip_ws()
                if c == 125:
                    break
                if c == 44:
                    r.next()
                    continue
                key = jsonraw.json_value(r.take())
                if r.skip_ws() != 58 or not isinstance(key, str):
                    return out
                r.next()
                if key == "summaries":
                    if not _summaries(r, out):
                        return out
                    seen = True
                elif key in ("next_summary_id", "last_compact_digest_size", "records_size", "version"):
                    v = _small_int(r.take())
                    if key == "next_summary_id":
                        out.next_id = v
                    elif key == "last_compact_digest_size":
                        out.digest_off = v
                    elif key == "records_size":
                        out.records_size = v
                else:
                    r.skip()  # keyword_index, and keys other programs add
            out.ok = seen
    except OSError as e:
        if e.args[0] != ENOENT:  # missing: not an index; anything else is an I/O problem
            raise
    except (ValueError, TypeError, IndexError):
        out.ok = False
    out.catalog.release()
    if out.ok:  # (the catalog's next_id is past its highest id already)
        out.catalog.next_id = max(out.next_id or 1, out.catalog.next_id)
    return out


def _summaries(r, out):
    """Read the summaries array entry by entry into `out.catalog`; False when it is
    malformed."""
    cat = out.catalog
    if r.skip_ws() != 91:
        return False
    r.next()
    while True:
        c = r.skip_ws()
        if c == 93:
            r.next()
            return True
        if c == 44:
            r.next()
            continue
        e = jsonraw.json_value(r.take())
        if not isinstance(e, dict):
            return False
        sid = e.get("summary_id")
        refs = e.get("ref_count")
        label = e.get("label")
        if (not isinstance(sid, int) or isinstance(sid, bool) or not isinstance(refs, int)
                or isinstance(refs, bool) or not isinstance(label, str)):
            return False
        clean = itm.clean_label(label)  # labels stored before they were normalised
        if clean and 0 <= sid <= 0xFFFF and cat.find(clean) < 0:
            cat.add(sid, clean, max(refs, 0))
            out.cleaned = out.cleaned or clean != label
        elif label:
            out.cleaned = True
