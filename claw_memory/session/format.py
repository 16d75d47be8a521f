# claw_memory.session.format: file names and the byte layout of a session's files.
# MIT license
#
# This is the only module that knows the bytes. Files per session (names as ESP-Claw's):
#   `s_<safe>_<fnv1a32>.log`  one compact JSON record and "\n" per record
#   `.log.idx`                8-byte header `<IHH` (magic "CHDX", version 1, entry size 10),
#                             then one `<IIBB` entry per record: offset, length with "\n",
#                             type 1..4, backend format 0..3
#   `.log.blocked`            empty; marks a session over the size limit
#   `.log.pending` (ours)     "P <log size when the turn started>\n" (two sizes while a rewrite
#                             of the log commits), then one line per record
#                             of the unfinished turn: type digit, backend digit, JSON; a line
#                             starting with NUL ends it (what follows is an older turn's)
# docs/FORMAT.md has the details.

import struct

from .. import fsutil, text
from .._compat import EIO, const

_FMT = const("<IIBB")
HEADER = b"CHDX\x01\x00\x0a\x00"  # struct.pack("<IHH", 0x58444843, 1, 10)
HDR = const(8)
ENT = const(10)
# Pinned as ESP-Claw pins its packed structs: a change here breaks every index on a board.
assert struct.calcsize(_FMT) == ENT and struct.calcsize("<IHH") == HDR
assert struct.unpack("<IHH", HEADER) == (0x58444843, 1, 10)

# The files of a session, named by the log's name and a suffix (`s_..._<hash>.log.idx`):
IDX = ".idx"  # the index
PEND = ".pending"  # the unfinished turn
BLOCKED = ".blocked"  # the block marker
COMMIT = ".commit"  # the journal of a rewrite of the log and its index together
TMP = fsutil.TMP  # a file's next version while it is written (fsutil.replace, rewrites)
# Ours, derived or moved out of the log; ESP-Claw opens a session's files by name and never
# lists the folder, so it neither sees nor removes these:
ARC = ".arc"  # `<log>.arc<N>`: archive segment N, turns compaction moved out of the log
TIX = ".tix"  # a text index (session/tix.py) of a log or segment: `tix(path)`
# The text indexes live in a folder of their own beside the sessions folder (paths.INDEXES,
# which the data root's Layout makes): littlefs finds a name by reading its folder's metadata,
# which every append to a log lengthens, and a query opens an index per file in its scope
# (docs/DESIGN.md, history search).
IDX_TMP = IDX + TMP
PEND_TMP = PEND + TMP
# What interrupted rewrites leave beside the log, journal first:
LEFTOVERS = (COMMIT, TMP, IDX_TMP, PEND_TMP)
DELETING = ".deleting"  # in the sessions folder: the journal of a deletion (the log's name)
ARCHIVING = ".archiving"  # in the sessions folder: the commit of a compaction into the archive
CATALOG = "archive.list"  # in the sessions folder: the archive segments of the data root
CLOSER = b"\x00\n"  # ends a torn tail before the next append: NUL is never valid JSON
PEND_END = b"\x00"  # ends a pending file rewritten in place over a longer, older one
_CHUNK = const(64)  # index entries read per chunk
_SAFE_MAX = const(24)
_ID_MAX = const(512)
_PEND_HEAD = const(24)
_PIECE = const(1024)  # bytes a line is read by
_KEY_MASK = const(0x3FFFFFFF)


def id_bytes(session_id, allow_empty=False):
    """The session id as bytes; ValueError for a non-text, empty or over-long id."""
    if isinstance(session_id, str):
        b = text.to_bytes(session_id)
    elif isinstance(session_id, (bytes, bytearray)):
        b = bytes(session_id)
    else:
        raise ValueError("session id must be text")
    if not b and not allow_empty:
        raise ValueError("session id is empty")
    if len(b) > _ID_MAX:
        raise ValueError("session id longer than %d bytes" % _ID_MAX)
    return b


