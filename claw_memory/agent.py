# claw_memory: the reference agent loop, in ESP-Claw's claw_core order.
# MIT license
#
# It knows only the contract in core.py (providers, hooks, tools) and an LLM object with
# `backend` and `async chat(system, messages, tools) -> reply` (reply: .text, .tool_calls
# [.id .name .arguments], .raw), so it runs with any memory that offers those, and the memory
# runs without it. A history provider may give streamed elements (objects with
# `json_chunks`, see llm/transport.py's Body); an LLM that says `streams_history = True` gets
# them as they are, any other gets their `messages()` dicts. It needs no aiohttp.

import json

from ._compat import dumps, exc_text
from .wire import dump
from .core import (FINAL, MESSAGES, REQUEST_START_ONLY, TOOL_CALL, TOOL_RESULTS, USER, Hooks,
                   failure_note, note, system_text)

STAGE_PREFIX = "\U0001f99e [Round %d] %s"  # "🦞 [Round N] <note>"


class AgentError(Exception):
    pass


class Agent:
    """One agent: an LLM, context providers, hooks and tools.

    `publish(text)` receives stage messages (the memory note, a block warning). Messages the
    user sends while a request runs go through `inject(text)`; they join the conversation
    before the next LLM call and are persisted as user records."""

    def __init__(self, llm, providers=(), hooks=None, tools=(), system_prompt="",
                 max_iterations=10, publish=None, log=None, inbox_max=4):
        self.llm = llm
        self.providers = list(providers)
        self.hooks = hooks or Hooks()
        self.tools = list(tools)
        self.system_prompt = system_prompt
        self.max_iterations = max_iterations
        self.publish = publish
        self._log = log
        self._inbox = []
        self._inbox_max = inbox_max

    def _note(self, msg):
        note(self._log, msg)

    def _publish(self, text):
        # A side message to the user: its channel failing is noted, never the request's failure
        # (the answer is made, and saved, by then).
        if self.publish:
            try:
                self.publish(text)
            except Exception as e:  # noqa: BLE001
                self._note("publish failed: %s" % exc_text(e))

    def inject(self, text):
        """Queue a message that arrived while a request runs; False when 4 are waiting."""
        if len(self._inbox) >= self._inbox_max:
            return False
        self._inbox.append(text)
        return True

    def _persist(self, request, records, completed):
        """(saved, warning): a persistence failure is logged and the request goes on."""
        if self.hooks.persist is None:
            return False, None
        try:
            return True, self.hooks.persist(request, records, completed)
        except Exception as e:  # noqa: BLE001
            self._note("persist failed: %s" % exc_text(e))
            return False, None

    def _collect(self, provider, request):
        try:
            return provider.collect(request)
        except Exception as e:  # noqa: BLE001 -- one broken provider does not stop the agent
            self._note("provider %s failed: %s" % (provider.name, exc_text(e)))
            return None

    def _system(self, request, start_sections):
        sections = list(start_sections)
        for p in self.providers:
            if not p.flags & REQUEST_START_ONLY and p.kind != MESSAGES:
                content = self._collect(p, request)
                if content:
                    sections.append((p.name, content))
        return system_text(self.system_prompt, sections, request.channel, request.chat_id)

    async def _call(self, call, request):
        tool = None
        for t in self.tools:
            if t.name == call.name:
                tool = t
                break
        if tool is None:
            name = call.name if isinstance(call.name, str) else ""
            return False, '{"ok":false,"error":"unknown_tool","name":%s}' % dumps(
                name if len(name) <= 64 else name[:61] + "...")
        try:
            ok, out = await tool.handler(call.arguments, request)
        except Exception as e:  # noqa: BLE001 -- a failing tool is an error result, not a crash
            self._note("tool %s raised: %s" % (call.name, exc_text(e)))
            return False, '{"ok":false,"error":"tool_failed","message":%s}' % dumps(str(e))
        return bool(ok), out if isinstance(out, str) else dumps(out)

    async def run(self, request):
        """Answer one request; returns the reply text (an apology when it failed)."""
        hooks = self.hooks
        if hooks.request_gate is not None:
            refusal = hooks.request_gate(request)
            if refusal:
                return refusal
        if hooks.on_request_start is not None:
            try:
                hooks.on_request_start(request)
            except Exception as e:  # noqa: BLE001
                self._note("request start hook failed: %s" % exc_text(e))
        saved, _ = self._persist(request, [(USER, None, request.text)], False)
        start_sections = []
        start_msgs = []
        for p in self.providers:
            if p.flags & REQUEST_START_ONLY:
                content = self._collect(p, request)
                if not content:
                    continue
                if p.kind == MESSAGES:
                    start_msgs += content
                else:
                    start_sections.append((p.name, content))
        if not getattr(self.llm, "streams_history", False):
            start_msgs = _as_dicts(start_msgs)
        # The history already ends with this user message when it was persisted first.
        active = [] if saved and start_msgs else [{"role": "user", "content": request.text}]
        runtime = []
        called = []
        try:
            for n in range(1, self.max_iterations + 1):
                while self._inbox:
                    msg = self._inbox.pop(0)
                    self._persist(request, [(USER, None, msg)], False)
                    runtime.append({"role": "user", "content": msg})
                reply = await self.llm.chat(self._system(request, start_sections),
                                            start_msgs + active + runtime, self.tools)
                if reply.tool_calls:
                    results = []
                    for call in reply.tool_calls:
                        ok, out = await self._call(call, request)
                        called.append(call.name)
                        results.append({"role": "tool", "tool_call_id": call.id, "content": out,
                                        "is_error": not ok})
                    # In ESP-Claw's key order: the history streams such records as they are.
                    raw = "[" + ",".join(dump(r) for r in results) + "]"
                    self._persist(request, [(TOOL_CALL, reply.raw, None), (TOOL_RESULTS, raw, None)],
                                  False)
                    runtime.append(json.loads(reply.raw))
                    runtime += results
                    continue
                note = await hooks.stage_note(request) if hooks.stage_note is not None else None
                if note:
                    self._publish(STAGE_PREFIX % (n, note))
                saved, warning = self._persist(request, [(FINAL, reply.raw, reply.text)], True)
                if warning:
                    self._publish(warning)
                return reply.text
            raise AgentError("no final answer after %d LLM calls" % self.max_iterations)
        except Exception as e:  # noqa: BLE001 -- the failure is recorded and answered
            reason = str(e) or type(e).__name__
            self._note("request %s failed: %s" % (request.id, exc_text(e)))
            tools_note = "Tools called before the failure: " + ", ".join(called) if called else None
            self._persist(request, [(FINAL, None, failure_note(reason, tools_note))], True)
            return "Sorry, I could not finish that: " + reason


def _as_dicts(msgs):
    out = []
    for m in msgs:
        if isinstance(m, dict):
            out.append(m)
        else:
            out += m.messages()  # a streamed history element
    return out
