# claw_memory.inspect: the REPL helpers print a table and return None, return rows with
# rows=True, show session ids (also of sessions without a turn yet), find a session by id,
# file name or as the latest one, and never create a data root.
import os
import time

from flashsim import mount
from mptest import eq, ok, raises

import claw_memory
import claw_memory.session
from claw_memory import inspect

HEAP = "4M"
ROOT = "/flash/agent"


class Capture:
    """Collects what print() writes (the helpers print through the built-in)."""

    def __init__(self):
        self.lines = []

    def __enter__(self):
        import builtins

        self._print = builtins.print
        builtins.print = lambda *a, **k: self.lines.append(" ".join(str(x) for x in a))
        return self

    def __exit__(self, *exc):
        import builtins

        builtins.print = self._print

    def text(self):
        return "\n".join(self.lines)


def _setup():
    dev = mount("lfs2", "/flash", blocks=128)
    mem = claw_memory.open(ROOT, extract=False)
    a = mem.chats.session_id("web", "u1")
    mem.sessions.persist(a, [(1, None, "first question")])
    mem.sessions.persist(a, [(2, None, "first answer")], turn_completed=True)
    b = mem.chats.session_id("uart", "console")
    mem.sessions.persist(b, [(1, None, "hello from the console")])
    mem.sessions.persist(b, [(2, None, "hi console")], turn_completed=True)
    mem.session_command("uart", "console", "new project-a")  # no turn yet
    mem.sessions.persist("script-session", [(1, None, "not in any chat map")], turn_completed=True)
    mem.store.store("User likes tea", "drink")
    mem.close()
    return dev, a, b


def test_helpers_print_and_return_none_rows_return_data():
    dev, a, b = _setup()
    for fn in (inspect.sessions, inspect.items, inspect.labels, inspect.profile, inspect.stats,
               inspect.history, inspect.context):
        with Capture() as c:
            got = fn(root=ROOT)
        eq(got, None, fn.__name__ + " returns None")
        ok(c.lines, fn.__name__ + " printed")
    with Capture() as c:
        rows = inspect.sessions(ROOT, rows=True)
    eq(c.lines, [], "rows=True prints nothing")
    by_id = {r["id"]: r for r in rows}
    eq(sorted(k for k in by_id if k), sorted([a, b, "chat:uart:console:project-a"]), "ids from the chat maps")
    eq(by_id["chat:uart:console:project-a"]["records"], 0, "/session new: listed with 0 records")
    eq(by_id[a]["records"], 2, "records")
    eq(by_id[None]["file"], claw_memory.session.file_name("script-session"), "a session no map names")
    with Capture() as c:
        inspect.sessions(ROOT)
    out = c.text()
    ok(a in out and "chat:uart:console:project-a" in out and "?" in out, out)
    ok(by_id[a]["file"] in out, "files shown too")
    dev.unmount()


def test_context_is_what_one_request_carries():
    dev, a, b = _setup()
    ctx = inspect.context(a, "You are Claw.", root=ROOT, rows=True)
    eq(ctx["session"], a, "the session")
    ok(ctx["system"].startswith("You are Claw.\n\n## Editable Profile Memory\nUser Profile (memory/user.md)"),
       "the system prompt as the agent builds it, the profile named inside the data root")
    ok(ctx["system"].endswith("source_chat_id: %s" % a.split(":")[2]), "the request's source")
    eq([m["content"] for m in ctx["messages"]], [m["content"] for m in
                                                 claw_memory.open(ROOT, extract=False).sessions.messages(a)],
       "the history the budget selects")
    eq([d["function"]["name"] for d in ctx["tools"]][:2], ["memory_store", "memory_recall"], "tools")
    eq(ctx["total"], sum(r["tokens"] for r in ctx["layers"]), "total")
    raises(ValueError, inspect.context, "chat:web:nobody:x", root=ROOT, rows=True)
    dev.unmount()


