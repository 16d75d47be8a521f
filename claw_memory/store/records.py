# claw_memory.store.records: reading the records journal (`memory_records.jsonl`).
# MIT license
#
# One JSON item per line; the last line of an id wins (ESP-Claw's event log). Lines are read
# through one reusable buffer (a line is handed out as a memoryview of it, valid until the
# next one), never with readline(n), which reserves n bytes per call; nothing holds all
# items.

from .. import item as itm
from .. import jsonraw, text
from .._compat import MICROPYTHON, const

LINE_MAX = const(4096)  # longer lines are not items (ours are under 1 KiB, ESP-Claw's too)
_BUF = const(1024)


def lines(path, start=0):
    """(offset, line) of each complete line from `start`: a memoryview of the line with its
    newline, valid until the next step, or None for a line longer than LINE_MAX. A last
    line without its newline (a torn append) is not handed out."""
    buf = bytearray(_BUF)
    with open(path, "rb") as f:
        f.seek(start)
        base = start  # file offset of buf[0]
        have = 0
        skip = -1  # start of an over-long line whose bytes are being dropped
        while True:
            n = f.readinto(memoryview(buf)[have:])
            if not n:
                return
            have += n
            i = 0
            while True:
                j = buf.find(b"\n", i, have)
                if j < 0:
                    break
                if skip >= 0:
                    yield skip, None
                    skip = -1
                else:
                    yield base + i, memoryview(buf)[i : j + 1]
                i = j + 1
            if i:
                buf[: have - i] = buf[i:have]
                base += i
                have -= i
            if have == len(buf):
                if len(buf) < LINE_MAX:
                    grown = bytearray(len(buf) * 2)
                    grown[:have] = buf
                    buf = grown
                else:
                    if skip < 0:
                        skip = base
                    base += have
                    have = 0


def count_lines(path):
    """Newlines in a file (an upper bound of its items), counted without parsing."""
    n = 0
    buf = bytearray(_BUF)
    with open(path, "rb") as f:
        while True:
            k = f.readinto(buf)
            if not k:
                return n
            n += bytes(buf[:k]).count(b"\n") if k < _BUF else buf.count(b"\n")


# A line's kind, as bits:
COMPACTED = const(1)  # written by a compaction (it carries "summary_labels")
EVICTED = const(2)  # the tombstone of an item dropped for capacity ("evicted":true)
UNDO = const(4)  # written by an undo (its change mark names the change it reverts)
NO_CHANGE = const(5)  # COMPACTED | UNDO: lines the compaction trigger does not count


def parse(raw, off):
    """(item or None, kind) of a records line (bytes or memoryview) at offset `off`; kind:
    0 for a change, else bits of COMPACTED, EVICTED, UNDO."""
    if off == 0 and bytes(raw[:3]) == b"\xef\xbb\xbf":
        raw = raw[3:]  # a UTF-8 BOM, as ESP-Claw's cJSON accepts it
    if not MICROPYTHON and isinstance(raw, memoryview):
        raw = bytes(raw)  # CPython's json takes no memoryview (MicroPython's does: no copy)
    obj = jsonraw.json_value(raw)
    if obj is None:
        # ESP-Claw cuts a field at a byte count and may split a character (docs/DESIGN.md,
        # deliberate difference 4): the line is read with the split bytes dropped, not lost
        clean = text.clean_bytes(raw)
        if len(clean) < len(raw):
            raw = clean
            obj = jsonraw.json_value(raw)
        if obj is None:  # (rarer: text after the item, which ESP-Claw's cJSON_Parse ignores)
            obj = jsonraw.json_value(raw, True)
    it = itm.from_obj(obj, raw)
    if it is None:
        return None, 0
    if "summary_labels" in obj:
        return it, COMPACTED
    kind = EVICTED if it["deleted"] and obj.get("evicted") is True else 0
    return it, kind | UNDO if it["chg"] is not None and "u" in it["chg"] else kind


def line_at(f, off):
    """The line at `off` of an open records file with its newline (bytes), or None (torn,
    or longer than LINE_MAX)."""
    f.seek(off)
    n = 0
    while n < LINE_MAX:
        chunk = f.read(256)
        if not chunk:
            return None  # no newline: a torn line is not an item
        k = chunk.find(b"\n")
        if k >= 0:
            if not n:
                return chunk[: k + 1]
            # (read again whole: one allocation of the line's size, not a copy per piece,
            # which at capacity left no free run for the last one)
            n += k + 1
            chunk = None
            f.seek(off)
            return f.read(n)
        n += len(chunk)
    return None


def item_at(f, off):
    """The item on the line at `off` of an open records file, or None."""
    raw = line_at(f, off)
    return None if raw is None else parse(raw, off)[0]


def read_item(path, off):
    """The item on the line at `off` of the records file, or None."""
    with open(path, "rb") as f:
        return item_at(f, off)
