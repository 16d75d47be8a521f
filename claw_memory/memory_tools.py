# claw_memory.memory_tools: the long-term memory tools memory_store/recall/list/update/forget
# (FULL mode only).
# MIT license
#
# Names, schemas and result envelopes are ESP-Claw's (§11 in docs/DESIGN.md); descriptions are ours.

from . import item as itm
from ._compat import const, dumps
from .core import MissingContent, Tool
from .chat_tools import INCOGNITO, args, err, failed, required

_LIST_MAX = const(16384)  # bytes of items in a memory_list result
_PIECE = const(1024)  # bytes of the pieces a memory_list result is copied out in

_STORE_SCHEMA = const('{"type":"object","properties":{"memory_id":{"type":"string"},"content":{"type":"string"},'
                      '"tags":{"type":"string"},"keywords":{"type":"string"},"expires":{"type":"string"}},'
                      '"required":["content"]}')
_UPDATE_SCHEMA = const('{"type":"object","properties":{"memory_id":{"type":"string"},"content":{"type":"string"},'
                       '"tags":{"type":"string"},"keywords":{"type":"string"},"expires":{"type":"string"}},'
                       '"required":["memory_id"]}')
_NO_CLOCK = const(',"note":"the board\'s clock is not set: this memory does not expire"')
_RECALL_SCHEMA = const('{"type":"object","properties":{"summary_labels":{"type":"array","items":{"type":"string"}},'
                       '"query":{"type":"string"},"limit":{"type":"integer"}}}')
_LIST_SCHEMA = const('{"type":"object","properties":{}}')
_FORGET_SCHEMA = const('{"type":"object","properties":{"memory_id":{"type":"string"}},"required":["memory_id"]}')

_INVALID_LABELS = const("summary_labels must be copied exactly from the current memory summary label catalog")


def _as_str(box, n):
    # The buffer in `box` (its only holder), its first n bytes as a str, needing one large
    # free run, not two: copied out in small pieces (cut between characters) by a function
    # that returns, so that no frame's stale slot still names the buffer or a view of it,
    # then the pieces joined once (the allocation collects garbage when it finds no run: the
    # buffer's is free then). A str made from the whole buffer needs a second run of its size
    # while the buffer is alive: on a fragmented heap at capacity there may be none.
    return "".join(_pieces(box, n))


def _pieces(box, n):
    buf = box.pop()
    pieces = []
    i = 0
    while i < n:
        j = min(i + _PIECE, n)
        while j < n and buf[j] & 0xC0 == 0x80:
            j -= 1  # (a UTF-8 continuation byte: the cut goes before its character)
        pieces.append(str(memoryview(buf)[i:j], "utf-8"))
        i = j
    return pieces


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


def _item_json(it, zone=None):
    """An item as the tools return it: ESP-Claw's fields and labels, then where it came from
    ("from": session and date; left out when unknown), its date when its clock was set, and
    its expiry (days in the user's time `zone`, when it names an offset)."""
    from . import dates, provenance  # (imported when first used: as .mpy, bytecode is heap)

    offset = dates.offset_of(zone)
    out = itm.to_json(it, it.get("summary_labels") or [], ours=False)[:-1]
    if it.get("origin"):
        out += ',"from":' + dumps(provenance.origin_text(it))
    if it["updated_at"] >= dates.DATED:
        out += ',"date":"%s"' % dates.day(it["updated_at"], offset)
    if it.get("expires_at"):
        out += ',"expires":"%s"' % dates.day(it["expires_at"] - 1, offset)
    return out + "}"


