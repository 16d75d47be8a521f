#!/usr/bin/env python3
"""Build the ESP32-like MicroPython unix port: 32-bit words (31-bit small ints, 4-byte
pointers, 16-byte GC blocks) and single-precision floats, as the esp32 port has them, with
claw_memory frozen in from the repository's manifest.py (what a board with the CLAW_S3
firmware runs), or without it (`--plain`: the firmware a `deploy` or `mip` install of .mpy
files runs on).

    python3 tools/build_mp32.py [--plain] [--src MICROPYTHON_SRC] [--lib MICROPYTHON_LIB]

MICROPYTHON_SRC  a MicroPython source tree (default $CLAW_MPY_SRC); only read: the parts the
                 unix port needs are copied to build/mp32 and built there.
MICROPYTHON_LIB  a micropython-lib tree with python-ecosys/aiohttp (default $CLAW_MPLIB).

It installs Debian's gcc-i686-linux-gnu with apt-get when the cross compiler is missing (as
root), builds (from a clean copy: about 30 s on two idle cores, 1-2 minutes on busy ones),
checks word size, float32 and where claw_memory is imported from, and prints the binary's path
as the last line. The binary is cached in build/mp32 under a hash of the MicroPython source,
the frozen files (the package, its manifests, asyncio, aiohttp) and the build options: a second
run returns it at once, a changed package rebuilds only the frozen part (a few seconds), and
concurrent runs (pytest-xdist workers) wait for one build under a file lock.
"""

import fcntl
import hashlib
import os
import shutil
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CACHE = os.path.join(ROOT, "build", "mp32")
CROSS = "i686-linux-gnu-"
BUILD_DIR = "build-claw32"
# As the esp32 port: float32 (ports/esp32/mpconfigport.h); static, so the binary needs no
# i386 loader on an amd64 host. Off, as their sources are submodules a trimmed tree lacks or
# they need i386 libraries: btree, ssl/tls (mbedtls), ffi.
MAKE_ARGS = (
    "VARIANT=standard",
    "BUILD=" + BUILD_DIR,
    "CROSS_COMPILE=" + CROSS,
    "MICROPY_PY_BTREE=0",
    "MICROPY_PY_SSL=0",
    "MICROPY_SSL_MBEDTLS=0",
    "MICROPY_PY_FFI=0",
    "CFLAGS_EXTRA=-DMICROPY_FLOAT_IMPL=MICROPY_FLOAT_IMPL_FLOAT",
    "LDFLAGS_EXTRA=-static",
)
# The standard variant freezes asyncio (from the MicroPython tree), mip-cmdline and ssl (from
# micropython-lib; not built here: ssl is off, and a micropython-lib with only aiohttp has no
# mip). claw_memory's manifest adds the package and aiohttp.
MANIFEST = 'include("$(MPY_DIR)/extmod/asyncio")\n'
# What the unix port build reads (the rest of a full checkout, other ports and submodules
# such as lib/mbedtls, is not copied).
_LIBS = ("littlefs", "oofatfs", "uzlib", "re1.5", "libm", "libm_dbl", "crypto-algorithms",
         "mbedtls_errors")
_SKIP_TOP = (".git", "docs", "tests", "examples")

CHECK = """
import sys, struct, vfs
assert struct.calcsize("P") == 4, "pointer size %d" % struct.calcsize("P")
assert sys.maxsize == 2**31 - 1, "maxsize %d" % sys.maxsize
assert 1.0 + 1e-8 == 1.0 and 16777217.0 == 16777216.0, "not float32"
vfs.VfsLfs1; vfs.VfsLfs2; vfs.VfsFat; vfs.VfsPosix
for m in ("asyncio", "json", "struct", "deflate", "hashlib", "os", "select", "socket", "time",
          "binascii", "re", "random", "io", "errno", "array", "collections", "micropython",
          "machine", "_thread"):
    __import__(m)
import hashlib; hashlib.sha256(b"x").digest()
try:
    import claw_memory, aiohttp
except ImportError:
    print("package: none")
else:
    import os
    for m in (claw_memory, aiohttp):
        try:
            os.stat(m.__file__)  # a frozen module's __file__ names no file
            print("package: file", m.__file__)
        except OSError:
            print("package: frozen", m.__file__)
"""


class Unavailable(Exception):
    """The build cannot be attempted here (no source tree, no compiler): a reason to skip."""


def _log(msg):
    print("build_mp32: " + msg, file=sys.stderr, flush=True)


