"""The host CLI on data roots built with the package under CPython: inspect, verify, repair,
stats, export/import, flash, demo."""

import hashlib
import json
import shutil
import os
import re
import subprocess
import sys

import pytest

import claw_memory
from claw_memory import chats
from claw_memory_cli import main

SID = "chat:web:local:default_01"


def _build(root):
    mem = claw_memory.open(str(root), extract=False)
    mem.chats.session_id("web", "local")
    mem.sessions.persist(SID, [(1, None, "I like green tea")])
    mem.sessions.persist(SID, [
        (3, '{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"memory_store","arguments":"{}"}}]}', None),
        (4, '[{"role":"tool","tool_call_id":"c1","content":"{\\"ok\\":true}","is_error":false}]', None)])
    mem.sessions.persist(SID, [(2, '{"role":"assistant","content":"Noted."}', None)], turn_completed=True)
    mem.sessions.persist(SID, [(1, None, "and an unfinished turn")])
    a, _ = mem.store.store("User likes green tea", "drink", "tea")
    mem.store.store("User lives in Porto", "city")
    mem.store.recall(["drink"])
    mem.profile.write("user", "# User\n\nName: Ada\n")
    mem.close()
    return a


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


def test_inspect_text_and_json_leave_the_root_alone(tmp_path, capsys):
    root = tmp_path / "root"
    _build(root)
    before = _digest(root)
    rc, out, err = _run(capsys, "inspect", str(root))
    assert rc == 0
    for want in ("== sessions ==", "s_chat_web_local_default_0_964a2a51.log", "I like green tea", SID,
                 "[calls memory_store]", "User likes green tea", "== label catalog ==", "Name: Ada"):
        assert want in out, want
    rc, out, err = _run(capsys, "inspect", str(root), "--json")
    data = json.loads(out)
    assert data["sessions"][0]["records"] == 5 and data["sessions"][0]["pending"] == 1
    assert data["sessions"][0]["id"] == SID
    assert [r["role"] for r in data["sessions"][0]["history"]] == ["user", "assistant", "tool", "assistant", "user"]
    assert {i["content"]: i["access"] for i in data["items"]}["User likes green tea"] == 1, "recall counted"
    assert sorted(l["label"] for l in data["labels"]) == ["city", "drink"]
    assert _digest(root) == before, "inspect changed nothing"


def test_verify_and_repair(tmp_path, capsys):
    root = tmp_path / "root"
    _build(root)
    rc, out, _ = _run(capsys, "verify", str(root))
    assert rc == 0 and "nothing to repair" in out
    (root / "memory" / "memory_index.json").write_bytes(b"{corrupt")
    with open(root / "memory" / "memory_records.jsonl", "ab") as f:
        f.write(b"\x00garbage line\n")
    idx = root / "sessions" / "s_chat_web_local_default_0_964a2a51.log.idx"
    idx.write_bytes(idx.read_bytes()[:-10])  # the index lost its last entry
    (root / "search").mkdir(exist_ok=True)
    (root / "search" / "s_chat_web_local_default_0_964a2a51.log.tix.tmp").write_bytes(b"CTIX")  # a cut rewrite's
    before = _digest(root)
    rc, out, _ = _run(capsys, "verify", str(root), "--json")
    data = json.loads(out)
    assert rc == 1
    assert data["problems"] == [
        "memory/memory_records.jsonl: 1 line unreadable, dropped",
        "memory/memory_index.json: corrupt, rebuilt from the records",
        "sessions/s_chat_web_local_default_0_964a2a51.log: 1 record not in the index yet (indexed every 4 "
        "turns and on close), re-indexed",
        "search/s_chat_web_local_default_0_964a2a51.log.tix.tmp: settled by repair (leftover of an "
        "interrupted write)"]
    assert _digest(root) == before, "verify wrote nothing"
    rc, out, _ = _run(capsys, "repair", str(root))
    assert rc == 0
    assert out.splitlines()[1:] == ["  repaired: " + p for p in data["problems"]], "exactly what verify listed"
    rc, out, _ = _run(capsys, "verify", str(root))
    assert rc == 0 and "nothing to repair" in out
    rc, out, _ = _run(capsys, "repair", str(root))
    assert rc == 0 and "nothing needed repair" in out
    assert not (root / "search" / "s_chat_web_local_default_0_964a2a51.log.tix.tmp").exists()
    mem = claw_memory.open(str(root))
    assert len(list(mem.store.list())) == 2 and len(mem.sessions.messages(SID)) == 5


def _archived(root, turns):
    """The open memory of a root whose session compaction moved into archive segments:
    `turns` turns, each with the word zq<n>, in a 6000-byte session."""
    mem = claw_memory.open(str(root), extract=False, session_limit=6000, clock=lambda: 1800000000)
    for i in range(turns):
        mem.sessions.persist(SID, [(1, None, "turn %d: the word zq%d %s" % (i, i, "p" * 40))])
        mem.sessions.persist(SID, [(2, None, "noted %d" % i)], turn_completed=True)
    return mem


def _segments(d):
    """The archive segment files of a sessions folder, oldest first."""
    return sorted((n for n in os.listdir(d) if ".arc" in n),
                  key=lambda n: int(n.rsplit("arc", 1)[1]))


