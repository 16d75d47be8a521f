# claw_memory: the tools the LLM calls: memory_store/recall/list/update/forget, the profile
# documents, and /session.
# MIT license
#
# Names, schemas and result envelopes are ESP-Claw's (§11); descriptions are ours. Handlers
# are coroutines `(args_json, request) -> (ok, output_json)`; ok False makes the agent mark
# the tool message as an error. Nothing a model sends can crash a handler: bad arguments get
# an error envelope.

from . import item as itm
from . import text
from ._compat import const, dumps, exc_text
from .core import NotFound, Tool
from .profile import NAMES

_LIST_MAX = const(16384)  # bytes of items in a memory_list result

_STORE_SCHEMA = ('{"type":"object","properties":{"memory_id":{"type":"string"},"content":{"type":"string"},'
                 '"tags":{"type":"string"},"keywords":{"type":"string"}},"required":["content"]}')
_UPDATE_SCHEMA = ('{"type":"object","properties":{"memory_id":{"type":"string"},"content":{"type":"string"},'
                  '"tags":{"type":"string"},"keywords":{"type":"string"}},"required":["memory_id"]}')
_RECALL_SCHEMA = ('{"type":"object","properties":{"summary_labels":{"type":"array","items":{"type":"string"}},'
                  '"limit":{"type":"integer"}}}')
_LIST_SCHEMA = '{"type":"object","properties":{}}'
_FORGET_SCHEMA = '{"type":"object","properties":{"memory_id":{"type":"string"}},"required":["memory_id"]}'
_PROFILE_READ_SCHEMA = ('{"type":"object","properties":{"name":{"type":"string","enum":["user","soul",'
                        '"identity"]}},"required":["name"]}')
_PROFILE_UPDATE_SCHEMA = ('{"type":"object","properties":{"name":{"type":"string","enum":["user","soul",'
                          '"identity"]},"content":{"type":"string"}},"required":["name","content"]}')
_SESSION_SCHEMA = '{"type":"object","properties":{"command":{"type":"string"}}}'

_INVALID_LABELS = "summary_labels must be copied exactly from the current memory summary label catalog"


def _err(error, **extra):
    out = '{"ok":false,"error":%s' % dumps(error)
    for k in ("message", "invalid_label", "available_summary_labels", "code"):
        if k in extra:
            out += ',"%s":%s' % (k, dumps(extra[k]))
    return out + "}"


def _failed(op, e):
    # ESP-Claw's `<op>_failed` envelope with an esp_err-style code.
    code = "ESP_ERR_NOT_FOUND" if isinstance(e, NotFound) else (
        "ESP_ERR_INVALID_ARG" if isinstance(e, ValueError) else
        "ESP_ERR_NO_MEM" if isinstance(e, MemoryError) else "ESP_FAIL")
    return False, _err(op + "_failed", code=code, message=str(e))


def _ok(action, changed, memory_id=None, summary=None, items=None, extra=""):
    out = '{"ok":true,"action":"%s","changed":%s' % (action, "true" if changed else "false")
    if memory_id:
        out += ',"memory_id":' + dumps(memory_id)
    if summary:
        out += ',"summary":' + dumps(summary)
    if items is not None:
        out += ',"items":[' + ",".join(items) + "]"
    return out + extra + "}"


def _args(raw):
    """The arguments object, or None when they are not a JSON object."""
    if isinstance(raw, dict):
        return raw
    if raw is None or raw == "":
        return {}
    obj = text.json_value(raw)
    return obj if isinstance(obj, dict) else None


def _required(raw, key, check, error):
    """(arguments, arguments[key], None) when `check` accepts the value, else (None, None,
    error envelope)."""
    a = _args(raw)
    if a is None:
        return None, None, _err("invalid_json")
    value = a.get(key)
    if not check(value):
        return None, None, _err(error)
    return a, value, None


def _id_args(raw):
    return _required(raw, "memory_id", lambda v: isinstance(v, str) and v, "memory_id is required")


def _name_args(raw):
    return _required(raw, "name", lambda v: isinstance(v, str) and v in NAMES,
                     "name must be one of user, soul, identity")


def _text(v):
    """A string argument; arrays of strings (as models sometimes send tags) are joined."""
    if isinstance(v, str):
        return v
    if isinstance(v, (list, tuple)):
        return ",".join(x for x in v if isinstance(x, str))
    return ""


def _count(v):
    """A positive whole number from an argument, else 0 (NaN, infinity and text included)."""
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        return 0
    if not -1e9 < v < 1e9:  # also false for NaN
        return 0
    return max(int(v), 0)


def _item_json(it):
    return itm.to_json(it, it.get("summary_labels") or [])


