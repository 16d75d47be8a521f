# claw_memory.session.archive: the turns compaction moves out of a log, kept searchable and
# pageable in archive segments, within a bound for the whole data root.
# MIT license
#
# A compaction that drops whole turns writes them, byte for byte as they were in the log (its
# first `cut` bytes), to a new segment `<log>.arc<N>` with its text index `<log>.arc<N>.tix`;
# N numbers the segments of the data root in the order they were made. The catalog
# `sessions/archive.list` names every segment (docs/FORMAT.md): a segment it does not list
# as live is not there. A compaction first writes the journal `sessions/.archiving` naming
# the log and N, then the segment and its text index under their own names and every other
# new file as `.tmp` (the new log, its index and text index, the catalog), then appends
# `commit` to the journal: the commit point. Whoever finds the journal (`settle`, on a
# Sessions' first use) finishes the renames after a commit, or removes what was written
# before it. So a turn is in the log or in the archive, never in both or neither, across a
# power cut; and no rename can lose a segment (on FAT a cut inside a rename may lose both
# names).
#
# A segment belongs to its log as long as the log is the one it was cut from: the catalog
# keeps the head print of that log (head_print; a rewrite of the log by this library names
# the new head before it commits: `own`), and live() leaves out a segment whose log has
# another (session/heads.py).
#
# The bound: when the live segments pass `limit` bytes, the oldest are marked dead in the
# catalog written by that compaction and then removed; a dead entry whose files are gone is
# left out of the next catalog written. A session's deletion marks its segments dead first
# (under the deletion journal), so that a cut never leaves a segment no catalog names.

import os
from array import array

from .. import fsutil, text
from .._compat import const
from ..core import FINAL, USER
from . import format as fmt_

CATALOG = fmt_.CATALOG
JOURNAL = fmt_.ARCHIVING
_HEAD = b"CARC 1\n"
_COMMIT = b"commit\n"
_LINE_MAX = const(160)
_PRINT_BYTES = const(256)  # of each record a head print hashes
_PRINT_ENTRIES = const(32)  # index entries looked through for the first answer
_HEX = b"0123456789abcdef"


def seg_path(directory, log_name, seq):
    return "%s/%s%s%d" % (directory, log_name, fmt_.ARC, seq)


def read(directory):
    """[[seq, size, time, log name, live, prints]] of the catalog, in its order (oldest
    first; `prints`: the head prints of the log they belong to, () in a line without);
    [] when there is none. Damaged lines are skipped (their segments are then not listed)."""
    return list(_entries(directory))


def _entries(directory):
    f = fsutil.open_existing(directory + "/" + CATALOG)
    if f is None:
        return
    with f:
        if f.read(len(_HEAD)) != _HEAD:
            return
        while True:
            n, nl, first = fmt_.next_line(f)
            if not n:
                return
            if nl and n <= _LINE_MAX:
                e = _parse(first)
                if e is not None:
                    yield e


def live(directory, names=None, owns=None):
    """{log name: array of seq, size, seq, size, ...} of the live segments of the logs in
    `names` (None: every log), oldest first; `owns(name, prints)` false: a log that is no
    longer theirs (left out). Read line by line and kept as numbers: a data root's catalog
    may name hundreds of segments, and a search of one chat needs only its own (a list per
    entry would hold ~120 bytes each)."""
    out = {}
    for e in _entries(directory):
        if e[4] and (names is None or e[3] in names) and (
                owns is None or not e[5] or owns(e[3], e[5], e[0])):
            a = out.get(e[3])
            if a is None:
                a = out[e[3]] = array("I")
            a.append(e[0])
            a.append(e[1])
    return out


def _parse(line):
    parts = line[:-1].split(b" ")
    if not 4 <= len(parts) <= 5:
        return None
    seq, size, t, name = parts[:4]
    live = not seq.startswith(b"-")
    seq = seq.lstrip(b"-")
    if not (seq.isdigit() and size.isdigit() and t.isdigit()):
        return None
    prints = parts[4].split(b",") if len(parts) == 5 else ()
    if len(prints) > 2 or not all(len(p) == 8 and all(c in _HEX for c in p) for p in prints):
        return None
    try:
        name = name.decode()
    except UnicodeError:
        return None
    if not fmt_.is_log_name(name):
        return None
    prints = tuple(int(p, 16) for p in prints)
    return [int(seq), int(size), int(t), name, live, prints]


def encode(directory, entries):
    """The catalog's bytes; dead entries whose segment is already gone are left out."""
    out = bytearray(_HEAD)
    for seq, size, t, name, live, prints in entries:
        if live or fsutil.exists(seg_path(directory, name, seq)):
            out += b"%s%d %d %d %s" % (b"" if live else b"-", seq, size, t, name.encode())
            out += b"".join(b"%s%08x" % (b"," if i else b" ", p) for i, p in enumerate(prints))
            out += b"\n"
    return bytes(out)


