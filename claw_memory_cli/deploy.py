"""`claw-memory deploy` and `claw-memory flash`.

A deploy makes the board's `lib/claw_memory` exactly the deployed set: the new files go to
`lib/claw_memory.new`, the old package (any layout: flat modules, `.py` beside `.mpy`,
subpackages) is removed, the new one renamed into place. With `--mip`, mip installs over the
old package and every file it did not install is removed afterwards. Then the board is
soft-reset and asked which `claw_memory` it imports, from where, with which files: a deploy
that would leave the board running other code fails.
"""

import os
import shutil
import subprocess
import tempfile

import claw_memory

from . import board, cabundle, hosttools
from .ui import EXIT_OK, EXIT_TOOL, EXIT_USAGE, CliError, Progress, emit_json, say, status

LIB = "lib"  # relative to the board's cwd: "/" on an ESP32, "/flash" on the virtual board
PKG = LIB + "/claw_memory"

_SWAP = board._RMTREE + """
for p in (%(pkg)r, %(pkg)r + ".py", %(pkg)r + ".mpy"):
    rmtree(p)
if %(new)r:
    os.rename(%(new)r, %(pkg)r)
print("CLAW-SWAPPED")
"""

_CHECK = """
import os, sys
def _files(p, rel, out):
    for e in os.ilistdir(p):
        if e[1] & 0x4000:
            _files(p + "/" + e[0], rel + e[0] + "/", out)
        else:
            out.append(rel + e[0])
    return out
try:
    files = sorted(_files(%r, "", []))
except OSError:
    files = None
try:
    import claw_memory
    got = (claw_memory.__version__, claw_memory.__file__)
except Exception as e:
    got = (None, repr(e))
print(repr((got, files)))
"""


def _compile(dest):
    """Compile every module for xtensawin into dest/claw_memory; returns the file names."""
    mpy_cross = hosttools.find("mpy-cross")
    if not mpy_cross:
        raise CliError("mpy-cross not found: run python3 tools/dev.py setup", EXIT_TOOL)
    mods = hosttools.package_modules()
    out_files = []
    bar = Progress(len(mods), "mpy-cross", status="compiling %d modules with mpy-cross" % len(mods))
    with bar:
        for mod in mods:
            out = os.path.join(dest, mod[:-3] + ".mpy")
            os.makedirs(os.path.dirname(out), exist_ok=True)
            # A relative source path: mpy-cross embeds it, and it must not depend on this machine.
            r = subprocess.run([mpy_cross, "-march=xtensawin", "-o", out, mod], capture_output=True,
                               text=True, cwd=hosttools.ROOT)
            if r.returncode:
                raise CliError("mpy-cross failed on %s: %s" % (mod, r.stderr.strip()))
            out_files.append(mod[:-3] + ".mpy")
            bar.step(mod)
        bar.done()
    return out_files


def _check(b, expected, version, where):
    """Soft-reset the board, then check what it imports; returns (version, file)."""
    with status("restarting the board to check what it imports"):
        b.soft_reset()
        out = b.exec(_CHECK % PKG).strip().splitlines()
    import ast

    (got_version, got_file), files = ast.literal_eval(out[-1])
    if got_version is None:
        raise CliError("after the deploy the board cannot import claw_memory: %s" % got_file)
    if files is not None and expected is not None and files != sorted(expected):
        extra = sorted(set(files) - set(expected))
        missing = sorted(set(expected) - set(files))
        raise CliError("the board's %s is not the deployed set (extra: %s; missing: %s)" % (
            PKG, ", ".join(extra) or "none", ", ".join(missing) or "none"))
    if "lib/claw_memory/__init__." not in got_file:
        raise CliError("the board imports claw_memory from %s, not from /%s: a frozen or other copy "
                       "shadows the deployed one (docs/FIRMWARE.md: move .frozen behind /lib in "
                       "boot.py)" % (got_file, PKG))
    if version is not None and got_version != version:
        raise CliError("the board runs claw_memory %s, not the deployed %s" % (got_version, version))
    return got_version, got_file


