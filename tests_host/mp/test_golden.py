# A fixed workload through every layer, compared byte for byte with tests_host/golden/.
#
# The golden copy pins the on-disk output: a refactor must not change a byte of it. When a
# change of format or behaviour is deliberate, regenerate it with `python tools/gen_golden.py`
# and say in the commit why the bytes moved.
import binascii
import json

from flashsim import mount, tree
from mptest import eq, ok

import claw_memory

HEAP = "8M"
GOLDEN = "tests_host/golden/workload.json"


class _Clock:
    def __init__(self, t=1714000000):
        self.t = t

    def __call__(self):
        self.t += 7
        return self.t


def _call(n):
    return ('{"role":"assistant","content":null,"tool_calls":[{"id":"c%d","type":"function",'
            '"function":{"name":"memory_recall","arguments":"{}"}}]}' % n)


def _result(n, pad=0):
    return '[{"role":"tool","tool_call_id":"c%d","content":"r%s","is_error":false}]' % (n, "x" * pad)


def _files():
    out = {}
    for path in sorted(tree("/flash")):
        with open("/flash/" + path, "rb") as f:
            data = f.read()
        try:
            out[path] = data.decode()
            if "\x00" in out[path]:
                raise UnicodeError
        except UnicodeError:
            out[path] = "hex:" + binascii.hexlify(data).decode()
    return out


def snapshots():
    """The files after each step of the workload: {step: {path: text or hex}}."""
    mount("lfs2", "/flash", blocks=256)
    snaps = {}
    mem = claw_memory.open("/flash", extract=False, clock=_Clock(), session_limit=6000)
    s = mem.sessions
    work = mem.chats.session_id("uart", "console")
    trip = "chat:uart:console:trip"
    # Session history: plain turns, tool turns, an unfinished turn, another backend.
    for n in range(3):
        s.persist(work, [(1, None, "question %d" % n)])
        s.persist(work, [(3, _call(n), None), (4, _result(n, 40), None)])
        s.persist(work, [(2, '{"role":"assistant","content":"answer %d"}' % n, None)], True)
    s.persist(work, [(1, None, "unfinished \u00e9\u4f60")])
    s.persist(trip, [(1, None, "hello"), (2, None, "hi there")], True, backend="anthropic")
    snaps["sessions_open"] = _files()
    # Long-term store: stores, a duplicate, update, forget, recall, compaction.
    st = mem.store
    a, _ = st.store("The user likes jasmine tea", "drink,tea", "jasmine")
    b, _ = st.store("User lives in Porto", "city", "Porto")
    st.store("the user likes jasmine tea!", "drink")
    c, _ = st.store("User's cat is called Miso", "pet,cat", "Miso,cat")
    st.update(b["id"], "User lives in Lisbon now", "city,home")
    st.update(c["id"], tags="pet,animal")
    st.recall(["drink"])
    st.recall()
    st.forget(a["id"])
    snaps["store"] = _files()
    st.compact()
    snaps["store_compacted"] = _files()
    # Profile and /session commands.
    mem.profile.write("user", "# User\n\nName: Ana\n")
    mem.session_command("uart", "console", "new trip")
    mem.session_command("uart", "console", "switch default_01")
    # Compaction of the session over its (small) limit, then close.
    for n in range(3, 12):
        s.persist(work, [(1, None, "more %d" % n)])
        s.persist(work, [(3, _call(n), None), (4, _result(n, 300), None)])
        s.persist(work, [(2, None, "done %d" % n)], True)
    mem.close()
    snaps["closed"] = _files()
    return snaps


def test_workload_bytes_match_golden():
    with open(GOLDEN) as f:
        want = json.load(f)
    got = snapshots()
    eq(sorted(got), sorted(want), "snapshot steps")
    for step in want:
        eq(sorted(got[step]), sorted(want[step]), "files after %s" % step)
        for path in want[step]:
            ok(got[step][path] == want[step][path],
               "%s after %s differs:\n got %r\nwant %r" % (path, step, got[step][path][:400],
                                                            want[step][path][:400]))
