# Fault injection for MicroPython tests: the n-th file operation (open, read, write, seek,
# rename, remove, stat) of the watched modules raises ENOSPC, EIO or MemoryError.
# MIT license
#
# The watched modules' `open` and `os` globals are replaced (MicroPython looks them up at
# call time), so only the library's own file operations count.

import os

_REAL_OPEN = open


class Faults:
    def __init__(self, *modules):
        self.modules = modules
        self.count = 0
        self.at = -1  # the operation that fails (1-based); -1: none
        self.exc = None
        self.fired = False

    def arm(self, at, exc):
        self.count = 0
        self.at = at
        self.exc = exc
        self.fired = False

    def disarm(self):
        self.at = -1

    def tick(self):
        self.count += 1
        if self.count == self.at:
            self.fired = True
            raise self.exc

    def install(self):
        for m in self.modules:
            m.open = self.open
            if hasattr(m, "os"):
                m.os = _Os(self)
        return self

    def remove(self):
        for m in self.modules:
            m.open = _REAL_OPEN
            if hasattr(m, "os"):
                m.os = os

    def open(self, path, mode="r"):
        self.tick()
        return File(self, _REAL_OPEN(path, mode))


class File:
    """The file `f`, each read and write of it first ticking `faults` (anything with a
    tick())."""

    def __init__(self, faults, f):
        self._fa = faults
        self._f = f

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self._f.close()
        return False

    def close(self):
        self._f.close()

    def write(self, data):
        self._fa.tick()
        return self._f.write(data)

    def read(self, *a):
        self._fa.tick()
        return self._f.read(*a)

    def readinto(self, *a):
        self._fa.tick()
        return self._f.readinto(*a)

    def readline(self, *a):
        self._fa.tick()
        return self._f.readline(*a)

    def seek(self, *a):
        return self._f.seek(*a)

    def tell(self):
        return self._f.tell()

    def flush(self):
        return self._f.flush()


class _Os:
    def __init__(self, faults):
        self._fa = faults

    def rename(self, a, b):
        self._fa.tick()
        return os.rename(a, b)

    def remove(self, p):
        self._fa.tick()
        return os.remove(p)

    def stat(self, p):
        self._fa.tick()
        return os.stat(p)

    def mkdir(self, p):
        return os.mkdir(p)

    def __getattr__(self, name):
        return getattr(os, name)


def failing_remove(at, fn):
    """Run fn() with the `at`-th call of fsutil.remove raising EIO (the OSError caught);
    returns how many calls it made."""
    from claw_memory import fsutil

    real = fsutil.remove
    calls = [0]

    def failing(path):
        calls[0] += 1
        if calls[0] == at:
            raise OSError(5, "EIO")
        return real(path)

    fsutil.remove = failing
    try:
        fn()
    except OSError:
        pass
    finally:
        fsutil.remove = real
    return calls[0]
