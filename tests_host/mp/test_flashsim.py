# The simulated flash itself: counting, power cuts (clean and torn), reboot, no allocation.
import os

import micropython
from flashsim import FlashSim, mount
from mptest import eq, ok, raises

HEAP = "4M"


def _write(path, data, mode="wb"):
    with open(path, mode) as f:
        f.write(data)


def _read(path):
    with open(path, "rb") as f:
        return f.read()


def test_lfs2_counts_program_and_erase():
    dev = mount("lfs2", "/flash", blocks=64)
    eq(dev.block_size, 4096, "default block size")
    eq(dev.ops, 0, "counters reset after mkfs")
    _write("/flash/a.bin", b"x" * 100)
    ok(dev.progs > 0, "a write programs")
    ok(dev.bytes_programmed >= 100, "bytes counted")
    before = dev.stats()
    _read("/flash/a.bin")
    eq(dev.ops, before["ops"], "reading programs nothing")
    # Filling a fresh block needs an erase first.
    _write("/flash/b.bin", b"y" * 20000)
    ok(dev.erases > 0, "new blocks are erased before programming")
    dev.reset_stats()
    eq(dev.stats()["ops"], 0, "reset")
    dev.unmount()


def test_fat_counts_erase_plus_program_per_sector():
    dev = mount("fat", "/sd", blocks=128, block_size=512)
    _write("/sd/a.txt", b"hello")
    ok(dev.erases > 0 and dev.progs > 0, "FAT sector writes erase and program")
    eq(dev.erases, dev.progs, "one erase per programmed sector")
    eq(dev.bytes_programmed % 512, 0, "whole sectors")
    dev.unmount()
    sd = mount("fat", "/sd", blocks=128, block_size=512, erase_on_write=False)
    _write("/sd/a.txt", b"hello")
    eq(sd.erases, 0, "SD-card model: atomic sector writes")
    sd.unmount()


def test_cut_power_stops_everything_and_reboot_keeps_survivors():
    dev = mount("lfs2", "/flash", blocks=64)
    _write("/flash/keep.txt", b"acknowledged")
    dev.cut_power(after=0)
    raises(OSError, _write, "/flash/lost.txt", b"never")
    ok(dev.dead, "device dead after the cut")
    progs = dev.progs
    buf = bytearray(16)
    eq(dev.readblocks(0, buf), -5, "reads fail after the cut")
    eq(dev.writeblocks(0, buf, 0), -5, "programs fail after the cut")
    eq(dev.ioctl(6, 1), -5, "erases fail after the cut")
    eq(dev.progs, progs, "nothing counted after the cut")
    dev2 = dev.reboot()
    ok(not dev2.dead, "the rebooted device works")
    eq(_read("/flash/keep.txt"), b"acknowledged", "acknowledged file survives")
    ok("lost.txt" not in os.listdir("/flash") or _read("/flash/lost.txt") in (b"", b"never"),
       "the cut write is absent or whole")
    _write("/flash/next.txt", b"after reboot")
    eq(_read("/flash/next.txt"), b"after reboot", "writes work after reboot")
    dev2.unmount()


def test_cut_after_n_operations_counts_exactly():
    dev = mount("lfs2", "/flash", blocks=64)
    dev.cut_power(after=3)
    try:
        for i in range(50):
            _write("/flash/f%d" % i, b"z" * 64)
    except OSError:
        pass
    ok(dev.dead, "cut happened")
    eq(dev.ops, 3, "exactly N operations applied before the cut")
    dev.unmount()


def test_torn_program_is_half_applied():
    dev = FlashSim(blocks=4, block_size=4096)
    dev.cut_power(after=0, torn=True)
    eq(dev.writeblocks(1, b"A" * 64, 0), -5, "cut program fails")
    img = dev.image()
    eq(img[4096:4096 + 32], b"A" * 32, "first half programmed")
    eq(img[4096 + 32:4096 + 64], b"\xff" * 32, "second half not")
    clean = FlashSim(blocks=4, block_size=4096)
    clean.cut_power(after=0)
    clean.writeblocks(1, b"A" * 64, 0)
    eq(clean.image()[4096:4096 + 64], b"\xff" * 64, "a clean cut applies nothing")
    fat = FlashSim(blocks=4, block_size=512)
    fat.writeblocks(2, b"B" * 512)
    fat.cut_power(after=0, torn=True)
    eq(fat.writeblocks(2, b"C" * 512), -5, "cut at the erase")
    img = fat.image()
    eq(img[1024:1024 + 256], b"\xff" * 256, "torn erase: first half erased")
    eq(img[1024 + 256:1536], b"B" * 256, "torn erase: rest untouched")


def _probe(dev, buf):
    # Returns how many calls completed with the heap locked (4 = all).
    done = 0
    micropython.heap_lock()
    try:
        dev.readblocks(3, buf, 0)
        done = 1
        dev.writeblocks(3, buf, 0)
        done = 2
        dev.ioctl(6, 3)
        done = 3
        dev.writeblocks(3, buf)
        done = 4
    except MemoryError:
        pass
    micropython.heap_unlock()
    return done


def test_block_calls_do_not_allocate_alive_or_dead():
    dev = FlashSim(blocks=8, block_size=4096)
    buf = bytearray(4096)
    eq(_probe(dev, buf), 4, "alive device under heap lock")
    dev.cut_power(after=0)
    dev.ioctl(6, 0)
    ok(dev.dead, "dead")
    eq(_probe(dev, buf), 4, "dead device under heap lock")


def test_reboot_remounts_fat_too():
    dev = mount("fat", "/sd", blocks=128, block_size=512)
    os.mkdir("/sd/memory")
    _write("/sd/memory/x", b"123")
    dev2 = dev.reboot()
    eq(_read("/sd/memory/x"), b"123", "FAT survives reboot")
    eq(dev2.kind, "fat", "kind kept")
    dev2.unmount()


def test_fail_read_gives_one_transient_eio():
    for kind in ("lfs2", "fat"):
        dev = mount(kind, "/flash", blocks=64)
        _write("/flash/a.bin", b"abc")
        dev = dev.reboot()  # no cached blocks
        dev.fail_read(0)
        e = raises(OSError, os.stat, "/flash/a.bin")
        eq(e.args[0], 5, "%s: the failed read is EIO" % kind)
        eq(os.stat("/flash/a.bin")[6], 3, "%s: the next reads work" % kind)
        eq(_read("/flash/a.bin"), b"abc", "%s: data untouched" % kind)
        dev.unmount()
