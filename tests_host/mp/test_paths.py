# claw_memory.paths: choosing and laying out the data root.
import os

from flashsim import mount
from mptest import eq, ok, raises

from claw_memory import paths


def test_explicit_root_wins_and_is_normalised():
    eq(paths.data_root("/data/"), "/data", "trailing slash dropped")
    eq(paths.data_root("/"), "/", "root kept")
    raises(ValueError, paths.data_root, "")
    raises(ValueError, paths.data_root, 42)
    raises(ValueError, paths.data_root, "/" + "x" * 80)  # MICROPY_ALLOC_PATH_MAX


def test_sd_then_flash_then_cwd():
    eq(paths.data_root(), os.getcwd(), "nothing mounted: the current directory")
    flash = mount("lfs2", "/flash", blocks=32)
    eq(paths.data_root(), "/flash", "flash when mounted")
    sd = mount("fat", "/sd", blocks=128, block_size=512)
    eq(paths.data_root(), "/sd", "an SD card wins")
    sd.unmount()
    eq(paths.data_root(), "/flash", "back to flash after the card is removed")
    flash.unmount()


def test_join():
    eq(paths.join("/", "a", "b"), "/a/b", "from /")
    eq(paths.join("/flash", "sessions"), "/flash/sessions", "plain")


def test_layout_creates_directories():
    dev = mount("lfs2", "/flash", blocks=32)
    lay = paths.Layout("/flash/agent").ensure()
    ok(paths.is_dir("/flash/agent/sessions"), "sessions/")
    ok(paths.is_dir("/flash/agent/memory"), "memory/")
    eq(lay.chat_map, "/flash/agent/sessions/chat_map", "chat map under sessions")
    lay.ensure()  # idempotent
    dev.unmount()
