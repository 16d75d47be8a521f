"""The README's snippets and commands run as written (data roots in a temporary folder)."""

import os
import re
import shlex
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from claw_memory_cli import hosttools, main  # noqa: E402
from tools.virtual_board import VirtualBoard  # noqa: E402

with open(os.path.join(ROOT, "README.md"), encoding="utf-8") as f:
    README = f.read()
BIN = os.path.dirname(sys.executable)


def _blocks(lang, after=None, before=None):
    text = README
    if after:
        text = text[text.index(after):]
    if before:
        text = text[:text.index(before)]
    return re.findall(r"```%s\n(.*?)```" % lang, text, re.S)


def _env(**kw):
    env = dict(os.environ, PATH=BIN + os.pathsep + os.environ.get("PATH", ""))
    env.pop("CLAW_PORT", None)
    env.update(kw)
    return env


def _sh(script, cwd, env=None, timeout=300):
    # .venv/bin/ in the README is this venv's bin (the tests run from it)
    script = script.replace(".venv/bin/", BIN + "/")
    r = subprocess.run(["bash", "-e", "-c", script], cwd=cwd, env=env or _env(),
                       capture_output=True, text=True, timeout=timeout)
    assert r.returncode == 0, "%s\n--- stdout\n%s\n--- stderr\n%s" % (script, r.stdout, r.stderr)
    return r.stdout


def _snippet(tmp_path):
    """The "Using it" snippet, saved as try_claw.py in an empty folder, as the README says."""
    code = _blocks("python", "## Using it")[0]
    (tmp_path / "try_claw.py").write_text(code)
    return code


