# claw_memory: chat sessions and the /session command (ESP-Claw's session manager, §12 in docs/DESIGN.md).
# MIT license
#
# A chat (channel + chat id) has up to 32 named sessions; the current one gives the session
# id `chat:<channel>:<chat_id>:<alias>`. The map of a chat lives in
# `sessions/chat_map/chat_<safe>_<fnv1a32>.json` as ESP-Claw writes it, replaced atomically.

from . import fsutil, jsonraw, text
from ._compat import const, dumps, exc_text, ilistdir
from .core import note

MAX_SESSIONS = const(32)
_ALIAS_MAX = const(32)
_ID_MAX = const(512)  # bytes of a session id (session/format.py)
_COMMAND_MAX = const(95)
_SUB_MAX = const(7)
_MAP_MAX = const(4096)
_SAFE_CUT = const(24)
_SAFE_MAX = const(39)
_ALIAS_CHARS = const("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-")
_SPACE = const(" \t\n\r\x0c\x0b")
_DELETING = const(".deleting")  # beside a chat map: the alias being deleted
_SETTLED_MAX = const(8)  # chats whose leftovers of an interrupted write were looked for

USAGE = (
    "Usage:\n"
    "/session new [name]       Create and switch to a new session\n"
    "/session new --incognito [name]  A session kept in RAM only: nothing is written\n"
    "/session list             List sessions in this chat\n"
    "/session switch <name>    Switch to an existing session\n"
    "/session delete <name>    Delete a non-current session\n"
    "\n"
    "Examples:\n"
    "/session new\n"
    "/session new project-a\n"
    "/session list\n"
    "/session switch project-a\n"
    "/session delete project-a\n"
    "\n"
    "Session names must be 1-32 characters and may only contain A-Z, a-z, 0-9, _ or -."
)
NO_CONTEXT = "Session command failed: missing chat context."
STORAGE_ERROR = "Session command failed: unable to access session storage."
# ESP-Claw answers STORAGE_ERROR here too (docs/DESIGN.md, deliberate difference 17).
FULL = ("Cannot create a new session: this chat already has %d sessions. Delete one with "
        "/session delete <name> first." % MAX_SESSIONS)
INCOGNITO = ("Started an incognito session: %s. Nothing of it is written to flash: no history, no "
             "new memories, no profile changes. /session switch <name> (or a reboot) ends it.")
_INCOGNITO_NAME = const("incognito")  # the alias of `/session new --incognito` without one


def _raw(path):
    """A chat map's first _MAP_MAX bytes (the largest map we write, a chat id of escaped
    control characters and 32 aliases, is about 4,000: what follows is a tail, which
    ESP-Claw's cJSON_Parse ignores too); None when it is missing."""
    return fsutil.read_bounded(path, _MAP_MAX, True)


def _read(path):
    """A chat map's JSON value; None when it is missing or not JSON."""
    raw = _raw(path)
    return None if raw is None else jsonraw.json_value(raw, True)  # read as cJSON_Parse does


def _parse(obj, key):
    """(current alias, [aliases]) of a map's value as a repair leaves it: valid aliases
    (unique, at most 32), the current one falling back to the first, default_01 alone when
    none is valid."""
    aliases = []
    current = None
    if isinstance(obj, dict) and obj.get("chat_key") == key and isinstance(obj.get("sessions"), list):
        for a in obj["sessions"]:
            if valid_alias(a) and a not in aliases and len(aliases) < MAX_SESSIONS:
                aliases.append(a)
        current = obj.get("current_alias")
    if not aliases:
        aliases = ["default_01"]
    if current not in aliases:
        current = aliases[0]
    return current, aliases


def valid_alias(alias):
    if not isinstance(alias, str) or not 0 < len(alias) <= _ALIAS_MAX:
        return False
    for ch in alias:
        if ch not in _ALIAS_CHARS:
            return False
    return True


_DIGITS = const("0123456789")


def chat_key(channel, chat_id, agent=0):
    """`chat:<channel>:<chat_id>` (or `agent:<n>:chat:...` for agent n > 0); ValueError for
    an agent ESP-Claw's ids cannot name (its number is a uint32)."""
    if isinstance(agent, bool) or not isinstance(agent, int) or not 0 <= agent < 1 << 32:
        raise ValueError("agent must be 0..2**32-1")
    key = "chat:%s:%s" % (channel, chat_id)
    return "agent:%d:%s" % (agent, key) if agent else key


