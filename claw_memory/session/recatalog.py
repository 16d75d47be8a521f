# claw_memory.session.recatalog: the archive's catalog made to agree with its files, for an
# explicit repair (`Sessions.repair()` with no session; `claw-memory verify` lists it first).
# MIT license
#
# Apart from archive.py: no persist, search or compaction path loads it (on a board without
# the firmware, a module's bytecode lives in the heap).

from .. import fsutil
from .._compat import ilistdir
from ..paths import INDEXES
from . import archive
from . import format as fmt_


def fix(directory):
    """What only an explicit repair fixes in the archive: live segments whose file is gone
    (dropped from the catalog), and segment files no catalog line names (a damaged catalog
    skips its lines): listed again, live, when their log is there (their turns are the
    session's, searchable again; time unknown: 0; the log's head print as it is now), else
    removed with their text index; a text index whose log or segment is gone, removed.
    Returns {"missing": [name], "relisted": [name], "removed": [name]} (file names; an
    index's with its folder, `search/<name>`)."""
    out = {"missing": [], "relisted": [], "removed": []}
    if not fsutil.exists(directory):
        return out
    entries = archive.read(directory)
    known = {(e[3], e[0]) for e in entries}
    for e in entries:
        if e[4] and not fsutil.exists(archive.seg_path(directory, e[3], e[0])):
            e[4] = False  # (its file is gone: encode() leaves it out)
            out["missing"].append(archive.seg_path("", e[3], e[0])[1:])
            fsutil.remove(fmt_.tix(archive.seg_path(directory, e[3], e[0])))
    strays = []  # (few: collected first, as a folder is not changed while it is listed)
    for name, is_dir, _ in ilistdir(directory):
        got = fmt_.segment_of(name)
        if not is_dir and got is not None and got not in known:
            strays.append((name, got[0], got[1]))
    for name, log, seq in strays:
        seg = archive.seg_path(directory, log, seq)
        if fsutil.exists(directory + "/" + log):
            hp = archive.head_print(directory + "/" + log)  # (the log's now: ours from here on)
            entries.append([seq, fsutil.size(seg), 0, log, True, (hp,) if hp else ()])
            out["relisted"].append(name)
        else:
            fsutil.remove(seg)  # (its text index next, as one whose file is gone)
            out["removed"].append(name)
    out["removed"] += _orphans(directory)
    if out["missing"] or out["relisted"]:
        entries.sort(key=lambda e: e[0])  # (oldest first: the bound drops from the front)
        archive.write_catalog(directory, entries)
    return out


def _orphans(directory):
    """Remove the text indexes (and rewrites a cut left) whose log or segment is gone
    (ESP-Claw's deletion of a session leaves its index), in their folder and beside the
    logs, where versions before it kept them; beside the logs also such a version's
    rewrites, and an index the folder holds already. Their names, with their folder's."""
    gone = []
    for d, shown in ((fmt_.index_dir(directory), INDEXES + "/"), (directory, "")):
        if not fsutil.exists(d):
            continue
        names = []  # (collected first: a folder is not changed while it is listed)
        for name, is_dir, _ in ilistdir(d):
            tmp = name.endswith(fmt_.TIX + fsutil.TMP)
            own = name[: -len(fsutil.TMP)] if tmp else name
            if is_dir or not own.endswith(fmt_.TIX):
                continue
            f = directory + "/" + own[: -len(fmt_.TIX)]
            if not fsutil.exists(f):
                names.append(name)
            elif d == directory and (tmp or fsutil.exists(fmt_.tix(f))):
                names.append(name)  # (an older version's rewrite, or an index moved already)
        for name in names:
            fsutil.remove(d + "/" + name)
            gone.append(shown + name)
    return gone
