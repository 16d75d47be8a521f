"""The host CLI on data roots built with the package under CPython: inspect, verify, repair,
stats, export/import, flash, demo."""

import hashlib
import json
import os
import subprocess
import sys

import pytest

import claw_memory
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
    for want in ("== sessions ==", "s_chat_web_local_default_0_964a2a51.log", "I like green tea",
                 "[calls memory_store]", "User likes green tea", "== label catalog ==", "Name: Ada"):
        assert want in out, want
    rc, out, err = _run(capsys, "inspect", str(root), "--json")
    data = json.loads(out)
    assert data["sessions"][0]["records"] == 5 and data["sessions"][0]["pending"] == 1
    assert [r["role"] for r in data["sessions"][0]["history"]] == ["user", "assistant", "tool", "assistant", "user"]
    assert {i["content"]: i["access"] for i in data["items"]}["User likes green tea"] == 1, "recall counted"
    assert sorted(l["label"] for l in data["labels"]) == ["city", "drink"]
    assert _digest(root) == before, "inspect changed nothing"


def test_verify_and_repair(tmp_path, capsys):
    root = tmp_path / "root"
    _build(root)
    rc, out, _ = _run(capsys, "verify", str(root))
    assert rc == 0 and "nothing to repair" in out
    log = root / "sessions" / "s_chat_web_local_default_0_964a2a51.log"
    with open(log, "ab") as f:
        f.write(b'{"role":"user","content":"torn')
    (root / "memory" / "memory_index.json").write_bytes(b"{corrupt")
    with open(root / "memory" / "memory_records.jsonl", "ab") as f:
        f.write(b"\x00garbage line\n")
    before = _digest(root)
    rc, out, _ = _run(capsys, "verify", str(root), "--json")
    data = json.loads(out)
    assert rc == 1
    assert any("torn_tail_bytes" in p for p in data["problems"])
    assert any("memory_index.json" in p for p in data["problems"])
    assert any("unreadable line" in p for p in data["problems"])
    assert _digest(root) == before, "verify wrote nothing"
    rc, out, _ = _run(capsys, "repair", str(root))
    assert rc == 0 and "repaired:" in out
    rc, out, _ = _run(capsys, "verify", str(root))
    assert "memory_index.json" not in out
    mem = claw_memory.open(str(root))
    assert len(list(mem.store.list())) == 2 and len(mem.sessions.messages(SID)) == 5


def test_stats(tmp_path, capsys):
    root = tmp_path / "root"
    _build(root)
    rc, out, _ = _run(capsys, "stats", str(root), "--json")
    layers = {l["layer"]: l for l in json.loads(out)["layers"]}
    assert rc == 0
    assert set(layers) == {"sessions", "profile", "long-term", "skills"}
    assert layers["sessions"]["records"] == 5 and layers["sessions"]["tokens"] > 20
    assert layers["long-term"]["records"] == 2 and layers["long-term"]["tokens"] > 50
    assert layers["profile"]["bytes"] > 0
    rc, out, _ = _run(capsys, "stats", str(root))
    assert "layer" in out and "sessions" in out


def test_export_import_round_trip(tmp_path, capsys):
    root = tmp_path / "root"
    a = _build(root)
    bundle = tmp_path / "b.jsonl"
    rc, out, _ = _run(capsys, "export", str(root), "-o", str(bundle))
    assert rc == 0 and "2 items" in out
    lines = [json.loads(l) for l in bundle.read_text().splitlines()]
    assert lines[0]["type"] == "header" and lines[0]["version"] == 1 and lines[-1]["type"] == "end"
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


@pytest.mark.parametrize("damage,message", [
    (lambda t: "this is not json\n" + t, "line 1: not JSON"),
    (lambda t: '{"type":"header","format":"other"}\n' + t, "not a claw-memory bundle"),
    (lambda t: t.replace('"version":1', '"version":99', 1), "version 99 is not supported"),
    (lambda t: "\n".join(t.splitlines()[:-1]) + "\n", "truncated"),
    (lambda t: t.replace('"kind":1', '"kind":9', 1), "kind 1..4"),
    (lambda t: t.replace('"type":"item"', '"type":"weird"', 1), "unknown line type"),
    (lambda t: "\n".join(l for l in t.splitlines() if '"type":"record"' not in l or "green" not in l) + "\n", "line count"),
    (lambda t: t[: len(t) // 2], "not JSON"),
    (lambda t: t.replace('"kind":1,', '"kind":1.0,', 1), "kind 1..4"),
    (lambda t: t.replace('"type":"record","file":"', '"type":"record","file":["', 1).replace('.log","kind"', '.log"],"kind"', 1),
     "record before its session line"),
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


def test_usage_errors(capsys):
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


def test_export_skips_a_chat_map_with_a_strange_key(tmp_path, capsys):
    root = tmp_path / "root"
    _build(root)
    (root / "sessions" / "chat_map" / "chat_x_00000000.json").write_text('{"chat_key":42,"current_alias":"a","sessions":["a"]}')
    rc, out, err = _run(capsys, "export", str(root), "-o", str(tmp_path / "b.jsonl"))
    assert rc == 0 and "1 chat maps" in out