def agent_of(session_id):
    """The agent number n of a session id `agent:<n>:...` (ESP-Claw's ids of agent n > 0, n
    in decimal); 0 for any other id."""
    if not isinstance(session_id, str) or not session_id.startswith("agent:"):
        return 0
    n, sep, _ = session_id[6:].partition(":")
    # (ASCII digits only: CPython's isdigit() takes other scripts' digits)
    if (not sep or not 0 < len(n) <= 10 or n[0] == "0" or any(c not in _DIGITS for c in n)
            or int(n) >> 32):
        return 0
    return int(n)


def map_file(key):
    """`chat_<safe>_<fnv1a32 hex>.json`: runs of non-alphanumerics become one `_`, a trailing
    `_` goes, at most 24 characters (ESP-Claw's chat-map sanitiser)."""
    out = []
    under = False
    for b in text.to_bytes(key):
        if 48 <= b <= 57 or 65 <= b <= 90 or 97 <= b <= 122:
            out.append(chr(b))
            under = False
        elif not under:
            out.append("_")
            under = True
        if len(out) >= _SAFE_MAX:
            break
    safe = "".join(out)
    while safe.endswith("_"):
        safe = safe[:-1]
    return "chat_%s_%08x.json" % (safe[:_SAFE_CUT], text.fnv1a32(text.to_bytes(key)))


def _tokens(cmd):
    out = []
    tok = ""
    for ch in cmd:
        if ch in _SPACE:
            if tok:
                out.append(tok)
                tok = ""
        else:
            tok += ch
    if tok:
        out.append(tok)
    return out


