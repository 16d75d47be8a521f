"""The CLAW_S3 board definition and tools/build_firmware.sh, checked without ESP-IDF.

What a firmware build would catch first is checked here from the files themselves: the
partition table, the board and repository manifests (run with recording stand-ins for the
build's globals), the CMake/sdkconfig/header settings that must agree with each other, and
the build script's environment checks. (That every module compiles with
`mpy-cross -march=xtensawin` is tested in test_packaging.py.) esptool 5.x has no
CSV-to-binary partition-table converter (that is ESP-IDF's gen_esp32part.py), so the table
is validated by the rules ESP-IDF and MicroPython apply.
"""

import json
import os
import re
import shutil
import stat
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BOARD = os.path.join(ROOT, "boards", "CLAW_S3")
CSV = os.path.join(BOARD, "partitions-16MiB.csv")
SCRIPT = os.path.join(ROOT, "tools", "build_firmware.sh")
sys.path.insert(0, os.path.join(ROOT, "tools"))

import gen_package_json  # noqa: E402
from manifest_sim import ManifestRun  # noqa: E402

KiB = 1024
MiB = 1024 * KiB
FLASH_SIZE = 16 * MiB
PARTITION_TABLE_OFFSET = 0x8000  # ESP-IDF default CONFIG_PARTITION_TABLE_OFFSET
PARTITION_TABLE_SIZE = 0x1000


def _read(path):
    with open(path) as f:
        return f.read()


# --- partition table -------------------------------------------------------------------


def _int(text):
    """A size or offset as ESP-IDF's gen_esp32part.py reads it: decimal, 0x.., or K/M suffix."""
    text = text.strip()
    for suffix, mult in (("K", KiB), ("M", MiB)):
        if text.upper().endswith(suffix):
            return int(text[:-1], 0) * mult
    return int(text, 0)


