"""Every script in examples/ runs: the console agent and LITE mode under the unix port, the
board inspection from the host against a virtual board."""

import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

import claw_memory  # noqa: E402
from claw_memory_cli import board, hosttools  # noqa: E402
from tools.virtual_board import VirtualBoard  # noqa: E402

EXAMPLES = os.path.join(ROOT, "examples")


def _micropython(script, args=(), stdin=None, cwd=None):
    env = dict(os.environ, MICROPYPATH=os.pathsep.join([".frozen", ROOT]))
    r = subprocess.run([hosttools.micropython(), os.path.join(EXAMPLES, script)] + list(args),
                       input=stdin, capture_output=True, text=True, env=env, cwd=cwd, timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr
    return r.stdout


def test_every_example_is_tested():
    here = open(__file__).read()
    names = sorted(n for n in os.listdir(EXAMPLES) if n.endswith(".py"))
    assert len(names) >= 3
    for n in names:
        assert here.count('"%s"' % n) >= 1, n


def test_console_agent(tmp_path):
    talk = "hello\nremember: I like jasmine tea\nwhat do you know?\n/session new work\nhi\n/session list\n"
    out = _micropython("console_agent.py", ["data"], stdin=talk, cwd=str(tmp_path))
    assert "pip> You said: hello" in out
    assert "Memory update: [note]" in out and "pip> Noted." in out
    assert "pip> I know: I like jasmine tea" in out
    assert "Started a new session: work" in out and "* work (current)" in out
    # it remembers across runs (a reboot): the fact is there, the chat is on session "work"
    out = _micropython("console_agent.py", ["data"], stdin="what do you know?\n/quit\n",
                       cwd=str(tmp_path))
    assert "pip> I know: I like jasmine tea" in out
    mem = claw_memory.open(str(tmp_path / "data"), create=False)
    assert mem.chats.aliases("uart", "console") == ("work", ["default_01", "work"])
    assert [i["content"] for i in mem.store.list()] == ["I like jasmine tea"]
    # /memory undo takes back the last change; an incognito session remembers nothing
    talk = ("remember: I play the oboe\n/memory undo\n/session new --incognito secret\n"
            "remember: a secret\n/session list\n/session switch work\nwhat do you know?\n")
    out = _micropython("console_agent.py", ["data"], stdin=talk, cwd=str(tmp_path))
    assert 'Undone (store): "I play the oboe" is forgotten.' in out
    assert "Started an incognito session: secret." in out and "* secret (incognito, current)" in out
    assert "pip> I could not: This session is incognito" in out
    assert "pip> I know: I like jasmine tea" in out.rsplit("Switched to session: work", 1)[1]


def test_lite_mode(tmp_path):
    out = _micropython("lite_mode.py", cwd=str(tmp_path))
    assert "== Long-term Memory ==\n### Long-term Memory\n\n- Ada is allergic to peanuts." in out
    assert "Name: Ada. Prefers short answers." in out
    assert "user: Hello!\nassistant: Hi Ada, how can I help?" in out
    assert "== tools ==\nprofile_read, profile_update" in out, "no memory tools in LITE mode"
    assert sorted(os.listdir(tmp_path / "lite_data" / "memory")) == [
        "MEMORY.md", "identity.md", "soul.md", "user.md"], "no store files"


def test_inspect_board(tmp_path):
    local = str(tmp_path / "root")
    mem = claw_memory.open(local, extract=False)
    sid = mem.chats.session_id("uart", "console")
    mem.sessions.persist(sid, [(1, None, "hello board")])
    mem.sessions.persist(sid, [(2, None, "hello from the board")], turn_completed=True)
    a, _ = mem.store.store("User owns a soldering iron", "hardware")
    mem.store.store("User lives in Porto", "city")
    mem.store.recall(["hardware"])
    mem.profile.write("user", "# User\n\nName: Ada\n")
    mem.close()
    with VirtualBoard(str(tmp_path / "board.img"), host_path=False) as vb:
        # the board has no claw_memory: --device-root reads its data root without it
        with board.Board(vb.port) as b:
            b.push(local, "/flash/data", "test")
        r = subprocess.run([sys.executable, os.path.join(EXAMPLES, "inspect_board.py"), "-p", vb.port,
                            "--device-root", "/flash/data"], capture_output=True, text=True, timeout=120)
        assert r.returncode == 0, r.stdout + r.stderr
        assert "board %s, data root /flash/data" % vb.port in r.stdout
        assert "2 records, last: hello from the board" in r.stdout
        lines = [l for l in r.stdout.splitlines() if l.startswith("memory ")]
        assert lines[0].startswith("memory %s (recalled 1 times): User owns a soldering iron" % a["id"]), lines
        assert "user profile: # User / Name: Ada" in r.stdout
        r = subprocess.run([sys.executable, os.path.join(EXAMPLES, "inspect_board.py"), "-p", vb.port],
                           capture_output=True, text=True, timeout=120)
        assert r.returncode == 3 and "claw_memory is not installed" in r.stderr
