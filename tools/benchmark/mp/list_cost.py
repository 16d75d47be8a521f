# What listing a data root of many sessions reads from flash (Sessions.list(), the owner's
# view: `inspect.sessions()`, `claw-memory inspect`), on the unix port:
#
#   micropython -X heapsize=32M tools/benchmark/mp/list_cost.py [SESSIONS_LFS [SESSIONS_FAT]]
#
# N small sessions written as ESP-Claw writes them (a chat map, a log of one user message and
# its index; one in 300 with a block marker) on simulated LittleFS and FAT with 4 KiB blocks
# kept in a host file; then a fresh open lists them: the bytes littlefs or FatFs read (name
# lookups read the folder's metadata: the cost grows with the square of the sessions) and
# the host time.
# MIT license
import os
import sys
import time

_HERE = __file__.rsplit("/", 1)[0] if "/" in __file__ else "."
sys.path[:0] = [_HERE, _HERE + "/../../../claw_memory_cli/runtime", _HERE + "/../../.."]

from flashsim import mount  # noqa: E402

import claw_memory  # noqa: E402
from claw_memory.session import file_name  # noqa: E402

_IMAGE = "/tmp/claw-list-cost.img"


def esp_sessions(mem, n, blocked=False):
    """N small sessions as ESP-Claw writes them: a chat map, a log of one user message and its
    index (with `blocked`, one in 300 with a block marker)."""
    for k in range(n):
        key = "chat:web:u%d" % k
        mem.chats.save(key, "default_01", ["default_01"])
        log = "/flash/sessions/" + file_name(key + ":default_01")
        data = b'{"role":"user","content":"hi %d"}\n' % k
        with open(log, "wb") as f:
            f.write(data)
        with open(log + ".idx", "wb") as f:
            f.write(b"CHDX\x01\x00\x0a\x00\x00\x00\x00\x00" + len(data).to_bytes(4, "little") + b"\x01\x01")
        if blocked and k % 300 == 7:
            with open(log + ".blocked", "wb") as f:
                f.write(b"")


def build(kind, n):
    dev = mount(kind, "/flash", blocks=12288, image_file=_IMAGE)
    mem = claw_memory.open("/flash", "lite", extract=False)
    esp_sessions(mem, n, True)
    mem.close()
    return dev


def run(kind, n):
    dev = build(kind, n)
    mem = claw_memory.open("/flash", "lite", extract=False)
    r0 = dev.bytes_read
    t = time.ticks_ms()
    rows = blocked = 0
    for r in mem.sessions.list():
        rows += 1
        blocked += r["blocked"]
    dt = time.ticks_diff(time.ticks_ms(), t)
    mb = (dev.bytes_read - r0) / 1e6
    dev.unmount()
    os.remove(_IMAGE)
    print("%-4s %5d sessions: %5d rows (%d blocked), %7.1f MB read (%.2f MB a session), %.1f s host"
          % (kind, n, rows, blocked, mb, mb / n, dt / 1000))


if __name__ == "__main__":  # (turn_cost.py imports esp_sessions)
    run("lfs2", int(sys.argv[1]) if len(sys.argv) > 1 else 2000)
    run("fat", int(sys.argv[2]) if len(sys.argv) > 2 else 2000)
