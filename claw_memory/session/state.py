# claw_memory.session.state: what is known about one session, and reading its records.
# MIT license

from .. import text
from . import format as fmt_


class State:
    """A session after open/repair. Records live in three places, in order: indexed in the
    .idx file, appended to the log but not yet indexed (`lag`), and the unfinished turn in
    the pending file."""

    def __init__(self, log_size, count, end, torn, idx_size):
        self.log_size = log_size  # -1: no .log
        self.idx_size = idx_size  # -1: no .idx
        self.count = count  # entries in the .idx file
        self.end = end  # end offset of the last indexed record
        self.torn = torn  # bytes after the last complete line
        self.lag = bytearray()  # entries of logged records not yet in the .idx
        self.lag_turns = 0
        self.pend = 0  # records in the pending file
        self.pend_size = -1  # the size of its header and records, -1 when there is none
        # The pending file's size, -1 when there is none: more than pend_size when it was
        # rewritten in place over a longer one, >= 0 with pend_size -1 when it is stale (its
        # records logged; the next mid-turn persist rewrites it).
        self.pend_file = -1
        self.early = None  # summary lines of the oldest records (window.summary's cache)
        self.checked = None  # (first record, verdicts) of the last request: records checked
        self.done = False  # the pending records were just logged (after_turn marks the file stale)

    def records(self):
        return self.count + len(self.lag) // fmt_.ENT + self.pend


def each(log, st):
    """(offset, length, type, backend) of every logged record: indexed ones, then lag."""
    if st.count:
        with open(log + fmt_.IDX, "rb") as f:
            for i, off, ln, kind, fmt in fmt_.entries(f, st.count):
                yield off, ln, kind, fmt
    for j in range(0, len(st.lag), fmt_.ENT):
        yield fmt_.unpack(st.lag, j)


def pending(log, st, limit):
    """(type, backend, JSON bytes) of the unfinished turn's records."""
    if st.pend:
        yield from fmt_.pending_bodies(log + fmt_.PEND, st.pend, limit + 4)


def read(f, off, ln, limit):
    """Parsed record at (off, ln) of an open log, or None when it is damaged or longer than
    `limit` bytes of JSON."""
    if not 0 < ln <= limit + 1:
        return None
    f.seek(off)
    raw = f.read(ln)
    if len(raw) != ln or raw[-1] != 10:
        return None
    return text.json_value(raw)