def file_name(session_id):
    """`s_<safe>_<fnv1a32 hex>.log` exactly as ESP-Claw names a session's history."""
    b = id_bytes(session_id, allow_empty=True)
    safe = bytearray()
    for c in b[:_SAFE_MAX]:
        ok = 48 <= c <= 57 or 65 <= c <= 90 or 97 <= c <= 122 or c in (45, 95)
        safe.append(c if ok else 95)
    return "s_%s_%08x.log" % (safe.decode() if safe else "default", text.fnv1a32(b))


def is_log_name(name):
    """Whether `name` (no folder) is a session log's file name."""
    return "/" not in name and name.startswith("s_") and name.endswith(".log")


def index_dir(directory):
    """The folder of the text indexes of the sessions folder `directory`: its sibling
    `search` (`<root>/sessions` -> `<root>/search`)."""
    from ..paths import INDEXES  # (not a global: each costs the frozen firmware's heap)

    up, sep, _ = directory.rstrip("/").rpartition("/")
    return up + sep + INDEXES


def tix(path, every=False):
    """The text index of the log or segment `path`: `<root>/search/<its name>.tix`; with
    `every`, each name it may have, rewrites first: in its folder, and beside `path` (where
    builds before the folder kept it: moved at its next use)."""
    d, _, name = path.rpartition("/")
    t = index_dir(d) + "/" + name + TIX
    return (t + TMP, t, path + TIX + TMP, path + TIX) if every else t


def segment_of(name):
    """(log name, N) of an archive segment's file name `<log>.arc<N>`, else None."""
    log, sep, n = name.rpartition(ARC)
    if sep and n.isdigit() and is_log_name(log):
        return log, int(n)
    return None


def name_key(log):
    """A session file's name (of a path) as a small int (30 bits: no big int on a 32-bit
    chip), for a set of names that costs a word each. (A name that is not UTF-8, as CPython
    lists it with surrogates, has a key too.)"""
    return text.fnv1a32(text.to_bytes(log.rsplit("/", 1)[-1])) & _KEY_MASK


# -- index ------------------------------------------------------------------------------


def entry(off, ln, kind, fmt):
    """One 10-byte index entry."""
    return struct.pack(_FMT, off, ln, kind, fmt)


def unpack(buf, at=0):
    """(offset, length, type, backend) of the entry at buf[at:]."""
    return struct.unpack_from(_FMT, buf, at)


def entry_count(idx_size):
    return (idx_size - HDR) // ENT


def entries(f, count, start=0):
    """Yield (i, offset, length, type, backend) of entries start..count-1 of an open .idx."""
    buf = bytearray(ENT * _CHUNK)
    f.seek(HDR + ENT * start)
    i = start
    while i < count:
        k = min(_CHUNK, count - i)
        if f.readinto(memoryview(buf)[: k * ENT]) != k * ENT:
            raise OSError(EIO, "session index shrank while reading")
        for j in range(k):
            off, ln, t, fmt = struct.unpack_from(_FMT, buf, j * ENT)
            yield i, off, ln, t, fmt
            i += 1


def entries_back(f, count):
    """Yield (i, offset, length, type, backend) of entries count-1..0 of an open .idx."""
    buf = bytearray(ENT * _CHUNK)
    i = count
    while i > 0:
        k = min(_CHUNK, i)
        i -= k
        f.seek(HDR + ENT * i)
        if f.readinto(memoryview(buf)[: k * ENT]) != k * ENT:
            raise OSError(EIO, "session index shrank while reading")
        for j in range(k - 1, -1, -1):
            off, ln, t, fmt = struct.unpack_from(_FMT, buf, j * ENT)
            yield i + j, off, ln, t, fmt


def entry_at(f, i):
    """(offset, length) of entry i of an open .idx."""
    f.seek(HDR + ENT * i)
    return struct.unpack("<II", f.read(8))


def valid_entry(t, fmt, ln):
    return 1 <= t <= 4 and fmt <= 3 and ln > 0


def whole_index(path):
    """Whether an `.idx.tmp` left by a cut is a complete index (header and whole entries)."""
    if not path.endswith(IDX_TMP):
        return False
    n = fsutil.size(path)
    if n < HDR or (n - HDR) % ENT:
        return False
    with open(path, "rb") as f:
        return f.read(HDR) == HEADER


