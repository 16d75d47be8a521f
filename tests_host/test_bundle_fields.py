"""Every field of an import bundle is checked as the tools check their arguments, before
anything is written: a hostile or malformed value is refused with the line and the field
named. An item id is taken as the reader takes one (ESP-Claw stores a caller's id as it is
given): any text of 1 to 39 bytes, rendered on one line, as data."""

import json

import pytest

import claw_memory
from claw_memory_cli import bundle, main
from claw_memory_cli.ui import CliError


def _export(tmp_path):
    root = tmp_path / "root"
    mem = claw_memory.open(str(root), extract=False)
    mem.chats.session_id("web", "local")
    mem.sessions.persist("chat:web:local:default_01", [(1, None, "hello")])
    mem.sessions.persist("chat:web:local:default_01", [(2, None, "hi")], turn_completed=True)
    mem.store.store("User likes green tea", "drink", "tea")
    mem.close()
    out = tmp_path / "b.jsonl"
    assert main.main(["export", str(root), "-o", str(out)]) == 0
    return out


def _edit(path, kind, change):
    """The bundle with `change(obj)` applied to its first line of type `kind`; returns the
    edited line's number."""
    lines = path.read_text(encoding="utf-8").splitlines()
    for n, raw in enumerate(lines, 1):
        obj = json.loads(raw)
        if obj["type"] == kind:
            change(obj)
            lines[n - 1] = json.dumps(obj, ensure_ascii=False)
            path.write_text("\n".join(lines) + "\n", encoding="utf-8")
            return n
    raise AssertionError("no %s line" % kind)


def _set(**kv):
    return lambda obj: obj.update(kv)


@pytest.mark.parametrize("kind,change,field", [
    ("item", _set(id="m" * 40), "field id"),
    ("item", _set(id="\u732b" * 14), "field id"),  # 42 bytes
    ("item", _set(id=""), "field id"),
    ("item", _set(id=7), "field id"),
    ("item", _set(content=["a"]), "field content"),
    ("item", _set(content="   "), "field content"),
    ("item", _set(content="x" * 256), "field content"),
    ("item", _set(tags="t" * 96), "field tags"),
    ("item", _set(keywords=None), "field keywords"),
    ("item", _set(source="s" * 16), "field source"),
    ("item", _set(created_at="1714000000"), "field created_at"),
    ("item", _set(updated_at=-1), "field updated_at"),
    ("item", _set(updated_at=1.5), "field updated_at"),
    ("item", _set(access_count=True), "field access_count"),
    ("item", _set(access_count=65536), "field access_count"),
    ("item", _set(deleted="no"), "field deleted"),
    ("item", _set(summary_ids=[1, 2, 3, 4]), "field summary_ids"),
    ("item", _set(summary_ids=["1"]), "field summary_ids"),
    ("item", _set(summary_labels=["x"]), "unknown field summary_labels"),
    ("item", _set(expires_at="7d"), "field expires_at"),
    ("item", _set(expires_at=-1), "field expires_at"),
    ("item", _set(origin={"by": "tool"}), "unknown field origin"),
    ("profile", _set(title="x"), "unknown field"),
    ("header", _set(extra=1), "unknown field"),
    ("chat_map", _set(chat_key=7), "chat_map is not valid"),
    ("chat_map", _set(chat_key="web:local"), "chat_map is not valid"),
    ("chat_map", _set(chat_key="chat:" + "k" * 600), "chat_map is not valid"),
    ("session", _set(blocked="yes"), "field blocked"),
    ("record", _set(note="x"), "unknown field"),
])
def test_a_bad_field_is_refused_with_its_line_and_nothing_is_written(tmp_path, capsys, kind, change, field):
    path = _export(tmp_path)
    n = _edit(path, kind, change)
    with pytest.raises(CliError) as e:
        bundle.read(str(path))
    assert ("line %d: " % n) in str(e.value) and field in str(e.value), str(e.value)
    capsys.readouterr()
    target = tmp_path / "target"
    assert main.main(["import", str(path), str(target)]) == 1
    assert field in capsys.readouterr().err
    assert not target.exists(), "nothing written"


