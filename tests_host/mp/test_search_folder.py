# The text indexes' own folder (format.tix, adopt.adopt): where they are, when the folder
# is made, an older version's indexes moved into it, indexes of nothing removed.
# MIT license

import os

from mptest import eq, heap, ok
from search_cases import D, SID, archive_run, fresh, turn

from claw_memory import fsutil
from claw_memory.session import Sessions, file_name
from claw_memory.session import indexer
from claw_memory.session.format import index_dir, tix as tix_of

IX = "/flash/search"
U2 = "chat:web:u2:default_01"


def _files(d):
    return sorted(os.listdir(d)) if fsutil.is_dir(d) else []


def _bytes(p):
    with open(p, "rb") as f:
        return f.read()


@heap("16M")  # (2 MiB simulated flashes)
def test_the_indexes_are_in_a_folder_beside_the_sessions_folder():
    eq(index_dir("/flash/sessions"), IX, "a sibling")
    eq(index_dir("claw_data/sessions"), "claw_data/search", "relative")
    eq(index_dir("sessions"), "search", "in the working folder")
    eq(index_dir("/flash/sessions/"), IX, "a trailing slash")
    eq(tix_of(D + "/s_a_00000000.log.arc3"), IX + "/s_a_00000000.log.arc3.tix", "a segment's")
    for kind in ("lfs2", "fat"):
        dev, s = archive_run(kind, n=30)
        s.close()
        ok(not [n for n in os.listdir(D) if ".tix" in n], "%s: none in the sessions folder" % kind)
        logs = [n for n in os.listdir(D) if n.startswith("s_") and not n.endswith(".idx")]
        eq(_files(IX), sorted(n + ".tix" for n in logs), "%s: one for the log and each segment" % kind)
        ok(Sessions(D).search("lookup result 3", 3), "%s: and searched" % kind)
        dev.unmount()


@heap("16M")  # (2 MiB simulated flashes)
def test_reading_makes_no_folder_and_the_first_index_does():
    dev, s = fresh()
    s.persist(SID, [(1, None, "a first turn about the boiler")])
    s.persist(SID, [(2, None, "noted")], turn_completed=True)
    for look in (lambda: list(Sessions(D).list()), lambda: Sessions(D).blocked(SID),
                 lambda: Sessions(D).stat(SID), lambda: Sessions(D).page(SID, 0, 5)):
        look()
        eq(_files("/flash"), ["sessions"], "a look makes no folder")
    s.close()  # (the session's index written)
    eq(_files(IX), [file_name(SID) + ".tix"], "the first index made it")
    dev.unmount()


def _old_layout():
    # What an older version left: the indexes beside their files, an unfinished rewrite's
    # `.tix.tmp` too, no folder of their own
    for name in os.listdir(IX):
        os.rename(IX + "/" + name, D + "/" + name)
    os.rmdir(IX)
    with open(D + "/" + file_name(U2) + ".tix.tmp", "wb") as f:
        f.write(b"CTIX")


def _two_sessions():
    # (SID and U2, one turn each, closed: their indexes written)
    dev, s = fresh(blocks=512)
    turn(s, SID, 1)
    turn(s, U2, 2)
    s.close()
    return dev, s


class _Made:
    """Counts the indexes made from their files (indexer.index)."""

    def __enter__(self):
        self.starts = []
        self.real = indexer.index

        def counting(out, f, start, end, limit):
            self.starts.append(start)
            return self.real(out, f, start, end, limit)

        indexer.index = counting
        return self

    def __exit__(self, *exc):
        indexer.index = self.real
        return False


class _Failing:
    """fsutil.<name> failing with EIO for the paths `fails` picks (with `once`, the first
    such call only); `paths`: those it failed."""

    def __init__(self, name, fails, once=False):
        self.name = name
        self.fails = fails
        self.once = once
        self.paths = []

    def __enter__(self):
        self.real = real = getattr(fsutil, self.name)

        def failing(path, *args):
            if self.fails(path) and not (self.once and self.paths):
                self.paths.append(path)
                raise OSError(5, "EIO")
            return real(path, *args)

        setattr(fsutil, self.name, failing)
        return self

    def __exit__(self, *exc):
        setattr(fsutil, self.name, self.real)
        return False


