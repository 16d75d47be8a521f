# claw_memory.session: session history, an append-only JSON-lines .log with ESP-Claw's
# binary .idx, plus our pending file for the turn in progress.
# MIT license
#
# Reading order: format (names and bytes), state (what is known about a session), write (the
# persist path), repair (open, analyse, repair, settle) and pending (the pending file on
# open), compact, window (the token budget), flat, flatmsg, plan and stream (the history
# streamed into a request), replay (pages, export), sessions (the Sessions class).
# docs/FORMAT.md has the file formats.

from ..core import BLOCK_TEXT
from .format import file_name, is_log_name
from .sessions import ARCHIVE_LIMIT, HISTORY_TOKENS, SIZE_LIMIT, Sessions

__all__ = ("ARCHIVE_LIMIT", "BLOCK_TEXT", "HISTORY_TOKENS", "SIZE_LIMIT", "Sessions", "file_name", "is_log_name")
