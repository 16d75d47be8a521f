# Simulated flash for MicroPython tests, the demo, the benchmark and the power-cut tool.
# MIT license
#
# A RAM block device with the extended interface littlefs needs and the simple one FAT uses,
# formatted VfsLfs2 or VfsFat and mounted like a board's /flash or /sd. It counts program and
# erase operations and bytes programmed, can cut power after N of them (optionally leaving
# the interrupted operation half-applied), can fail one read with EIO, and can reboot: a fresh
# device built from the bytes that survived is mounted again.
#
# The storage is an io.BytesIO: seek/readinto/write on it do not allocate, so the device keeps
# working when called from a GC finaliser with the heap locked. Once dead, every call returns
# -EIO before touching anything. For heap measurements the storage can instead be a host file
# (`attach`, `mount(image_file=...)`): the blocks then live outside the MicroPython heap.

import io
import os
import vfs

_EIO = 5


_LAST = [None]  # the device mounted last


class FlashSim:
    def __init__(self, blocks=256, block_size=4096, image=None, erase_on_write=True, backing=None):
        self.blocks = blocks
        self.block_size = block_size
        # Simple-interface (FAT) writes: erase + program per block, as esp32.Partition does
        # on raw flash; False models an SD card whose sector writes are one operation.
        self.erase_on_write = erase_on_write
        if backing is not None:
            # An open host file ("r+b") holding the image: seek/readinto/write on a posix
            # file allocate nothing either.
            if backing.seek(0, 2) != blocks * block_size:
                raise ValueError("image file size does not match the geometry")
            self._io = backing
        else:
            if image is None:
                image = b"\xff" * (blocks * block_size)
            elif len(image) != blocks * block_size:
                raise ValueError("image size does not match the geometry")
            self._io = io.BytesIO(image)
            # BytesIO shares a bytes initialiser until the first write, which then copies
            # it: take that copy now, not later inside a call that must not allocate.
            self._io.write(image[:1])
        self._ffbuf = b"\xff" * block_size
        self.progs = 0
        self.erases = 0
        self.bytes_programmed = 0
        self.reads = 0
        self.bytes_read = 0
        self._budget = -1  # program/erase operations left before the cut; -1: never
        self._torn = False
        self._read_fail = -1  # reads left before a transient read error; -1: never
        self.dead = False
        self.kind = None
        self.path = None

    # -- counters -------------------------------------------------------------------------

    @property
    def ops(self):
        """Program plus erase operations so far."""
        return self.progs + self.erases

    def stats(self):
        return {"progs": self.progs, "erases": self.erases, "ops": self.ops,
                "bytes_programmed": self.bytes_programmed, "reads": self.reads,
                "bytes_read": self.bytes_read}

    def reset_stats(self):
        self.progs = self.erases = self.bytes_programmed = self.reads = self.bytes_read = 0

    def uncounted(self):
        """A context in which nothing is counted: for work a model does only to reach the
        state the modelled system would be in (e.g. a truncate MicroPython lacks)."""
        return _Uncounted(self)

    def charge(self, erases=0, progs=0, nbytes=0):
        """Count operations a model says happened without doing them."""
        self.erases += erases
        self.progs += progs
        self.bytes_programmed += nbytes

    # -- power ----------------------------------------------------------------------------

    def cut_power(self, after, torn=False):
        """Let `after` more program/erase operations succeed; the next one is cut (dropped,
        or half-applied when `torn`) and the device is dead from then on."""
        self._budget = after
        self._torn = torn

    def _cut_now(self):
        # Called once per program/erase; True means this operation is the one cut.
        if self._budget < 0:
            return False
        if self._budget == 0:
            self.dead = True
            return True
        self._budget -= 1
        return False

    def fail_read(self, after):
        """Let `after` more block reads succeed; the next one returns EIO (a transient read
        error, as a marginal flash cell gives), and reads work again after it."""
        self._read_fail = after

    def image(self):
        """The bytes that survive a power cut (everything programmed so far)."""
        if isinstance(self._io, io.BytesIO):
            return self._io.getvalue()
        self._io.seek(0)
        return self._io.read()

    # -- block protocol -------------------------------------------------------------------

    def readblocks(self, block, buf, off=0):
        if self.dead:
            return -_EIO
        if self._read_fail >= 0:
            self._read_fail -= 1
            if self._read_fail < 0:
                return -_EIO
        self.reads += 1
        self.bytes_read += len(buf)
        self._io.seek(block * self.block_size + off)
        self._io.readinto(buf)
        return 0

    def _program(self, pos, buf):
        if self._cut_now():
            if self._torn:
                self._io.seek(pos)
                self._io.write(bytes(buf[: len(buf) // 2]))
            return False
        self._io.seek(pos)
        self._io.write(buf)
        self.progs += 1
        self.bytes_programmed += len(buf)
        return True

    def _erase(self, block):
        if self._cut_now():
            if self._torn:
                self._io.seek(block * self.block_size)
                self._io.write(b"\xff" * (self.block_size // 2))
            return False
        self._io.seek(block * self.block_size)
        self._io.write(self._ffbuf)
        self.erases += 1
        return True

    def writeblocks(self, block, buf, off=None):
        if self.dead:
            return -_EIO
        if off is not None:  # extended interface (littlefs): program only, never erase
            return 0 if self._program(block * self.block_size + off, buf) else -_EIO
        bs = self.block_size
        n = len(buf) // bs
        per_block = 2 if self.erase_on_write else 1
        if self._budget < 0 or self._budget >= n * per_block:
            # No cut inside this call: one write of the whole buffer, no allocation.
            if self._budget >= 0:
                self._budget -= n * per_block
            self._io.seek(block * bs)
            self._io.write(buf)
            self.erases += n if self.erase_on_write else 0
            self.progs += n
            self.bytes_programmed += len(buf)
            return 0
        mv = memoryview(buf)
        for k in range(n):
            if self.erase_on_write and not self._erase(block + k):
                return -_EIO
            if not self._program((block + k) * bs, mv[k * bs : (k + 1) * bs]):
                return -_EIO
        return 0

    def ioctl(self, op, arg):
        if op == 4:  # block count
            return self.blocks
        if op == 5:  # block size
            return self.block_size
        if self.dead:
            return -_EIO
        if op == 6:  # erase block (littlefs)
            return 0 if self._erase(arg) else -_EIO
        return 0  # init, deinit, sync

    # -- filesystem -----------------------------------------------------------------------

    def _fs(self):
        if self.kind == "lfs2":
            return vfs.VfsLfs2(self)
        return vfs.VfsFat(self)

    def reboot(self):
        """Unmount (ignoring a dead device's errors) and mount a fresh device built from the
        surviving bytes at the same path; returns the new device."""
        return self.restore(self.image())

    def restore(self, image):
        """Mount a fresh device holding `image` (an earlier `image()`) at the same path."""
        try:
            vfs.umount(self.path)
        except OSError:
            pass
        dev = FlashSim(self.blocks, self.block_size, image, self.erase_on_write)
        dev.kind = self.kind
        dev.path = self.path
        vfs.mount(dev._fs(), self.path)
        _LAST[0] = dev
        return dev

    def unmount(self):
        try:
            vfs.umount(self.path)
        except OSError:
            pass
        if not isinstance(self._io, io.BytesIO):
            self._io.close()  # a host image file: everything programmed is in it


class _Uncounted:
    def __init__(self, dev):
        self.dev = dev

    def __enter__(self):
        d = self.dev
        self.saved = (d.progs, d.erases, d.bytes_programmed, d.reads)
        return d

    def __exit__(self, *exc):
        d = self.dev
        d.progs, d.erases, d.bytes_programmed, d.reads = self.saved
        return False


def _erased_file(image_file, blocks, block_size):
    ff = b"\xff" * block_size
    with open(image_file, "wb") as f:
        for _ in range(blocks):
            f.write(ff)
    return open(image_file, "r+b")


def mount(kind="lfs2", path="/flash", blocks=256, block_size=4096, erase_on_write=True,
          image_file=None):
    """Format a new simulated flash as `kind` ("lfs2" or "fat"), mount it at `path`, return it.
    Anything already mounted at `path` is unmounted first. With `image_file` (a host path) the
    blocks are kept in that file instead of the heap."""
    if kind not in ("lfs2", "fat"):
        raise ValueError("kind must be 'lfs2' or 'fat'")
    try:
        vfs.umount(path)
    except OSError:
        pass
    backing = None if image_file is None else _erased_file(image_file, blocks, block_size)
    dev = FlashSim(blocks, block_size, erase_on_write=erase_on_write, backing=backing)
    dev.kind = kind
    dev.path = path
    if kind == "lfs2":
        vfs.VfsLfs2.mkfs(dev)
    else:
        vfs.VfsFat.mkfs(dev)
    vfs.mount(dev._fs(), path)
    dev.reset_stats()
    _LAST[0] = dev
    return dev


def alive():
    """False once the device mounted last lost power: a workload must not count a call that
    returned after the cut as acknowledged (a real board would not have run on)."""
    return _LAST[0] is None or not _LAST[0].dead


def attach(image_file, kind="lfs2", path="/flash", block_size=4096, erase_on_write=True):
    """Mount the filesystem image in the host file `image_file` (written by `mount(...,
    image_file=...)`) at `path`, counting from zero; the blocks stay in the file."""
    f = open(image_file, "r+b")
    blocks = f.seek(0, 2) // block_size
    try:
        vfs.umount(path)
    except OSError:
        pass
    dev = FlashSim(blocks, block_size, erase_on_write=erase_on_write, backing=f)
    dev.kind = kind
    dev.path = path
    vfs.mount(dev._fs(), path)
    _LAST[0] = dev
    return dev


def tree(path):
    """{relative path: size} of every file under `path` (for test assertions)."""
    out = {}

    def walk(p, rel):
        for entry in os.ilistdir(p):
            name = entry[0]
            full = p + "/" + name
            if entry[1] == 0x4000:
                walk(full, rel + name + "/")
            else:
                out[rel + name] = os.stat(full)[6]

    walk(path, "")
    return out
