"""manifest.py, package.json and the .mpy build for the board (xtensawin)."""

import os
import re
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tools"))

import gen_package_json  # noqa: E402
from claw_memory_cli import hosttools  # noqa: E402
from manifest_sim import ManifestRun, frozen  # noqa: E402


def test_umbrella_has_metadata_first_and_only_the_llm_piece_needs_aiohttp():
    import claw_memory

    for m in ("manifest.py", "manifests/lite.py", "manifests/full.py", "manifests/agent.py",
              "manifests/llm.py"):
        run = ManifestRun()
        run.run(os.path.join(ROOT, m))
        own = [c for c in run.calls if c[0] == os.path.join(ROOT, m)]
        requires = [c[2][0] for c in own if c[1] == "require"]
        assert requires == (["aiohttp"] if m == "manifests/llm.py" else []), m
        if m == "manifest.py":
            assert own[0][1] == "metadata" and own[0][3]["version"] == claw_memory.__version__
        else:
            assert run.metadata_calls == [], m + ": a piece shares its includer's metadata"
    run = ManifestRun()
    run.run(os.path.join(ROOT, "manifest.py"))
    assert ("aiohttp",) in [c[2] for c in run.calls if c[1] == "require"]
    assert not any(c[1] == "require" and c[2][0] == "json" for c in run.calls), "json is built in"


def test_manifest_pieces_name_existing_files_and_cover_the_package_once():
    lite = frozen("manifests/lite.py")
    full = frozen("manifests/full.py")
    agent = frozen("manifests/agent.py")
    llm = frozen("manifests/llm.py")
    for f in lite + full + agent + llm:
        assert os.path.isfile(os.path.join(ROOT, f)), f
    assert set(lite) < set(full), "full includes lite"
    assert set(lite) < set(agent) and set(lite) < set(llm), "the agent and the clients include lite"
    agent, llm = sorted(set(agent) - set(lite)), sorted(set(llm) - set(lite))
    assert not set(agent) & set(full) and not set(llm) & (set(full) | set(agent)), (
        "the agent and the LLM pieces add only their own files")
    assert agent == ["claw_memory/agent.py"]
    assert len(set(full)) == len(full), "no file twice"
    assert sorted(full + agent + llm) == gen_package_json.modules(), "every module exactly once"
    assert sorted(frozen("manifest.py")) == sorted(full + agent + llm), "the umbrella has each once"


def test_manifest_and_package_json_list_exactly_the_package_modules():
    import json

    on_disk = gen_package_json.modules()
    assert sorted(frozen("manifest.py")) == on_disk
    with open(os.path.join(ROOT, "package.json")) as f:
        pj = json.load(f)
    assert sorted(u[0] for u in pj["urls"]) == on_disk
    assert all(dst == src for dst, src in pj["urls"])
    assert pj["deps"] == [["aiohttp", "latest"]]
    assert open(os.path.join(ROOT, "package.json")).read() == gen_package_json.render()


def test_version_is_the_same_everywhere():
    import claw_memory

    with open(os.path.join(ROOT, "pyproject.toml")) as f:
        assert re.search(r'^version = "([^"]+)"', f.read(), re.M).group(1) == claw_memory.__version__


def test_every_module_compiles_for_xtensawin(tmp_path):
    mpy_cross = hosttools.find("mpy-cross")
    if not mpy_cross:
        pytest.fail("mpy-cross not installed: run python3 tools/dev.py setup")
    total = 0
    rows = []
    for mod in gen_package_json.modules():
        out = tmp_path / (mod.replace("/", "_") + ".mpy")
        r = subprocess.run(
            [mpy_cross, "-march=xtensawin", "-o", str(out), os.path.join(ROOT, mod)],
            capture_output=True, text=True,
        )
        assert r.returncode == 0, "%s: %s" % (mod, r.stderr)
        data = out.read_bytes()
        assert data[:2] == b"M\x06", "mpy v6 header"
        total += len(data)
        rows.append((mod, len(data)))
    for mod, n in rows:
        print("%-40s %6d" % (mod, n))
    print("total .mpy (xtensawin): %d bytes" % total)
    assert total > 0


_LITE_RUN = r"""
import asyncio, json, sys
from flashsim import mount
mount("lfs2", "/flash", blocks=128)
import claw_memory
from claw_memory.core import Request
mem = claw_memory.open("/flash", mode="lite")
sid = mem.chats.session_id("uart", "console")
mem.sessions.persist(sid, [(1, None, "hello")])
mem.sessions.persist(sid, [(2, None, "hi")], True)
req = Request("next", sid, "uart", "console")
got = {p.name: p.collect(req) for p in mem.providers()}
tools = {t.name: t for t in mem.tools(session_command=True)}
ok, out = asyncio.run(tools["profile_read"].handler('{"name":"user"}', req))
assert ok and json.loads(out)["name"] == "user"
assert mem.session_command("uart", "console", "new trip").startswith("Started")
assert [m["content"] for m in got["Session History"][0].messages()] == ["hello", "hi"], got
assert got["Long-term Memory"].startswith("### Long-term Memory")
assert sorted(t for t in tools) == ["memory_search", "profile_read", "profile_update", "session_command"]
mem.close()
print("LOADED " + json.dumps(sorted(m for m in sys.modules if m.startswith("claw_memory"))))
"""


def test_lite_set_runs_a_lite_memory_and_imports_nothing_else(tmp_path):
    import json
    import shutil

    lite = frozen("manifests/lite.py")
    for f in lite:
        dest = tmp_path / f
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(os.path.join(ROOT, f), dest)
    env = dict(os.environ)
    env["MICROPYPATH"] = os.pathsep.join([str(tmp_path), os.path.join(ROOT, "claw_memory_cli", "runtime"), ".frozen"])
    r = subprocess.run([hosttools.micropython(), "-X", "heapsize=4M", "-c", _LITE_RUN], cwd=tmp_path,
                       env=env, capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stdout + r.stderr
    loaded = json.loads(r.stdout.split("LOADED ", 1)[1])
    names = {f[:-3].replace("/__init__", "").replace("/", ".") for f in lite}
    assert set(loaded) <= names, set(loaded) - names
    assert "claw_memory.store" not in loaded and "claw_memory.item" not in loaded
