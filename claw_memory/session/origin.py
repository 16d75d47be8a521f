# claw_memory.session.origin: the user message a memory came from, found again by its key.
# MIT license
#
# A memory's provenance names the user record of its request by a key that does not depend
# on where the record is: "<length>-<fnv1a32 hex>" of the record's JSON as the session layer
# writes it. Offsets do not survive a compaction (it rewrites the log, and moves old turns
# out), the bytes of the record do: the log, the pending file (two digits before them), and
# the archive of compacted turns keep a record byte for byte.

from .. import fsutil, jsonraw, text
from .._compat import const
from ..core import USER
from ..messages import classify, visible_text
from . import format as fmt_

_PIECE = const(1024)


def key(message, max_chars=4096):
    """The key of the user record `message` (text) is persisted as, or None for a text that
    gives no record (empty after cleaning)."""
    from .write import encode

    try:
        line = encode([(USER, None, message)], max_chars, 1 << 30)[0][0]
    except ValueError:
        return None
    return "%d-%08x" % (len(line), text.fnv1a32(line))


def _parse(k):
    ln, _, h = k.partition("-")
    return int(ln), int(h, 16)


def files(log):
    """The files of a session that keep its records byte for byte, oldest first: its
    archive segments, the log, the pending file."""
    from .archive import segments
    from .heads import owner

    d, name = log.rsplit("/", 1)
    return tuple(s[1] for s in segments(d, name, owner(log))) + (log, log + fmt_.PEND)


def find(sessions_dir, session_id, k):
    """(the text of the user message with key `k` in the session's files, None), or (None,
    why it is not there)."""
    try:
        log = sessions_dir + "/" + fmt_.file_name(session_id)
        ln, h = _parse(k)
    except ValueError:
        return None, "no such session"
    seen = False
    for path in files(log):
        if fsutil.size(path) < 0:
            continue
        seen = True
        body = scan(path, ln, h)
        if body is not None:
            obj = jsonraw.json_value(body)
            if classify(obj)[0] == USER:
                return visible_text(obj.get("content")), None
    if not seen:
        return None, "the session was deleted"
    return None, "not on flash (compacted away, or never saved)"


def scan(path, ln, h):
    """The bytes of the first line of `path` that is a record of `ln` bytes with fnv1a32 `h`
    (as the log holds it, or after a pending line's two digits), or None. The file is read in
    1 KiB pieces; only lines of that length are read and hashed."""
    buf = bytearray(_PIECE)
    with open(path, "rb") as f:
        pos = 0  # file offset of buf[0]
        start = 0  # offset of the line being read
        while True:
            f.seek(pos)
            n = f.readinto(buf)
            if not n:
                return None
            i = 0
            while True:
                j = buf.find(b"\n", i, n)
                if j < 0:
                    break
                end = pos + j
                if end - start in (ln, ln + 2):
                    f.seek(end - ln)
                    body = f.read(ln)
                    if text.fnv1a32(body) == h:
                        return body
                start = end + 1
                i = j + 1
            pos += n
