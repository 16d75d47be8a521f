# claw_memory.session.held: the files a search keeps open, and the logs it found matching
# their text indexes, from one query to the next.
# MIT license
#
# littlefs finds a name by reading its folder's metadata log through a 128-byte cache, each
# tag and name again: 5 to 30 KiB for a file of a sessions folder of tens of files, more
# than a query reads of the file itself (a chat's query opened 25 files: 301 KiB of look-ups
# for 37 KiB of index). So the files a query opens are kept open, up to _MAX (the first it
# opens: the second pass reads the candidates' files again; at a query's end those it did
# not use are closed), and the next query finds them open; and a log found to match its
# index (search._file) is not opened again for that. Both hold while their paths are not
# written: fsutil keeps the CRC-32s of the last paths written (fsutil.ring); before each use
# the writes since are looked at, and a kept file among them is closed (if in use, never
# given out again and closed at the query's end), a log's check forgotten; more writes than
# the ring holds let go of everything.
# Kept between queries only where this program alone writes the folder (repair.private:
# littlefs, FAT); elsewhere let go at the query's end.
# Heap: about 480 bytes a kept file on littlefs, measured on the 32-bit port (its object and
# 128-byte cache, 272; its entry, path and the path's CRC-32, boxed above 2^30; on FAT the
# object is 55, its files share the volume's sector buffer); 8 bytes a checked log.

from array import array
from binascii import crc32

from .. import fsutil
from .._compat import const

# Files kept open: 6, with search._POOL at 1 KiB, holds the query heap where 4 held it with a
# 2 KiB pool, and the board chat query reads 128 KiB, not 142 (8: 112 KiB, 1 KiB more heap)
_MAX = const(6)
_CHECKED = const(16)  # logs remembered as matching their indexes
_USE = const(1)  # the file is in use (opened, not given back)
_USED = const(2)  # used by this query
_GONE = const(4)  # its path written while in use: not given out again, closed at the end


def _shut(f):
    # (a file only read: nothing of it to lose when its filesystem is gone, unmounted or
    # failing, and closing it cannot fail the query or write that let it go)
    try:
        f.close()
    except OSError:
        pass


class Held:
    def __init__(self):
        self.files = []  # [path, file, state, CRC-32 of the path]
        # The checked logs: their paths' CRC-32s and their sizes when checked. (An index
        # this program writes again is made from its log: the check still holds.)
        self.logs = array("I")
        self.ends = array("I")
        self.seen = fsutil.writes

    def open(self, path, missing=False):
        """`path` open for reading (anywhere: the caller seeks), kept or opened now; with
        `missing`, None when it does not exist. Give it back with give()."""
        self._sync()
        for e in self.files:
            if e[0] == path and not e[2] & (_USE | _GONE):
                e[2] |= _USE | _USED
                return e[1]
        f = fsutil.open_existing(path) if missing else open(path, "rb")
        if f is not None and len(self.files) < _MAX:
            self.files.append([path, f, _USE | _USED, crc32(path.encode())])
        return f

    def give(self, f):
        """Done with `f` (from open()): kept when open() kept it (one whose path was written
        meanwhile is never given out again and is closed at the query's end), else closed."""
        self._sync()
        for e in self.files:
            if e[1] is f:
                e[2] &= ~_USE
                return
        _shut(f)

    def end(self, keep):
        """The query's end: the files it did not use closed (all, unless `keep`)."""
        i = 0
        while i < len(self.files):
            e = self.files[i]
            if keep and e[2] & _USED and not e[2] & _GONE:
                e[2] = 0
                i += 1
            else:
                del self.files[i]
                _shut(e[1])

    def checked(self, log):
        """The size `log` had when found matching its index (the log not written since), or -1."""
        self._sync()
        i = self._find(crc32(log.encode()))
        return -1 if i < 0 else self.ends[i]

    def check(self, log, end):
        """`log`, `end` bytes, found matching its index."""
        self._sync()
        self.forget(log)
        if len(self.logs) == _CHECKED:
            self._cut(0)
        self.logs.append(crc32(log.encode()))
        self.ends.append(end)

    def forget(self, log):
        """`log`'s check let go (its index found stale: the log may have changed)."""
        i = self._find(crc32(log.encode()))
        if i >= 0:
            self._cut(i)

    def _find(self, h):
        # (the place of the checked log whose path's CRC-32 is `h`, or -1)
        for i, x in enumerate(self.logs):
            if x == h:
                return i
        return -1

    def _cut(self, i):
        # (MicroPython's arrays have no pop: a slice assigned shrinks them)
        for a in (self.logs, self.ends):
            a[i : i + 1] = a[:0]

    def _sync(self):
        # What was written since last looked: let go of
        w = fsutil.writes
        n = w - self.seen
        if not n:
            return
        self.seen = w
        ring = fsutil.ring
        every = n > len(ring)
        got = () if every else [ring[k % len(ring)] for k in range(w - n, w)]
        i = 0
        while i < len(self.files):
            e = self.files[i]
            if every or e[3] in got:
                if e[2] & _USE:
                    e[2] |= _GONE
                else:
                    del self.files[i]
                    _shut(e[1])
                    continue
            i += 1
        i = 0
        while i < len(self.logs):
            if every or self.logs[i] in got:
                self._cut(i)
            else:
                i += 1

    def close(self):
        self.end(False)
