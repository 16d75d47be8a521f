"""Stored text reaches the owner's terminal as data: a chat message, a chat id, a memory, a
label or a profile planted with terminal escapes (ESC [2J clears the screen, OSC 52 sets the
clipboard, C1 CSI, a bidi override) is printed escaped by every host command and every REPL
view (text.shown), and `--json` carries it as JSON escapes."""

import json

import pytest

import claw_memory
from claw_memory import inspect as insp
from claw_memory import text
from claw_memory_cli import main

CLEAR = "\x1b[2J"
OSC52 = "\x1b]52;c;aGVsbG8=\x07"  # would put "hello" on the owner's clipboard
CSI = "\x9b31m"  # the one-character C1 CSI
RLO = "\u202e"  # right-to-left override (Trojan Source)
EVIL = "wombat " + CLEAR + OSC52 + CSI + RLO + "\u2066gnp.exe\r\x08\x7f end"
SID = "chat:web:x" + CLEAR + "y:default_01"


def _build(root):
    mem = claw_memory.open(str(root), extract=False)
    mem.chats.session_id("web", "x" + CLEAR + "y")
    mem.sessions.persist(SID, [(1, None, "user says " + EVIL)])
    mem.sessions.persist(SID, [(2, '{"role":"assistant","content":%s}' % json.dumps("reply " + EVIL), None)],
                         turn_completed=True)
    item, _ = mem.store.store("memory " + EVIL, "wombat" + CLEAR + "label", "tag" + RLO)
    mem.profile.write("user", "# User\n\n" + EVIL + "\nline two\n")
    mem.close()
    return item["id"]


def _clean(out):
    """`out` holds nothing a terminal acts on but LF and tab (and shows the planted text)."""
    bad = sorted({c for c in out if (c < " " and c not in "\n\t") or "\x7f" <= c <= "\x9f"
                  or c in "\u061c\u200e\u200f\u2028\u2029" or "\u202a" <= c <= "\u202e"
                  or "\u2066" <= c <= "\u2069"})
    assert not bad, "raw on the terminal: %r" % bad


def _run(capsys, *argv):
    rc = main.main(list(argv))
    out = capsys.readouterr().out
    assert rc == 0
    return out


@pytest.mark.parametrize("argv", [
    ("inspect",), ("search", "wombat"), ("recall", "wombat"), ("context",), ("stats",),
    ("context", "--message", "wombat")])
def test_every_view_prints_stored_escapes_as_data(tmp_path, capsys, argv):
    root = tmp_path / "root"
    _build(root)
    out = _run(capsys, argv[0], str(root), *argv[1:])
    _clean(out)
    if argv[0] != "stats":
        assert "wombat" in out
    if argv[0] in ("inspect", "search"):
        assert "\\x1b[2J\\x1b]52;c;aGVsbG8=\\x07\\x9b31m\\u202e\\u2066gnp.exe" in out, out


@pytest.mark.parametrize("argv", [("search", "wombat" + CLEAR), ("recall", "wombat" + OSC52),
                                  ("search", "wombat", "--session", SID)])
def test_a_query_or_session_typed_with_escapes_is_printed_as_data(tmp_path, capsys, argv):
    # (a pasted query, an id copied from a listing: echoed in the header as they were given)
    root = tmp_path / "root"
    _build(root)
    out = _run(capsys, argv[0], str(root), *argv[1:])
    _clean(out)
    assert "query: wombat" in out


def test_inspect_shows_ids_labels_and_profile_escaped(tmp_path, capsys):
    root = tmp_path / "root"
    _build(root)
    out = _run(capsys, "inspect", str(root))
    _clean(out)
    assert "chat:web:x\\x1b[2Jy:default_01" in out, "the session id in the listing and the title"
    assert "tag\\u202e" in out or "wombat" in out
    # A profile keeps its lines: only the escapes are written out.
    assert "\\x1b[2J\\x1b]52;c;aGVsbG8=\\x07\\x9b31m\\u202e\\u2066gnp.exe\\x0d\\x08\\x7f end\nline two" in out


