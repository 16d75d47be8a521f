"""The rule of every command that removes files: only from a data root, only its own files.

A data root is a folder with `sessions/` or `memory/` that holds nothing but the files
claw_memory and ESP-Claw write there, and our `search/` (docs/FORMAT.md lists
them). A command about to delete
or replace files (`wipe`, `import --replace`, `demo --keep`) refuses any other folder, and a
data root with a file of the user's inside, with a message that names it; it deletes nothing.
"""

import os

from claw_memory.paths import INDEXES, MEMORY_MD, STORE_INDEX, STORE_RECORDS
from claw_memory.profile import FILES
from claw_memory.session import is_log_name
from claw_memory.session.format import (ARCHIVING, BLOCKED, CATALOG, DELETING, IDX, LEFTOVERS,
                                       PEND, TIX, TMP, segment_of)
from claw_memory.store.state import DIGEST, JOURNAL

from .ui import CliError

_SESSION_SUFFIXES = ("", IDX, PEND, BLOCKED) + LEFTOVERS
TOPS = ("sessions", "memory", INDEXES)  # the folders of a data root
_MEMORY_FILES = (STORE_RECORDS, STORE_INDEX, DIGEST, MEMORY_MD) + tuple(FILES.values())
_SHOWN = 3  # strangers named in the message


def listing(root):
    """(dirs, [(path, size)]) of a data root's folders (`TOPS`) under a folder, paths
    relative to it: the shape of `Board.listing`."""
    dirs, files = [], []
    for top in TOPS:
        for dirpath, _, names in os.walk(os.path.join(root, top)):
            rel = os.path.relpath(dirpath, root).replace(os.sep, "/")
            dirs.append(rel)
            files += [(rel + "/" + n, os.path.getsize(os.path.join(dirpath, n))) for n in names]
    return dirs, files


def _text_index(name):
    # `<log or segment name>.tix` (`.tmp`: a rewrite a cut left); older versions kept them
    # in sessions/, where they may still be
    if name.endswith(TMP):
        name = name[: -len(TMP)]
    if not name.endswith(TIX):
        return False
    name = name[: -len(TIX)]
    return is_log_name(name) or segment_of(name) is not None


def _session_file(name):
    if name in (DELETING, ARCHIVING, CATALOG, CATALOG + TMP) or segment_of(name) or _text_index(name):
        return True
    return any(name.endswith(s) and is_log_name(name[: len(name) - len(s)]) for s in _SESSION_SUFFIXES)


def _chat_map(name):
    for s in (TMP, DELETING):
        if name.endswith(s):
            name = name[: -len(s)]
    return name.startswith("chat_") and name.endswith(".json")


def belongs(rel):
    """Whether a path below a data root (`/`-separated) is one a data root holds."""
    parts = rel.split("/")
    if parts[0] == "memory" and len(parts) == 2:
        name = parts[1]
        if name.endswith(TMP):
            name = name[: -len(TMP)]
        return name == JOURNAL or name in _MEMORY_FILES
    if parts[0] == "sessions" and len(parts) == 2:
        return _session_file(parts[1])
    if parts[0] == INDEXES and len(parts) == 2:
        return _text_index(parts[1])
    if parts[:2] == ["sessions", "chat_map"] and len(parts) == 3:
        return _chat_map(parts[2])
    return False


def strangers(dirs, files):
    """The folders and files of a listing that no data root holds (the user's own)."""
    known = TOPS + ("sessions/chat_map",)
    return [d + "/" for d in dirs if d not in known] + [p for p, _ in files if not belongs(p)]


def removable(where, dirs, files, what):
    """Raise CliError (exit 1) unless the listing is a data root's and holds only its files."""
    if not any(d in ("sessions", "memory") for d in dirs):
        raise CliError("no data root at %s: it has no sessions/ or memory/ folder; %s only "
                       "replaces or deletes a data root's files, so nothing was deleted" % (where, what))
    odd = strangers(dirs, files)
    if odd:
        more = " and %d more" % (len(odd) - _SHOWN) if len(odd) > _SHOWN else ""
        raise CliError("%s is not only a data root: %s%s %s not claw_memory's (docs/FORMAT.md lists "
                       "a data root's files); %s deletes nothing there: move %s out first" % (
                           where, ", ".join(odd[:_SHOWN]), more, "is" if len(odd) == 1 else "are",
                           what, "it" if len(odd) == 1 else "them"))
