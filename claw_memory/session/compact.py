# claw_memory.session.compact: drop old tool traffic from a session over its size limit,
# or block it when the dialogue alone is too big (ESP-Claw §6.4).
# MIT license
#
# Both files are written as `.tmp` and committed together through a journal
# (fsutil.commit), record by record through one small buffer.

from .. import fsutil
from .._compat import const
from ..core import FINAL, TOOL_CALL, TOOL_RESULTS, USER
from . import format as fmt_
from .state import State, each
from .write import flush_index

_COPY = const(1024)  # copy buffer

# ESP-Claw's CLAW_MEMORY_SESSION_SIZE_WARNING, whole and without the five stray spaces its
# C line continuation put after "sending" (DESIGN.md, deliberate difference 5).
BLOCK_TEXT = (
    "Session history is still too large after compaction. Please create a new conversation "
    "by sending the command `/session new [name]`, and delete the old session by "
    "`/session delete <name>` due to limited storage space."
)


def _keep_rule(log, st):
    """keep(i, type) for ESP-Claw's rule: every user and final record, the tool records of
    the newest completed turn that used tools, and an unfinished last turn."""
    last_tool = None
    start = 0
    done = tools = False
    n = 0
    for off, ln, kind, fmt in each(log, st):
        if kind == USER and n > 0:
            if done and tools:
                last_tool = (start, n)
            start, done, tools = n, False, False
        if kind == FINAL:
            done = True
        elif kind == TOOL_CALL or kind == TOOL_RESULTS:
            tools = True
        n += 1
    if done and tools:
        last_tool = (start, n)
    open_from = n if done else start

    def keep(i, kind):
        return (kind == USER or kind == FINAL or i >= open_from
                or (last_tool is not None and last_tool[0] <= i < last_tool[1]))

    return keep


def compact(log, st, size_limit, note):
    """Compact the session; returns its new State, or None when it was blocked instead."""
    idx = log + ".idx"
    keep = _keep_rule(log, st)
    planned = kept = i = 0
    for off, ln, kind, fmt in each(log, st):
        if keep(i, kind):
            planned += ln
            kept += 1
        i += 1
    if planned > size_limit:
        flush_index(log, st)
        fsutil.write_file(log + ".blocked", b"")
        note("%s: blocked, %d bytes after compaction" % (log, planned))
        return None
    buf = bytearray(_COPY)
    pos = i = 0
    with open(log, "rb") as lf, open(log + ".tmp", "wb") as out, open(idx + ".tmp", "wb") as iout:
        iout.write(fmt_.HEADER)
        for off, ln, kind, fmt in each(log, st):
            if keep(i, kind):
                lf.seek(off)
                left = ln
                while left:
                    got = lf.readinto(memoryview(buf)[: min(left, _COPY)])
                    if not got:
                        raise OSError(5, "session log shrank during compaction")
                    out.write(memoryview(buf)[:got])
                    left -= got
                iout.write(fmt_.entry(pos, ln, kind, fmt))
                pos += ln
            i += 1
    fsutil.commit(log + ".commit", [log, idx])
    new = State(pos, kept, pos, 0, fmt_.HDR + fmt_.ENT * kept)
    new.pend, new.pend_size = st.pend, st.pend_size
    note("%s: compacted to %d bytes, %d records" % (log, pos, kept))
    return new
