# claw_memory.session.flatmsg: flat messages, the ones a request sends as their record stores
# them: found in a record's bytes, and framed for a backend's wire.
# MIT license
#
# A flat message is a user or assistant message of a non-empty string content, or a tool
# result of string (or null) fields: (kind, id start, id end, content start, content end, id
# bytes or None), file offsets of its JSON strings' bodies, -1 when absent. Its wire text is
# those bytes copied between the frames of wire.py, which owns the message shapes.

from .._compat import EIO
from ..wire import FLAT_ASSISTANT, FLAT_TOOL, FLAT_TOOL_ERROR, FLAT_USER, RECORD_HEADS, RECORD_TOOL
from . import flat

NAMES = ("", "user", "assistant", "tool", "tool")  # the role of each kind
_ROLES = (b"user", b"assistant", b"tool")
_TOOL_KEYS = (b"role", b"tool_call_id", b"content", b"is_error")


def scanned(rd):
    """The flat messages of the record opened on `rd`, checked, found by a general scan;
    None when it holds any other (then it is parsed)."""
    objs = flat.scan(rd, True)
    if objs is not None and rd.ends_line() and _sendable(objs):
        return [of_fields(o) for o in objs]
    return None


def again(rd, f, off, ln):
    """The flat messages of a record a first pass found flat, read again unchecked (a later
    pass, for a record whose messages the first pass could not keep)."""
    rd.open(f, off, ln)
    objs = flat.scan(rd, False)
    if objs is None:
        raise OSError(EIO, "session history changed while it was sent")
    return [of_fields(o) for o in objs]


def quick(rd, check):
    """The flat messages of the record opened on `rd` when it is in the usual key order
    (ours, and cJSON's), without a general scan; None when it is not in that shape (scan it
    then). `check`: the strings are checked to be what dumps writes."""
    if not rd.need(1):
        return None
    if rd.buf[rd.pos] == 91:  # [: tool results
        rd.pos += 1
        out = []
        head, mid, err = RECORD_TOOL
        while True:
            if not _lit(rd, head):
                return None
            t = rd.string(check)
            if t is None or t[2] is None or b"\\" in t[2] or not _lit(rd, mid):
                return None
            c = rd.string(check)
            if c is None or not _lit(rd, err):
                return None
            if _lit(rd, b"false}"):
                kind = FLAT_TOOL
            elif _lit(rd, b"true}"):
                kind = FLAT_TOOL_ERROR
            else:
                return None
            out.append((kind, t[0], t[1], c[0], c[1], t[2]))
            if _lit(rd, b"]"):
                break
            if not _lit(rd, b","):
                return None
    else:
        for head, kind, role in RECORD_HEADS:
            if _lit(rd, head):
                break
        else:
            return None
        c = rd.string(check)
        if c is None or c[1] <= c[0] or not _lit(rd, b"}"):
            return None
        out = [(kind, -1, -1, c[0], c[1], None)]
    return out if rd.peek() == -1 and rd.ends_line() else None


def _lit(rd, b):
    # The next bytes are `b` (then consumed).
    n = len(b)
    if not rd.need(n) or rd.buf[rd.pos : rd.pos + n] != b:
        return False
    rd.pos += n
    return True


def of_fields(o):
    """A flat message from a scanned object's fields."""
    role = o[b"role"][2]
    c = o.get(b"content")
    cs, ce = (c[0], c[1]) if c is not None and c[0] >= 0 else (-1, -1)
    if role == b"user":
        return FLAT_USER, -1, -1, cs, ce, None
    if role == b"assistant":
        return FLAT_ASSISTANT, -1, -1, cs, ce, None
    t = o.get(b"tool_call_id")
    ids, ide, tid = (t[0], t[1], t[2]) if t is not None and t[0] >= 0 else (-1, -1, None)
    err = o.get(b"is_error")
    kind = FLAT_TOOL_ERROR if err is not None and err[2] == b"true" else FLAT_TOOL
    return kind, ids, ide, cs, ce, tid


def _sendable(objs):
    """Whether flat objects can go out re-framed: user/assistant messages of a non-empty
    string content and nothing else; tool results of string or null fields (an id without
    escapes) and a true/false/null error flag."""
    for o in objs:
        role = o.get(b"role")
        if role is None or role[0] < 0 or role[2] not in _ROLES:
            return False
        if role[2] != b"tool":
            c = o.get(b"content")
            if len(o) != 2 or c is None or c[0] < 0 or c[1] <= c[0]:
                return False
            continue
        for k in o:
            if k not in _TOOL_KEYS:
                return False
        v = o.get(b"tool_call_id")
        if v is not None and (v[0] < 0 and v[2] != b"null" or v[0] >= 0 and (v[2] is None or b"\\" in v[2])):
            return False
        v = o.get(b"content")
        if v is not None and v[0] < 0 and v[2] != b"null":
            return False
        v = o.get(b"is_error")
        if v is not None and v[2] not in (b"true", b"false", b"null"):
            return False
    return True


def wire_parts(frames, d):
    """The wire text of flat message `d` framed by `frames` (wire.frames of the backend):
    bytes, and (start, end) spans of its record's file (an Anthropic tool result as its block
    alone: it goes into its round's message)."""
    fr = frames[d[0]]
    content = (d[3], d[4]) if d[3] >= 0 else None
    if len(fr) == 2:
        return [fr[0], content, fr[1]]
    return [fr[0], (d[1], d[2]) if d[1] >= 0 else None, fr[1], content, fr[2]]


def wire_length(frames, d):
    """Bytes of flat message `d` on the wire (what wire_parts() gives, counted without it)."""
    fr = frames[d[0]]
    n = d[4] - d[3] if d[3] >= 0 else 0
    if len(fr) == 2:
        return n + len(fr[0]) + len(fr[1])
    n += d[2] - d[1] if d[1] >= 0 else 0
    return n + len(fr[0]) + len(fr[1]) + len(fr[2])


def tool_id(d):
    """The id a flat tool result answers, or None."""
    return d[5].decode() if d[5] is not None else None