def _tree(src, lib):
    src = src or os.environ.get("CLAW_MPY_SRC")
    lib = lib or os.environ.get("CLAW_MPLIB")
    if not src:
        raise Unavailable("no MicroPython source tree: set CLAW_MPY_SRC or pass --src")
    if not lib:
        raise Unavailable("no micropython-lib tree: set CLAW_MPLIB or pass --lib")
    if not os.path.isfile(os.path.join(src, "py", "mpconfig.h")):
        raise Unavailable("not a MicroPython source tree: %s" % src)
    if not os.path.isfile(os.path.join(lib, "python-ecosys", "aiohttp", "manifest.py")):
        raise Unavailable("no python-ecosys/aiohttp in the micropython-lib tree %s" % lib)
    return os.path.abspath(src), os.path.abspath(lib)


def _wanted(rel):
    """Whether a path of the MicroPython tree (relative, '/'-separated) is copied."""
    parts = rel.split("/")
    if parts[0] in _SKIP_TOP:
        return False
    if parts[0] == "ports" and len(parts) > 1 and parts[1] != "unix":
        return False
    if parts[0] == "lib" and len(parts) > 1 and parts[1] not in _LIBS:
        return False
    # Build output of the tree given (a user's checkout may have built before).
    if len(parts) > 2 and parts[:2] == ["ports", "unix"] and parts[2].startswith("build"):
        return False
    return not (len(parts) > 1 and parts[0] == "mpy-cross" and parts[1].startswith("build"))


def _source_files(src):
    out = []
    for dirpath, dirnames, files in os.walk(src):
        rel = os.path.relpath(dirpath, src).replace(os.sep, "/")
        rel = "" if rel == "." else rel + "/"
        dirnames[:] = sorted(d for d in dirnames if _wanted(rel + d))
        out.extend(rel + f for f in sorted(files) if _wanted(rel + f))
    return out


def _source_id(src, files):
    h = hashlib.sha256()
    for rel in files:
        with open(os.path.join(src, rel), "rb") as f:
            h.update(rel.encode() + b"\0" + hashlib.sha256(f.read()).digest())
    return h.hexdigest()[:16]


def _manifest(plain):
    if plain:
        return MANIFEST
    return MANIFEST + 'include(%r)\n' % os.path.join(ROOT, "manifest.py")


def _frozen_files(src, lib, manifest_path):
    """(target path, full path) of every file the manifest freezes, read with the source
    tree's own manifest parser."""
    sys.path.insert(0, os.path.join(src, "tools"))
    was, sys.dont_write_bytecode = sys.dont_write_bytecode, True  # the tree is only read
    try:
        import manifestfile
    finally:
        sys.path.pop(0)
        sys.dont_write_bytecode = was
    m = manifestfile.ManifestFile(manifestfile.MODE_FREEZE, {
        "MPY_DIR": src, "MPY_LIB_DIR": lib, "PORT_DIR": os.path.join(src, "ports", "unix"),
        "BOARD_DIR": "", "TOP": src})
    m.execute(manifest_path)
    return sorted((r.target_path, r.full_path) for r in m.files())


def _key(src_id, src, lib, plain):
    os.makedirs(CACHE, exist_ok=True)
    text = _manifest(plain)
    path = os.path.join(CACHE, "manifest-%s.py" % ("plain" if plain else "frozen"))
    with open(path, "w") as f:
        f.write(text)
    h = hashlib.sha256(repr((src_id, MAKE_ARGS, text.replace(ROOT, "<repo>"))).encode())
    for target, full in _frozen_files(src, lib, path):
        with open(full, "rb") as f:
            h.update(target.encode() + b"\0" + hashlib.sha256(f.read()).digest())
    return h.hexdigest()[:16], path


def _compiler():
    if shutil.which(CROSS + "gcc"):
        return
    if not shutil.which("apt-get") or os.geteuid() != 0:
        raise Unavailable("%sgcc is missing and cannot be installed here (as root: apt-get "
                          "install gcc-i686-linux-gnu)" % CROSS)
    cmd = ["apt-get", "install", "-y", "-q", "gcc-i686-linux-gnu"]
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    _log("installing Debian's gcc-i686-linux-gnu")
    if subprocess.run(cmd, env=env, stdout=sys.stderr).returncode != 0:
        subprocess.run(["apt-get", "update", "-q"], env=env, stdout=sys.stderr)
        if subprocess.run(cmd, env=env, stdout=sys.stderr).returncode != 0:
            raise Unavailable("apt-get could not install gcc-i686-linux-gnu")
    if not shutil.which(CROSS + "gcc"):
        raise Unavailable("gcc-i686-linux-gnu installed, but %sgcc is not on PATH" % CROSS)


def _copy(src, files, dest):
    tmp = dest + ".tmp"
    shutil.rmtree(tmp, ignore_errors=True)
    for rel in files:
        out = os.path.join(tmp, rel)
        os.makedirs(os.path.dirname(out), exist_ok=True)
        shutil.copyfile(os.path.join(src, rel), out)
        # Scripts the build runs (e.g. py/makeversionhdr.py is run with python; some are
        # executed directly): keep the execute bit, add write bits (shared/ has none in CI).
        os.chmod(out, (os.stat(os.path.join(src, rel)).st_mode & 0o555) | 0o200)
    os.replace(tmp, dest)


