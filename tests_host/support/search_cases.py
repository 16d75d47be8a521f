# History search's test cases (tests_host/mp/test_search*.py): a session folder on simulated
# flash, turns about topics a question can find, a session compacted into the archive, and the
# faults the search's passes meet.
import math

from flashsim import mount
from mptest import eq

from claw_memory import fsutil, terms
from claw_memory.session import Sessions
from claw_memory.session import held as held_mod
from claw_memory.session import search as search_mod
from claw_memory.session import tixmerge

D = "/flash/sessions"
SID = "chat:web:u1:default_01"

TOPICS = [
    "my sister Lena recommends Osteria Dodo on Via Roma for carbonara",
    "the boiler service is booked for March 14 with Hendrik",
    "our daughter's violin lesson moved to Thursdays at five",
    "I keep the spare bicycle key under the blue flower pot",
    "the wifi password for the garden shed router is written on the fridge",
    "Grandma's apple cake needs 200 grams of butter and three eggs",
    "the dentist said to come back in October for a cleaning",
    "we are flying to Lisbon on the 3rd of June, seat 14C",
    "花园里的番茄今年长得特别好",
    "明天下午三点和王医生预约了体检",
]


def fresh(kind="lfs2", blocks=256, **kw):
    dev = mount(kind, "/flash", blocks=blocks)
    fsutil.makedirs(D)
    return dev, Sessions(D, **kw)


def turn(s, sid, n, tool=True, pad=""):
    topic = TOPICS[n % len(TOPICS)]
    s.persist(sid, [(1, None, "turn %d: %s %s" % (n, topic, pad))])
    if tool:
        call = ('{"role":"assistant","content":null,"tool_calls":[{"id":"c%d","type":"function",'
                '"function":{"name":"lookup","arguments":"{\\"n\\":%d}"}}]}' % (n, n))
        res = '[{"role":"tool","tool_call_id":"c%d","content":"lookup result %d","is_error":false}]' % (n, n)
        s.persist(sid, [(3, call, None), (4, res, None)])
    return s.persist(sid, [(2, None, "noted %d" % n)], turn_completed=True)


def texts(hits):
    return [(h["role"], h["text"]) for h in hits]


def archive_run(kind="lfs2", n=60, **kw):
    dev, s = fresh(kind, blocks=512, size_limit=6000, **kw)
    for i in range(n):
        eq(turn(s, SID, i, pad="p" * 40), None, "turn %d not blocked" % i)
    return dev, s


def records(path):
    with open(path, "rb") as f:
        return [ln for ln in f.read().split(b"\n") if ln]


def bm25(docs, query):
    """Scores of `docs` (texts) for `query`, BM25 k1 1.2 b 0.75, computed here from the terms."""
    qs = []
    for t in terms.terms(query):
        if t not in qs:
            qs.append(t)
    toks = [terms.terms(d) for d in docs]
    n = len(docs)
    avg = sum(len(t) for t in toks) / n
    dfs = [sum(1 for u in toks if q in u) for q in qs]
    out = []
    for t in toks:
        s = 0.0
        for q, df in zip(qs, dfs):
            tf = min(t.count(q), 4)
            if tf:
                idf = math.log(1 + (n - df + 0.5) / (df + 0.5))
                s += idf * tf * 2.2 / (tf + 1.2 * (0.25 + 0.75 * len(t) / avg))
        out.append(round(s, 4))
    return out


class Unmerged:
    """Text indexes keep the blocks they were written with (session/tixmerge.py merges none):
    for tests of what the persist path, a compaction or a search writes before a merge."""

    def __enter__(self):
        self.settle = tixmerge.settle
        tixmerge.settle = lambda path, fd: False
        return self

    def __exit__(self, *exc):
        tixmerge.settle = self.settle
        return False


class Unkept:
    """The search keeps no file open once used (held.Held.give closes it, as for files beyond
    the _MAX it keeps) and remembers no log's check: every pass opens each file again, where
    faults on its opens are put."""

    def __enter__(self):
        self.open = held_mod.Held.open
        self.give = held_mod.Held.give
        opn = self.open

        def open_(h, path, missing=False):
            for e in [e for e in h.files if not e[2] & 1]:  # (kept by an earlier query)
                h.files.remove(e)
                e[1].close()
            return opn(h, path, missing)

        def give(h, f):
            h.files = [e for e in h.files if e[1] is not f]
            f.close()

        self.checked = held_mod.Held.checked
        held_mod.Held.open = open_
        held_mod.Held.give = give
        held_mod.Held.checked = lambda h, log: -1
        return self

    def __exit__(self, *exc):
        held_mod.Held.open = self.open
        held_mod.Held.give = self.give
        held_mod.Held.checked = self.checked
        return False


class FailingReads:
    """The open file `f` whose reads (read, readinto) fail with EIO once `fail(n)` is true
    of their number n (from 1)."""

    def __init__(self, f, fail):
        self.f, self.fail, self.n = f, fail, 0

    def _read(self, how, *a):
        self.n += 1
        if self.fail(self.n):
            raise OSError(5, "EIO")
        return getattr(self.f, how)(*a)

    def read(self, *a):
        return self._read("read", *a)

    def readinto(self, *a):
        return self._read("readinto", *a)

    def seek(self, *a):
        return self.f.seek(*a)

    def close(self):
        self.f.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.f.close()
