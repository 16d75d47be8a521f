#!/usr/bin/env bash
# Build the CLAW_S3 MicroPython firmware (ESP32-S3 N16R8) with claw_memory frozen in.
#
# Needs:
#   MICROPYTHON_DIR  a MicroPython checkout (ports/esp32 with boards/mpconfigboard_esp32s3_common.cmake,
#                    boards/sdkconfig.flash_qio_80m and boards/sdkconfig.spiram_oct; ROMFS needs v1.25+)
#   ESP-IDF          v5.3 to v5.5.x, as MicroPython's ports/esp32/README.md lists them (v5.5.2
#                    recommended), exported in this shell: idf.py on PATH and IDF_PATH set
#                    (. "$IDF_PATH/export.sh")
#
# Usage: tools/build_firmware.sh [--check] [--clean] [--deploy PORT]
#   --check        validate the environment and print the commands, build nothing
#   --clean        make clean before building
#   --deploy PORT  flash the board after building (make deploy PORT=PORT)
#
# Output: $MICROPYTHON_DIR/ports/esp32/build-CLAW_S3/firmware.bin (flash it at 0x0, see docs/FIRMWARE.md).
set -euo pipefail

usage() {
    sed -n '2,16p' "$0" | sed 's/^# \{0,1\}//'
}

die() {
    printf 'build_firmware.sh: %s\n' "$*" >&2
    exit 2
}

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)"
BOARD_DIR="$ROOT/boards/CLAW_S3"
BOARD="$(basename "$BOARD_DIR")"

check=0
clean=0
deploy_port=""
while [ $# -gt 0 ]; do
    case "$1" in
        --check) check=1 ;;
        --clean) clean=1 ;;
        --deploy)
            if [ $# -lt 2 ] || [ -z "$2" ]; then
                die "--deploy needs a serial port, e.g. --deploy /dev/ttyACM0"
            fi
            deploy_port="$2"
            shift
            ;;
        --deploy=*)
            deploy_port="${1#--deploy=}"
            [ -n "$deploy_port" ] || die "--deploy needs a serial port, e.g. --deploy /dev/ttyACM0"
            ;;
        -h | --help)
            usage
            exit 0
            ;;
        *) die "unknown argument: $1 (see --help)" ;;
    esac
    shift
done

# Collect every problem, then report them all at once.
problems=()

if [ ! -f "$BOARD_DIR/mpconfigboard.cmake" ]; then
    problems+=("board definition missing: $BOARD_DIR/mpconfigboard.cmake")
fi
case "$BOARD_DIR" in
    *[[:space:]]*) problems+=("the repository path contains whitespace, which make cannot handle in BOARD_DIR: $BOARD_DIR (clone it somewhere else)") ;;
    *) ;;
esac

PORT_DIR=""
if [ -z "${MICROPYTHON_DIR:-}" ]; then
    problems+=("MICROPYTHON_DIR is not set: point it at a MicroPython checkout, e.g.
      git clone https://github.com/micropython/micropython.git ~/micropython
      export MICROPYTHON_DIR=~/micropython")
elif [ ! -d "$MICROPYTHON_DIR/ports/esp32" ]; then
    problems+=("MICROPYTHON_DIR=$MICROPYTHON_DIR is not a MicroPython checkout: $MICROPYTHON_DIR/ports/esp32 does not exist")
else
    PORT_DIR="$(cd "$MICROPYTHON_DIR/ports/esp32" && pwd -P)"
    # Port files that boards/CLAW_S3/mpconfigboard.cmake names relative to ports/esp32.
    for f in boards/mpconfigboard_esp32s3_common.cmake boards/sdkconfig.240mhz \
        boards/sdkconfig.flash_qio_80m boards/sdkconfig.spiram_oct boards/manifest.py; do
        if [ ! -f "$PORT_DIR/$f" ]; then
            problems+=("MicroPython checkout too old or incomplete: $PORT_DIR/$f is missing (CLAW_S3 needs a MicroPython with the common S3 board files, mpconfigboard_esp32s3_common.cmake; update MICROPYTHON_DIR)")
        fi
    done
fi

if [ -z "${IDF_PATH:-}" ] || ! command -v idf.py >/dev/null 2>&1; then
    problems+=("ESP-IDF environment not found (need idf.py on PATH and IDF_PATH set). Install ESP-IDF (v5.3 to v5.5.x; v5.5.2 recommended) and export it in this shell:
      git clone -b v5.5.2 --recursive https://github.com/espressif/esp-idf.git ~/esp-idf
      ~/esp-idf/install.sh esp32s3
      . ~/esp-idf/export.sh          # sets IDF_PATH and puts idf.py on PATH")
elif [ ! -d "$IDF_PATH" ]; then
    problems+=("IDF_PATH=$IDF_PATH is not a directory: re-run . \"\$IDF_PATH/export.sh\" from an ESP-IDF v5.3 to v5.5.x checkout")
fi

if [ ${#problems[@]} -gt 0 ]; then
    {
        printf 'build_firmware.sh: cannot build %s:\n' "$BOARD"
        for p in "${problems[@]}"; do
            printf '  - %s\n' "$p"
        done
    } >&2
    exit 2
fi

idf_version="$(idf.py --version 2>/dev/null | head -n 1 || true)"
# The versions MicroPython's esp32 port supports (its README): v5.3, v5.4.x, v5.5.x.
case "$idf_version" in
    *v5.3* | *v5.4* | *v5.5*) ;;
    *) printf 'build_firmware.sh: warning: ESP-IDF %s found; MicroPython supports v5.3 to v5.5.x (v5.5.2 recommended, see ports/esp32/README.md)\n' "${idf_version:-(unknown version)}" >&2 ;;
esac

make_args=(BOARD_DIR="$BOARD_DIR")
commands=("make ${make_args[*]} submodules")
if [ "$clean" -eq 1 ]; then
    commands+=("make ${make_args[*]} clean")
fi
commands+=("make ${make_args[*]}")
if [ -n "$deploy_port" ]; then
    commands+=("make ${make_args[*]} PORT=$deploy_port deploy")
fi
firmware="$PORT_DIR/build-$BOARD/firmware.bin"

if [ "$check" -eq 1 ]; then
    printf 'Environment OK (MICROPYTHON_DIR=%s, IDF_PATH=%s, %s).\n' "$MICROPYTHON_DIR" "$IDF_PATH" "${idf_version:-idf.py}"
    printf 'Would run in %s:\n' "$PORT_DIR"
    for c in "${commands[@]}"; do
        printf '  %s\n' "$c"
    done
    printf 'Firmware would be: %s\n' "$firmware"
    exit 0
fi

cd "$PORT_DIR"
set -x
make "${make_args[@]}" submodules
if [ "$clean" -eq 1 ]; then
    make "${make_args[@]}" clean
fi
make "${make_args[@]}"
if [ -n "$deploy_port" ]; then
    make "${make_args[@]}" PORT="$deploy_port" deploy
fi
{ set +x; } 2>/dev/null

printf 'Firmware: %s\n' "$firmware"
printf 'Flash it: esptool --chip esp32s3 --port PORT --baud 460800 write-flash 0 %s\n' "$firmware"
