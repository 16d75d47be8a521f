# claw_memory.llm: LLM clients (OpenAI chat completions, OpenAI Responses, Anthropic
# messages) over aiohttp: the only part of claw_memory that needs aiohttp.
# MIT license
#
# Reply, ToolCall and LLMError are claw_memory.reply's (an offline stand-in imports them from there);
# they are re-exported here for code that imported them from claw_memory.llm.

from ..reply import LLMError, Reply, ToolCall  # noqa: F401 -- re-exported
from ..wire import ANTHROPIC, OPENAI, RESPONSES
from . import transport
from .clients import (Anthropic, OpenAI, OpenAIResponses, _anthropic_body, _openai_body,
                      _responses_body)


def request_body(backend, system, messages, tools=None, model="model", max_tokens=1024):
    """The exact JSON body (bytes) a client of `backend` would POST for this request, built
    here without a network or aiohttp (`claw-memory context --request`)."""
    make = {OPENAI: _openai_body, ANTHROPIC: _anthropic_body, RESPONSES: _responses_body}.get(backend)
    if make is None:
        raise ValueError("unknown LLM backend: %r" % (backend,))
    head, key, items = make(system, messages, tools, model, max_tokens)
    return b"".join(transport.Body(head, key, items, backend).pieces())


def from_config(kind, **kw):
    """A client for a backend name ("openai", "anthropic", "openai_responses", or ESP-Claw's
    "*_compatible" names); keyword arguments go to its constructor."""
    if kind in ("openai", "openai_compatible"):
        return OpenAI(**kw)
    if kind in ("anthropic", "anthropic_compatible"):
        return Anthropic(**kw)
    if kind == "openai_responses":
        return OpenAIResponses(**kw)
    raise ValueError("unknown LLM backend: %r" % (kind,))
