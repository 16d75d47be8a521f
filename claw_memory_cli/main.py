"""`claw-memory`: the host command line of claw_memory.

Every command works on a data root folder (ROOT) or on a board (-p/--port PORT, or the
CLAW_PORT environment variable when no ROOT is given) through its serial REPL; the board's
data root is copied here first, so reading never changes it. Reading commands never create
a data root: `claw-memory init` does. `--json` prints machine-readable output.

Exit codes: 0 ok; 1 problems found, the command failed, or no data root there; 2 usage;
3 a host tool, the board, or claw_memory on the board is not available.
"""

import argparse
import contextlib
import os
import shutil
import sys
import tempfile

import claw_memory
from claw_memory import messages

from . import board, bundle, check, deploy, hosttools, recall
from .ui import (EXIT_OK, EXIT_PROBLEMS, EXIT_USAGE, CliError, confirm, emit_json, say,
                 status, table)

PORT_ENV = "CLAW_PORT"


# -- where: a folder or a board ---------------------------------------------------------------


def _target(args):
    """Check ROOT / --port / --device-root; a board's port also comes from $CLAW_PORT."""
    root = getattr(args, "root", None)
    if root and args.port:
        raise CliError("give a data root folder or a board's port (-p), not both", EXIT_USAGE)
    if root:
        if args.device_root:
            raise CliError("--device-root is for a board (-p PORT); a folder is its own data root",
                           EXIT_USAGE)
        return
    args.port = args.port or os.environ.get(PORT_ENV)
    if not args.port:
        raise CliError("give a data root folder, or -p PORT for a board (or set %s)" % PORT_ENV,
                       EXIT_USAGE)


def _need_port(args):
    args.port = args.port or os.environ.get(PORT_ENV)
    if not args.port:
        raise CliError("give the board's serial port with -p PORT (or set %s)" % PORT_ENV, EXIT_USAGE)


def _folder(root):
    """The absolute path of an existing data root folder; CliError (exit 1) otherwise."""
    if not os.path.isdir(root):
        why = "a file, not a folder" if os.path.exists(root) else "no such folder"
    elif not check.is_data_root(root):
        why = "it has no sessions/ or memory/ folder"
    else:
        return os.path.abspath(root)
    raise CliError("no data root at %s: %s (`claw-memory init %s` creates one)" % (root, why, root))


def _local_copy(args):
    """(a temporary copy of the data root, where it is): a folder, or pulled from the board."""
    _target(args)
    if args.root:
        where = _folder(args.root)
        return bundle.readonly_copy(where), where
    tmp = tempfile.mkdtemp(prefix="claw-board-")
    try:
        with board.Board(args.port) as b:
            root = board.device_root(b, args.device_root)
            where = "%s:%s" % (args.port, root)
            b.pull(root, tmp, where)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return tmp, where


def _with_copy(args, fn):
    tmp, where = _local_copy(args)
    try:
        return fn(check.open_root(tmp), where)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


# -- init / inspect / stats -------------------------------------------------------------------


_BOARD_INIT = """
import claw_memory
from claw_memory.paths import Layout
print("CLAW-EXISTED" if Layout(%r).exists() else "CLAW-NEW")
claw_memory.open(%r, %r, extract=False).close()
"""


def cmd_init(args):
    _target(args)
    if args.root:
        where = os.path.abspath(args.root)
        existed = check.is_data_root(args.root)
        if not existed:
            claw_memory.open(args.root, args.mode, extract=False).close()
    else:
        with board.Board(args.port) as b:
            root = board.device_root(b, args.device_root)
            where = "%s:%s" % (args.port, root)
            existed = "CLAW-EXISTED" in b.exec(_BOARD_INIT % (root, root, args.mode))
    if args.json:
        emit_json({"root": where, "created": not existed})
    elif existed:
        print("%s is already a data root: nothing changed" % where)
    else:
        print("created a %s data root at %s (sessions/, memory/ and the default profile)" % (args.mode, where))
    return EXIT_OK


_SESSION_COLS = ("id", "file", "bytes", "records", "pending", "blocked")


def _shown(rows):
    return [dict(r, id=r["id"] or "?") for r in rows]


def _by_id(rows):
    # The library lists in directory order (streamed on a board); the host sorts.
    return sorted(rows, key=lambda r: (r["id"] is None, r["id"] or "", r["file"]))


