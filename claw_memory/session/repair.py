# claw_memory.session.repair: analyse a session's files, plan and apply repairs, settle
# the leftovers of interrupted rewrites, and open a session (with session.pending).
# MIT license
#
# Repair instead of wipe (ESP-Claw recreates a session on any mismatch). On every open, what
# costs no rewrite of the log: bad or dangling index entries are dropped, and complete
# records the index lacks are indexed, after the last entry (records logged but not indexed
# yet when power went) and between entries (ours, when ESP-Claw appended after them before
# we could index them); a torn tail or a garbage line is read around (ESP-Claw tolerates
# trailing bytes). An explicit repair also rewrites the log without the damage (no truncate()
# on MicroPython: temp files and a journal, as compaction), so that `verify` finds nothing.
#
# Nothing is collected in RAM: analyse() counts, apply() walks the files again and writes.

from .. import fsutil
from .._compat import EISDIR, const
from . import format as fmt_
from .pending import Pending, bridge, rebase_pending
from .state import State, kind

_BATCH = const(100)  # index entries written at once


class Plan:
    """What analyse() found: counts, and where the valid index ends."""

    def __init__(self):
        self.log_size = -1
        self.idx_size = -1
        self.prefix = 0  # leading index entries that are well-formed and inside the log
        self.end = 0  # end of the last of them
        self.drop = None  # entries < prefix whose record is damaged (deep check only)
        self.found = 0  # records the index lacks, found between entries and after the last
        self.found_tail = 0  # of which after the last entry
        self.garbage = 0  # lines that are no record (not indexed)
        self.torn = 0  # bytes of a torn last record
        self.idx_dropped = 0  # index entries discarded (after the valid prefix)
        self.rebuilt = False  # index header bad or missing: rebuilt from the log

    def index_changes(self):
        exact = self.idx_size == fmt_.HDR + fmt_.ENT * self.prefix
        return bool(self.rebuilt or self.drop or self.found or not exact and self.log_size >= 0)

    def log_damage(self):
        """Bytes in the log that are no record: what only a rewrite removes."""
        return bool(self.garbage or self.torn or self.drop)

    def changes(self):
        return self.index_changes() or self.log_damage()

    def report(self):
        return {
            "records": self.prefix - len(self.drop or ()) + self.found,
            "reindexed": self.found,
            "dropped": self.garbage + len(self.drop or ()),
            "index_entries_dropped": self.idx_dropped,
            "torn_tail_bytes": self.torn,
            "rebuilt_index": self.rebuilt,
        }


def analyse(log, limit, deep=False):
    """A Plan for the session's .log/.idx (`deep`: also parse every indexed record)."""
    idx = log + fmt_.IDX
    for p in (log, idx, log + fmt_.PEND):
        if fsutil.is_dir(p):
            raise OSError(EISDIR, "session file is a directory: " + p)
    plan = Plan()
    plan.log_size = fsutil.size(log)
    plan.idx_size = fsutil.size(idx)
    log_size = max(plan.log_size, 0)
    count = 0
    if plan.idx_size >= fmt_.HDR:
        with open(idx, "rb") as f:
            if f.read(fmt_.HDR) == fmt_.HEADER:
                count = fmt_.entry_count(plan.idx_size)
                plan.prefix, plan.end = _valid_prefix(f, log, count, log_size)
            else:
                plan.rebuilt = True
    elif plan.idx_size >= 0 or plan.log_size > 0:
        plan.rebuilt = True  # no usable index: every record comes from the log scan
    plan.idx_dropped = count - plan.prefix
    if deep and plan.prefix:
        plan.drop = _unparsable(log, idx, plan.prefix, limit)
    if plan.log_size > 0:
        _walk(log, plan, limit, None)
    return plan


def _valid_prefix(f, log, count, log_size):
    """Leading index entries that are well-formed and inside the log, in order."""
    end = 0
    good = 0
    for i, off, ln, t, fmt in fmt_.entries(f, count):
        if not (fmt_.valid_entry(t, fmt, ln) and off >= end and off + ln <= log_size):
            break
        end = off + ln
        good = i + 1
    # The last kept record must end with its newline; walk back past any that do not.
    if good:
        with open(log, "rb") as lf:
            while good:
                off, ln = fmt_.entry_at(f, good - 1)
                lf.seek(off + ln - 1)
                if lf.read(1) == b"\n":
                    end = off + ln
                    break
                good -= 1
            else:
                end = 0
    return good, end


