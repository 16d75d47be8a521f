# claw_memory.session.listing: every session, with the id a chat map gives it, one at a time;
# a session's stat without repairing it; the files a search reads.
# MIT license
#
# RAM: one word per session file, a sorted list of the 30-bit keys (format.name_key) of the
# named sessions that have files, so that the directory's pass skips them: an unnamed file
# whose key equals a named one's, about 1 in 10**9 per pair, is not listed. One word per
# pending file and per block marker (few), the keys of their logs.

from .. import fsutil
from .._compat import const, ilistdir
from . import format as fmt_

_NAMED_MAX = const(4096)  # named sessions a whole-root search keeps apart from the unnamed


def rows(sessions):
    """Sessions.list()'s rows: the sessions `sessions.names()` names, then the other files."""
    names = iter(sessions.names() if sessions.names is not None else ())
    sid = _next(names)
    # One walk of the folder first: how many logs, and which have a pending file or a block
    # marker (few: their keys), so that a row costs no lookup of either name (littlefs reads
    # the folder's metadata for each: with 2,000 sessions, hundreds of KiB a name).
    count, marks = _scan(sessions.dir)
    # One allocation, made before the maps are read (the heap is least fragmented then),
    # and only when a chat map names a session.
    keys = [0] * count if sid is not None else None
    n = 0
    while sid is not None:
        try:
            log = sessions.path(sid)
        except ValueError:  # an id no session can have
            log = None
        if log is not None:
            row = peek(sessions, log, -1, marks)
            if n < len(keys) and (row["bytes"] or row["pending"] or fsutil.exists(log)):
                keys[n] = fmt_.name_key(log)  # its file comes again below
                n += 1
            row["id"] = sid
            yield row
        sid = _next(names)
    if keys:
        del keys[n:]
        keys.sort()
    for log, size in logs(sessions.dir):
        if keys and has(keys, fmt_.name_key(log)):
            continue
        row = peek(sessions, log, size, marks)
        row["id"] = None
        yield row


def logs(directory):
    """(path, size) of every session's log in the directory (also of a first turn that has
    only its pending file), one at a time; the size as the folder's listing says it, -1 when
    it does not (or for a first turn's)."""
    if not fsutil.is_dir(directory):
        return
    pend = fmt_.PEND
    for name, is_dir, size in ilistdir(directory):
        if is_dir:
            continue
        if name.endswith(pend):
            name = name[: -len(pend)]  # a first turn not completed yet: no log
            if not fmt_.is_log_name(name) or fsutil.exists(directory + "/" + name):
                continue
            size = -1
        elif not fmt_.is_log_name(name):
            continue
        yield directory + "/" + name, size


def _scan(directory):
    # (the logs of logs(), (sorted keys of the logs with a pending file, and with a block
    # marker)): one walk
    from array import array

    n = 0
    pend = array("I")
    blk = array("I")
    if fsutil.is_dir(directory):
        for name, is_dir, _ in ilistdir(directory):
            if is_dir:
                continue
            for suffix, to in ((fmt_.PEND, pend), (fmt_.BLOCKED, blk)):
                if name.endswith(suffix):
                    log = name[: -len(suffix)]
                    if fmt_.is_log_name(log):  # (a stray of no log's name costs no word)
                        to.append(fmt_.name_key(log))
            n += fmt_.is_log_name(name) or name.endswith(fmt_.PEND)
    return n, (sorted(pend), sorted(blk))


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


def peek(sessions, log, size, marks):
    """A session's stat without repairing it, in few file lookups (littlefs looks a name up
    by reading the directory: with thousands of sessions, lookups are the cost); `size`: the
    log's when a listing said it, else -1; `marks`: _scan's (a name they lack is not looked
    up; one they hold is, as keys can collide)."""
    from . import pending, repair

    if log in sessions._cache:
        return sessions._stat(log)
    if size < 0:
        size = fsutil.size(log)
    records = _indexed(log, size)
    if records < 0:  # the index does not end where the log does: what an open would find
        records = repair.analyse(log, sessions.max_record_bytes).report()["records"]
    k = fmt_.name_key(log)
    pend = 0
    if has(marks[0], k):  # (Pending finds a missing file itself: one look-up)
        pend = pending.Pending(log, sessions.max_record_bytes).records
    blocked = has(marks[1], k) and fsutil.exists(log + fmt_.BLOCKED)
    return {"file": log.rsplit("/", 1)[-1], "bytes": max(size, 0), "records": records + pend,
            "pending": pend, "blocked": blocked}


def _indexed(log, size):
    """Entries of a sound index whose last record ends where the log does (nothing for an
    open to re-index), else -1."""
    if size <= 0:
        return 0 if size < 0 and fsutil.size(log + fmt_.IDX) < 0 else -1
    try:
        with open(log + fmt_.IDX, "rb") as f:
            head = f.read(fmt_.HDR)
            n = f.seek(0, 2)
            count = fmt_.entry_count(n)
            if head != fmt_.HEADER or (n - fmt_.HDR) % fmt_.ENT or not count:
                return -1
            off, ln = fmt_.entry_at(f, count - 1)
    except OSError:
        return -1
    return count if off + ln == size else -1


def search_scope(sessions, ids):
    """What search_files lists again without reading it again: (the sessions `ids` as
    (id, log path) pairs, None for the whole folder; the archive segments of their logs, as
    Sessions.archived gives them)."""

    if ids is None:
        return None, sessions.archived()
    found = []
    for sid in ids:
        try:  # a session id, or the file name a search gave a session no chat map names
            found.append((sid, sessions._target(None, sid) if fmt_.is_log_name(sid) else sessions.path(sid)))
        except ValueError:  # an id no session can have
            continue
    return found, sessions.archived([log.rsplit("/", 1)[-1] for _, log in found])


def search_files(sessions, scope):
    """What a search reads: (id, path, archived, end, order, being written, check) of the
    logs and archive segments of `scope` (search_scope's; the whole folder: the sessions the
    chat maps name, then every other log in the folder, by its file name; search.search says
    what each field means)."""
    found, segs = scope
    if found is None:
        keys = []  # one word per named session: their files are not listed twice
        for sid in sessions.names() if sessions.names is not None else ():
            try:
                log = sessions.path(sid)
            except ValueError:  # an id no session can have
                continue
            if len(keys) < _NAMED_MAX:
                keys.append(fmt_.name_key(log))
            yield from _files_of(sessions, sid, log, segs)
        keys.sort()
        for log, _ in logs(sessions.dir):
            if not has(keys, fmt_.name_key(log)):
                yield from _files_of(sessions, None, log, segs)
    else:
        # (the later in the list, the newer on a tie: a chat's sessions in the order its map
        # made them, the current one last; the whole folder has no such order)
        for i, (sid, log) in enumerate(found):
            yield from _files_of(sessions, sid, log, segs, (1 << 20) + i)


def _files_of(sessions, sid, log, segs, order=1 << 20):
    from .archive import seg_path

    name = log.rsplit("/", 1)[-1]
    sid = sid or name
    a = segs.get(name, ())
    for i in range(0, len(a), 2):  # (never appended to: trusted)
        yield sid, seg_path(sessions.dir, name, a[i]), True, a[i + 1], a[i], False, False
    st = sessions._cache.get(log)
    if st is not None:
        sessions._flushed(log)
        if st.log_size > 0:
            yield sid, log, False, st.log_size, order, True, st.tix_end < 0
    else:
        yield sid, log, False, -1, order, False, True  # (a missing log is passed over)
