# claw_memory: one long-term memory item: fields, JSON line, metadata rules, labels, keys.
# MIT license
#
# Items are plain dicts with ESP-Claw's fields. Every cut is on a UTF-8 character boundary
# (ESP-Claw cuts bytes), and labels keep up to 24 characters (ESP-Claw keeps 8, which turns
# "daily_routine" into "daily_ro"; docs/DESIGN.md, deliberate differences 2 and 4).

from . import jsonraw, text
from ._compat import const, dumps

CONTENT_MAX = const(255)
TAGS_MAX = const(95)
KEYWORDS_MAX = const(127)
SOURCE_MAX = const(15)
ID_MAX = const(39)
MAX_LABELS = const(3)
LABEL_CHARS = const(24)
LABEL_BYTES = const(39)
_KEY_BYTES = const(36)
_SEMANTIC_MIN = const(12)
_KEYWORD_TERM = const(47)
_ACCESS_MAX = const(65535)

_FIELDS = const(("id", "source", "content", "tags", "keywords"))
_ID_CHARS = const("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.:")
_LABEL_LEAD = const("#->*+`|=~ \t")


def _str(v, limit):
    return text.cut_bytes(v, limit) if isinstance(v, str) else ""


_INF = float("inf")


def _int(v, hi=0xFFFFFFFF):
    # JSON numbers can be 1e400 (infinity) or NaN, which int() refuses: those read as 0 (not
    # known), other numbers are clamped to 0..hi.
    if isinstance(v, bool) or not isinstance(v, (int, float)) or v != v or v in (_INF, -_INF):
        return 0
    if v <= 0:
        return 0
    return hi if v >= hi else int(v)


_INT_FIELDS = const((("created_at", b"created_at", 0xFFFFFFFF), ("updated_at", b"updated_at", 0xFFFFFFFF),
                     ("access_count", b"access_count", _ACCESS_MAX), ("expires_at", b"expires_at", 0xFFFFFFFF)))

def from_obj(obj, raw=None):
    """An item dict from a parsed records line (missing fields get ESP-Claw's defaults), or
    None when it is not an item (no id, or no content). With the line's `raw` bytes, integer
    fields written as floats by other software (`1796081397.0`) are read from their text,
    exactly: a single-precision float (the chip's) would be off by up to 64."""
    if not isinstance(obj, dict):
        return None
    iid = obj.get("id")
    content = obj.get("content")
    if not isinstance(iid, str) or not iid or not isinstance(content, str) or not content:
        return None
    ids = obj.get("summary_ids")
    sids = []
    if isinstance(ids, list):
        for v in ids:
            if len(sids) == MAX_LABELS:
                break
            if isinstance(v, int) and not isinstance(v, bool) and 0 <= v <= 0xFFFF:
                sids.append(v)
    out = {
        "id": text.cut_bytes(iid, ID_MAX),
        "source": _str(obj.get("source"), SOURCE_MAX),
        "content": _str(content, CONTENT_MAX),
        "tags": _str(obj.get("tags"), TAGS_MAX),
        "keywords": _str(obj.get("keywords"), KEYWORDS_MAX),
        "created_at": _int(obj.get("created_at")),
        "updated_at": _int(obj.get("updated_at")),
        "access_count": _int(obj.get("access_count"), _ACCESS_MAX),
        "deleted": obj.get("deleted") is True,
        "summary_ids": sids,
    }
    out["expires_at"] = _int(obj.get("expires_at"))
    out["origin"] = out["edit"] = out["prev"] = out["chg"] = None
    origin, edit, prev, chg = obj.get("origin"), obj.get("edit"), obj.get("prev"), obj.get("chg")
    if origin is not None or edit is not None or chg is not None:
        from . import provenance  # (our keys: imported when a line has them)

        out["origin"], out["edit"], out["chg"] = provenance.mark(origin), provenance.mark(edit), provenance.change(chg)
    if isinstance(prev, str) and _is_id(prev):
        out["prev"] = prev
    if raw is not None:
        for name, key, hi in _INT_FIELDS:
            v = obj.get(name)
            if isinstance(v, float) and v == v and -_INF < v < _INF:
                num = jsonraw.number_after(bytes(raw), key)
                v = jsonraw.exact_int(num) if num else None
                out[name] = 0 if v is None or v <= 0 else min(v, hi)
    return out


_TEXT_FIELDS = const((("source", SOURCE_MAX), ("content", CONTENT_MAX), ("tags", TAGS_MAX),
                      ("keywords", KEYWORDS_MAX)))
