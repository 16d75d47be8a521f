# claw_memory.wire: history messages in each LLM API's request shape, one message at a time.
# MIT license
#
# The history holds messages of any of the three backends: OpenAI chat messages (tool_calls),
# Anthropic messages (content blocks, tool_use), and the Responses client's records (OpenAI
# chat shape plus ESP-Claw's `_claw_provider_state` with the raw Responses output). Tool
# results are always {"role":"tool","tool_call_id":..,"content":..,"is_error":..}. The
# session layer streams a history through `to_wire` record by record (a flat record's
# strings copied between the byte frames at the end of this module, which spell the same
# shapes), and the LLM clients convert the rest of a request with the same function, so both
# give the same JSON.
# A message becomes zero, one or more wire messages. For Anthropic, the results of one round
# of tool calls go together in one user message (as the API wants them, right after the
# tool_use turn); other neighbours of one role are not merged (the API combines consecutive
# turns of one role itself), so that a history converted record by record and one converted
# whole give the same messages.


from . import jsonraw
from ._compat import const, dumps
from .core import ANTHROPIC, OPENAI, RESPONSES, STATE, args_text
from .messages import as_dict, text_of

_ERROR = const("Error: ")  # a tool error in the text, for APIs without an error flag


def args_obj(args):
    """Tool arguments as an object; Anthropic rejects any other `input`."""
    if isinstance(args, str):
        args = jsonraw.foreign(args)  # a key named twice: its first value, as cJSON
    return args if isinstance(args, dict) else {}


def _result_text(m):
    c = m.get("content")
    if c is None:
        return ""
    return c if isinstance(c, str) else dumps(c)


def _tool_text(m):
    """A tool result's text for APIs without an error flag."""
    text = _result_text(m)
    return _ERROR + text if m.get("is_error") else text


def calls_of(m):
    """(id, name, arguments text) of every tool call of an assistant message, any shape."""
    out = []
    for c in m.get("tool_calls") or ():
        if isinstance(c, dict):
            fn = as_dict(c.get("function"))
            out.append((c.get("id") or "", fn.get("name") or "", args_text(fn.get("arguments"))))
    content = m.get("content")
    if isinstance(content, list):
        for b in content:
            if isinstance(b, dict) and b.get("type") == "tool_use":
                out.append((b.get("id") or "", b.get("name") or "", args_text(b.get("input"))))
    return out


def _blocks(content):
    if isinstance(content, list):
        return content
    if content:
        return [{"type": "text", "text": content if isinstance(content, str) else dumps(content)}]
    return []


def _openai(m):
    # role/content/tool_calls/tool_call_id only: some servers reject extra fields
    # (reasoning_content, is_error).
    role = m.get("role")
    content = m.get("content")
    if role in ("user", "system"):
        return [{"role": role, "content": content if content is not None else ""}]
    if role == "tool":
        return [{"role": "tool", "tool_call_id": m.get("tool_call_id") or "",
                 "content": _tool_text(m)}]
    if role != "assistant":
        return []
    calls = [{"id": i, "type": "function", "function": {"name": n, "arguments": a}}
             for i, n, a in calls_of(m)]
    text = text_of(content)
    out = {"role": "assistant", "content": text if text or not calls else None}
    if calls:
        out["tool_calls"] = calls
    return [out]


def _anthropic(m):
    role = m.get("role")
    content = m.get("content")
    if role == "tool":
        return [{"role": "user", "content": [{
            "type": "tool_result", "tool_use_id": m.get("tool_call_id") or "",
            "content": _result_text(m), "is_error": bool(m.get("is_error"))}]}]
    if role in ("user", "system"):  # no system role in messages: the summary goes as user
        return [{"role": "user", "content": content if content is not None else ""}]
    if role != "assistant":
        return []
    if isinstance(content, str) and content and not m.get("tool_calls"):
        return [{"role": "assistant", "content": content}]  # the API takes a string as well
    blocks = list(content) if isinstance(content, list) else _blocks(content)
    for c in m.get("tool_calls") or ():
        fn = as_dict(c.get("function")) if isinstance(c, dict) else None
        if fn is not None:
            blocks.append({"type": "tool_use", "id": c.get("id") or "", "name": fn.get("name") or "",
                           "input": args_obj(fn.get("arguments"))})
    return [{"role": "assistant", "content": blocks}] if blocks else []  # none empty


def responses_output(m):
    """The raw Responses output items an assistant message keeps, or None."""
    st = m.get(STATE)
    if isinstance(st, dict) and st.get("backend") == RESPONSES:
        out = st.get("output")
        if isinstance(out, list):
            return out
    return None


def _replayable(item):
    # Without store, a reasoning item can only go back with its encrypted content.
    return isinstance(item, dict) and (
        item.get("type") != "reasoning" or bool(item.get("encrypted_content")))


def _responses(m):
    # Responses `input` items; the Responses client's own tool-call records give back their
    # raw output items (as ESP-Claw replays them).
    role = m.get("role")
    if role == "tool":
        return [{"type": "function_call_output", "call_id": m.get("tool_call_id") or "",
                 "output": _tool_text(m)}]
    if role in ("user", "system"):
        c = m.get("content")
        return [{"role": role, "content": c if isinstance(c, str) else text_of(c)}]
    if role != "assistant":
        return []
    kept = responses_output(m)
    if kept is not None:
        return [i for i in kept if _replayable(i)]
    out = []
    text = text_of(m.get("content"))
    if text:
        out.append({"role": "assistant", "content": text})
    for i, n, a in calls_of(m):
        out.append({"type": "function_call", "call_id": i, "name": n, "arguments": a})
    return out