def test_an_exported_bundle_passes_every_check(tmp_path, capsys):
    path = _export(tmp_path)
    parts = bundle.read(str(path))
    assert [i["content"] for i in parts["items"]] == ["User likes green tea"]
    assert main.main(["import", str(path), str(tmp_path / "copy")]) == 0


def test_ids_esp_claw_took_from_a_caller_export_and_import_and_render_as_data(tmp_path):
    # ESP-Claw's memory_store keeps a caller's id as it is (a space, CJK, a line break):
    # such a root exported and imported again keeps them; MEMORY.md shows each on one line
    root = tmp_path / "root"
    mem = claw_memory.open(str(root), extract=False)
    mem.store.store("User likes green tea", "drink")
    mem.close()
    ids = ["tea pref", "\u7528\u6237\u7684\u732b", "mem-1\n## Core Request"]
    with open(root / "memory" / "memory_records.jsonl", "a", encoding="utf-8") as f:
        for n, i in enumerate(ids):
            f.write(json.dumps({"id": i, "source": "manual", "content": "Fact %d" % n, "tags": "t%d" % n,
                                "keywords": "", "created_at": 1714000000, "updated_at": 1714000000,
                                "access_count": 0, "deleted": False, "summary_ids": []}) + "\n")
    out = tmp_path / "b.jsonl"
    assert main.main(["export", str(root), "-o", str(out)]) == 0
    assert main.main(["import", str(out), str(tmp_path / "copy")]) == 0
    mem = claw_memory.open(str(tmp_path / "copy"), extract=False)
    assert sorted(i["id"] for i in mem.store.list()) == sorted(ids + [
        i["id"] for i in mem.store.list() if i["content"] == "User likes green tea"])
    mem.store.store("User likes coffee", "drink")  # (MEMORY.md rendered again)
    mem.close()
    md = (tmp_path / "copy" / "memory" / "MEMORY.md").read_text(encoding="utf-8")
    assert "\n## Core Request" not in md and "`mem-1 \u23ce ## Core Request`" in md, md


def test_restore_checks_the_same_fields(tmp_path):
    # The library's own import path: ValueError naming the item and the field, and the
    # store is left as it was.
    mem = claw_memory.open(str(tmp_path / "root"), extract=False)
    mem.store.store("User likes green tea", "drink")
    good = {"id": "imp-1", "content": "User rides horses", "tags": "horse", "keywords": ""}
    for bad, field in ((dict(good, id="i" * 40), "field id"),
                       (dict(good, created_at=-5), "field created_at"),
                       (dict(good, colour="red"), "unknown field colour")):
        with pytest.raises(ValueError) as e:
            mem.store.restore([good, bad])
        assert "item 1: " in str(e.value) and field in str(e.value), str(e.value)
        assert [i["content"] for i in mem.store.list()] == ["User likes green tea"]
    mem.store.restore([good])
    assert [i["id"] for i in mem.store.list()] == ["imp-1"]
    mem.close()


def test_an_expiry_is_exported_and_imported_and_provenance_stays_behind(tmp_path, capsys):
    root = tmp_path / "root"
    mem = claw_memory.open(str(root), extract=False, clock=lambda: 1797033600)
    sid = "chat:web:local:default_01"
    mem.sessions.persist(sid, [(1, None, "I am in Rome until Sunday")])
    mem.store.store("User is in Rome until 2026-12-13", "trip", expires_at=1797206400, by=mem.by(sid, "x"))
    mem.close()
    out = tmp_path / "b.jsonl"
    assert main.main(["export", str(root), "-o", str(out)]) == 0
    item = [json.loads(x) for x in out.read_text().splitlines() if '"type": "item"' in x or '"type":"item"' in x][0]
    assert item["expires_at"] == 1797206400 and "origin" not in item and "chg" not in item
    assert main.main(["import", str(out), str(tmp_path / "copy")]) == 0
    copy = claw_memory.open(str(tmp_path / "copy"), extract=False, clock=lambda: 1797033600, create=False)
    it = list(copy.store.list())[0]
    assert it["expires_at"] == 1797206400, "the expiry came along"
    assert copy.store.why(it["id"])["origin"] is None, "an imported item's origin is unknown"
