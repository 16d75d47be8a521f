# claw_memory.memory_text: what an undo and a why answer: the memory_undo tool's result, the
# replies of the /memory chat command, and the undo's stage-note entries (FULL mode only).
# MIT license

from . import dates, text
from ._compat import const, dumps

USAGE = (
    "Usage:\n"
    "/memory undo              Take back the last change to long-term memory in this session\n"
    "/memory why <memory_id>   Say where a memory came from"
)
INCOGNITO = "This session is incognito: it changes no memory, so there is nothing to undo."
_SHOWN = const(80)  # characters of a memory's content in a reply

_REASONS = {
    "nothing": ("There is no change to long-term memory in this session that can still be undone: "
                "changes can be taken back only until memory is compacted (every few changes, and "
                "at shutdown), which also removes forgotten text from flash."),
    "purged": ("The last change in this session (a %s) can no longer be undone: part of it is no "
               "longer in the records."),
    "changed": ("The last change in this session (a %s) can no longer be undone: memory %s was "
                "changed since by another session or program."),
}


def command(tools, session_id, text):
    """The /memory chat command (the text after `/memory`) for the memory tools `tools`
    (memory_tools.MemoryTools) in session `session_id`: `undo` takes back the session's last
    change, `why <memory_id>` says where a memory came from; the reply text."""
    toks = text.split() if isinstance(text, str) else []
    if toks == ["undo"]:
        if tools.hooks is not None and tools.hooks.incognito(session_id):
            return INCOGNITO
        return message(tools.store.undo(session_id))
    if len(toks) == 2 and toks[0] == "why":
        return why(tools.store.why(toks[1]), toks[1])
    return USAGE


def _label(it):
    labels = it.get("summary_labels") or []
    return labels[0] if labels else ""


def message(r):
    """The outcome of Store.undo() (its report `r`) in words: the /memory undo reply, and the
    tool result's message."""
    if r["changed"]:
        parts = ['"%s" is %s' % (text.cut(text.one_line(it["content"]), _SHOWN), how) for it, how in r["items"]]
        out = "Undone (%s): %s." % (r["undone"], "; ".join(parts))
        if r["evicted"]:
            out += " Memory is full: %s evicted to make room." % ", ".join(i for i, _ in r["evicted"])
        return out
    why = _REASONS[r["reason"]]
    if r["reason"] == "purged":
        return why % r["undone"]
    if r["reason"] == "changed":
        return why % (r["undone"], r["id"])
    return why


def result(r):
    """The memory_undo tool's result JSON."""
    out = '{"ok":true,"action":"memory_undo","changed":%s' % ("true" if r["changed"] else "false")
    if r["changed"]:
        out += ',"undone":"%s","items":[%s]' % (r["undone"], ",".join(
            '{"memory_id":%s,"summary":%s,"content":%s,"now":"%s"}' % (
                dumps(it["id"]), dumps(_label(it)), dumps(it["content"]), how) for it, how in r["items"]))
        if r["evicted"]:
            out += ',"evicted":[%s]' % ",".join('{"memory_id":%s,"summary":%s}' % (dumps(i), dumps(lab))
                                                for i, lab in r["evicted"])
    else:
        out += ',"reason":"%s"' % r["reason"]
        if "undone" in r:  # what the change was that cannot be undone, and the item in the way
            out += ',"undone":"%s"' % r["undone"]
        if "id" in r:
            out += ',"memory_id":' + dumps(r["id"])
    return out + ',"message":%s}' % dumps(message(r))


def labels(r):
    """The stage-note entries of an undo: "undone: <label>" per item it changed."""
    out = []
    for it, how in r["items"]:
        entry = "undone: " + (_label(it) or it["id"])
        if entry not in out:
            out.append(entry)
    return out


def _request(req):
    when = " on " + dates.day(req["at"]) if req["at"] >= dates.DATED else ""
    by = "extracted from" if req["by"] == "extract" else "stored by the model after"
    head = "%s a message in session %s%s" % (by, req["session"] or "?", when)
    if req["text"] is not None:
        return '%s: "%s"' % (head, text.cut(text.one_line(req["text"]), 200))
    return "%s (the message is %s)" % (head, req["missing"])


def why(w, memory_id):
    """The /memory why reply for Store.why()'s report `w`."""
    if w is None:
        return "No memory %s in the records." % text.cut(text.one_line(memory_id), 40)
    out = ['%s "%s"%s' % (w["id"], text.cut(text.one_line(w["content"]), _SHOWN),
                          "" if w["active"] else " (no longer active)")]
    if w["origin"] is None:
        out.append("Origin unknown: imported, written by another program, or stored before "
                   "provenance was recorded.")
    else:
        out.append("First " + _request(w["origin"]) + ".")
    for c in w["changes"]:
        old = ' (was "%s")' % text.cut(text.one_line(c["old_content"]), _SHOWN) if c["old_content"] else ""
        out.append("Updated%s: %s." % (old, _request(c)))
    return "\n".join(out)