@heap("16M")  # (2 MiB simulated flashes)
def test_an_older_versions_indexes_are_moved_into_the_folder_not_made_again():
    for kind in ("lfs2", "fat"):
        dev, s = archive_run(kind, n=30)
        turn(s, U2, 3)
        s.close()
        queries = ("lookup result 3", "turn 21", "boiler")
        want = [Sessions(D).search(q, 5) for q in queries]
        before = {n: _bytes(IX + "/" + n) for n in os.listdir(IX)}
        _old_layout()
        with _Made() as made:
            got = [Sessions(D).search(q, 5) for q in queries]
        eq(got, want, "%s: the same answers" % kind)
        eq(made.starts, [], "%s: none made again" % kind)
        eq([n for n in os.listdir(D) if ".tix" in n], [], "%s: none left beside the logs" % kind)
        eq({n: _bytes(IX + "/" + n) for n in _files(IX)}, before, "%s: each moved as it was" % kind)
        eq(_files("/flash"), ["search", "sessions"], "%s: no other folder" % kind)
        dev.unmount()


@heap("16M")  # (2 MiB simulated flashes)
def test_an_older_versions_index_that_cannot_be_moved_is_made_again():
    dev, s = archive_run(n=30)
    s.close()
    want = Sessions(D).search("lookup result 3", 5)
    _old_layout()
    bad = tix_of(s.path(SID))
    # (the first write of it: the copy, the old index unreadable, or no room for it)
    with _Failing("write_tmp", lambda path: path == bad, once=True), _Made() as made:
        first = Sessions(D).search("lookup result 3", 5)
    eq(first, want, "the same answer, the others moved")
    eq(made.starts, [0], "the log's made again from its text (without the failing copy)")
    eq([n for n in os.listdir(D) if ".tix" in n and file_name(SID) in n], [], "the unreadable one dropped too")
    eq(Sessions(D).search("lookup result 3", 5), want, "and the next search as well")
    dev.unmount()


@heap("16M")  # (2 MiB simulated flashes)
def test_an_older_versions_empty_index_is_taken_in_and_made_again():
    # (an empty file: what a cut as an older version created its index could leave)
    dev, s = _two_sessions()
    want = Sessions(D).search("turn", 5)
    _old_layout()
    with open(D + "/" + file_name(SID) + ".tix", "wb"):
        pass
    with _Made() as made:
        got = Sessions(D).search("turn", 5)
    eq(got, want, "the same answer")
    eq(made.starts, [0], "the empty one made again from its log, the other moved")
    eq([n for n in os.listdir(D) if ".tix" in n], [], "nothing left beside the logs")
    dev.unmount()


@heap("16M")  # (2 MiB simulated flashes)
def test_a_failing_look_beside_the_log_makes_the_index_again():
    # (the look for an earlier build's index beside the log fails with EIO: that one is
    # left out, as one that cannot be copied is, and the index is made from the log)
    dev, s = _two_sessions()
    want = Sessions(D).search("turn", 5)
    for name in os.listdir(IX):
        os.remove(IX + "/" + name)
    beside = _Failing("size", lambda path: path.startswith(D + "/") and path.endswith(".log.tix"))
    with beside, _Made() as made:
        got = Sessions(D).search("turn", 5)
    ok(beside.paths, "(looked beside the logs)")
    eq(got, want, "the same answer")
    eq(made.starts, [0, 0], "both made again from their logs")
    dev.unmount()


