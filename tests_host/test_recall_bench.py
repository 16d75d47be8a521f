"""The recall benchmark's retrieval set (tools/benchmark/recall_set.py) is what docs/PERFORMANCE.md
says it is, and the same on every run; its gold items are real items of their store."""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "tools"))

from benchmark import recall_set  # noqa: E402


def test_the_set_has_its_size_languages_and_groups():
    s = recall_set.make()
    assert [x["lang"] for x in s] == ["en", "zh", "en", "zh"]
    assert all(len(x["items"]) == 128 for x in s), "every store at capacity"
    qs = [q for x in s for q in x["questions"]]
    assert len(qs) >= 500
    groups = {g: sum(1 for q in qs if q["group"] == g) for g in ("plain", "two facts", "updated", "forgotten")}
    assert all(n >= 40 for n in groups.values()), groups
    assert all(q["gold"] == [] for q in qs if q["group"] == "forgotten")
    assert all(len(q["gold"]) == 2 for q in qs if q["group"] == "two facts")


def test_gold_items_exist_and_changes_refer_to_items():
    for x in recall_set.make():
        keys = {it["key"] for it in x["items"]}
        new = {ch[2]["key"] for ch in x["changes"] if ch[0] == "update"}
        gone = {ch[1] for ch in x["changes"]}
        assert gone <= keys
        for q in x["questions"]:
            for k in q["gold"]:
                assert k in (keys - gone) | new, (q, k)


def test_deterministic():
    assert recall_set.make() == recall_set.make()
    assert recall_set.make(1) != recall_set.make()
