# claw_memory.store.undo: take back the most recent change made in a session, and follow an
# item's versions back (its provenance chain).
# MIT license
#
# Every line a change appends carries the change's mark ("chg": its number, its number of
# lines, a hash of the session that made it, and for an undo the change it reverts;
# docs/FORMAT.md). The records are scanned for the session's newest change that no undo has
# reverted; its lines are reverted as one batch (one append: a power cut leaves all of it
# or none): a version it wrote is tombstoned, a tombstone it wrote (a forget, an eviction,
# the old version of an update) is made active again from its own fields, with the mark of
# the version before ("was"), so that the next undo finds the change that made that version.
# A change can be undone only while a line of each item it wrote is in the records: a
# compaction drops tombstones, and with them the text of what was forgotten
# (docs/PRIVACY.md: within 5 changes, or at close()).
#
# Three scans of the records file at most (an undo is rare; the file is at most ~130 KiB),
# each parsing only the lines that carry a mark (and, for the third, name the ids wanted).

from .. import item as itm
from . import records

NOTHING = "nothing"  # no change of the session left to undo
PURGED = "purged"  # a line of the change was compacted away (with its text)
CHANGED = "changed"  # an item the change wrote was changed since by another change
_MARK = b'"chg":{'


def _marked(path, also=None):
    """(offset, item) of each line with a change mark (and, with `also`, holding one of
    those byte strings)."""
    for off, raw in records.lines(path):
        if raw is None:
            continue
        b = bytes(raw)
        if b.find(_MARK) < 0 or (also is not None and not any(b.find(a) >= 0 for a in also)):
            continue
        it = records.parse(b, off)[0]
        if it is not None and it["chg"] is not None:
            yield off, it


def _mine(m, sh):
    return m is not None and (sh is None or m.get("s") == sh)


def newest(path, sh):
    """The number of the newest change of the session (hash `sh`; None: of every session and
    of the API) that is no undo and that no undo reverted, or 0."""
    done = set()
    found = set()
    for off, it in _marked(path):
        c, w = it["chg"], it["was"]
        if _mine(c, sh):
            if "u" in c:
                done.add(c["u"])
            else:
                found.add(c["n"])
        if _mine(w, sh):
            found.add(w["n"])
    left = [n for n in found if n not in done]
    return max(left) if left else 0


def lines_of(path, n):
    """([(offset, item)] of change `n`: the newest line standing for each item it wrote, in
    file order), and the number of lines the change wrote."""
    got = {}
    of = 0
    for off, it in _marked(path):
        for m in (it["chg"], it["was"]):
            if m is not None and m["n"] == n and "u" not in m:
                got[it["id"]] = (off, it)
                of = m["of"]
                break
    return sorted(got.values(), key=lambda x: x[0]), of


def kind(lines):
    """What the change was: "store", "update", "forget", or "change" (several: an extraction
    result, a batch), from its lines (evictions left aside)."""
    live = [it for _, it in lines if not it["deleted"]]
    gone = [it for _, it in lines if it["deleted"]]
    own = [it for it in gone if not any(x["prev"] == it["id"] for x in live)]
    if len(live) == 1 and not own:
        return "update" if live[0]["prev"] else "store"
    if not live and len(own) == 1:
        return "forget"
    return "change"


def check(st, lines):
    """None when every item the change wrote is still as it left it, else the id of the
    first one changed since."""
    tab = st.tab
    for off, it in lines:
        slot = tab.slot(it["id"])
        if slot < 0:
            return it["id"]
        if tab.off[slot] == off:
            continue
        cur = st.item(slot)
        if cur is None or cur["deleted"] != it["deleted"] or not itm.equivalent(cur, it):
            return it["id"]
    return None


def before(path, lines):
    """{id: the change mark of its version before the change} for the tombstones among
    `lines` (what a restored version carries as "was")."""
    want = {}
    for off, it in lines:
        if it["deleted"]:
            want[it["id"]] = off
    out = {}
    if not want:
        return out
    keys = [('"id":"%s"' % i).encode() for i in want]
    for off, it in _marked(path, keys):
        end = want.get(it["id"])
        if end is not None and off < end and not it["deleted"]:
            c = it["chg"]
            out[it["id"]] = it["was"] or (c if "u" not in c else None)
    return out


def revert(batch, st, lines, marks):
    """Revert the lines of a change in `batch`; returns [(item, "forgotten" or "restored")].
    Restores first: a label an update kept keeps its catalog id."""
    out = []
    for off, it in lines:
        if it["deleted"]:
            out.append((batch.restore(it, marks.get(it["id"])), "restored"))
    for off, it in lines:
        if not it["deleted"] and st.tab.live[st.tab.slot(it["id"])]:
            out.append((batch.forget(it["id"])[0], "forgotten"))
    return out


def chain(st, memory_id, limit=8):
    """The versions of an item, newest first, while their lines are in the records: each
    version's item (its line, a tombstone for the older ones), following "prev"."""
    out = []
    mid = memory_id
    while mid and len(out) < limit:
        slot = st.tab.slot(mid)
        if slot < 0:
            break
        it = st.item(slot)
        if it is None or it["id"] != mid:
            break
        out.append(it)
        mid = it["prev"]
    return out
