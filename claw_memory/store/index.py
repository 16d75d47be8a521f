# claw_memory.store.index: `memory_index.json` (v3): the summary-label catalog, its counters
# and our records-size stamp. The keyword index inside it is keywords.py's.
# MIT license
#
# The file is read as ESP-Claw's cJSON reads it (any key order, a UTF-8 BOM, whitespace,
# unknown keys) by a streaming scanner that keeps only the top-level numbers and the
# catalog entries, one at a time: the keyword index is skipped, never loaded. The catalog
# lives in RAM as one blob of labels and two arrays (384 labels at capacity).

from array import array

from .. import item as itm
from .. import text
from .._compat import const, dumps

MARK = b'"keyword_index":'
_CHUNK = const(512)
_ENTRY_MAX = const(1024)  # bytes of one catalog entry
_DEPTH_MAX = const(64)


class Catalog:
    """The label catalog: summary ids, labels and reference counts, in catalog order."""

    def __init__(self):
        self.next_id = 1
        self.sids = array("H")
        self.refs = array("H")
        self.starts = array("I")  # where each label starts in the blob
        self.blob = bytearray(b"\n")  # "\n" + label + "\n" for each label

    def __len__(self):
        return len(self.sids)

    def add(self, sid, label, refs=0):
        self.sids.append(sid)
        self.refs.append(min(refs, 0xFFFF))
        self.starts.append(len(self.blob))
        self.blob += label.encode() + b"\n"
        if sid >= self.next_id:
            self.next_id = sid + 1

    def label_at(self, i):
        a = self.starts[i]
        return bytes(self.blob[a : self.blob.find(b"\n", a)]).decode()

    def find(self, label):
        """Index of a label, or -1."""
        at = self.blob.find(b"\n" + label.encode() + b"\n")
        if at < 0:
            return -1
        lo, hi = 0, len(self.starts)
        while lo < hi:  # the entry whose label starts at at + 1
            mid = (lo + hi) // 2
            if self.starts[mid] < at + 1:
                lo = mid + 1
            else:
                hi = mid
        return lo

    def index_of(self, sid):
        for i in range(len(self.sids)):
            if self.sids[i] == sid:
                return i
        return -1

    def label(self, sid):
        i = self.index_of(sid)
        return None if i < 0 else self.label_at(i)

    def ensure(self, label, preferred=0):
        """Summary id of `label`, added to the catalog when new (ESP-Claw's rule: the
        preferred id when it is free, else next_summary_id)."""
        i = self.find(label)
        if i >= 0:
            return self.sids[i]
        sid = preferred if preferred > 0 and self.index_of(preferred) < 0 else max(self.next_id, 1)
        while self.index_of(sid) >= 0:
            sid += 1
        self.add(sid, label)
        return sid

    def add_refs(self, sids, delta):
        for s in sids:
            i = self.index_of(s)
            if i >= 0:
                self.refs[i] = max(min(self.refs[i] + delta, 0xFFFF), 0)

    def drop_unused(self):
        for r in self.refs:
            if not r:
                break
        else:
            return
        keep = Catalog()
        keep.next_id = self.next_id
        for i in range(len(self.sids)):
            if self.refs[i]:
                keep.add(self.sids[i], self.label_at(i), self.refs[i])
        self.sids, self.refs, self.starts, self.blob = keep.sids, keep.refs, keep.starts, keep.blob

    def labels_of(self, sids):
        out = []
        for s in sids:
            lab = self.label(s)
            if lab is not None:
                out.append(lab)
        return out

    def entries(self):
        """(summary id, label, ref count) of each entry, one at a time."""
        for i in range(len(self.sids)):
            yield self.sids[i], self.label_at(i), self.refs[i]

    def head(self, digest_off, records_size):
        """memory_index.json up to the keyword index's opening brace, in our key order."""
        parts = [
            '{"version":3,"next_summary_id":%d,"last_compact_digest_size":%d,"records_size":%d,'
            '"summaries":[' % (self.next_id, digest_off, records_size)
        ]
        for i, (sid, label, refs) in enumerate(self.entries()):
            parts.append('%s{"summary_id":%d,"label":%s,"ref_count":%d}' % (
                "," if i else "", sid, dumps(label), refs))
        parts.append("],")
        return "".join(parts).encode() + MARK + b"{"