_NUM_FIELDS = const((("created_at", 0xFFFFFFFF), ("updated_at", 0xFFFFFFFF), ("access_count", _ACCESS_MAX),
                     ("expires_at", 0xFFFFFFFF)))
# ESP-Claw's, and the expiry (ours, optional): what an export bundle's item may carry
FIELDS = const(("id", "source", "content", "tags", "keywords", "created_at", "updated_at",
                "access_count", "deleted", "summary_ids", "expires_at"))


def check(obj, extra=()):
    """An item's fields as an exported item has them (an import bundle; `extra` other keys
    allowed), checked as the memory tools check their arguments; ValueError naming the field
    otherwise. The id is text of 1 to ID_MAX bytes, as the reader keeps it (ESP-Claw takes
    a caller's id as it is given: a root of its may hold any; MEMORY.md and the prompt
    render ids as data), texts are strings within their byte bounds, the content not blank,
    numbers whole and in range."""
    if not isinstance(obj, dict):
        raise ValueError("an item is a JSON object")
    for k in obj:
        if k not in FIELDS and k not in extra:
            raise ValueError("unknown field %s" % text.one_line("%s" % k, 40))
    iid = obj.get("id")
    if not isinstance(iid, str) or not 0 < len(iid.encode()) <= ID_MAX:
        raise ValueError("field id: text of 1..%d bytes" % ID_MAX)
    for name, limit in _TEXT_FIELDS:
        v = obj.get(name, "")
        if not isinstance(v, str) or len(v.encode()) > limit:
            raise ValueError("field %s: a string of at most %d bytes" % (name, limit))
    if not text.trim(obj["content"]):
        raise ValueError("field content: required")
    for name, hi in _NUM_FIELDS:
        v = obj.get(name, 0)
        if type(v) is not int or not 0 <= v <= hi:
            raise ValueError("field %s: a whole number 0..%d" % (name, hi))
    if type(obj.get("deleted", False)) is not bool:
        raise ValueError("field deleted: true or false")
    ids = obj.get("summary_ids", [])
    if (not isinstance(ids, list) or len(ids) > MAX_LABELS
            or any(type(v) is not int or not 0 <= v <= 0xFFFF for v in ids)):
        raise ValueError("field summary_ids: at most %d whole numbers 0..65535" % MAX_LABELS)
    return obj


ESP_LINE = const(1024)  # ESP-Claw reads records lines with fgets into 1024 bytes
_OURS = const(("expires_at", "chg", "origin", "prev", "edit"))  # our keys (provenance.py)


def to_json(item, labels=None, ours=True, reserve=0):
    """The item's compact JSON in ESP-Claw's key order; `labels` (a list) adds
    `summary_labels` as tool results and compaction lines carry it. `ours`: with our keys
    (expiry, provenance, change), each only while the line with its newline stays within
    ESP-Claw's line reader (`reserve`: bytes the caller adds), so that ESP-Claw never loses a
    line it would read without them."""
    out = "{"
    for k in _FIELDS:
        out += '"%s":%s,' % (k, dumps(item[k]))
    out += '"created_at":%d,"updated_at":%d,"access_count":%d,"deleted":%s,"summary_ids":%s' % (
        item["created_at"],
        item["updated_at"],
        item["access_count"],
        "true" if item["deleted"] else "false",
        dumps(item["summary_ids"]),
    )
    tail = "" if labels is None else ',"summary_labels":' + dumps(labels)
    if ours and any(item.get(k) for k in _OURS):
        from . import provenance

        room = ESP_LINE - 2 - reserve - len((out + tail).encode())  # "}" and "\n"
        for part in provenance.extras(item):
            if room < 0 or len(part.encode()) <= room:  # (over already: ESP-Claw skips it anyway)
                out += part
                room -= len(part.encode())
    return out + tail + "}"


def new_id(now, seq):
    return "mem-%d-%04d" % (now, seq % 10000)


def _is_id(v):
    try:
        check_id(v)
    except ValueError:
        return False
    return True


def check_id(memory_id):
    """A caller-chosen id: 1..39 bytes of [A-Za-z0-9-_.:]; ValueError otherwise."""
    if not isinstance(memory_id, str) or not 0 < len(memory_id) <= ID_MAX:
        raise ValueError("memory_id must be 1..%d characters" % ID_MAX)
    for ch in memory_id:
        if ch not in _ID_CHARS:
            raise ValueError("memory_id may only contain A-Z a-z 0-9 - _ . :")
    return memory_id


