"""What `verify` reports and `repair` fixes: one list of problems for both.

`examine(copy)` works on a scratch copy of a data root: it reads the store's own report
(`mem.store.verify()`, which writes nothing), and repairs every session of the copy with the
library, keeping the library's report and noting every session file the repair changed that
the report does not explain (a pending turn reconciled with the log, leftovers of an
interrupted rewrite). A problem is something a repair changes. `verify` prints them;
`repair` repairs exactly the problems, then examines again, so that what it says it repaired
is what verify listed, and anything still there is reported as not repaired.
"""

import hashlib
import os

import claw_memory
from claw_memory.paths import Layout
from claw_memory.session import is_log_name
from claw_memory.paths import INDEXES
from claw_memory.session.format import IDX, LEFTOVERS, PEND, TIX, TMP, segment_of

from .ui import plural

# A session's files: the log, its index, the pending turn, and leftovers of rewrites.
_SUFFIXES = ("", IDX, PEND) + LEFTOVERS
_RECORDS = "memory_records.jsonl"


def is_data_root(path):
    return os.path.isdir(os.path.join(path, "sessions")) or os.path.isdir(os.path.join(path, "memory"))


def mode_of(root):
    """The mode the root's files show (paths.Layout.mode), as claw_memory.open() would use it."""
    return Layout(root).mode()


def open_root(root, **kw):
    """The memory of an existing data root (never creates one)."""
    return claw_memory.open(root, mode_of(root), extract=False, create=False, **kw)


def session_files(root):
    """File names of the session logs under `root/sessions` (also those with only a pending
    first turn), without opening them."""
    d = os.path.join(root, "sessions")
    names = set()
    if os.path.isdir(d):
        for name in os.listdir(d):
            if name.endswith(PEND):
                name = name[: -len(PEND)]
            if is_log_name(name) and not os.path.isdir(os.path.join(d, name)):
                names.add(name)
    return sorted(names)


def _snapshot(d, name):
    out = {}
    for suffix in _SUFFIXES:
        p = os.path.join(d, name + suffix)
        if os.path.isfile(p):
            with open(p, "rb") as f:
                out[suffix] = hashlib.sha256(f.read()).hexdigest()
    return out


def session_problems(name, r, before, after):
    """The problems of one session from its repair report and its files before and after
    the repair (a problem is something the repair changed)."""
    name = "sessions/" + name
    changed = {s for s in _SUFFIXES if before.get(s) != after.get(s)}
    out = []
    if r.get("torn_tail_bytes"):
        out.append("%s: a torn last record (%d bytes, cut by a power loss), removed" % (
            name, r["torn_tail_bytes"]))
    if r.get("dropped"):
        out.append("%s: %s that %s no chat record (damaged or garbage), removed" % (
            name, plural(r["dropped"], "line"), "is" if r["dropped"] == 1 else "are"))
    if r.get("pending_dropped"):
        out.append("%s%s: a torn or damaged line of the unfinished turn, removed" % (name, PEND))
    if r.get("pending_logged"):
        out.append("%s%s: %s already in the log (a cut after the turn was logged), removed" % (
            name, PEND, plural(r["pending_logged"], "record")))
    if r.get("pending_superseded"):
        out.append("%s%s: an unfinished turn the log moved past (%s written without it, by "
                   "ESP-Claw's firmware), removed" % (name, PEND, plural(r["pending_superseded"], "record")))
    if r.get("pending_unreadable"):
        out.append("%s%s: unreadable, removed" % (name, PEND))
    if r.get("index_entries_dropped"):
        out.append("%s: %s of the index dropped (bad or past the log)" % (
            name, plural(r["index_entries_dropped"], "entry", "entries")))
    if r.get("rebuilt_index"):
        out.append("%s: index unreadable or missing, rebuilt from the log" % name)
    if r.get("reindexed"):
        # Normal while an agent runs (it indexes every few turns and on close), but ESP-Claw
        # rejects a session whose index lags its log: worth a repair before a hand-over.
        out.append("%s: %s not in the index yet (indexed every 4 turns and on close), re-indexed" % (
            name, plural(r["reindexed"], "record")))
    explained = set()
    if any(r.get(k) for k in ("torn_tail_bytes", "dropped", "index_entries_dropped", "rebuilt_index",
                              "reindexed")):
        explained |= {"", IDX}
    if any(r.get(k) for k in ("pending_dropped", "pending_logged", "pending_superseded",
                              "pending_unreadable")):
        explained.add(PEND)
    for suffix in _SUFFIXES:
        if suffix not in changed or suffix in explained:
            continue
        what = "removed" if suffix not in after else "created" if suffix not in before else "rewritten"
        if suffix == PEND and what == "removed":
            continue  # stale: every completed turn leaves it so (session/pending.py), no damage
        why = {PEND: " (pending turn reconciled with the log)", "": "",
               IDX: " (a torn or extra index entry)"}.get(suffix, " (leftover of an interrupted write)")
        out.append("%s%s: %s by repair%s" % (name, suffix, what, why))
    for left in r.get("leftovers", ()):  # (the text index's rewrite, in its own folder)
        if left.startswith(INDEXES + "/"):
            out.append("%s: settled by repair (leftover of an interrupted write)" % left)
    return out


