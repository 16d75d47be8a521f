# claw_memory: durable file primitives shared by every storage layer.
# MIT license
#
# MicroPython makes data durable only on close()/flush(); littlefs commits a file's new
# contents atomically on close, FAT does not (and its rename over a file is remove + rename).
# Everything here closes what it opens, writes each payload with one write() call, and
# replaces whole files through `X.tmp` + rename so a power cut leaves the old or the new file.

import os

from ._compat import EIO, EISDIR, ENOENT, ENOSPC, ENOTDIR, const

TMP = const(".tmp")  # suffix of a file's next version while it is written
_CHUNK = const(4096)  # Buffered's piece: a sector of the ESP32's FAT partition, 8 of an SD card's
_SMALL = const(512)  # its piece when no 4 KiB run is free (an SD card's sector)


def _stat(path):
    # None when the path does not exist; any other error (EIO from a failing flash) is not
    # "missing" and propagates, so that nothing is created over files that could not be read.
    try:
        return os.stat(path)
    except OSError as e:
        if e.args[0] in (ENOENT, ENOTDIR):
            return None
        raise


def exists(path):
    return _stat(path) is not None


def size(path):
    """File size in bytes, -1 when the file does not exist (also, on FAT, for a folder)."""
    # An open, not a stat: MicroPython's littlefs stat looks the name up twice (the file,
    # then its time attribute), and a look-up reads the folder's metadata (tens of KiB in a
    # folder of many sessions; several a turn). A missing name costs one look-up either way.
    # An I/O error is no "missing": it propagates (no stat after it: littlefs may keep the
    # failed read's cache line, and a second look-up then finds no file).
    # On FAT, MicroPython's seek answers where its walk of the cluster chain stopped and
    # drops the walk's error (a chain broken by a cut inside a rename): the read at the end
    # raises it (EIO), or finds bytes; on a sound file it reads nothing, from no sector.
    try:
        with open(path, "rb") as f:
            n = f.seek(0, 2)
            if f.read(1):
                raise OSError(EIO, "%s: the end of its cluster chain was not reached" % path)
            return n
    except OSError as e:
        if e.args[0] in (ENOENT, ENOTDIR):
            return -1
        if e.args[0] != EISDIR:
            raise
    st = _stat(path)  # (a folder: littlefs and the host do not open one)
    return -1 if st is None else st[6]


def ignores_case(path):
    """Whether the folder `path` is on a filesystem whose names ignore case (FAT; littlefs
    and the host's Linux filesystems do not): a probe that writes nothing."""
    head, _, name = path.rpartition("/")
    other = name.lower() if name != name.lower() else name.upper()
    return other != name and exists(head + "/" + other)


def ends_torn(path):
    """Whether the file is not empty and does not end with a newline (a cut append)."""
    n = size(path)
    if n <= 0:
        return False
    with open(path, "rb") as f:
        f.seek(n - 1)
        return f.read(1) != b"\n"


def is_dir(path):
    st = _stat(path)
    return st is not None and st[0] & 0x4000 != 0


# Writes (and removals, renames) made through this module so far: a Sessions takes what it
# checked of a session's files as true while this count has not moved (sessions._open).
# Every write of the library's files goes through here (archive.finish and compact tell
# theirs: wrote()).
writes = 0
# The CRC-32s of the paths of the last _RING writes (write n at n % _RING): what changed
# since a count, for the files a search keeps open (session/held.py).
_RING = const(16)
ring = None  # (made at the first write: no heap before)


def wrote(path):
    """Count a write (or removal, rename over) of `path`."""
    global writes, ring
    from binascii import crc32

    if ring is None:
        from array import array

        ring = array("I", bytes(4 * _RING))
    ring[writes % _RING] = crc32(path.encode())
    writes += 1


def remove(path):
    """Remove a file; True if it existed. Other errors than 'not found' propagate."""
    wrote(path)
    try:
        os.remove(path)
        return True
    except OSError as e:
        if e.args[0] == ENOENT:
            return False
        raise


def makedirs(path):
    """Create a directory and its parents; a file in the way raises OSError."""
    if is_dir(path):
        return
    parent = path.rsplit("/", 1)[0]
    if parent and parent != path:
        makedirs(parent)
    wrote(path)
    try:
        os.mkdir(path)
    except OSError:
        if not is_dir(path):
            raise


def write_all(f, data):
    n = f.write(data)
    if n is not None and n != len(data):
        raise OSError(ENOSPC, "short write")


def append(path, data):
    """Append `data` (bytes, or a callable given the open file and the start offset) and
    close; returns the offset where it starts. Nothing is durable before the close."""
    wrote(path)
    with open(path, "ab") as f:
        start = f.seek(0, 2)
        if callable(data):
            data(f, start)
        else:
            write_all(f, data)
    return start


def write_at(path, offset, data):
    """Write `data` at `offset` of the existing file `path` (over what is there) and close;
    nothing is durable before the close, and on FAT a cut can leave part of it."""
    wrote(path)
    with open(path, "r+b") as f:
        f.seek(offset)
        write_all(f, data)


