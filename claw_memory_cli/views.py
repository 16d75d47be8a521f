"""The commands that show a data root: init (creates one), inspect, stats, context."""

import os
import sys

import claw_memory
from claw_memory import messages
from claw_memory.text import shown

from . import board, check, roots, ui
from .ui import EXIT_OK, EXIT_USAGE, CliError, emit_json, json_safe, no_session, table


# A new root, on a board as on a folder (cmd_init): FULL with the store opened, which writes
# ESP-Claw's initial files (claw_memory_init), so that its files show the mode it was made for
# (paths.Layout.mode), as LITE's MEMORY.md does.
_CREATE = """
import claw_memory
from claw_memory.paths import Layout
if Layout(%r).exists():
    print("CLAW-EXISTED")
else:
    m = claw_memory.open(%r, %r, extract=False)
    if m.store is not None:
        m.store.count()
    m.close()
    print("CLAW-NEW")
"""


def cmd_init(args):
    roots.target(args)
    if args.root:
        where = os.path.abspath(args.root)
        if os.path.exists(args.root) and not os.path.isdir(args.root):
            raise CliError("%s is a file: `claw-memory init` needs a folder (a new one, or a data "
                           "root)" % args.root)
        roots.creatable(args.root, "a data root")
        existed = check.is_data_root(args.root)
        if not existed:
            m = claw_memory.open(args.root, args.mode, extract=False)
            if m.store is not None:
                m.store.count()  # opened: the store's initial files are written
            m.close()
    else:
        with board.Board(args.port) as b:
            root = board.device_root(b, args.device_root)
            where = "%s:%s" % (args.port, root)
            existed = "CLAW-EXISTED" in b.exec(_CREATE % (root, root, args.mode))
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

    if args.last < 0:
        raise CliError("--last must be 0 (all) or more", EXIT_USAGE)

    def run(mem, where):
        if mem.store is not None:
            mem.store.compact()  # on the copy: recall counts still in the digest show up
        sessions = _by_id(insp.sessions(rows=True, mem=mem))
        for s in sessions:
            msgs = []
            if s["bytes"] or s["pending"]:
                msgs = (mem.sessions.tail(None, args.last, backend="", file=s["file"]) if args.last
                        else mem.sessions.messages(None, backend="", file=s["file"], tokens=0))
            s["history"] = [messages.display(m) for m in msgs]
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
              ("id", "access", "labels", "from", "expires", "content"), "items")
        table(out["labels"], ("summary_id", "label", "ref_count"), "label catalog")
        print("\n== profile ==")
        for name, body in out["profile"].items():
            print("--- %s.md (%d bytes)\n%s" % (name, len(body.encode()),
                                                shown(body.rstrip(), True) or "(missing)"))
        return EXIT_OK

    return roots.with_copy(args, run)


def cmd_stats(args):
    from claw_memory import inspect as insp

    def run(mem, where):
        st = insp.stats(rows=True, mem=mem)
        st["sessions"] = _by_id(st["sessions"])
        if args.json:
            emit_json({"root": where, "layers": st["layers"], "sessions": st["sessions"]})
            return EXIT_OK
        print("data root: %s" % where)
        table(st["layers"], ("layer", "bytes", "records", "capacity", "tokens"),
              "per layer (tokens: estimated per request; sessions: the largest history, "
              "within the token budget)")
        table(_shown(st["sessions"]), ("id", "file", "bytes", "records", "tokens"),
              "every session (tokens: its whole history)")
        return EXIT_OK

    return roots.with_copy(args, run)


def cmd_context(args):
    from claw_memory import inspect as insp
    from claw_memory.llm import request_body

    system = args.system
    if system.startswith("@"):
        try:
            with open(system[1:], encoding="utf-8") as f:
                system = f.read()
        except (OSError, UnicodeError) as e:
            raise CliError("cannot read the system prompt from %s (--system @FILE): %s" % (
                system[1:], getattr(e, "strerror", None) or e))

    def run(mem, where):
        try:
            ctx = insp.context(args.session, system, args.backend, rows=True, mem=mem,
                               message=args.message)
        except ValueError:  # an unknown session
            raise no_session(args, where)
        if args.request:
            tools = mem.tools()
            body = request_body(args.backend, ctx["system"], ctx["messages"], tools)
            if ui._tty(sys.stdout):  # exact bytes for a pipe; on a terminal, the same JSON value
                body = json_safe(body.decode("utf-8", "replace")).encode()
            out = getattr(sys.stdout, "buffer", None)
            if out is not None:
                out.write(body + b"\n")
            else:
                sys.stdout.write(body.decode() + "\n")
            return EXIT_OK
        if args.json:
            emit_json(dict(ctx, root=where, backend=args.backend))
            return EXIT_OK
        print("data root: %s, session: %s, backend: %s" % (where, shown(ctx["session"] or "(none)"),
                                                           args.backend))
        print("\n== system prompt ==\n%s" % shown(ctx["system"], True))
        table([dict(r, text=messages.cell(r["text"], 100)) for r in (messages.display(x) for x in ctx["messages"])],
              ("role", "text"), "messages (after the token budget)")
        print("\n== tools ==\n%s" % ", ".join(d["function"]["name"] for d in ctx["tools"]))
        table(ctx["layers"] + [{"layer": "total", "tokens": ctx["total"]}], ("layer", "tokens", "messages"),
              "estimated tokens per layer")
        if args.message:
            print("\nmemories this message brings in: %s" % (", ".join(ctx["recalled"]) or "none"))
        return EXIT_OK

    return roots.with_copy(args, run)