def test_history_by_id_file_name_and_latest():
    dev, a, b = _setup()
    want = [{"role": "user", "text": "first question"}, {"role": "assistant", "text": "first answer"}]
    eq(inspect.history(a, root=ROOT, rows=True), want, "by id")
    f = claw_memory.session.file_name(a)
    eq(inspect.history(f, root=ROOT, rows=True), want, "by file name")
    eq(inspect.history(a, 1, ROOT, rows=True), want[-1:], "the last n")
    time.sleep(1.1)  # file times have a resolution of one second
    mem = claw_memory.open(ROOT, extract=False)
    mem.sessions.persist("script-session", [(1, None, "written last")], turn_completed=True)
    mem.close()
    eq(inspect.history(None, 1, ROOT, rows=True), [{"role": "user", "text": "written last"}],
       "no session given: the session written last, when no chat map names it")
    time.sleep(1.1)
    mem = claw_memory.open(ROOT, extract=False)
    mem.session_command("uart", "console", "new project-b")
    mem.close()
    eq(inspect.history(root=ROOT, rows=True), [], "after /session new: the new session (no turn yet)")
    eq(inspect.context(root=ROOT, rows=True)["session"], b.rsplit(":", 1)[0] + ":project-b",
       "context follows the chat map, as the agent's next request does")
    time.sleep(1.1)
    mem = claw_memory.open(ROOT, extract=False)
    mem.sessions.persist(a, [(1, None, "second question")])
    mem.close()
    eq(inspect.history(None, 1, ROOT, rows=True), [{"role": "user", "text": "second question"}],
       "the chat written last, although its file name sorts first")
    mem = claw_memory.open(ROOT, extract=False)
    mem.session_command("web", "u1", "new other")
    mem.session_command("web", "u1", "switch default_01")  # the map is newer than the log
    mem.close()
    eq(inspect.history(None, 1, ROOT, rows=True), [{"role": "user", "text": "second question"}],
       "a chat's map written last: its current session")
    inspect._last = None
    eq(inspect.history("chat:uart:console:project-a", root=ROOT, rows=True), [], "no turn yet")
    with Capture() as c:
        got = inspect.history(a, root=ROOT)
    eq(got, None, "prints")
    ok(a in c.text() and f in c.text() and "first answer" in c.text(), c.text())
    with Capture() as c:
        eq(inspect.history("chat:nope:x:default_01", root=ROOT), None, "unknown")
    ok("no session 'chat:nope:x:default_01'" in c.text() and "(none)" not in c.text(), c.text())
    e = raises(ValueError, inspect.history, "s_unknown_00000000.log", root=ROOT, rows=True)
    ok("no session" in str(e), str(e))
    dev.unmount()


