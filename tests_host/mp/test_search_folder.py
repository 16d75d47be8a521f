# The text indexes' own folder (session/relocate.py, format.tix): where they are, when the
# folder is made, an older version's indexes moved into it, indexes of nothing removed.
# MIT license

import os

from mptest import eq, heap, ok
from search_cases import D, SID, archive_run, fresh, turn

from claw_memory import fsutil
from claw_memory.session import Sessions, file_name
from claw_memory.session import indexer
from claw_memory.session.format import index_dir, tix as tix_of

IX = "/flash/search_index"
U2 = "chat:web:u2:default_01"


def _files(d):
    return sorted(os.listdir(d)) if fsutil.is_dir(d) else []


def _bytes(p):
    with open(p, "rb") as f:
        return f.read()


@heap("16M")  # (2 MiB simulated flashes)
def test_the_indexes_are_in_a_folder_beside_the_sessions_folder():
    eq(index_dir("/flash/sessions"), IX, "a sibling")
    eq(index_dir("claw_data/sessions"), "claw_data/search_index", "relative")
    eq(index_dir("sessions"), "search_index", "in the working folder")
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
        made = []
        real = indexer.index

        def counting(out, f, start, end, limit):
            made.append(start)
            return real(out, f, start, end, limit)

        indexer.index = counting
        try:
            got = [Sessions(D).search(q, 5) for q in queries]
        finally:
            indexer.index = real
        eq(got, want, "%s: the same answers" % kind)
        eq([n for n in os.listdir(D) if ".tix" in n], [], "%s: none left beside the logs" % kind)
        eq(_files(IX), sorted(before), "%s: every index in the folder" % kind)
        ok(len(made) <= 1, "%s: moved, not made again (the first only: %r)" % (kind, made))
        ok(sum(_bytes(IX + "/" + n) != b for n, b in before.items()) <= len(made),
           "%s: the others as they were" % kind)
        eq(_files("/flash"), ["search_index", "sessions"], "%s: no folder left half made" % kind)
        dev.unmount()


@heap("16M")  # (2 MiB simulated flashes)
def test_a_move_cut_short_is_finished_by_the_next_index_written():
    dev, s = archive_run(n=30)
    s.close()
    want = Sessions(D).search("lookup result 3", 5)
    names = _files(IX)
    _old_layout()
    real = fsutil.wrote
    calls = [0]

    def failing(path):  # (told before each move)
        if path.startswith(D) and path.endswith(".tix"):
            calls[0] += 1
            if calls[0] >= 2:
                raise OSError(5, "EIO")  # (as a cut: the first index moved, no other)
        return real(path)

    fsutil.wrote = failing
    try:
        Sessions(D).search("lookup result 3", 5)
    except OSError:
        pass
    finally:
        fsutil.wrote = real
    eq(_files("/flash"), ["search_index.tmp", "sessions"], "(cut inside the move)")
    eq(Sessions(D).search("lookup result 3", 5), want, "the next search answers the same")
    eq(_files("/flash"), ["search_index", "sessions"], "and finishes the move")
    eq(_files(IX), names, "every index in the folder")
    dev.unmount()


@heap("16M")  # (2 MiB simulated flashes)
def test_a_repair_removes_indexes_of_files_that_are_gone():
    # ESP-Claw deletes a session's log, .idx and .blocked: our index (the words of every
    # message of it) is left; an explicit repair removes it, and a stray one of a segment
    dev, s = fresh(blocks=512)
    turn(s, SID, 1)
    turn(s, U2, 2)
    s.close()
    gone = D + "/" + file_name(U2)
    for p in (gone, gone + ".idx"):
        os.remove(p)
    with open(IX + "/" + file_name(SID) + ".arc9.tix", "wb") as f:
        f.write(b"CTIX")
    rep = Sessions(D).repair()
    eq(sorted(rep["removed"]), sorted(["search_index/" + file_name(U2) + ".tix",
                                       "search_index/" + file_name(SID) + ".arc9.tix"]), "named")
    eq(_files(IX), [file_name(SID) + ".tix"], "the live log's index stays")
    eq(Sessions(D).repair(), {"missing": [], "relisted": [], "removed": []}, "nothing left")
    dev.unmount()
