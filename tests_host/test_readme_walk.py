"""The README from top to bottom on a fresh clone, as a new user follows it: every code block in
order, in one clone (so each block finds what the blocks before it left), either run as written
or named below with the reason it cannot run on a machine without a board or the internet. A
block this file does not know fails the test, so a new block is run or explained."""

import os
import re
import shutil
import subprocess
import sys
import tempfile

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
with open(os.path.join(ROOT, "README.md"), encoding="utf-8") as f:
    README = f.read()

# A block's first line -> why it cannot run here (None: it runs).
NOT_HERE = {
    "python3 tools/dev.py demo": None,  # its second line is this suite's own command: see below
    "MICROPYPATH=.frozen:. .venv/bin/micropython try_claw.py": None,
    "import asyncio": None,  # the TinyLLM snippet: saved as try_claw.py, as the README says
    "import claw_memory": None,  # the API lines, pasted into a script
    "from claw_memory import inspect": None,  # the REPL helpers, with the data root as cwd
    ".venv/bin/claw-memory inspect claw_data": None,
    "export CLAW_PORT=/dev/ttyACM0": "a board on /dev/ttyACM0 (test_readme.py runs it on a virtual board)",
    "claw-memory deploy --port /dev/ttyACM0 --ca-only --ca-for api.openai.com":
        "a board on /dev/ttyACM0 and the internet (test_cabundle.py and test_deploy*.py cover deploy)",
    ".venv/bin/python -m tools.virtual_board --image /tmp/board.img --link /tmp/ttyCLAW &":
        "run by test_readme.py::test_the_virtual_board_block_and_the_board_commands",
    "# main.py: runs at every boot": "Wi-Fi and NTP on a board (the console agent as main.py runs on"
                                     " the virtual board: test_virtual_board.py)",
    "mpremote cp examples/console_agent.py : + cp main.py : + reset": "a board",
    "mpremote mip install github:<owner>/<repo>/package-lite.json":
        "the internet and a board (test_pieces.py installs each piece from a path on the virtual board)",
    "python3 tools/dev.py test": "this suite's own command",
    "git clone https://github.com/micropython/micropython-lib ../micropython-lib":
        "the internet (CI lays micropython-lib beside the repository: test_llm_mp.py)",
    "git clone --depth 1 https://github.com/micropython/micropython ../micropython":
        "the internet (test_build_mp32.py builds from CI's copy)",
}


def _blocks():
    """The README's sh and python blocks, in order (a block without a language is a picture:
    the architecture diagram, which test_structure.py checks against the imports)."""
    return [(lang, body) for lang, body in re.findall(r"```(\w*)\n(.*?)```", README, re.S)
            if lang in ("sh", "python")]


def _key(body):
    return body.splitlines()[0].strip() if body.strip() else ""


def test_every_block_is_known():
    unknown = [_key(b) for _, b in _blocks() if _key(b) not in NOT_HERE and _key(b).split("  #")[0].strip()
               not in NOT_HERE]
    assert not unknown, "README blocks this walk neither runs nor explains: %r" % unknown


def _sh(script, cwd, timeout=600):
    env = dict(os.environ, PATH=os.path.join(cwd, ".venv", "bin") + os.pathsep + os.environ["PATH"])
    env.pop("CLAW_PORT", None)
    r = subprocess.run(["bash", "-e", "-c", script], cwd=cwd, env=env, capture_output=True,
                       text=True, timeout=timeout)
    assert r.returncode == 0, "%s\n--- stdout\n%s\n--- stderr\n%s" % (script, r.stdout[-3000:], r.stderr[-3000:])
    return r.stdout


@pytest.mark.slow
def test_the_readme_in_order_on_a_fresh_clone():
    tmp = tempfile.mkdtemp(prefix="cm", dir="/tmp")  # short: the data root is the cwd below
    clone = os.path.join(tmp, "c")
    try:
        subprocess.run(["git", "clone", "-q", ROOT, clone], check=True, timeout=120)
        # the working tree as it is (a clone has only what is committed; the suite also runs
        # on uncommitted changes)
        for sub in ("claw_memory", "claw_memory_cli", "tools", "examples", "README.md", "pyproject.toml"):
            src = os.path.join(ROOT, sub)
            dst = os.path.join(clone, sub)
            if os.path.isdir(src):
                shutil.rmtree(dst, ignore_errors=True)
                shutil.copytree(src, dst, ignore=shutil.ignore_patterns("__pycache__"))
            else:
                shutil.copy(src, dst)
        ran = []
        blocks = _blocks()
        for i, (lang, body) in enumerate(blocks):
            key = _key(body)
            key = key if key in NOT_HERE else key.split("  #")[0].strip()
            if NOT_HERE.get(key) is not None:
                continue
            if key == "python3 tools/dev.py demo":
                # the Quick start's first command, on the fresh clone: it makes .venv, then the demo
                out = _sh(body.splitlines()[0].split("  #")[0], clone, timeout=900)
                assert "claw-memory inspect" in out or "data root" in out, out[-2000:]
            elif key == "MICROPYPATH=.frozen:. .venv/bin/micropython try_claw.py":
                with open(os.path.join(clone, "try_claw.py"), "w") as f:
                    f.write(blocks[i + 1][1])  # "Save it as try_claw.py in the repository root"
                out = _sh(body, clone)
                assert "Noted." in out, out
            elif key == "import asyncio":
                assert os.path.exists(os.path.join(clone, "try_claw.py")), "saved by the block before"
            elif key == "import claw_memory":
                with open(os.path.join(tmp, "api.py"), "w") as f:  # pasted: no file of the user's
                    f.write(body)
                _sh(".venv/bin/python %s" % os.path.join(tmp, "api.py"), clone)
            elif key == "from claw_memory import inspect":
                with open(os.path.join(clone, "claw_data", "repl.py"), "w") as f:
                    f.write(body)
                out = _sh("MICROPYPATH=.frozen:%s ../.venv/bin/micropython repl.py" % clone,
                          os.path.join(clone, "claw_data"))
                assert "chat:uart:console:default_01" in out
            elif key == ".venv/bin/claw-memory inspect claw_data":
                out = _sh(body, clone)
                assert "clean" in out and "created a full data root" in out
            ran.append(key)
        assert len(ran) == sum(1 for _, b in blocks if NOT_HERE.get(_key(b), NOT_HERE.get(
            _key(b).split("  #")[0].strip(), "?")) is None), ran
        left = subprocess.run(["git", "status", "--porcelain", "--untracked-files=all"], cwd=clone,
                              capture_output=True, text=True, check=True).stdout.split("\n")
        stray = [l for l in left if l.startswith("??") and not l[3:].startswith((".venv", "claw_memory.egg-info"))]
        assert not stray, "following the README leaves files .gitignore does not cover: %r" % stray
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