def write_file(path, data):
    """Create or overwrite `path` directly (for files that do not exist yet, or whose old
    contents may be lost by a power cut: littlefs keeps them until the close, FAT does not)."""
    wrote(path)
    with open(path, "wb") as f:
        write_all(f, data)


def replace(path, data):
    """Atomically replace `path`: write `path.tmp` (bytes, or a callable given the open
    file), close it, rename it over `path`."""
    tmp = path + TMP
    write_tmp(path, data)
    wrote(path)
    os.rename(tmp, path)


def write_tmp(path, data):
    """Write the complete `path.tmp` for a later rename or journal commit (a callable is
    given a Buffered file: writers read other files between their writes)."""
    out = Buffered() if callable(data) else None  # before the file: no empty tmp on MemoryError
    wrote(path + TMP)
    with open(path + TMP, "wb") as f:
        if out is not None:
            out.f = f
            data(out)
            out.flush()
        else:
            write_all(f, data)


class Buffered:
    """Writes passed on to `f` in whole pieces of 4 KiB. MicroPython's FatFs keeps one sector
    buffer for all open files (FF_FS_TINY): a small write, then a read of another file,
    writes a whole sector, so copying a file record by record would write each sector once per
    record. Whole aligned pieces go to the disk once each. Call flush() before closing `f`.
    write() takes bytes-like data of bytes (bytes, bytearray, memoryview, str)."""

    def __init__(self, f=None, size=_CHUNK):
        self.f = f
        size = max(min(size, _CHUNK), 1)  # (fewer bytes to write need no more)
        try:
            self.buf = bytearray(size)
        except MemoryError:  # a fragmented heap: smaller whole pieces rather than failing
            self.buf = bytearray(min(size, _SMALL))
        self.n = 0

    def write(self, data):
        mv = memoryview(data)
        size = len(self.buf)
        k = 0
        while k < len(mv):
            c = min(size - self.n, len(mv) - k)
            self.buf[self.n : self.n + c] = mv[k : k + c]
            self.n += c
            k += c
            if self.n == size:
                write_all(self.f, self.buf)
                self.n = 0
        return len(mv)

    def copy(self, src, off, ln):
        """Write the `ln` bytes at `off` of the open file `src`, read straight into the
        buffer (no buffer of the caller's)."""
        src.seek(off)
        mv = memoryview(self.buf)
        size = len(self.buf)
        while ln:
            got = src.readinto(mv[self.n : self.n + min(size - self.n, ln)])
            if not got:
                raise OSError(EIO, "a file shrank while it was copied")
            self.n += got
            ln -= got
            if self.n == size:
                write_all(self.f, self.buf)
                self.n = 0

    def flush(self):
        if self.n:
            write_all(self.f, memoryview(self.buf)[: self.n])
            self.n = 0


def commit(journal, paths):
    """Rename every `X.tmp` of `paths` over `X` as one unit.

    The empty journal file is created only after every tmp file is complete and closed, so
    its existence is the commit point; `recover` finishes the renames after a power cut."""
    wrote(journal)
    with open(journal, "wb"):
        pass
    for p in paths:
        wrote(p)
        os.rename(p + TMP, p)
    remove(journal)


def recover(paths, journal=None, valid=None):
    """Settle leftovers of an interrupted `replace` or `commit`; True if a tmp was adopted.

    Committed journal: every tmp is renamed into place. Otherwise a tmp is adopted only when
    its target is missing (a cut inside FAT's remove-then-rename) and `valid(tmp)` accepts it;
    any other tmp is an unfinished write and is removed."""
    committed = journal is not None and exists(journal)
    adopted = False
    for p in paths:
        tmp = p + TMP
        if not exists(tmp):
            continue
        if committed or (not exists(p) and (valid is None or valid(tmp))):
            wrote(p)
            os.rename(tmp, p)
            adopted = True
        else:
            remove(tmp)
    if committed:
        remove(journal)
    return adopted


def open_existing(path):
    """`path` open for reading, None when it does not exist. Cheaper than a stat and then an
    open: littlefs finds a name by reading its folder's metadata, for each of them."""
    try:
        return open(path, "rb")
    except OSError as e:
        # (FatFs answers ENOENT for a folder: only what a stat does not find is missing)
        if e.args[0] in (ENOENT, ENOTDIR) and _stat(path) is None:
            return None
        raise


def read_bounded(path, limit, head=False):
    """The whole file as bytes, or None when missing; ValueError when larger than `limit`
    (with `head`: its first `limit` bytes instead)."""
    f = open_existing(path)
    if f is None:
        return None
    with f:
        n = f.seek(0, 2)
        if n > limit:
            if not head:
                raise ValueError("%s is %d bytes, more than %d" % (path, n, limit))
            n = limit
        f.seek(0)
        return f.read(n)  # MicroPython allocates what read() is asked for: the size, not the bound


class Nothing:
    """Stands in a `with` for a file that is not needed (as None)."""

    def __enter__(self):
        return None

    def __exit__(self, *exc):
        return False
