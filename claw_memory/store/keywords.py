# claw_memory.store.keywords: the keyword inverted index inside memory_index.json.
# MIT license
#
# ESP-Claw keeps `"keyword_index":{"term":["id",...],...}` for parity; nothing reads it to
# answer queries. It is edited as text, entry by entry, and rebuilt from the records in
# batches of terms, so no more than about 128 term/id pairs are held at a time.

from .. import item as itm
from .. import text
from .._compat import const, dumps
from .index import MARK
from .records import items

_ENTRY_MAX = const(16384)
_PAIRS_PER_PASS = const(128)


def entries(index_path):
    """(term, raw id list) of each keyword-index entry of an index file, one at a time; the
    list stays JSON text (`["id1","id2"]`), so no entry is held as objects. ValueError when
    the keyword index is damaged."""
    with open(index_path, "rb") as f:
        buf = b""
        at = -1
        while at < 0:
            chunk = f.read(512)
            if not chunk:
                return
            buf += chunk
            at = buf.find(MARK)
            if at < 0:
                buf = buf[-len(MARK):]
        buf = buf[at + len(MARK):]
        i = buf.find(b"{")
        while i < 0:
            chunk = f.read(512)
            if not chunk:
                return
            buf += chunk
            i = buf.find(b"{")
        i += 1
        while True:
            colon, end, buf, i = _entry(f, buf, i)
            if end < 0:
                return
            term = text.json_value(buf[i:colon])
            raw = buf[colon + 1 : end].strip()
            if isinstance(term, str) and raw.startswith(b"[") and raw.endswith(b"]"):
                yield term, raw
            i = end


def edit(index_path, remove=None, add_id=None, add_terms=()):
    """A keyword-index writer: the entries of the current index file with one id removed
    and/or one added, edited as text."""
    rm = dumps(remove).encode() if remove is not None else None
    add = dumps(add_id).encode() if add_id is not None else None

    def write(out):
        sep = b""
        seen = []
        for term, ids in entries(index_path):
            if rm is not None:
                ids = _list_remove(ids, rm)
            if term in add_terms:
                seen.append(term)
                if not _list_has(ids, add):
                    ids = ids[:-1] + (b"," if len(ids) > 2 else b"") + add + b"]"
            if len(ids) > 2:
                out.write(sep + dumps(term).encode() + b":" + ids)
                sep = b","
        for term in add_terms:
            if term not in seen:
                out.write(sep + dumps(term).encode() + b":[" + add + b"]")
                sep = b","

    return write


def rebuild(records_path):
    """A keyword-index writer built from every item line of `records_path`, in batches of
    terms (by hash)."""
    pairs = 0
    for off, it in items(records_path, None):
        pairs += len(itm.keyword_terms(it))
    passes = 1 + pairs // _PAIRS_PER_PASS

    def write(out):
        sep = b""
        for p in range(passes):
            groups = {}
            order = []
            for off, it in items(records_path, None):
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


def _entry(f, buf, i):
    """Locate the keyword-index entry starting at buf[i] (after separators), reading more of
    `f` as needed. Returns (colon, end, buf, start): buf[start:colon] is the term's JSON
    string, buf[colon+1:end] its id list; end < 0 at the closing brace."""
    while True:
        while i < len(buf) and buf[i] in b" ,\t\r\n":
            i += 1
        if i < len(buf):
            break
        chunk = f.read(512)
        if not chunk:
            return -1, -1, buf, i
        buf = buf[i:] + chunk
        i = 0
    if buf[i] == 0x7D:  # "}"
        return -1, -1, buf, i
    j = i
    colon = -1
    in_str = False
    while True:
        if j >= len(buf):
            chunk = f.read(512)
            if not chunk or len(buf) - i > _ENTRY_MAX:
                raise ValueError("damaged keyword index")
            buf = buf[i:] + chunk
            j -= i
            if colon >= 0:
                colon -= i
            i = 0
            continue
        c = buf[j]
        if in_str:
            if c == 0x5C:  # backslash: skip the escaped character
                j += 1
            elif c == 0x22:
                in_str = False
        elif c == 0x22:
            in_str = True
        elif c == 0x3A and colon < 0:  # ":" after the term
            colon = j
        elif c == 0x5D:  # "]" outside a string ends the entry's id list
            return colon, j + 1, buf, i
        j += 1


def _list_has(raw, item):
    # Is the JSON string `item` an element of the JSON array text `raw`?
    at = raw.find(item)
    while at >= 0:
        if raw[at - 1] in b"[," and raw[at + len(item)] in b",]":
            return True
        at = raw.find(item, at + 1)
    return False


def _list_remove(raw, item):
    # The JSON array text `raw` without the string element `item`.
    at = raw.find(item)
    while at >= 0:
        end = at + len(item)
        if raw[at - 1] in b"[," and raw[end] in b",]":
            if raw[end] == 0x2C:  # ","
                return raw[:at] + raw[end + 1 :]
            if raw[at - 1] == 0x2C:
                return raw[: at - 1] + raw[end:]
            return raw[:at] + raw[end:]
        at = raw.find(item, at + 1)
    return raw
