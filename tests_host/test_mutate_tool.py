"""tools/mutate.py's machinery, on a made-up module and made-up tests (not the mutant list, which
a refactoring makes stale on purpose): a mutant applies only where its text occurs exactly once,
a mutant that breaks the syntax is refused, failing, crashing and hanging tests kill, and the
score leaves out equivalent and stale mutants."""

import os
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tools"))

import mutate  # noqa: E402
import mutants  # noqa: E402

SOURCE = "def f(a, b):\n    if a > b:\n        return a\n    return b\n\n\ndef g(a):\n    return a + 1\n"


def _root(tmp_path, monkeypatch):
    (tmp_path / "claw_memory").mkdir()
    (tmp_path / "claw_memory" / "mod.py").write_text(SOURCE)
    monkeypatch.setattr(mutate, "ROOT", str(tmp_path))


def test_a_mutant_applies_where_its_text_occurs_exactly_once(tmp_path, monkeypatch):
    _root(tmp_path, monkeypatch)
    m = mutate.Mutant(1, "mod", "    if a > b:", "    if a >= b:", "boundary")
    new = mutate.check(m)
    assert m.status is None and new == SOURCE.replace("a > b", "a >= b")
    gone = mutate.Mutant(2, "mod", "    if a < b:", "    if a <= b:", "moved on")
    assert mutate.check(gone) is None and gone.status == "stale" and "found 0 times" in gone.by
    twice = mutate.Mutant(3, "mod", "    return", "    yield", "ambiguous")
    assert mutate.check(twice) is None and twice.status == "stale" and "found 3 times" in twice.by
    missing = mutate.Mutant(4, "nomod", "x", "y", "module renamed")
    assert mutate.check(missing) is None and missing.status == "stale"
    broken = mutate.Mutant(5, "mod", "    return a + 1", "    return a +", "syntax")
    assert mutate.check(broken) is None and broken.status == "invalid"


def test_failing_crashing_and_hanging_tests_kill(tmp_path):
    (tmp_path / "test_ok.py").write_text("def test_ok():\n    assert True\n")
    (tmp_path / "test_bad.py").write_text("def test_bad():\n    assert 1 == 2\n")
    (tmp_path / "test_crash.py").write_text("import os\n\ndef test_crash():\n    os._exit(3)\n")
    (tmp_path / "test_hang.py").write_text("def test_hang():\n    while True:\n        pass\n")
    assert mutate.run_tests(str(tmp_path), ["test_ok.py"], 60)[0] is True
    passed, secs, why = mutate.run_tests(str(tmp_path), ["test_bad.py"], 60)
    assert passed is False and why == "test_bad.py::test_bad"
    passed, secs, why = mutate.run_tests(str(tmp_path), ["test_crash.py"], 60)
    assert passed is False and "exit 3" in why
    passed, secs, why = mutate.run_tests(str(tmp_path), ["test_hang.py"], 3)
    assert passed is None and "timeout" in why


def test_the_score_counts_killed_over_run_mutants():
    ms = []
    for n, status in enumerate(("killed", "killed", "timeout", "survived", "equivalent", "stale")):
        m = mutate.Mutant(n + 1, "store/index", "a", "b", "d")
        m.status = status
        ms.append(m)
    table = mutate.score_table(ms)
    row = [ln for ln in table.splitlines() if ln.startswith("store/index")][0].split()
    assert row[1:6] == ["3", "4", "75%", "1", "1"] and row[6:] == ["4"]
    assert "[storage]" in table


def test_the_map_sends_every_module_to_existing_tests():
    assert mutate.tests_for("session/pending") == mutate.TESTS["session/"]
    assert mutate.tests_for("session/repair") == mutate.TESTS["session/repair"]
    assert mutate.tests_for("store/index") == mutate.TESTS["store/"]
    assert mutate.tests_for("memory_tools") == mutate.TESTS["memory_tools"]
    assert mutate.tests_for("session/stream") == mutate.TESTS["session/stream"]
    assert mutate.tests_for("chats") == mutate.TESTS["chats"]
    assert mutate.tests_for("agent") == ["tests_host"]
    for tests in mutate.TESTS.values():
        for t in tests:
            assert os.path.exists(os.path.join(ROOT, t)), t


def test_the_mutant_list_is_well_formed():
    assert len(mutants.MUTANTS) >= 60
    for entry in mutants.MUTANTS:
        assert len(entry) in (4, 5) and all(isinstance(x, str) for x in entry), entry
        assert entry[1] != entry[2] and entry[3], entry
        if len(entry) == 5:
            assert entry[4].startswith("equivalent: ") and len(entry[4]) > 30, entry


def test_llm_mutants_are_refused_without_micropython_lib(tmp_path, monkeypatch):
    # Their MicroPython tests (TLS, sockets, the answer reader) would be skipped: the mutants
    # would meet no test there and could survive unnoticed, or be scored killed by less.
    assert mutate._LLM_MP in mutate.tests_for("llm/transport")
    assert mutate._LLM_MP in mutate.tests_for("llm/certs")
    monkeypatch.setenv("CLAW_MPLIB", str(tmp_path))  # no aiohttp in it
    with pytest.raises(SystemExit, match="needs CLAW_MPLIB"):
        mutate.main(["--module", "llm/transport", "--no-full"])