def _run_mp(path, cwd):
    env = _env(MICROPYPATH=os.pathsep.join([".frozen", ROOT]))
    r = subprocess.run([hosttools.micropython(), path], cwd=cwd, env=env, capture_output=True,
                       text=True, timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr
    return r.stdout


def test_using_it_runs_offline_under_the_unix_port_and_cpython(tmp_path):
    code = _snippet(tmp_path)
    assert 'claw_memory.open("claw_data"' in code and "api_key=" in code and "open(\"/\")" not in code
    # `MICROPYPATH=.frozen:. micropython try_claw.py` from the repository root: here the
    # script is in tmp_path, so "." becomes the repository root explicitly.
    cmd = _blocks("sh", "## Using it")[0].splitlines()[0]
    assert cmd.startswith("MICROPYPATH=.frozen:. .venv/bin/micropython try_claw.py")
    out = _run_mp("try_claw.py", str(tmp_path))
    assert out.splitlines() == ["\U0001f99e [Round 2] Memory update: [preference]", "Noted.",
                                "Started a new session: project-a"]
    assert sorted(os.listdir(tmp_path / "claw_data")) == ["memory", "search", "sessions"], "relative data root"
    out = _sh(".venv/bin/claw-memory inspect claw_data", str(tmp_path))
    assert "Remember that I like jasmine tea" in out and "chat:uart:console:project-a" in out
    # under CPython too (.venv/bin/python try_claw.py)
    other = tmp_path / "cpython"
    other.mkdir()
    (other / "try_claw.py").write_text(code)
    r = subprocess.run([sys.executable, "try_claw.py"], cwd=str(other), capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 0 and "Noted." in r.stdout, r.stderr


def test_tiny_llm_answers_the_extraction_call_and_imports_no_llm_client(tmp_path):
    code = _snippet(tmp_path)
    assert "from claw_memory.reply import Reply" in code and "Reply.calls(" in code
    assert "import claw_memory.llm" not in code and "\nfrom claw_memory.llm" not in code
    # its TinyLLM, asked what the extraction worker asks (no tools), answers the document
    # the worker applies; the whole snippet imports nothing of the aiohttp piece
    check = code.split("\nllm = TinyLLM()")[0] + (
        "\nfrom claw_memory import extract\n"
        "r = asyncio.run(TinyLLM().chat(extract.SYSTEM_PROMPT, [{'role': 'user', 'content': 'I am Ann'}], None))\n"
        "doc = extract.parse_document(r.text)\n"
        "print('DOC', doc['intent'] in ('none', 'forget', 'replace'), type(doc['memories']).__name__, r.tool_calls)\n")
    (tmp_path / "extraction.py").write_text(check)
    assert "DOC True list []" in _run_mp("extraction.py", str(tmp_path))
    code += ("import sys\nprint('LOADED', sorted(m for m in sys.modules if m.startswith('claw_memory.llm')"
             " or m.startswith('aiohttp')))\n")
    (tmp_path / "loaded.py").write_text(code)
    assert "LOADED []" in _run_mp("loaded.py", str(tmp_path))


def test_the_api_lines_paste_and_run(tmp_path):
    _snippet(tmp_path)
    _run_mp("try_claw.py", str(tmp_path))
    api = _blocks("python", "## Using it")[1]
    assert "\u00b7" not in api, "no dot-joined lines: each one pastes"
    (tmp_path / "api.py").write_text(api)
    _run_mp("api.py", str(tmp_path))
    r = subprocess.run([sys.executable, "api.py"], cwd=str(tmp_path), capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 0, r.stderr
    assert "NEW id" in api and "update()" in README


def test_the_api_comments_say_what_the_calls_return(tmp_path, monkeypatch):
    """Each expression line of the API block, run under CPython: none returns an iterator left
    unused (a line that does nothing), and the comments' claims hold."""
    import ast
    import types

    api = _blocks("python", "## Using it")[1]
    monkeypatch.chdir(tmp_path)
    ns = {}
    got = {}
    for node in ast.parse(api).body:
        line = ast.get_source_segment(api, node)
        if isinstance(node, ast.Expr):
            value = eval(compile(ast.Expression(node.value), "api", "eval"), ns)
            assert not isinstance(value, types.GeneratorType), "%s: an iterator, unused" % line
            got[line] = value
        else:
            exec(compile(ast.Module([node], []), "api", "exec"), ns)
    by_call = {l.split("  #")[0].strip(): v for l, v in got.items()}
    sound = by_call["mem.sessions.verify(sid)"]
    assert sound["rebuilt_index"] is False and sound["leftovers"] == []
    assert all(v == 0 for k, v in sound.items() if isinstance(v, int) and not isinstance(v, bool)
               and k != "records"), sound
    assert all("id" in r for r in by_call["list(mem.sessions.list())"]), "each session's id"
    assert by_call["mem.store.forget(item[\"id\"])"][1] is True
    assert set(by_call["list(mem.store.labels())"][0]) == {"summary_id", "label", "ref_count"}
    why = by_call['mem.store.why(trip["id"])']
    assert set(why) == {"id", "content", "active", "origin", "changes"} and why["changes"] == []
    assert set(why["origin"]) == {"by", "session", "at", "text", "missing"}
    assert why["origin"]["text"] == "I'm in Paris this week"
    undone = by_call["mem.store.undo(sid)"]
    assert (undone["changed"], undone["undone"], undone["evicted"]) == (True, "store", [])
    assert [(i["id"], how) for i, how in undone["items"]] == [(ns["trip"]["id"], "forgotten")]


@pytest.fixture
def short_tmp():
    # On the board a data root path has at most 61 bytes (MICROPY_ALLOC_PATH_MAX); the
    # default data root is the current directory here, so keep it short.
    import pathlib
    import shutil
    import tempfile

    d = tempfile.mkdtemp(prefix="cm", dir="/tmp")
    yield pathlib.Path(d)
    shutil.rmtree(d, ignore_errors=True)


def test_the_repl_helpers_block_runs_under_the_unix_port(short_tmp):
    tmp_path = short_tmp
    _snippet(tmp_path)
    _run_mp("try_claw.py", str(tmp_path))
    repl = _blocks("python", "### On the board's REPL")[0]
    (tmp_path / "claw_data" / "repl.py").write_text(repl)
    out = _run_mp("repl.py", str(tmp_path / "claw_data"))  # the data root is the current directory
    assert "chat:uart:console:default_01" in out and "Remember that I like jasmine tea" in out
    assert "jasmine" in out and "layer" in out


def test_the_folder_commands_run(tmp_path):
    _snippet(tmp_path)
    _run_mp("try_claw.py", str(tmp_path))
    block = _blocks("sh", "## Host command line")[0]
    out = _sh(block, str(tmp_path))
    assert "clean" in out and "exported" in out and "imported backup.jsonl" in out
    assert "wiped the sessions layer" in out and "created a full data root" in out
    assert os.path.isdir(tmp_path / "fresh" / "sessions")


def test_every_claw_memory_command_in_the_readme_parses():
    found = 0
    for block in _blocks("sh"):
        for line in block.splitlines():
            line = line.split("  #", 1)[0].split("|", 1)[0].split("&&", 1)[0].strip()
            m = re.search(r"claw-memory (.*)$", line)
            if not m or line.startswith("#"):
                continue
            argv = shlex.split(m.group(1).replace("$CLAW_PORT", "/dev/ttyACM0"))
            try:
                main.build_parser().parse_args(argv)
            except SystemExit:
                pytest.fail("README command does not parse: claw-memory %s" % m.group(1))
            found += 1
    for m in re.finditer(r"`claw-memory ([^`]+)`", README):
        main.build_parser().parse_args(shlex.split(m.group(1).replace("DIR", "x")))
        found += 1
    assert found >= 15
    for cmd in re.findall(r"python3 tools/dev\.py (\w+)", README):
        assert cmd in ("setup", "demo", "test", "doctor"), cmd


@pytest.mark.slow
def test_the_virtual_board_block_and_the_board_commands(tmp_path):
    block = _blocks("sh", "### The virtual board")[0]
    assert "--link /tmp/ttyCLAW &" in block and "readlink /tmp/ttyCLAW" in block
    # as written, with its two /tmp paths in this test's folder
    script = block.replace("/tmp/board.img", str(tmp_path / "board.img")).replace(
        "/tmp/ttyCLAW", str(tmp_path / "ttyCLAW"))
    out = _sh(script, ROOT)
    assert "deployed claw_memory" in out and "created a full data root at /dev/pts/" in out
    assert "== per layer" in out and "data root: /dev/pts/" in out
    assert not os.path.lexists(tmp_path / "ttyCLAW"), "kill %1 stopped it"
    # the board commands of "Host command line", on a virtual board as CLAW_PORT
    board_block = _blocks("sh", "## Host command line")[1]
    assert board_block.startswith("export CLAW_PORT=/dev/ttyACM0")
    with VirtualBoard(str(tmp_path / "board2.img"), host_path=False) as vb:
        out = _sh(board_block.replace("/dev/ttyACM0", vb.port), str(tmp_path))
    assert "deployed claw_memory" in out and "(mpy)" in out
    assert "exported %s:/flash to board.jsonl" % vb.port in out
