# claw_memory.session.repair: analyse a session's files, plan and apply repairs, settle
# the pending file and the leftovers of interrupted rewrites.
# MIT license
#
# Repair instead of wipe (ESP-Claw recreates a session on any mismatch): a torn tail is
# ignored, bad or dangling index entries are dropped, complete records the index lacks are
# re-indexed from the log, and the pending file is reconciled with the log.

from .. import fsutil, text
from ..messages import classify
from . import format as fmt_
from .state import State, read


class Plan:
    """What open/repair found and would change."""

    def __init__(self):
        self.log_size = -1
        self.idx_size = -1
        self.prefix = 0  # leading index entries kept as they are
        self.drop = None  # set of entry numbers < prefix to drop (deep check only)
        self.end = 0
        self.tail = bytearray()  # entries re-indexed from the log
        self.torn = 0
        self.dropped = 0  # unparsable records skipped
        self.idx_dropped = 0  # index entries discarded
        self.rebuilt = False  # index header was bad: rebuilt from the log

    def changes(self):
        return self.dropped or self.idx_dropped or self.torn or self.tail or self.rebuilt

    def report(self):
        return {
            "records": self.prefix - len(self.drop or ()) + len(self.tail) // fmt_.ENT,
            "reindexed": len(self.tail) // fmt_.ENT,
            "dropped": self.dropped + len(self.drop or ()),
            "index_entries_dropped": self.idx_dropped,
            "torn_tail_bytes": self.torn,
            "rebuilt_index": self.rebuilt,
        }


def analyse(log, limit, deep=False):
    """A Plan for the session's .log/.idx (`deep`: also parse every indexed record)."""
    idx = log + ".idx"
    for p in (log, idx, log + fmt_.PEND):
        if fsutil.is_dir(p):
            raise OSError(21, "session file is a directory: " + p)
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
    if plan.log_size > plan.end:
        _scan_tail(log, plan, limit)
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
    """Entries whose record is not one JSON record line (records over the replay bound are
    only checked for their newline: they are not damaged, just not replayed)."""
    bad = set()
    with open(idx, "rb") as f, open(log, "rb") as lf:
        for i, off, ln, t, fmt in fmt_.entries(f, count):
            if ln > limit + 1:
                lf.seek(off + ln - 1)
                if lf.read(1) != b"\n":
                    bad.add(i)
            elif not classify(read(lf, off, ln, limit))[0]:
                bad.add(i)
    return bad


def _scan_tail(log, plan, limit):
    """Index the complete records between the last indexed one and the end of the log."""
    limit += 1
    pos = plan.end
    with open(log, "rb") as f:
        f.seek(pos)
        while pos < plan.log_size:
            line = f.readline(limit)
            n = len(line)
            if not n:
                break
            if line[-1] != 10:
                if pos + n >= plan.log_size:
                    plan.torn = n  # a record cut by a power loss: ignored
                    break
                while line and line[-1] != 10:  # over-long line: skip it whole
                    line = f.readline(limit)
                    n += len(line)
                if pos + n >= plan.log_size and (not line or line[-1] != 10):
                    plan.torn = n  # it runs to the end of the log: a torn tail
                    break
                plan.dropped += 1
                pos += n
                continue
            kind, fmt = classify(text.json_value(line))
            if kind:
                plan.tail += fmt_.entry(pos, n, kind, fmt)
            elif line.strip():
                plan.dropped += 1
            pos += n


def apply(log, plan):
    """Write what `analyse` planned; returns the resulting State."""
    idx = log + ".idx"
    if plan.log_size < 0:
        if plan.idx_size >= 0:
            fsutil.remove(idx)  # an index without its log describes nothing
        return State(-1, 0, 0, 0, -1)
    kept = plan.prefix - len(plan.drop or ())
    tail_n = len(plan.tail) // fmt_.ENT
    exact = plan.idx_size == fmt_.HDR + fmt_.ENT * plan.prefix
    if plan.rebuilt or plan.drop or not exact:

        def write(out):
            out.write(fmt_.HEADER)
            if plan.prefix:
                with open(idx, "rb") as f:
                    fmt_.copy_entries(f, out, plan.prefix, plan.drop)
            out.write(plan.tail)

        fsutil.replace(idx, write)
    elif tail_n:
        fsutil.append(idx, plan.tail)
    end = plan.end
    if tail_n:
        off, ln, _, _ = fmt_.unpack(plan.tail, len(plan.tail) - fmt_.ENT)
        end = off + ln
    return State(plan.log_size, kept + tail_n, end, plan.torn, fsutil.size(idx))


def settle(log):
    """Settle leftovers of a compaction (journal) or of an index or pending rewrite.

    A lone `.idx.tmp` whose index is gone is adopted when whole; a lone `.log.tmp` never is.
    A pending file rewritten by `settle_pending` and cut inside FAT's remove-then-rename is
    adopted when its header is whole."""
    fsutil.recover([log, log + ".idx"], journal=log + ".commit", valid=fmt_.whole_index)
    fsutil.recover([log + fmt_.PEND], valid=fmt_.whole_pending)


def settle_pending(log, limit, note):
    """Reconcile the pending file with the log after a power cut; returns (records, size).

    The pending file's header holds the log size when the turn started, where the completing
    append begins. If that append reached the log (wholly or in part), the records found
    there complete are dropped from the pending file, so that nothing is both logged and
    pending; a torn last pending line (an unacknowledged persist) is dropped too."""
    pend = log + fmt_.PEND
    if fsutil.size(pend) < 0:
        return 0, -1
    recs, torn, l0 = fmt_.pending_records(pend, limit + 4)
    log_size = max(fsutil.size(log), 0)
    if l0 is None:
        fsutil.remove(pend)
        note("%s: unreadable pending file removed" % pend)
        return 0, -1
    done = 0
    if log_size > l0 and recs:
        done = _logged(log, pend, l0, log_size, recs)
    if done == len(recs):
        fsutil.remove(pend)
        return 0, -1
    if done or torn or log_size != l0:

        def write(out):
            out.write(fmt_.pending_head(log_size))
            with open(pend, "rb") as f:
                for k, fmt, off, ln in recs[done:]:
                    f.seek(off)
                    out.write(f.read(ln))

        fsutil.replace(pend, write)
    return len(recs) - done, fsutil.size(pend)


def _logged(log, pend, l0, log_size, recs):
    """How many leading pending records the log holds complete from offset l0."""
    done = 0
    with open(log, "rb") as lf, open(pend, "rb") as pf:
        pos = l0
        lf.seek(pos)
        head = lf.read(len(fmt_.CLOSER))
        if head == fmt_.CLOSER:
            pos += len(fmt_.CLOSER)  # what closed a torn tail before the append
        elif head[:1] == b"\n":
            pos += 1
        for k, fmt, off, ln in recs:
            body = ln - 3  # the JSON without the 2-digit prefix and the newline
            if pos + body > log_size:
                break
            pf.seek(off + 2)
            lf.seek(pos)
            if lf.read(body) != pf.read(body):
                break
            if lf.read(1) != b"\n":
                break  # without its newline the record is a torn tail, not logged
            pos += body + 1
            done += 1
    return done


def open_state(log, limit, note, deep=False):
    """Settle leftovers and the pending file, analyse and repair; returns (State, Plan)."""
    settle(log)
    pend, pend_size = settle_pending(log, limit, note)
    plan = analyse(log, limit, deep)
    st = apply(log, plan)
    st.pend, st.pend_size = pend, pend_size
    return st, plan