# Every module file of the board's import path (its packages searched to the bottom), and the
# claw_memory it imports: (files, (version, file)).
_SURVEY = """
import os, sys
def _scan(d, out, deep):
    try:
        entries = list(os.ilistdir(d))
    except OSError:
        return
    for e in entries:
        p = d + "/" + e[0]
        if e[1] & 0x4000:
            try:
                inner = [x[0] for x in os.ilistdir(p)]
            except OSError:
                continue
            if deep or "__init__.py" in inner or "__init__.mpy" in inner:
                _scan(p, out, True)
        elif e[0].endswith((".py", ".mpy")):
            out.append(p)
files = []
for d in sys.path:
    if d == ".frozen" or d.startswith("/rom"):
        continue
    _scan(d or os.getcwd(), files, False)
try:
    import claw_memory
    got = (claw_memory.__version__, claw_memory.__file__)
except Exception as e:
    got = (None, repr(e))
print(repr((files, got)))
"""


def shadowed(files):
    """[(X.py, X.mpy)] of the module files that are both in one folder: MicroPython imports
    the .py and never the .mpy (a mip install over a deploy leaves such pairs)."""
    have = set(files)
    return sorted((f, f[:-3] + ".mpy") for f in have if f.endswith(".py") and f[:-3] + ".mpy" in have)


def survey(port):
    """{"pairs": [(X.py, X.mpy)], "version": version or None, "file": where claw_memory is
    imported from, or the import error} of the board at `port`."""
    import ast

    with board.Board(port) as b:
        out = b.exec(_SURVEY, timeout=60).strip().splitlines()
    files, (version, where) = ast.literal_eval(out[-1])
    return {"pairs": shadowed(files), "version": version, "file": where}


def _mip_installed(out):
    """Files of the package that `mpremote mip install` reported, relative to it."""
    got = []
    for line in out.splitlines():
        if line.startswith(("Installing: ", "Exists: ")) and "/claw_memory/" in line:
            got.append(line.split("/claw_memory/", 1)[1].strip())
    return sorted(got)


_PRUNE = board._RMTREE + """
pkg, keep = %r, %r
def prune(p, rel):
    for e in os.ilistdir(p):
        if e[1] & 0x4000:
            prune(p + "/" + e[0], rel + e[0] + "/")
        elif rel + e[0] not in keep:
            os.remove(p + "/" + e[0])
prune(pkg, "")
rmtree(pkg + ".py")
rmtree(pkg + ".mpy")
"""


def ca_bundle(args):
    """(PEM text, labels) of the CA bundle the deploy options ask for, or None."""
    if not (args.ca_common or args.ca_for or args.ca):
        if args.ca_only:
            raise CliError("--ca-only needs --ca-common, --ca-for HOST or --ca FILE", EXIT_USAGE)
        return None
    return cabundle.build(args.ca_common, args.ca_for or (), args.ca or ())


def _install_ca(port, text):
    # certs/ca.pem next to lib/: /certs/ca.pem on an ESP32 (the clients' default), and
    # /flash/certs/ca.pem on the virtual board (their second choice).
    with board.Board(port) as b:
        b.makedirs("certs")
        b.write("certs/ca.pem", text.encode("ascii"))


