"""Each installable piece (package*.json) installed with the real `mpremote mip install`, from
a path in this checkout, on a fresh virtual board that sees nothing else (no repository, no
aiohttp), then run there.

aiohttp, which the LLM clients need, comes from a local mip index made from micropython-lib's
aiohttp (CLAW_MPLIB, see README "Tests"); the pieces that need it are skipped without it.
"""

import hashlib
import json
import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
HERE = os.path.join(ROOT, "tests_host")
sys.path.insert(0, ROOT)
sys.path.insert(0, HERE)

from claw_memory_cli import hosttools  # noqa: E402
from llm_server import LLMServer  # noqa: E402
from tools.virtual_board import VirtualBoard  # noqa: E402

MPLIB = os.path.abspath(os.environ["CLAW_MPLIB"]) if os.environ.get("CLAW_MPLIB") else ""
AIOHTTP = os.path.join(MPLIB, "python-ecosys", "aiohttp", "aiohttp") if MPLIB else ""

_LITE = r"""
import asyncio, json, sys
import claw_memory
from claw_memory.core import Request
try:
    claw_memory.open("/flash/full")
except ImportError as e:
    print("FULL-REFUSED", "mode='lite'" in str(e) and "package-full.json" in str(e))
import os
print("NOTHING-CREATED", "full" not in os.listdir("/flash"))
mem = claw_memory.open("/flash/lite", mode="lite")
sid = mem.chats.session_id("uart", "console")
mem.sessions.persist(sid, [(1, None, "hello")])
mem.sessions.persist(sid, [(2, None, "hi")], True)
req = Request("next", sid, "uart", "console")
got = {p.name: p.collect(req) for p in mem.providers()}
assert [m["content"] for m in got["Session History"][0].messages()] == ["hello", "hi"], got
assert got["Long-term Memory"].startswith("### Long-term Memory")
tools = {t.name: t for t in mem.tools(session_command=True)}
ok, out = asyncio.run(tools["profile_read"].handler('{"name":"user"}', req))
assert ok and json.loads(out)["name"] == "user"
print(mem.session_command("uart", "console", "new trip"))
mem.close()
from claw_memory import inspect
print("SESSIONS", sorted(s["id"] for s in inspect.sessions("/flash/lite", rows=True)))
try:
    import aiohttp
    print("AIOHTTP PRESENT")
except ImportError:
    pass
print("LOADED", json.dumps(sorted(m for m in sys.modules if m.startswith("claw_memory"))))
print("PIECE-OK")
"""

_FULL = r"""
import asyncio, json
import claw_memory
from claw_memory.core import Request
mem = claw_memory.open("/flash/full", extract=False)
mem.store.store("User owns an ESP32", "hardware")
tools = {t.name: t for t in mem.tools()}
ok, out = asyncio.run(tools["memory_recall"].handler('{"summary_labels":["hardware"]}', Request("x", "s")))
assert ok and [i["content"] for i in json.loads(out)["items"]] == ["User owns an ESP32"], out
mem.close()
print("PIECE-OK")
"""

# the README's TinyLLM, on a LITE memory (the agent piece is LITE plus the agent loop)
_AGENT = r"""
import asyncio, sys
import claw_memory
from claw_memory.agent import Agent
from claw_memory.core import Request
from claw_memory.reply import Reply


class TinyLLM:
    backend = "anthropic"

    async def chat(self, system, messages, tools=None):
        if messages[-1]["role"] == "user":
            return Reply.calls(self.backend, [("profile_read", {"name": "user"})])
        return Reply.answer(self.backend, "Noted.")


llm = TinyLLM()
mem = claw_memory.open("/flash/agent", mode="lite", llm=llm)
sid = mem.chats.session_id("uart", "console")
agent = Agent(llm, mem.providers(), mem.hooks(), mem.tools(), "You are Pip.")
print("ANSWER", asyncio.run(agent.run(Request("Who am I?", sid, "uart", "console"))))
print("ROLES", [m["role"] for m in mem.sessions.messages(sid, "anthropic")])
mem.close()
print("LOADED-LLM", [m for m in sys.modules if m.startswith("claw_memory.llm")])
print("PIECE-OK")
"""

# a request to a loopback server with micropython-lib's aiohttp, installed as the dep
_LLM = r"""
import asyncio, json
from claw_memory import llm
import aiohttp
c = llm.OpenAI(base_url=%r, api_key="sk-board", timeout=10)
r = asyncio.run(c.chat("sys", [{"role": "user", "content": "hi"}]))
print("TEXT", r.text, r.raw)
body = json.loads(llm.request_body("anthropic", "sys", [{"role": "user", "content": "x"}]))
print("BODY", body["messages"] == [{"role": "user", "content": "x"}], body["model"])
print("PIECE-OK")
"""

# everything: a FULL memory, the agent loop and a real client against the loopback server
_ALL = r"""
import asyncio
import claw_memory
from claw_memory.agent import Agent
from claw_memory.core import Request
from claw_memory.llm import Anthropic
c = Anthropic(base_url=%r, api_key="sk-board", timeout=10)
mem = claw_memory.open("/flash/all", llm=c, extract=False)
sid = mem.chats.session_id("uart", "console")
agent = Agent(c, mem.providers(), mem.hooks(), mem.tools(), "You are Pip.")
print("ANSWER", asyncio.run(agent.run(Request("I like tea", sid, "uart", "console"))))
print("ITEMS", [i["content"] for i in mem.store.list()])
mem.close()
print("PIECE-OK")
"""

