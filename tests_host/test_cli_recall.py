"""Ranked recall seen from the host: `claw-memory recall`, `claw-memory context --message`
and inspect.recall, on a data root built under CPython; none of them changes the root."""

import hashlib
import json
import os

import claw_memory
from claw_memory import inspect as insp
from claw_memory.providers import RECALLED_PREAMBLE
from claw_memory_cli import main


def _build(root):
    mem = claw_memory.open(str(root), extract=False)
    a, _ = mem.store.store("User's sister Anna lives in Porto", "family")
    b, _ = mem.store.store("User is allergic to peanuts", "health")
    mem.store.store("User plays the cello on Sundays", "music")
    mem.close()
    return a, b


def _digest(root):
    h = hashlib.sha256()
    for dirpath, _, files in sorted(os.walk(root)):
        for f in sorted(files):
            p = os.path.join(dirpath, f)
            h.update(p.encode() + open(p, "rb").read())
    return h.hexdigest()


def _run(capsys, *argv):
    rc = main.main(list(argv))
    cap = capsys.readouterr()
    return rc, cap.out, cap.err


def test_recall_ranks_and_leaves_the_root_alone(tmp_path, capsys):
    root = tmp_path / "root"
    a, b = _build(root)
    before = _digest(root)
    rc, out, _ = _run(capsys, "recall", str(root), "where does my sister live?", "--json")
    got = json.loads(out)
    assert rc == 0 and got["query"] == "where does my sister live?"
    assert [i["id"] for i in got["items"]] == [a["id"]]
    assert got["items"][0]["score"] > 0 and got["items"][0]["labels"] == "family"
    rc, out, _ = _run(capsys, "recall", str(root), "peanut allergy and Anna", "--limit", "1")
    assert rc == 0 and "ranked recall" in out and out.count("mem-") == 1
    rc, out, _ = _run(capsys, "recall", str(root), "violin")
    assert rc == 0 and "(none)" in out
    rc, out, err = _run(capsys, "recall", str(root))
    assert rc == 2 and "query" in err
    assert _digest(root) == before, "recall on a copy: the root is unchanged"


def test_a_count_below_its_range_is_a_usage_error_not_an_empty_answer(tmp_path, capsys):
    # recall --limit 0 and inspect --last -1 printed "(none)" with exit 0, read as "nothing
    # matches" / "no history"; search refused its --limit 0 already
    root = tmp_path / "root"
    _build(root)
    for argv, opt in ((["recall", str(root), "Anna", "--limit", "0"], "--limit"),
                      (["recall", str(root), "Anna", "--limit", "-1"], "--limit"),
                      (["search", str(root), "Anna", "--limit", "0"], "--limit"),
                      (["inspect", str(root), "--last", "-1"], "--last")):
        rc, out, err = _run(capsys, *argv)
        assert rc == 2 and err.startswith("claw-memory: %s must be" % opt) and not out, (argv, rc, out, err)
    rc, out, _ = _run(capsys, "inspect", str(root), "--last", "0")
    assert rc == 0


def test_recall_on_a_lite_root_says_it_has_no_items(tmp_path, capsys):
    # It printed "(none)", read as "nothing matches", where why says the root is LITE
    root = tmp_path / "lite"
    claw_memory.open(str(root), "lite").close()
    for argv in (["recall", str(root), "tea"], ["why", str(root), "mem-1-0001"]):
        rc, out, err = _run(capsys, *argv)
        assert rc == 1 and "is a LITE data root: it has no long-term items" in err and not out, (argv, err)


def test_context_message_shows_what_it_brings_in(tmp_path, capsys):
    root = tmp_path / "root"
    a, b = _build(root)
    rc, out, _ = _run(capsys, "context", str(root), "--json", "--message", "Can I eat peanuts?")
    ctx = json.loads(out)
    assert rc == 0 and ctx["recalled"] == [b["id"]]
    assert RECALLED_PREAMBLE in ctx["system"] and "User is allergic to peanuts" in ctx["system"]
    rc, out, _ = _run(capsys, "context", str(root), "--json")
    ctx = json.loads(out)
    assert ctx["recalled"] == [] and RECALLED_PREAMBLE not in ctx["system"]
    rc, out, _ = _run(capsys, "context", str(root), "--message", "Is Anna in Porto?")
    assert rc == 0 and "memories this message brings in: " + a["id"] in out
    rc, out, _ = _run(capsys, "context", str(root), "--message", "capital of France")
    assert "memories this message brings in: none" in out


