# Where a search's flash reads go (search_cost.py): name lookups or file contents, text index
# or records, and how many bytes the library asked for. MIT license
#
# Inside `with Trace(dev) as t:` every file the code opens is wrapped, so that the simulated
# device's read counter is charged to the file call that caused it (reset() and lap() count
# one query of several inside it). What no file call caused
# (opening a file, os.stat, listing a folder: littlefs looks each name up by reading the
# folder's metadata) is a lookup. The wrapping costs time: use it apart from timed runs.

import builtins

_OPEN = builtins.open


class Trace:
    KINDS = ("index", "records")

    def __init__(self, dev):
        self.dev = dev
        self.opens = 0
        self.flash = {k: 0 for k in self.KINDS}  # bytes littlefs read for the file calls
        self.asked = {k: 0 for k in self.KINDS}  # bytes those calls returned
        self.total = 0

    def __enter__(self):
        self.reset()
        builtins.open = self._open
        return self

    def __exit__(self, *exc):
        builtins.open = _OPEN
        self.lap()

    def reset(self):
        """Count from here (the files opened before stay wrapped: a search keeps files open
        from one query to the next, session/held.py)."""
        self.r0 = self.dev.bytes_read
        self.opens = 0
        self.flash = {k: 0 for k in self.KINDS}
        self.asked = {k: 0 for k in self.KINDS}

    def lap(self):
        """The total since reset()."""
        self.total = self.dev.bytes_read - self.r0

    def lookups(self):
        """Bytes read outside any file call: name lookups and folder listings."""
        return self.total - sum(self.flash.values())

    def _open(self, path, *args, **kw):
        self.opens += 1
        return _File(self, _OPEN(path, *args, **kw), "index" if path.endswith(".tix") else "records")


class _File:
    def __init__(self, t, f, kind):
        self.t = t
        self.f = f
        self.kind = kind

    def _call(self, fn, *args):
        r0 = self.t.dev.bytes_read
        r = fn(*args)
        self.t.flash[self.kind] += self.t.dev.bytes_read - r0
        return r

    def _got(self, r):
        self.t.asked[self.kind] += len(r)
        return r

    def read(self, *a):
        return self._got(self._call(self.f.read, *a))

    def readline(self, *a):
        return self._got(self._call(self.f.readline, *a))

    def readinto(self, buf, *a):
        n = self._call(self.f.readinto, buf, *a)
        self.t.asked[self.kind] += n or 0
        return n

    def seek(self, *a):
        return self._call(self.f.seek, *a)

    def tell(self):
        return self.f.tell()

    def write(self, b):
        return self.f.write(b)

    def flush(self):
        return self.f.flush()

    def close(self):
        return self._call(self.f.close)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __iter__(self):
        return self

    def __next__(self):
        line = self.readline()
        if not line:
            raise StopIteration
        return line
