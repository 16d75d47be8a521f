# claw_memory.chat_tools: the tool envelope helpers, the profile tools and the /session tool
# (both modes); the memory_* tools are in memory_tools.py (FULL mode only).
# MIT license
#
# Result envelopes are ESP-Claw's (§11 of docs/DESIGN.md's appendix). Handlers are coroutines `(args_json, request) ->
# (ok, output_json)`; ok False makes the agent mark the tool message as an error. Nothing a
# model sends can crash a handler: bad arguments get an error envelope.

from . import jsonraw, text
from ._compat import const, dumps, exc_text
from .core import NotFound, Tool, note
from .profile import NAMES

_PROFILE_READ_SCHEMA = const('{"type":"object","properties":{"name":{"type":"string","enum":["user","soul",'
                             '"identity"]}},"required":["name"]}')
_PROFILE_UPDATE_SCHEMA = const('{"type":"object","properties":{"name":{"type":"string","enum":["user","soul",'
                               '"identity"]},"content":{"type":"string"}},"required":["name","content"]}')
_SESSION_SCHEMA = const('{"type":"object","properties":{"command":{"type":"string"}}}')
_SEARCH_SCHEMA = const('{"type":"object","properties":{"query":{"type":"string"},"limit":{"type":"integer",'
                       '"minimum":1,"maximum":10}},"required":["query"]}')
_SEARCH_LIMIT = const(10)
_SEARCH = const("memory_search")
_HIT_CHARS = const(480)  # characters of a message's text in a memory_search hit
_INCOMPLETE = const("%d session(s) could not be read (a storage error): matching messages "
                   "there are missing from these hits")
_ECHO_MAX = const(64)  # characters of the model's own input echoed in an error
_MESSAGE_MAX = const(200)
INCOGNITO = ("This session is incognito: nothing of it is remembered or written. To keep it, the "
             "user must switch to a normal session first (/session switch <name>).")


def err(error, **extra):
    """`{"ok":false,"error":...}` with ESP-Claw's optional keys, in its order. Text that
    echoes the model's input is cut (an error must not carry a 70 KB label back). `action=`:
    a tool of ours names itself, as its answers do (ESP-Claw's errors name none)."""
    a = extra.get("action")
    out = ['{"ok":false,%s"error":%s' % ('"action":"%s",' % a if a else "", dumps(error))]
    for k in ("message", "invalid_label", "available_summary_labels", "code"):
        if k == "available_summary_labels" and "available_json" in extra:
            out.append(',"available_summary_labels":' + extra["available_json"])  # JSON already
        elif k in extra:
            v = extra[k]
            if isinstance(v, str):
                v = text.cut(v, _ECHO_MAX if k == "invalid_label" else _MESSAGE_MAX)
            out.append(',"%s":%s' % (k, dumps(v)))
    out.append("}")
    return "".join(out)


def failed(op, e, log=None, **extra):
    """ESP-Claw's `<op>_failed` envelope with an esp_err-style code; the error is logged."""
    note(log, "tool %s failed: %s" % (op, exc_text(e)))
    code = "ESP_ERR_NOT_FOUND" if isinstance(e, NotFound) else (
        "ESP_ERR_INVALID_ARG" if isinstance(e, ValueError) else
        "ESP_ERR_NO_MEM" if isinstance(e, MemoryError) else "ESP_FAIL")
    return False, err(op + "_failed", code=code, message=str(e), **extra)


def args(raw):
    """The arguments object, or None when they are not a JSON object."""
    if isinstance(raw, dict):
        return raw
    if raw is None or raw == "":
        return {}
    obj = jsonraw.foreign(raw)
    return obj if isinstance(obj, dict) else None


def required(raw, key, check, error, **extra):
    """(arguments, arguments[key], None) when `check` accepts the value, else (None, None,
    error envelope)."""
    a = args(raw)
    if a is None:
        return None, None, err("invalid_json", **extra)
    value = a.get(key)
    if not check(value):
        return None, None, err(error, **extra)
    return a, value, None


def _name_args(raw):
    return required(raw, "name", lambda v: isinstance(v, str) and v in NAMES,
                    "name must be one of user, soul, identity")


