# claw_memory.session.heads: which log an archive segment belongs to: the print of a log's
# head, kept in the archive's catalog (session/archive.py, docs/FORMAT.md).
# MIT license
#
# A segment belongs to its log as long as the log is the one it was cut from: the catalog
# keeps a print of that log's head (head_print), its first record and its first answer,
# which appends and ESP-Claw's in-place compaction (it keeps every user and final record, in
# order) leave as they are. ESP-Claw's `/session delete` removes the log and not the
# segments; a log made again under that name has another head, so the old conversation's
# segments are not shown as the new one's (Sessions.archived removes them). A rewrite of the
# log by this library names the new head in the catalog before it commits (`own`).

from .. import fsutil, text
from .._compat import const
from ..core import FINAL, USER
from . import archive
from . import format as fmt_

_PRINT_BYTES = const(256)  # of each record a head print hashes
_PRINT_ENTRIES = const(32)  # index entries looked through for the first answer
_HEADS_MAX = const(128)  # head prints a Sessions keeps (8 bytes each)
_NONE = const(1)  # a cached print that cannot be told (a print's high half is never 0)


def attached(directory, names, heads, note):
    """live's segments of the logs in `names` (None: every log), without those of a log that
    is no longer the one they were cut from: those are removed. `heads`: a Sessions' cache
    of head prints (array of name key, print pairs), read again before anything is removed
    (another Sessions on the root may have compacted the log since)."""
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
            _drop_rest(directory + "/" + name)
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


def _drop_rest(log):
    """What else of ours ESP-Claw's deletion of `log` left, when no log was made again: its
    text index, and its unfinished turn (begun on a log that is gone: Pending drops it)."""
    if fsutil.exists(log):
        return
    fsutil.remove(log + fmt_.TIX)
    f = fsutil.open_existing(log + fmt_.PEND)
    if f is not None:
        with f:
            starts = fmt_.read_pending_head(f)
        if starts is None or starts[-1] > 0:
            fsutil.remove(log + fmt_.PEND)


def owner(log):
    """An `owns` for live and segments that reads the head print of `log` once, when a
    segment asks."""
    got = []

    def owns(name, prints, seq):
        if not got:
            got.append(head_print(log))
        return matches(got[0], prints)

    return owns


def head_print(log, idx=None):
    """The print of a log's head, 32 bits: in the high half the 32-bit FNV-1a of its first
    user or final record, in the low half that of its first final record (an answer), 0 when
    there is none among its first entries yet; each over the record's length and first bytes.
    0 for a missing log; None when it cannot be told (an empty log, an index (`idx`, default
    `<log>.idx`) that names no such record)."""
    n = fsutil.size(log)
    if n < 0:
        return 0
    f = fsutil.open_existing(idx or log + fmt_.IDX) if n else None
    if f is None:
        return None
    heads = []
    with f:
        count = fmt_.entry_count(f.seek(0, 2))
        f.seek(0)
        if f.read(fmt_.HDR) != fmt_.HEADER or count <= 0:
            return None
        for i, off, ln, t, b in fmt_.entries(f, min(count, _PRINT_ENTRIES)):
            if t == FINAL or (t == USER and not heads):
                heads.append((off, ln))
                if t == FINAL:
                    if len(heads) == 1:
                        heads.append((off, ln))  # (the first record is the answer: both halves)
                    break
    if not heads:
        return None
    out = 0
    with open(log, "rb") as lf:
        for i, (off, ln) in enumerate(heads):
            if off + ln > n:
                return None
            lf.seek(off)
            h = text.fnv1a32(b"%d:" % ln + lf.read(min(ln, _PRINT_BYTES)))
            out |= ((h >> 16 ^ h) & 0xFFFF or 1) << (16 if i == 0 else 0)
    return out


def own(log):
    """Before a rewrite of `log` commits (its `.tmp` and `.idx.tmp` written): its segments'
    entries name the head prints of the log on flash and of the new one, so that a power cut
    or a failure on either side of the commit leaves them their log's (the next compaction
    into the archive keeps the new one alone); when either cannot be told, they name none."""
    directory, name = log.rsplit("/", 1)
    entries = archive.read(directory)
    mine = [e for e in entries if e[3] == name and e[5]]
    if not mine:
        return
    new = head_print(log + fmt_.TMP, log + fmt_.IDX_TMP)
    cur = head_print(log)  # (the log on flash: a rewrite that failed before left it as it was)
    both = () if new is None or cur is None else (cur, new) if cur != new else (new,)
    if all(e[5] == both for e in mine):
        return
    for e in mine:
        e[5] = both
    archive.write_catalog(directory, entries)
