# The pending turn a session keeps in RAM as written (State.pcopy): what fails around it must
# keep the persist contract (a persist that raises wrote nothing the caller's retry would
# write again) and its copy must never stand for a file that holds other bytes.
import micropython

from flashsim import mount
from mptest import eq
from turns import D, SID, call, final, result, tags, user

from claw_memory import fsutil
from claw_memory.session import Sessions

HEAP = "16M"


def test_a_memory_error_after_a_mid_turn_write_is_no_failed_persist():
    # The heap runs out right after the pending file took the batch (the board's heap is
    # ~145 KB, fragmented): the persist must not report a failure for records on flash, or
    # the caller's retry logs them twice.
    for kind in ("lfs2", "fat"):
        dev = mount(kind, "/flash", blocks=256)
        fsutil.makedirs(D)
        s = Sessions(D)
        s.persist(SID, [(1, user(0), None)])
        real = fsutil.write_at

        def write_at(path, at, data):
            real(path, at, data)
            micropython.heap_lock()  # (nothing after the write may allocate)

        fsutil.write_at = write_at
        try:
            for attempt in (1, 2):
                try:
                    s.persist(SID, [(3, call(0), None), (4, result(0), None)])
                    break
                except MemoryError:
                    while micropython.heap_unlock():
                        pass
                    fsutil.write_at = real  # (the caller retries once the heap is back)
        finally:
            while micropython.heap_unlock():
                pass
            fsutil.write_at = real
        s.persist(SID, [(2, final(0), None)], turn_completed=True)
        eq(tags(s.messages(SID, tokens=0)),
           [("user", "0"), ("call", "0"), ("tool", "0"), ("final", "0")], "%s: each record once" % kind)
        dev.unmount()
