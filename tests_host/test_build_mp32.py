"""tools/build_mp32.py without building: what it copies from a MicroPython tree, what its cache
key follows, and that it reports (instead of failing) what it cannot do here. The build itself
runs in tests_host/test_heap32.py."""

import os
import shutil
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tools"))

import build_mp32  # noqa: E402

SRC = os.environ.get("CLAW_MPY_SRC", "")
LIB = os.environ.get("CLAW_MPLIB", "")


def _touch(base, rel, data=b"x"):
    path = os.path.join(base, rel)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as f:
        f.write(data)


def test_copies_only_what_the_unix_port_builds(tmp_path):
    keep = ["py/mpconfig.h", "extmod/modos.c", "ports/unix/main.c", "ports/unix/variants/standard/x.mk",
            "lib/littlefs/lfs2.c", "lib/oofatfs/ff.c", "mpy-cross/main.c", "tools/makemanifest.py",
            "drivers/bus/spi.h", "shared/runtime/pyexec.c"]
    drop = [".git/HEAD", "ports/esp32/main.c", "lib/mbedtls/x.c", "lib/micropython-lib/README.md",
            "ports/unix/build-standard/micropython", "mpy-cross/build/mpy-cross", "tests/run-tests.py",
            "docs/conf.py"]
    for rel in keep + drop:
        _touch(str(tmp_path), rel)
    assert build_mp32._source_files(str(tmp_path)) == sorted(keep)


def test_source_id_follows_content(tmp_path):
    _touch(str(tmp_path), "py/mpconfig.h", b"a")
    files = build_mp32._source_files(str(tmp_path))
    before = build_mp32._source_id(str(tmp_path), files)
    _touch(str(tmp_path), "py/mpconfig.h", b"b")
    assert build_mp32._source_id(str(tmp_path), files) != before


@pytest.mark.skipif(not (os.path.isdir(SRC) and os.path.isdir(LIB)),
                    reason="needs CLAW_MPY_SRC and CLAW_MPLIB (a MicroPython tree's manifest parser)")
def test_key_follows_every_frozen_file_and_nothing_else(tmp_path, monkeypatch):
    repo = tmp_path / "repo"
    repo.mkdir()
    for name in ("manifest.py", "manifests", "claw_memory"):
        copy = shutil.copytree if os.path.isdir(os.path.join(ROOT, name)) else shutil.copyfile
        copy(os.path.join(ROOT, name), str(repo / name))
    monkeypatch.setattr(build_mp32, "ROOT", str(repo))
    monkeypatch.setattr(build_mp32, "CACHE", str(tmp_path / "cache"))
    src, lib = build_mp32._tree(SRC, LIB)

    def keys():
        return build_mp32._key("s", src, lib, False)[0], build_mp32._key("s", src, lib, True)[0]

    frozen, plain = keys()
    assert frozen != plain
    (repo / "README.md").write_text("not frozen")
    assert keys() == (frozen, plain)
    with open(str(repo / "claw_memory" / "core.py"), "a") as f:
        f.write("\n# changed\n")
    assert keys()[0] != frozen and keys()[1] == plain  # the plain port has no package in it
    assert build_mp32._key("other source", src, lib, True)[0] != plain


def test_reports_a_missing_cross_compiler_it_cannot_install(monkeypatch):
    real = shutil.which
    monkeypatch.setattr(shutil, "which", lambda name: None if name.startswith("i686") else real(name))
    monkeypatch.setattr(os, "geteuid", lambda: 1000)
    with pytest.raises(build_mp32.Unavailable, match="gcc-i686-linux-gnu"):
        build_mp32._compiler()


def test_reports_a_missing_source_tree(monkeypatch, tmp_path):
    monkeypatch.delenv("CLAW_MPY_SRC", raising=False)
    with pytest.raises(build_mp32.Unavailable, match="CLAW_MPY_SRC"):
        build_mp32.build()
    with pytest.raises(build_mp32.Unavailable, match="not a MicroPython source tree"):
        build_mp32.build(src=str(tmp_path), lib=str(tmp_path))
