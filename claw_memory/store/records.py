# claw_memory.store.records: reading the records journal (`memory_records.jsonl`).
# MIT license
#
# One JSON item per line; the last line of an id wins (ESP-Claw's event log). Nothing holds
# all items: a scan maps each id to the offset of its latest line, then items are read one
# at a time by offset.

from .. import item as itm
from .. import text
from .._compat import const

LINE_MAX = const(4096)


class Counter:
    """Counts lines that are not items (over-long or unparsable) during a scan."""

    def __init__(self):
        self.bad = 0


def lines(path, bad=None):
    """(offset, line) of each complete line; over-long lines and a torn last line are
    skipped (over-long ones counted in `bad`, a Counter)."""
    with open(path, "rb") as f:
        pos = 0
        while True:
            line = f.readline(LINE_MAX)
            n = len(line)
            if not n:
                return
            if line[-1] != 10:
                if n == LINE_MAX:
                    while line and line[-1] != 10:
                        line = f.readline(LINE_MAX)
                        n += len(line)
                    if bad is not None:
                        bad.bad += 1
                pos += n
                continue
            yield pos, line
            pos += n


def scan(path):
    """({id key: offset of the item's latest line}, number of lines that are not items)."""
    latest = {}
    bad = Counter()
    for off, line in lines(path, bad):
        it = itm.from_obj(text.json_value(line))
        if it is None:
            if line.strip():
                bad.bad += 1
            continue
        latest[itm.id_key(it["id"])] = off
    return latest, bad.bad


def items(path, latest, deleted=False):
    """(offset, item) of each current item in file order (`latest` None: every line)."""
    for off, line in lines(path):
        it = itm.from_obj(text.json_value(line))
        if it is None or (latest is not None and latest.get(itm.id_key(it["id"])) != off):
            continue
        if deleted or not it["deleted"]:
            yield off, it


def at(f, off):
    """The item on the line at `off` of an open records file, or None."""
    f.seek(off)
    return itm.from_obj(text.json_value(f.readline(LINE_MAX)))


def get(path, latest, memory_id):
    """The active item with that id, or None."""
    off = latest.get(itm.id_key(memory_id))
    if off is None:
        return None
    with open(path, "rb") as f:
        it = at(f, off)
    return None if it is None or it["deleted"] or it["id"] != memory_id else it