def test_stats_lists_every_session():
    dev, a, b = _setup()
    st = inspect.stats(ROOT, rows=True)
    eq([r["layer"] for r in st["layers"]], ["sessions", "profile", "long-term", "skills", "tool definitions"], "layers")
    ok(st["layers"][-1]["tokens"] > st["layers"][3]["tokens"] // 2, "tool definitions counted (about as many as the skills)")
    sess = {r["file"]: r for r in st["sessions"]}
    eq(len(sess), 4, "every session, also the one without a turn")
    for r in st["sessions"]:
        ok(r["tokens"] > 0 if r["records"] else r["tokens"] == 0, r)
    eq(st["layers"][0]["tokens"], max(r["tokens"] for r in st["sessions"]), "largest history")
    with Capture() as c:
        inspect.stats(ROOT)
    ok("tokens" in c.text() and claw_memory.session.file_name(b) in c.text(), c.text())
    dev.unmount()


def _tree(path):
    out = []
    for name in sorted(os.listdir(path)):
        out.append(name)
        if os.stat(path + "/" + name)[0] & 0x4000:
            out += [name + "/" + n for n in _tree(path + "/" + name)]
    return out


def test_helpers_never_create_a_data_root():
    dev = mount("lfs2", "/flash", blocks=64)
    os.mkdir("/flash/docs")
    for fn in (inspect.sessions, inspect.history, inspect.items, inspect.profile, inspect.stats,
               inspect.context):
        e = raises(OSError, fn, root="/flash/docs")
        ok("no data root at /flash/docs" in str(e), str(e))
    raises(OSError, inspect.sessions, root="/flash/missing")
    eq(_tree("/flash"), ["docs"], "nothing created")
    # a LITE root (its MEMORY.md without a store): looking creates no store
    mem = claw_memory.open("/flash/lite", "lite")
    mem.close()
    before = _tree("/flash/lite")
    inspect.items(root="/flash/lite")
    inspect.stats(root="/flash/lite")
    inspect.context(root="/flash/lite")
    eq(_tree("/flash/lite"), before, "a look adds no file")
    eq(inspect._mem("/flash/lite").mode, "lite", "opened as LITE")
    # a root with nothing to tell the mode by (the agent opened it, stored nothing): FULL,
    # as claw_memory.open() opens it
    claw_memory.open("/flash/used", extract=False).close()
    eq(inspect._mem("/flash/used").mode, "full", "open()'s default")
    dev.unmount()


def test_sessions_list_gives_ids_and_the_sessions_only_a_chat_map_knows():
    dev, a, b = _setup()
    mem = claw_memory.open(ROOT, extract=False)
    rows = list(mem.sessions.list())
    new = b.rsplit(":", 1)[0] + ":project-a"
    by_id = {r["id"]: r for r in rows}
    eq(sorted(k for k in by_id if k), sorted([a, b, new]), "every session a chat map names, with its id")
    eq((by_id[new]["records"], by_id[new]["bytes"], by_id[new]["file"]),
       (0, 0, claw_memory.session.file_name(new)), "/session new without a turn yet")
    eq([r["file"] for r in rows if r["id"] is None], [claw_memory.session.file_name("script-session")],
       "a session no chat map names: id None")
    eq(len(rows), 4, "each session once")
    eq(by_id[a]["records"], 2, "its stat")
    mem.close()
    dev.unmount()


def test_stored_terminal_escapes_are_printed_as_data():
    # A chat (its id too), a memory and a profile planted with ESC [2J, OSC 52 (the
    # clipboard), a C1 CSI and a bidi override: every view prints them escaped (text.shown).
    dev = mount("lfs2", "/flash", blocks=128)
    evil = "wombat \x1b[2J\x1b]52;c;aGk=\x07\x9b31m\u202egnp\r\x7f end"
    mem = claw_memory.open(ROOT, extract=False)
    sid = mem.chats.session_id("web", "x\x1b[2Jy")
    mem.sessions.persist(sid, [(1, None, "user says " + evil)])
    mem.sessions.persist(sid, [(2, None, "reply " + evil)], turn_completed=True)
    it, _ = mem.store.store("memory " + evil, "zoo")
    mem.profile.write("user", "# User\n" + evil + "\nline two\n")
    mem.close()
    for fn in (lambda: inspect.sessions(ROOT), lambda: inspect.history(sid, root=ROOT),
               lambda: inspect.items(ROOT), lambda: inspect.search("wombat", root=ROOT),
               lambda: inspect.recall("wombat", root=ROOT), lambda: inspect.profile(ROOT),
               lambda: inspect.why(it["id"], root=ROOT), lambda: inspect.context(sid, root=ROOT)):
        with Capture() as c:
            fn()
        out = c.text()
        bad = [c for c in out if (c < " " and c not in "\n\t") or "\x7f" <= c <= "\x9f" or c == "\u202e"]
        eq(bad, [], out)
        ok("wombat" in out or "x\\x1b[2Jy" in out, out)
    with Capture() as c:
        inspect.history(sid, root=ROOT)
    ok("\\x1b[2J\\x1b]52;c;aGk=\\x07\\x9b31m\\u202egnp" in c.text(), c.text())
    with Capture() as c:
        inspect.context(sid, root=ROOT)
    ok("\\x1b[2J" in c.text() and "\nline two" in c.text(), "the profile keeps its lines")
    eq(inspect.history(sid, root=ROOT, rows=True)[0]["text"], "user says " + evil, "rows stay raw")
    dev.unmount()
