# claw_memory.store.markdown: rendering MEMORY.md (ESP-Claw's layout) from the items.
# MIT license
#
# Content is rendered on one line: a line break in a memory would otherwise let text the
# LLM or the user controls start a heading or a fake `- \`mem-...\`` entry of its own
# (ESP-Claw writes it raw). The records keep the original content.

from .._compat import const, dumps, local_time_str

EMPTY = b"(empty - Claw will write memories here as it learns)\n"
_BREAK = const(" \u23ce ")  # what a line break becomes: " ⏎ "


def one_line(s):
    """`s` on one line: line breaks shown as ⏎, other control characters as spaces."""
    if not any(c < " " or c in "\x7f\x85\u2028\u2029" for c in s):
        return s
    s = s.replace("\r\n", "\n")
    out = []
    for c in s:
        if c in "\n\r\x85\u2028\u2029":
            out.append(_BREAK)
        elif c < " " or c == "\x7f":
            out.append(" ")
        else:
            out.append(c)
    return "".join(out)


def writer(cat, items):
    """A writer of MEMORY.md: `cat` the Catalog, `items()` yields the active items best
    first (each time it is called), each with its `summary_labels`."""

    def write(out):
        out.write(b"# Long-term Memory\n\n")
        if len(cat):
            out.write(b"## Summary Labels\n\n")
            for sid, label, refs in cat.entries():
                out.write(("- %s (refs=%d)\n" % (label, refs)).encode())
            out.write(b"\n")
        first = True
        for it in items():
            if first:
                out.write(b"## Active Memories\n\n")
                first = False
            out.write(("- `%s` %s\n  time=%s access=%d labels=%s\n" % (
                it["id"], one_line(it["content"]), local_time_str(it["updated_at"]),
                it["access_count"], dumps(it["summary_labels"]))).encode())
        if first:
            out.write(EMPTY)

    return write
