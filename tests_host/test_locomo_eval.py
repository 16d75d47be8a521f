"""tools/benchmark/locomo_eval.py on a hand-made conversation in LoCoMo's two file shapes:
sessions become one chat's sessions, evidence ids name the right records, every system is
scored, and the PASS/FAIL line compares ours with rank-bm25."""

import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "tools"))

from benchmark import locomo_eval  # noqa: E402

CONV = {
    "speaker_a": "Ana",
    "speaker_b": "Bo",
    "session_1_date_time": "1:00 pm on 1 May, 2023",
    "session_1": [
        {"speaker": "Ana", "dia_id": "D1:1", "text": "I adopted a grey kitten named Pixel last week."},
        {"speaker": "Bo", "dia_id": "D1:2", "text": "Lovely! My sister plays the cello in an orchestra.",
         "blip_caption": "a photo of a cello on a stage"},
        {"speaker": "Ana", "dia_id": "D1:3", "text": "Next month I start a pottery class downtown."},
    ],
    "session_2_date_time": "2:00 pm on 9 May, 2023",
    "session_2": [],  # (an empty session is skipped)
    "session_3_date_time": "3:00 pm on 20 May, 2023",
    "session_3": [
        {"speaker": "Bo", "dia_id": "D3:1", "text": "We drove to the coast and watched whales breaching."},
        {"speaker": "Ana", "dia_id": "D3:2", "text": "Pixel knocked my pottery bowl off the shelf!"},
    ],
}
QA = [
    {"question": "What is the name of Ana's kitten?", "answer": "Pixel", "evidence": ["D1:1"], "category": 4},
    {"question": "What instrument does Bo's sister play?", "answer": "cello", "evidence": ["D1:2"], "category": 4},
    {"question": "Where did Bo see whales?", "answer": "the coast", "evidence": ["D3:1", "D9:9"], "category": 1},
    {"question": "An unanswerable one", "answer": "", "evidence": [], "category": 5},
]


def _check(path):
    res, counts = locomo_eval.evaluate(path)
    assert counts == {"conversations": 1, "sessions": 2, "turns": 5, "questions": 3}
    ours = res[("ours", "all")]
    assert ours[0] == 3 and ours[1] == 3.0 and ours[3] == 3.0  # each gold record first
    for system in locomo_eval.SYSTEMS:
        assert res[(system, "all")][0] == 3, system
    assert res[("ours", "1 multi-hop")][0] == 1 and res[("ours", "4 single-hop")][0] == 2
    text = "\n".join(locomo_eval.lines(res, counts))
    assert text.endswith("PASS")
    md = locomo_eval.lines(res, counts, markdown=True)
    assert "| recall@5 of mem.search at least desktop BM25's (rank-bm25) | 1.000 vs " in "\n".join(md)


def test_a_samples_file(tmp_path):
    path = tmp_path / "locomo10.json"
    path.write_text(json.dumps([{"sample_id": "conv-1", "conversation": CONV, "qa": QA}]))
    _check(str(path))


def test_a_folder_of_conversations(tmp_path):
    (tmp_path / "26.json").write_text(json.dumps(dict(CONV, qa=QA)))
    _check(str(tmp_path))


def test_a_photo_caption_is_part_of_the_turn_text():
    t = CONV["session_1"][1]
    assert locomo_eval.turn_text(t) == ("Bo: Lovely! My sister plays the cello in an orchestra. "
                                        "[shares a photo of a cello on a stage]")
