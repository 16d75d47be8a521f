# Session history on a fragmented heap, run by tests_host/test_session_heap32.py on the 32-bit
# port: the heap filled with 16 KiB blocks and every other one freed (about half of it free,
# no free run much over 16 KiB), then a turn persisted (mid-turn records, the completing
# batch), a request start with a turn in progress, and an open that rebuilds the index over a
# 70 KB tool result ESP-Claw wrote. Each read must fit a hole: prints FRAGMENTED-OK at the end.
import gc
import os
import sys

from flashsim import mount

import claw_memory
from claw_memory.session import stream  # noqa: F401 -- imported before the heap is cut up

SID = "chat:web:local:frag_01"
LOG = "/flash/sessions/" + claw_memory.session.file_name(SID)
RUN = 16384


def fragment():
    """Fill the heap with RUN-byte blocks, then free every other one."""
    held = []
    try:
        while True:
            held.append(bytearray(RUN))
    except MemoryError:
        pass
    for i in range(0, len(held), 2):
        held[i] = None
    gc.collect()
    return held


def turn(s, n):
    s.persist(SID, [(1, '{"role":"user","content":"u%d"}' % n, None)])
    s.persist(SID, [(3, '{"role":"assistant","content":null,"tool_calls":[{"id":"c%d","type":'
                        '"function","function":{"name":"t","arguments":"{}"}}]}' % n, None),
                    (4, '[{"role":"tool","tool_call_id":"c%d","content":"ok","is_error":false}]' % n,
                     None)])
    h = s.history(SID, "openai")  # a request start with the turn in progress
    body = b"".join(bytes(c) for c in h.json_chunks("openai"))
    assert b'"content":"u%d"' % n in body and b"zzzz" not in body, body[:300]
    s.persist(SID, [(2, '{"role":"assistant","content":"hi"}', None)], turn_completed=True)


def main(image):
    dev = mount("lfs2", "/flash", blocks=256, image_file=image)
    mem = claw_memory.open("/flash", mode="lite")
    turn(mem.sessions, 1)
    mem.close()
    with open(LOG, "ab") as f:  # a turn as ESP-Claw appends it, with a 70 KB tool result
        f.write(b'{"role":"user","content":"big"}\n{"role":"assistant","content":null,"tool_calls":'
                b'[{"id":"cb","type":"function","function":{"name":"t","arguments":"{}"}}]}\n'
                b'[{"role":"tool","tool_call_id":"cb","content":"')
        for _ in range(70):
            f.write(b"z" * 1000)
        f.write(b'","is_error":false}]\n{"role":"assistant","content":"done"}\n')
    held = fragment()
    free = gc.mem_free()
    print("free after fragmenting: %d bytes, in runs of about %d" % (free, RUN))
    mem = claw_memory.open("/flash", mode="lite")
    turn(mem.sessions, 2)
    mem.close()
    os.remove(LOG + ".idx")
    mem = claw_memory.open("/flash", mode="lite")  # the index rebuilt from the log
    turn(mem.sessions, 3)
    assert mem.sessions.stat(SID)["records"] == 16
    assert mem.sessions.verify(SID)["dropped"] == 0
    mem.close()
    del held
    dev.unmount()
    print("FRAGMENTED-OK")


main(sys.argv[1])
