"""Every CLI command that removes files removes them only from a data root, and only a data
root's own files: any other folder, or a data root with a file of the user's inside, is
refused with a message that names it, and nothing is deleted (claw_memory_cli/guard.py)."""

import hashlib
import os

import pytest

import claw_memory
import claw_memory.session
from claw_memory_cli import guard, main

SID = "chat:web:local:default_01"


def _tree(root):
    """Every path and its bytes under `root` (folders too)."""
    h = hashlib.sha256()
    for dirpath, dirs, files in sorted(os.walk(root)):
        h.update(dirpath.encode())
        for f in sorted(files):
            p = os.path.join(dirpath, f)
            with open(p, "rb") as fh:
                h.update(p.encode() + fh.read())
    return h.hexdigest()


def _data_root(root):
    mem = claw_memory.open(str(root), extract=False)
    mem.chats.session_id("web", "local")
    mem.sessions.persist(SID, [(1, None, "hi")])
    mem.sessions.persist(SID, [(2, None, "hello")], turn_completed=True)
    mem.store.store("User likes tea", "drink")
    mem.close()


def _bundle(tmp_path, capsys):
    src = tmp_path / "src"
    _data_root(src)
    bundle = tmp_path / "b.jsonl"
    assert main.main(["export", str(src), "-o", str(bundle)]) == 0
    capsys.readouterr()
    return str(bundle)


def _user_folder(p):
    p.mkdir()
    (p / "thesis.md").write_text("years of work\n")
    (p / "photos").mkdir()
    (p / "photos" / "a.jpg").write_bytes(b"\xff\xd8")


def _root_with_stranger(p, rel):
    _data_root(p)
    f = p.joinpath(*rel.split("/"))
    f.parent.mkdir(parents=True, exist_ok=True)
    f.write_text("mine\n")


# (name, the command for a target folder): every command that deletes or replaces files.
def _commands(bundle):
    return [
        ("import --replace", lambda t: ["import", bundle, t, "--replace"]),
        ("wipe", lambda t: ["wipe", t, "--yes"]),
        ("wipe", lambda t: ["wipe", t, "--yes", "--layer", "sessions"]),
        ("wipe", lambda t: ["wipe", t, "--yes", "--layer", "long-term"]),
        ("wipe", lambda t: ["wipe", t, "--yes", "--layer", "profile"]),
        ("demo --keep", None),
    ]


@pytest.mark.parametrize("kind", ["user folder", "stranger in memory", "stranger in sessions",
                                  "folder in sessions", "stranger in chat_map"])
def test_every_removing_command_refuses_what_is_not_a_data_root(tmp_path, capsys, kind):
    bundle = _bundle(tmp_path, capsys)
    for n, (what, argv) in enumerate(_commands(bundle)):
        base = tmp_path / ("t%d" % n)
        base.mkdir()
        target = base / "root"  # demo --keep BASE replaces BASE/root
        if kind == "user folder":
            _user_folder(target)
            named = "it has no sessions/ or memory/ folder"
        else:
            rel = {"stranger in memory": "memory/notes.txt", "stranger in sessions": "sessions/todo.txt",
                   "folder in sessions": "sessions/backup/old.log",
                   "stranger in chat_map": "sessions/chat_map/readme.txt"}[kind]
            _root_with_stranger(target, rel)
            named = (rel.rsplit("/", 1)[0] + "/") if kind == "folder in sessions" else rel
        before = _tree(base)
        args = ["demo", "--keep", str(base)] if argv is None else argv(str(target))
        rc = main.main(args)
        err = capsys.readouterr().err
        assert rc == 1, (args, err)
        assert str(target) in err and named in err, (args, err)
        assert kind == "user folder" or what in err, (args, err)
        assert len(err.strip().splitlines()) == 1, err
        assert _tree(base) == before, (args, "nothing deleted")


