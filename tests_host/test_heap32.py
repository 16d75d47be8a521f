"""Every store operation at documented capacity, a request start and a compaction of a session
at the 150 KiB limit, and a listing of 2,000 sessions, on the 32-bit ESP32-like unix port, with the
package compiled to .mpy and 145 KiB of heap free for the memory (what an ESP32-S3 without
PSRAM has left after its firmware boots; the code's own heap is reported beside it)."""

import os
import subprocess

import pytest

from claw_memory_cli import hosttools

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SUPPORT = os.path.join(ROOT, "tests_host", "support")
MP32 = os.path.join(ROOT, "..", "shared", "tools", "micropython32", "micropython")


def _mpy_package(dest):
    mpy_cross = hosttools.find("mpy-cross")
    for mod in hosttools.package_modules():
        out = os.path.join(dest, mod[:-3] + ".mpy")
        os.makedirs(os.path.dirname(out), exist_ok=True)
        subprocess.run([mpy_cross, "-o", out, mod], cwd=ROOT, check=True)


def _run(binary, path, cwd, *args, heap="4M"):
    env = dict(os.environ)
    env["MICROPYPATH"] = os.pathsep.join([path, SUPPORT, ".frozen"])
    return subprocess.run([binary, "-X", "heapsize=" + heap, os.path.join(SUPPORT, "capacity.py")] + list(args),
                          env=env, cwd=cwd, capture_output=True, text=True, timeout=300)


@pytest.mark.skipif(not os.path.exists(MP32), reason="the 32-bit port is not at ../shared/tools/micropython32")
def test_every_operation_at_capacity_fits_145_kib(tmp_path):
    pkg = tmp_path / "mpy"
    _mpy_package(str(pkg))
    r = _run(MP32, str(pkg), str(tmp_path), "build", "root")  # relative: a board's path limit
    assert r.returncode == 0, r.stdout + r.stderr
    r = _run(MP32, str(pkg), str(tmp_path), "run", "root", "145")
    print(r.stdout)
    assert r.returncode == 0 and r.stdout.rstrip().endswith("ALL-OK"), r.stdout + r.stderr