def _unparsable(log, idx, count, limit):
    """Entries whose record is not one JSON record line (of any size: one over the replay
    bound is no damage, it is only not sent)."""
    bad = set()
    with open(idx, "rb") as f, open(log, "rb") as lf:
        for i, off, ln, t, fmt in fmt_.entries(f, count):
            lf.seek(off + ln - 1)
            if lf.read(1) != b"\n" or not kind(lf, off, ln, limit)[0]:
                bad.add(i)
    return bad


def _walk(log, plan, limit, emit):
    """Every record to keep, in log order: the valid index entries (but the damaged ones) and
    the records found between and after them. `emit(off, ln, type, backend)` gets each; with
    `emit` None the walk counts what it finds into `plan` (analyse)."""
    count = emit is None
    drop = plan.drop or ()
    pos = 0
    with open(log, "rb") as lf, open(log + fmt_.IDX, "rb") if plan.prefix else fsutil.Nothing() as f:
        if plan.prefix:
            for i, off, ln, t, fmt in fmt_.entries(f, plan.prefix):
                if off > pos:
                    _scan(lf, pos, off, plan, limit, emit, count, False)
                if i not in drop and emit is not None:
                    emit(off, ln, t, fmt)
                pos = off + ln
        if plan.log_size > pos:
            _scan(lf, pos, plan.log_size, plan, limit, emit, count, True)


def _scan(lf, pos, end, plan, limit, emit, count, tail):
    """Records in the log bytes [pos, end) that no entry names: complete lines that are chat
    records (of any size) are emitted (or counted); other lines, and a fragment without its
    newline, are garbage; at the end of the log such a fragment is a torn tail."""
    lf.seek(pos)
    while pos < end:
        n, nl, first = fmt_.next_line(lf, end)
        if not n:
            break
        if not nl:  # runs to the end of the range
            if count:
                if tail:
                    plan.torn = n  # a record cut by a power loss
                else:
                    plan.garbage += 1  # a fragment before a record ESP-Claw appended
            break
        k, fmt = kind(lf, pos, n, limit, first)
        if k:
            if count:
                plan.found += 1
                plan.found_tail += tail
            else:
                emit(pos, n, k, fmt)
        elif count:
            plan.garbage += 1
        pos += n
        lf.seek(pos)


def apply(log, plan, limit, rewrite=False, pend=None):
    """Write what `analyse` planned; returns the resulting State. `rewrite`: also rewrite
    the log without its damage (garbage lines, a torn tail, damaged records); `pend`: the
    pending file's [records, size of its records, size] (Pending.settle's), updated when the
    rewrite bridges its header."""
    idx = log + fmt_.IDX
    if plan.log_size < 0:
        if plan.idx_size >= 0:
            fsutil.remove(idx)  # an index without its log describes nothing
        return State(-1, 0, 0, 0, -1)
    kept = plan.prefix - len(plan.drop or ()) + plan.found
    if rewrite and plan.log_damage():
        return _rewrite(log, plan, limit, pend)
    exact = plan.idx_size == fmt_.HDR + fmt_.ENT * plan.prefix
    end = plan.end
    if plan.rebuilt or plan.drop or not exact or plan.found > plan.found_tail or plan.found > _BATCH:
        out = Entries(None)

        def write(f):
            out.f = f
            f.write(fmt_.HEADER)
            _walk(log, plan, limit, out.add)
            out.flush()

        fsutil.replace(idx, write)
        end = out.end or end
    elif plan.found:  # records logged after the last entry: appended (a few, after a cut)
        out = Entries(None)
        _walk(log, plan, limit, out.tail(plan.prefix))
        fsutil.append(idx, out.buf)
        end = out.end
    return State(plan.log_size, kept, end, plan.torn, fsutil.size(idx))


class Entries:
    """Index entries written in batches (emit target of _walk; compaction's too)."""

    def __init__(self, f):
        self.f = f
        self.buf = bytearray()
        self.end = 0
        self.n = 0
        self.skip = 0

    def add(self, off, ln, t, fmt):
        if self.n < self.skip:  # already in the index
            self.n += 1
            return
        self.n += 1
        self.buf += fmt_.entry(off, ln, t, fmt)
        self.end = off + ln
        if len(self.buf) >= _BATCH * fmt_.ENT and self.f is not None:
            self.flush()

    def tail(self, skip):
        # Only the records after the index's last entry (the ones before are indexed).
        self.skip = skip
        return self.add

    def flush(self):
        if self.buf:
            fsutil.write_all(self.f, self.buf)
            self.buf = bytearray()


