# claw_memory.session.sessions: the Sessions class: the cache of opened sessions, the
# public API, and administration (list, stat, delete, verify, repair, restore).
# MIT license
#
# Durability: every persist is durable when it returns (one append, closed). An index never
# points past its log. RAM: the index is streamed in chunks and records are read one at a
# time by offset.

from .. import fsutil
from .._compat import const, unix_time
from ..core import BLOCK_TEXT, OPENAI, SessionBlocked, backend_format, note
from . import format as fmt_

# The other session modules are imported by the methods that use them: installed as .mpy,
# their bytecode lives in the heap, and a board that only persists turns never loads the
# history stream, compaction or replay (docs/PERFORMANCE.md, the heap tables).

_CACHE_MAX = const(4)

SIZE_LIMIT = const(153600)
HISTORY_TOKENS = const(6144)  # ESP-Claw line B's CLAW_MEMORY_SESSION_MAX_TOKENS
ARCHIVE_LIMIT = const(1048576)


class Sessions:
    """Session histories under one directory (the data root's `sessions/`).

    A turn's records reach flash as they are persisted: mid-turn batches go to the small
    `.log.pending` file, and the batch that completes the turn moves the whole turn into the
    `.log` with one append. Index entries are appended every `index_every` completed turns,
    when the session leaves the cache, before compaction and on `close()`; after a power cut
    the few records the index lacks are re-indexed from the log (docs/PERFORMANCE.md).

    `search_index`: the text index of each log (`.tix`, in the folder `search` beside
    `directory`: docs/FORMAT.md) is kept up to date as turns are
    persisted (False: a search indexes what it needs). `archive_limit`: the whole turns a
    compaction drops move to an archive segment, searchable and pageable, the segments of
    the data root kept within that many bytes, oldest first (0: dropped, as ESP-Claw); a
    limit given is applied at the first use too (one lowered since the segments were made),
    None (ARCHIVE_LIMIT, 1 MiB) only as a compaction archives: a look that does not know
    the app's limit (inspect, the host's `claw-memory`) never drops a segment."""

    def __init__(self, directory, max_message_chars=4096, max_record_bytes=65536,
                 size_limit=SIZE_LIMIT, index_every=4, history_tokens=HISTORY_TOKENS, log=None,
                 archive_limit=None, search_index=True, clock=unix_time):
        if max_message_chars < 1:
            raise ValueError("max_message_chars must be positive")
        if index_every < 1:
            raise ValueError("index_every must be positive")
        if history_tokens is not None and (not isinstance(history_tokens, int) or history_tokens < 0):
            raise ValueError("history_tokens must be a non-negative integer or None")
        if archive_limit is not None and (not isinstance(archive_limit, int) or archive_limit < 0):
            raise ValueError("archive_limit must be a non-negative integer or None")
        self.dir = directory
        self.max_message_chars = max_message_chars
        self.max_record_bytes = max_record_bytes
        self.size_limit = size_limit
        self.index_every = index_every
        self.history_tokens = history_tokens or 0
        self.archive_limit = archive_limit
        self.search_index = bool(search_index)
        self.clock = clock
        self._log = log
        self._cache = {}
        self._order = []
        self._deletions = []  # [log, serial] of the latest deletions
        # Name key, head print of logs with archive segments (archived; a print that no longer
        # matches the catalog is read again, so neither our rewrites nor another Sessions'
        # make it wrong). Made at the first search: nothing is allocated for it at open.
        self._heads = None
        self._serial = 0
        self._settled = False  # a deletion cut by a power loss finished (first use)
        # A function yielding every session id the chat maps name (the Memory sets it to
        # Chats.ids): list() gives their ids. This layer does not read chat maps itself.
        self.names = None
        self._fat = None  # whether the folder's names ignore case (FAT), asked at the first write
        self._private = None  # whether only this program writes the folder (see _open)
        self._held = None  # the files search keeps open between queries (held.Held)
        self._ram = {}  # session id -> ram.Ram of each incognito session

    def _note(self, msg):
        note(self._log, msg)

    # -- names ----------------------------------------------------------------------------

    def path(self, session_id):
        """Path of the session's `.log` (`.idx`, `.pending`, `.blocked` sit beside it)."""
        fmt_.id_bytes(session_id)
        return self.dir + "/" + fmt_.file_name(session_id)

    def _target(self, session_id, file):
        if file is not None:
            if not fmt_.is_log_name(file):
                raise ValueError("not a session file name: %r" % file)
            return self.dir + "/" + file
        return self.path(session_id)

    # -- cache ----------------------------------------------------------------------------

    def _open(self, log):
        """The session's state, repairing the files first when needed (cached)."""
        from . import repair
        self._settle()
        st = self._cache.get(log)
        if st is not None:
            # Looked up again only when something was written since (another Sessions, a
            # store): each look-up reads the folder's metadata, and a turn opens its
            # session four times.
            if st.seen == fsutil.writes:
                return st
            st.pcopy = None  # (its pending turn may have been rewritten as long: read again)
            if (
                fsutil.size(log) != st.log_size
                or fsutil.size(log + fmt_.IDX) != st.idx_size
                or fsutil.size(log + fmt_.PEND) != st.pend_file
            ):
                self._forget(log)
                st = None
        if st is None:
            st, plan, pend = repair.open_state(log, self.max_record_bytes, self._note)
            if plan.index_changes() or pend.problems():
                rep = plan.report()
                rep.update(pend.report())
                self._note("repaired %s: %s" % (log, rep))
            self._remember(log, st)
        # `st` is what the files hold now. On a filesystem only this program writes (littlefs,
        # FAT: mpremote interrupts the program before it touches them) it is taken as true until
        # the next write; the host's folders (VfsPosix, a remote mount; CPython) other
        # processes may write: checked at every use, as cheap there.
        if repair.private(self):
            st.seen = fsutil.writes
            st.nb = False  # (a block marker another writer made)
        return st

    def _remember(self, log, st):
        if log not in self._cache:
            self._order.append(log)
        self._cache[log] = st
        if len(self._order) > _CACHE_MAX:
            old = self._order.pop(0)
            try:
                self._flush(old, self._cache.pop(old), False)
            except OSError as e:  # harmless: its unindexed records are re-indexed on open
                self._note("index of %s not flushed: %r" % (old, e))

    def _flush(self, log, st, whole=True):
        # The index entries in RAM, then (when kept) the text index: up to the log's end, or
        # (`whole` False: a session leaving the cache) when write.TAIL bytes wait; its
        # blocks merged (not on the persist path: a merge writes the index again whole)
        from .write import flush_index
        flush_index(log, st)
        self._flush_text(log, st, whole)
        if self.search_index:
            from .tixmerge import settle_file
            settle_file(log, self._note)

    def _flush_text(self, log, st, whole):
        if not self.search_index:
            return
        from .write import flush_text
        try:
            flush_text(log, st, self.max_record_bytes, whole)
        except Exception as e:  # noqa: BLE001 -- derived: a search indexes what it lacks
            self._note("text index of %s not written: %r" % (log, e))

    def _forget(self, log):
        self._cache.pop(log, None)
        if log in self._order:
            self._order.remove(log)

    def _flushed(self, log):
        from .write import flush_index
        st = self._cache.get(log)
        if st is not None:
            flush_index(log, st)

    # -- writing --------------------------------------------------------------------------

    def persist(self, session_id, records, turn_completed=False, backend=OPENAI):
        """Durably record a batch of (type, message_json, text) records. Returns the block
        warning when this batch completed a turn that left the session over the limit.

        Raises only when the records are not on flash (ValueError: a bad batch, nothing
        written; SessionBlocked: the session is blocked; OSError, MemoryError: the append
        failed). What follows a successful append (the index, the pending file's removal,
        a compaction) is retried later when it fails: the records are kept once either way."""
        if session_id in self._ram:  # incognito: nothing reaches flash
            return self._ram[session_id].persist(records, turn_completed, backend)
        from . import write
        log = self.path(session_id)
        lines = write.encode(records, self.max_message_chars, self.max_record_bytes)
        fmt = backend_format(backend)
        if self.blocked(session_id):
            raise SessionBlocked(1, BLOCK_TEXT)
        fsutil.makedirs(self.dir)
        st = self._open(log)
        if self._fat is None:
            self._fat = fsutil.ignores_case(self.dir)
        # (what this Sessions writes below it also notes in `st`: while nothing else wrote,
        # `st` stays taken as true)
        w = fsutil.writes
        if not turn_completed and st.pend_size < 0 and st.seen == w and fsutil.size(log) != st.log_size:
            # (a turn's first record names the log's end in the pending file's header: one
            # look-up makes sure of it, should another program have written the log)
            self._forget(log)
            st = self._open(log)
            w = fsutil.writes
        try:
            if not turn_completed:
                write.append_pending(log, st, lines, fmt, self._fat)
                if st.seen == w:
                    st.seen = fsutil.writes
                return None
            try:
                ents = write.append_turn(log, st, lines, fmt)
            except write.Moved:  # (written by another program that nothing here saw)
                self._forget(log)
                st = self._open(log)
                w = fsutil.writes
                ents = write.append_turn(log, st, lines, fmt)
        except BaseException:
            self._forget(log)
            raise
        try:  # the turn is on flash: what fails from here is not reported as a failure
            write.logged(st, ents)
            if st.seen == w:  # (before the index entries: their append then checks nothing)
                st.seen = w = fsutil.writes
            if write.after_turn(log, st, self.index_every):
                self._flush_text(log, st, False)
            if st.seen == w:
                st.seen = fsutil.writes
            if st.log_size > self.size_limit:
                return self._compact(log, st)
        except Exception as e:  # noqa: BLE001 -- the turn is on flash: success all the same
            self._forget(log)  # the next use reopens and settles (pending, index, compaction)
            self._note("%s: housekeeping after a persisted turn failed, retried later: %r" % (log, e))
        return None

    def search(self, query, limit=5, session_ids=None, skipped=None):
        """Records of the sessions `session_ids` (None: every session in the folder) and their
        archives that hold the query's terms, best first (BM25, session/search.py): a list of
        {"session","role","text","score","archived","offset"} (`offset`: in the log, or in
        the archive segment for an archived record). The pending turn is not searched. A
        file that cannot be read (an I/O error) is left out and noted in the log, and its
        session id appended to the list `skipped` when one is given. Raises ValueError for
        a query that is not text or a limit out of 1..50."""
        from .search import run
        return run(self, query, limit, session_ids, skipped)

    def compact(self, session_id):
        """Compact the session now (as after a turn that left it over its limit). Returns
        the block warning when even the compacted session is over the limit, else None."""
        log = self.path(session_id)
        st = self._cache.get(log)
        if st is not None:
            # A rewrite of the log from `st` that no append of this call checked: its files are
            # looked up first (another program may have written them since).
            st.seen = -1
        return self._compact(log, self._open(log))

    def _compact(self, log, st):
        from . import compact as compact_, write
        try:
            write.clear_stale(log, st)
            new = compact_.compact(log, st, self.size_limit, self._note, self.max_record_bytes,
                                   ARCHIVE_LIMIT if self.archive_limit is None
                                   else self.archive_limit, self.clock())
        except BaseException:
            self._forget(log)  # a cut commit leaves files the cached state does not describe
            self._settled = False  # (and a journal: the next use finishes or undoes it)
            raise
        if new is None:
            return BLOCK_TEXT
        self._forget(log)
        self._remember(log, new)
        return None

    def flush(self):
        """Bring every cached session's index (and text index) up to date (also done by
        `close`)."""
        for log in self._order:
            self._flush(log, self._cache[log])

    def close(self):
        """Flush the indexes and remove the cached sessions' stale pending files (a session
        that left the cache before keeps its own, which ESP-Claw never opens and the next
        open of that session reads as stale: no damage, and no erase spent on eviction)."""
        from . import write
        # Another open may have begun a turn in the file since its state was checked (FAT
        # rewrites it in place, its size kept): that file is read before it goes.
        w = fsutil.writes
        checked = [log for log in self._order if self._cache[log].seen == w]
        if self._held is not None:
            self._held.close()
            self._held = None
        self.flush()
        for log in self._order:
            write.drop_stale(log, self._cache[log], log not in checked, self.max_record_bytes)
        self._cache = {}
        self._order = []

    # -- reading --------------------------------------------------------------------------

    def history(self, session_id, backend=OPENAI, tokens=None, file=None):
        """What a request sends of the session's history, as a History: streamed from flash
        into the request body (transport.Body), or `.messages()` as dicts. The newest records
        within `tokens` (default `history_tokens`; 0 or None: all of it), starting at a user
        record, the older ones summarized in one leading system message (ESP-Claw line B)."""
        from . import window
        from .stream import History
        log = self._target(session_id, file)
        st = self._open(log)
        snap = window.Snapshot(log, st)
        first = window.start(snap, self.history_tokens if tokens is None else tokens or 0,
                             self.max_record_bytes)
        return History(snap, first, st, backend, self.max_record_bytes, self._note)

    def messages(self, session_id, backend=OPENAI, file=None, tokens=None):
        """The history a request sends (see `history`) as message dicts, in file order:
        tool-result arrays flattened into tool messages, records of the other backend
        degraded to text, unpaired tool calls and results left out. [] when there is none.
        (`file`: a session by its file name; `tokens=0`: the whole history.)"""
        if session_id in self._ram:
            return self._ram[session_id].messages(backend)
        return self.history(session_id, backend, tokens, file).messages()

    def tail(self, session_id, n, backend=OPENAI, file=None):
        """The last `n` messages of the whole history, as `messages(tokens=0)` would end,
        read from the newest records only (a 150 KiB session costs what its last records do):
        for inspection. The window grows until it holds `n` messages or the whole history."""
        if session_id in self._ram:
            return self._ram[session_id].messages(backend)[-n:]
        h = self.history(session_id, backend, 0, file)
        want = n
        while True:
            h.first = max(0, h.snap.total - want)
            msgs = h.messages(summary=False)
            if len(msgs) >= n or not h.first:
                return msgs[-n:]
            want *= 2

    def page(self, session_id, before=0, limit=20):
        """A page of visible user/assistant text for chat UIs, newest page by default:
        {"total","revision","next_before","has_more","messages":[{"seq","role","text"}]}."""
        from . import replay
        replay.check_page(before, limit)
        log = self.path(session_id)
        st = self._open(log)
        from .archive import seg_path

        name = log.rsplit("/", 1)[-1]
        a = self.archived([name]).get(name, ())
        segs = [seg_path(self.dir, name, a[i]) for i in range(0, len(a), 2)]
        return replay.page(log, st, before, limit, self.max_record_bytes, segs)

    def archived(self, names=None):
        """{log name: array of seq, size, ...} of the live archive segments of the logs in
        `names` (None: all), oldest first; the segments of a log ESP-Claw deleted (and
        perhaps made again) are removed (heads.attached)."""
        from .heads import attached

        self._settle()
        if self._heads is None:
            from array import array

            self._heads = array("I")
        return attached(self.dir, names, self._heads, self._note, self.max_record_bytes)

    def records(self, session_id=None, file=None):
        """(type, backend, JSON bytes) of every record, logged then pending, in order; damaged
        records (not a chat record, over the size bound) are skipped. For export and inspection."""
        if session_id in self._ram:
            return self._ram[session_id].records()
        from . import replay
        log = self._target(session_id, file)
        return replay.records(log, self._open(log), self.max_record_bytes)

    def blocked(self, session_id, file=None):
        """Whether the session is blocked (over the limit even after compaction)."""
        if session_id in self._ram:
            return False
        log = self._target(session_id, file)
        self._settle()  # a deletion a cut interrupted takes its block marker too
        st = self._cache.get(log)
        if st is not None and st.nb and st.seen == fsutil.writes:
            return False  # (no marker when last looked for, and nothing written since)
        if fsutil.exists(log + fmt_.BLOCKED):
            return True
        if st is not None and st.seen == fsutil.writes:
            st.nb = True
        return False

    # -- administration -------------------------------------------------------------------

    def delete(self, session_id):
        """Remove the session's files, all or nothing across a power cut: a journal names
        the session first, and the next use of a Sessions finishes a deletion it finds.
        True if any file existed (an incognito session: its history is dropped)."""
        if self._ram.pop(session_id, None) is not None:
            return True
        from .deletion import delete

        return delete(self, session_id)

    def deleted(self, session_id):
        """A number that changes when the session is deleted (by this Sessions): a request
        notes it at its start, and its records are refused if it changed (hooks.py)."""
        log = self.path(session_id)
        for d in self._deletions:
            if d[0] == log:
                return d[1]
        return 0

    def _settle(self):
        # Finish a deletion or an archive compaction a power cut interrupted (once per
        # Sessions, as cuts mean a reboot, and again after one failed here).
        if self._settled:
            return
        self._settled = True
        if fsutil.size(self.dir + "/" + fmt_.ARCHIVING) >= 0 or fsutil.exists(
                self.dir + "/" + fmt_.CATALOG + fmt_.TMP):
            from . import archive

            name = archive.settle(self.dir)
            if name:
                self._note("compaction of %s into the archive finished after an interruption" % name)
        if fsutil.size(self.dir + "/" + fmt_.DELETING) >= 0:
            from .deletion import settle

            name = settle(self.dir)
            if name:
                self._note("deletion of %s finished after an interruption" % name)
        if fsutil.size(self.dir + "/" + fmt_.CATALOG) >= 0:
            from .archive import bound

            # (a limit lower than when they were made; not given, none: a look from the
            # REPL or the host does not know the app's, and drops nothing)
            n = bound(self.dir, self.archive_limit)
            if n:
                self._note("%d archive segments dropped: over archive_limit" % n)

    def stat(self, session_id):
        """{"file","bytes","records","pending","blocked"} of one session (after repair)."""
        if session_id in self._ram:
            return self._ram[session_id].stat()
        return self._stat(self.path(session_id))

    def incognito(self, session_id, on=True):
        """Start an incognito session (on=False: end it and drop its history): history in RAM
        only, within the token budget, nothing written to flash (ram.py)."""
        from .ram import start
        start(self, self._ram, session_id, on)

    def is_incognito(self, session_id):
        """Whether the session is incognito (its history in RAM only)."""
        return session_id in self._ram

    def _stat(self, log):
        st = self._open(log)
        return {"file": log.rsplit("/", 1)[-1], "bytes": max(st.log_size, 0),
                "records": st.records(), "pending": st.pend,
                "blocked": fsutil.exists(log + fmt_.BLOCKED)}

    def list(self):
        """Every session as `stat` reports it, with its "id", one at a time (an iterator:
        thousands of sessions do not fit in RAM together): first each session the chat maps
        name (`names`), also one without a turn yet (0 records), then the other files in the
        directory's order, with id None (listing.rows). It repairs nothing (a session that
        needs a repair is reported as it would be after it); it only finishes a deletion a
        power cut interrupted."""
        self._settle()
        from . import listing
        return listing.rows(self)

    def verify(self, session_id=None, file=None):
        """What `repair` would do, without repairing: a report dict (the keys of `repair`'s;
        all counts 0, nothing rebuilt and no leftovers when the session is sound)."""
        from . import repair
        log = self._target(session_id, file)
        self._flushed(log)  # our own unindexed records are no damage
        return repair.verify(log, self.max_record_bytes)

    def repair(self, session_id=None, file=None):
        """Check every record and repair the files: index entries dropped or added, the log
        rewritten without torn or damaged records, the pending turn reconciled, leftovers of
        interrupted rewrites settled. Returns the report of what was done ("records",
        "reindexed", "dropped", "index_entries_dropped", "torn_tail_bytes", "rebuilt_index",
        "pending", "pending_dropped", "pending_logged", "pending_superseded", "pending_unreadable",
        "leftovers");
        `verify` afterwards finds nothing. With neither a session nor a file: what belongs to
        no one session, the archive's catalog made to agree with its files (recatalog.fix:
        {"missing", "relisted", "removed"}: segments listed but gone, segments no line names,
        files of no segment)."""
        if session_id is None and file is None:
            from .recatalog import fix
            self._settle()
            return fix(self.dir)
        from . import repair
        log = self._target(session_id, file)
        self._flushed(log)
        self._forget(log)
        st, rep = repair.repair(log, self.max_record_bytes, self._note)
        self._remember(log, st)
        return rep

    def restore(self, file, records, blocked=False, archive=()):
        """Create a session from (type, backend, message JSON) records, written as they are,
        with its archive segments, [(unix time, records)] oldest first (for import; the
        session must not exist). Raises ValueError for a bad record."""
        from .restore import restore
        log = self._target(None, file)
        restore(log, records, self.max_record_bytes, blocked, archive)
        self._forget(log)
