# claw_memory.store.undo: take back the most recent change made in a session, and follow an
# item's versions back (its provenance chain).
# MIT license
#
# Every line a change made in a session appends carries the change's mark ("chg": its
# number, its number of lines, a hash of the session, and for an undo the change it reverts;
# docs/FORMAT.md). The records are scanned for the session's newest change that no undo has
# reverted; its lines are reverted as one batch (one append: a power cut leaves all of it or
# none): a version it wrote is tombstoned, a tombstone it wrote (a forget, an eviction, the
# old version of an update) is made active again from its own fields.
#
# A compaction is the limit: it drops tombstones (with the text of what was forgotten:
# docs/PRIVACY.md) and the marks of the lines it keeps, so the changes made before it cannot
# be undone and no later change of a session can have vanished from under an older one: what
# the scan finds is every change since, and undoing the newest of them is always right. The
# compaction that a change itself triggers keeps that change's lines as they are (compact.py),
# so that the change just made can always be undone.
#
# Two scans of the records file at most (an undo is rare; the file is at most ~130 KiB), each
# parsing only the lines that carry a mark.

from .. import item as itm
from . import records

NOTHING = "nothing"  # no change of the session left to undo
PURGED = "purged"  # a line of the change was compacted away (with its text)
CHANGED = "changed"  # an item the change wrote was changed since by another change
_MARK = b'"chg":{'


def _marked(path):
    """(offset, item, whether it is an eviction) of each line with a change mark."""
    for off, raw in records.lines(path):
        if raw is None:
            continue
        b = bytes(raw)
        if b.find(_MARK) < 0:
            continue
        it, kind = records.parse(b, off)
        if it is not None and it["chg"] is not None:
            yield off, it, bool(kind & records.EVICTED)


def newest(path, sh):
    """The number of the newest change of the session (hash `sh`; None: of every session and
    of the API) that is no undo and that no undo reverted, or 0."""
    done = set()
    found = set()
    for off, it, ev in _marked(path):
        c = it["chg"]
        if sh is None or c.get("s") == sh:
            if "u" in c:
                done.add(c["u"])
            else:
                found.add(c["n"])
    left = [n for n in found if n not in done]
    return max(left) if left else 0


def lines_of(path, n):
    """([(offset, item, evicted)] of the lines of change `n`, in file order), and the number
    of lines the change wrote."""
    out = []
    of = 0
    for off, it, ev in _marked(path):
        if it["chg"]["n"] == n:
            out.append((off, it, ev))
            of = it["chg"]["of"]
    return out, of


def kind(lines):
    """What the change was: "store", "update", "forget", or "change" (several: an extraction
    result, a batch), from its lines (evictions left aside)."""
    live = [it for _, it, ev in lines if not it["deleted"]]
    gone = [it for _, it, ev in lines if it["deleted"] and not ev]
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
    for off, it, ev in lines:
        slot = tab.slot(it["id"])
        if slot < 0:
            return it["id"]
        if tab.off[slot] == off:
            continue
        cur = st.item(slot)
        if cur is None or cur["deleted"] != it["deleted"] or not itm.equivalent(cur, it):
            return it["id"]
    return None


def revert(batch, st, lines):
    """Revert the lines of a change in `batch`; returns [(item, "forgotten" or "restored")].
    Restores first: a label an update kept keeps its catalog id."""
    out = []
    for off, it, ev in lines:
        if it["deleted"]:
            out.append((batch.restore(it), "restored"))
    for off, it, ev in lines:
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


def request(mark, sessions_dir):
    """A provenance mark as Store.why() reports it, with the user message while it is on
    flash (session/origin.py)."""
    from ..session import origin

    out = {"by": mark["by"], "session": mark.get("sid"), "at": mark["at"], "text": None,
           "missing": None}
    if "sid" not in mark or "msg" not in mark:
        out["missing"] = "not recorded"
    else:
        out["text"], out["missing"] = origin.find(sessions_dir, mark["sid"], mark["msg"])
    return out
