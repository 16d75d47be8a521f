// CLAW_S3: ESP32-S3 N16R8 module (16 MiB flash, 8 MiB octal PSRAM) running claw_memory.

#define MICROPY_HW_BOARD_NAME               "CLAW ESP32-S3 (N16R8)"
#define MICROPY_HW_MCU_NAME                 "ESP32-S3"

// The REPL also on UART0, as the upstream ESP32_GENERIC_S3 board has it: modules whose USB
// connector goes through a USB-UART bridge (CP2102, CH340: /dev/ttyUSB0) rather than the
// S3's native USB (/dev/ttyACM0) have no REPL without it (docs/FIRMWARE.md, Flashing).
#define MICROPY_HW_ENABLE_UART_REPL         (1)

// ROMFS: partitions-16MiB.csv has a 1 MiB data partition labelled "romfs" (subtype 0x8f),
// which is memory-mapped and mounted at /rom at start-up; `mpremote romfs deploy` rewrites
// it, so claw_memory can be updated without reflashing the firmware. Keep this define and
// the "romfs" row together: a test checks that one is present exactly when the other is.
#define MICROPY_VFS_ROM                     (1)
