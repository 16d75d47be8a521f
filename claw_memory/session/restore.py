# claw_memory.session.restore: a session written whole from records, with its archive
# segments (Sessions.restore: what `claw-memory import` builds a data root with).
# MIT license
#
# Only an import uses it (on the host, or on a board through the CLI): apart from the
# persist path, so that a board running the agent never loads its code.

from .. import fsutil
from . import archive
from . import format as fmt_
from .write import raw_record


def restore(log, records, limit, blocked, segments=()):
    """Write a session's log and index from (type, backend, message JSON) records, as they
    are, and its archive segments from `segments`, [(unix time, records)] oldest first
    (Sessions.restore: for import; the session must not exist). Every record is checked
    before anything is written."""
    if fsutil.exists(log) or fsutil.exists(log + fmt_.PEND):
        raise ValueError("session %s already exists" % log.rsplit("/", 1)[-1])
    ents = bytearray(fmt_.HEADER)
    data = _lines(records, limit, ents)
    segs = []
    for n, (t, recs) in enumerate(segments):
        if isinstance(t, bool) or not isinstance(t, int) or t < 0:
            raise ValueError("archive segment %d: bad time" % n)
        segs.append((t, _lines(recs, limit)))
    fsutil.makedirs(log.rsplit("/", 1)[0])
    fsutil.write_file(log, data)
    fsutil.write_file(log + fmt_.IDX, ents)
    if blocked:
        fsutil.write_file(log + fmt_.BLOCKED, b"")
    if segs:  # under new numbers, named by the log's head print (written first)
        d, name = log.rsplit("/", 1)
        entries = archive.read(d)
        seq = 1 + max([e[0] for e in entries] or [0])
        p = archive.head_print(log)
        for t, data in segs:
            fsutil.write_file(archive.seg_path(d, name, seq), data)
            entries.append([seq, len(data), t, name, True, () if p is None else (p,)])
            seq += 1
        archive.write_catalog(d, entries)


def _lines(records, limit, ents=None):
    # The record lines of (type, backend, message JSON) records; their index entries added
    # to `ents`
    data = bytearray()
    for n, (kind, fmt, message) in enumerate(records):
        if (not isinstance(kind, int) or not isinstance(fmt, int) or kind not in (1, 2, 3, 4)
                or fmt not in (0, 1, 2, 3)):
            raise ValueError("record %d: bad type or backend" % n)
        raw = raw_record(n, kind, message, limit)
        if ents is not None:
            ents += fmt_.entry(len(data), len(raw) + 1, kind, fmt)
        data += raw + b"\n"
    return data
