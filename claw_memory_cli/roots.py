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


def lone_word(args, name):
    """`search -p PORT "query"`, or with $CLAW_PORT set: the one positional given is the
    argument `name` (the query, the memory id), not ROOT; with $CLAW_PORT alone, a folder
    given is still the ROOT."""
    if getattr(args, name) is None and args.root is not None and (
            args.port or os.environ.get(PORT_ENV) and not os.path.isdir(args.root)):
        setattr(args, name, args.root)
        args.root = None


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
    """fn(the memory of a copy of the data root, where it is); an error about a file of the
    copy names the user's data root instead."""
    tmp, where = local_copy(args)
    try:
        return fn(check.open_root(tmp), where)
    except BrokenPipeError:  # stdout's reader went away: main() ends quietly
        raise
    except OSError as e:
        raise CliError(str(e).replace(tmp, where))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def writable(path, what):
    """Check, before any work, that a new file can be written at `path` (CliError, exit 1)."""
    parent = os.path.dirname(os.path.abspath(path))
    if os.path.isdir(path):
        why = "it is a folder"
    elif not os.path.isdir(parent):
        why = "no folder %s" % parent if not os.path.exists(parent) else "%s is a file" % parent
    elif not os.access(parent, os.W_OK):
        why = "the folder %s is not writable" % parent
    else:
        return
    raise CliError("cannot write %s to %s: %s" % (what, path, why))


def creatable(path, what):
    """Check, before any work, that a folder can be created at `path` (or is one): its
    nearest existing ancestor is a writable folder (CliError, exit 1)."""
    up = os.path.abspath(path)
    while not os.path.exists(up):
        up = os.path.dirname(up)
    if up == os.path.abspath(path) and os.path.isdir(up):
        return
    if not os.path.isdir(up):
        why = "%s is a file" % up
    elif not os.access(up, os.W_OK):
        why = "the folder %s is not writable" % up
    else:
        return
    raise CliError("cannot create %s at %s: %s" % (what, path, why))
