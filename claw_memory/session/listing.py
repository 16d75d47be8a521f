# claw_memory.session.listing: every session, with the id a chat map gives it, one at a time.
# MIT license
#
# RAM: one word per session file, a sorted list of the 30-bit keys (format.name_key) of the
# named sessions that have files, so that the directory's pass skips them: an unnamed file
# whose key equals a named one's, about 1 in 10**9 per pair, is not listed.

from .. import fsutil
from .._compat import ilistdir
from . import format as fmt_


def rows(sessions):
    """Sessions.list()'s rows: the sessions `sessions.names()` names, then the other files."""
    names = iter(sessions.names() if sessions.names is not None else ())
    sid = _next(names)
    # One allocation, made before the maps are read (the heap is least fragmented then),
    # and only when a chat map names a session.
    keys = [0] * _count(sessions.dir) if sid is not None else None
    n = 0
    while sid is not None:
        try:
            log = sessions.path(sid)
        except ValueError:  # an id no session can have
            log = None
        if log is not None:
            row = sessions._peek(log)
            if n < len(keys) and (row["bytes"] or row["pending"] or fsutil.exists(log)):
                keys[n] = fmt_.name_key(log)  # its file comes again below
                n += 1
            row["id"] = sid
            yield row
        sid = _next(names)
    if keys:
        del keys[n:]
        keys.sort()
    for log in logs(sessions.dir):
        if keys and has(keys, fmt_.name_key(log)):
            continue
        row = sessions._peek(log)
        row["id"] = None
        yield row


def logs(directory):
    """The path of every session's log in the directory (also of a first turn that has only
    its pending file), one at a time."""
    if not fsutil.is_dir(directory):
        return
    pend = fmt_.PEND
    for name, is_dir in ilistdir(directory):
        if is_dir:
            continue
        if name.endswith(pend):
            name = name[: -len(pend)]  # a first turn not completed yet: no log
            if not fmt_.is_log_name(name) or fsutil.exists(directory + "/" + name):
                continue
        elif not fmt_.is_log_name(name):
            continue
        yield directory + "/" + name


def _count(directory):
    n = 0
    for _ in logs(directory):
        n += 1
    return n


def _next(it):
    try:
        return next(it)
    except StopIteration:
        return None


def has(keys, k):
    """Whether the sorted list `keys` holds k (binary search)."""
    lo, hi = 0, len(keys)
    while lo < hi:
        mid = (lo + hi) // 2
        if keys[mid] < k:
            lo = mid + 1
        else:
            hi = mid
    return lo < len(keys) and keys[lo] == k
