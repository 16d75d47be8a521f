"""`pip install .` into a fresh virtualenv outside the checkout: the installed `claw-memory`
finds its host tools (runtime dependencies of the package), runs the offline demo from its
own package data and inspects the data root the demo left, with nothing of the checkout on
any path. It installs from the package index pip is configured with (the wheels are cached
after the first run)."""

import os
import shutil
import subprocess
import venv

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_SKIP = shutil.ignore_patterns(".git", ".venv", "__pycache__", "*.egg-info", "build", "dist",
                               ".pytest_cache", ".demo")


def _clean_env(tmp_path):
    """The user's environment, less anything that points into the checkout."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTHONPATH", "MICROPYTHON", "MICROPYPATH", "VIRTUAL_ENV", "CLAW_PORT")}
    env["PATH"] = os.pathsep.join(p for p in env.get("PATH", "").split(os.pathsep)
                                  if p and not os.path.abspath(p).startswith(ROOT))
    env["HOME"] = os.environ.get("HOME", str(tmp_path))
    return env


@pytest.mark.slow
def test_pip_install_outside_the_checkout_then_demo_and_inspect(tmp_path):
    src = tmp_path / "src"  # a copy of the checkout, so the build leaves nothing in it
    shutil.copytree(ROOT, src, ignore=_SKIP)
    env_dir = tmp_path / "venv"
    venv.EnvBuilder(with_pip=True).create(str(env_dir))
    bin_dir = env_dir / ("Scripts" if os.name == "nt" else "bin")
    py = str(bin_dir / "python")
    env = _clean_env(tmp_path)
    work = tmp_path / "elsewhere"
    work.mkdir()

    def run(*cmd, timeout=600):
        r = subprocess.run(list(cmd), cwd=str(work), env=env, capture_output=True, text=True,
                           timeout=timeout)
        assert r.returncode == 0, "%s\n--- stdout\n%s\n--- stderr\n%s" % (
            " ".join(cmd), r.stdout[-3000:], r.stderr[-3000:])
        return r.stdout

    run(py, "-m", "pip", "install", "--disable-pip-version-check", "-q", str(src))
    shutil.rmtree(src)  # nothing may still read the sources

    where = run(py, "-c", "import claw_memory.store, claw_memory.session, claw_memory_cli.demo as d; "
                          "print(claw_memory.store.__file__); print(d.RUNTIME)").split()
    assert all(p.startswith(str(env_dir)) for p in where), where
    assert {"demo.py", "flashsim.py", "scripted_llm.py"} <= set(os.listdir(where[1])), where

    cli = str(bin_dir / "claw-memory")
    doctor = run(cli, "doctor")
    assert "MISSING" not in doctor and str(bin_dir / "micropython") in doctor, doctor

    keep = work / "demo"
    out = run(cli, "demo", "--keep", str(keep))
    for want in ("[tool] memory_store", "== reboot", "after the reboot: 12 messages; long-term items: 3",
                 "[tool] memory_forget", "== claw-memory inspect", "Preferred name: Captain"):
        assert want in out, want

    inspected = run(cli, "inspect", str(keep / "root"))
    assert "User is allergic to peanuts" in inspected
    assert "User lives in Lisbon" not in inspected.split("== items ==", 1)[1], "forgotten"
