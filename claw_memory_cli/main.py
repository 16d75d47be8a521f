"""`claw-memory`: the host command line of claw_memory.

Every command works on a data root folder, or on a board (`--port`, through mpremote; the
board's data root is copied here first, so reading never changes it). Formats are read and
written by the claw_memory package itself. `--json` prints machine-readable output.
Exit codes: 0 ok, 1 problems found or the command failed, 2 usage, 3 a tool or the board
is not available.
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile

import claw_memory
from claw_memory import messages

from . import board, bundle, cabundle, hosttools
from .ui import EXIT_OK, EXIT_PROBLEMS, EXIT_TOOL, EXIT_USAGE, CliError, Progress, emit_json, table


def _local_copy(args):
    """A temporary copy of the data root (local folder, or pulled from the board)."""
    if args.port:
        tmp = tempfile.mkdtemp(prefix="claw-board-")
        root = board.device_root(args.port, args.device_root)
        board.pull(args.port, root, tmp)
        return tmp, "%s:%s" % (args.port, root)
    if not args.root:
        raise CliError("give a data root folder, or --port for a board", EXIT_USAGE)
    if not os.path.isdir(args.root):
        raise CliError("no data root at %s" % args.root)
    return bundle.readonly_copy(args.root), os.path.abspath(args.root)


def _with_copy(args, fn):
    tmp, where = _local_copy(args)
    try:
        return fn(claw_memory.open(tmp, extract=False), where)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


# -- inspect / stats / verify / repair -------------------------------------------------------


def cmd_inspect(args):
    from claw_memory import inspect as insp

    def run(mem, where):
        mem.store.compact()  # on the copy: recall counts still in the digest show up
        sessions = insp.sessions(show=False, mem=mem)
        for s in sessions:
            msgs = mem.sessions.messages(None, backend="", file=s["file"])
            s["history"] = [messages.display(m) for m in (msgs[-args.last:] if args.last else msgs)]
        out = {"root": where, "sessions": sessions, "items": insp.items(show=False, mem=mem),
               "labels": insp.labels(show=False, mem=mem),
               "profile": {p["name"]: p["text"] for p in insp.profile(show=False, mem=mem)}}
        if args.json:
            emit_json(out)
            return EXIT_OK
        print("data root: %s" % where)
        table(sessions, ("file", "bytes", "records", "pending", "blocked"), "sessions")
        for s in sessions:
            table([dict(r, text=messages.cut(r["text"], 100)) for r in s["history"]], ("role", "text"),
                  "history %s (last %d)" % (s["file"], len(s["history"])))
        table([dict(i, content=messages.cut(i["content"], 80)) for i in out["items"]],
              ("id", "access", "labels", "content"), "items")
        table(out["labels"], ("summary_id", "label", "ref_count"), "label catalog")
        print("\n== profile ==")
        for name, body in out["profile"].items():
            print("--- %s.md (%d bytes)\n%s" % (name, len(body.encode()), body.rstrip()))
        return EXIT_OK

    return _with_copy(args, run)


def cmd_stats(args):
    from claw_memory import inspect as insp

    def run(mem, where):
        rows = insp.stats(show=False, mem=mem)
        if args.json:
            emit_json({"root": where, "layers": rows})
        else:
            print("data root: %s" % where)
            table(rows, ("layer", "bytes", "records", "tokens"),
                  "per layer (tokens: estimated per request; sessions: the largest history)")
        return EXIT_OK

    return _with_copy(args, run)


def _verify(mem):
    report = {"sessions": {}, "store": mem.store.verify()}
    for row in mem.sessions.list():
        report["sessions"][row["file"]] = mem.sessions.verify(file=row["file"])
    return report


def _problems(report):
    out = []
    for name, r in report["sessions"].items():
        for k in ("dropped", "index_entries_dropped", "reindexed", "torn_tail_bytes"):
            if r.get(k):
                out.append("%s: %s=%s" % (name, k, r[k]))
        if r.get("rebuilt_index"):
            out.append("%s: index rebuilt from the log" % name)
    st = report["store"]
    if st["bad_lines"]:
        out.append("memory_records.jsonl: %d unreadable line(s)" % st["bad_lines"])
    if st["index"] != "ok":
        out.append("memory_index.json: %s (rebuilt from the records)" % st["index"])
    for p in st["leftovers"]:
        out.append("%s: leftover of an interrupted write" % os.path.basename(p))
    return out


def cmd_verify(args):
    def run(mem, where):
        report = _verify(mem)
        problems = _problems(report)
        if args.json:
            emit_json({"root": where, "report": report, "problems": problems})
        else:
            print("data root: %s" % where)
            print("\n".join("  would repair: " + p for p in problems) if problems else "  nothing to repair")
        return EXIT_PROBLEMS if problems else EXIT_OK

    return _with_copy(args, run)


_BOARD_REPAIR = """
import json, claw_memory
m = claw_memory.open(%r, extract=False)
r = {"sessions": {}}
for row in m.sessions.list():
    r["sessions"][row["file"]] = m.sessions.repair(file=row["file"])
