# claw_memory.store.index: `memory_index.json` (v3): the summary-label catalog, its
# counters, and the records-size stamp; the keyword index inside it is keywords.py's.
# MIT license

from .. import fsutil, text
from .._compat import const, dumps

MAX = const(65536)  # bytes of an index read whole (one not written by us)
MARK = b'"keyword_index":'


def _int(v, lo=0):
    return v if isinstance(v, int) and not isinstance(v, bool) and v >= lo else None


class Catalog:
    """The label catalog and counters of memory_index.json (the keyword index is streamed)."""

    def __init__(self):
        self.next_id = 1
        self.digest_off = 0
        self.records_size = -1
        self.labels = []  # [summary_id, label, ref_count], in catalog order

    def ensure(self, label, preferred=0):
        """Summary id of `label`, added to the catalog when new."""
        for e in self.labels:
            if e[1] == label:
                return e[0]
        used = [e[0] for e in self.labels]
        sid = preferred if preferred > 0 and preferred not in used else max(self.next_id, 1)
        while sid in used:
            sid += 1
        self.labels.append([sid, label, 0])
        if sid >= self.next_id:
            self.next_id = sid + 1
        return sid

    def add_refs(self, sids, delta):
        for e in self.labels:
            if e[0] in sids:
                e[2] = max(e[2] + delta, 0)

    def drop_unused(self):
        self.labels = [e for e in self.labels if e[2] > 0]

    def label(self, sid):
        for e in self.labels:
            if e[0] == sid:
                return e[1]
        return None

    def labels_of(self, item):
        out = []
        for sid in item["summary_ids"]:
            lab = self.label(sid)
            if lab is not None:
                out.append(lab)
        return out

    def head(self):
        """The index JSON up to the keyword index, in our key order."""
        parts = [
            '{"version":3,"next_summary_id":%d,"last_compact_digest_size":%d,"records_size":%d,'
            '"summaries":[' % (self.next_id, self.digest_off, self.records_size)
        ]
        for i, (sid, label, refs) in enumerate(self.labels):
            parts.append('%s{"summary_id":%d,"label":%s,"ref_count":%d}' % (
                "," if i else "", sid, dumps(label), refs))
        parts.append("],")
        return "".join(parts).encode() + MARK + b"{"


def from_obj(obj):
    """A Catalog from parsed index JSON, or None when the shape is wrong."""
    if not isinstance(obj, dict) or not isinstance(obj.get("summaries"), list):
        return None
    cat = Catalog()
    for e in obj["summaries"]:
        if not isinstance(e, dict):
            return None
        sid = _int(e.get("summary_id"))
        label = e.get("label")
        refs = _int(e.get("ref_count"))
        if sid is None or refs is None or not isinstance(label, str):
            return None
        if label:
            cat.labels.append([sid, label, refs])
    nxt = _int(obj.get("next_summary_id"), 1)
    top = max([e[0] for e in cat.labels] or [0]) + 1
    cat.next_id = max(nxt or 1, top)
    cat.digest_off = _int(obj.get("last_compact_digest_size")) or 0
    rs = _int(obj.get("records_size"))
    cat.records_size = -1 if rs is None else rs
    return cat


def load(path):
    """The Catalog of an index file, or None when missing, corrupt or of a wrong shape.
    Our files are read only up to the keyword index; others whole (bounded)."""
    n = fsutil.size(path)
    if n <= 0:
        return None
    with open(path, "rb") as f:
        buf = b""
        while True:
            chunk = f.read(512)
            if not chunk:
                break
            buf += chunk
            at = buf.find(MARK)
            if at >= 0:
                cat = from_obj(text.json_value(buf[:at].rstrip(b", \t\r\n") + b"}"))
                if cat is not None:
                    return cat
                break
            if len(buf) > MAX:
                return None
    if n > MAX:
        return None
    return from_obj(text.json_value(fsutil.read_bounded(path, MAX)))


def writer(cat, kw_writer):
    """A writer of the whole index file: the catalog, then the keyword index `kw_writer` writes."""
    head = cat.head()

    def write(out):
        out.write(head)
        kw_writer(out)
        out.write(b"}}")

    return write


def empty(records_size=0):
    """The index of an empty store."""
    cat = Catalog()
    cat.records_size = records_size
    return cat.head() + b"}}"
