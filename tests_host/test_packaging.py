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


def _run_manifest(path, calls):
    """Execute a manifest with recording stand-ins for the build's globals."""

    def rec(name):
        return lambda *a, **k: calls.append((name, a, k))

    env = {n: rec(n) for n in ("metadata", "require", "package", "module", "include")}
    with open(path) as f:
        exec(compile(f.read(), path, "exec"), env)


def _package_modules(pkg_dir):
    # What manifestfile.py's package() freezes: every .py below the directory.
    out = []
    for dirpath, dirnames, files in os.walk(os.path.join(ROOT, pkg_dir)):
        dirnames[:] = [d for d in dirnames if d != "__pycache__"]
        out += [os.path.relpath(os.path.join(dirpath, f), ROOT) for f in files if f.endswith(".py")]
    return sorted(p.replace(os.sep, "/") for p in out)


def test_manifest_calls_metadata_first_then_package_and_aiohttp():
    calls = []
    _run_manifest(os.path.join(ROOT, "manifest.py"), calls)
    names = [c[0] for c in calls]
    assert names[0] == "metadata"
    assert names.count("metadata") == 1
    assert ("require", ("aiohttp",), {}) in calls
    assert ("package", ("claw_memory",), {}) in calls
    assert not any(c[0] == "require" and c[1][0] == "json" for c in calls), "json is built in"
    version = calls[0][2]["version"]
    import claw_memory

    assert version == claw_memory.__version__


def test_manifest_and_package_json_list_exactly_the_package_modules():
    import json

    calls = []
    _run_manifest(os.path.join(ROOT, "manifest.py"), calls)
    frozen = []
    for name, args, _ in calls:
        if name == "package":
            frozen += _package_modules(args[0])
        elif name == "module":
            frozen.append(args[0])
    on_disk = gen_package_json.modules()
    assert sorted(frozen) == on_disk
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