def segments(directory, log_name, owns=None):
    """[(seq, path, size)] of a log's live segments, oldest first (`owns`: as live's)."""
    a = live(directory, (log_name,), owns).get(log_name, ())
    return [(a[i], seg_path(directory, log_name, a[i]), a[i + 1]) for i in range(0, len(a), 2)]


def head_print(log, idx=None):
    """The print of a log's head, 32 bits: in the high half the 32-bit FNV-1a of its first
    user or final record, in the low half that of its first final record (an answer), 0 when
    there is none among its first entries yet; each over the record's length and first bytes.
    0 for a missing log; None when it cannot be told (an empty log, an index (`idx`, default
    `<log>.idx`) that names no such record, a head record whose bytes are damaged)."""
    n = fsutil.size(log)
    if n < 0:
        return 0
    f = fsutil.open_existing(idx or log + fmt_.IDX) if n else None
    if f is None:
        return None
    heads = []
    with f:
        count = fmt_.entry_count(f.seek(0, 2))
        f.seek(0)
        if f.read(fmt_.HDR) != fmt_.HEADER or count <= 0:
            return None
        for i, off, ln, t, b in fmt_.entries(f, min(count, _PRINT_ENTRIES)):
            if t == FINAL or (t == USER and not heads):
                heads.append((off, ln))
                if t == FINAL:
                    if len(heads) == 1:
                        heads.append((off, ln))  # (the first record is the answer: both halves)
                    break
    if not heads:
        return None
    out = 0
    with open(log, "rb") as lf:
        for i, (off, ln) in enumerate(heads):
            if off + ln > n or ln < 3:
                return None
            lf.seek(off)
            raw = lf.read(min(ln, _PRINT_BYTES))
            if not _sound(lf, off, ln, raw):
                return None
            h = text.fnv1a32(b"%d:" % ln + raw)
            out |= ((h >> 16 ^ h) & 0xFFFF or 1) << (16 if i == 0 else 0)
    return out


def _sound(lf, off, ln, raw):
    # Whether a head record's bytes look like one JSON object on a line: "{" first, "}" and the
    # newline last, and none of its first bytes one that such a line never holds (a control
    # byte, or one UTF-8 never uses: what zeroed, erased or torn flash leaves). A damaged head
    # cannot be told: a print read from it would take the log for another and its archive
    # would be removed as a deleted session's.
    if raw[0] != 0x7B:
        return False
    for i in range(min(len(raw), ln - 1)):  # (not the newline)
        c = raw[i]
        if (c < 0x20 and c != 9) or c == 0xC0 or c == 0xC1 or c > 0xF4:
            return False
    if len(raw) == ln:  # (the whole record read: its end too)
        return raw[-2:] == b"}\n"
    lf.seek(off + ln - 2)
    return lf.read(2) == b"}\n"


def own(log):
    """Before a rewrite of `log` commits (its `.tmp` and `.idx.tmp` written): its segments'
    entries name the head prints of the log on flash and of the new one, so that a power cut
    or a failure on either side of the commit leaves them their log's (the next compaction
    into the archive keeps the new one alone); when either cannot be told, they name none."""
    directory, name = log.rsplit("/", 1)
    entries = read(directory)
    mine = [e for e in entries if e[3] == name and e[5]]
    if not mine:
        return
    new = head_print(log + fmt_.TMP, log + fmt_.IDX_TMP)
    cur = head_print(log)  # (the log on flash: a rewrite that failed before left it as it was)
    both = () if new is None or cur is None else (cur, new) if cur != new else (new,)
    if all(e[5] == both for e in mine):
        return
    for e in mine:
        e[5] = both
    write_catalog(directory, entries)


def plan(directory, log_name, size, limit, now=0, prints=()):
    """The catalog entries after a new segment of `size` bytes of `log_name`, whose new log
    has the head print `prints` (all the log's segments then have it), with the oldest ones
    marked dead while the live ones pass `limit`, and those of a log that is gone (ESP-Claw
    deleted that session: its segments are no one's); and its number."""
    entries = read(directory)
    for e in entries:
        if e[4] and e[3] != log_name and not fsutil.exists(directory + "/" + e[3]):
            e[4] = False
        elif e[3] == log_name:
            e[5] = prints
    seq = 1 + max([e[0] for e in entries] or [0])
    entries.append([seq, size, max(now, 0), log_name, True, prints])
    total = sum(e[1] for e in entries if e[4])
    for e in entries:
        if total <= limit or e[0] == seq:
            break
        if e[4]:
            e[4] = False
            total -= e[1]
    return entries, seq