PIECES = {
    "package-lite.json": (_LITE, False),
    "package-full.json": (_FULL, False),
    "package-agent.json": (_AGENT, False),
    "package-llm.json": (_LLM, True),
    "package.json": (_ALL, True),
}


def _index(tmp_path):
    """A mip index folder holding micropython-lib's aiohttp (as mip's index lays it out)."""
    idx = tmp_path / "index"
    hashes = []
    for name in sorted(os.listdir(AIOHTTP)):
        if not name.endswith(".py"):
            continue
        with open(os.path.join(AIOHTTP, name), "rb") as f:
            data = f.read()
        short = hashlib.sha256(data).hexdigest()[:8]
        blob = idx / "file" / short[:2] / short
        blob.parent.mkdir(parents=True, exist_ok=True)
        blob.write_bytes(data)
        hashes.append(["aiohttp/" + name, short])
    for mpy in ("py", "6"):
        pj = idx / "package" / mpy / "aiohttp" / "latest.json"
        pj.parent.mkdir(parents=True, exist_ok=True)
        pj.write_text(json.dumps({"hashes": hashes, "deps": [], "version": "micropython-lib"}))
    return str(idx), sorted(h[0] for h in hashes)


def _mpremote(board, *args, cwd, timeout=300):
    r = subprocess.run([hosttools.find("mpremote"), "connect", board.port] + list(args), cwd=cwd,
                       capture_output=True, text=True, timeout=timeout)
    return r.returncode, (r.stdout + r.stderr).replace("\r\n", "\n")


_LIST = r"""
import os
def w(p, r):
    try:
        entries = list(os.ilistdir(p))
    except OSError:
        return
    for e in entries:
        if e[1] & 0x4000:
            w(p + '/' + e[0], r + e[0] + '/')
        else:
            print('FILE', r + e[0])
w('/flash/lib', '')
"""


@pytest.mark.parametrize("name", sorted(PIECES))
def test_a_piece_installs_with_mip_from_a_path_and_runs_alone(name, tmp_path):
    code, needs_aiohttp = PIECES[name]
    if needs_aiohttp and not MPLIB:
        pytest.skip("CLAW_MPLIB is not set: %s needs aiohttp, installed here from a local mip "
                    "index of micropython-lib's aiohttp; set CLAW_MPLIB=/path/to/micropython-lib" % name)
    with open(os.path.join(ROOT, name)) as f:
        pj = json.load(f)
    want = sorted(u[0] for u in pj["urls"])
    args = ["mip", "install"]
    if pj["deps"]:
        index, aiohttp_files = _index(tmp_path)
        args += ["--index", index]
        want = sorted(want + aiohttp_files)
    # from another folder: the package file names its files relative to itself
    with VirtualBoard(str(tmp_path / "board.img"), host_path=False) as board, LLMServer() as srv:
        rc, out = _mpremote(board, *args, os.path.join(ROOT, name), cwd=str(tmp_path))
        assert rc == 0, out
        rc, out = _mpremote(board, "exec", _LIST, cwd=str(tmp_path))
        assert sorted(line[5:] for line in out.splitlines() if line.startswith("FILE ")) == want, out
        if "%r" in code:
            srv.reply("Hello from the board.") if name == "package-llm.json" else srv.reply(
                "", tool_calls=[{"id": "toolu_1", "name": "memory_store",
                                 "arguments": {"content": "User likes tea", "tags": "drink"}}])
            srv.reply("Noted.")
            code = code % (srv.url if name == "package.json" else srv.openai_url)
        script = tmp_path / "piece.py"
        script.write_text(code)
        rc, out = _mpremote(board, "run", str(script), cwd=str(tmp_path))
    assert rc == 0 and "PIECE-OK" in out, out
    if name == "package-lite.json":
        assert "FULL-REFUSED True" in out and "NOTHING-CREATED True" in out, out
        assert "Started a new session: trip" in out
        assert "SESSIONS ['chat:uart:console:default_01', 'chat:uart:console:trip']" in out, out
        assert "AIOHTTP PRESENT" not in out, "no aiohttp on a LITE board"
        loaded = json.loads(out.split("LOADED ", 1)[1].splitlines()[0])
        assert not [m for m in loaded if m.split(".")[1:2] in (["store"], ["item"], ["llm"], ["agent"])], loaded
    if name == "package-agent.json":
        assert "ANSWER Noted." in out and "ROLES ['user', 'assistant', 'tool', 'assistant']" in out, out
        assert "LOADED-LLM []" in out
    if name == "package-llm.json":
        assert 'TEXT Hello from the board. {"role":"assistant","content":"Hello from the board."}' in out
        assert "BODY True model" in out, out
        assert srv.last().headers["authorization"] == "Bearer sk-board"
    if name == "package.json":
        assert "ANSWER Noted." in out and "ITEMS ['User likes tea']" in out, out
