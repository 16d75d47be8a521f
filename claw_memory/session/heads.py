# claw_memory.session.heads: which log an archive segment belongs to: the print of a log's
# head, kept in the archive's catalog (session/archive.py, docs/FORMAT.md).
# MIT license
#
# A segment belongs to its log as long as the log is the one it was cut from: the catalog
# keeps a print of that log's head (archive.head_print), its first record and its first
# answer, which appends and ESP-Claw's in-place compaction (it keeps every user and final
# record, in order) leave as they are. ESP-Claw's `/session delete` removes the log and not
# the segments; a log made again under that name has another head, so the old
# conversation's segments are not shown as the new one's: the readers (search, page, a
# memory's message found again) ask this module, which removes them. (The prints are made
# and rewritten in archive.py, which compaction imports; this module only when reading.)

from .. import fsutil
from .._compat import const
from . import archive
from . import format as fmt_
from .archive import head_print

_HEADS_MAX = const(128)  # head prints a Sessions keeps (8 bytes each)
_NONE = const(1)  # a cached print that cannot be told (a print's high half is never 0)


def attached(directory, names, heads, note, limit):
    """live's segments of the logs in `names` (None: every log), without those of a log that
    is no longer the one they were cut from: those are removed. `heads`: a Sessions' cache
    of head prints (array of name key, print pairs), read again before anything is removed
    (another Sessions on the root may have compacted the log since); `limit`: the record
    size bound."""
    bad = []  # [name, seq] of the segments whose log is not theirs

    def owns(name, prints, seq):
        log = directory + "/" + name
        k = fmt_.name_key(log)
        hit = _cached(heads, k)
        if hit is not None and matches(hit[0], prints):
            return True
        p = head_print(log)  # not read yet, or changed since (never removed on a cache)
        _cache(heads, k, p)
        if matches(p, prints):
            return True
        bad.append((name, seq))
        return False

    out = archive.live(directory, names, owns)
    done = []
    for name, seq in bad:
        if name in done:
            continue
        done.append(name)
        try:
            archive.drop_session(directory, name, [q for n, q in bad if n == name])
            _drop_rest(directory + "/" + name, limit, note)
        except OSError as e:  # (a full or failing flash: they stay hidden, removed later)
            note("%s: archive segments of a deleted session not removed: %s" % (name, e))
            continue
        note("%s: archive segments cut from another log of that name removed (ESP-Claw "
             "deleted its session)" % name)
    return out


def matches(p, prints):
    """Whether the head print `p` (None: it cannot be told) is one of `prints`: the first
    records' halves equal, and the answers' too where both are known (0)."""
    if p is None:
        return True
    for q in prints:
        if q >> 16 == p >> 16 and (not q & 0xFFFF or not p & 0xFFFF or q == p):
            return True
    return False


def _cached(heads, k):
    # (the print cached for name key k,), or None when none is.
    for i in range(0, len(heads), 2):
        if heads[i] == k:
            v = heads[i + 1]
            return (None if v == _NONE else v,)
    return None


def _cache(heads, k, p):
    for i in range(0, len(heads), 2):
        if heads[i] == k:
            heads[i + 1] = _NONE if p is None else p
            return
    if len(heads) >= 2 * _HEADS_MAX:
        heads[:] = heads[:0]  # (a whole data root's logs: read again, not kept in RAM)
    heads.append(k)
    heads.append(_NONE if p is None else p)


def _drop_rest(log, limit, note):
    """What else of ours ESP-Claw's deletion of `log` left, when no log was made again: its
    text index, and its unfinished turn (begun on a log that is gone: Pending drops it, as
    an open of the session would; `limit`: the record size bound)."""
    if fsutil.exists(log):
        return
    for t in fmt_.tix(log, True):
        fsutil.remove(t)
    from .pending import Pending

    Pending(log, limit).settle(note)


def owner(log):
    """An `owns` for live and segments that reads the head print of `log` once, when a
    segment asks."""
    got = []

    def owns(name, prints, seq):
        if not got:
            got.append(head_print(log))
        return matches(got[0], prints)

    return owns
