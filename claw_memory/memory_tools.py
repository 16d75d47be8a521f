# claw_memory.memory_tools: the long-term memory tools memory_store/recall/list/update/forget
# (FULL mode only).
# MIT license
#
# Names, schemas and result envelopes are ESP-Claw's (§11 in docs/DESIGN.md); descriptions are ours.

from . import item as itm
from ._compat import const, dumps
from .core import MissingContent, Tool
from .chat_tools import args, err, failed, required

_LIST_MAX = const(16384)  # bytes of items in a memory_list result

_STORE_SCHEMA = const('{"type":"object","properties":{"memory_id":{"type":"string"},"content":{"type":"string"},'
                      '"tags":{"type":"string"},"keywords":{"type":"string"}},"required":["content"]}')
_UPDATE_SCHEMA = const('{"type":"object","properties":{"memory_id":{"type":"string"},"content":{"type":"string"},'
                       '"tags":{"type":"string"},"keywords":{"type":"string"}},"required":["memory_id"]}')
_RECALL_SCHEMA = const('{"type":"object","properties":{"summary_labels":{"type":"array","items":{"type":"string"}},'
                       '"query":{"type":"string"},"limit":{"type":"integer"}}}')
_LIST_SCHEMA = const('{"type":"object","properties":{}}')
_FORGET_SCHEMA = const('{"type":"object","properties":{"memory_id":{"type":"string"}},"required":["memory_id"]}')

_INVALID_LABELS = const("summary_labels must be copied exactly from the current memory summary label catalog")


def _ok(action, changed, memory_id=None, summary=None, items=None, extra=""):
    # One join of all the parts: a 16 KiB memory_list result is built once, not copied.
    out = ['{"ok":true,"action":"%s","changed":%s' % (action, "true" if changed else "false")]
    if memory_id:
        out.append(',"memory_id":' + dumps(memory_id))
    if summary:
        out.append(',"summary":' + dumps(summary))
    if items is not None:
        out.append(',"items":[')
        for i, js in enumerate(items):
            if i:
                out.append(",")
            out.append(js)
        out.append("]")
    out.append(extra)
    out.append("}")
    return "".join(out)


