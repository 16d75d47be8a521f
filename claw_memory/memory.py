# claw_memory: the facade: open a data root, own the layers, hand out providers/hooks/tools.
# MIT license
#
# LITE mode (profile, MEMORY.md and session history) imports only what it uses: the store,
# the memory tools and extraction are imported in FULL mode only. The hooks, providers and
# tools are imported when first asked for: installed as .mpy, a module's bytecode lives in
# the heap (docs/PERFORMANCE.md, the heap tables).

from ._compat import unix_time
from .paths import Layout
from .profile import Profile
from .session import HISTORY_TOKENS, SIZE_LIMIT, Sessions

FULL = "full"
LITE = "lite"


class Memory:
    """The memory of one data root. Opening touches no session and reads no memory file:
    each layer opens on first use.

    `create=True` (the agent's own use) creates the data root, its directories and the
    default documents when missing. `create=False` (tools that look at a root) creates
    nothing and raises OSError (ENOENT) when the root has neither `sessions/` nor `memory/`.

    `auto_recall` (FULL mode): how many of the memories most relevant to a request's message
    the Long-term Memory provider adds after the label catalog (0: ESP-Claw's prompt, the
    catalog only).

    `archive_limit`: bytes of archived turns (the ones session compaction drops) kept
    searchable for the whole data root, oldest dropped first (0: dropped at compaction, as
    ESP-Claw). A limit given is applied when the sessions are first used too (lowered since
    the segments were made, the oldest go then); not given (None), 1 MiB applied only as a
    compaction archives: a look (`inspect`, the host's `claw-memory`), which does not know
    the app's limit, never drops a segment. `search_index`: keep each session's text index up to date as turns are
    persisted (False: `search` indexes what it needs when it runs).

    `date`: when the board's clock is set, the system prompt ends with today's date (the
    Current Date section; False: never). `timezone`: the user's time zone as text ("Europe/
    Lisbon (UTC+0)", "UTC+2"), shown with it; one with an offset also dates memories and
    expiries in that zone (else the board's local time). Without it, a `Time zone:` line of
    the user profile is used."""

    def __init__(self, root=None, mode=FULL, backend=None, llm=None, extraction_llm=None,
                 extract=True, max_message_chars=4096, max_record_bytes=65536,
                 session_limit=SIZE_LIMIT, history_tokens=HISTORY_TOKENS, seed_dir=None,
                 stage_note_wait=20, clock=unix_time, log=None, create=True, auto_recall=5,
                 archive_limit=None, search_index=True, date=True, timezone=None):
        if mode not in (FULL, LITE):
            raise ValueError("mode must be 'full' or 'lite'")
        if mode == FULL:  # before anything is created
            try:
                from .store import Store
            except ImportError as e:  # a board with the LITE piece only
                raise ImportError("mode='full' needs the long-term store (claw_memory/store/, in "
                                  "package-full.json), which is not installed (%s): open the "
                                  "memory with mode='lite', or install it" % e)
        self.mode = mode
        self.log = log
        self.auto_recall = auto_recall
        self.clock = clock
        self.date = date
        self.timezone = timezone
        lay = Layout(root)
        if mode == FULL and lay.mode() == LITE:
            # (the store would render its items over the user's notes at its first write)
            raise ValueError("%s is used in LITE mode (memory/MEMORY.md holds the user's notes, "
                             "no store beside it): open it with mode='lite', or move MEMORY.md "
                             "away first to use the long-term store" % lay.root)
        self.layout = lay.ensure() if create else lay.check()
        if backend is None:
            backend = getattr(llm, "backend", None) or "openai"
        self.backend = backend
        self.sessions = Sessions(self.layout.sessions, max_message_chars, max_record_bytes,
                                 session_limit, history_tokens=history_tokens, log=log,
                                 archive_limit=archive_limit, search_index=search_index,
                                 clock=clock)
        self.sessions.names = lambda: self.chats.ids()  # list() gives the ids the chat maps name
        self.profile = Profile(self.layout.memory, seed_dir)
        if create:
            self.profile.ensure()
        self._chats = None
        self.store = None
        self.extraction = None
        if mode == FULL:
            self.store = Store(self.layout.memory, clock=clock, log=log)
            xllm = extraction_llm or llm
            if extract and xllm:
                from .extract import Extraction

                self.extraction = Extraction(self.store, xllm, log, zone=timezone)
        elif create:
            # Lite mode: MEMORY.md is the user's document, injected whole; no store writes it.
            from . import lite_md

            lite_md.ensure(self.md_path())
        self._stage_note_wait = stage_note_wait
        self._hooks = None  # MemoryHooks, made by _memory_hooks()
        self._profile_tools = None
        self._memory_tools = None

    @property
    def chats(self):
        """The chat maps (chats.Chats), made on first use."""
        if self._chats is None:
            from .chats import Chats

            self._chats = Chats(self.layout.chat_map, self.sessions, self.log)
        return self._chats

    def _memory_hooks(self):
        if self._hooks is None:
            from .hooks import MemoryHooks

            self._hooks = MemoryHooks(self.sessions, self.backend, self.extraction,
                                      self._stage_note_wait, self.log)
        return self._hooks

    def md_path(self):
        from .paths import MEMORY_MD  # (not a global: the frozen firmware's heap holds each)

        return self.layout.memory + "/" + MEMORY_MD

    def _refresh_md(self):
        # LITE on a root a FULL run left without close(): render MEMORY.md from the store.
        from . import lite_md

        if lite_md.stale(self.layout.memory):
            try:
                from .store import Store
            except ImportError:  # the LITE piece alone (no store installed): as it is
                return
            Store(self.layout.memory, log=self.log).open()

    def providers(self):
        """Context providers in ESP-Claw's order: profile, long-term, history, skills; then
        (ours, with `date`) the current date, which adds nothing while the clock is not set."""
        from .wiring import providers
        return providers(self)

    def tools(self, session_command=False):
        """The tools for the LLM: memory tools (full mode), the profile tools and history
        search; with `session_command=True` also /session as a tool."""
        from .wiring import tools
        return tools(self, session_command)

    def search(self, query, limit=5, chat=None, session=None, agent=0, skipped=None):
        """Search the session history, archives included: the records that best match
        `query` (BM25 over records; on a tie the newer first: the later record of a
        session, its log before its archive, archives by when they were made, a chat's
        sessions in chat_sessions' order), as dicts with "session" (its id; for a session
        no chat map names, of a whole-root search, its log's file name, which `session=`
        takes too), "role"
        ("user", "assistant" or "tool"), "text" (the record's visible text, cut to
        max_message_chars), "score", "archived" and "offset". `session`: one session's;
        `chat`: (channel, chat_id), every session of that chat (agent `agent`'s);
        neither: the whole data root. A file that cannot be read (an I/O error) is left
        out and noted in the log, and its session id appended to the list `skipped` when
        one is given. ValueError for a bad query (not text), limit or scope; a query with
        no word to search for (empty, common words only, punctuation) finds nothing."""
        from .wiring import search
        return search(self, query, limit, chat, session, agent, skipped)

    def chat_sessions(self, chat, agent=0):
        """The session ids of a chat, (channel, chat_id), of agent `agent` (ESP-Claw's
        `agent:<n>:chat:...` ids for n > 0): every alias its chat map names, in the order
        the map made them, the current one last (none when it has no map)."""
        from .wiring import chat_sessions
        return chat_sessions(self, chat, agent)

    def by(self, session_id, message, kind="tool"):
        """Who makes a change, for the store's `by=` (FULL mode): the session and the key of
        its user message `message` (as persisted), so that the items it stores record their
        origin (Store.why) and the session can undo it (Store.undo)."""
        return self._memory_hooks().by(session_id, message, kind)

    def hooks(self):
        """The core.Hooks for the agent loop (lite mode: gate and persist only)."""
        return self._memory_hooks().hooks(self.mode == FULL)

    def session_command(self, channel, chat_id, command, agent=0):
        """The /session command for chat front ends (agent `agent`'s sessions of the chat);
        returns the reply text. `new --incognito [name]` starts a session that writes nothing
        (Chats)."""
        return self.chats.command(channel, chat_id, command, agent)

    def memory_command(self, channel, chat_id, command, agent=0):
        """The /memory command for chat front ends (the text after `/memory`): `undo` takes
        back the last change to long-term memory in the chat's current session (agent
        `agent`'s), `why <id>` says where a memory came from; returns the reply text."""
        from .wiring import memory_command
        return memory_command(self, channel, chat_id, command, agent)

    def skills(self):
        from . import skills

        return dict(skills.SKILLS)

    def flush(self):
        """Write what is only in RAM (session index entries, the store's derived files);
        the data root is then exactly what ESP-Claw expects."""
        self.sessions.flush()
        if self.store is not None:
            self.store.flush()

    def close(self):
        """Stop extraction; bring every session index and the store's derived files up to
        date, forgotten text out of the records first."""
        if self.extraction is not None:
            self.extraction.stop()
        self.sessions.close()
        if self.store is not None:
            self.store.close()