def cmd_deploy(args):
    port = args.port
    board.check_port(port)  # before minutes of compiling
    result = {"port": port}
    ca = ca_bundle(args)  # first: a host that cannot be verified stops before the board
    if args.ca_only:
        _install_ca(port, ca[0])
        result["ca"] = {"path": "certs/ca.pem", "roots": ca[1], "bytes": len(ca[0])}
        if args.json:
            emit_json(result)
        else:
            print("installed certs/ca.pem on %s: %d root(s), %d bytes: %s" % (
                port, len(ca[1]), len(ca[0]), "; ".join(ca[1])))
        return EXIT_OK
    if args.mip:
        local = args.mip == "local"
        source = os.path.join(hosttools.ROOT, "package.json") if local else args.mip
        with status("mpremote mip install %s" % source):
            out = board.run(port, "mip", "install", source, timeout=600)
        # mip overwrites the files it installs and leaves the others: remove every file of
        # the package it did not install now (a previous layout, .py beside .mpy).
        expected = _mip_installed(out)
        if not expected:
            raise CliError("mpremote mip installed no claw_memory file from %s" % source)
        with board.Board(port) as b:
            b.exec(_PRUNE % (PKG, expected), timeout=120)
        version = claw_memory.__version__ if local else None
        result.update(method="mip", source=source)
    else:
        tmp = tempfile.mkdtemp(prefix="claw-deploy-")
        try:
            if args.source:
                pkg_root = hosttools.ROOT
                files = hosttools.package_modules()
            else:
                pkg_root = tmp
                files = _compile(tmp)
            expected = [f[len("claw_memory/"):] for f in files]
            version = claw_memory.__version__
            blobs = []
            for f in files:
                with open(os.path.join(pkg_root, f), "rb") as fh:
                    blobs.append((f[len("claw_memory/"):], fh.read()))
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
        total = sum(len(d) for _, d in blobs)
        new = PKG + ".new"
        with board.Board(port) as b:
            b.makedirs(LIB)
            b.rmtree(new)  # a deploy cut short before
            dirs = sorted({os.path.dirname(f) for f, _ in blobs} - {""})
            b.makedirs(new)
            for d in dirs:
                b.makedirs(new + "/" + d)
            with Progress(total, "deploy", nbytes=True, status="writing %d files (%s) to %s:%s" % (
                    len(blobs), board.human(total), port, new)) as bar:
                for f, data in blobs:
                    b.write(new + "/" + f, data, step=lambda n, f=f: bar.step(f, n))
                bar.done()
            out = b.exec(_SWAP % {"pkg": PKG, "new": new}, timeout=120)
            if "CLAW-SWAPPED" not in out:
                raise CliError("the board did not confirm the new package: %s" % out.strip()[-200:])
            result.update(method="source" if args.source else "mpy", modules=len(blobs), bytes=total)
    if args.with_aiohttp:
        with status("mpremote mip install aiohttp"):
            board.run(port, "mip", "install", "aiohttp", timeout=600)
        result["aiohttp"] = True
    with board.Board(port) as b:
        got_version, got_file = _check(b, expected, version, port)
    result.update(version=got_version, file=got_file)
    if ca is not None:
        _install_ca(port, ca[0])
        result["ca"] = {"path": "certs/ca.pem", "roots": ca[1], "bytes": len(ca[0])}
    if args.json:
        emit_json(result)
        return EXIT_OK
    print("deployed claw_memory %s to %s (%s): the board imports %s" % (
        got_version, port, result["method"], got_file))
    if ca is not None:
        print("installed certs/ca.pem on %s: %d root(s), %d bytes: %s" % (
            port, len(ca[1]), len(ca[0]), "; ".join(ca[1])))
    return EXIT_OK


def cmd_flash(args):
    if not os.path.isfile(args.firmware):
        raise CliError("no firmware file at %s" % args.firmware)
    with open(args.firmware, "rb") as f:
        if f.read(1) != b"\xe9":
            raise CliError("%s is not an ESP32 firmware image (no 0xE9 magic byte)" % args.firmware)
    esptool = hosttools.find("esptool")
    if not esptool:
        raise CliError("esptool not found: run python3 tools/dev.py setup", EXIT_TOOL)
    base = [esptool, "--chip", "esp32s3", "--port", args.port, "--baud", str(args.baud)]
    steps = ([base + ["erase-flash"]] if args.erase else []) + [base + ["write-flash", "0", args.firmware]]
    for cmd in steps:
        if args.dry_run:
            print(" ".join(cmd))
            continue
        board.check_port(args.port)
        say("running: %s" % " ".join(cmd[1:]))
        if subprocess.run(cmd).returncode:
            raise CliError("esptool failed: %s" % " ".join(cmd[5:]), EXIT_TOOL)
    return EXIT_OK

