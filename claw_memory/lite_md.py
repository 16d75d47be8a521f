# claw_memory.lite_md: MEMORY.md as LITE mode uses it: the user's document, injected whole.
# MIT license
#
# In FULL mode the store renders MEMORY.md from its records (store/markdown.py); LITE mode
# never imports the store, it only creates the initial document and reads it (bounded).

from . import fsutil, jsonraw, text
from ._compat import const
from .paths import MEMORY_MD, MEMORY_MD_INIT, STORE_INDEX, STORE_RECORDS

_LITE_MAX = const(16384)  # bytes of MEMORY.md injected in LITE mode


def ensure(path):
    """Create the initial document when there is none."""
    if not fsutil.exists(path):
        fsutil.replace(path, MEMORY_MD_INIT.encode())


def stale(directory):
    """Whether the MEMORY.md of a root that also has a long-term store (used in FULL mode)
    is older than the store's records: the store renders it lazily, and a FULL run that
    ended without close() leaves it behind. Our index's records-size stamp tells; an index
    without one is ESP-Claw's, which renders MEMORY.md on every change."""
    records = fsutil.size(directory + "/" + STORE_RECORDS)
    if records <= 0:
        return False
    if not fsutil.exists(directory + "/" + MEMORY_MD):
        return True
    try:
        with open(directory + "/" + STORE_INDEX, "rb") as f:
            head = f.read(256)
    except OSError:
        return True
    num = jsonraw.number_after(head, b"records_size")
    return num is not None and jsonraw.exact_int(num) != records


def read(path, limit=_LITE_MAX):
    """The document's text (at most `limit` bytes, cut on a character), or None when it is
    missing or blank."""
    if fsutil.size(path) <= 0:
        return None
    with open(path, "rb") as f:
        body = text.clean(f.read(limit))
    return body if text.trim(body) else None