@heap("16M")  # (2 MiB simulated flashes)
def test_a_compaction_moves_an_older_versions_index_and_keeps_it_up_to_date():
    # (without the archive: the compaction itself writes no index of a segment)
    dev, s = fresh(blocks=512, size_limit=10 ** 6)
    for i in range(24):
        turn(s, SID, i, pad="p" * 40)
    s.close()
    _old_layout()
    s = Sessions(D, size_limit=3000, archive_limit=0)
    eq(s.compact(SID), None, "compacted")
    eq([n for n in os.listdir(D) if ".tix" in n and file_name(SID) in n], [], "moved")
    with _Made() as made:
        got = [h["text"] for h in Sessions(D, archive_limit=0).search("lookup result 23", 3)]
    eq(made.starts, [], "searched without making it again")
    ok(got and got[0] == "lookup result 23", "found: %r" % got)
    dev.unmount()


@heap("16M")  # (2 MiB simulated flashes)
def test_an_older_versions_index_of_a_log_rewritten_since_is_made_again():
    # (ESP-Claw's compaction, or an older version's, rewrote the log after the index was
    # written: the moved index no longer matches its log, so it is made again, never read)
    dev, s = fresh(blocks=512)
    for i in range(12):
        turn(s, SID, i)
    s.close()
    _old_layout()
    log = s.path(SID)
    raw = _bytes(log)
    k = raw.rindex(b"noted")  # (the last record's text, same length: only the bytes differ)
    with open(log, "wb") as f:
        f.write(raw[:k] + b"zebra" + raw[k + 5:])
    with _Made() as made:
        got = Sessions(D).search("zebra", 3)
    eq(made.starts, [0], "made again from the log")
    ok(got and "zebra" in got[0]["text"], "the rewritten record found: %r" % got)
    dev.unmount()


@heap("16M")  # (2 MiB simulated flashes)
def test_deleting_a_session_removes_an_older_versions_index():
    dev, s = _two_sessions()
    _old_layout()
    old = D + "/" + file_name(U2) + ".tix"
    ok(fsutil.exists(old) and fsutil.exists(old + ".tmp"), "(beside its log, with a rewrite's leftover)")
    eq(Sessions(D).delete(U2), True, "deleted")
    eq([n for n in os.listdir(D) if "_u2_" in n], [], "nothing of it left beside the logs")
    ok(fsutil.exists(D + "/" + file_name(SID) + ".tix"), "the other session's stays until it is used")
    dev.unmount()


@heap("16M")  # (2 MiB simulated flashes)
def test_a_repair_removes_indexes_of_files_that_are_gone():
    # ESP-Claw deletes a session's log, .idx and .blocked: our index (the words of every
    # message of it) is left; an explicit repair removes it, and a stray one of a segment
    dev, s = _two_sessions()
    gone = D + "/" + file_name(U2)
    for p in (gone, gone + ".idx"):
        os.remove(p)
    for p in (IX + "/" + file_name(SID) + ".arc9.tix", IX + "/" + file_name(SID) + ".arc8.tix.tmp",
              D + "/" + file_name(U2) + ".arc2.tix",  # (where older versions kept them: of no
              D + "/" + file_name(SID) + ".tix",  # segment, a copy of one moved already, an
              D + "/" + file_name(SID) + ".tix.tmp"):  # unfinished rewrite)
        with open(p, "wb") as f:
            f.write(b"CTIX")
    rep = Sessions(D).repair()
    eq(sorted(rep["removed"]), sorted(["search/" + file_name(U2) + ".tix",
                                       "search/" + file_name(SID) + ".arc9.tix",
                                       "search/" + file_name(SID) + ".arc8.tix.tmp",
                                       file_name(U2) + ".arc2.tix", file_name(SID) + ".tix",
                                       file_name(SID) + ".tix.tmp"]), "named")
    eq([n for n in os.listdir(D) if ".tix" in n], [], "none left beside the logs")
    eq(_files(IX), [file_name(SID) + ".tix"], "the live log's index stays")
    eq(Sessions(D).repair(), {"missing": [], "relisted": [], "removed": []}, "nothing left")
    dev.unmount()