class MemoryTools:
    """The memory tools, bound to a memory's store, hooks (manual-write marks, stage-note
    labels, provenance, incognito sessions) and extraction (which must not store again what
    was forgotten by hand). `zone`: the user's time zone (dates.offset_of) for dates."""

    def __init__(self, store, hooks=None, extraction=None, log=None, zone=None):
        self.store = store
        self.hooks = hooks
        self.extraction = extraction
        self._log = log
        self.zone = zone

    def _done(self, action, it, changed, request, extra=""):
        """The success envelope of a write; a change marks the request as written by hand and
        adds the item's labels to its stage note."""
        labels = it["summary_labels"]
        if changed and self.hooks is not None and request is not None:
            self.hooks.mark_manual(request.id)
            self.hooks.note_labels(request.session_id, labels)
        return True, _ok(action, changed, it["id"], labels[0] if labels else None, extra=extra)

    def _hidden(self, request):
        """Whether the request runs in an incognito session (nothing may be written)."""
        return self.hooks is not None and request is not None and self.hooks.incognito(request.session_id)

    def _by(self, request):
        if self.hooks is None or request is None:
            return None
        return self.hooks.by(request.session_id, request.text)

    def _expiry(self, v):
        """(unix time or 0, extra result text) of an `expires` argument; "never": 0. A duration
        while the clock is not set: 0, and the result says so. ValueError otherwise."""
        from . import dates

        if v is None or v == "" or v == "never":
            return 0, ""
        at = dates.expiry(v, self.store.clock(), dates.offset_of(self.zone))
        return (at, "") if at else (0, _NO_CLOCK)

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
        if self._hidden(request):
            return False, err("incognito_session", message=INCOGNITO)
        try:
            exp, note = self._expiry(a.get("expires"))
        except ValueError as e:
            return False, err(str(e))
        try:
            with self.store.batch(self._by(request)) as b:
                it, changed = b.store(content, _text(a.get("tags")), _text(a.get("keywords")),
                                      _text(a.get("source")) or "manual",
                                      mid if isinstance(mid, str) and mid else None, exp)
        except MissingContent:
            return False, err("content is required")
        except Exception as e:  # noqa: BLE001
            return failed("memory_store", e, self._log)
        # A store at capacity evicts: said here and in the log, undone by memory_undo.
        evicted = ',"evicted":[%s]' % ",".join('{"memory_id":%s,"summary":%s}' % (dumps(i), dumps(lab))
                                               for i, lab in b.evicted) if b.evicted else ""
        return self._done("memory_store", it, changed, request, evicted + note)

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
            # (an incognito session reads, and counts no recall: nothing is written)
            items = self.store.recall(wanted, limit if limit > 0 else 8, query, not self._hidden(request))
        except Exception as e:  # noqa: BLE001
            return failed("memory_recall", e, self._log)
        # Recall changes no memory (ESP-Claw says changed: true; docs/DESIGN.md, deliberate difference 6).
        return True, _ok("memory_recall", False, items=[_item_json(it, self.zone) for it in items])

    async def memory_list(self, raw=None, request=None):
        # The whole result stays within 16 KiB and valid JSON (ESP-Claw cut its 32 KiB
        # buffer mid-text). It is written into one buffer allocated first, items read one at
        # a time (item strings joined at the end would scatter over the heap, in its largest
        # free run too), then made a str through _as_str.
        try:
            total = self.store.count()
            # how full the store is: the eviction at capacity is no surprise
            full = ',"total":%d,"capacity":%d}' % (total, self.store.max_active)
            tail = ('],"truncated":true' + full).encode()
            buf = bytearray(_LIST_MAX)
            head = b'{"ok":true,"action":"memory_list","changed":false,"items":['
            buf[: len(head)] = head
            n = len(head)
            count = 0
            for it in self.store.list():
                js = _item_json(it, self.zone).encode()
                if count:
                    js = b"," + js
                if n + len(js) + len(tail) > _LIST_MAX:
                    break
                buf[n : n + len(js)] = js
                n += len(js)
                count += 1
            end = tail if count < total else ("]" + full).encode()
            buf[n : n + len(end)] = end
            n += len(end)
            box = [buf]
            buf = None  # (only the box holds it: _as_str lets it go)
            return True, _as_str(box, n)
        except Exception as e:  # noqa: BLE001
            return failed("memory_list", e, self._log)

    async def memory_update(self, raw, request=None):
        a, mid, error = _id_args(raw)
        if error:
            return False, error
        if self._hidden(request):
            return False, err("incognito_session", message=INCOGNITO)
        note = ""
        exp = a.get("expires")
        if exp not in (None, ""):
            try:
                exp, note = self._expiry(exp)
            except ValueError as e:
                return False, err(str(e))
        else:
            exp = None  # as it was
        try:
            it, changed = self.store.update(mid, _text(a.get("content")) or None, _text(a.get("tags")) or None,
                                            _text(a.get("keywords")) or None, _text(a.get("source")) or None,
                                            exp, self._by(request))
        except Exception as e:  # noqa: BLE001
            return failed("memory_update", e, self._log)
        return self._done("memory_update", it, changed, request, note)

    async def memory_forget(self, raw, request=None):
        a, mid, error = _id_args(raw)
        if error:
            return False, error
        if self._hidden(request):
            return False, err("incognito_session", message=INCOGNITO)
        try:
            if self.extraction is not None:
                # before the forget: an answer under way must not store it again, and nothing
                # that could fail comes between the forget and the reply
                old = self.store.get(mid)
                if old is not None:
                    self.extraction.forgotten(old)
            it, changed = self.store.forget(mid, self._by(request))
        except Exception as e:  # noqa: BLE001
            return failed("memory_forget", e, self._log)
        return self._done("memory_forget", it, changed, request)

    async def memory_undo(self, raw=None, request=None):
        from . import memory_text

        if self._hidden(request):
            return False, err("incognito_session", message=INCOGNITO)
        try:
            r = self.store.undo(request.session_id if request is not None else None)
        except Exception as e:  # noqa: BLE001
            return failed("memory_undo", e, self._log)
        if r["changed"]:
            for it, how in r["items"]:
                if how == "forgotten" and self.extraction is not None:
                    self.extraction.forgotten(it)  # (an answer under way must not store it again)
            if self.hooks is not None and request is not None:
                self.hooks.mark_manual(request.id)
                self.hooks.note_labels(request.session_id, memory_text.labels(r))
        return True, memory_text.result(r)

    def tools(self):
        return [
            Tool("memory_store", "Save one fact about the user to long-term memory, as a short "
                 "normalised statement with a few precise tags and keywords; `expires` (a date "
                 "2026-12-24, or 7d) for a fact that is only true for a while.", _STORE_SCHEMA,
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
            Tool("memory_undo", "Take back the last change made to long-term memory in this "
                 "session (a store, update or forget), when the user asks to undo it.",
                 _LIST_SCHEMA, self.memory_undo),  # (no arguments, as memory_list)
        ]
