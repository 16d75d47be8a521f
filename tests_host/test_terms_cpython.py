"""The tokeniser gives the same terms under CPython (host tools) as under MicroPython."""

import os
import subprocess

from claw_memory.terms import terms

from conftest import ROOT, micropython_bin

SAMPLES = [
    "The user's cats liked running in the mornings!",
    "I love 绿茶 and 乌龙茶，每天早上喝。",
    "Meeting at 10:30 on 2026-12-24 in room42",
    "Привет МИР, Café ÉTÉ naïve Ŀŀ Ÿ ÿ Ωμέγα",
    "スズキさんは東京に住んでいます 서울에 살아요",
    "tries studied making hoping hopping agreed feed boxes watches analysis bus",
    "Ｆｕｌｌ－ｗｉｄｔｈ　１２３ emoji 😀 \x00\x1f\x7f \u2028 \ufeff",
    "A" * 70 + " " + "é" * 40 + " " + "中" * 3,
]


def test_same_terms_as_micropython(tmp_path):
    script = tmp_path / "t.py"
    script.write_text(
        "import sys\nsys.path.insert(0, %r)\nfrom claw_memory.terms import terms\n"
        "import json\nfor s in json.loads(sys.stdin.read()):\n"
        "    print(' '.join(t.hex() for t in terms(s)))\n" % ROOT, encoding="utf-8")
    import json

    out = subprocess.run([micropython_bin(), str(script)], input=json.dumps(SAMPLES, ensure_ascii=False), text=True,
                         capture_output=True, timeout=60, env=dict(os.environ))
    assert out.returncode == 0, out.stderr
    got = out.stdout.splitlines()
    assert got == [" ".join(t.hex() for t in terms(s)) for s in SAMPLES]


def test_invalid_text_is_dropped_not_fatal():
    assert terms("my \ud83d tea") == terms("my tea") == [b"tea"]
    assert terms(b"\xff\xfecoffee\xe4") == [b"coffee"]