def test_inspect_recall_on_the_repl(tmp_path, capsys):
    root = tmp_path / "root"
    a, b = _build(root)
    rows = insp.recall("cello on sunday", root=str(root), rows=True)
    assert [r["content"] for r in rows] == ["User plays the cello on Sundays"]
    assert insp.recall("cello", root=str(root)) is None
    out = capsys.readouterr().out
    assert "score" in out and "User plays the cello on Sundays" in out


def test_why_says_where_a_memory_came_from_and_leaves_the_root_alone(tmp_path, capsys):
    root = tmp_path / "root"
    mem = claw_memory.open(str(root), extract=False)
    sid = mem.chats.session_id("uart", "console")
    mem.sessions.persist(sid, [(1, None, "My sister Anna lives in Porto")], turn_completed=False)
    a, _ = mem.store.store("User's sister Anna lives in Porto", "family",
                           by=mem.by(sid, "My sister Anna lives in Porto"))
    mem.sessions.persist(sid, [(2, None, "Noted.")], turn_completed=True)
    mem.close()
    before = _digest(root)
    rc, out, _ = _run(capsys, "why", str(root), a["id"])
    assert rc == 0
    assert out.splitlines()[1:] == ['%s "User\'s sister Anna lives in Porto"' % a["id"],
                                    'First stored by the model after a message in session %s on %s: '
                                    '"My sister Anna lives in Porto".' % (sid, out.split(" on ")[1][:10])]
    rc, out, _ = _run(capsys, "why", str(root), a["id"], "--json")
    got = json.loads(out)["why"]
    assert rc == 0 and got["origin"]["text"] == "My sister Anna lives in Porto" and got["origin"]["by"] == "tool"
    rc, out, err = _run(capsys, "why", str(root), "mem-404")
    assert rc == 1 and err.startswith("claw-memory: no memory mem-404 in the records of ")
    rows = insp.items(root=str(root), rows=True)
    assert rows[0]["from"].startswith("session default_01, ") and rows[0]["expires"] == ""
    lt = [x for x in insp.stats(root=str(root), rows=True)["layers"] if x["layer"] == "long-term"][0]
    assert (lt["records"], lt["capacity"]) == (1, 128), "how full the store is"
    assert _digest(root) == before, "why and inspect change nothing"


def test_search_shows_the_part_of_a_long_message_about_the_query(tmp_path, capsys):
    # The table's cell and the REPL's view showed a long message's first characters; the
    # words it was found for came later
    root = tmp_path / "root"
    mem = claw_memory.open(str(root), extract=False)
    sid = mem.chats.session_id("web", "u1")
    long = "I wrote down the rota for the week, who cleans what and when. " * 20
    mem.sessions.persist(sid, [(1, None, long + "My gym locker code is zebra4412. " + long)])
    mem.sessions.persist(sid, [(2, None, "noted")], turn_completed=True)
    mem.close()
    rc, out, _ = _run(capsys, "search", str(root), "gym locker code")
    assert rc == 0 and "zebra4412" in out, out
    insp.search("gym locker code", root=str(root))  # (the REPL's view: printed)
    assert "zebra4412" in capsys.readouterr().out


def test_search_says_when_a_query_has_no_word_to_search_for(tmp_path, capsys):
    root = tmp_path / "root"
    _build(root)
    rc, out, _ = _run(capsys, "search", str(root), "the and of")
    assert rc == 0 and "no word to search for" in out, out
    rc, out, _ = _run(capsys, "search", str(root), "pangolin")
    assert rc == 0 and "(none)" in out and "no word" not in out, out