def test_verify_and_repair_the_archive(tmp_path, capsys):
    # verify said nothing of the archive: a segment its catalog lists but whose file is gone,
    # segments a damaged catalog no longer names (their turns unsearchable, for good), files
    # of no segment. Repair drops the first from the list, lists the second again (searchable
    # again), removes the third; verify then finds nothing.
    root = tmp_path / "root"
    _archived(root, 90).close()
    d = root / "sessions"
    log = "s_chat_web_local_default_0_964a2a51.log"
    segs = _segments(d)
    assert len(segs) >= 3, segs
    rc, out, _ = _run(capsys, "verify", str(root))
    assert rc == 0 and "nothing to repair" in out, out
    first = claw_memory.open(str(root), extract=False).search("zq0", 1)
    assert first and first[0]["archived"], first
    os.remove(d / segs[0])  # listed, gone
    cat = (d / "archive.list").read_bytes().split(b"\n")
    (d / "archive.list").write_bytes(b"\n".join(l for l in cat if not l.startswith(b"%d " % int(segs[1].rsplit("arc", 1)[1]))))
    (d / "s_chat_web_other_0_00000000.log.arc99").write_bytes(b'{"role":"user","content":"orphan"}\n')
    (root / "search" / (log + ".arc77.tix")).write_bytes(b"CTIX")
    before = _digest(root)
    rc, out, _ = _run(capsys, "verify", str(root), "--json")
    data = json.loads(out)
    assert rc == 1 and data["problems"] == [
        "sessions/%s: listed in archive.list but missing (its archived turns are gone), dropped from the list" % segs[0],
        "sessions/%s: an archive segment archive.list does not name (a damaged list), listed again" % segs[1],
        "sessions/s_chat_web_other_0_00000000.log.arc99: an archive file of no listed segment or session, removed",
        "search/%s.arc77.tix: a text index of no log or segment, removed" % log], data
    assert _digest(root) == before, "verify wrote nothing"
    said = re.search(rb"turn [0-9]+: the word zq[0-9]+", (d / segs[1]).read_bytes()).group().decode()
    word = said.rsplit(" ", 1)[1]
    got = claw_memory.open(str(root), extract=False).search(word, 5)
    assert not any(said in h["text"] for h in got), "(not listed: not searchable)"
    rc, out, _ = _run(capsys, "repair", str(root))
    assert rc == 0 and out.splitlines()[1:] == ["  repaired: " + p for p in data["problems"]], out
    rc, out, _ = _run(capsys, "verify", str(root))
    assert rc == 0 and "nothing to repair" in out, out
    assert not (d / "s_chat_web_other_0_00000000.log.arc99").exists()
    assert not (root / "search" / (log + ".arc77.tix")).exists()
    assert _segments(d) == segs[1:]
    mem = claw_memory.open(str(root), extract=False)
    got = mem.search(word, 5)
    assert got and got[0]["archived"] and said in got[0]["text"], got
    assert not any(h["text"].startswith("turn 0:") for h in mem.search("zq0", 5)), "its file is gone"
    mem.close()
    os.remove(d / segs[2])  # a listed segment gone, and nothing else
    rc, out, _ = _run(capsys, "verify", str(root), "--json")
    assert rc == 1 and json.loads(out)["problems"] == [
        "sessions/%s: listed in archive.list but missing (its archived turns are gone), dropped from the list" % segs[2]]
    rc, out, _ = _run(capsys, "repair", str(root))
    assert rc == 0 and "NOT repaired" not in out, out
    rc, out, _ = _run(capsys, "verify", str(root))
    assert rc == 0 and "nothing to repair" in out, out
    from claw_memory.session import archive

    assert int(segs[2].rsplit("arc", 1)[1]) not in [e[0] for e in archive.read(str(d))], "not listed"


def test_torn_tail_is_repaired_and_gone(tmp_path, capsys):
    # A torn record is read around on every open; repair rewrites the log without it, says
    # so, and verify then finds nothing.
    root = tmp_path / "root"
    _build(root)
    log = root / "sessions" / "s_chat_web_local_default_0_964a2a51.log"
    good = log.read_bytes()
    with open(log, "ab") as f:
        f.write(b'{"role":"user","content":"torn')
    rc, out, _ = _run(capsys, "verify", str(root), "--json")
    v = json.loads(out)
    assert rc == 1 and any("torn last record (30 bytes" in p for p in v["problems"]), v
    rc, out, _ = _run(capsys, "repair", str(root))
    assert rc == 0 and "repaired: " + v["problems"][0] in out
    assert log.read_bytes() == good, "the torn bytes are gone, the records untouched"
    rc, out, _ = _run(capsys, "verify", str(root), "--json")
    assert (rc, json.loads(out)["problems"]) == (0, [])


def test_fresh_root_verify_and_repair_agree(tmp_path, capsys):
    root = tmp_path / "fresh"
    for mode in ("full", "lite"):
        rc, out, _ = _run(capsys, "init", str(root / mode), "--mode", mode)
        assert rc == 0 and "created a %s data root" % mode in out
        before = _digest(root / mode)
        rc, out, _ = _run(capsys, "verify", str(root / mode), "--json")
        assert (rc, json.loads(out)["problems"]) == (0, []), out
        rc, out, _ = _run(capsys, "repair", str(root / mode))
        assert rc == 0 and "nothing needed repair" in out
        assert _digest(root / mode) == before, "repair wrote nothing"
    # a FULL root whose store was used but whose index went missing: that one is a problem
    mem = claw_memory.open(str(root / "used"))
    mem.store.store("User likes tea", "drink")
    mem.close()
    os.remove(root / "used" / "memory" / "memory_index.json")
    rc, out, _ = _run(capsys, "verify", str(root / "used"))
    assert rc == 1 and "memory_index.json: missing, rebuilt from the records" in out


def test_a_root_with_more_chats_than_the_cache_verifies_clean(tmp_path, capsys):
    # A completed turn leaves its pending file stale (no damage: session/pending.py), and
    # close() removes it only for the sessions still cached: verify listed every other one
    # ("removed by repair") and exit 1 on a root nothing had damaged
    root = tmp_path / "root"
    mem = claw_memory.open(str(root), extract=False)
    for i in range(8):
        sid = mem.chats.session_id("tg", "u%d" % i)
        mem.sessions.persist(sid, [(1, None, "hello %d" % i)])
        mem.sessions.persist(sid, [(2, None, "ok %d" % i)], turn_completed=True)
    mem.close()
    assert [f for f in os.listdir(root / "sessions") if f.endswith(".pending")], "the case: stale files"
    before = _digest(root)
    rc, out, _ = _run(capsys, "verify", str(root), "--json")
    assert (rc, json.loads(out)["problems"]) == (0, []), out
    rc, out, _ = _run(capsys, "repair", str(root))
    assert rc == 0 and "nothing needed repair" in out
    assert _digest(root) == before, "repair wrote nothing"
    # an unfinished turn is no problem either; a torn one is
    mem = claw_memory.open(str(root), extract=False)
    mem.sessions.persist(mem.chats.session_id("tg", "u0"), [(1, None, "and then")])
    mem.close()
    rc, out, _ = _run(capsys, "verify", str(root))
    assert rc == 0, out
    pend = [f for f in os.listdir(root / "sessions") if f.startswith("s_chat_tg_u0_") and f.endswith(".pending")]
    with open(root / "sessions" / pend[0], "ab") as f:
        f.write(b'{"role":"user","con')
    rc, out, _ = _run(capsys, "verify", str(root))
    assert rc == 1 and "a torn or damaged line of the unfinished turn" in out, out