class ProfileTools:
    """`profile_read` and `profile_update`, standing in for ESP-Claw's file tools.
    `incognito(session_id)`: whether a session may not write (profile_update is refused)."""

    def __init__(self, profile, log=None, incognito=None):
        self.profile = profile
        self._log = log
        self._incognito = incognito

    async def profile_read(self, raw, request=None):
        a, name, error = _name_args(raw)
        if error:
            return False, error
        try:
            body = self.profile.read(name)
        except Exception as e:  # noqa: BLE001
            return failed("profile_read", e, self._log)
        return True, '{"ok":true,"action":"profile_read","name":%s,"path":%s,"content":%s}' % (
            dumps(name), dumps(self.profile.path(name)), dumps(body))

    async def profile_update(self, raw, request=None):
        a, name, error = _name_args(raw)
        if error:
            return False, error
        content = a.get("content")
        if not isinstance(content, str) or not content.strip():
            return False, err("content is required")
        sid = getattr(request, "session_id", None)
        if sid and self._incognito is not None and self._incognito(sid):
            return False, err("incognito_session", message=INCOGNITO)
        try:
            changed = self.profile.write(name, content)
        except Exception as e:  # noqa: BLE001
            return failed("profile_update", e, self._log)
        return True, '{"ok":true,"action":"profile_update","changed":%s,"name":%s}' % (
            "true" if changed else "false", dumps(name))

    def tools(self):
        return [
            Tool("profile_read", "Read one profile document: user, soul or identity.",
                 _PROFILE_READ_SCHEMA, self.profile_read),
            Tool("profile_update", "Replace one profile document (user, soul or identity) with "
                 "its complete new text.", _PROFILE_UPDATE_SCHEMA, self.profile_update),
        ]


class SearchTool:
    """`memory_search`: the records of the current chat's sessions and their archives that
    match a query (never another chat's: on a shared device one user must not read another's
    conversations; never another agent's sessions of the chat). `chat_sessions((channel,
    chat_id), agent)` gives a chat's session ids; the request's own session is always
    searched (a chat map need not name it), and alone for a request without a chat."""

    def __init__(self, sessions, chat_sessions, log=None):
        self.sessions = sessions
        self.chat_sessions = chat_sessions
        self._log = log

    async def memory_search(self, raw, request=None):
        # (each answer names the tool, its errors too: the history search leaves them out)
        a, query, error = required(raw, "query", lambda v: isinstance(v, str) and v.strip(),
                                   "query is required", action=_SEARCH)
        if error:
            return False, error
        limit = a.get("limit")
        # (a model's limit of 0, 99 or "3" gets the nearest it may have, or the default)
        limit = max(1, min(_SEARCH_LIMIT, limit)) if (
            isinstance(limit, int) and not isinstance(limit, bool)) else 5
        channel = getattr(request, "channel", None)
        chat_id = getattr(request, "chat_id", None)
        sid = getattr(request, "session_id", None)
        try:
            if channel and chat_id:
                from .chats import agent_of, chat_key

                agent = agent_of(sid)  # (the calling agent's: ESP-Claw's ids name it)
                prefix = chat_key(channel, chat_id, agent) + ":"
                ids = self.chat_sessions((channel, chat_id), agent)
                if sid:  # (in scope, and last: the newest on a tie)
                    ids = tuple(i for i in ids if i != sid) + (sid,)
            elif sid:
                prefix = ""
                ids = (sid,)
            else:
                return False, err("no_session", action=_SEARCH, message="this request belongs to no session")
            skipped = []
            hits = self.sessions.search(query, limit, ids, skipped)
            from .session.hits import excerpt, query_words  # (loaded by the search)

            words = query_words(query)
        except Exception as e:  # noqa: BLE001 -- never into the agent loop
            return failed(_SEARCH, e, self._log, action=_SEARCH)
        out = ['{"ok":true,"action":"%s","changed":false,"hits":[' % _SEARCH]
        for i, h in enumerate(hits):
            name = h["session"]
            if prefix and name.startswith(prefix):
                name = name[len(prefix):]
            out.append('%s{"session":%s,"role":%s,"text":%s,"archived":%s}' % (
                "," if i else "", dumps(name), dumps(h["role"]), dumps(excerpt(h["text"], words, _HIT_CHARS)),
                "true" if h["archived"] else "false"))
        out.append("]")
        if skipped:  # (the log has the error: the model and the user hear that hits may lack)
            out.append(',"incomplete":true,"note":%s' % dumps(_INCOMPLETE % len(skipped)))
        elif not hits:
            from .session.search import query_hashes  # (loaded by the search)

            if not query_hashes(query):  # (not "nothing was said": nothing was asked)
                out.append(',"note":"the query has no word to search for (only common words, '
                           'punctuation or symbols): ask with names, places or numbers"')
        out.append("}")
        return True, "".join(out)

    def tool(self):
        return Tool(_SEARCH, "Search what was said in this chat's conversations, its "
                    "other sessions and archived old turns included: the messages that best "
                    "match a few words (names, places, numbers).", _SEARCH_SCHEMA,
                    self.memory_search)


class SessionTool:
    """/session as a tool (ESP-Claw routes the chat command to the same handler)."""

    def __init__(self, chats):
        self.chats = chats

    async def session_command(self, raw, request=None):
        a = args(raw)
        if a is None:
            return True, self.chats.usage()
        from .chats import agent_of

        # (the calling agent's sessions of the chat: ESP-Claw's session ids name the agent)
        return True, self.chats.command(getattr(request, "channel", None),
                                        getattr(request, "chat_id", None), a.get("command", ""),
                                        agent_of(getattr(request, "session_id", None)))

    def tool(self):
        return Tool("session_command", "Manage this chat's sessions: the text after /session "
                    "(new [name], list, switch <name>, delete <name>).", _SESSION_SCHEMA,
                    self.session_command)