def _as_list(v):
    if isinstance(v, (list, tuple)):
        return ",".join(x for x in v if isinstance(x, str))
    return v if isinstance(v, str) else ""


def _join_fit(tokens, limit, out=None):
    out = out if out is not None else []
    for t in tokens:
        if len(out) == MAX_LABELS:
            break
        if t in out:
            continue
        if len(",".join(out + [t]).encode()) <= limit:
            out.append(t)
    return out


def _grounded(token, content, tags):
    if token in content or token in tags:
        return True
    low = text.ascii_lower(token)
    return low in text.ascii_lower(content) or low in text.ascii_lower(tags)


def normalize(content, tags="", keywords=""):
    """(content, tags, keywords) cleaned as ESP-Claw does before a store or update: trimmed,
    content at most 255 bytes, at most 3 distinct tags, at most 3 keywords that occur in the
    content or tags, topped up from the tags."""
    content = text.trim(text.cut_bytes(text.trim(text.clean(content or "")), CONTENT_MAX))
    tag_tokens = text.split_tokens(text.clean(_as_list(tags)))
    tags = ",".join(_join_fit(tag_tokens, TAGS_MAX))
    kws = [t for t in text.split_tokens(text.clean(_as_list(keywords))) if _grounded(t, content, tags)]
    picked = _join_fit(kws, KEYWORDS_MAX)
    _join_fit(text.split_tokens(tags), KEYWORDS_MAX, picked)
    return content, tags, ",".join(picked)


def _label(token):
    # No leading Markdown structure (heading, list, quote, table, code) and no control
    # character: a label is one line of the system prompt and of MEMORY.md.
    token = text.trim(token).lstrip(_LABEL_LEAD)
    return text.trim(text.trim(text.cut_bytes(token, LABEL_BYTES))[:LABEL_CHARS])


def labels(tags):
    """Summary labels of a tags string: the first 3 distinct tag tokens (control characters
    and line breaks separate tokens like commas), without leading Markdown structure, each
    cut to 24 characters and 39 bytes."""
    out = []
    for t in text.split_tokens(tags):
        label = _label(t)
        if label and label not in out:
            out.append(label)
            if len(out) == MAX_LABELS:
                break
    return out


def clean_label(label):
    """A stored catalog label normalised as `labels` makes them (its first token), or ""."""
    for t in text.split_tokens(label) if isinstance(label, str) else ():
        out = _label(t)
        if out:
            return out
    return ""


def norm(content):
    """The dedupe normalisation of a content (ASCII letters lowered, punctuation dropped)."""
    return text.norm_key(content)


def key(content, now=0):
    """The dedupe key: the first 36 bytes of the normalised content."""
    return text.cut_bytes(text.norm_key(content), _KEY_BYTES) or "memory-%d" % now


def duplicates(a, b):
    """Whether two normalised contents are duplicates for the store: the same dedupe key
    (both empty included: ESP-Claw keys both "memory-<now>"), or a semantic match."""
    return text.cut_bytes(a, _KEY_BYTES) == text.cut_bytes(b, _KEY_BYTES) or semantic_match(a, b)


def semantic_match(a, b):
    """Normalised contents a and b say the same: equal, or one contains the other and both
    have at least 12 bytes."""
    if not a or not b:
        return False
    if a == b:
        return True
    return len(a.encode()) >= _SEMANTIC_MIN and len(b.encode()) >= _SEMANTIC_MIN and (a in b or b in a)


def conflicts(existing, incoming):
    """For an extraction REPLACE: an active, different item that shares a tag or keyword
    token with the incoming one but does not say the same thing."""
    if existing["deleted"] or existing["id"] == incoming["id"]:
        return False
    if semantic_match(norm(existing["content"]), norm(incoming["content"])):
        return False
    mine = text.split_tokens(existing["tags"]) + text.split_tokens(existing["keywords"])
    for t in text.split_tokens(incoming["tags"]) + text.split_tokens(incoming["keywords"]):
        if t in mine:
            return True
    return False


def equivalent(a, b):
    for k in ("source", "content", "tags", "keywords"):
        if a[k] != b[k]:
            return False
    return True


def score(access_count, updated_at):
    """Capacity score at compaction: one access weighs about three hours of recency."""
    return access_count * 3 + updated_at // 3600


def keyword_terms(item):
    """The keyword-index terms of an item: its keywords (or tags when it has none)."""
    src = item["keywords"] or item["tags"]
    out = []
    for t in text.split_tokens(src):
        t = text.trim(text.cut_bytes(t, _KEYWORD_TERM))
        if t and t not in out:
            out.append(t)
    return out