def test_context_shows_one_request_and_its_tokens(tmp_path, capsys):
    root = tmp_path / "root"
    _build(root)
    rc, out, _ = _run(capsys, "context", str(root), "--json", "--system", "You are Claw.")
    ctx = json.loads(out)
    layers = {l["layer"]: l for l in ctx["layers"]}
    assert rc == 0 and ctx["session"] == SID and ctx["system"].startswith("You are Claw.\n\n## ")
    assert set(layers) == {"your system prompt", "Editable Profile Memory", "Long-term Memory",
                           "Session History", "Memory Skills", "Current Date", "tool definitions"}
    assert layers["tool definitions"]["tokens"] > layers["Memory Skills"]["tokens"] // 2
    assert layers["Session History"]["messages"] == len(ctx["messages"]) > 0
    assert ctx["total"] == sum(l["tokens"] for l in ctx["layers"])
    # the profile names its documents inside the data root: the same tokens wherever mounted
    other = tmp_path / "somewhere" / "deeper" / "root"
    shutil.copytree(root, other)
    rc, out, _ = _run(capsys, "context", str(other), "--json", "--system", "You are Claw.")
    assert json.loads(out)["layers"] == ctx["layers"] and str(tmp_path) not in json.loads(out)["system"]
    # the exact body a backend would receive
    for backend, key in (("openai", "messages"), ("anthropic", "messages"), ("openai_responses", "input")):
        rc, out, _ = _run(capsys, "context", str(root), "--request", "--backend", backend)
        body = json.loads(out)
        assert rc == 0 and body[key] and len(body["tools"]) == 9, backend
    rc, out, _ = _run(capsys, "context", str(root), "--session", "chat:web:nobody:x")
    assert rc != 0
    rc, out, _ = _run(capsys, "context", str(root))
    assert "== estimated tokens per layer ==" in out and "tool definitions" in out


def test_stats_lists_every_session(tmp_path, capsys):
    root = tmp_path / "root"
    _build(root)
    mem = claw_memory.open(str(root), extract=False)
    mem.sessions.persist("chat:web:other:default_01", [(1, None, "a second session")], turn_completed=True)
    mem.session_command("web", "local", "new later")  # no turn yet
    mem.close()
    rc, out, _ = _run(capsys, "stats", str(root), "--json")
    data = json.loads(out)
    layers = {l["layer"]: l for l in data["layers"]}
    assert rc == 0
    assert set(layers) == {"sessions", "profile", "long-term", "skills", "tool definitions"}
    assert layers["tool definitions"]["records"] == 9 and layers["tool definitions"]["tokens"] > 300
    assert layers["sessions"]["records"] == 6 and layers["sessions"]["tokens"] > 20
    assert layers["long-term"]["records"] == 2 and layers["long-term"]["tokens"] > 50
    assert layers["profile"]["bytes"] > 0
    sessions = {s["file"]: s for s in data["sessions"]}
    assert len(sessions) == 3
    by_id = {s["id"]: s for s in data["sessions"]}
    assert by_id[SID]["records"] == 5 and by_id[SID]["tokens"] == layers["sessions"]["tokens"]
    assert by_id["chat:web:local:later"]["records"] == 0
    assert by_id[None]["records"] == 1 and 0 < by_id[None]["tokens"] < by_id[SID]["tokens"]
    rc, out, _ = _run(capsys, "stats", str(root))
    assert "== every session" in out and "chat:web:local:later" in out and SID in out
    for s in data["sessions"]:
        assert s["file"] in out


def test_export_import_round_trip(tmp_path, capsys):
    root = tmp_path / "root"
    a = _build(root)
    bundle = tmp_path / "b.jsonl"
    rc, out, _ = _run(capsys, "export", str(root), "-o", str(bundle))
    assert rc == 0 and "2 items" in out
    lines = [json.loads(l) for l in bundle.read_text().splitlines()]
    assert lines[0]["type"] == "header" and lines[0]["version"] == 2 and lines[-1]["type"] == "end"
    new = tmp_path / "copy"
    rc, out, _ = _run(capsys, "import", str(bundle), str(new))
    assert rc == 0, out
    m1, m2 = claw_memory.open(str(root)), claw_memory.open(str(new))
    assert m2.sessions.messages(SID) == m1.sessions.messages(SID)
    items1 = {i["id"]: (i["content"], i["tags"]) for i in list(m1.store.list())}
    items2 = {i["id"]: (i["content"], i["tags"], i["access_count"]) for i in list(m2.store.list())}
    assert {k: v[:2] for k, v in items2.items()} == items1
    assert items2[a["id"]][2] == 1, "recall count carried over"
    assert m2.profile.read() == m1.profile.read()
    assert m2.chats.aliases("web", "local") == ("default_01", ["default_01"])
    rc, out, err = _run(capsys, "import", str(bundle), str(new))
    assert rc == 1 and "not empty" in err
    rc, out, err = _run(capsys, "import", str(bundle), str(new), "--replace")
    assert rc == 0


