"""docs/CONTRACT.md against the code: every tool and argument, the example results, the raw
reply shapes per backend and the extraction call as the library makes them."""

import asyncio
import json
import os
import re

import claw_memory
from claw_memory import extract
from claw_memory.core import Request
from claw_memory.reply import Reply

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
with open(os.path.join(ROOT, "docs", "CONTRACT.md"), encoding="utf-8") as f:
    DOC = f.read()


def _section(name):
    m = re.search(r"### %s\n(.*?)(?=\n##|\Z)" % name, DOC, re.S)
    assert m, "no section for the tool %s" % name
    return m.group(1)


def test_every_tool_and_argument_is_documented(tmp_path):
    mem = claw_memory.open(str(tmp_path / "r"), extract=False)
    for t in mem.tools(session_command=True):
        schema = t.schema if not isinstance(t.schema, str) else json.loads(t.schema)
        sec = _section(t.name)
        for arg in schema["properties"]:
            assert "`%s`" % arg in sec, (t.name, arg)
        for arg in schema.get("required", ()):
            assert re.search(r"`%s` \(required" % arg, sec), (t.name, arg, "marked required")


def test_the_example_results_are_what_the_tools_return(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    mem = claw_memory.open("r", extract=False, clock=lambda: 1800000000)
    tools = {t.name: t for t in mem.tools()}
    req = Request("x", "chat:uart:console:default_01", "uart", "console")
    checked = 0
    for name in tools:
        blocks = re.findall(r"```json\n(.*?)```", _section(name), re.S)
        for block in blocks:
            args, want = block.strip().split("\n")
            ok, got = asyncio.run(tools[name].handler(args, req))
            if name == "profile_read":
                got = json.loads(got)
                assert got["content"].startswith(json.loads(want)["content"].rstrip("."))
                got["content"] = json.loads(want)["content"]
                got = json.dumps(got, separators=(",", ":"), ensure_ascii=False)
            assert got == want, (name, got)
            checked += 1
    assert checked >= 5


def test_the_raw_replies_per_backend(tmp_path):
    rows = re.findall(r"^\| `(\w+)` \| `(.*?)` \| `(.*?)` \|$", DOC, re.M)
    assert [r[0] for r in rows] == ["openai", "anthropic", "openai_responses"]
    for backend, answer, calls in rows:
        assert Reply.answer(backend, "Hi").raw == answer
        got = re.sub(r"call_[0-9a-f]+_\d+", "call_N_M", Reply.calls(backend, [("memory_list", "{}")]).raw)
        assert got == calls, backend


def test_the_extraction_call_is_as_documented():
    with open(os.path.join(ROOT, "claw_memory", "extract.py"), encoding="utf-8") as f:
        src = f.read()
    assert '"Existing summary labels:\\n%s\\nCurrent user message:\\n%s\\n"' in src
    assert "`Existing summary labels:\\n<the label catalog>\\nCurrent user message:\\n<the text>\\n`" in DOC
    assert '{"intent":"none|forget|replace","memories":[{"content":"...","tags":["..."],"keywords":["..."]}]}' \
        in extract.SYSTEM_PROMPT
    for line in re.findall(r"```json\n(\{\"intent.*?)```", DOC, re.S)[0].strip().splitlines():
        doc = json.loads(line)
        assert doc["intent"] in ("none", "forget", "replace") and isinstance(doc["memories"], list)
