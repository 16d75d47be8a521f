# Flash backed by a host file, for the virtual board (tools/virtual_board/).
# MIT license
#
# A block device with the extended interface littlefs needs (and the simple one FAT uses),
# stored in an image file on the host through the unix port's VfsPosix. Every program and
# erase goes straight to the file with write(2) and is flushed (fsync), so whatever the
# board acknowledged survives the micropython process being killed or "rebooted".
#
# The methods allocate nothing (seek/readinto/write on a posix file, a preallocated 0xFF
# block for erase), so they keep working when called from a GC finaliser with the heap
# locked.

import os
import vfs

_EIO = 5
BLOCK_SIZE = 4096


class FileFlash:
    def __init__(self, path, block_size=BLOCK_SIZE):
        self.path = path
        self.block_size = block_size
        self._f = open(path, "r+b")
        size = self._f.seek(0, 2)
        if size == 0 or size % block_size:
            self._f.close()
            raise ValueError("image size %d is not a positive multiple of %d" % (size, block_size))
        self.blocks = size // block_size
        self._ff = b"\xff" * block_size

    def readblocks(self, block, buf, off=0):
        f = self._f
        f.seek(block * self.block_size + off)
        if f.readinto(buf) != len(buf):
            return -_EIO
        return 0

    def writeblocks(self, block, buf, off=None):
        # Extended form (off given, littlefs): program only. Simple form (FAT): whole blocks,
        # which a file needs no erase for.
        f = self._f
        f.seek(block * self.block_size + (off or 0))
        f.write(buf)
        f.flush()
        return 0

    def ioctl(self, op, arg):
        if op == 4:  # block count
            return self.blocks
        if op == 5:  # block size
            return self.block_size
        if op == 6:  # erase block (littlefs): flash erases to 0xFF
            f = self._f
            f.seek(arg * self.block_size)
            f.write(self._ff)
            f.flush()
            return 0
        if op == 3:  # sync
            self._f.flush()
        return 0  # init, deinit, sync

    def close(self):
        self._f.close()


def create(path, blocks=512, block_size=BLOCK_SIZE):
    """Write an erased (all 0xFF) image of `blocks` blocks at `path`."""
    ff = b"\xff" * block_size
    with open(path, "wb") as f:
        for _ in range(blocks):
            f.write(ff)


def _size(path):
    try:
        return os.stat(path)[6]
    except OSError:
        return 0


def mount(image_path, mount_point="/flash", blocks=512):
    """Mount the LittleFS2 image at `image_path` on `mount_point`, creating and formatting
    it (`blocks` x 4096 bytes) first when the file is missing or empty. An existing image
    keeps its own size and contents (a corrupt one raises OSError, it is not reformatted).
    Returns the FileFlash device."""
    fresh = _size(image_path) == 0
    if fresh:
        create(image_path, blocks)
    dev = FileFlash(image_path)
    if fresh:
        vfs.VfsLfs2.mkfs(dev)
    try:
        vfs.umount(mount_point)
    except OSError:
        pass
    vfs.mount(vfs.VfsLfs2(dev), mount_point)
    return dev
