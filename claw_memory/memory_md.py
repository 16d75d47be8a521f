# claw_memory.memory_md: MEMORY.md as LITE mode uses it: the user's document, injected whole.
# MIT license
#
# In FULL mode the store renders MEMORY.md from its records; LITE mode never imports the
# store, it only creates the default document and reads it (bounded).

from . import fsutil, text
from ._compat import const

NAME = "MEMORY.md"
DEFAULT = "# Long-term Memory\n\n(empty - ESP-Claw will write memories here as it learns)\n"
_LITE_MAX = const(16384)  # bytes of MEMORY.md injected in LITE mode


def ensure(path):
    """Create the default document when there is none."""
    if not fsutil.exists(path):
        fsutil.replace(path, DEFAULT.encode())


def read(path, limit=_LITE_MAX):
    """The document's text (at most `limit` bytes, cut on a character), or None when it is
    missing or blank."""
    if fsutil.size(path) <= 0:
        return None
    with open(path, "rb") as f:
        body = text.clean(f.read(limit))
    return body if text.trim(body) else None