def cmd_inspect(args):
    from claw_memory import inspect as insp

    def run(mem, where):
        if mem.store is not None:
            mem.store.compact()  # on the copy: recall counts still in the digest show up
        sessions = _by_id(insp.sessions(rows=True, mem=mem))
        for s in sessions:
            msgs = (mem.sessions.messages(None, backend="", file=s["file"], tokens=0)
                    if s["bytes"] or s["pending"] else [])
            s["history"] = [messages.display(m) for m in (msgs[-args.last:] if args.last else msgs)]
        out = {"root": where, "mode": mem.mode, "sessions": sessions, "items": insp.items(rows=True, mem=mem),
               "labels": insp.labels(rows=True, mem=mem),
               "profile": {p["name"]: p["text"] for p in insp.profile(rows=True, mem=mem)}}
        if args.json:
            emit_json(out)
            return EXIT_OK
        print("data root: %s (%s)" % (where, mem.mode))
        table(_shown(sessions), _SESSION_COLS, "sessions")
        for s in sessions:
            table([dict(r, text=messages.cell(r["text"], 100)) for r in s["history"]], ("role", "text"),
                  "history of %s (%s), last %d" % (s["id"] or "?", s["file"], len(s["history"])))
        table([dict(i, content=messages.cell(i["content"], 80)) for i in out["items"]],
              ("id", "access", "labels", "content"), "items")
        table(out["labels"], ("summary_id", "label", "ref_count"), "label catalog")
        print("\n== profile ==")
        for name, body in out["profile"].items():
            print("--- %s.md (%d bytes)\n%s" % (name, len(body.encode()), body.rstrip() or "(missing)"))
        return EXIT_OK

    return _with_copy(args, run)


def cmd_stats(args):
    from claw_memory import inspect as insp

    def run(mem, where):
        st = insp.stats(rows=True, mem=mem)
        st["sessions"] = _by_id(st["sessions"])
        if args.json:
            emit_json({"root": where, "layers": st["layers"], "sessions": st["sessions"]})
            return EXIT_OK
        print("data root: %s" % where)
        table(st["layers"], ("layer", "bytes", "records", "tokens"),
              "per layer (tokens: estimated per request; sessions: the largest history, "
              "within the token budget)")
        table(_shown(st["sessions"]), ("id", "file", "bytes", "records", "tokens"),
              "every session (tokens: its whole history)")
        return EXIT_OK

    return _with_copy(args, run)


def cmd_context(args):
    from claw_memory import inspect as insp
    from claw_memory.llm import request_body

    system = args.system
    if system.startswith("@"):
        with open(system[1:], encoding="utf-8") as f:
            system = f.read()

    def run(mem, where):
        try:
            ctx = insp.context(args.session, system, args.backend, rows=True, mem=mem,
                               message=args.message)
        except ValueError as e:
            raise CliError(str(e))
        if args.request:
            tools = mem.tools()
            body = request_body(args.backend, ctx["system"], ctx["messages"], tools)
            out = getattr(sys.stdout, "buffer", None)
            if out is not None:
                out.write(body + b"\n")
            else:
                sys.stdout.write(body.decode() + "\n")
            return EXIT_OK
        if args.json:
            emit_json(dict(ctx, root=where, backend=args.backend))
            return EXIT_OK
        print("data root: %s, session: %s, backend: %s" % (where, ctx["session"] or "(none)", args.backend))
        print("\n== system prompt ==\n%s" % ctx["system"])
        table([dict(r, text=messages.cell(r["text"], 100)) for r in (messages.display(x) for x in ctx["messages"])],
              ("role", "text"), "messages (after the token budget)")
        print("\n== tools ==\n%s" % ", ".join(d["function"]["name"] for d in ctx["tools"]))
        table(ctx["layers"] + [{"layer": "total", "tokens": ctx["total"]}], ("layer", "tokens", "messages"),
              "estimated tokens per layer")
        if args.message:
            print("\nmemories this message brings in: %s" % (", ".join(ctx["recalled"]) or "none"))
        return EXIT_OK

    return _with_copy(args, run)


# -- verify / repair ----------------------------------------------------------------------------


