# claw_memory.store.digest: `memory_digest.log`, one tab-separated line per operation.
# MIT license
#
# Recall counts live here until compaction folds them into the records (recall never
# rewrites a record). Compaction rewrites the digest together with the records (one journal
# commit): its newest lines, then a `compact` line that marks where the next fold starts and
# carries next_summary_id, so neither is lost when memory_index.json is stale or absent.
# Recall lines go out at once (they are counts); the other operation lines are informational
# and are batched, written with the next recall, flush or compaction.

from array import array

from .. import fsutil
from .._compat import const

_LINE = const(256)  # ESP-Claw's digest line buffer
_KEEP = const(4096)  # a trimmed digest keeps its newest lines of at most this size
_CHUNK = const(2048)
_COMPACT = b"\tcompact\t"


def rows(now, items):
    """Digest lines of (action, id, extra) rows."""
    return "".join("%d\t%s\t%s%s\n" % (now, act, mid, "\t" + extra if extra else "")
                   for act, mid, extra in items).encode()


def append(path, data):
    """Append lines, starting a fresh line after a torn last one (a cut append): glued to
    it, the first new line would be unreadable, a recall it counts lost."""
    fsutil.append(path, b"\n" + data if fsutil.ends_torn(path) else data)


def compact_line(now, next_id):
    # ESP-Claw's line plus a fifth field (its reader splits at most 5 and ignores the rest).
    return ("%d\tcompact\t-\trebuild=index+markdown\tnext_summary_id=%d\n" % (now, next_id)).encode()


def last_compact(path, size):
    """(offset where the last compact line starts, its next_summary_id or 0); (0, 0) when
    the digest has none: recall lines from there on are not folded yet."""
    found = (0, 0)
    with open(path, "rb") as f:
        carry = b""
        pos = 0  # file offset of the chunk's first byte, always a line start
        while True:
            data = f.read(_CHUNK)
            if not data:
                break
            chunk = carry + data
            cut = chunk.rfind(b"\n") + 1
            at = chunk.rfind(_COMPACT, 0, cut)
            if at >= 0:
                start = chunk.rfind(b"\n", 0, at) + 1
                found = (pos + start, _next_id(chunk[start : chunk.find(b"\n", at)]))
            carry = chunk[cut:]
            pos += cut
            if len(carry) > _LINE * 4:  # not a digest line: skip it
                pos += len(carry)
                carry = b""
    return found


def _next_id(line):
    at = line.find(b"next_summary_id=")
    if at < 0:
        return 0
    num = line[at + 16 :].rstrip(b"\r").split(b"\t")[0]
    return int(num) if num.isdigit() and len(num) < 6 else 0


def fold(path, start, end, tab):
    """Per-slot (count, newest ts) of the recall lines in [start, end), for the slots of
    `tab` (a Table)."""
    n = len(tab)
    counts = array("H", bytes(2 * n))
    newest = array("I", bytes(4 * n))
    if start >= end:
        return counts, newest
    with open(path, "rb") as f:
        f.seek(start)
        pos = start
        while pos < end:
            line = f.readline(_LINE)
            if not line:
                break
            pos += len(line)
            fields = line.rstrip(b"\r\n").split(b"\t")
            if len(fields) < 4 or fields[1] != b"recall" or fields[3] != b"access_count+1":
                continue
            try:
                slot = tab.slot(fields[2].decode())
            except UnicodeError:
                continue
            if slot < 0:
                continue
            counts[slot] = min(counts[slot] + 1, 0xFFFF)
            if fields[0].isdigit() and len(fields[0]) <= 10:
                ts = min(int(fields[0]), 0xFFFFFFFF)
                if ts > newest[slot]:
                    newest[slot] = ts
    return counts, newest


def tail_writer(path, size, extra):
    """A writer of the digest's newest whole lines (at most 4 KiB), then `extra`."""

    def write(out):
        if size > 0:
            with open(path, "rb") as f:
                start = max(size - _KEEP, 0)
                f.seek(start)
                partial = start > 0  # the first line is cut: skip to its end
                left = size - start
                while left > 0:
                    chunk = f.read(min(left, 512))
                    if not chunk:
                        break
                    left -= len(chunk)
                    if partial:
                        k = chunk.find(b"\n")
                        if k < 0:
                            continue
                        chunk = chunk[k + 1 :]
                        partial = False
                    out.write(chunk)
        out.write(extra)

    return write
