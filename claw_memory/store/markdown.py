# claw_memory.store.markdown: rendering MEMORY.md (ESP-Claw's layout) from the items.
# MIT license
#
# Every value is rendered as data on one line (text.one_line): a line break in a memory, or
# in an id another program wrote into the records, would otherwise let text the LLM or the
# user controls start a heading or a fake `- \`mem-...\`` entry of its own (ESP-Claw writes
# them raw); an id's backtick would end its code span. The records keep the original text.

from .. import text
from .._compat import dumps, local_time_str

EMPTY = b"(empty - Claw will write memories here as it learns)\n"


def writer(cat, items):
    """A writer of MEMORY.md: `cat` the Catalog, `items()` yields the active items best
    first (each time it is called), each with its `summary_labels`."""

    def write(out):
        out.write(b"# Long-term Memory\n\n")
        if len(cat):
            out.write(b"## Summary Labels\n\n")
            for sid, label, refs in cat.entries():
                out.write(("- %s (refs=%d)\n" % (text.one_line(label), refs)).encode())
            out.write(b"\n")
        first = True
        for it in items():
            if first:
                out.write(b"## Active Memories\n\n")
                first = False
            out.write(("- `%s` %s\n  time=%s access=%d labels=%s\n" % (
                text.one_line(it["id"]).replace("`", "'"), text.one_line(it["content"]),
                local_time_str(it["updated_at"]),
                it["access_count"], dumps(it["summary_labels"]))).encode())
        if first:
            out.write(EMPTY)

    return write


class _Compare:
    # A file-like sink that compares what is written with a file's bytes.
    def __init__(self, f):
        self.f = f
        self.same = True

    def write(self, data):
        if self.same and self.f.read(len(data)) != bytes(data):
            self.same = False


def matches(path, cat, items):
    """Whether the MEMORY.md at `path` is what writer(cat, items) renders."""
    with open(path, "rb") as f:
        cmp = _Compare(f)
        writer(cat, items)(cmp)
        return cmp.same and not f.read(1)