def _partitions():
    rows = []
    for lineno, line in enumerate(_read(CSV).splitlines(), 1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        fields = [f.strip() for f in line.split(",")]
        assert len(fields) >= 5, "line %d: %r" % (lineno, line)
        name, ptype, subtype, offset, size = fields[:5]
        assert offset, "line %d: give every offset explicitly" % lineno
        rows.append({
            "name": name, "type": ptype, "subtype": subtype,
            "offset": _int(offset), "size": _int(size),
            "flags": fields[5] if len(fields) > 5 else "",
        })
    return rows


def _by_name():
    return {p["name"]: p for p in _partitions()}


def test_partition_names_unique_and_types_known():
    parts = _partitions()
    names = [p["name"] for p in parts]
    assert len(names) == len(set(names))
    assert all(p["type"] in ("app", "data") for p in parts)
    assert all(len(p["name"]) <= 16 for p in parts), "ESP-IDF labels are at most 16 bytes"
    assert names[:3] == ["nvs", "phy_init", "factory"]


def test_partitions_contiguous_no_overlap_and_fill_16MiB_exactly():
    parts = _partitions()
    assert parts[0]["offset"] == PARTITION_TABLE_OFFSET + PARTITION_TABLE_SIZE
    for prev, cur in zip(parts, parts[1:]):
        assert cur["offset"] == prev["offset"] + prev["size"], (
            "%s starts at 0x%x, %s ends at 0x%x"
            % (cur["name"], cur["offset"], prev["name"], prev["offset"] + prev["size"]))
    spans = sorted((p["offset"], p["offset"] + p["size"], p["name"]) for p in parts)
    for (_, end, a), (start, _, b) in zip(spans, spans[1:]):
        assert end <= start, "%s overlaps %s" % (a, b)
    assert all(p["size"] > 0 for p in parts)
    assert all(p["offset"] % (4 * KiB) == 0 and p["size"] % (4 * KiB) == 0 for p in parts)
    last = parts[-1]
    assert last["offset"] + last["size"] == FLASH_SIZE == 0x1000000


def test_app_partition_aligned_and_large_enough():
    apps = [p for p in _partitions() if p["type"] == "app"]
    assert [p["name"] for p in apps] == ["factory"]
    factory = apps[0]
    assert factory["subtype"] == "factory"
    assert factory["offset"] % (64 * KiB) == 0, "app partitions must be 64 KiB aligned"
    assert factory["offset"] == 0x10000, "micropython.bin is written at 0x10000"
    assert factory["size"] >= 2 * MiB
    assert factory["size"] == 3 * MiB


def test_vfs_partition_is_the_filesystem():
    vfs = _by_name()["vfs"]
    # flashbdev.py: Partition.find(TYPE_DATA, label="vfs"); formatted LittleFS2 by inisetup.
    assert (vfs["type"], vfs["subtype"]) == ("data", "fat")
    assert vfs["size"] >= 8 * MiB
    assert _partitions()[-1]["name"] == "vfs", "vfs takes the rest of the flash"


def test_romfs_partition():
    romfs = _by_name()["romfs"]
    assert romfs["type"] == "data"
    assert int(romfs["subtype"], 0) == 0x8F
    assert romfs["size"] == 1 * MiB
    # The ROMFS image is memory-mapped (esp_partition_mmap): keep it on a 64 KiB MMU page.
    assert romfs["offset"] % (64 * KiB) == 0


# --- manifests -------------------------------------------------------------------------



def test_board_manifest_includes_port_manifest_then_repo_manifest():
    run = ManifestRun()
    run.run(os.path.join(BOARD, "manifest.py"))
    own = [c for c in run.calls if c[0] == os.path.join(BOARD, "manifest.py")]
    assert [c[1] for c in own] == ["include", "include"], "only the two includes, no metadata()"
    assert own[0][2] == ("$(PORT_DIR)/boards/manifest.py",)
    second = own[1][2][0]
    assert second.startswith("$(BOARD_DIR)")
    resolved = os.path.normpath(second.replace("$(BOARD_DIR)", BOARD))
    assert resolved == os.path.join(ROOT, "manifest.py")
    pieces = [os.path.join(ROOT, "manifests", p) for p in ("full.py", "lite.py", "agent.py", "llm.py")]
    assert run.ran == [os.path.join(BOARD, "manifest.py"), os.path.join(ROOT, "manifest.py")] + pieces


def test_firmware_freezes_exactly_the_package_and_requires_aiohttp():
    run = ManifestRun()
    run.run(os.path.join(BOARD, "manifest.py"))
    assert sorted(run.frozen) == gen_package_json.modules()
    assert len(run.frozen) == len(set(run.frozen))
    names = [(c[1], c[2]) for c in run.calls]
    assert ("require", ("aiohttp",)) in names
    assert not any(n == "require" and a[0] == "json" for n, a in names), "json is built in"
    # metadata() once, in the repository manifest (includes share one level).
    assert run.metadata_calls == [os.path.join(ROOT, "manifest.py")]


# --- mpconfigboard.cmake, sdkconfig.board, mpconfigboard.h -----------------------------


def _cmake():
    # Drop comments (no '#' appears inside the strings we use).
    return "\n".join(line.split("#", 1)[0] for line in _read(os.path.join(BOARD, "mpconfigboard.cmake")).splitlines())


def _sdkconfig_defaults(cmake):
    m = re.search(r"list\(APPEND SDKCONFIG_DEFAULTS(.*?)\)", cmake, re.S)
    assert m, "mpconfigboard.cmake appends to SDKCONFIG_DEFAULTS"
    return m.group(1).split()


def test_cmake_board_setup():
    cmake = _cmake()
    assert re.search(r"^include\(boards/mpconfigboard_esp32s3_common\.cmake\)", cmake, re.M)
    entries = _sdkconfig_defaults(cmake)
    assert entries == [
        "boards/sdkconfig.240mhz",
        "boards/sdkconfig.flash_qio_80m",
        "boards/sdkconfig.spiram_oct",
        "${MICROPY_BOARD_DIR}/sdkconfig.board",
        "${CMAKE_BINARY_DIR}/sdkconfig.claw_partitions",
    ]
    # Own files through ${MICROPY_BOARD_DIR}, port files relative to ports/esp32.
    assert "MICROPY_PORT_DIR" not in cmake, "not set yet when mpconfigboard.cmake runs"
    assert re.search(
        r"^set\(MICROPY_FROZEN_MANIFEST \$\{MICROPY_BOARD_DIR\}/manifest\.py\)", cmake, re.M)


def test_cmake_generates_partition_fragment_with_absolute_csv_path():
    cmake = _cmake()
    m = re.search(r'file\(WRITE \$\{CMAKE_BINARY_DIR\}/sdkconfig\.claw_partitions\s+"(.*?)"\)', cmake, re.S)
    assert m, "mpconfigboard.cmake writes the partition fragment"
    # What CMake writes: \n and \" unescaped, ${MICROPY_BOARD_DIR} expanded to the board dir.
    text = m.group(1).replace("\\n", "\n").replace('\\"', '"').replace("${MICROPY_BOARD_DIR}", BOARD)
    assert text.endswith("\n")
    conf = _parse_sdkconfig(text)
    assert conf["CONFIG_PARTITION_TABLE_CUSTOM"] == "y"
    csv = conf["CONFIG_PARTITION_TABLE_CUSTOM_FILENAME"]
    assert csv == '"%s"' % CSV
    assert os.path.isabs(csv.strip('"')) and os.path.isfile(csv.strip('"'))


def _parse_sdkconfig(text):
    conf = {}
    for line in text.splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        key, _, value = line.partition("=")
        conf[key] = value  # later assignments win, as in ESP-IDF's kconfgen
    return conf


def test_sdkconfig_board():
    text = _read(os.path.join(BOARD, "sdkconfig.board"))
    # The fragments are concatenated as they are: a missing final newline would glue our
    # last line to the first line of the next fragment.
    assert text.endswith("\n")
    assert not re.search(r"^#\s*CONFIG_\w+ is not set", text, re.M), "that comment means =n"
    conf = _parse_sdkconfig(text)
    assert conf["CONFIG_ESPTOOLPY_FLASHSIZE_16MB"] == "y"
    assert conf.get("CONFIG_ESPTOOLPY_FLASHSIZE_4MB", "") == ""
    assert not [k for k, v in conf.items() if k.startswith("CONFIG_ESPTOOLPY_FLASHSIZE_")
                and k != "CONFIG_ESPTOOLPY_FLASHSIZE_16MB" and v == "y"]
    assert conf["CONFIG_PARTITION_TABLE_CUSTOM"] == "y"
    assert conf["CONFIG_SPIRAM"] == "y"
    assert conf["CONFIG_SPIRAM_MODE_OCT"] == "y"
    assert conf.get("CONFIG_SPIRAM_MODE_QUAD", "") == ""
    # Every setting is explained by the comment line right above it.
    lines = text.splitlines()
    for i, line in enumerate(lines):
        if line.startswith("CONFIG_"):
            assert i > 0 and lines[i - 1].startswith("#"), "no comment above %r" % line


def _defines():
    text = _read(os.path.join(BOARD, "mpconfigboard.h"))
    return dict(re.findall(r"^\s*#define\s+(\w+)\s+(.+?)\s*(?://.*)?$", text, re.M))


def test_mpconfigboard_h():
    d = _defines()
    assert d["MICROPY_HW_BOARD_NAME"] == '"CLAW ESP32-S3 (N16R8)"'
    assert d["MICROPY_HW_MCU_NAME"] == '"ESP32-S3"'


def test_uart_repl_as_the_generic_s3_board():
    # Upstream ports/esp32/boards/ESP32_GENERIC_S3/mpconfigboard.h enables the REPL on UART0
    # for modules behind a USB-UART bridge; without it /dev/ttyUSB0 (docs/FIRMWARE.md) has none.
    assert _defines()["MICROPY_HW_ENABLE_UART_REPL"] == "(1)"
    assert "/dev/ttyUSB0" in _read(os.path.join(ROOT, "docs", "FIRMWARE.md"))


def test_vfs_rom_enabled_iff_romfs_partition():
    rom = _defines().get("MICROPY_VFS_ROM", "(0)").strip("()").strip()
    has_romfs = any(p["name"] == "romfs" for p in _partitions())
    assert (rom == "1") == has_romfs


def test_board_json():
    with open(os.path.join(BOARD, "board.json")) as f:
        meta = json.load(f)
    assert meta["mcu"] == "esp32s3"
    assert meta["deploy_options"]["flash_offset"] == "0"
    assert "External RAM" in meta["features"]
    for doc in meta["deploy"]:
        assert os.path.isfile(os.path.normpath(os.path.join(BOARD, doc)))


def test_firmware_doc_matches_partition_table():
    doc = _read(os.path.join(ROOT, "docs", "FIRMWARE.md"))
    for p in _partitions():
        assert re.search(r"\|\s*`?%s`?\s*\|" % re.escape(p["name"]), doc), p["name"]
        assert "0x%x" % p["offset"] in doc.lower(), (p["name"], hex(p["offset"]))


# --- tools/build_firmware.sh -----------------------------------------------------------


def _bash():
    bash = shutil.which("bash")
    if not bash:
        pytest.skip("bash not available")
    return bash


def _path_without_idf():
    dirs = os.environ.get("PATH", "").split(os.pathsep)
    return os.pathsep.join(d for d in dirs if d and not os.path.exists(os.path.join(d, "idf.py")))


def _run_script(args, env):
    return subprocess.run([_bash(), SCRIPT] + args, env=env, capture_output=True, text=True,
                          timeout=60)


def _clean_env():
    env = {k: v for k, v in os.environ.items() if k not in ("MICROPYTHON_DIR", "IDF_PATH")}
    env["PATH"] = _path_without_idf()
    return env


def _fake_setup(tmp_path, missing=(), idf="v5.5.1"):
    port = tmp_path / "micropython" / "ports" / "esp32"
    (port / "boards").mkdir(parents=True)
    for name in ("mpconfigboard_esp32s3_common.cmake", "sdkconfig.240mhz",
                 "sdkconfig.flash_qio_80m", "sdkconfig.spiram_oct", "manifest.py"):
        if name not in missing:
            (port / "boards" / name).write_text("")
    bindir = tmp_path / "bin"
    bindir.mkdir()
    idf_version = idf
    idf = bindir / "idf.py"
    idf.write_text("#!/bin/sh\necho 'ESP-IDF %s'\n" % idf_version)
    idf.chmod(idf.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    (tmp_path / "esp-idf").mkdir()
    env = _clean_env()
    env["MICROPYTHON_DIR"] = str(tmp_path / "micropython")
    env["IDF_PATH"] = str(tmp_path / "esp-idf")
    env["PATH"] = str(bindir) + os.pathsep + env["PATH"]
    return env, port


def test_build_script_check_fails_clearly_without_environment():
    r = _run_script(["--check"], _clean_env())
    assert r.returncode != 0
    assert "MICROPYTHON_DIR" in r.stderr
    assert "ESP-IDF" in r.stderr and "export.sh" in r.stderr and "v5.5" in r.stderr
    assert "make " not in r.stdout


def test_build_script_check_fails_without_esp_idf_only(tmp_path):
    env, _ = _fake_setup(tmp_path)
    del env["IDF_PATH"]
    r = _run_script(["--check"], env)
    assert r.returncode != 0
    assert "ESP-IDF" in r.stderr and "IDF_PATH" in r.stderr
    assert "MICROPYTHON_DIR is not set" not in r.stderr


def test_build_script_check_rejects_non_checkout_and_old_checkout(tmp_path):
    env, _ = _fake_setup(tmp_path / "a")
    env["MICROPYTHON_DIR"] = str(tmp_path / "nowhere")
    r = _run_script(["--check"], env)
    assert r.returncode != 0 and "ports/esp32" in r.stderr

    env, _ = _fake_setup(tmp_path / "b", missing=("mpconfigboard_esp32s3_common.cmake",))
    r = _run_script(["--check"], env)
    assert r.returncode != 0 and "mpconfigboard_esp32s3_common.cmake" in r.stderr


def test_build_script_check_succeeds_and_prints_make_commands(tmp_path):
    env, port = _fake_setup(tmp_path)
    board = os.path.realpath(BOARD)
    r = _run_script(["--check"], env)
    assert r.returncode == 0, r.stderr
    assert "make BOARD_DIR=%s submodules" % board in r.stdout
    assert re.search(r"^\s*make BOARD_DIR=%s$" % re.escape(board), r.stdout, re.M)
    assert os.path.isabs(board)
    assert "build-CLAW_S3/firmware.bin" in r.stdout
    assert str(os.path.realpath(port)) in r.stdout
    assert "clean" not in r.stdout and "deploy" not in r.stdout

    r = _run_script(["--check", "--clean", "--deploy", "/dev/ttyACM0"], env)
    assert r.returncode == 0, r.stderr
    out = r.stdout.splitlines()
    cmds = [line.strip() for line in out if line.strip().startswith("make ")]
    assert cmds == [
        "make BOARD_DIR=%s submodules" % board,
        "make BOARD_DIR=%s clean" % board,
        "make BOARD_DIR=%s" % board,
        "make BOARD_DIR=%s PORT=/dev/ttyACM0 deploy" % board,
    ]


def test_build_script_rejects_bad_arguments(tmp_path):
    env, _ = _fake_setup(tmp_path)
    r = _run_script(["--deploy"], env)
    assert r.returncode != 0 and "serial port" in r.stderr
    r = _run_script(["--bogus"], env)
    assert r.returncode != 0 and "unknown argument" in r.stderr
    r = _run_script(["--help"], env)
    assert r.returncode == 0 and "--check" in r.stdout


@pytest.mark.parametrize("version,warns", [("v5.3", False), ("v5.4.2", False), ("v5.5.2", False),
                                           ("v5.5.4", False), ("v5.2.3", True), ("v6.0", True)])
def test_build_script_expects_the_esp_idf_versions_micropython_supports(tmp_path, version, warns):
    env, _ = _fake_setup(tmp_path, idf=version)
    r = _run_script(["--check"], env)
    assert r.returncode == 0, r.stderr
    assert ("warning" in r.stderr) == warns, r.stderr
    if warns:
        assert "v5.3 to v5.5.x" in r.stderr and "v5.5.2" in r.stderr


def test_esp_idf_versions_documented_as_the_micropython_readme_lists_them():
    doc = _read(os.path.join(ROOT, "docs", "FIRMWARE.md"))
    assert "v5.3 to v5.5.x" in doc and "v5.5.2 recommended" in doc
    script = _read(SCRIPT)
    assert "v5.3 to v5.5.x" in script and "git clone -b v5.5.2" in script