class Chats:
    """Chat maps under `sessions/chat_map/`, and the /session command."""

    # Chat keys whose map had no leftover of an interrupted write (Chats.state): looked for
    # once, not on every turn (two name lookups in a folder of many maps). A tuple made
    # anew as it changes, the class's empty one until then: an open memory holds nothing
    # for it before its first turn.
    _settled = ()

    def __init__(self, directory, sessions=None, log=None):
        self.dir = directory
        self.sessions = sessions  # deletes a session's history; None: deletion unavailable
        self._log = log
        # Chat key -> alias of its incognito session: in RAM only, never in the map, so that
        # a reboot ends it (the chat is back on its map's current session).
        self._incognito = {}

    def _path(self, key):
        return self.dir + "/" + map_file(key)

    def state(self, key):
        """(current alias, [aliases]) of a chat key, or None when it has no map. A damaged map is
        repaired: valid aliases are kept (unique, at most 32), the current one falls back to
        the first, and an unreadable one starts again from default_01."""
        p = self._path(key)
        looked = key not in self._settled
        if looked:
            # (a cut means a reboot, a new Chats; within this one only a failed write leaves
            # them: each write of ours forgets the chat first (_unsettle), a command looks
            # again (another memory's journal), and so does a map found gone, below)
            self._settle(key)
        raw = _raw(p)  # (no stat first: the open tells a missing map)
        if raw is None and not looked:
            # Gone since it was settled: another memory on this root (docs/FORMAT.md) cut
            # inside FAT's remove-then-rename leaves the map only as its tmp.
            self._unsettle(key)
            self._settle(key)
            raw = _raw(p)
        if raw is None:
            return None  # (not settled: a chat without a map looks each time, as it did)
        if key not in self._settled:
            self._settled = self._settled[1 - _SETTLED_MAX :] + (key,)
        obj = jsonraw.json_value(raw, True)  # (ESP-Claw's cJSON_Parse ignores a stray tail)
        current, aliases = _parse(obj, key)
        if not isinstance(obj, dict) or obj.get("current_alias") != current or obj.get("sessions") != aliases:
            note(self._log, "chat map %s repaired" % p)
            self._write(key, current, aliases)
        return current, aliases

    def each(self):
        """(chat key, current alias, [aliases]) of every chat map, one map at a time in the
        directory's order (thousands of chats do not fit in RAM together), as state() would
        read them, but read only: nothing is repaired. A map that names no chat key of its
        own file name is skipped (its sessions are no chat's)."""
        if not fsutil.is_dir(self.dir):
            return
        for name, is_dir, _ in ilistdir(self.dir):
            if is_dir or not name.endswith(".json"):
                continue
            obj = _read(self.dir + "/" + name)
            key = obj.get("chat_key") if isinstance(obj, dict) else None
            if not isinstance(key, str) or map_file(key) != name:
                continue
            current, aliases = _parse(obj, key)
            yield key, current, aliases

    def names(self, session_id):
        """Whether a chat map names the session id (read only, one map read)."""
        key, sep, alias = session_id.rpartition(":") if isinstance(session_id, str) else ("", "", "")
        if not key:
            return False
        p = self._path(key)
        return fsutil.size(p) >= 0 and alias in _parse(_read(p), key)[1]

    def ids(self):
        """Every session id the chat maps name (each()), one at a time."""
        for key, current, aliases in self.each():
            for alias in aliases:
                yield key + ":" + alias

    def _state_or_default(self, key):
        # A chat's first use creates its map with the one session default_01.
        state = self.state(key)
        if state is None:
            state = ("default_01", ["default_01"])
            self._write(key, state[0], state[1])
        return state

    def save(self, key, current, aliases):
        """Write a chat's map (for import): valid, distinct aliases, at most 32, current among
        them. ValueError otherwise."""
        if (not isinstance(aliases, list) or not 0 < len(aliases) <= MAX_SESSIONS
                or len(set(aliases)) != len(aliases) or not all(valid_alias(a) for a in aliases)
                or current not in aliases):
            raise ValueError("a chat map needs 1..%d distinct valid aliases, the current one among them"
                             % MAX_SESSIONS)
        self._write(key, current, aliases)

    def _settle(self, key):
        # The leftovers of an interrupted write of the chat's map: a tmp, a deletion's journal.
        fsutil.recover([self._path(key)], valid=lambda t: True)
        self._finish_delete(key)

    def _unsettle(self, key):
        if key in self._settled:
            self._settled = tuple(k for k in self._settled if k != key)

    def _write(self, key, current, aliases):
        self._unsettle(key)
        fsutil.makedirs(self.dir)
        data = '{"chat_key":%s,"current_alias":%s,"sessions":%s}' % (dumps(key), dumps(current), dumps(aliases))
        fsutil.replace(self._path(key), data.encode())

    def session_id(self, channel, chat_id, agent=0):
        """The current session id of a chat; the first use creates its map (default_01)."""
        if not channel or not chat_id:
            raise ValueError("a chat needs a channel and a chat id")
        key = chat_key(channel, chat_id, agent)
        if len(text.to_bytes(key)) + 1 + _ALIAS_MAX > _ID_MAX:
            raise ValueError("chat key over %d bytes: its session ids would not fit 512 bytes"
                             % (_ID_MAX - 1 - _ALIAS_MAX))
        return key + ":" + (self._incognito.get(key) or self._state_or_default(key)[0])

    def incognito(self, channel, chat_id, agent=0):
        """The alias of the chat's incognito session (`/session new --incognito`), or None."""
        return self._incognito.get(chat_key(channel, chat_id, agent))

    def aliases(self, channel, chat_id, agent=0):
        """(current alias, [aliases]) of a chat, or None."""
        return self.state(chat_key(channel, chat_id, agent))

    def usage(self):
        return USAGE

    def command(self, channel, chat_id, command, agent=0):
        """Run a /session command (the text after `/session`); returns the reply text."""
        if not channel or not chat_id:
            return NO_CONTEXT
        if command is None:
            command = ""
        if not isinstance(command, str) or len(text.to_bytes(command)) > _COMMAND_MAX:
            return USAGE
        toks = _tokens(command)
        hidden = len(toks) > 1 and toks[:2] == ["new", "--incognito"]
        if hidden:
            toks = toks[:1] + toks[2:]
        if not toks or len(toks) > 2 or len(toks[0]) > _SUB_MAX:
            return USAGE
        sub = toks[0]
        alias = toks[1] if len(toks) == 2 else None
        if sub not in ("new", "list", "switch", "delete"):
            return USAGE
        if (sub == "list" and alias is not None) or (sub in ("switch", "delete") and alias is None):
            return USAGE
        if alias is not None and not valid_alias(alias):
            return USAGE
        key = chat_key(channel, chat_id, agent)
        # (a command looks again: a deletion another memory on this root journaled and could
        # not finish is finished before this one reads or writes the map)
        self._unsettle(key)
        try:
            if hidden:
                return self._hidden(key, alias or _INCOGNITO_NAME)
            return getattr(self, "_" + sub)(key, alias)
        except Exception as e:  # noqa: BLE001 -- the user gets the storage message
            note(self._log, "/session %s failed: %s" % (sub, exc_text(e)))
            return STORAGE_ERROR

    def _hidden(self, key, alias):
        # /session new --incognito: nothing is written (not even the map: a reboot ends it).
        state = self.state(key)
        if alias in (state[1] if state else ()):
            return 'Cannot create session "%s": a session with that name already exists.' % alias
        if self.sessions is None:
            return STORAGE_ERROR
        self._end(key)
        try:
            self.sessions.incognito(key + ":" + alias)
        except ValueError as e:
            return 'Cannot create session "%s": %s.' % (alias, e)
        self._incognito[key] = alias
        return INCOGNITO % alias

    def _end(self, key):
        # Leave the chat's incognito session: its history is dropped.
        alias = self._incognito.pop(key, None)
        if alias is not None and self.sessions is not None:
            self.sessions.incognito(key + ":" + alias, False)

    def _new(self, key, alias):
        # (an incognito session ends only once the new one is there: a refused or failed
        # command leaves the chat where it was)
        state = self.state(key)
        aliases = list(state[1]) if state else []
        if len(aliases) >= MAX_SESSIONS:
            return FULL
        if alias is not None:
            if alias in aliases:
                return 'Cannot create session "%s": a session with that name already exists.' % alias
        else:
            for n in range(1, MAX_SESSIONS + 1):
                alias = "default_%02d" % n
                if alias not in aliases:
                    break
        if len(text.to_bytes(key)) + 1 + len(alias) > _ID_MAX:
            return 'Cannot create session "%s": this chat\'s session ids would be over %d bytes.' % (
                alias, _ID_MAX)
        aliases.append(alias)
        self._write(key, alias, aliases)
        self._end(key)
        return "Started a new session: %s" % alias

    def _list(self, key, alias):
        hidden = self._incognito.get(key)
        if hidden is None:
            current, aliases = self._state_or_default(key)
        else:  # read only: a chat that began incognito has no map, and none is written
            current, aliases = self.state(key) or (None, [])
        return "Sessions:" + "".join(
            "\n* %s%s" % (a, " (current)" if a == current and hidden is None else "")
            for a in aliases) + ("\n* %s (incognito, current)" % hidden if hidden else "")

    def _switch(self, key, alias):
        hidden = self._incognito.get(key)
        if alias == hidden:
            return "Switched to session: %s" % alias
        state = self.state(key)
        # (a chat that began incognito goes to the default session its first use would make)
        aliases = state[1] if state else ["default_01"] if hidden else None
        if aliases is None or alias not in aliases:
            return 'Cannot switch to session "%s": no such session. Send /session list to list sessions.' % alias
        self._write(key, alias, aliases)
        self._end(key)
        return "Switched to session: %s" % alias

    def _delete(self, key, alias):
        state = self.state(key)
        if alias == self._incognito.get(key):
            return 'Cannot delete the current session "%s". Switch to another session first.' % alias
        if state is None or alias not in state[1]:
            return 'Cannot delete session "%s": no such session. Send /session list to list sessions.' % alias
        if alias == state[0]:
            return 'Cannot delete the current session "%s". Switch to another session first.' % alias
        if self.sessions is None:
            return "Session command failed: session history deletion is unavailable."
        # All or nothing across a power cut: the journal names the alias first; from then on
        # the deletion is finished (history and map entry) by whoever reads the map next.
        journal = self._path(key) + _DELETING
        self._unsettle(key)
        fsutil.write_file(journal, alias.encode())
        self._finish_delete(key)
        return "Deleted session: %s" % alias

    def _finish_delete(self, key):
        journal = self._path(key) + _DELETING
        if fsutil.size(journal) < 0:
            return
        with open(journal, "rb") as f:
            alias = f.read(_ALIAS_MAX + 1)
        try:
            alias = alias.decode()
        except UnicodeError:
            alias = ""
        if valid_alias(alias) and self.sessions is not None:  # else cut while written: not begun
            try:
                self.sessions.delete(key + ":" + alias)
            except ValueError:  # an id no session can have: no files to remove
                pass
            p = self._path(key)
            obj = _read(p)  # (over the bound: state() resets it)
            if isinstance(obj, dict) and isinstance(obj.get("sessions"), list) and alias in obj["sessions"]:
                aliases = [a for a in obj["sessions"] if a != alias and valid_alias(a)] or ["default_01"]
                current = obj.get("current_alias")
                self._write(key, current if current in aliases else aliases[0], aliases)
        fsutil.remove(journal)
