# claw_memory.session.deletion: a session's files (its archive segments too) removed all or
# nothing across a power cut.
# MIT license
#
# A journal in the sessions folder (`.deleting`, holding the log's name) is written before the
# first file goes and removed after the last; the next Sessions that finds it finishes the
# deletion (`settle`). Imported only when a session is deleted or a journal is found.

from .. import fsutil
from .._compat import const
from . import format as fmt_

_DELETIONS = const(32)  # deletions remembered for requests that were running (Sessions.deleted)


def delete(sessions, session_id):
    """Sessions.delete of a session on flash."""
    log = sessions.path(session_id)
    sessions._forget(log)
    sessions._settle()
    try:
        found = remove(sessions.dir, log)
    except BaseException:
        sessions._settled = False  # (its journal: the next use finishes the deletion)
        raise
    sessions._serial += 1
    dels = sessions._deletions
    for d in dels:
        if d[0] == log:
            dels.remove(d)
            break
    dels.append([log, sessions._serial])
    if len(dels) > _DELETIONS:
        dels.pop(0)
    return found


def remove(directory, log):
    """Remove the session of `log` under its journal; True if any of its files existed."""
    from .archive import segments

    journal = directory + "/" + fmt_.DELETING
    found = (fsutil.exists(log) or fsutil.exists(log + fmt_.PEND)
             or bool(segments(directory, log.rsplit("/", 1)[-1])))
    if found:
        fsutil.makedirs(directory)
        fsutil.write_file(journal, log.rsplit("/", 1)[-1].encode())
    found = _remove_files(log) or found
    if found:
        fsutil.remove(journal)
    return found


def settle(directory):
    """Finish a deletion a power cut interrupted; the log's name when one was finished."""
    journal = directory + "/" + fmt_.DELETING
    with open(journal, "rb") as f:
        name = f.read(600)
    try:
        name = name.decode()
    except UnicodeError:
        name = ""
    done = fmt_.is_log_name(name)
    if done:
        _remove_files(directory + "/" + name)  # the journal was whole: the deletion goes on
    fsutil.remove(journal)
    return name if done else None


def _remove_files(log):
    """Remove a session's files; True if any existed. Temp files and the journal first (a
    journal would resurrect them), its archive segments, the log and its indexes, the block
    marker last."""
    from .archive import drop_session

    found = False
    for p in [log + s for s in fmt_.LEFTOVERS] + list(fmt_.tix(log, True)):
        found = fsutil.remove(p) or found
    d, name = log.rsplit("/", 1)
    found = drop_session(d, name) or found
    for p in (log + fmt_.PEND, log, log + fmt_.IDX, log + fmt_.BLOCKED):
        found = fsutil.remove(p) or found
    return found