r["store"] = m.store.repair()
m.close()
print("CLAW-REPAIR " + json.dumps(r))
"""


def cmd_repair(args):
    if args.port:
        root = board.device_root(args.port, args.device_root)
        out = board.exec_code(args.port, _BOARD_REPAIR % root, timeout=600)
        line = [l for l in out.splitlines() if l.startswith("CLAW-REPAIR ")]
        if not line:
            raise CliError("the board did not report a repair: %s" % out.strip()[-200:])
        report, where = json.loads(line[-1][12:]), "%s:%s" % (args.port, root)
    else:
        if not args.root or not os.path.isdir(args.root):
            raise CliError("no data root at %s" % args.root, EXIT_USAGE if not args.root else EXIT_PROBLEMS)
        mem = claw_memory.open(args.root, extract=False)
        report = {"sessions": {}}
        rows = mem.sessions.list()
        bar = Progress(len(rows) + 1, "repair")
        for row in rows:
            report["sessions"][row["file"]] = mem.sessions.repair(file=row["file"])
            bar.step(row["file"])
        report["store"] = mem.store.repair()
        bar.step("memory")
        bar.done()
        mem.close()
        where = os.path.abspath(args.root)
    problems = _problems(report)
    if args.json:
        emit_json({"root": where, "report": report, "repaired": problems})
    else:
        print("data root: %s" % where)
        print("\n".join("  repaired: " + p for p in problems) if problems else "  nothing needed repair")
    return EXIT_OK


# -- export / import --------------------------------------------------------------------------


def cmd_export(args):
    tmp, where = _local_copy(args)
    try:
        counts = bundle.export(tmp, args.output, progress=not args.json)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    if args.json:
        emit_json({"root": where, "bundle": args.output, "counts": counts})
    else:
        print("exported %s to %s: %d sessions (%d records), %d items, %d chat maps" % (
            where, args.output, counts["sessions"], counts["records"], counts["items"], counts["chat_maps"]))
    return EXIT_OK


_BOARD_SWAP = """
import os
src, root = %r, %r
def rm(p):
    if os.stat(p)[0] & 0x4000:
        for n in os.listdir(p):
            rm(p + "/" + n)
        os.rmdir(p)
    else:
        os.remove(p)
for name in ("sessions", "memory"):
    dst = root + "/" + name
    try:
        os.rename(dst, dst + ".replaced")
    except OSError:
        pass
    os.rename(src + "/" + name, dst)
    try:
        rm(dst + ".replaced")
    except OSError:
        pass
