"""The commands that check and change a data root in place: verify, repair, wipe."""

import contextlib
import os
import shutil

from claw_memory.paths import MEMORY_MD, MEMORY_MD_INIT, Layout
from claw_memory.paths import INDEXES
from claw_memory.session.format import CATALOG, TIX, TMP, segment_of

from . import board, check, guard, roots
from .ui import EXIT_OK, EXIT_PROBLEMS, CliError, confirm, emit_json, plural, status


def _examine_copy(args):
    """(report, problems, where, mode) of a fresh copy of the data root."""
    tmp, where = roots.local_copy(args)
    try:
        mode = check.mode_of(tmp)
        report, problems = check.examine(tmp)
    except OSError as e:  # a file of the copy: the user's data root is named instead
        raise CliError("%s: %s" % (args.cmd, str(e).replace(tmp, where)))
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
        files, store, archive = check.needs(report, problems)
        if args.root:
            check.repair_folder(args.root, files, store, archive)
        else:
            root = where.split(":", 1)[1] if not args.device_root else args.device_root
            with board.Board(args.port) as b, status("repairing on the board"):
                out = b.exec(check.BOARD_REPAIR % (root, mode, files, archive, store), timeout=600)
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
LAYERS = ("all", "sessions", "archive", "long-term", "profile")


def _layer_of(path):
    """The layer a file of the data root belongs to (path relative to the root): the
    archive is the segments of the sessions folder, their catalog and their text indexes."""
    if path.startswith(("sessions/", INDEXES + "/")):
        base = path.split("/", 1)[1]
        if base.endswith(TMP):
            base = base[: -len(TMP)]
        if base.endswith(TIX):  # (a log's or a segment's text index)
            base = base[: -len(TIX)]
        return "archive" if base.startswith(CATALOG) or segment_of(base) else "sessions"
    base = path.rsplit("/", 1)[-1]
    if base.endswith(".tmp"):
        base = base[:-4]
    return "profile" if base in _PROFILE else "long-term"


_MODE = "from claw_memory.paths import Layout\nprint(Layout(%r).mode())"


def cmd_wipe(args):
    roots.target(args)
    with contextlib.ExitStack() as stack:
        b = None
        if args.root:
            where = roots.folder(args.root)
            dirs, files = guard.listing(where)
        else:
            b = stack.enter_context(board.Board(args.port))
            root = board.device_root(b, args.device_root)
            where = "%s:%s" % (args.port, root)
            listing = b.listing(root)
            if not listing or not listing[0]:
                raise CliError("no data root at %s: nothing to wipe" % where)
            dirs, files = listing
        guard.removable(where, dirs, files, "wipe")
        # The sessions layer takes their archive with it (a segment belongs to its log).
        within = ("sessions", "archive") if args.layer == "sessions" else (args.layer,)
        chosen = [(p, n) for p, n in files if args.layer == "all" or _layer_of(p) in within]
        what = "every layer" if args.layer == "all" else "the %s layer" % args.layer
        if not chosen:
            print("%s of %s holds no file: nothing to wipe" % (what, where))
            return EXIT_OK
        size = sum(n for _, n in chosen)
        question = "wipe %s of the data root at %s: %s, %s? This cannot be undone" % (
            what, where, plural(len(chosen), "file"), board.human(size))
        if not confirm(question, args.yes):
            print("nothing wiped")
            return EXIT_PROBLEMS
        # Sub-folders of sessions/ (chat_map) go too; sessions/ and memory/ stay: still a data root.
        sub = [d for d in dirs if "/" in d] if args.layer in ("all", "sessions") else []
        sub = [d for d in sub if d.startswith("sessions/")]
        # A LITE root stays LITE: its MEMORY.md comes back as the initial document (the mode
        # shows in the files, paths.Layout.mode; without it the root would read as FULL).
        md = "memory/" + MEMORY_MD
        lite = any(p == md for p, _ in chosen) and (
            b.exec(_MODE % root).strip() if b is not None else Layout(where).mode()) == "lite"
        # The mode shows in the files (a FULL root has its records file), so that a wipe that
        # fails midway leaves the root in its mode: a FULL root's MEMORY.md (derived) goes
        # first, a LITE root's (the document itself) last.
        chosen.sort(key=lambda pn: (pn[0] == md) == lite)
        if b is not None:
            base = root.rstrip("/")
            b.remove([base + "/" + p for p, _ in chosen], [base + "/" + d for d in sub])
            if lite:
                b.write(base + "/" + md, MEMORY_MD_INIT.encode())
        else:
            for p, _ in chosen:
                os.remove(os.path.join(where, *p.split("/")))
            for d in sorted(sub, key=len, reverse=True):
                shutil.rmtree(os.path.join(where, *d.split("/")), ignore_errors=True)
            if lite:
                with open(os.path.join(where, "memory", MEMORY_MD), "wb") as f:
                    f.write(MEMORY_MD_INIT.encode())
    if args.json:
        emit_json({"root": where, "layer": args.layer, "files": len(chosen), "bytes": size})
    else:
        print("wiped %s of %s: %s, %s%s" % (
            what, where, plural(len(chosen), "file"), board.human(size), " (the default profile comes back on the next open)"
            if args.layer in ("all", "profile") else ""))
    return EXIT_OK
