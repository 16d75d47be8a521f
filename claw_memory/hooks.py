# claw_memory: the request hooks (gate, request start, persist, stage note).
# MIT license

from . import text
from ._compat import const, exc_text
from .core import BLOCK_TEXT, OPENAI, Hooks, SessionDeleted, note

_PENDING_MAX = const(16)  # sessions with labels waiting for their stage note


class MemoryHooks:
    """Gate, request start, persist and stage note, plus the bookkeeping the memory tools
    feed: which requests wrote memory by hand, and which labels changed per session."""

    def __init__(self, sessions, backend=OPENAI, extraction=None, wait=20, log=None):
        self.sessions = sessions
        self.backend = backend
        self.extraction = extraction
        self.wait = wait
        self._log = log
        self._manual = []  # request ids that wrote memory through a tool
        self._labels = {}  # session id -> labels changed in its current request
        self._order = []

    def _note(self, msg):
        note(self._log, msg)

    def request_gate(self, request):
        """The block text for a blocked session, else None (go ahead). A session id the
        session layer cannot store (over 512 bytes) goes ahead: persist then fails with a
        clear error, logged, and the request is answered without history."""
        if request.session_id:
            try:
                self._mark(request)
                if self.sessions.blocked(request.session_id):
                    return BLOCK_TEXT
            except ValueError as e:
                self._note("request gate: %s" % e)
        return None

    def _mark(self, request):
        # Which deletion of its session the request started after (see persist).
        try:
            request.claw_deleted = self.sessions.deleted(request.session_id)
        except AttributeError:  # a request object that takes no attributes: no check
            pass

    def on_request_start(self, request):
        if self.extraction is None or self.incognito(request.session_id):
            return  # (an incognito session's messages are not remembered)
        try:
            self.extraction.start(request)
        except Exception as e:  # noqa: BLE001 -- extraction is best effort
            self._note("extraction not started: %s" % exc_text(e))

    def persist(self, request, records, turn_completed=False):
        """Persist records of the request's session (no session id: nothing is kept).
        SessionDeleted when the session was deleted after the request started (its answer
        would otherwise recreate a session no list shows)."""
        sid = request.session_id
        if not sid:
            return None
        mark = getattr(request, "claw_deleted", None)
        if mark is None:
            self._mark(request)  # no gate ran: from the request's first persist on
        elif mark != self.sessions.deleted(sid):
            raise SessionDeleted(2, "session %s was deleted while the request ran; its records "
                                    "are not kept" % sid)
        return self.sessions.persist(sid, records, turn_completed, self.backend)

    def incognito(self, session_id):
        """Whether the session is incognito: nothing of it may be written."""
        return bool(session_id) and self.sessions.is_incognito(session_id)

    def by(self, session_id, message, kind="tool"):
        """The provenance of a change a request makes (Store.batch's `by`): its session and
        the key of its user record (session.origin.key); None without a session."""
        if not session_id or not isinstance(session_id, str):
            return None
        from .session.origin import key

        out = {"by": kind, "sid": session_id}
        k = key(message, self.sessions.max_message_chars) if isinstance(message, str) else None
        if k:
            out["msg"] = k
        return out

    def mark_manual(self, request_id):
        if request_id and request_id not in self._manual:
            self._manual.append(request_id)
            if len(self._manual) > _PENDING_MAX:
                self._manual.pop(0)

    def note_labels(self, session_id, labels):
        if not session_id or not labels:
            return
        cur = self._labels.get(session_id)
        if cur is None:
            cur = self._labels[session_id] = []
            self._order.append(session_id)
            if len(self._order) > _PENDING_MAX:
                self._labels.pop(self._order.pop(0), None)
        text.lines_merge(cur, labels)

    async def stage_note(self, request):
        """`Memory update: [a;b]` for the labels this request changed, or None. Waits for the
        request's extraction at most `wait` seconds; a manual write discards its result."""
        sid = request.session_id
        if not sid:
            return None
        manual = request.id in self._manual
        if manual:
            self._manual.remove(request.id)
        labels = self._labels.pop(sid, None) or []
        if sid in self._order:
            self._order.remove(sid)
        if self.extraction is not None:
            job = await self.extraction.take(request, self.wait)
            if job is not None:
                if manual:
                    self.extraction.stats["discarded"] += 1
                    self._note("extraction result of request %s discarded: manual write" % request.id)
                else:
                    try:
                        by = self.by(job.session_id, job.text, "extract")
                        text.lines_merge(labels, self.extraction.apply(job, by))
                    except Exception as e:  # noqa: BLE001 -- the answer stands; only labels go
                        self._note("extraction result not applied: %s" % exc_text(e))
        return text.stage_note(labels)

    def hooks(self, full=True):
        """The core.Hooks to wire into an agent loop (lite mode: gate and persist only)."""
        if not full:
            return Hooks(request_gate=self.request_gate, persist=self.persist)
        return Hooks(self.request_gate, self.on_request_start, self.persist, self.stage_note)
