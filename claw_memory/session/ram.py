# claw_memory.session.ram: an incognito session: its history in RAM only, nothing on flash.
# MIT license
#
# The records are checked and encoded as a persist to flash would (write.encode), kept as
# (type, backend format, JSON bytes), and the oldest whole turns are dropped once the history
# is over the token budget (the newest turn stays whole): RAM holds about what one request
# sends. A reboot, or ending the session, drops it all.

from .. import fsutil
from .._compat import const
from ..core import FINAL, USER, backend_format
from . import format as fmt_
from ..messages import degrade, pair_tools
from ..jsonraw import json_value
from .window import cost, foreign
from .write import encode

_BYTES_MAX = const(32768)  # bytes of records kept at most, whatever the budget
_SESSIONS_MAX = const(8)  # incognito sessions at a time
_TOKENS = const(6144)  # the budget when the history has none (sessions.HISTORY_TOKENS)


def start(sessions, ram, session_id, on):
    """Sessions.incognito(): start or end an incognito session in `ram` (id -> Ram). An id
    with a history on flash cannot become incognito (ValueError)."""
    fmt_.id_bytes(session_id)
    if not on:
        ram.pop(session_id, None)
        return
    if session_id in ram:
        return
    log = sessions.path(session_id)
    if fsutil.exists(log) or fsutil.exists(log + fmt_.PEND):
        raise ValueError("session %s has a history on flash: it cannot be incognito" % session_id)
    if len(ram) >= _SESSIONS_MAX:
        raise ValueError("at most %d incognito sessions at a time" % _SESSIONS_MAX)
    ram[session_id] = Ram(sessions.history_tokens or _TOKENS, sessions.max_message_chars,
                          sessions.max_record_bytes)


class Ram:
    """The records of one incognito session."""

    def __init__(self, tokens, max_chars, max_record_bytes):
        self.tokens = tokens
        self.max_chars = max_chars
        self.max_record_bytes = max_record_bytes
        self.recs = []  # [turn number, type, backend format, JSON bytes]
        self.turn = 0
        self.open = False  # the newest turn is not completed

    def persist(self, records, turn_completed, backend):
        """Keep a batch of (type, message JSON, text) records (ValueError for a bad one, as
        Sessions.persist); the oldest turns go when the history is over the budget."""
        lines = encode(records, self.max_chars, self.max_record_bytes)
        fmt = backend_format(backend)
        if not self.open:
            self.turn += 1
            self.open = True
        for line, kind in lines:
            self.recs.append((self.turn, kind, fmt, line))
        if turn_completed:
            self.open = False
            self._trim()
        return None

    def _trim(self):
        recs = self.recs
        tokens = sum(cost(len(r[3]) + 1) for r in recs)
        size = sum(len(r[3]) for r in recs)
        while recs and recs[0][0] != self.turn and (tokens > self.tokens or size > _BYTES_MAX):
            first = recs[0][0]
            while recs and recs[0][0] == first:
                r = recs.pop(0)
                tokens -= cost(len(r[3]) + 1)
                size -= len(r[3])

    def records(self):
        """(type, backend, JSON bytes) of every record kept."""
        return [(kind, fmt, raw) for _, kind, fmt, raw in self.recs]

    def messages(self, backend):
        """The history as message dicts for `backend`, as a file session's History gives
        them: another backend's tool records left out and its answers reduced to text,
        tool-result arrays flattened, unpaired calls and results left out."""
        theirs = foreign(backend_format(backend))
        out = []
        for _, kind, fmt, raw in self.recs:
            if kind != USER and kind != FINAL and fmt in theirs:
                continue
            obj = json_value(raw)
            if kind == FINAL and fmt in theirs:
                obj = degrade(obj) if isinstance(obj, dict) else None
            if isinstance(obj, list):
                out += obj
            elif obj is not None:
                out.append(obj)
        return pair_tools(out)

    def stat(self):
        return {"file": None, "bytes": 0, "records": len(self.recs), "pending": 0, "blocked": False,
                "incognito": True}