class MemoryTools:
    """The tools, bound to a memory's store, profile, chats and hooks."""

    def __init__(self, store=None, profile=None, chats=None, hooks=None, extraction=None, log=None):
        self.store = store
        self.profile = profile
        self.chats = chats
        self.hooks = hooks
        self.extraction = extraction
        self._log = log

    def _fail(self, op, e):
        if self._log:
            self._log("tool %s failed: %s" % (op, exc_text(e)))
        return _failed(op, e)

    def _done(self, action, it, changed, request):
        """The success envelope of a write; a change marks the request as written by hand and
        adds the item's labels to its stage note."""
        labels = it["summary_labels"]
        if changed and self.hooks is not None and request is not None:
            self.hooks.mark_manual(request.id)
            self.hooks.note_labels(request.session_id, labels)
        return True, _ok(action, changed, it["id"], labels[0] if labels else None)

    # -- memory ---------------------------------------------------------------------------

    async def memory_store(self, raw, request=None):
        a = _args(raw)
        if a is None:
            return False, _err("invalid_json")
        content = _text(a.get("content"))
        mid = a.get("memory_id")
        if not content.strip():
            return False, _err("content is required")
        try:
            it, changed = self.store.store(content, _text(a.get("tags")), _text(a.get("keywords")),
                                           _text(a.get("source")) or "manual",
                                           mid if isinstance(mid, str) and mid else None)
        except Exception as e:  # noqa: BLE001
            if isinstance(e, ValueError) and str(e) == "content is required":
                return False, _err("content is required")
            return self._fail("memory_store", e)
        return self._done("memory_store", it, changed, request)

    async def memory_recall(self, raw, request=None):
        a = _args(raw)
        if a is None:
            return False, _err("invalid_json")
        wanted = a.get("summary_labels")
        wanted = [x for x in wanted if isinstance(x, str) and x][:3] if isinstance(wanted, list) else []
        limit = _count(a.get("limit"))
        try:
            catalog = [e["label"] for e in self.store.labels()]
            for lab in wanted:
                if lab not in catalog:
                    return True, _err("invalid_summary_labels", message=_INVALID_LABELS,
                                      invalid_label=lab, available_summary_labels=catalog)
            items = self.store.recall(wanted, limit if limit > 0 else 8)
        except Exception as e:  # noqa: BLE001
            return self._fail("memory_recall", e)
        # Recall changes no memory (ESP-Claw says changed: true; DESIGN.md difference 6).
        return True, _ok("memory_recall", False, items=[_item_json(it) for it in items])

    async def memory_list(self, raw=None, request=None):
        try:
            items = self.store.list()
        except Exception as e:  # noqa: BLE001
            return self._fail("memory_list", e)
        out = []
        used = 0
        for it in items:
            js = _item_json(it)
            if used + len(js) > _LIST_MAX and out:
                break
            out.append(js)
            used += len(js) + 1
        extra = ""
        if len(out) < len(items):
            # Bounded, and still valid JSON (ESP-Claw cut its 32 KiB buffer mid-text).
            extra = ',"truncated":true,"total":%d' % len(items)
        return True, _ok("memory_list", False, items=out, extra=extra)

    async def memory_update(self, raw, request=None):
        a, mid, error = _id_args(raw)
        if error:
            return False, error
        try:
            it, changed = self.store.update(mid, _text(a.get("content")) or None, _text(a.get("tags")) or None,
                                            _text(a.get("keywords")) or None, _text(a.get("source")) or None)
        except Exception as e:  # noqa: BLE001
            return self._fail("memory_update", e)
        return self._done("memory_update", it, changed, request)

    async def memory_forget(self, raw, request=None):
        a, mid, error = _id_args(raw)
        if error:
            return False, error
        try:
            it, changed = self.store.forget(mid)
        except Exception as e:  # noqa: BLE001
            return self._fail("memory_forget", e)
        if self.extraction is not None:
            self.extraction.forgotten(it)
        return self._done("memory_forget", it, changed, request)

    # -- profile --------------------------------------------------------------------------

    async def profile_read(self, raw, request=None):
        a, name, error = _name_args(raw)
        if error:
            return False, error
        try:
            body = self.profile.read(name)
        except Exception as e:  # noqa: BLE001
            return self._fail("profile_read", e)
        return True, '{"ok":true,"action":"profile_read","name":%s,"path":%s,"content":%s}' % (
            dumps(name), dumps(self.profile.path(name)), dumps(body))

    async def profile_update(self, raw, request=None):
        a, name, error = _name_args(raw)
        if error:
            return False, error
        content = a.get("content")
        if not isinstance(content, str) or not content.strip():
            return False, _err("content is required")
        try:
            changed = self.profile.write(name, content)
        except Exception as e:  # noqa: BLE001
            return self._fail("profile_update", e)
        return True, '{"ok":true,"action":"profile_update","changed":%s,"name":%s}' % (
            "true" if changed else "false", dumps(name))

    # -- sessions -------------------------------------------------------------------------

    async def session_command(self, raw, request=None):
        a = _args(raw)
        if a is None:
            return True, self.chats.usage()
        return True, self.chats.command(getattr(request, "channel", None),
                                        getattr(request, "chat_id", None), a.get("command", ""))

    # -- tool lists -----------------------------------------------------------------------

    def memory_tools(self):
        return [
            Tool("memory_store", "Save one fact about the user to long-term memory, as a short "
                 "normalised statement with a few precise tags and keywords.", _STORE_SCHEMA,
                 self.memory_store),
            Tool("memory_recall", "Read long-term memories by summary labels copied exactly from "
                 "the label catalog in the system prompt.", _RECALL_SCHEMA, self.memory_recall),
            Tool("memory_list", "List every long-term memory with its memory_id.", _LIST_SCHEMA,
                 self.memory_list),
            Tool("memory_update", "Change one long-term memory, found by its exact memory_id; "
                 "give the corrected fact and its tags and keywords.", _UPDATE_SCHEMA,
                 self.memory_update),
            Tool("memory_forget", "Delete one long-term memory by its exact memory_id.",
                 _FORGET_SCHEMA, self.memory_forget),
        ]

    def profile_tools(self):
        return [
            Tool("profile_read", "Read one profile document: user, soul or identity.",
                 _PROFILE_READ_SCHEMA, self.profile_read),
            Tool("profile_update", "Replace one profile document (user, soul or identity) with "
                 "its complete new text.", _PROFILE_UPDATE_SCHEMA, self.profile_update),
        ]

    def session_tool(self):
        return Tool("session_command", "Manage this chat's sessions: the text after /session "
                    "(new [name], list, switch <name>, delete <name>).", _SESSION_SCHEMA,
                    self.session_command)