# -- pending file -----------------------------------------------------------------------


def pending_head(log_size, new_size=-1):
    """The header line; with `new_size`, of a rewrite of the log about to commit: its records
    are pending whichever of the two logs a power cut leaves."""
    if new_size < 0:
        return b"P %d\n" % log_size
    return b"P %d %d\n" % (log_size, new_size)


def pending_start(head):
    """The log offsets in a pending file's first line (one, or the old and the new log's
    sizes around a rewrite), or None when the line is not whole."""
    if not (head.startswith(b"P ") and head.endswith(b"\n")):
        return None
    sizes = head[2:-1].split(b" ")
    if len(sizes) > 2 or not all(n.isdigit() for n in sizes):
        return None
    return tuple(int(n) for n in sizes)


def read_pending_head(f):
    return pending_start(f.readline(_PEND_HEAD))


def pending_line(kind, fmt, body):
    return b"%d%d" % (kind, fmt) + body + b"\n"


def _kind(first):
    """(type, backend) of a pending line's 2-digit prefix (in its first piece), or None."""
    if len(first) > 1 and 49 <= first[0] <= 52 and 48 <= first[1] <= 51:
        return first[0] - 48, first[1] - 48
    return None


def whole_pending(path):
    with open(path, "rb") as f:
        return read_pending_head(f) is not None


def next_line(f, end=-1):
    """(length, ends with a newline, first piece) of the line at f's position, up to `end`
    (-1: the file's end), read in pieces of _PIECE bytes (MicroPython's readline(n) reserves
    n bytes, whatever the line's size); f is left after the line. The first piece is the
    whole line when it is as long as the line."""
    pos = f.tell()
    n = 0
    head = None
    while end < 0 or pos + n < end:
        piece = f.readline(_PIECE if end < 0 else min(_PIECE, end - pos - n))
        if head is None:
            head = piece
        if not piece:
            break
        n += len(piece)
        if piece[-1] == 10:
            return n, True, head
    return n, False, head or b""


def line_bytes(f, off, n, head):
    """The bytes of the n-byte line at `off` (`head`: its first piece, from next_line)."""
    if len(head) == n:
        return head
    f.seek(off)
    raw = f.read(n)
    if len(raw) != n:
        raise OSError(EIO, "session file changed while reading")
    return raw


def pending_records(f, valid=None):
    """[(type, backend, offset, line length)] of the whole records of a pending file open
    for reading at its start, how many lines it holds that are none (garbage, `valid(f,
    offset, length, first piece)` false for the JSON after the prefix, or a torn last line),
    its header's log offsets (pending_start's; None: header unusable) and where its whole
    lines end. Lines of any length are records."""
    recs = []
    bad = 0
    head = f.readline(_PEND_HEAD)
    l0 = pending_start(head)
    if l0 is None:
        return recs, 1, None, 0
    pos = len(head)
    while True:
        n, nl, first = next_line(f)
        if not n or first[0] == 0:
            break  # the end, or the end mark of an in-place rewrite (PEND_END)
        if not nl:
            bad += 1  # cut while appending: that persist was not acknowledged
            break
        rec = _kind(first) if n > 3 else None
        if rec and (valid is None or valid(f, pos + 2, n - 2, first[2:])):
            recs.append((rec[0], rec[1], pos, n))
        else:
            bad += 1  # garbage: rewrite the file without it
        pos += n
        f.seek(pos)
    return recs, bad, l0, pos


def pending_bodies(f, count):
    """(type, backend, JSON bytes) of the first `count` records of a pending file open for
    reading at its start."""
    pos = len(f.readline(_PEND_HEAD))
    for _ in range(count):
        n, nl, first = next_line(f)
        rec = _kind(first) if nl and n > 3 else None
        if rec is None:
            raise OSError(EIO, "pending file changed while reading")
        yield rec[0], rec[1], line_bytes(f, pos, n, first)[2:-1]
        pos += n
        f.seek(pos)