def _examine_copy(args):
    """(report, problems, where, mode) of a fresh copy of the data root."""
    tmp, where = _local_copy(args)
    try:
        mode = check.mode_of(tmp)
        report, problems = check.examine(tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return report, problems, where, mode


def cmd_verify(args):
    report, problems, where, _ = _examine_copy(args)
    if args.json:
        emit_json({"root": where, "report": report, "problems": problems})
    else:
        print("data root: %s" % where)
        print("\n".join(["  would repair: " + p for p in problems] or ["  nothing to repair"]))
    return EXIT_PROBLEMS if problems else EXIT_OK


def cmd_repair(args):
    report, problems, where, mode = _examine_copy(args)
    left = []
    if problems:
        files, store = check.needs(report, problems)
        if args.root:
            check.repair_folder(args.root, files, store)
        else:
            root = where.split(":", 1)[1] if not args.device_root else args.device_root
            with board.Board(args.port) as b, status("repairing on the board"):
                out = b.exec(check.BOARD_REPAIR % (root, mode, files, store), timeout=600)
            if "CLAW-REPAIRED" not in out:
                raise CliError("the board did not confirm the repair: %s" % out.strip()[-200:])
            args.device_root = root
        _, left, _, _ = _examine_copy(args)
    repaired = [p for p in problems if p not in left]
    if args.json:
        emit_json({"root": where, "report": report, "repaired": repaired, "not_repaired": left})
    else:
        print("data root: %s" % where)
        lines = ["  repaired: " + p for p in repaired] + ["  NOT repaired: " + p for p in left]
        print("\n".join(lines or ["  nothing needed repair"]))
    return EXIT_PROBLEMS if left else EXIT_OK


# -- wipe -----------------------------------------------------------------------------------------

_PROFILE = ("user.md", "soul.md", "identity.md")
LAYERS = ("all", "sessions", "long-term", "profile")


def _layer_of(path):
    """The layer a file of the data root belongs to (path relative to the root)."""
    if path.startswith("sessions/"):
        return "sessions"
    base = path.rsplit("/", 1)[-1]
    if base.endswith(".tmp"):
        base = base[:-4]
    return "profile" if base in _PROFILE else "long-term"


def _listing(root):
    """(dirs, [(path, size)]) of sessions/ and memory/ under a folder, paths relative to it."""
    dirs, files = [], []
    for top in ("sessions", "memory"):
        for dirpath, dirnames, names in os.walk(os.path.join(root, top)):
            rel = os.path.relpath(dirpath, root).replace(os.sep, "/")
            dirs.append(rel)
            files += [(rel + "/" + n, os.path.getsize(os.path.join(dirpath, n))) for n in names]
    return dirs, files


def cmd_wipe(args):
    _target(args)
    with contextlib.ExitStack() as stack:
        b = None
        if args.root:
            where = _folder(args.root)
            dirs, files = _listing(where)
        else:
            b = stack.enter_context(board.Board(args.port))
            root = board.device_root(b, args.device_root)
            where = "%s:%s" % (args.port, root)
            listing = b.listing(root)
            if not listing or not listing[0]:
                raise CliError("no data root at %s: nothing to wipe" % where)
            dirs, files = listing
        chosen = [(p, n) for p, n in files if args.layer == "all" or _layer_of(p) == args.layer]
        what = "every layer" if args.layer == "all" else "the %s layer" % args.layer
        if not chosen:
            print("%s of %s holds no file: nothing to wipe" % (what, where))
            return EXIT_OK
        size = sum(n for _, n in chosen)
        question = "wipe %s of the data root at %s: %d files, %s? This cannot be undone" % (
            what, where, len(chosen), board.human(size))
        if not confirm(question, args.yes):
            print("nothing wiped")
            return EXIT_PROBLEMS
        # Sub-folders of sessions/ (chat_map) go too; sessions/ and memory/ stay: still a data root.
        sub = [d for d in dirs if "/" in d] if args.layer in ("all", "sessions") else []
        sub = [d for d in sub if d.startswith("sessions/")]
        if b is not None:
            base = root.rstrip("/")
            b.remove([base + "/" + p for p, _ in chosen], [base + "/" + d for d in sub])
        else:
            for p, _ in chosen:
                os.remove(os.path.join(where, *p.split("/")))
            for d in sorted(sub, key=len, reverse=True):
                shutil.rmtree(os.path.join(where, *d.split("/")), ignore_errors=True)
    if args.json:
        emit_json({"root": where, "layer": args.layer, "files": len(chosen), "bytes": size})
    else:
        print("wiped %s of %s: %d files, %s%s" % (
            what, where, len(chosen), board.human(size), " (the default profile comes back on the next open)"
            if args.layer in ("all", "profile") else ""))
    return EXIT_OK


# -- export / import --------------------------------------------------------------------------


def cmd_export(args):
    tmp, where = _local_copy(args)
    try:
        counts = bundle.export(tmp, args.output, progress=not args.json)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    to = "stdout" if args.output == "-" else args.output
    if args.json and args.output != "-":
        emit_json({"root": where, "bundle": args.output, "counts": counts})
    else:
        msg = "exported %s to %s: %d sessions (%d records), %d items, %d chat maps" % (
            where, to, counts["sessions"], counts["records"], counts["items"], counts["chat_maps"])
        if args.output == "-":
            say(msg)
        else:
            print(msg)
    return EXIT_OK


_BOARD_SWAP = board._RMTREE + """
src, root = %r, %r
for name in ("sessions", "memory"):
    dst = root + "/" + name
    rmtree(dst + ".replaced")
    try:
        os.rename(dst, dst + ".replaced")
    except OSError:
        pass
    os.rename(src + "/" + name, dst)
    rmtree(dst + ".replaced")
os.rmdir(src)
print("CLAW-IMPORT-OK")
"""


def cmd_import(args):
    if args.port and args.target:
        raise CliError("give a target folder or a board's port (-p), not both", EXIT_USAGE)
    if not args.target:
        _need_port(args)
    if args.port:
        staging = tempfile.mkdtemp(prefix="claw-import-")
        try:
            local = os.path.join(staging, "root")
            counts = bundle.import_(args.bundle, local, progress=not args.json)
            with board.Board(args.port) as b:
                root = board.device_root(b, args.device_root)
                where = "%s:%s" % (args.port, root)
                listing = b.listing(root)
                if listing and listing[0] and not args.replace:
                    raise CliError("the board already has a data root at %s: pass --replace" % root)
                base = root.rstrip("/")
                b.makedirs(root)
                tmp_dir = base + "/claw_import.tmp"
                b.rmtree(tmp_dir)
                b.push(local, tmp_dir, where)
                out = b.exec(_BOARD_SWAP % (tmp_dir, base), timeout=120)
            if "CLAW-IMPORT-OK" not in out:
                raise CliError("the board did not confirm the import: %s" % out.strip()[-200:])
        finally:
            shutil.rmtree(staging, ignore_errors=True)
    else:
        counts = bundle.import_(args.bundle, args.target, args.replace, progress=not args.json)
        where = os.path.abspath(args.target)
    if args.json:
        emit_json({"root": where, "counts": counts})
    else:
        print("imported %s into %s: %d sessions (%d records), %d items, %d chat maps" % (
            args.bundle, where, counts["sessions"], counts["records"], counts["items"], counts["chat_maps"]))
    return EXIT_OK


# -- deploy / flash / doctor / demo ---------------------------------------------------------------


def cmd_deploy(args):
    _need_port(args)
    return deploy.cmd_deploy(args)


def cmd_flash(args):
    if not args.dry_run:
        _need_port(args)
    elif not args.port:
        args.port = os.environ.get(PORT_ENV) or "PORT"
    return deploy.cmd_flash(args)


def cmd_doctor(args):
    missing = 0
    rows = []
    for tool, path, ver, purpose in hosttools.doctor():
        rows.append({"tool": tool, "path": path, "version": ver, "for": purpose})
        if not (path and ver):
            missing += 1
    got = None
    if args.port:  # only when asked: a board is not one of the host's tools
        got = deploy.survey(args.port)
        rows.append({"tool": "board", "path": args.port,
                     "version": got["version"] and "claw_memory %s" % got["version"],
                     "file": got["file"], "for": "the library the board runs",
                     "shadowed": [list(p) for p in got["pairs"]]})
    board_bad = got is not None and (not got["version"] or got["pairs"])
    if args.json:
        emit_json(rows)
        return EXIT_PROBLEMS if missing or board_bad else EXIT_OK
    for r in rows:
        if r["tool"] == "board":
            continue
        if r["path"] and r["version"]:
            print("ok       %-12s %s (%s)" % (r["tool"], r["version"], r["path"]))
        else:
            why = "not found" if not r["path"] else "found at %s but does not run" % r["path"]
            print("MISSING  %-12s %s; needed for: %s" % (r["tool"], why, r["for"]))
    if got is not None:
        if got["version"]:
            print("ok       %-12s claw_memory %s from %s (%s)" % ("board", got["version"], got["file"],
                                                               args.port))
        else:
            print("MISSING  %-12s claw_memory does not import on %s (%s): `claw-memory deploy -p %s`"
                  % ("board", args.port, got["file"], args.port))
        for py, mpy in got["pairs"]:
            print("WARNING  %s is beside %s: MicroPython imports the .py, never the .mpy" % (py, mpy))
    if missing:
        print("\n%d tool(s) missing: they are dependencies of the claw-memory package (reinstall "
              "it; in a checkout: `python3 tools/dev.py setup`)." % missing)
    if got is not None and got["pairs"]:
        print("\n%d module(s) on %s shadow their .mpy (a mip install over a deploy?): "
              "`claw-memory deploy -p %s` makes lib/claw_memory exactly the deployed set again, "
              "or remove one file of each pair." % (len(got["pairs"]), args.port, args.port))
    return EXIT_PROBLEMS if missing or board_bad else EXIT_OK


def cmd_demo(args):
    from . import demo

    return demo.run(args)


# -- parser -------------------------------------------------------------------------------------


def _port_arg(p):
    p.add_argument("-p", "--port", metavar="PORT",
                   help="the board's serial port, e.g. /dev/ttyACM0, COM3, or auto for the first "
                        "USB serial port (default: $%s)" % PORT_ENV)


def _root_args(p, positional=True):
    if positional:
        p.add_argument("root", nargs="?", metavar="ROOT",
                       help="a data root folder (or -p PORT for a board's data root)")
    _port_arg(p)
    p.add_argument("--device-root", metavar="PATH",
                   help="the data root on the board (default: the one claw_memory picks there: "
                        "/sd, /flash or /)")
    p.add_argument("--json", action="store_true", help="machine-readable output on stdout")


def build_parser():
    p = argparse.ArgumentParser(prog="claw-memory", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--version", action="version", version="claw-memory " + claw_memory.__version__,
                   help="print the version and exit")
    sub = p.add_subparsers(dest="cmd", metavar="command")

    d = sub.add_parser("init", help="create a data root (folder or board)")
    _root_args(d)
    d.add_argument("--mode", choices=("full", "lite"), default="full",
                   help="full: long-term store and tools (default); lite: profile and MEMORY.md only")
    d.set_defaults(func=cmd_init)

    d = sub.add_parser("inspect", help="sessions, decoded history, items, labels, profile")
    _root_args(d)
    d.add_argument("--last", type=int, default=10, metavar="N",
                   help="history messages shown per session (0: all; default 10)")
    d.set_defaults(func=cmd_inspect)

    d = sub.add_parser("stats", help="bytes, records and estimated tokens per layer and per session")
    _root_args(d)
    d.set_defaults(func=cmd_stats)

    d = sub.add_parser("context", help="the system prompt, history and tools one request would carry")
    _root_args(d)
    d.add_argument("--session", metavar="ID", help="a session id or file name (default: the latest)")
    d.add_argument("--backend", choices=("openai", "anthropic", "openai_responses"), default="openai",
                   help="the LLM API whose request shape is shown (default openai)")
    d.add_argument("--system", metavar="TEXT", default="",
                   help="your agent's own system prompt (@FILE reads it from a file)")
    d.add_argument("--request", action="store_true",
                   help="print the exact JSON body of the request instead")
    d.add_argument("--message", metavar="TEXT", default="",
                   help="the user's message: shows the memories automatic recall adds for it")
    d.set_defaults(func=cmd_context)

    recall.register(sub, _root_args, _with_copy)

    d = sub.add_parser("verify", help="list what repair would fix (writes nothing; exit 1 if anything)")
    _root_args(d)
    d.set_defaults(func=cmd_verify)

    d = sub.add_parser("repair", help="repair exactly what verify lists, then verify again")
    _root_args(d)
    d.set_defaults(func=cmd_repair)

    d = sub.add_parser("wipe", aliases=["reset"], help="delete a layer or all of a data root (asks first)")
    _root_args(d)
    d.add_argument("--layer", choices=LAYERS, default="all",
                   help="what to delete: sessions (histories and chat maps), long-term (items, index, "
                        "MEMORY.md), profile (back to the default documents) or all (default)")
    d.add_argument("-y", "--yes", action="store_true", help="do not ask for confirmation")
    d.set_defaults(func=cmd_wipe)

    d = sub.add_parser("export", help="write the data root to one JSON-lines bundle")
    _root_args(d)
    d.add_argument("-o", "--output", required=True, metavar="FILE",
                   help="bundle file to write (- for stdout)")
    d.set_defaults(func=cmd_export)

    d = sub.add_parser("import", help="create a data root from a bundle (validated, all or nothing)")
    d.add_argument("bundle", metavar="BUNDLE", help="a bundle written by claw-memory export")
    d.add_argument("target", nargs="?", metavar="TARGET", help="new data root folder (or -p PORT)")
    _port_arg(d)
    d.add_argument("--device-root", metavar="PATH", help="the data root on the board to create")
    d.add_argument("--replace", action="store_true", help="replace an existing data root")
    d.add_argument("--json", action="store_true", help="machine-readable output on stdout")
    d.set_defaults(func=cmd_import)

    d = sub.add_parser("deploy", help="install claw_memory on a board (replacing the old package)")
    _port_arg(d)
    d.add_argument("--source", action="store_true", help="copy the .py sources instead of .mpy")
    d.add_argument("--mip", nargs="?", const="local", metavar="SOURCE",
                   help="install with mpremote mip (default: this checkout's package.json; or "
                        "github:<owner>/<repo>)")
    d.add_argument("--with-aiohttp", action="store_true",
                   help="also mip install aiohttp for the LLM clients (the board needs network)")
    d.add_argument("--ca-for", action="append", metavar="HOST[:PORT]",
                   help="install (in certs/ca.pem) the CA root that HOST's certificate chains to; "
                        "checked from this computer against certifi; repeatable")
    d.add_argument("--ca-common", action="store_true",
                   help="install a short list of common CA roots (README, TLS: not checked "
                        "against the API hosts)")
    d.add_argument("--ca", action="append", metavar="FILE", help="install these PEM certificates too")
    d.add_argument("--ca-only", action="store_true", help="install only the CA bundle")
    d.add_argument("--json", action="store_true", help="machine-readable output on stdout")
    d.set_defaults(func=cmd_deploy)

    d = sub.add_parser("flash", help="write a firmware .bin to an ESP32-S3 at offset 0")
    d.add_argument("firmware", metavar="FIRMWARE", help="the merged image, e.g. build-CLAW_S3/firmware.bin")
    _port_arg(d)
    d.add_argument("--baud", type=int, default=460800, help="serial speed for esptool (default 460800)")
    d.add_argument("--erase", action="store_true", help="erase the whole flash first (the data too)")
    d.add_argument("--dry-run", action="store_true", help="print the esptool commands only")
    d.set_defaults(func=cmd_flash)

    d = sub.add_parser("doctor", help="report the host tools found, with versions (and a board's "
                                      "library with -p)")
    d.add_argument("-p", "--port", metavar="PORT",
                   help="also check the board on this serial port: the claw_memory it imports, and "
                        "module files X.py beside X.mpy (the .py shadows the .mpy)")
    d.add_argument("--json", action="store_true", help="machine-readable output on stdout")
    d.set_defaults(func=cmd_doctor)

    d = sub.add_parser("demo", help="run the agent with memory under the unix port (offline by default)")
    d.add_argument("--llm", choices=("offline", "openai", "anthropic", "openai_responses"),
                   default="offline",
                   help="offline (default: a scripted model, no network) or a real endpoint")
    d.add_argument("--base-url", help="API base URL of an OpenAI- (chat or Responses) or Anthropic-compatible server")
    d.add_argument("--model", help="model name for a real endpoint")
    d.add_argument("--keep", metavar="DIR", help="keep the demo's data root in DIR/root")
    d.set_defaults(func=cmd_demo)
    return p


def _quiet_broken_pipe():
    # The reader went away (`claw-memory inspect --json | head`): no traceback, and none at
    # exit when Python flushes stdout.
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):
        pass


def main(argv=None):
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return EXIT_USAGE
    try:
        rc = args.func(args)
        sys.stdout.flush()
        return rc
    except CliError as e:
        print("claw-memory: %s" % e, file=sys.stderr)
        return e.code
    except BrokenPipeError:
        _quiet_broken_pipe()
        return EXIT_PROBLEMS
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
