"""Where a command works: a data root folder, or a board's data root copied here first.

Reading commands work on a copy, so that reading never changes the data root.
"""

import os
import shutil
import tempfile

from . import board, bundle, check
from .ui import EXIT_USAGE, CliError

PORT_ENV = "CLAW_PORT"


def target(args):
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


def need_port(args):
    args.port = args.port or os.environ.get(PORT_ENV)
    if not args.port:
        raise CliError("give the board's serial port with -p PORT (or set %s)" % PORT_ENV, EXIT_USAGE)


def folder(root):
    """The absolute path of an existing data root folder; CliError (exit 1) otherwise."""
    if not os.path.isdir(root):
        why = "a file, not a folder" if os.path.exists(root) else "no such folder"
    elif not check.is_data_root(root):
        why = "it has no sessions/ or memory/ folder"
    else:
        return os.path.abspath(root)
    raise CliError("no data root at %s: %s (`claw-memory init %s` creates one)" % (root, why, root))


def local_copy(args):
    """(a temporary copy of the data root, where it is): a folder, or pulled from the board."""
    target(args)
    if args.root:
        where = folder(args.root)
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


def with_copy(args, fn):
    tmp, where = local_copy(args)
    try:
        return fn(check.open_root(tmp), where)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