def _rewrite(log, plan, limit, pend):
    """Both files written again, with only the records to keep, committed together (a
    pending turn's header names both logs' sizes until then)."""
    idx = log + fmt_.IDX
    out = fsutil.Buffered()  # before the files: a MemoryError leaves no tmp behind
    pos = [0]
    with open(log, "rb") as lf, open(log + fmt_.TMP, "wb") as f, open(idx + fmt_.TMP, "wb") as iout:
        out.f = f
        ents = Entries(iout)
        iout.write(fmt_.HEADER)

        def copy(off, ln, t, fmt):
            out.copy(lf, off, ln)
            ents.add(pos[0], ln, t, fmt)
            pos[0] += ln

        _walk(log, plan, limit, copy)
        ents.flush()
        out.flush()
    if pend and pend[0]:
        out = None  # bridge needs a buffer of its own
        pend[1] = pend[2] = bridge(log, pend[1], plan.log_size, pos[0])
    from .archive import own

    own(log)
    fsutil.commit(log + fmt_.COMMIT, [log, idx])
    return State(pos[0], ents.n, pos[0], 0, fmt_.HDR + fmt_.ENT * ents.n)


def leftovers(log):
    """Leftover files of interrupted rewrites of the log's files (names without the folder;
    its text index's with its own, `search/<name>.tix.tmp`)."""
    out = [log.rsplit("/", 1)[-1] + s for s in fmt_.LEFTOVERS if fsutil.exists(log + s)]
    t = fmt_.tix(log) + fmt_.TMP
    if fsutil.exists(t):
        from ..paths import INDEXES

        out.append(INDEXES + "/" + t.rsplit("/", 1)[-1])
    return out


def settle(log):
    """Settle leftovers of a compaction or repair (journal) or of an index or pending rewrite.

    A lone `.idx.tmp` whose index is gone is adopted when whole; a lone `.log.tmp` never is.
    A pending file rewritten by `Pending.settle` or `rebase_pending` and cut inside FAT's
    remove-then-rename is adopted when its header is whole."""
    fsutil.recover([log, log + fmt_.IDX, fmt_.tix(log)], journal=log + fmt_.COMMIT,
                   valid=fmt_.whole_index)
    fsutil.recover([log + fmt_.PEND], valid=fmt_.whole_pending)


def private(sessions):
    """Whether only this program writes the folder of `sessions` (littlefs, FAT: what an
    open found stays true until its own next write), asked once."""
    if sessions._private is None:
        import os

        sessions._private = False
        d = sessions.dir
        try:
            path = d if d.startswith("/") else os.getcwd() + "/" + d
            best = ""
            for fs, point in os.mount():  # (MicroPython 1.23+, as paths._mounted)
                point = point.rstrip("/")
                if len(point) >= len(best) and (path + "/").startswith(point + "/"):
                    best = point
                    sessions._private = type(fs).__name__ in ("VfsLfs1", "VfsLfs2", "VfsFat")
        except (AttributeError, TypeError):  # (CPython; older firmware: no list)
            pass
    return sessions._private


def open_state(log, limit, note, deep=False):
    """Settle leftovers and the pending file, analyse and repair; returns (State, Plan,
    Pending). `deep`: check every record and rewrite the log without its damage."""
    settle(log)
    pend = Pending(log, limit)
    p = list(pend.settle(note))
    plan = analyse(log, limit, deep)
    st = apply(log, plan, limit, rewrite=deep, pend=p)
    st.pend, st.pend_size, st.pend_file = p
    if deep and plan.log_damage():
        rebase_pending(log, st)
    return st, plan, pend


def verify(log, limit):
    """Sessions.verify's report: what `repair` would do."""
    rep = analyse(log, limit, deep=True).report()
    rep.update(Pending(log, limit).report())
    rep["leftovers"] = leftovers(log)
    return rep


def repair(log, limit, note):
    """Sessions.repair: (the repaired State, the report of what was done)."""
    left = leftovers(log)
    st, plan, pend = open_state(log, limit, note, deep=True)
    rep = plan.report()
    rep.update(pend.report())
    rep["leftovers"] = left
    return st, rep