def _id_args(raw):
    return required(raw, "memory_id", lambda v: isinstance(v, str) and v, "memory_id is required")


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
    """The memory tools, bound to a memory's store, hooks (manual-write marks, stage-note
    labels) and extraction (which must not store again what was forgotten by hand)."""

    def __init__(self, store, hooks=None, extraction=None, log=None):
        self.store = store
        self.hooks = hooks
        self.extraction = extraction
        self._log = log

    def _done(self, action, it, changed, request):
        """The success envelope of a write; a change marks the request as written by hand and
        adds the item's labels to its stage note."""
        labels = it["summary_labels"]
        if changed and self.hooks is not None and request is not None:
            self.hooks.mark_manual(request.id)
            self.hooks.note_labels(request.session_id, labels)
        return True, _ok(action, changed, it["id"], labels[0] if labels else None)

    async def memory_store(self, raw, request=None):
        a = args(raw)
        if a is None:
            return False, err("invalid_json")
        content = _text(a.get("content"))
        mid = a.get("memory_id")
        if mid is not None and not isinstance(mid, str):
            return failed("memory_store", ValueError("memory_id must be a string"), self._log)
        if not content.strip():
            return False, err("content is required")
        try:
            it, changed = self.store.store(content, _text(a.get("tags")), _text(a.get("keywords")),
                                           _text(a.get("source")) or "manual",
                                           mid if isinstance(mid, str) and mid else None)
        except MissingContent:
            return False, err("content is required")
        except Exception as e:  # noqa: BLE001
            return failed("memory_store", e, self._log)
        return self._done("memory_store", it, changed, request)

    async def memory_recall(self, raw, request=None):
        a = args(raw)
        if a is None:
            return False, err("invalid_json")
        wanted = a.get("summary_labels")
        if wanted is not None and not isinstance(wanted, list):
            return failed("memory_recall", ValueError("summary_labels must be an array of labels"),
                          self._log)
        wanted = [x for x in wanted if isinstance(x, str) and x][:3] if wanted else []
        query = a.get("query")
        if query is not None and not isinstance(query, str):
            return failed("memory_recall", ValueError("query must be text"), self._log)
        limit = _count(a.get("limit"))
        try:
            for lab in wanted:
                if not self.store.has_label(lab):
                    return True, err("invalid_summary_labels", message=_INVALID_LABELS,
                                     invalid_label=lab, available_json=self.store.labels_json())
            items = self.store.recall(wanted, limit if limit > 0 else 8, query)
        except Exception as e:  # noqa: BLE001
            return failed("memory_recall", e, self._log)
        # Recall changes no memory (ESP-Claw says changed: true; docs/DESIGN.md, deliberate difference 6).
        return True, _ok("memory_recall", False, items=[_item_json(it) for it in items])

    async def memory_list(self, raw=None, request=None):
        # The whole result stays within 16 KiB and valid JSON (ESP-Claw cut its 32 KiB
        # buffer mid-text). It is written into one buffer allocated first, items read one at
        # a time: a list of item strings joined at the end needs the result's size twice in
        # RAM, and a contiguous block after the items' garbage.
        try:
            total = self.store.count()
            tail = ('],"truncated":true,"total":%d}' % total).encode()
            buf = bytearray(_LIST_MAX)
            head = b'{"ok":true,"action":"memory_list","changed":false,"items":['
            buf[: len(head)] = head
            n = len(head)
            count = 0
            for it in self.store.list():
                js = _item_json(it).encode()
                if count:
                    js = b"," + js
                if n + len(js) + len(tail) > _LIST_MAX:
                    break
                buf[n : n + len(js)] = js
                n += len(js)
                count += 1
            end = tail if count < total else b"]}"
            buf[n : n + len(end)] = end
            n += len(end)
            return True, str(memoryview(buf)[:n], "utf-8")
        except Exception as e:  # noqa: BLE001
            return failed("memory_list", e, self._log)

    async def memory_update(self, raw, request=None):
        a, mid, error = _id_args(raw)
        if error:
            return False, error
        try:
            it, changed = self.store.update(mid, _text(a.get("content")) or None, _text(a.get("tags")) or None,
                                            _text(a.get("keywords")) or None, _text(a.get("source")) or None)
        except Exception as e:  # noqa: BLE001
            return failed("memory_update", e, self._log)
        return self._done("memory_update", it, changed, request)

    async def memory_forget(self, raw, request=None):
        a, mid, error = _id_args(raw)
        if error:
            return False, error
        try:
            it, changed = self.store.forget(mid)
        except Exception as e:  # noqa: BLE001
            return failed("memory_forget", e, self._log)
        if self.extraction is not None:
            self.extraction.forgotten(it)
        return self._done("memory_forget", it, changed, request)

    def tools(self):
        return [
            Tool("memory_store", "Save one fact about the user to long-term memory, as a short "
                 "normalised statement with a few precise tags and keywords.", _STORE_SCHEMA,
                 self.memory_store),
            Tool("memory_recall", "Read long-term memories: by `query` (free text, the best "
                 "matches first) and/or by summary labels copied exactly from the label catalog "
                 "in the system prompt (labels filter, the query ranks).", _RECALL_SCHEMA,
                 self.memory_recall),
            Tool("memory_list", "List every long-term memory with its memory_id.", _LIST_SCHEMA,
                 self.memory_list),
            Tool("memory_update", "Change one long-term memory, found by its exact memory_id; "
                 "give the corrected fact and its tags and keywords.", _UPDATE_SCHEMA,
                 self.memory_update),
            Tool("memory_forget", "Delete one long-term memory by its exact memory_id.",
                 _FORGET_SCHEMA, self.memory_forget),
        ]