class IndexFile:
    """What memory_index.json holds, as read: the catalog in file order and the counters
    (None where a key is absent). `ok` is False when the file is not a usable index."""

    def __init__(self):
        self.ok = False
        self.catalog = Catalog()
        self.next_id = None
        self.digest_off = None
        self.records_size = None  # our stamp; ESP-Claw writes none
        self.cleaned = False  # a label was normalised (or dropped) on reading


def writer(cat, digest_off, records_size, kw_writer):
    """A writer of the whole index file: the catalog, then the keyword index `kw_writer`
    writes."""
    head = cat.head(digest_off, records_size)

    def write(out):
        out.write(head)
        kw_writer(out)
        out.write(b"}}")

    return write


def empty():
    """The index of an empty store."""
    return Catalog().head(0, 0) + b"}}"


# -- streaming reader ---------------------------------------------------------------------


class _Reader:
    # A byte cursor over a file read in chunks.
    def __init__(self, f):
        self.f = f
        self.buf = b""
        self.i = 0

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
        return c

    def skip_ws(self):
        c = self.peek()
        while c in (32, 9, 10, 13):
            self.i += 1
            c = self.peek()
        return c

    def take(self, limit):
        """The bytes of the next JSON value (string, number, literal, object or array), at
        most `limit` bytes; ValueError when longer, unbalanced or cut."""
        out = bytearray()
        self._value(out, limit, 0)
        return bytes(out)

    def skip(self):
        self._value(None, 0, 0)

    def _value(self, out, limit, depth):
        c = self.skip_ws()
        if c == 34:  # '"'
            self._string(out, limit)
        elif c == 123 or c == 91:  # '{' '['
            if depth > _DEPTH_MAX:
                raise ValueError("nested too deep")
            close = 125 if c == 123 else 93
            self._put(out, self.next(), limit)
            c = self.skip_ws()
            if c == close:
                self._put(out, self.next(), limit)
                return
            while True:
                self._value(out, limit, depth + 1)
                c = self.skip_ws()
                if c == 58 and close == 125:  # ':' after a key
                    self._put(out, self.next(), limit)
                    self._value(out, limit, depth + 1)
                    c = self.skip_ws()
                if c == 44:  # ','
                    self._put(out, self.next(), limit)
                elif c == close:
                    self._put(out, self.next(), limit)
                    return
                else:
                    raise ValueError("not JSON")
        elif c < 0:
            raise ValueError("cut short")
        else:  # number or literal
            while c >= 0 and c not in b",]}: \t\r\n":
                self._put(out, self.next(), limit)
                c = self.peek()

    def _string(self, out, limit):
        self._put(out, self.next(), limit)
        while True:
            c = self.next()
            if c < 0:
                raise ValueError("cut short")
            self._put(out, c, limit)
            if c == 92:  # backslash: the next byte is escaped
                self._put(out, self.next(), limit)
            elif c == 34:
                return

    @staticmethod
    def _put(out, c, limit):
        if out is not None:
            if c < 0 or len(out) >= limit:
                raise ValueError("value too long or cut short")
            out.append(c)


def _small_int(raw):
    v = text.json_value(raw)
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        return None
    if isinstance(v, float):
        v = text.exact_int(raw)
    return v if v is not None and v >= 0 else None


def read(path):
    """The IndexFile of an index (missing or damaged: `ok` False)."""
    out = IndexFile()
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
                key = text.json_value(r.take(256))
                if r.skip_ws() != 58 or not isinstance(key, str):
                    return out
                r.next()
                if key == "summaries":
                    if not _summaries(r, out):
                        return out
                    seen = True
                elif key in ("next_summary_id", "last_compact_digest_size", "records_size", "version"):
                    v = _small_int(r.take(32))
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
        if e.args[0] != 2:  # missing: not an index; anything else is an I/O problem
            raise
    except (ValueError, TypeError, IndexError):
        out.ok = False
    if out.ok:
        top = max(out.catalog.sids) + 1 if len(out.catalog) else 1
        out.catalog.next_id = max(out.next_id or 1, top)
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
        e = text.json_value(r.take(_ENTRY_MAX))
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