os.rmdir(src)
print("CLAW-IMPORT-OK")
"""


def cmd_import(args):
    if args.port:
        staging = tempfile.mkdtemp(prefix="claw-import-")
        try:
            local = os.path.join(staging, "root")
            counts = bundle.import_(args.bundle, local, progress=not args.json)
            root = board.device_root(args.port, args.device_root)
            board.makedirs(args.port, root)
            there = board.exec_code(args.port, "import os\nprint(sorted(n for n in os.listdir(%r) "
                                               "if n in ('sessions', 'memory')))" % root)
            if "'" in there and not args.replace:
                raise CliError("the board already has a data root at %s: pass --replace" % root)
            tmp_dir = root.rstrip("/") + "/claw_import.tmp"
            board.push(args.port, local, tmp_dir)
            out = board.exec_code(args.port, _BOARD_SWAP % (tmp_dir, root.rstrip("/")))
            if "CLAW-IMPORT-OK" not in out:
                raise CliError("the board did not confirm the import: %s" % out.strip()[-200:])
            where = "%s:%s" % (args.port, root)
        finally:
            shutil.rmtree(staging, ignore_errors=True)
    else:
        if not args.target:
            raise CliError("give the target data root folder", EXIT_USAGE)
        counts = bundle.import_(args.bundle, args.target, args.replace, progress=not args.json)
        where = os.path.abspath(args.target)
    if args.json:
        emit_json({"root": where, "counts": counts})
    else:
        print("imported %s into %s: %d sessions (%d records), %d items, %d chat maps" % (
            args.bundle, where, counts["sessions"], counts["records"], counts["items"], counts["chat_maps"]))
    return EXIT_OK


# -- board: deploy / flash --------------------------------------------------------------------


def _compile(dest):
    mpy_cross = hosttools.find("mpy-cross")
    if not mpy_cross:
        raise CliError("mpy-cross not found: run python3 tools/dev.py setup", EXIT_TOOL)
    mods = hosttools.package_modules()
    bar = Progress(len(mods), "mpy-cross")
    total = 0
    for mod in mods:
        out = os.path.join(dest, mod[:-3] + ".mpy")
        os.makedirs(os.path.dirname(out), exist_ok=True)
        # A relative source path: mpy-cross embeds it, and it must not depend on this machine.
        r = subprocess.run([mpy_cross, "-march=xtensawin", "-o", out, mod], capture_output=True,
                           text=True, cwd=hosttools.ROOT)
        if r.returncode:
            raise CliError("mpy-cross failed on %s: %s" % (mod, r.stderr.strip()))
        total += os.path.getsize(out)
        bar.step(mod)
    bar.done()
    return os.path.join(dest, "claw_memory"), len(mods), total


def _ca_bundle(args):
    """(PEM text, labels) of the CA bundle the deploy options ask for, or None."""
    if not (args.ca_common or args.ca_for or args.ca):
        if args.ca_only:
            raise CliError("--ca-only needs --ca-common, --ca-for HOST or --ca FILE", EXIT_USAGE)
        return None
    return cabundle.build(args.ca_common, args.ca_for or (), args.ca or ())


def _install_ca(port, text):
    # certs/ca.pem next to lib/: /certs/ca.pem on an ESP32 (the clients' default), and
    # /flash/certs/ca.pem on the virtual board (their second choice).
    tmp = tempfile.mkdtemp(prefix="claw-ca-")
    try:
        local = os.path.join(tmp, "ca.pem")
        with open(local, "w", encoding="ascii") as f:
            f.write(text)
        board.exec_code(port, "import os\ntry:\n os.mkdir('certs')\nexcept OSError:\n pass")
        board.run(port, "fs", "cp", local, ":certs/ca.pem")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def cmd_deploy(args):
    # Paths on the board are relative to its cwd ("/" on an ESP32, "/flash" on the virtual
    # board, whose "/" is the host's): lib/ is where mip and sys.path expect libraries.
    ca = _ca_bundle(args)  # first: a host that cannot be verified stops before the board
    if args.ca_only:
        result = {"port": args.port, "method": None}
    elif args.mip:
        source = args.mip if args.mip != "local" else os.path.join(hosttools.ROOT, "package.json")
        board.run(args.port, "mip", "install", source, timeout=600)
        result = {"port": args.port, "method": "mip", "source": source}
    else:
        tmp = tempfile.mkdtemp(prefix="claw-deploy-")
        try:
            if args.source:
                pkg = os.path.join(hosttools.ROOT, "claw_memory")
                files, size = len(hosttools.package_modules()), 0
            else:
                pkg, files, size = _compile(tmp)
            board.exec_code(args.port, "import os\ntry:\n os.mkdir('lib')\nexcept OSError:\n pass")
            board.run(args.port, "fs", "cp", "-r", pkg, ":lib/", timeout=600)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
        result = {"port": args.port, "method": "source" if args.source else "mpy", "modules": files,
                  "mpy_bytes": size}
    if args.with_aiohttp:
        board.run(args.port, "mip", "install", "aiohttp", timeout=600)
        result["aiohttp"] = True
    if ca is not None:
        _install_ca(args.port, ca[0])
        result["ca"] = {"path": "certs/ca.pem", "roots": ca[1], "bytes": len(ca[0])}
    if args.json:
        emit_json(result)
        return EXIT_OK
    if result["method"]:
        print("deployed claw_memory to %s (%s)" % (args.port, result["method"]))
    if ca is not None:
        print("installed certs/ca.pem on %s: %d root(s), %d bytes: %s" % (
            args.port, len(ca[1]), len(ca[0]), "; ".join(ca[1])))
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
        if subprocess.run(cmd).returncode:
            raise CliError("esptool failed: %s" % " ".join(cmd[5:]), EXIT_TOOL)
    return EXIT_OK


# -- doctor / demo ------------------------------------------------------------------------------


def cmd_doctor(args):
    missing = 0
    rows = []
    for tool, path, ver, purpose in hosttools.doctor():
        rows.append({"tool": tool, "path": path, "version": ver, "for": purpose})
        if not (path and ver):
            missing += 1
    if args.json:
        emit_json(rows)
    else:
        for r in rows:
            if r["path"] and r["version"]:
                print("ok       %-12s %s (%s)" % (r["tool"], r["version"], r["path"]))
            else:
                why = "not found" if not r["path"] else "found at %s but does not run" % r["path"]
                print("MISSING  %-12s %s; needed for: %s" % (r["tool"], why, r["for"]))
        if missing:
            print("\n%d tool(s) missing: run `python3 tools/dev.py setup` to install them." % missing)
    return EXIT_PROBLEMS if missing else EXIT_OK


def cmd_demo(args):
    from . import demo

    return demo.run(args)


# -- parser -------------------------------------------------------------------------------------


def _root_args(p, positional=True):
    if positional:
        p.add_argument("root", nargs="?", help="data root folder (or use --port)")
    p.add_argument("--port", help="a board's serial port (through mpremote)")
    p.add_argument("--device-root", help="data root on the board (default: what claw_memory picks there)")
    p.add_argument("--json", action="store_true", help="machine-readable output")


def build_parser():
    p = argparse.ArgumentParser(prog="claw-memory", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--version", action="version", version="claw-memory " + claw_memory.__version__)
    sub = p.add_subparsers(dest="cmd", metavar="command")

    d = sub.add_parser("inspect", help="sessions, decoded history, items, labels, profile")
    _root_args(d)
    d.add_argument("--last", type=int, default=10, help="history messages per session (0: all)")
    d.set_defaults(func=cmd_inspect)

    d = sub.add_parser("verify", help="what repair would do (nothing is written)")
    _root_args(d)
    d.set_defaults(func=cmd_verify)

    d = sub.add_parser("repair", help="repair every session and the long-term store")
    _root_args(d)
    d.set_defaults(func=cmd_repair)

    d = sub.add_parser("stats", help="bytes per layer, records, estimated tokens per request")
    _root_args(d)
    d.set_defaults(func=cmd_stats)

    d = sub.add_parser("export", help="write the data root to one JSON-lines bundle")
    _root_args(d)
    d.add_argument("-o", "--output", required=True, help="bundle file to write")
    d.set_defaults(func=cmd_export)

    d = sub.add_parser("import", help="create a data root from a bundle (validated, all or nothing)")
    d.add_argument("bundle")
    d.add_argument("target", nargs="?", help="new data root folder (or use --port)")
    d.add_argument("--port")
    d.add_argument("--device-root")
    d.add_argument("--replace", action="store_true", help="replace an existing data root")
    d.add_argument("--json", action="store_true")
    d.set_defaults(func=cmd_import)

    d = sub.add_parser("deploy", help="install claw_memory on a board")
    d.add_argument("--port", required=True)
    d.add_argument("--source", action="store_true", help="copy the .py sources instead of .mpy")
    d.add_argument("--mip", nargs="?", const="local", metavar="SOURCE",
                   help="install with mpremote mip (default: this checkout's package.json; or "
                        "github:<owner>/<repo>)")
    d.add_argument("--with-aiohttp", action="store_true", help="also mip install aiohttp (board needs network)")
    d.add_argument("--ca-for", action="append", metavar="HOST[:PORT]",
                   help="install (in certs/ca.pem) the CA root that HOST's certificate chains to; "
                        "checked from this computer against certifi; repeatable")
    d.add_argument("--ca-common", action="store_true",
                   help="install a short list of common CA roots (README, TLS: not checked "
                        "against the API hosts)")
    d.add_argument("--ca", action="append", metavar="FILE", help="install these PEM certificates too")
    d.add_argument("--ca-only", action="store_true", help="install only the CA bundle")
    d.add_argument("--json", action="store_true")
    d.set_defaults(func=cmd_deploy)

    d = sub.add_parser("flash", help="write a firmware .bin to an ESP32-S3 at offset 0")
    d.add_argument("firmware")
    d.add_argument("--port", required=True)
    d.add_argument("--baud", type=int, default=460800)
    d.add_argument("--erase", action="store_true", help="erase the whole flash first (data too)")
    d.add_argument("--dry-run", action="store_true", help="print the esptool commands only")
    d.set_defaults(func=cmd_flash)

    d = sub.add_parser("doctor", help="report the host tools found, with versions")
    d.add_argument("--json", action="store_true")
    d.set_defaults(func=cmd_doctor)

    d = sub.add_parser("demo", help="run the agent with memory under the unix port (offline by default)")
    d.add_argument("--llm", choices=("offline", "openai", "anthropic", "openai_responses"),
                   default="offline")
    d.add_argument("--base-url")
    d.add_argument("--model")
    d.add_argument("--keep", help="keep the demo data root in this folder")
    d.set_defaults(func=cmd_demo)
    return p


def main(argv=None):
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return EXIT_USAGE
    try:
        return args.func(args)
    except CliError as e:
        print("claw-memory: %s" % e, file=sys.stderr)
        return e.code
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
