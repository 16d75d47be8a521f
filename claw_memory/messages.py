# claw_memory.messages: the one place that knows the shapes of chat messages.
# MIT license
#
# Session records are the backends' own messages (OpenAI `tool_calls`, Anthropic content
# blocks with `tool_use`, arrays of `role: tool` results). Everything that looks inside one
# (record classification, replay, degrading between backends, tool-call pairing, the text a
# chat UI or the REPL shows) goes through this module.

from . import text
from ._compat import const
from .core import FINAL, RESPONSES, STATE, TOOL_CALL, TOOL_RESULTS, USER

_CUT = const(60)  # characters of text shown per table cell


def classify(obj):
    """(record type, backend format) derived from a record's JSON, (0, 0) if it is none."""
    if isinstance(obj, list):
        return (TOOL_RESULTS, 0) if all(isinstance(m, dict) for m in obj) else (0, 0)
    if not isinstance(obj, dict):
        return 0, 0
    role = obj.get("role")
    if role == "user":
        return USER, 0
    if role == "tool":
        return TOOL_RESULTS, 0
    if role != "assistant":
        return 0, 0
    state = obj.get(STATE)  # ESP-Claw's OpenAI Responses records
    if isinstance(state, dict) and state.get("backend") == RESPONSES:
        return (TOOL_CALL if obj.get("tool_calls") else FINAL), 3
    if obj.get("tool_calls"):
        return TOOL_CALL, 1
    content = obj.get("content")
    if isinstance(content, list):
        for block in content:
            if isinstance(block, dict) and block.get("type") == "tool_use":
                return TOOL_CALL, 2
        return FINAL, 2
    return FINAL, 1 if "reasoning_content" in obj else 0


def as_dict(x):
    """`x` when it is a dict (a JSON object), else an empty one."""
    return x if isinstance(x, dict) else {}


def text_of(content):
    """Joined text of a content that is a str, None or a list of text blocks (no separator)."""
    if isinstance(content, str):
        return content
    parts = []
    if isinstance(content, list):
        for b in content:
            if isinstance(b, dict) and b.get("type") == "text" and isinstance(b.get("text"), str):
                parts.append(b["text"])
    return "".join(parts)


def visible_text(value):
    """The text a chat UI shows for a message's content (ESP-Claw's UI extraction)."""
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        parts = [visible_text(v) for v in value]
        return "\n".join(p for p in parts if p)
    if isinstance(value, dict):
        kind = value.get("type")
        if kind is None or kind in ("text", "output_text", "message"):
            inner = value.get("content")
            if inner is None:
                inner = value.get("text")
            return visible_text(inner)
    return ""


def call_ids(msg):
    """Ids of the tool calls an assistant message makes (OpenAI or Anthropic shape)."""
    ids = []
    for call in msg.get("tool_calls") or ():
        if isinstance(call, dict) and call.get("id"):
            ids.append(call["id"])
    content = msg.get("content")
    if isinstance(content, list):
        for block in content:
            if isinstance(block, dict) and block.get("type") == "tool_use" and block.get("id"):
                ids.append(block["id"])
    return ids


def call_names(msg):
    """Names of the tools an assistant message calls (OpenAI or Anthropic shape)."""
    names = []
    for call in msg.get("tool_calls") or ():
        if isinstance(call, dict):
            fn = call.get("function")
            names.append(fn.get("name", "?") if isinstance(fn, dict) else "?")
    content = msg.get("content")
    if isinstance(content, list):
        for block in content:
            if isinstance(block, dict) and block.get("type") == "tool_use":
                names.append(block.get("name") or "?")
    return names


def pair_tools(msgs):
    """Drop tool calls without all their results and results without their call: an LLM API
    rejects either, and a power cut or a compaction can leave one behind."""
    out = []
    i = 0
    n = len(msgs)
    while i < n:
        m = msgs[i]
        role = m.get("role")
        ids = call_ids(m) if role == "assistant" else ()
        if role == "tool":
            i += 1  # a result whose call is not right before it
            continue
        if not ids:
            out.append(m)
            i += 1
            continue
        j = i + 1
        while j < n and msgs[j].get("role") == "tool":
            j += 1
        results = [r for r in msgs[i + 1 : j] if r.get("tool_call_id") in ids]
        answered = [r.get("tool_call_id") for r in results]
        if all(c in answered for c in ids):
            out.append(m)
            out += results
        i = j
    return out


def degrade(obj):
    """A final answer of the other backend as plain text, or None (ESP-Claw §6.3, docs/DESIGN.md)."""
    content = obj.get("content")
    if isinstance(content, str):
        return obj
    if isinstance(content, list):
        joined = "".join(
            b.get("text", "")
            for b in content
            if isinstance(b, dict) and b.get("type") == "text" and isinstance(b.get("text"), str)
        )
        if joined:
            return {"role": "assistant", "content": joined}
    return None


def cell(s, n=_CUT):
    """`s` as a table cell: on one line, at most `n` characters (text.cut)."""
    return text.cut((s or "").replace("\n", " "), n)


def display(m):
    """A history message as one row for people: {"role", "text"}; tool calls and results are
    shown by name and id."""
    role = m.get("role")
    if role == "tool":
        body = "[result of %s] %s" % (m.get("tool_call_id"), m.get("content"))
    else:
        body = visible_text(m.get("content"))
        names = call_names(m) if role == "assistant" else ()
        if names:
            body = (body + " " if body else "") + "[calls %s]" % ", ".join(names)
    return {"role": role, "text": body}