def store_problems(st):
    out = []
    if st is None:
        return out
    if st.get("bad_lines"):
        out.append("memory/%s: %s unreadable, dropped" % (_RECORDS, plural(st["bad_lines"], "line")))
    index = st.get("index", "ok")
    # A root whose store has no records yet needs no index: nothing to rebuild from.
    if index != "ok" and not (index == "missing" and not st.get("records_bytes")):
        out.append("memory/memory_index.json: %s, rebuilt from the records" % index)
    for p in st.get("leftovers", ()):
        out.append("memory/%s: leftover of an interrupted write" % os.path.basename(p))
    return out


def archive_problems(r):
    """The problems of the archive from its repair report (Sessions.repair() with no session)."""
    return (["sessions/%s: listed in archive.list but missing (its archived turns are gone), "
             "dropped from the list" % n for n in r["missing"]]
            + ["sessions/%s: an archive segment archive.list does not name (a damaged list), "
               "listed again" % n for n in r["relisted"]]
            + ["sessions/%s: an archive file of no listed segment or session, removed" % n
               for n in r["removed"] if not n.startswith(INDEXES + "/")]
            + ["%s: a text index of no log or segment, removed" % n
               for n in r["removed"] if n.startswith(INDEXES + "/")])


def _file_of(problem):
    path = problem.split(": ", 1)[0]
    for top in ("sessions/", INDEXES + "/"):
        if path.startswith(top):
            return path[len(top):]
    return None


def examine(copy):
    """({"sessions": {file: report}, "archive": report, "store": report or None},
    [problem, ...]) of the data root at `copy`, which this changes (sessions and the archive
    are repaired on it)."""
    mem = open_root(copy)
    report = {"sessions": {}, "store": mem.store.verify() if mem.store is not None else None}
    problems = store_problems(report["store"])
    d = os.path.join(copy, "sessions")
    for name in session_files(copy):
        before = _snapshot(d, name)
        r = mem.sessions.repair(file=name)
        report["sessions"][name] = r
        problems += session_problems(name, r, before, _snapshot(d, name))
    report["archive"] = mem.sessions.repair()
    problems += archive_problems(report["archive"])
    mem.close()
    return report, problems


def needs(report, problems):
    """(session files, store?, archive?) that the problems are about: what repair must touch."""
    named = {_file_of(p) for p in problems}
    files = sorted(f for f in report["sessions"] if any(f + s in named for s in _SUFFIXES + (TIX + TMP,)))
    store = any(p.startswith("memory/") for p in problems)
    archive = any(n and segment_of(n) for n in named) or any(p.startswith(INDEXES + "/") for p in problems)
    return files, store, archive


def repair_folder(root, files, store, archive):
    """Repair the named sessions (the store, the archive) of the data root folder in place."""
    mem = open_root(root)
    for name in files:
        mem.sessions.repair(file=name)
    if archive:
        mem.sessions.repair()
    if store and mem.store is not None:
        mem.store.repair()
    mem.close()


BOARD_REPAIR = """
import claw_memory
m = claw_memory.open(%r, %r, extract=False, create=False)
for f in %r:
    m.sessions.repair(file=f)
if %r:
    m.sessions.repair()
if %r and m.store is not None:
    m.store.repair()
m.close()
print("CLAW-REPAIRED")
"""
