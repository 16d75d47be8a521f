# claw_memory.paths: choosing and laying out the data root.
import os

from flashsim import mount
from mptest import eq, ok, raises

from claw_memory import fsutil, paths


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


def test_a_plain_folder_is_not_a_mount_point():
    # the unix port sees the host's /: a host folder called /flash or /sd is no board storage
    eq(paths._mounted(os.getcwd()), False, "the checkout, a folder")
    dev = mount("lfs2", "/flash", blocks=32)
    eq(paths._mounted("/flash"), True, "a mounted filesystem")
    dev.unmount()
    eq(paths._mounted("/flash"), False, "unmounted again")


def test_join():
    eq(paths.join("/", "a", "b"), "/a/b", "from /")
    eq(paths.join("/flash", "sessions"), "/flash/sessions", "plain")


def test_layout_creates_directories():
    dev = mount("lfs2", "/flash", blocks=32)
    lay = paths.Layout("/flash/agent").ensure()
    ok(fsutil.is_dir("/flash/agent/sessions"), "sessions/")
    ok(fsutil.is_dir("/flash/agent/memory"), "memory/")
    eq(lay.chat_map, "/flash/agent/sessions/chat_map", "chat map under sessions")
    lay.ensure()  # idempotent
    dev.unmount()


def _tree(path):
    out = []
    for name in sorted(os.listdir(path)):
        p = path + "/" + name
        out.append(name)
        if fsutil.is_dir(p):
            out += [name + "/" + n for n in _tree(p)]
    return out


def test_open_without_create_refuses_a_folder_that_is_not_a_data_root():
    import claw_memory

    dev = mount("lfs2", "/flash", blocks=64)
    os.mkdir("/flash/docs")
    with open("/flash/docs/notes.txt", "w") as f:
        f.write("not a data root")
    ok(not paths.Layout("/flash/docs").exists(), "a folder without sessions/ and memory/")
    for mode in ("full", "lite"):
        e = raises(OSError, claw_memory.open, "/flash/docs", mode, create=False)
        eq(e.args[0], 2, "ENOENT")
        ok("no data root at /flash/docs" in e.args[1], e.args[1])
    e = raises(OSError, claw_memory.open, "/flash/nope", create=False)
    ok("no data root at /flash/nope" in e.args[1], "a missing folder")
    eq(_tree("/flash/docs"), ["notes.txt"], "nothing created")
    ok(not fsutil.is_dir("/flash/nope"), "the missing root stays missing")
    dev.unmount()


def test_open_without_create_reads_a_data_root_and_adds_nothing():
    import claw_memory

    dev = mount("lfs2", "/flash", blocks=64)
    os.mkdir("/flash/lite")
    os.mkdir("/flash/lite/memory")  # a root with one of its two directories is still a root
    mem = claw_memory.open("/flash/lite", "lite", create=False)
    eq(mem.profile.read("user"), "", "no default profile text for a missing document")
    eq(list(mem.sessions.list()), [], "no sessions")
    eq(_tree("/flash/lite"), ["memory"], "no directory, profile or MEMORY.md created")
    mem = claw_memory.open("/flash/agent")  # the agent's own use creates everything
    mem.close()
    eq(_tree("/flash/agent"), ["memory", "memory/identity.md", "memory/soul.md", "memory/user.md", "search",
                               "sessions"], "create=True (the default)")
    mem = claw_memory.open("/flash/agent", create=False)
    ok(mem.profile.read("user").startswith("# User"), "reads what is there")
    dev.unmount()
