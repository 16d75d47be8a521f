# claw_memory: the keys of ours on a long-term item's records line (docs/FORMAT.md), read
# and written: where a version came from, what changed it, which change wrote the line.
# MIT license
#
# "origin" and "edit" are provenance marks: {"by": "tool" or "extract", "sid": the session
# id, "msg": the key of the user record of the request (session/origin.py), "at": unix
# time}: "origin" the request that first stored the fact (an update copies it), "edit" the
# request that made this version. "prev" is the id an update replaced. "chg" marks the
# change that wrote the line: {"n": its number, "of": its lines, "s": fnv1a32 hex of the
# session id, "u": the change an undo reverts}; a compaction drops it (a change can be undone
# only while its own lines are in the records: store/undo.py). "expires_at": unix time (0:
# none).
# ESP-Claw's loader ignores them all; its compaction drops them, and then the item's origin is
# unknown, never another's.

from . import text
from ._compat import const, dumps

BY = const(("tool", "extract"))
_SID_MAX = const(512)
_HEX = const("0123456789abcdef")


def _hex8(v):
    return isinstance(v, str) and len(v) == 8 and all(c in _HEX for c in v)


def _count(v, hi):
    return type(v) is int and not isinstance(v, bool) and 0 < v <= hi


def mark(v):
    """A provenance mark as the write path makes it, or None (missing, or not one)."""
    if not isinstance(v, dict) or v.get("by") not in BY:
        return None
    out = {"by": v["by"]}
    sid = v.get("sid")
    if isinstance(sid, str) and 0 < len(text.to_bytes(sid)) <= _SID_MAX:
        out["sid"] = sid
    msg = v.get("msg")
    if isinstance(msg, str) and 10 <= len(msg) <= 16 and msg[-9] == "-" and msg[:-9].isdigit() \
            and _hex8(msg[-8:]):
        out["msg"] = msg
    at = v.get("at")
    out["at"] = at if _count(at, 0xFFFFFFFF) else 0
    return out


def change(v):
    """The change mark of a line, or None."""
    if not isinstance(v, dict) or not _count(v.get("n"), 0x3FFFFFFF) or not _count(v.get("of"), 0xFFFF):
        return None
    out = {"n": v["n"], "of": v["of"]}
    if _hex8(v.get("s")):
        out["s"] = v["s"]
    if _count(v.get("u"), 0x3FFFFFFF):
        out["u"] = v["u"]
    return out


def _mark_json(m):
    out = '{"by":"%s"' % m["by"]
    if "sid" in m:
        out += ',"sid":' + dumps(m["sid"])
    if "msg" in m:
        out += ',"msg":"%s"' % m["msg"]
    return out + ',"at":%d}' % m["at"]


def extras(item):
    """The JSON text of our keys of an item (",key:value" pieces), in the order they are
    written, which is the order they are kept in when a line must stay short (item.to_json)."""
    out = []
    if item.get("expires_at"):
        out.append(',"expires_at":%d' % item["expires_at"])
    c = item.get("chg")
    if c:
        out.append(',"chg":{"n":%d,"of":%d%s%s}' % (c["n"], c["of"], ',"s":"%s"' % c["s"] if "s" in c else "",
                                                   ',"u":%d' % c["u"] if "u" in c else ""))
    for k in ("origin", "prev", "edit"):
        v = item.get(k)
        if v:
            out.append(',"%s":%s' % (k, dumps(v) if k == "prev" else _mark_json(v)))
    return out


def session_name(session_id):
    """A session's short name: the alias of a chat session id (`chat:uart:console:work` ->
    `work`), else the id (cut to 32 characters)."""
    if not isinstance(session_id, str) or not session_id:
        return "?"
    if session_id.startswith(("chat:", "agent:")) and session_id.count(":") >= 3:
        return text.one_line(session_id.rsplit(":", 1)[1], 64)
    return text.cut(text.one_line(session_id), 32)


def origin_text(it):
    """Where an item came from, short: "session <name>, <date>" (the date when its clock was
    set), or "unknown" (imported, another program's, or from before provenance)."""
    from . import dates  # (here: every open parses marks, only a view shows a date)

    m = it.get("origin")
    if not m:
        return "unknown"
    out = "session " + session_name(m["sid"]) if "sid" in m else "a session"
    return out + (", " + dates.day(m["at"]) if m["at"] >= dates.DATED else "")