def to_wire(m, backend):
    """A history message (dict) as the wire messages (dicts) of `backend` ("openai",
    "anthropic" or "openai_responses")."""
    if not isinstance(m, dict):
        return []
    if backend == ANTHROPIC:
        return _anthropic(m)
    if backend == RESPONSES:
        return _responses(m)
    return _openai(m)


def convert(msgs, backend):
    """History messages as the wire messages of `backend`, tool results of one round
    together for Anthropic."""
    out = []
    for m in msgs:
        w = to_wire(m, backend)
        if (backend == ANTHROPIC and w and out and isinstance(m, dict) and m.get("role") == "tool"
                and out[-1].get("role") == "user" and _all_results(out[-1])):
            out[-1]["content"] = out[-1]["content"] + w[0]["content"]
        else:
            out += w
    return out


def _all_results(w):
    c = w.get("content")
    return isinstance(c, list) and c and all(
        isinstance(b, dict) and b.get("type") == "tool_result" for b in c)


def dumped(m, backend, block=False):
    """A history message's wire messages as JSON bytes (dump), separated by commas; `block`:
    an Anthropic tool result as its block alone, for its round's message."""
    ws = to_wire(m, backend)
    if block:
        return dump(ws[0]["content"][0]).encode()
    return b",".join(dump(w).encode() for w in ws)


_ORDER = ("type", "role", "tool_call_id", "tool_use_id", "call_id", "content", "output", "is_error")


def dump(w):
    """A wire message as compact JSON text, its keys (and those of the blocks in a `content`
    list) in one fixed order: MicroPython's dicts keep no insertion order, and the session
    layer streams stored records in exactly this shape, so both give the same bytes."""
    if not isinstance(w, dict):
        return dumps(w)
    parts = []
    seen = 0
    for k in _ORDER:
        if k in w:
            v = w[k]
            if k == "content" and isinstance(v, list):
                parts.append('"content":[' + ",".join([dump(b) for b in v]) + "]")
            else:
                parts.append(_KEYS[k] + dumps(v))
            seen += 1
    if seen < len(w):  # keys of no fixed place, after the others
        for k in w:
            if k not in _ORDER:
                parts.append(dumps(k) + ":" + dumps(w[k]))
    return "{" + ",".join(parts) + "}"


_KEYS = {k: '"%s":' % k for k in _ORDER}


# -- the same shapes as bytes --------------------------------------------------------------
# A flat message (a user or assistant message of a non-empty string content, a tool result of
# string or null fields) is streamed from flash as the JSON strings its record stores, copied
# between these bytes: what dump(to_wire(m, backend)) writes around them (test_stream checks
# both for every backend and kind).
FLAT_USER = const(1)
FLAT_ASSISTANT = const(2)
FLAT_TOOL = const(3)
FLAT_TOOL_ERROR = const(4)  # a tool result with is_error true

_USER_FRAME = (b'{"role":"user","content":"', b'"}')
_ASSISTANT_FRAME = (b'{"role":"assistant","content":"', b'"}')
_TOOL = b'{"role":"tool","tool_call_id":"'
_ERR = _ERROR.encode()
_FRAMES = {  # per backend, by kind (FLAT_* is the index)
    OPENAI: (None, _USER_FRAME, _ASSISTANT_FRAME, (_TOOL, b'","content":"', b'"}'),
             (_TOOL, b'","content":"' + _ERR, b'"}')),
    RESPONSES: (None, _USER_FRAME, _ASSISTANT_FRAME,
                (b'{"type":"function_call_output","call_id":"', b'","output":"', b'"}'),
                (b'{"type":"function_call_output","call_id":"', b'","output":"' + _ERR, b'"}')),
    ANTHROPIC: (None, _USER_FRAME, _ASSISTANT_FRAME,
                (b'{"type":"tool_result","tool_use_id":"', b'","content":"', b'","is_error":false}'),
                (b'{"type":"tool_result","tool_use_id":"', b'","content":"', b'","is_error":true}')),
}
# Anthropic: the results of one round of tool calls in one user message (see convert), each
# result's block (its frame above) between these, separated by commas.
ANTHROPIC_ROUND = (b'{"role":"user","content":[', b"]}")


def frames(backend):
    """The bytes around a flat message's strings on the wire of `backend`, by kind: (head,
    tail) of a FLAT_USER or FLAT_ASSISTANT message (its content between), (head, mid, tail) of
    a FLAT_TOOL or FLAT_TOOL_ERROR result (its id, then its content between; for Anthropic
    the result's block)."""
    return _FRAMES.get(backend) or _FRAMES[OPENAI]


# A record as dump writes it (ESP-Claw's cJSON writes this key order too), for reading flat
# records without a general scan: what comes before a user or assistant message's content
# string, and a tool result's parts before its id string, its content and its error flag.
RECORD_HEADS = ((_USER_FRAME[0], FLAT_USER, "user"), (_ASSISTANT_FRAME[0], FLAT_ASSISTANT, "assistant"))
RECORD_TOOL = (_TOOL, b',"content":"', b',"is_error":')