def bound(directory, limit):
    """The oldest live segments marked dead while the live ones pass `limit` (a limit lowered
    since they were made: 0 keeps none), then the files of every dead one removed and the
    catalog written without them; the number of segments dropped. (A compaction applies the
    bound as it adds a segment; this, at a Sessions' first use, covers a lower limit without
    one. A cut after the catalog's write leaves dead ones, removed on the next first use.)
    `limit` None: none dropped, the dead ones removed."""
    entries = read(directory)
    total = sum(e[1] for e in entries if e[4])
    n = 0
    for e in entries:
        if limit is None or total <= limit:
            break
        if e[4]:
            e[4] = False
            total -= e[1]
            n += 1
    if n:
        write_catalog(directory, entries)  # (the commit: what is dead is no one's now)
    if n or not all(e[4] for e in entries):
        remove_dead(directory, entries)
        write_catalog(directory, entries)
    return n


def write_catalog(directory, entries, tmp=False):
    """The catalog written whole (`tmp`: as its `.tmp`, for a compaction's commit)."""
    path = directory + "/" + CATALOG
    if tmp:
        fsutil.write_tmp(path, encode(directory, entries))
    else:
        fsutil.replace(path, encode(directory, entries))


def begin(directory, log_name, seq):
    """The journal of a compaction into segment `seq`: written before the segment, whose
    file it names (a cut before `commit` leaves a segment no catalog lists: removed)."""
    fsutil.write_file(directory + "/" + JOURNAL, b"%s %d\n" % (log_name.encode(), seq))


def commit(directory):
    """The commit point: one line appended to the journal (FAT writes its data sector before
    the directory entry that makes it part of the file)."""
    fsutil.append(directory + "/" + JOURNAL, _COMMIT)


def finish(directory, log_name):
    """The renames of a committed compaction (those not done yet: the catalog, the log's text
    index, index and log), the removal of the segments the catalog marks dead, then the
    journal's. (The segment was written under its own name: no rename can lose it.)"""
    log = directory + "/" + log_name
    for p in (directory + "/" + CATALOG, fmt_.tix(log), log + fmt_.IDX, log):
        if fsutil.exists(p + fmt_.TMP):
            fsutil.wrote(p)  # (sessions._open, search's held files: renamed over)
            os.rename(p + fmt_.TMP, p)
    remove_dead(directory)
    fsutil.remove(directory + "/" + JOURNAL)


def remove_dead(directory, entries=None):
    """Remove the files of the catalog's dead segments."""
    for e in read(directory) if entries is None else entries:
        if not e[4]:
            p = seg_path(directory, e[3], e[0])
            for t in fmt_.tix(p, True):  # (a rewrite or merge of its index a cut left too)
                fsutil.remove(t)
            fsutil.remove(p)


def settle(directory):
    """Finish a compaction a power cut interrupted after its commit, or undo one cut before
    it (its segment and `.tmp` files removed); then a catalog cut inside FAT's remove-then-
    rename is taken from its whole `.tmp`. Returns the log's name when one was finished."""
    path = directory + "/" + JOURNAL
    done = None
    if fsutil.size(path) >= 0:
        with open(path, "rb") as f:
            raw = f.read(_LINE_MAX + len(_COMMIT))
        head, nl, rest = raw.partition(b"\n")
        parts = head.split(b" ")
        name = text.clean(parts[0]) if len(parts) == 2 and parts[1].isdigit() else ""
        if nl and fmt_.is_log_name(name):
            if rest == _COMMIT:
                finish(directory, name)
                done = name
            else:
                log = directory + "/" + name
                seg = seg_path(directory, name, int(parts[1]))
                for p in (fmt_.tix(seg), seg, fmt_.tix(log) + fmt_.TMP, log + fmt_.IDX_TMP,
                          log + fmt_.TMP, directory + "/" + CATALOG + fmt_.TMP):
                    fsutil.remove(p)
        fsutil.remove(path)
    fsutil.recover([directory + "/" + CATALOG], valid=_whole)
    return done


def _whole(tmp):
    # A catalog's .tmp that was written whole: its header, and a newline at its end.
    with open(tmp, "rb") as f:
        return f.read(len(_HEAD)) == _HEAD and not fsutil.ends_torn(tmp)


def drop_session(directory, log_name, seqs=None):
    """Remove a log's segments (`seqs`: those of them): marked dead in the catalog first,
    then their files, then the catalog without them (it names no deleted session). Safe to
    repeat (a deletion journal's settle does)."""
    entries = read(directory)
    mine = [e for e in entries if e[3] == log_name and (seqs is None or e[0] in seqs)]
    if not mine:
        return False
    if any(e[4] for e in mine):
        for e in mine:
            e[4] = False
        write_catalog(directory, entries)
    remove_dead(directory, mine)
    write_catalog(directory, [e for e in entries if not any(e is m for m in mine)])
    return True