def check(binary, plain):
    """Run the checks on a built binary; returns where claw_memory was imported from."""
    env = dict(os.environ, MICROPYPATH=".frozen")  # frozen modules only
    r = subprocess.run([binary, "-c", CHECK], capture_output=True, text=True, env=env,
                       cwd=CACHE, timeout=60)
    if r.returncode != 0:
        raise RuntimeError("check of %s failed:\n%s%s" % (binary, r.stdout, r.stderr))
    where = [line[9:] for line in r.stdout.splitlines() if line.startswith("package: ")]
    want = ["none"] if plain else ["frozen claw_memory/__init__.py", "frozen aiohttp/__init__.py"]
    if where != want:
        raise RuntimeError("%s: claw_memory and aiohttp import as %s, not %s" % (binary, where, want))
    return ", ".join(where)


def build(plain=False, src=None, lib=None):
    """Path of the cached binary, built first when needed. Raises Unavailable when it cannot
    be built here, RuntimeError (or CalledProcessError) when the build or its checks fail."""
    src, lib = _tree(src, lib)
    files = _source_files(src)
    src_id = _source_id(src, files)
    os.makedirs(CACHE, exist_ok=True)
    with open(os.path.join(CACHE, ".lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes
        key, manifest = _key(src_id, src, lib, plain)
        name = "micropython-%s-%s" % ("plain" if plain else "frozen", key)
        binary = os.path.join(CACHE, name)
        if os.path.exists(binary):
            return binary
        _compiler()
        for tool in ("make", "gcc"):
            if not shutil.which(tool):
                raise Unavailable("%s is missing (needed to build mpy-cross and the port)" % tool)
        tree = os.path.join(CACHE, "src-" + src_id)
        if not os.path.isdir(tree):
            _log("copying %s to %s" % (src, tree))
            _copy(src, files, tree)
        jobs = os.environ.get("JOBS", "2")
        # mpy-cross for the host first: the port's own sub-make would inherit CROSS_COMPILE.
        if not os.path.exists(os.path.join(tree, "mpy-cross", "build", "mpy-cross")):
            _log("make -C mpy-cross")
            subprocess.run(["make", "-C", os.path.join(tree, "mpy-cross"), "-j" + jobs],
                           stdout=sys.stderr, check=True)
        # makemanifest.py regenerates the frozen content only when a listed file is newer
        # than it: a module dropped from the manifest, or a variant with fewer files, would
        # keep the old content. The objects are reused; the frozen part is made afresh.
        port_build = os.path.join(tree, "ports", "unix", BUILD_DIR)
        shutil.rmtree(os.path.join(port_build, "frozen_mpy"), ignore_errors=True)
        for stale in ("frozen_content.c", "frozen_content.o"):
            if os.path.exists(os.path.join(port_build, stale)):
                os.remove(os.path.join(port_build, stale))
        _log("make -C ports/unix (32-bit, float32, %s)" % ("plain" if plain else "claw_memory frozen"))
        subprocess.run(["make", "-C", os.path.join(tree, "ports", "unix"), "-j" + jobs]
                       + list(MAKE_ARGS) + ["MPY_LIB_DIR=" + lib, "FROZEN_MANIFEST=" + manifest],
                       stdout=sys.stderr, check=True)
        out = os.path.join(port_build, "micropython")
        check(out, plain)
        shutil.copyfile(out, binary + ".tmp")
        os.chmod(binary + ".tmp", 0o755)
        os.replace(binary + ".tmp", binary)
        _prune(os.path.basename(tree), name)
        return binary


def _prune(tree, name):
    """Drop the source copies and binaries of this variant that other keys left."""
    variant = name.rsplit("-", 1)[0] + "-"
    for entry in os.listdir(CACHE):
        path = os.path.join(CACHE, entry)
        if entry.startswith("src-") and entry != tree:
            shutil.rmtree(path, ignore_errors=True)
        elif entry.startswith(variant) and entry != name:
            os.remove(path)


def main(argv):
    import argparse

    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--plain", action="store_true", help="without claw_memory frozen in")
    p.add_argument("--src", help="MicroPython source tree (default $CLAW_MPY_SRC)")
    p.add_argument("--lib", help="micropython-lib tree (default $CLAW_MPLIB)")
    a = p.parse_args(argv)
    try:
        binary = build(a.plain, a.src, a.lib)
    except Unavailable as e:
        _log("cannot build here: %s" % e)
        return 2
    _log("checked: 32-bit, float32; package: " + check(binary, a.plain))
    print(binary)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
