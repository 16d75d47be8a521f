"""The text module runs unchanged under CPython (host tools use it)."""

from claw_memory import text


def test_clean_matches_cpython_strict_decoder():
    samples = [b"ab\xffc", b"\xc0\x80x", b"\xed\xa0\x80y", b"\xe4\xbd\xa0\xe4\xbd", b"ok \xf0\x9f\x98\x80"]
    for raw in samples:
        assert text.clean(raw) == raw.decode("utf-8", "ignore"), raw


def test_lone_surrogates_from_cpython_are_dropped():
    assert text.clean("a\udcffb") == "ab"


def test_a_key_named_twice_has_its_first_value_as_under_micropython():
    assert text.json_value(b'{"role":"user","content":"c","role":"assistant"}') == {"role": "user", "content": "c"}
    assert text.json_value('[{"a":{"b":1,"b":2},"a":3}]') == [{"a": {"b": 1}}]
