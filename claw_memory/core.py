# claw_memory: the contract between the memory layers and an agent loop (ESP-Claw's claw_core).
# MIT license

from collections import namedtuple

from . import text
from ._compat import const, dumps

# Session record types (claw_core_context_record_type_t).
USER = const(1)
FINAL = const(2)
TOOL_CALL = const(3)
TOOL_RESULTS = const(4)

# Context provider kinds and flags.
SYSTEM_PROMPT = const(0)
MESSAGES = const(1)
REQUEST_START_ONLY = const(1)

# -- names every layer shares ------------------------------------------------------------------
# Backend names (ESP-Claw's, and the kinds a config names), and ESP-Claw's key under which a
# Responses tool-call record keeps the raw Responses output.
OPENAI = const("openai")
ANTHROPIC = const("anthropic")
RESPONSES = const("openai_responses")
STATE = const("_claw_provider_state")

_BACKENDS = const((OPENAI, "openai_compatible", ANTHROPIC, "anthropic_compatible", RESPONSES))


def backend_format(name):
    """Index backend format of a backend name: 1 OpenAI, 2 Anthropic, 3 OpenAI Responses,
    0 unknown (ESP-Claw's mapping, plus the short names)."""
    if isinstance(name, int):
        return name if 0 <= name <= 3 else 0
    for i in range(len(_BACKENDS)):
        if _BACKENDS[i] == name:
            return 1 + i // 2  # (a tuple, not a dict: in flash when frozen)
    return 0


# -- end of the shared names -------------------------------------------------------------------


# ESP-Claw's CLAW_MEMORY_SESSION_SIZE_WARNING, whole and without the five stray spaces its
# C line continuation put after "sending" (docs/DESIGN.md, deliberate difference 5).
BLOCK_TEXT = (
    "Session history is still too large after compaction. Please create a new conversation "
    "by sending the command `/session new [name]`, and delete the old session by "
    "`/session delete <name>` due to limited storage space."
)


class SessionBlocked(OSError):
    """The session's history is over the size limit even after compaction (BLOCK_TEXT)."""


class SessionDeleted(OSError):
    """The session was deleted while the request ran: its records are not kept."""


class NotFound(ValueError):
    """No active memory item has that id."""


class MissingContent(ValueError):
    """A memory item's content is empty (after cleaning and trimming)."""


def note(log, msg):
    """Send a diagnostic to the `log` callable, when there is one (the library never prints)."""
    if log:
        log(msg)


class Request:
    """One user request going through the agent loop."""

    _next_id = 1

    def __init__(self, text, session_id=None, channel=None, chat_id=None, request_id=None):
        if request_id is None:
            request_id = Request._next_id
            Request._next_id += 1
        self.id = request_id
        self.text = text
        self.session_id = session_id
        self.channel = channel
        self.chat_id = chat_id


class ContextProvider:
    """A named source of context: `collect(request)` returns text (SYSTEM_PROMPT) or a list
    of messages (MESSAGES), or None to be skipped."""

    def __init__(self, name, collect, kind=SYSTEM_PROMPT, flags=0):
        self.name = name
        self.collect = collect
        self.kind = kind
        self.flags = flags


# A tool the LLM may call. `handler(args_json, request)` is a coroutine returning
# `(ok, output_json_text)`; `ok` False marks the tool message as an error. A named tuple:
# a board holds the ten tools from open to close (each an object with its attribute map
# took about 20 bytes more net of the named tuple's type: 190 for the ten, frozen).
Tool = namedtuple("Tool", ("name", "description", "schema", "handler"))


class Hooks:
    """The callbacks an agent loop calls; every one is optional.

    request_gate(request) -> refusal text or None
    on_request_start(request)
    persist(request, records, turn_completed) -> warning text or None
    async stage_note(request) -> note text or None"""

    def __init__(self, request_gate=None, on_request_start=None, persist=None, stage_note=None):
        self.request_gate = request_gate
        self.on_request_start = on_request_start
        self.persist = persist
        self.stage_note = stage_note


def failure_note(reason, tool_summary=None):
    """The ASSISTANT_FINAL text persisted when a request fails (ESP-Claw's wording)."""
    note = "Session note: the previous request failed before producing a final answer.\nReason: " + (
        reason or "unknown error"
    )
    if tool_summary:
        note += "\n" + tool_summary
    return note


_NAME_MAX = const(64)  # bytes of a section name in the system prompt
_SOURCE_MAX = const(128)  # bytes of the channel, and of the chat id, in the system prompt


def _value(v, limit):
    # A value from outside (a chat id, a channel) rendered as data: one line, no control
    # character, bounded; a chat id with line breaks would add sections of its own.
    return text.one_line(v if isinstance(v, str) else "%s" % (v,), limit)


def system_text(base, sections, channel=None, chat_id=None):
    """The system prompt of a request: the caller's own text, then each section as
    "## <name>" and its content, then the request's source (claw_core's layout). Section
    names, the channel and the chat id are values: each is one line, bounded."""
    parts = [base or ""]
    for name, content in sections:
        parts.append("\n\n## %s\n%s" % (_value(name, _NAME_MAX), content))
    if channel or chat_id:
        parts.append("\n\n## Core Request\nsource_channel: %s\nsource_chat_id: %s" % (
            _value(channel or "", _SOURCE_MAX), _value(chat_id or "", _SOURCE_MAX)))
    # "".join(parts).strip() without a second copy of the whole prompt (a board's heap may
    # not have two such blocks): every part after the first holds "## ", so the ends to
    # strip are the first non-blank part's start and the last part's end
    if len(parts) > 1 and not parts[0].strip():
        parts[0] = ""
        parts[1] = parts[1].lstrip()
    else:
        parts[0] = parts[0].lstrip()
    parts[-1] = parts[-1].rstrip()
    return "".join(parts)


def args_text(args):
    """Tool-call arguments as JSON text (an object, or the text as given)."""
    if args is None:
        return "{}"
    if isinstance(args, str):
        return args
    return dumps(args)
