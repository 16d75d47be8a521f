# claw_memory.session.pending: the pending file (the unfinished turn) on open: what is wrong
# with it, settling it against the log, and its header after a rewrite of the log.
# MIT license
#
# The turn's completing append copies the pending records to the log and leaves the pending
# file as it is: its records are then in both, recognised by the header's log size (where the
# append started) and the log's bytes there, so the file needs no write to become stale (a
# write would cost as much as the append: FAT writes a data and a directory sector for each).
# The next turn's first persist rewrites it from its start (write.append_pending); the next
# open and close() remove a stale one, a compaction first empties it (write.clear_stale).

from .. import fsutil
from . import format as fmt_
from .state import kind


class Pending:
    """What is wrong with a pending file: `records` whole ones, `dropped` torn or garbage
    lines, `logged` leading records the log already holds, `superseded` records of a turn
    the log moved past, `unreadable` header; `rewrite`: its header names another log size.
    A file whose records are all logged and that holds nothing else is stale, as every
    completed turn leaves it: no damage."""

    def __init__(self, log, limit):
        self.path = log + fmt_.PEND
        self.records = self.dropped = self.logged = self.superseded = 0
        self.unreadable = self.rewrite = False
        self.recs = None
        if fsutil.size(self.path) < 0:
            return
        def chat_record(f, off, ln, first):
            return kind(f, off, ln, limit, first)[0] != 0

        with open(self.path, "rb") as f:
            recs, torn, starts, self.end = fmt_.pending_records(f, chat_record)
        if starts is None:
            self.unreadable = True
            return
        self.recs = recs
        self.dropped = torn
        found = fsutil.size(log)
        log_size = max(found, 0)
        # Two sizes: a rewrite of the log was committing; the log a cut left is one of them.
        l0 = log_size if log_size in starts else starts[-1]
        if recs and log_size > l0:
            self.logged, pos = _logged(log, self.path, l0, log_size, recs)
            if self.logged < len(recs) and _indexed_from(log, pos):
                self.superseded = len(recs) - self.logged
        elif recs and log_size < l0 and found:
            # (gone, or made again: superseded; emptied, as a damaged FAT leaves a file, it
            # holds nothing else: the turn is still the newest thing said)
            self.superseded = len(recs)
        self.records = len(recs) - self.logged - self.superseded
        self.log_size = log_size
        self.rewrite = bool(self.logged or torn or starts != (log_size,))

    def report(self):
        return {"pending": self.records, "pending_dropped": self.dropped,
                "pending_logged": self.logged if self.records else 0,
                "pending_superseded": self.superseded, "pending_unreadable": self.unreadable}

    def problems(self):
        return self.dropped or (self.logged and self.records) or self.superseded or self.unreadable

    def settle(self, note):
        """Reconcile the pending file with the log; returns (records, size of its records,
        size of the file), sizes -1 when it is gone."""
        pend = self.path
        if self.unreadable:
            fsutil.remove(pend)
            note("%s: unreadable pending file removed" % pend)
            return 0, -1, -1
        if self.recs is None:
            return 0, -1, -1
        if self.superseded:
            # The log was written without this turn after it began: ESP-Claw's firmware took
            # the session on (its turns follow the turn's start), rewrote it, or deleted it
            # and perhaps made a new one under its name. Appended now, the turn would come
            # after those turns, or into another conversation.
            note("%s: the unfinished turn dropped (records: %d): the log was written "
                 "without it (by ESP-Claw's firmware)" % (pend, self.superseded))
        if not self.records:
            fsutil.remove(pend)  # stale (every record logged), or superseded
            return 0, -1, -1
        if self.rewrite:
            recs = self.recs[self.logged :]

            def write(out):
                out.write(fmt_.pending_head(self.log_size))
                with open(pend, "rb") as f:
                    for k, fmt, off, ln in recs:
                        out.copy(f, off, ln)

            fsutil.replace(pend, write)
            return self.records, fsutil.size(pend), fsutil.size(pend)
        return self.records, self.end, fsutil.size(pend)


def _logged(log, pend, l0, log_size, recs):
    """(how many leading pending records the log holds complete from offset l0, where they
    end in the log)."""
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
    return done, pos


def _indexed_from(log, pos):
    """Whether the log's index names a record at `pos` or later: a whole record someone
    appended after the turn began (a cut append leaves bytes no index names, whatever
    they hold: on FAT, a reused cluster's old records)."""
    f = fsutil.open_existing(log + fmt_.IDX)
    if f is None:
        return False
    with f:
        n = fmt_.entry_count(f.seek(0, 2))
        return n > 0 and fmt_.entry_at(f, n - 1)[0] >= pos


def bridge(log, end, old, new):
    """Before a rewrite of the log commits with a turn pending (records up to `end` in the
    pending file): the header names the old and the new log's sizes, so the turn is pending
    in whichever of them a power cut leaves; rebase_pending then names the new one alone.
    Returns the file's new size."""
    return _rehead(log + fmt_.PEND, fmt_.pending_head(old, new), end)


def _rehead(pend, head, end):
    # The pending file written again with the header `head` and its records (up to `end`,
    # not a stale rest after them); its new size.
    def write(out):
        out.write(head)
        with open(pend, "rb") as f:
            fmt_.read_pending_head(f)
            at = f.tell()
            out.copy(f, at, end - at)

    fsutil.replace(pend, write)
    return fsutil.size(pend)


def rebase_pending(log, st):
    """After a rewrite of the log: the pending file's header names the new log size, where
    the turn's completing append will start (a cut there is recognised by it)."""
    pend = log + fmt_.PEND
    if st.pend_size < 0:
        return
    with open(pend, "rb") as f:
        if fmt_.read_pending_head(f) == (max(st.log_size, 0),):
            return
    st.pend_size = st.pend_file = _rehead(pend, fmt_.pending_head(max(st.log_size, 0)), st.pend_size)
