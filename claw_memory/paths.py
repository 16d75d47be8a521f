# claw_memory: where the data lives. Nothing else in the package builds a path from scratch.
# MIT license

import os

from ._compat import ENOENT, MICROPYTHON, const
from . import fsutil  # (one global, not three: the frozen firmware's heap holds each)

# MICROPY_ALLOC_PATH_MAX is 128 on ESP32; the longest name below the root is
# "/sessions/chat_map/chat_<24>_<8>.json.tmp" (66 bytes; a segment's text index rewrite,
# "/search/s_<24>_<8>.log.arc<N>.tix.tmp", is 59 and N's digits), so the root gets the rest.
_MAX_ROOT = const(61)

STORE_RECORDS = "memory_records.jsonl"  # the long-term store's journal; a FULL root has it
STORE_INDEX = "memory_index.json"
# Rendered by the store in FULL mode (store/markdown.py), the user's document in LITE mode
# (lite_md.py); both create it with ESP-Claw's initial text (claw_memory_init).
MEMORY_MD = "MEMORY.md"
MEMORY_MD_INIT = "# Long-term Memory\n\n(empty - ESP-Claw will write memories here as it learns)\n"


def join(*parts):
    """Join path parts with `/` (no `..` handling: callers only join names they built)."""
    out = parts[0]
    for p in parts[1:]:
        out = out + p if out.endswith("/") else out + "/" + p
    return out


def _mounted(path):
    # A folder of that name on a host (the unix port sees the host's /) is not a card or a
    # flash partition: only a mount point counts. os.mount() lists them (MicroPython 1.23+);
    # CPython and older firmware have no list, and there the folder is all there is to go by.
    try:
        return any(p == path for _, p in os.mount())
    except (AttributeError, TypeError):
        return fsutil.is_dir(path)


def data_root(root=None):
    """The data root: `root` if given, else `/sd` when mounted, else `/flash`, else the cwd.
    A card at /sd is usually FAT, not power-loss safe (docs/DURABILITY.md): callers that want
    the internal LittleFS with a card inserted pass the root."""
    if root is None:
        for cand in ("/sd", "/flash"):
            if _mounted(cand):
                root = cand
                break
        else:
            root = os.getcwd()
    if not isinstance(root, str) or not root:
        raise ValueError("data root must be a non-empty path")
    if len(root) > 1 and root.endswith("/"):
        root = root[:-1]
    if MICROPYTHON and len(root.encode()) > _MAX_ROOT:
        raise ValueError("data root longer than %d bytes: %s" % (_MAX_ROOT, root))
    return root


INDEXES = "search"  # the text indexes' folder (session/format.py: index_dir)


class Layout:
    """The directories of one data root."""

    def __init__(self, root=None):
        self.root = data_root(root)
        self.sessions = join(self.root, "sessions")
        self.chat_map = join(self.sessions, "chat_map")
        self.memory = join(self.root, "memory")
        self.records = join(self.memory, STORE_RECORDS)

    def ensure(self):
        """Create `sessions/`, `memory/` and `search/` (and the root) when missing."""
        fsutil.makedirs(self.sessions)
        fsutil.makedirs(self.memory)
        # (made with the others: the first text index, which would make it, falls inside a
        # persisted turn, and a new folder on FAT costs a turn's worth of sector writes)
        fsutil.makedirs(join(self.root, INDEXES))
        return self

    def exists(self):
        """True when the root is a data root: it has `sessions/` or `memory/`."""
        return fsutil.is_dir(self.sessions) or fsutil.is_dir(self.memory)

    def mode(self):
        """The mode the root was used in, as the files show it: "lite" when `memory/` has
        MEMORY.md and no store file (the user's document, which no store renders), else
        "full" (a store, or nothing to tell by: claw_memory.open()'s default)."""
        if fsutil.exists(self.records) or fsutil.exists(join(self.memory, STORE_INDEX)):
            return "full"
        return "lite" if fsutil.exists(join(self.memory, MEMORY_MD)) else "full"

    def check(self):
        """Raise OSError(ENOENT) unless the root is a data root (creates nothing)."""
        if not self.exists():
            raise OSError(ENOENT, "no data root at %s (no sessions/ or memory/ there)" % self.root)
        return self