def test_the_archive_is_exported_and_imported(tmp_path, capsys):
    # A backup and restore lost every archived turn (export wrote the logs alone): now each
    # live segment goes in the bundle after its session, and import writes it back with its
    # catalog line (its time; new numbers); a version 1 bundle (no segments) still imports
    root = tmp_path / "root"
    mem = _archived(root, 60)
    want = mem.sessions.page(SID, 0, 50)["total"]
    hit = mem.search("zq0", 1)
    mem.close()
    assert hit and hit[0]["archived"], hit
    bundle = tmp_path / "b.jsonl"
    rc, out, _ = _run(capsys, "export", str(root), "-o", str(bundle))
    assert rc == 0 and " archive segment" in out, out
    lines = [json.loads(x) for x in bundle.read_text().splitlines()]
    segs = [x for x in lines if x["type"] == "segment"]
    assert segs and all(x["made_at"] == 1800000000 for x in segs), segs
    rc, out, err = _run(capsys, "import", str(bundle), str(tmp_path / "copy"))
    assert rc == 0, err
    m2 = claw_memory.open(str(tmp_path / "copy"), extract=False, session_limit=6000)
    assert m2.sessions.page(SID, 0, 50)["total"] == want
    got = m2.search("zq0", 1)
    assert [(h["archived"], h["text"]) for h in got] == [(True, hit[0]["text"])], got
    assert m2.sessions.messages(SID) == claw_memory.open(str(root), extract=False).sessions.messages(SID)
    m2.close()
    # version 1: no segment lines
    v1 = [dict(x, version=1) if x["type"] == "header" else x for x in lines
          if x["type"] != "segment" and not (x["type"] == "record" and x["backend"] == 0)]
    v1[-1]["lines"] = len(v1) - 2
    old = tmp_path / "v1.jsonl"
    old.write_text("".join(json.dumps(x) + "\n" for x in v1))
    rc, out, err = _run(capsys, "import", str(old), str(tmp_path / "copy1"))
    assert rc == 0, err
    # a segment line before its session, or with a bad time, is refused
    for bad in ({"type": "segment", "file": "s_x_00000000.log", "made_at": 1, "records": 0},
                dict(segs[0], made_at="yesterday")):
        broken = lines[:-1] + [bad, dict(lines[-1], lines=len(lines) - 1)]
        p = tmp_path / "bad.jsonl"
        p.write_text("".join(json.dumps(x) + "\n" for x in broken))
        rc, out, err = _run(capsys, "import", str(p), str(tmp_path / "copy2"))
        assert rc == 1 and "segment" in err, err


def test_export_goes_on_past_an_archive_segment_that_is_gone(tmp_path, capsys):
    # A segment the catalog lists whose file is gone (a card's lost file) failed the whole
    # export, naming a temporary copy: no backup of anything else. search and page() pass
    # it by, and so does export
    root = tmp_path / "root"
    _archived(root, 90).close()
    segs = _segments(root / "sessions")
    assert len(segs) >= 2, segs
    os.remove(root / "sessions" / segs[0])
    shutil.copytree(root, tmp_path / "seen")
    want = claw_memory.open(str(tmp_path / "seen"), extract=False).sessions.page(SID, 0, 50)["total"]
    bundle = tmp_path / "b.jsonl"
    rc, out, err = _run(capsys, "export", str(root), "-o", str(bundle))
    assert rc == 0, err
    lines = [json.loads(x) for x in bundle.read_text().splitlines()]
    assert len([x for x in lines if x["type"] == "segment"]) == len(segs) - 1
    rc, out, err = _run(capsys, "import", str(bundle), str(tmp_path / "copy"))
    assert rc == 0, err
    assert claw_memory.open(str(tmp_path / "copy"), extract=False).sessions.page(SID, 0, 50)["total"] == want


def test_an_archived_record_over_the_size_bound_is_left_out_as_a_logged_one_is(tmp_path, capsys):
    # A segment record over max_record_bytes (written by another program, or damaged) went
    # into the bundle as a line over 1 MiB, which import refuses: the backup could not be
    # restored. Export leaves it out, as it leaves out such a record of a log
    root = tmp_path / "root"
    _archived(root, 60).close()
    seg = _segments(root / "sessions")[0]
    with open(root / "sessions" / seg, "ab") as f:
        f.write(b'{"role":"user","content":"' + b"y" * (2 << 20) + b'"}\n')
    with open(root / "sessions" / seg.split(".arc")[0], "ab") as f:  # (its log)
        f.write(b'{"role":"user","content":"' + b"y" * (2 << 20) + b'"}\n')
    bundle = tmp_path / "b.jsonl"
    rc, out, err = _run(capsys, "export", str(root), "-o", str(bundle))
    assert rc == 0, err
    assert max(len(x) for x in bundle.read_bytes().splitlines()) < 1 << 20
    rc, out, err = _run(capsys, "import", str(bundle), str(tmp_path / "copy"))
    assert rc == 0, err


def test_a_file_whose_name_is_not_utf8_is_no_file_of_the_data_root(tmp_path, capsys):
    # A log-like name of bytes that are not UTF-8 (a card written by something else) made
    # inspect, stats and export end in a UnicodeEncodeError traceback, and search in exit 2:
    # no name the library or ESP-Claw writes is outside ASCII, so the reading commands pass
    # such a file by
    root = tmp_path / "root"
    _build(root)
    for d in ("sessions", "sessions/chat_map", "memory"):
        with open(os.fsencode(str(root / d)) + b"/s_\xff\xfe_00000000.log", "wb") as f:
            f.write(b'{"role":"user","content":"stray"}\n')
    for argv in (["inspect", str(root)], ["stats", str(root)], ["search", str(root), "tea"],
                 ["verify", str(root)], ["context", str(root)], ["recall", str(root), "tea"],
                 ["export", str(root), "-o", str(tmp_path / "b.jsonl")]):
        rc, out, err = _run(capsys, *argv)
        assert rc == 0 and "Error" not in err, (argv, rc, err)
        assert "stray" not in out, argv


def test_the_library_lists_a_folder_holding_names_that_are_not_utf8(tmp_path):
    # Under CPython the library itself (not only the CLI's copy, which leaves such names
    # out) lists a sessions folder that holds them: a pending file or a block marker of a
    # name that is not UTF-8 made the listing's walk end in a UnicodeEncodeError; a log of
    # one is listed as the file it is
    from claw_memory.session.format import file_name

    root = tmp_path / "root"
    mem = claw_memory.open(str(root), extract=False)
    sid = mem.chats.session_id("web", "u1")
    mem.sessions.persist(sid, [(1, None, "hello")], turn_completed=True)
    mem.close()
    d = os.fsencode(str(root / "sessions"))
    for name in (b"\xff.pending", b"\xfe.blocked", b"s_\xff\xfe_00000000.log",
                 b"s_\xff\xfe_00000000.log.pending", b"s_\xff\xfe_00000000.log.blocked"):
        with open(d + b"/" + name, "wb") as f:
            f.write(b'{"role":"user","content":"stray"}\n' if name.endswith(b".log") else b"")
    mem = claw_memory.open(str(root), extract=False)
    rows = {r["file"]: (r["id"], r["records"], r["blocked"]) for r in mem.sessions.list()}
    mem.close()
    assert rows == {file_name(sid): (sid, 1, False),
                    "s_\udcff\udcfe_00000000.log": (None, 1, True)}, rows


