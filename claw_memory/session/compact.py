# claw_memory.session.compact: shrink a session over its size limit well below it, or block
# it when even its newest turn is too big (ESP-Claw §6.4 in docs/DESIGN.md, with hysteresis).
# MIT license
#
# ESP-Claw's rule keeps every user and final record, the tool records of the newest completed
# turn that used tools, and an unfinished last turn; near the limit that frees little, and
# ESP-Claw compacts again a few turns later (4 turns in 5 in the benchmark). Here a
# compaction goes on until the session is under a target that leaves room for 20 more turns
# of the recent median size (at most 75% of the limit, at least 25%; a median, so that one
# large turn does not size the room): first the tool records of the newest completed turn
# with tools go too, when that is not the newest turn, then the oldest whole turns. The
# newest turn's tool records count on top of the target, as far as room for 20 turns is
# left (the next compaction drops them). The request window sends only the newest turns
# anyway. The newest turn is never dropped; when it alone is over the limit, the session is
# blocked (ESP-Claw's warning).
#
# Both files are written as `.tmp` and committed together through a journal (fsutil.commit),
# record by record through a fsutil.Buffered (FAT shares one sector buffer between open files:
# alternating small writes cost a sector each); index entries are written in batches for the
# same reason.

from .. import fsutil
from .._compat import const
from ..core import FINAL, TOOL_CALL, TOOL_RESULTS, USER
from . import format as fmt_
from .pending import bridge, rebase_pending
from .repair import Entries
from .state import State, each
from .write import flush_index

_ROOM_TURNS = const(20)  # turns like the recent ones a compaction leaves room for

