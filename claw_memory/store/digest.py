# claw_memory.store.digest: `memory_digest.log`, one tab-separated line per operation.
# MIT license
#
# Recall counts live here until compaction folds them into the records (recall never
# rewrites a record); compaction also trims the file to its newest lines.

from .. import fsutil
from .. import item as itm
from .._compat import const

_LINE = const(256)  # ESP-Claw's digest line buffer
_KEEP = const(4096)  # a trimmed digest keeps its newest lines of at most this size


def append(path, rows, now):
    """Append one line per (action, id, extra) row."""
    data = "".join("%d\t%s\t%s%s\n" % (now, act, mid, "\t" + extra if extra else "")
                   for act, mid, extra in rows)
    fsutil.append(path, data.encode())


def compact_line(now):
    return ("%d\tcompact\t-\trebuild=index+markdown\n" % now).encode()


def recall_deltas(path, start, end, latest):
    """{id key: [count, newest ts]} from the recall lines in [start, end) of ids in `latest`."""
    deltas = {}
    if start >= end:
        return deltas
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
                k = itm.id_key(fields[2].decode())
                ts = int(fields[0]) if fields[0].isdigit() else 0
            except ValueError:
                continue
            if k in latest:
                d = deltas.get(k)
                if d is None:
                    deltas[k] = [1, ts]
                else:
                    d[0] += 1
                    d[1] = max(d[1], ts)
    return deltas


def tail_writer(path, size, last_line):
    """A writer of the digest's newest whole lines (at most 4 KiB) plus `last_line`."""

    def write(out):
        with open(path, "rb") as f:
            f.seek(max(size - _KEEP, 0))
            if size > _KEEP:
                f.readline(_KEEP)  # skip the partial first line
            left = size - f.tell()
            while left > 0:
                chunk = f.read(min(left, 512))
                if not chunk:
                    break
                out.write(chunk)
                left -= len(chunk)
        out.write(last_line)

    return write