def test_a_chat_whose_id_holds_control_characters_survives_export_and_import(tmp_path, capsys):
    # The library takes chat ids as they come (rendered as data wherever shown); its own
    # backup must restore them.
    root = tmp_path / "root"
    mem = claw_memory.open(str(root), extract=False)
    chat = "u\x1b[2J\nnext"
    sid = mem.chats.session_id("web", chat)
    mem.sessions.persist(sid, [(1, None, "hello from a strange chat id")], turn_completed=True)
    mem.close()
    bundle = tmp_path / "b.jsonl"
    rc, out, _ = _run(capsys, "export", str(root), "-o", str(bundle))
    assert rc == 0
    new = tmp_path / "copy"
    rc, out, err = _run(capsys, "import", str(bundle), str(new))
    assert rc == 0, err
    m2 = claw_memory.open(str(new), extract=False)
    assert m2.chats.aliases("web", chat) == ("default_01", ["default_01"])
    assert m2.sessions.messages(sid)[0]["content"] == "hello from a strange chat id"
    m2.close()


def _twice(t, mark):
    # the bundle with its first line holding `mark` written twice (and counted: a bundle
    # another program wrote that way)
    lines = t.splitlines()
    i = next(k for k, line in enumerate(lines) if mark in line)
    lines = lines[: i + 1] + lines[i:]
    end = json.loads(lines[-1])
    end["lines"] += 1
    lines[-1] = json.dumps(end)
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("damage,message", [
    (lambda t: "this is not json\n" + t, "line 1: not JSON"),
    (lambda t: '{"type":"header","format":"other"}\n' + t, "not a claw-memory bundle"),
    (lambda t: t.replace('"version":2', '"version":99', 1), "version 99 is not supported"),
    (lambda t: "\n".join(t.splitlines()[:-1]) + "\n", "truncated"),
    (lambda t: t.replace('"kind":1', '"kind":9', 1), "kind 1..4"),
    (lambda t: t.replace('"type":"item"', '"type":"weird"', 1), "unknown line type"),
    (lambda t: "\n".join(l for l in t.splitlines() if '"type":"record"' not in l or "green" not in l) + "\n", "line count"),
    (lambda t: t[: len(t) // 2], "not JSON"),
    (lambda t: t.replace('"kind":1,', '"kind":1.0,', 1), "kind 1..4"),
    (lambda t: t.replace('"type":"record","file":"', '"type":"record","file":["', 1).replace('.log","kind"', '.log"],"kind"', 1),
     "record before its session line"),
    (lambda t: t.replace('"sessions":["default_01"]', '"sessions":["default_01","default_01"]', 1),
     "chat_map names a session twice"),
    (lambda t: _twice(t, '"type":"chat_map"'), "chat_map for chat:web:local appears twice"),
    (lambda t: _twice(t, '"type":"item"'), "appears twice"),
])
def test_import_refuses_garbage_and_writes_nothing(tmp_path, capsys, damage, message):
    root = tmp_path / "root"
    _build(root)
    bundle = tmp_path / "b.jsonl"
    main.main(["export", str(root), "-o", str(bundle)])
    capsys.readouterr()
    bad = tmp_path / "bad.jsonl"
    bad.write_text(damage(bundle.read_text()))
    target = tmp_path / "target"
    rc, out, err = _run(capsys, "import", str(bad), str(target))
    assert rc == 1
    assert message in err, err
    assert not target.exists(), "never half-imports"
    assert not [p for p in os.listdir(tmp_path) if p.startswith(".claw-import")], "no staging left"


def test_flash_checks_the_image_and_prints_esptool_commands(tmp_path, capsys):
    fw = tmp_path / "firmware.bin"
    fw.write_bytes(b"\xe9" + b"\x00" * 100)
    rc, out, _ = _run(capsys, "flash", str(fw), "--port", "/dev/ttyACM0", "--erase", "--dry-run")
    assert rc == 0
    lines = out.strip().splitlines()
    assert lines[0].endswith("--chip esp32s3 --port /dev/ttyACM0 --baud 460800 erase-flash")
    assert lines[1].endswith("write-flash 0 " + str(fw))
    bad = tmp_path / "notes.txt"
    bad.write_text("hello")
    rc, out, err = _run(capsys, "flash", str(bad), "--port", "/dev/ttyACM0")
    assert rc == 1 and "not an ESP32 firmware image" in err
    rc, out, err = _run(capsys, "flash", str(tmp_path / "missing.bin"), "--port", "x")
    assert rc == 1 and "no firmware file" in err


def test_usage_errors(capsys, monkeypatch):
    monkeypatch.delenv("CLAW_PORT", raising=False)
    rc, out, err = _run(capsys, "inspect")
    assert rc == 2 and "give a data root" in err
    rc, out, err = _run(capsys, "inspect", "/nonexistent/root")
    assert rc == 1 and "no data root" in err


def test_offline_demo_end_to_end(tmp_path):
    keep = tmp_path / "demo"
    r = subprocess.run([sys.executable, "-m", "claw_memory_cli.main", "demo", "--keep", str(keep)],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-2000:]
    out = r.stdout
    for want in ("[tool] memory_store", "\U0001f99e [Round 2] Memory update: [health;allergy]",
                 "[tool] profile_update", "== reboot", "after the reboot: 12 messages; long-term items: 3",
                 "[tool] memory_recall", "[tool] memory_forget", "Here is what I remember, Captain",
                 "Started a new session: holidays", "== claw-memory inspect", "Preferred name: Captain"):
        assert want in out, want
    inspected = out.split("== claw-memory inspect", 1)[1]
    assert "User lives in Lisbon" not in inspected.split("== items ==", 1)[1], "forgotten everywhere"
    assert "User is allergic to peanuts" in inspected
    assert "The demo's data root is kept in %s: try `claw-memory inspect %s`" % (keep / "root", keep / "root") in out
    assert sorted(os.listdir(keep / "root")) == ["memory", "search", "sessions"]
    # run again: the kept data root (its text indexes' folder too) is replaced
    r = subprocess.run([sys.executable, "-m", "claw_memory_cli.main", "demo", "--keep", str(keep)],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-2000:]


def test_demo_without_keep_says_how_to_keep(monkeypatch, capsys):
    from claw_memory_cli import demo

    made = []

    def fake_run(cmd, env=None):
        made.append(cmd[-1])
        claw_memory.open(cmd[-1]).close()  # the demo script writes a data root there
        return subprocess.CompletedProcess(cmd, 0)

    monkeypatch.setattr(demo.subprocess, "run", fake_run)
    rc = main.main(["demo"])
    out = capsys.readouterr().out
    assert rc == 0
    assert "removed now; `claw-memory demo --keep DIR` keeps it in DIR/root" in out
    assert made and not os.path.exists(made[0]), "the temporary root is gone, as it says"


def test_demo_refuses_an_endpoint_without_llm(monkeypatch, capsys):
    # `demo --base-url URL --model M` ran the offline demo and said nothing of the two
    from claw_memory_cli import demo

    monkeypatch.setattr(demo.subprocess, "run", lambda *a, **k: pytest.fail("the demo ran"))
    for extra in (["--base-url", "http://127.0.0.1:9"], ["--model", "m"]):
        rc = main.main(["demo"] + extra)
        err = capsys.readouterr().err
        assert rc == 2 and "%s is for a real endpoint: add --llm" % extra[0] in err, err


def test_export_skips_a_chat_map_with_a_strange_key(tmp_path, capsys):
    root = tmp_path / "root"
    _build(root)
    (root / "sessions" / "chat_map" / "chat_x_00000000.json").write_text('{"chat_key":42,"current_alias":"a","sessions":["a"]}')
    rc, out, err = _run(capsys, "export", str(root), "-o", str(tmp_path / "b.jsonl"))
    assert rc == 0 and "1 chat map" in out and "chat maps" not in out
    assert "warning: 1 chat map in %s could not be read" % root in err, err


def test_export_says_a_damaged_chat_map_leaves_its_sessions_without_their_chat(tmp_path, capsys):
    # A map whose bytes no longer hold its chat key: the key is lost, its sessions are
    # exported by file name only. Said, not silent (a restore would not give the chat back
    # its sessions).
    root = tmp_path / "root"
    _build(root)
    path = root / "sessions" / "chat_map" / chats.map_file("chat:web:local")
    path.write_bytes(b"\x00\xff not a map")
    rc, out, err = _run(capsys, "export", str(root), "-o", str(tmp_path / "b.jsonl"))
    assert rc == 0 and "0 chat maps" in out, out
    assert "warning: 1 chat map in %s could not be read" % root in err, err
    rc, out, err = _run(capsys, "export", str(root), "-o", str(tmp_path / "c.jsonl"), "--json")
    assert json.loads(out)["counts"]["chat_maps_unreadable"] == 1


def test_export_keeps_a_chat_map_with_a_stray_tail(tmp_path, capsys):
    # The library (as ESP-Claw's cJSON_Parse) reads a map's first JSON value, a stray tail
    # ignored: the export carries the same aliases, and the import gives the chat its sessions.
    root = tmp_path / "root"
    _build(root)
    mem = claw_memory.open(str(root))
    mem.session_command("web", "local", "new work")
    mem.close()
    path = root / "sessions" / "chat_map" / chats.map_file("chat:web:local")
    path.write_bytes(path.read_bytes() + b"x\x00junk")
    bundle = tmp_path / "b.jsonl"
    rc, out, _ = _run(capsys, "export", str(root), "-o", str(bundle))
    assert rc == 0 and "1 chat map" in out, out
    maps = [json.loads(l) for l in bundle.read_text().splitlines() if '"chat_map"' in l]
    assert maps == [{"type": "chat_map", "chat_key": "chat:web:local", "current_alias": "work",
                     "sessions": ["default_01", "work"]}]
    rc, out, _ = _run(capsys, "import", str(bundle), str(tmp_path / "copy"))
    assert rc == 0, out
    assert claw_memory.open(str(tmp_path / "copy")).chats.aliases("web", "local") == ("work", ["default_01", "work"])


def test_export_leaves_out_a_session_whose_deletion_a_power_cut_interrupted(tmp_path, capsys):
    # /session delete wrote its journal and was cut: the package finishes the deletion at the
    # map's next read, so the bundle holds neither the alias nor the session's records.
    root = tmp_path / "root"
    mem = claw_memory.open(str(root), extract=False)
    a = mem.chats.session_id("web", "alice")
    mem.sessions.persist(a, [(1, None, "my secret is 4711")])
    mem.sessions.persist(a, [(2, None, "noted")], turn_completed=True)
    mem.session_command("web", "alice", "new trip")
    b = mem.chats.session_id("web", "alice")
    mem.sessions.persist(b, [(1, None, "hello")])
    mem.sessions.persist(b, [(2, None, "hi")], turn_completed=True)
    mem.close()
    path = root / "sessions" / "chat_map" / chats.map_file("chat:web:alice")
    (root / "sessions" / "chat_map" / (path.name + ".deleting")).write_bytes(b"default_01")
    bundle = tmp_path / "b.jsonl"
    rc, out, _ = _run(capsys, "export", str(root), "-o", str(bundle))
    assert rc == 0, out
    lines = [json.loads(l) for l in bundle.read_text().splitlines()]
    assert [(l["current_alias"], l["sessions"]) for l in lines if l["type"] == "chat_map"] == [("trip", ["trip"])]
    assert not [l for l in lines if l["type"] == "record" and "4711" in l["message"]], "the deleted session's records"


def test_a_folder_that_is_not_a_data_root_is_said_so_and_left_alone(tmp_path, capsys):
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "notes.md").write_text("# notes\n")
    before = _digest(docs)
    for cmd in (["inspect"], ["stats"], ["verify"], ["repair"], ["export", "-o", str(tmp_path / "b.jsonl")],
                ["wipe", "--yes"]):
        rc, out, err = _run(capsys, cmd[0], str(docs), *cmd[1:])
        assert rc == 1, (cmd, err)
        assert "no data root at %s: it has no sessions/ or memory/ folder" % docs in err, err
        assert "claw-memory init %s" % docs in err
    assert _digest(docs) == before and sorted(os.listdir(docs)) == ["notes.md"], "nothing created"
    assert not (tmp_path / "b.jsonl").exists()
    rc, out, err = _run(capsys, "inspect", str(tmp_path / "missing"))
    assert rc == 1 and "no data root at %s: no such folder" % (tmp_path / "missing") in err
    assert not (tmp_path / "missing").exists()


def test_init_creates_a_data_root_once(tmp_path, capsys):
    root = tmp_path / "new" / "root"
    rc, out, _ = _run(capsys, "init", str(root))
    assert rc == 0 and "created a full data root at %s" % root in out
    assert sorted(os.listdir(root)) == ["memory", "search", "sessions"]
    assert sorted(os.listdir(root / "memory")) == [
        "MEMORY.md", "identity.md", "memory_digest.log", "memory_index.json", "memory_records.jsonl",
        "soul.md", "user.md"], "the store's initial files: the root shows it is FULL"
    before = _digest(root)
    rc, out, _ = _run(capsys, "init", str(root), "--json")
    assert rc == 0 and json.loads(out) == {"root": str(root), "created": False}
    assert _digest(root) == before
    rc, out, _ = _run(capsys, "inspect", str(root), "--json")
    data = json.loads(out)
    assert rc == 0 and data["sessions"] == [] and data["items"] == []
    assert data["profile"]["user"].startswith("# User")
    rc, out, _ = _run(capsys, "init", str(tmp_path / "lite"), "--mode", "lite")
    assert rc == 0 and (tmp_path / "lite" / "memory" / "MEMORY.md").exists()
    rc, out, _ = _run(capsys, "inspect", str(tmp_path / "lite"), "--json")
    assert json.loads(out)["mode"] == "lite"


def _files(root):
    return sorted(os.path.relpath(os.path.join(d, f), root) for d, _, fs in os.walk(root) for f in fs)


def test_wipe_one_layer_or_all_with_confirmation(tmp_path, capsys, monkeypatch):
    from claw_memory_cli import ui

    root = tmp_path / "root"
    _build(root)
    before = _digest(root)
    # no terminal to ask on: refused, nothing deleted
    rc, out, err = _run(capsys, "wipe", str(root), "--layer", "sessions")
    assert rc == 2 and "pass --yes" in err and _digest(root) == before
    # asked on a terminal: "n" keeps everything, "y" wipes
    monkeypatch.setattr(ui, "_tty", lambda stream: stream is sys.stdin)
    monkeypatch.setattr(sys, "stdin", __import__("io").StringIO("n\n"))
    rc, out, err = _run(capsys, "wipe", str(root), "--layer", "sessions")
    assert rc == 1 and "nothing wiped" in out and "[y/N]" in err and _digest(root) == before
    monkeypatch.setattr(sys, "stdin", __import__("io").StringIO("y\n"))
    rc, out, err = _run(capsys, "wipe", str(root), "--layer", "sessions")
    assert rc == 0 and "wiped the sessions layer" in out
    assert "wipe the sessions layer of the data root at %s: 5 files" % root in err  # (.tix too)
    files = _files(root)
    assert not [f for f in files if f.startswith(("sessions", "search"))], files
    assert os.path.isdir(root / "sessions") and os.path.isdir(root / "search")
    assert "memory/memory_records.jsonl" in files and "memory/user.md" in files
    rc, out, _ = _run(capsys, "wipe", str(root), "--layer", "profile", "--yes")
    assert rc == 0 and [f for f in _files(root) if f.endswith(("user.md", "soul.md", "identity.md"))] == []
    rc, out, _ = _run(capsys, "wipe", str(root), "--layer", "long-term", "-y")
    assert rc == 0 and _files(root) == []
    rc, out, _ = _run(capsys, "wipe", str(root), "--yes")
    assert rc == 0 and "nothing to wipe" in out
    assert sorted(os.listdir(root)) == ["memory", "search", "sessions"], "still a data root"
    rc, out, _ = _run(capsys, "inspect", str(root), "--json")
    assert rc == 0 and json.loads(out)["items"] == []
    _build(tmp_path / "two")
    rc, out, _ = _run(capsys, "reset", str(tmp_path / "two"), "--yes", "--json")
    assert rc == 0 and json.loads(out)["layer"] == "all" and _files(tmp_path / "two") == []


def test_export_to_stdout(tmp_path, capsys):
    root = tmp_path / "root"
    _build(root)
    rc, out, err = _run(capsys, "export", str(root), "-o", "-")
    assert rc == 0
    lines = [json.loads(l) for l in out.splitlines()]
    assert lines[0]["type"] == "header" and lines[-1]["type"] == "end"
    assert "exported %s to stdout" % root in err
    bundle = tmp_path / "b.jsonl"
    bundle.write_text(out)
    rc, out, err = _run(capsys, "import", str(bundle), str(tmp_path / "copy"))
    assert rc == 0, err


def test_root_and_port_are_not_mixed(tmp_path, capsys, monkeypatch):
    root = tmp_path / "root"
    _build(root)
    rc, out, err = _run(capsys, "inspect", str(root), "--port", "/dev/ttyACM0")
    assert rc == 2 and "not both" in err
    rc, out, err = _run(capsys, "inspect", str(root), "--device-root", "/flash")
    assert rc == 2 and "--device-root is for a board" in err
    monkeypatch.delenv("CLAW_PORT", raising=False)
    rc, out, err = _run(capsys, "stats")
    assert rc == 2 and "-p PORT" in err and "CLAW_PORT" in err
    # CLAW_PORT names the board when no ROOT is given; a ROOT wins over it
    monkeypatch.setenv("CLAW_PORT", "/dev/nonexistent-claw-board")
    rc, out, err = _run(capsys, "stats")
    assert rc == 3 and "no board at /dev/nonexistent-claw-board" in err
    rc, out, err = _run(capsys, "stats", str(root))
    assert rc == 0
    rc, out, err = _run(capsys, "deploy")
    assert rc == 3 and "no board at /dev/nonexistent-claw-board" in err
    monkeypatch.delenv("CLAW_PORT")
    rc, out, err = _run(capsys, "deploy")
    assert rc == 2 and "-p PORT" in err


def test_the_query_commands_take_the_board_from_claw_port(tmp_path, capsys, monkeypatch):
    # With CLAW_PORT set, `search "query"`, `recall "query"` and `why ID` took the one
    # word for ROOT and asked for the query (exit 2): only -p PORT made it the query
    root = tmp_path / "root"
    _build(root)
    monkeypatch.setenv("CLAW_PORT", "/dev/nonexistent-claw-board")
    for argv in (["search", "green tea"], ["recall", "green tea"], ["why", "mem-1-0001"]):
        rc, out, err = _run(capsys, *argv)
        assert rc == 3 and "no board at /dev/nonexistent-claw-board" in err, (argv, err)
    rc, out, err = _run(capsys, "search", str(root), "green tea")  # a ROOT wins over it
    assert rc == 0 and "I like green tea" in out, err
    rc, out, err = _run(capsys, "search", str(root))  # a data root folder alone: no query
    assert rc == 2 and "give the query text" in err, err


def test_port_auto_without_a_board(capsys, monkeypatch):
    import serial.tools.list_ports

    monkeypatch.setattr(serial.tools.list_ports, "comports", lambda: [])
    rc, out, err = _run(capsys, "inspect", "-p", "auto")
    assert rc == 3 and "no board found: no USB serial port" in err


def test_export_of_a_lite_root_keeps_its_memory_md(tmp_path, capsys):
    root = tmp_path / "lite"
    claw_memory.open(str(root), "lite").close()
    (root / "memory" / "MEMORY.md").write_text("# Long-term Memory\n\n- Ada likes tea\n")
    before = _digest(root)
    bundle = tmp_path / "b.jsonl"
    rc, out, err = _run(capsys, "export", str(root), "-o", str(bundle))
    assert rc == 0, err
    md = [json.loads(l) for l in bundle.read_text().splitlines() if '"memory_md"' in l]
    assert md == [{"type": "memory_md", "content": "# Long-term Memory\n\n- Ada likes tea\n"}]
    assert _digest(root) == before
    rc, out, err = _run(capsys, "import", str(bundle), str(tmp_path / "copy"))
    assert rc == 0, err
    assert (tmp_path / "copy" / "memory" / "MEMORY.md").read_text() == "# Long-term Memory\n\n- Ada likes tea\n"


def test_every_view_agrees_with_open_on_the_mode_of_a_root(tmp_path, capsys):
    full_tools = len(claw_memory.open(str(tmp_path / "probe"), extract=False).tools())
    lite_tools = len(claw_memory.open(str(tmp_path / "probe2"), "lite", extract=False).tools())
    assert full_tools > lite_tools

    def views(root):
        rc, out, _ = _run(capsys, "inspect", str(root), "--json")
        mode = json.loads(out)["mode"]
        rc, out, _ = _run(capsys, "context", str(root), "--json")
        from claw_memory import inspect as insp

        insp._last = None
        return mode, len(json.loads(out)["tools"]), insp._mem(str(root)).mode

    for mode, tools in (("full", full_tools), ("lite", lite_tools)):
        root = tmp_path / mode
        rc, out, _ = _run(capsys, "init", str(root), "--mode", mode)
        assert rc == 0 and "created a %s data root" % mode in out
        assert views(root) == (mode, tools, mode), "init"
        for layer in ("long-term", "all"):
            assert _run(capsys, "wipe", str(root), "--layer", layer, "--yes")[0] == 0
            assert views(root) == (mode, tools, mode), "after wipe --layer %s" % layer
    # A root the agent opened with claw_memory.open() and nothing else: FULL, as open()'s default.
    claw_memory.open(str(tmp_path / "agent"), extract=False).close()
    assert views(tmp_path / "agent") == ("full", full_tools, "full")


def test_context_and_inspect_follow_the_chat_map(tmp_path, capsys):
    root = tmp_path / "root"
    _build(root)
    mem = claw_memory.open(str(root), extract=False)
    assert "project-a" in mem.session_command("web", "local", "new project-a")
    mem.close()
    rc, out, _ = _run(capsys, "context", str(root), "--json")
    assert rc == 0 and json.loads(out)["session"] == "chat:web:local:project-a", "the next request's session"
    assert json.loads(out)["messages"] == []
    rc, out, _ = _run(capsys, "context", str(root), "--session", SID, "--json")
    assert rc == 0 and json.loads(out)["session"] == SID, "--session still picks one"
    rc, out, _ = _run(capsys, "inspect", str(root), "--json")
    ids = [s["id"] for s in json.loads(out)["sessions"]]
    assert ids == [SID, "chat:web:local:project-a"], ids


def test_demo_keep_refuses_a_root_that_holds_more_than_a_data_root(tmp_path, capsys):
    # DIR/root is what --keep replaces: beside sessions/ and memory/, the user's own files
    # make it no kept demo, and nothing is removed.
    root = tmp_path / "demo" / "root"
    (root / "sessions").mkdir(parents=True)
    (root / "memory").mkdir()
    (root / "thesis.md").write_text("mine")
    rc = main.main(["demo", "--keep", str(tmp_path / "demo")])
    assert rc != 0
    assert "holds more than a data root (thesis.md): nothing removed" in capsys.readouterr().err
    assert (root / "thesis.md").read_text() == "mine" and (root / "sessions").is_dir()


def test_export_never_writes_over_a_file_or_a_link_beside_the_bundle(tmp_path, capsys):
    # The bundle is written to a fresh temp file first: a user's `OUT.tmp`, or a link of that
    # name pointing elsewhere, is left as it was.
    root = tmp_path / "root"
    _build(root)
    mine = tmp_path / "b.jsonl.tmp"
    mine.write_text("mine")
    target = tmp_path / "target.txt"
    target.write_text("elsewhere")
    os.symlink(target, tmp_path / "c.jsonl.tmp")
    for out in ("b.jsonl", "c.jsonl"):
        rc, _, _ = _run(capsys, "export", str(root), "-o", str(tmp_path / out))
        assert rc == 0
        assert (tmp_path / out).read_text().startswith('{"type":"header"')
    assert mine.read_text() == "mine" and target.read_text() == "elsewhere"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["b.jsonl", "b.jsonl.tmp", "c.jsonl", "c.jsonl.tmp",
                                                          "root", "target.txt"]