class _Plan:
    """Which records a compaction keeps: `keep(i, type)`."""

    def __init__(self, log, st):
        self.last_tool = None  # (start, end) of the newest completed turn with tool records
        self.newest = 0  # first record of the newest turn
        self.cut = 0  # records before this are dropped (whole oldest turns)
        recent = []  # full sizes of the newest completed turns
        start = n = size = 0
        done = tools = False
        for off, ln, kind, fmt in each(log, st):
            if kind == USER and n > 0:
                self._ended(start, n, done, tools, size, recent)
                start, done, tools, size = n, False, False, 0
            if kind == FINAL:
                done = True
            elif kind == TOOL_CALL or kind == TOOL_RESULTS:
                tools = True
            size += ln
            n += 1
        self._ended(start, n, done, tools, size, recent)
        self.newest = start
        self.open_from = n if done else start  # an unfinished last turn is kept whole
        self.count = n
        self.turn = sorted(recent)[len(recent) // 2] if recent else 0

    def _ended(self, start, end, done, tools, size, recent):
        if done and tools:
            self.last_tool = (start, end)
        if done:
            recent.append(size)
            if len(recent) > _ROOM_TURNS:
                recent.pop(0)

    def keep(self, i, kind):
        if i < self.cut:
            return False
        lt = self.last_tool
        return (kind == USER or kind == FINAL or i >= self.open_from
                or (lt is not None and lt[0] <= i < lt[1]))


def target(limit, turn, newest_tools=0):
    """Bytes a compaction brings a session down to: room for 20 more turns of `turn` bytes,
    within 25%..75% of the limit, plus the newest turn's tool records as far as the room for
    20 turns is kept."""
    room = limit - _ROOM_TURNS * turn
    base = max(limit // 4, min(limit * 3 // 4, room))
    return max(base, min(base + newest_tools, room))


def compact(log, st, size_limit, note, limit, archive_limit=0, now=0):
    """Compact the session; returns its new State, or None when it was blocked instead.
    With `archive_limit`, the whole turns dropped move to a new archive segment (the live
    segments of the data root kept within that many bytes; archive.py); `limit`: the record
    bound (records over it are indexed by their first bytes); `now`: the time the catalog
    gives the segment."""
    idx = log + fmt_.IDX
    plan = _Plan(log, st)
    planned = newest_tools = older_tools = i = 0
    for off, ln, kind, fmt in each(log, st):
        if plan.keep(i, kind):
            planned += ln
            if kind == TOOL_CALL or kind == TOOL_RESULTS:
                if i >= plan.newest:
                    newest_tools += ln
                else:  # the newest completed turn with tools, an older one
                    older_tools += ln
        i += 1
    goal = target(size_limit, plan.turn, newest_tools)
    if planned > goal and older_tools:
        plan.last_tool = None  # old tool results go before any dialogue
        planned -= older_tools
    cut_off = 0
    if planned > goal:
        # Drop the oldest turns, never the newest, until the rest is under the goal.
        dropped = i = 0
        cut = plan.newest
        it = each(log, st)
        try:
            for off, ln, kind, fmt in it:
                if i >= plan.newest:
                    cut_off = off
                    break
                if kind == USER and i > 0 and planned - dropped <= goal:
                    cut = i
                    cut_off = off
                    break
                if plan.keep(i, kind):  # (plan.cut is still 0: what the rule keeps)
                    dropped += ln
                i += 1
        finally:
            it.close()  # its index file
        plan.cut = cut
        planned -= dropped
    if planned > size_limit:
        flush_index(log, st)
        fsutil.write_file(log + fmt_.BLOCKED, b"")
        note("%s: blocked, %d bytes after compaction" % (log, planned))
        return None
    # With an archive, every record dropped goes to a new segment: the whole turns before
    # `cut_off` as they are, then the tool records of later turns that the rule drops.
    seg = cut_off
    if archive_limit:
        for off, ln, to, at in _moves(log, st, plan, cut_off, True):
            if at >= cut_off:
                seg += ln
    arch = 0 < seg <= archive_limit
    indexed = arch or fsutil.size(fmt_.tix(log)) >= 0
    if not indexed:
        try:  # (an older version's index beside the log counts: the update moves it; as
            # indexer.update asks)
            indexed = fsutil.size(log + fmt_.TIX) >= 0
        except OSError:  # (unreadable: derived, left out)
            pass
    if indexed:
        from . import indexer

        indexer.update(log, limit, st.log_size)  # the records since its last block
    out = fsutil.Buffered()  # before the files: a MemoryError leaves no tmp behind
    pos = i = 0
    with open(log, "rb") as lf, open(log + fmt_.TMP, "wb") as f, open(idx + fmt_.TMP, "wb") as iout:
        out.f = f
        ents = Entries(iout)
        iout.write(fmt_.HEADER)
        for off, ln, kind, fmt in each(log, st):
            if plan.keep(i, kind):
                out.copy(lf, off, ln)
                ents.add(pos, ln, kind, fmt)
                pos += ln
            i += 1
        ents.flush()
        out.flush()
    kept = ents.n
    out = ents = None  # rebase_pending needs a buffer of its own
    segment = None
    if arch:
        from . import archive

        d, name = log.rsplit("/", 1)
        p = archive.head_print(log + fmt_.TMP, idx + fmt_.TMP)
        entries, n = archive.plan(d, name, seg, archive_limit, now, () if p is None else (p,))
        archive.begin(d, name, n)
        segment = archive.seg_path(d, name, n)
        out = fsutil.Buffered()
        fsutil.wrote(segment)
        with open(segment, "wb") as f:
            out.f = f
            _segment(out, log, st, plan, cut_off)
            out.flush()
        out = None
    tix_ok = indexed and _text_indexes(log, st, plan, cut_off, segment, limit)
    if st.pend > 0:
        st.pend_size = st.pend_file = bridge(log, st.pend_size, st.log_size, pos)
    if arch:
        archive.write_catalog(d, entries, tmp=True)
        archive.commit(d)
        archive.finish(d, name)
        note("%s: %d bytes of records moved to archive segment %d" % (log, seg, n))
        if tix_ok:  # (nothing is appended to a segment: its blocks merged once)
            from .tixmerge import settle_file
            settle_file(segment, note)
    else:
        from .archive import own

        own(log)  # the segments a former compaction made stay this log's
        fsutil.commit(log + fmt_.COMMIT, [log, idx, fmt_.tix(log)] if tix_ok else [log, idx])
    if indexed and not tix_ok:
        fsutil.remove(fmt_.tix(log))  # it no longer names its log's records
    new = State(pos, kept, pos, 0, fmt_.HDR + fmt_.ENT * kept)
    new.pend, new.pend_size, new.pend_file = st.pend, st.pend_size, st.pend_file
    rebase_pending(log, new)
    note("%s: compacted to %d bytes, %d records (%d oldest dropped)" % (log, pos, kept, plan.cut))
    return new


def _moves(log, st, plan, cut_off, arch):
    """(old offset, length, offset in the new log or -1, offset in the archive segment or
    -1) of every record of the old log, in order."""
    pos = i = 0
    at = cut_off  # the segment: the log's first cut_off bytes, then the later dropped records
    for off, ln, kind, fmt in each(log, st):
        if plan.keep(i, kind):
            yield off, ln, pos, -1
            pos += ln
        elif not arch:
            yield off, ln, -1, -1
        elif off < cut_off:
            yield off, ln, -1, off
        else:
            yield off, ln, -1, at
            at += ln
        i += 1


def _segment(out, log, st, plan, cut_off):
    # The archive segment's bytes: as _moves places them.
    with open(log, "rb") as f:
        out.copy(f, 0, cut_off)
        for off, ln, to, at in _moves(log, st, plan, cut_off, True):
            if at >= cut_off:
                out.copy(f, off, ln)


def _text_indexes(log, st, plan, cut_off, segment, limit):
    """The new log's text index as `.tix.tmp` (and the archive segment's, when there is one,
    as its `.tix`) from the old one's blocks; False when that cannot be done (they are then
    indexed again when next searched)."""
    from . import remap, tix

    arch = segment is not None
    aout = fsutil.Buffered() if arch else None
    if arch:
        fsutil.wrote(fmt_.tix(segment))
    try:
        with open(fmt_.tix(log) + fmt_.TMP, "wb") as f, (
                open(fmt_.tix(segment), "wb") if arch else fsutil.Nothing()) as af:
            out = fsutil.Buffered(f)
            out.write(tix.MAGIC)
            if arch:
                aout.f = af
                aout.write(tix.MAGIC)
            ok = remap.remap(log, log + fmt_.TMP, segment, _moves(log, st, plan, cut_off, arch),
                               cut_off if arch else 0, out, aout, limit)
            out.flush()
            if arch:
                aout.flush()
    except Exception:  # noqa: BLE001 -- a damaged old index: derived, made again when searched
        ok = False
    if not ok:
        fsutil.remove(fmt_.tix(log) + fmt_.TMP)
        if arch:
            fsutil.remove(fmt_.tix(segment))
    return ok
