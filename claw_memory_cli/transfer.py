"""export (a data root to one bundle file) and import (a bundle into a new data root)."""

import os
import shutil
import tempfile

from claw_memory.paths import INDEXES

from . import board, bundle, guard, roots, ui
from .ui import EXIT_OK, EXIT_USAGE, CliError, emit_json, say


def cmd_export(args):
    if args.output != "-":
        roots.writable(args.output, "the bundle")
    tmp, where = roots.local_copy(args)
    try:
        counts = bundle.export(tmp, args.output, progress=not args.json)
    except BrokenPipeError:  # stdout's reader went away: main() ends quietly
        raise
    except OSError as e:  # a file of the copy: the user's data root is named instead
        raise CliError("export: %s" % str(e).replace(tmp, where))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    to = "stdout" if args.output == "-" else args.output
    if args.json and args.output != "-":
        emit_json({"root": where, "bundle": args.output, "counts": counts})
    else:
        msg = "exported %s to %s: %s" % (where, to, ui.counts(counts))
        if args.output == "-":
            say(msg)
        else:
            print(msg)
    if counts.get("chat_maps_unreadable"):
        say("warning: %s in %s could not be read (damaged, its chat key lost with it): the "
            "sessions of that chat are in the bundle without their chat"
            % (ui.plural(counts["chat_maps_unreadable"], "chat map"), where))
    return EXIT_OK


_BOARD_SWAP = board._RMTREE + """
src, root, names = %r, %r, %r
for name in names:
    dst = root + "/" + name
    rmtree(dst + ".replaced")
    try:
        os.rename(dst, dst + ".replaced")
    except OSError:
        pass
    try:
        os.stat(src + "/" + name)
    except OSError:  # (the text indexes: derived, made by the first search if not staged)
        rmtree(dst + ".replaced")
        continue
    os.rename(src + "/" + name, dst)
    rmtree(dst + ".replaced")
os.rmdir(src)
print("CLAW-IMPORT-OK")
"""


def cmd_import(args):
    if args.port and args.target:
        raise CliError("give a target folder or a board's port (-p), not both", EXIT_USAGE)
    if not args.target:
        roots.need_port(args)
    if args.port:
        staging = tempfile.mkdtemp(prefix="claw-import-")
        try:
            local = os.path.join(staging, "root")
            counts = bundle.import_(args.bundle, local, progress=not args.json)
            with board.Board(args.port) as b:
                root = board.device_root(b, args.device_root)
                where = "%s:%s" % (args.port, root)
                listing = b.listing(root)
                if listing and listing[0]:
                    if not args.replace:
                        raise CliError("the board already has a data root at %s: pass --replace" % root)
                    guard.removable(where, *listing, "import --replace")
                base = root.rstrip("/")
                b.makedirs(root)
                tmp_dir = base + "/claw_import.tmp"
                b.rmtree(tmp_dir)
                b.push(local, tmp_dir, where)
                # (the text indexes first: derived, and holding the words of the sessions
                # replaced, they must not outlive them if the swap stops half-way)
                names = tuple(sorted(guard.TOPS, key=lambda n: n != INDEXES))
                out = b.exec(_BOARD_SWAP % (tmp_dir, base, names), timeout=120)
            if "CLAW-IMPORT-OK" not in out:
                raise CliError("the board did not confirm the import: %s" % out.strip()[-200:])
        finally:
            shutil.rmtree(staging, ignore_errors=True)
    else:
        roots.creatable(args.target, "the data root")
        counts = bundle.import_(args.bundle, args.target, args.replace, progress=not args.json)
        where = os.path.abspath(args.target)
    if args.json:
        emit_json({"root": where, "counts": counts})
    else:
        print("imported %s into %s: %s" % (args.bundle, where, ui.counts(counts)))
    return EXIT_OK
