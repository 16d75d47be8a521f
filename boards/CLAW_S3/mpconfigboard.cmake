# CLAW_S3: ESP32-S3 N16R8 module (16 MiB quad flash, 8 MiB octal PSRAM) with claw_memory frozen in.
#
# Built out of tree: make BOARD_DIR=/abs/path/boards/CLAW_S3 (see tools/build_firmware.sh).
# This file is included by ports/esp32/CMakeLists.txt while the current directory is
# ports/esp32 and before esp32_common.cmake sets MICROPY_PORT_DIR, so port files are named
# relative to ports/esp32 (boards/...) and our own files through ${MICROPY_BOARD_DIR}.
# Needs a MicroPython checkout that has boards/mpconfigboard_esp32s3_common.cmake and
# boards/sdkconfig.flash_qio_80m (MicroPython PR #18873); the build script checks this.

# IDF_TARGET esp32s3 and the S3 defaults: sdkconfig.base, sdkconfig.ble, sdkconfig.spiram_quad.
include(boards/mpconfigboard_esp32s3_common.cmake)

# ESP-IDF reads the fragments below as plain text (concatenated with configure_file COPYONLY),
# so ${MICROPY_BOARD_DIR} inside sdkconfig.board would not be expanded. Write a one-line
# fragment here with the absolute path of our partition table instead.
file(WRITE ${CMAKE_BINARY_DIR}/sdkconfig.claw_partitions
    "CONFIG_PARTITION_TABLE_CUSTOM=y\nCONFIG_PARTITION_TABLE_CUSTOM_FILENAME=\"${MICROPY_BOARD_DIR}/partitions-16MiB.csv\"\n")

list(APPEND SDKCONFIG_DEFAULTS
    boards/sdkconfig.240mhz
    boards/sdkconfig.flash_qio_80m
    # N16R8 modules have octal PSRAM: switches the common quad-PSRAM setup to octal mode.
    boards/sdkconfig.spiram_oct
    ${MICROPY_BOARD_DIR}/sdkconfig.board
    # Last, so that our partition table wins over the one named in sdkconfig.base.
    ${CMAKE_BINARY_DIR}/sdkconfig.claw_partitions
)

# boards/CLAW_S3/manifest.py: the port manifest, then the repository's manifest.py.
set(MICROPY_FROZEN_MANIFEST ${MICROPY_BOARD_DIR}/manifest.py)
