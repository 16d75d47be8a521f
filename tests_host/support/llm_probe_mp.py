# Runs claw_memory's LLM clients and the reference agent under the MicroPython unix port with
# micropython-lib's real aiohttp, for tests_host/test_llm_mp.py (which starts the loopback
# servers and checks what they received):
#
#   micropython llm_probe_mp.py PLAN.json
#
# PLAN is {"steps": [step, ...]}; a step is {"do": "chat" | "agent" | "history" | "ca_heap" |
# "client" | "build", ...}. One line "PROBE <json result>" per step, then "PROBE-END <json>" with the number of
# open file descriptors before the first and after the last step (no gc.collect() in between:
# a finaliser must not hide a leaked socket) and everything the clients logged.
import asyncio
import gc
import json
import os
import sys

from streamed_history import LyingHistory, StreamedHistory

from claw_memory import llm
from claw_memory.llm import certs, transport

LOG = []
SID = "chat:web:local:default_01"


def fds():
    return len(os.listdir("/proc/self/fd"))


def error(e):
    return {"ok": False, "type": type(e).__name__, "kind": getattr(e, "kind", None),
            "status": getattr(e, "status", None), "msg": str(e)}


def client(step):
    kw = dict(step.get("kw") or {})
    if "ca_file_bytes" in kw:
        with open(kw.pop("ca_file_bytes"), "rb") as f:
            kw["ca"] = f.read()
    kw["log"] = LOG.append
    return llm.from_config(step["backend"], **kw)


def _body(c, system, msgs, tools):
    head, key, items, _ = c._request(system, msgs, tools)
    return b"".join(transport.Body(head, key, items, c.backend).pieces())


async def do_client(step):
    try:
        client(step)
        return {"ok": True}
    except Exception as e:  # noqa: BLE001
        return error(e)


async def do_chat(step):
    try:
        c = client(step)
    except Exception as e:  # noqa: BLE001
        return error(e)
    system = step.get("system", "sys")
    tools = step.get("tools")
    msgs = step.get("messages") or [{"role": "user", "content": "hi"}]
    out = {}
    n = step.get("stream")
    if n is not None:
        # the first n messages as one streamed element, the rest as dicts
        cls = LyingHistory if step.get("lie") else StreamedHistory
        streamed = [cls(msgs[:n])] + msgs[n:]
        if not step.get("lie"):
            out["same_body"] = _body(c, system, msgs, tools) == _body(c, system, streamed, tools)
        msgs = streamed
    try:
        r = await c.chat(system, msgs, tools)
    except Exception as e:  # noqa: BLE001
        out.update(error(e))
        return out
    out.update(_reply(r))
    return out


def _reply(r):
    return {"ok": True, "text": r.text, "calls": [[t.id, t.name, t.arguments] for t in r.tool_calls],
            "raw": r.raw, "stop": r.stop}


async def do_build(step):
    # core's builders, as an offline stand-in uses them
    from claw_memory.reply import Reply, ToolCall

    calls = [ToolCall(*c) for c in step.get("calls") or ()]
    if calls:
        return _reply(Reply.calls(step["backend"], calls, step.get("text", "")))
    return _reply(Reply.answer(step["backend"], step["text"]))


async def do_history(step):
    # The Session History element streamed from the files, then the same history as dicts:
    # the test checks that the server received the same bytes twice.
    from history_corpus import SID, build

    from claw_memory.session import Sessions

    s = Sessions(step["root"])
    if not s.stat(SID)["records"]:
        build(s)
    c = client(step)
    h = s.history(SID, c.backend, step.get("tokens"))
    tail = [{"role": "user", "content": "next"}]
    try:
        for msgs in ([h] + tail, h.messages(c.backend) + tail):
            await c.chat("sys", msgs, None)
    except Exception as e:  # noqa: BLE001
        return error(e)
    return {"ok": True, "first": h.first, "summary": h.summary is not None}


async def do_agent(step):
    import claw_memory
    from claw_memory.agent import Agent
    from claw_memory.core import Request

    c = client(step)
    mem = claw_memory.open(step["root"], llm=c, extract=False)
    agent = Agent(c, mem.providers(), mem.hooks(), mem.tools(), "You are a test agent.",
                  log=LOG.append)
    answers = []
    for text in step["requests"]:
        answers.append(await agent.run(Request(text, SID, "web", "local")))
    history = mem.sessions.messages(SID, c.backend)
    mem.close()
    return {"ok": True, "answers": answers, "history": history}


def _c_heap():
    # Resident KiB of the process's malloc heap ([heap]), where mbedTLS allocates on the unix
    # port; MicroPython's GC heap is a separate mapping.
    inside = False
    with open("/proc/self/smaps") as f:
        for line in f:
            if line.rstrip().endswith("[heap]"):
                inside = True
            elif inside and line.startswith("Rss:"):
                return int(line.split()[1]) * 1024
    return 0


def _warm_up(ca):
    ssl = certs._ssl()
    ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    return sum(1 for _ in certs.ders(ca))


def do_ca_heap(step):
    # Run it alone in a fresh process. An empty SSL context is made and freed first (modules
    # imported, mbedTLS initialised): afterwards gc.mem_alloc() grows only by what loading the
    # bundle keeps in the GC heap, and the malloc heap by the parsed certificates (page-
    # granular: small bundles partly reuse freed memory, so only large ones give a figure).
    _warm_up(step["ca"])
    c_heap = _c_heap()
    gc.collect()
    base = gc.mem_alloc()
    ctx = certs.tls_context("https://example.com", step["ca"], log=LOG.append)
    garbage = gc.mem_alloc() - base
    gc.collect()
    kept = gc.mem_alloc() - base
    c_heap = _c_heap() - c_heap
    n = sum(1 for _ in certs.ders(step["ca"]))
    return {"ok": ctx is not None, "certs": n, "gc_kept": kept, "gc_garbage": garbage,
            "c_heap": c_heap}


STEPS = {"chat": do_chat, "agent": do_agent, "ca_heap": do_ca_heap, "client": do_client,
         "history": do_history, "build": do_build}


async def main(plan):
    before = fds()
    for step in plan["steps"]:
        r = STEPS[step.get("do", "chat")](step)
        if hasattr(r, "send"):
            r = await r
        print("PROBE " + json.dumps(r))
    print("PROBE-END " + json.dumps({"fds_before": before, "fds_after": fds(), "log": LOG}))


with open(sys.argv[1]) as f:
    PLAN = json.load(f)
if [s["do"] for s in PLAN["steps"]] == ["ca_heap"]:  # measured outside asyncio
    print("PROBE " + json.dumps(do_ca_heap(PLAN["steps"][0])))
    print("PROBE-END " + json.dumps({"fds_before": 0, "fds_after": 0, "log": LOG}))
else:
    asyncio.run(main(PLAN))
