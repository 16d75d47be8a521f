"""`claw-memory`: the host command line of claw_memory.

Every command works on a data root folder (ROOT) or on a board (-p/--port PORT, or the
CLAW_PORT environment variable when no ROOT is given) through its serial REPL; the board's
data root is copied here first, so reading never changes it. Reading commands never create
a data root: `claw-memory init` does. `--json` prints machine-readable output.

Every error is one line on stderr. Exit codes: 0 ok; 1 problems found, the command failed,
or no data root there; 2 usage; 3 a host tool, the board, or claw_memory on the board is not
available; 141 the reader of stdout went away (`| head`), as a command killed by SIGPIPE.
"""

import argparse
import os
import sys

import claw_memory

from . import deploy, doctor, recall, roots, transfer, upkeep, views, why
from .roots import PORT_ENV
from .ui import EXIT_PIPE, EXIT_PROBLEMS, EXIT_USAGE, CliError


def cmd_deploy(args):
    roots.need_port(args)
    return deploy.cmd_deploy(args)


def cmd_flash(args):
    if not args.dry_run:
        roots.need_port(args)
    elif not args.port:
        args.port = os.environ.get(PORT_ENV) or "PORT"
    return deploy.cmd_flash(args)


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
                        "/sd or /flash when mounted, else its current directory)")
    p.add_argument("--json", action="store_true", help="machine-readable output on stdout")


def build_parser():
    p = argparse.ArgumentParser(prog="claw-memory", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("-V", "--version", action="version", version="claw-memory " + claw_memory.__version__,
                   help="print the version and exit")
    # Also before the command, as esptool takes it (`claw-memory -p PORT inspect`).
    p.add_argument("-p", "--port", dest="global_port", metavar="PORT",
                   help="the board's serial port, for the command that follows (as its own -p)")
    sub = p.add_subparsers(dest="cmd", metavar="command")

    d = sub.add_parser("init", help="create a data root (folder or board)")
    _root_args(d)
    d.add_argument("--mode", choices=("full", "lite"), default="full",
                   help="full: long-term store and tools (default); lite: profile and MEMORY.md only")
    d.set_defaults(func=views.cmd_init)

    d = sub.add_parser("inspect", help="sessions, decoded history, items, labels, profile")
    _root_args(d)
    d.add_argument("--last", type=int, default=10, metavar="N",
                   help="history messages shown per session (0: all; default 10)")
    d.set_defaults(func=views.cmd_inspect)

    d = sub.add_parser("stats", help="bytes, records and estimated tokens per layer and per session")
    _root_args(d)
    d.set_defaults(func=views.cmd_stats)

    d = sub.add_parser("context", help="the system prompt, history and tools one request would carry")
    _root_args(d)
    d.add_argument("--session", metavar="ID", help="a session id or file name (default: the one the next request goes to, from the chat maps)")
    d.add_argument("--backend", choices=("openai", "anthropic", "openai_responses"), default="openai",
                   help="the LLM API whose request shape is shown (default openai)")
    d.add_argument("--system", metavar="TEXT", default="",
                   help="your agent's own system prompt (@FILE reads it from a file)")
    d.add_argument("--request", action="store_true",
                   help="print the exact JSON body of the request instead (on a terminal, with "
                        "DEL, C1 and bidi controls written as \\u escapes)")
    d.add_argument("--message", metavar="TEXT", default="",
                   help="the user's message: shows the memories automatic recall adds for it")
    d.set_defaults(func=views.cmd_context)

    recall.register(sub, _root_args, roots.with_copy)
    recall.register_search(sub, _root_args, roots.with_copy)
    why.register(sub, _root_args, roots.with_copy)

    d = sub.add_parser("verify", help="list what repair would fix (writes nothing; exit 1 if anything)")
    _root_args(d)
    d.set_defaults(func=upkeep.cmd_verify)

    d = sub.add_parser("repair", help="repair exactly what verify lists, then verify again")
    _root_args(d)
    d.set_defaults(func=upkeep.cmd_repair)

    d = sub.add_parser("wipe", aliases=["reset"], help="delete a layer or all of a data root (asks first)")
    _root_args(d)
    d.add_argument("--layer", choices=upkeep.LAYERS, default="all",
                   help="what to delete: sessions (histories, their archives and chat maps), archive "
                        "(the old turns compaction archived, kept searchable), long-term (items, "
                        "index, MEMORY.md), profile (back to the default documents) or all (default)")
    d.add_argument("-y", "--yes", action="store_true", help="do not ask for confirmation")
    d.set_defaults(func=upkeep.cmd_wipe)

    d = sub.add_parser("export", help="write the data root to one JSON-lines bundle")
    _root_args(d)
    d.add_argument("-o", "--output", required=True, metavar="FILE",
                   help="bundle file to write (- for stdout)")
    d.set_defaults(func=transfer.cmd_export)

    d = sub.add_parser("import", help="create a data root from a bundle (validated, all or nothing)")
    d.add_argument("bundle", metavar="BUNDLE", help="a bundle written by claw-memory export")
    d.add_argument("target", nargs="?", metavar="TARGET", help="new data root folder (or -p PORT)")
    _port_arg(d)
    d.add_argument("--device-root", metavar="PATH", help="the data root on the board to create")
    d.add_argument("--replace", action="store_true", help="replace an existing data root")
    d.add_argument("--json", action="store_true", help="machine-readable output on stdout")
    d.set_defaults(func=transfer.cmd_import)

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
    d.set_defaults(func=doctor.cmd_doctor)

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
    if args.global_port:
        if not hasattr(args, "port"):
            parser.error("%s takes no board: -p is for the commands that do" % args.cmd)
        if args.port and args.port != args.global_port:
            parser.error("two ports: -p %s before the command and -p %s after it" % (
                args.global_port, args.port))
        args.port = args.global_port
    try:
        rc = args.func(args)
        sys.stdout.flush()
        return rc
    except CliError as e:
        print("claw-memory: %s" % e, file=sys.stderr)
        return e.code
    except BrokenPipeError:
        _quiet_broken_pipe()
        return EXIT_PIPE
    except OSError as e:  # a file the command could not read or write, said in one line
        what = "%s: %s" % (e.filename, e.strerror) if e.filename and e.strerror else str(e)
        print("claw-memory: %s: %s" % (args.cmd, what), file=sys.stderr)
        return EXIT_PROBLEMS
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
