# claw_memory: every difference between MicroPython and CPython lives here.
# MIT license

import json
import os
import sys
import time

MICROPYTHON = sys.implementation.name == "micropython"

try:
    from micropython import const
except ImportError:  # CPython

    def const(x):
        return x


# errno values the library raises or tests (newlib's, as on ESP-IDF, and Linux's: the same
# numbers); MicroPython's errno module lacks some of them (ENOTDIR, EBUSY, ENOSPC).
ENOENT = const(2)
EIO = const(5)
EAGAIN = const(11)
EBUSY = const(16)
ENOTDIR = const(20)
EISDIR = const(21)
ENOSPC = const(28)

# Ports built with a 2000 epoch (older ESP32 firmware) report time from 2000-01-01; the
# formats store Unix seconds, as ESP-Claw's gettimeofday() does.
EPOCH_OFFSET = 946684800 if time.gmtime(0)[0] == 2000 else 0


def unix_time():
    """Whole seconds since 1970-01-01 UTC."""
    return int(time.time()) + EPOCH_OFFSET


def local_time_str(ts):
    """`YYYY-MM-DD HH:MM:SS` in local time, `-` for 0 (ESP-Claw's MEMORY.md style)."""
    if not ts:
        return "-"
    t = time.localtime(ts - EPOCH_OFFSET)
    return "%04d-%02d-%02d %02d:%02d:%02d" % t[:6]


if MICROPYTHON:
    ticks_ms = time.ticks_ms
    ticks_diff = time.ticks_diff

    def dumps(obj):
        """Compact JSON, non-ASCII written raw (cJSON's unformatted print)."""
        return json.dumps(obj, separators=(",", ":"))

    def exc_text(exc):
        import io

        buf = io.StringIO()
        sys.print_exception(exc, buf)
        return buf.getvalue()

    def ilistdir(path):
        """(name, is_dir, size) for each entry of a directory; size -1 where the filesystem
        does not say (littlefs and FAT do, from the folder's metadata: no lookup per name).
        A name that is not UTF-8 is left out."""
        # Listed as bytes: MicroPython makes a str only of valid UTF-8, and a str listing of
        # a folder holding any other name (a card written elsewhere; FAT's code page for a
        # long name) raises for the whole folder. Such a file is none of ours or ESP-Claw's
        # (their names are ASCII), and no str path opens it.
        for entry in os.ilistdir(path.encode()):
            try:
                name = entry[0].decode()
            except UnicodeError:
                continue
            yield name, entry[1] == 0x4000, entry[3] if len(entry) > 3 else -1

else:

    def ticks_ms():
        return int(time.monotonic() * 1000)

    def ticks_diff(a, b):
        return a - b

    def dumps(obj):
        """Compact JSON, non-ASCII written raw (cJSON's unformatted print)."""
        return json.dumps(obj, separators=(",", ":"), ensure_ascii=False)

    def exc_text(exc):
        import traceback

        return "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))

    def ilistdir(path):
        """(name, is_dir, size) for each entry of a directory; size -1: not said (a host's
        stat is cheap)."""
        with os.scandir(path) as it:
            for entry in it:
                yield entry.name, entry.is_dir(), -1