def test_a_data_root_with_only_its_own_files_is_still_replaced_and_wiped(tmp_path, capsys):
    bundle = _bundle(tmp_path, capsys)
    target = tmp_path / "root"
    _data_root(target)
    (target / "README.txt").write_text("beside the data root, not inside it\n")
    # every file a data root may hold, leftovers of interrupted writes included, belongs
    sess = claw_memory.session.file_name("chat:a:b:c")
    for rel in ("memory/.compact", "memory/memory_index.json.tmp", "memory/MEMORY.md.tmp",
                "sessions/.deleting", "sessions/%s.blocked" % sess, "sessions/%s.commit" % sess,
                "sessions/%s.idx.tmp" % sess, "sessions/chat_map/chat_x_00000000.json.deleting"):
        assert guard.belongs(rel), rel
    assert main.main(["import", bundle, str(target), "--replace"]) == 0, capsys.readouterr().err
    assert (target / "README.txt").read_text().startswith("beside"), "only sessions/ and memory/ replaced"
    assert claw_memory.open(str(target)).sessions.messages(SID)[0]["content"] == "hi"
    assert main.main(["wipe", str(target), "--yes"]) == 0
    assert (target / "README.txt").exists()


def test_import_into_a_file_or_a_folder_with_files_without_replace(tmp_path, capsys):
    bundle = _bundle(tmp_path, capsys)
    f = tmp_path / "file"
    f.write_text("x")
    assert main.main(["import", bundle, str(f)]) == 1
    assert "%s is a file" % f in capsys.readouterr().err and f.read_text() == "x"
    d = tmp_path / "docs"
    _user_folder(d)
    before = _tree(d)
    assert main.main(["import", bundle, str(d)]) == 1
    assert "not empty" in capsys.readouterr().err and _tree(d) == before
    empty = tmp_path / "empty"
    empty.mkdir()
    assert main.main(["import", bundle, str(empty)]) == 0
    assert sorted(os.listdir(empty)) == ["memory", "search", "sessions"]


def test_import_replace_that_fails_midway_leaves_the_old_data_root(tmp_path, capsys, monkeypatch):
    # A rename of the swap fails (EIO) at each of its six steps (three folders aside, three
    # in): the command fails, and the data root is the old one, whole, with nothing left
    # aside; then the import goes through.
    bundle = _bundle(tmp_path, capsys)
    target = tmp_path / "root"
    mem = claw_memory.open(str(target), extract=False)
    mem.store.store("The old root's own fact", "old")
    mem.close()
    before = _tree(target)
    real = os.rename
    for n in range(1, 7):
        calls = [0]

        def failing(a, b, n=n, calls=calls):
            if os.path.basename(str(b)) in ("sessions", "memory", "search", "sessions.replaced",
                                            "memory.replaced", "search.replaced"):
                calls[0] += 1
                if calls[0] == n:
                    raise OSError(5, "EIO")
            return real(a, b)

        monkeypatch.setattr(os, "rename", failing)
        rc = main.main(["import", bundle, str(target), "--replace"])
        monkeypatch.setattr(os, "rename", real)
        capsys.readouterr()
        assert rc != 0, n
        assert _tree(target) == before, "rename %d failed: the old data root, whole" % n
    assert main.main(["import", bundle, str(target), "--replace"]) == 0
    assert sorted(os.listdir(target)) == ["memory", "search", "sessions"]
    assert [i["content"] for i in claw_memory.open(str(target)).store.list()] == ["User likes tea"]


@pytest.mark.parametrize("order", ["listed", "reversed"])
def test_a_wipe_that_fails_midway_leaves_the_root_in_its_mode(tmp_path, capsys, monkeypatch, order):
    # The long-term layer of a FULL root: whichever removal fails, what is left still reads as
    # FULL (a FULL root's MEMORY.md, derived, goes first), whatever order the folder lists its
    # files in; then the wipe goes through.
    from claw_memory.paths import Layout

    if order == "reversed":
        listing = guard.listing
        monkeypatch.setattr(guard, "listing", lambda root: (listing(root)[0], listing(root)[1][::-1]))
    real = os.remove
    n = 0
    while True:
        n += 1
        root = tmp_path / ("root%d" % n)
        _data_root(root)
        calls = [0]

        def failing(p, n=n, calls=calls):
            if "%smemory%s" % (os.sep, os.sep) in str(p):
                calls[0] += 1
                if calls[0] == n:
                    raise OSError(5, "EIO")
            return real(p)

        monkeypatch.setattr(os, "remove", failing)
        rc = main.main(["wipe", str(root), "--layer", "long-term", "--yes"])
        monkeypatch.setattr(os, "remove", real)
        capsys.readouterr()
        if rc == 0:
            break
        assert Layout(str(root)).mode() == "full", "removal %d failed" % n
        assert main.main(["wipe", str(root), "--layer", "long-term", "--yes"]) == 0
        assert Layout(str(root)).mode() == "full", "wiped again after removal %d failed" % n
    assert n > 2, "several removals were tried"