def test_why_prints_escaped(tmp_path, capsys):
    root = tmp_path / "root"
    mid = _build(root)
    out = _run(capsys, "why", str(root), mid)
    _clean(out)
    assert "memory wombat" in out


@pytest.mark.parametrize("argv", [("inspect",), ("search", "wombat"), ("recall", "wombat"),
                                  ("context",), ("why", None)])
def test_json_escapes_c1_and_bidi_too(tmp_path, capsys, argv):
    root = tmp_path / "root"
    mid = _build(root)
    out = _run(capsys, argv[0], str(root), *[a or mid for a in argv[1:]], "--json")
    _clean(out)
    assert "\\u009b" in out and "\\u202e" in out and "\\u001b" in out
    assert "wombat" in json.dumps(json.loads(out)), "still the same JSON value"


def test_json_value_is_unchanged(tmp_path, capsys):
    root = tmp_path / "root"
    _build(root)
    got = json.loads(_run(capsys, "search", str(root), "wombat", "--json"))
    assert any(EVIL in h["text"] for h in got["hits"])


def test_export_to_stdout_escapes_the_same_values(tmp_path, capsys):
    root = tmp_path / "root"
    _build(root)
    out = _run(capsys, "export", str(root), "-o", "-")
    _clean(out)
    assert "\\u202e" in out
    lines = [json.loads(x) for x in out.splitlines()]
    assert [x["content"] for x in lines if x["type"] == "item"] == ["memory " + EVIL]


def test_request_body_is_exact_in_a_pipe_and_escaped_on_a_terminal(tmp_path, capsys, monkeypatch):
    from claw_memory_cli import ui

    root = tmp_path / "root"
    _build(root)
    piped = _run(capsys, "context", str(root), "--request")
    assert "\x9b" in piped and RLO in piped, "a pipe gets the exact body"
    monkeypatch.setattr(ui, "_tty", lambda stream: True)
    out = _run(capsys, "context", str(root), "--request")
    _clean(out)
    assert json.loads(out) == json.loads(piped)


def test_repl_views_print_escaped(tmp_path, capsys):
    root = tmp_path / "root"
    mid = _build(root)
    r = str(root)
    for call in (lambda: insp.sessions(root=r), lambda: insp.history(SID, root=r),
                 lambda: insp.items(root=r), lambda: insp.search("wombat", root=r),
                 lambda: insp.recall("wombat", root=r), lambda: insp.profile(root=r),
                 lambda: insp.why(mid, root=r), lambda: insp.context(SID, root=r),
                 lambda: insp.stats(root=r), lambda: insp.labels(root=r)):
        call()
        out = capsys.readouterr().out
        _clean(out)
    assert insp.history(SID, root=r, rows=True)[0]["text"] == "user says " + EVIL, "rows stay raw"


def test_shown():
    assert text.shown("plain, ’quoted’ — é 中文") == "plain, ’quoted’ — é 中文"
    assert text.shown("a\x1b[2Jb\x9bc\u202ed") == "a\\x1b[2Jb\\x9bc\\u202ed"
    assert text.shown("a\tb\nc") == "a\\x09b\\x0ac"
    assert text.shown("a\tb\r\nc\rd\u2028e", True) == "a\tb\nc\\x0dd\\u2028e"


def test_rich_tables_on_a_terminal_show_the_escapes_as_data(tmp_path, capsys, monkeypatch):
    pytest.importorskip("rich")
    from claw_memory_cli import ui

    root = tmp_path / "root"
    _build(root)
    monkeypatch.setattr(ui, "_tty", lambda stream: True)
    out = _run(capsys, "search", str(root), "wombat")
    # rich styles its own output (its SGR sequences); none of the planted ones is there.
    for planted in (CLEAR, OSC52, "\x9b", RLO, "\u2066", "\x7f", "\x08"):
        assert planted not in out, repr(planted)
    assert "\\x1b" in out and "wombat" in out
