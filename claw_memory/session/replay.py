# claw_memory.session.replay: a session's records read back: pages of visible text for chat
# UIs, raw records for export (what a request sends: stream.py).
# MIT license

from .. import jsonraw
from .._compat import const
from ..core import FINAL, USER
from ..messages import classify, visible_text
from .state import each, pending, read

_PAGE_LIMIT_MAX = const(50)
_PAGE_RECORD_MAX = const(65536)
_PAGE_TEXT_MAX = const(32768)


def check_page(before, limit):
    if not isinstance(limit, int) or not 1 <= limit <= _PAGE_LIMIT_MAX:
        raise ValueError("limit must be an integer, 1..%d" % _PAGE_LIMIT_MAX)
    if not isinstance(before, int) or before < 0:
        raise ValueError("before must be a non-negative integer")


def page(log, st, before, limit, max_record, segments=()):
    """A page of visible user/assistant text, newest page by default (ESP-Claw's UI API):
    {"total","revision","next_before","has_more","messages":[{"seq","role","text"}]}. The
    archive segments (paths, oldest first) come before the log: older pages continue there."""
    # One pass (the records' index entries are the cost: a session's and its archive's, a
    # megabyte of history is thousands): it counts them all and keeps the last `limit` of
    # those before `before` (all of them when 0), which is the page once the total is known.
    picked = []
    total = 0
    for rec in _visible(log, st, segments, max_record):
        if not 0 < before <= total:
            if len(picked) == limit:
                picked.pop(0)
            picked.append((total,) + rec)
        total += 1
    start = picked[0][0] if picked else total
    msgs = []
    used = 0
    for ordinal, path, off, ln, kind in reversed(picked):
        if path is None:
            obj = jsonraw.json_value(ln)
        elif ln > _PAGE_RECORD_MAX + 1:
            obj = {"content": "[message too large to show]"}  # not the whole page
        else:
            with open(path, "rb") as f:
                obj = read(f, off, ln, max_record)
        txt = visible_text(obj.get("content")) if isinstance(obj, dict) else ""
        n = len(txt.encode())
        if msgs and used + n > _PAGE_TEXT_MAX:
            start = ordinal + 1
            break
        used += n
        msgs.append({"seq": ordinal + 1, "role": "user" if kind == USER else "assistant",
                     "text": txt})
    msgs.reverse()
    return {"total": total, "revision": total, "next_before": start, "has_more": start > 0,
            "messages": msgs}


def _visible(log, st, segments, max_record):
    # (path, offset, length, type) of the visible records (users' and final answers) of the
    # archive segments, the log, then (path None, -1, JSON bytes, type) the pending turn's.
    if segments:
        from .indexer import records

        for seg in segments:
            for off, ln, kind in records(seg, max_record):
                if kind == USER or kind == FINAL:
                    yield seg, off, ln, kind
    for off, ln, kind, fmt in each(log, st):
        if kind == USER or kind == FINAL:
            yield log, off, ln, kind
    for kind, fmt, body in pending(log, st):
        if kind == USER or kind == FINAL:
            yield None, -1, body, kind


def records(log, st, limit):
    """(type, backend, JSON bytes) of every record, logged then pending, in order; damaged
    records (not a chat record, over the size bound) are skipped."""
    if st.log_size > 0:
        with open(log, "rb") as lf:
            for off, ln, kind, fmt in each(log, st):
                if 0 < ln <= limit + 1:
                    lf.seek(off)
                    raw = lf.read(ln)
                    if len(raw) == ln and raw[-1] == 10 and classify(jsonraw.json_value(raw))[0]:
                        yield kind, fmt, raw[:-1]
    for kind, fmt, body in pending(log, st):
        if classify(jsonraw.json_value(body))[0]:
            yield kind, fmt, body
