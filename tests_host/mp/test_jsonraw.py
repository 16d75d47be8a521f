# claw_memory.jsonraw: surrogate escapes, exact integers, a number read from raw bytes.
from mptest import eq

from claw_memory import jsonraw


def test_exact_int_is_exact_where_a_float32_is_not():
    eq(jsonraw.exact_int("1796081397.0"), 1796081397, "a float's text")
    eq(jsonraw.exact_int(b"1.796081397e9"), 1796081397, "exponent, bytes")
    eq(jsonraw.exact_int("1796081397E0"), 1796081397, "capital E")
    eq(jsonraw.exact_int("-42.9"), -42, "negative: the integer part")
    eq(jsonraw.exact_int("5e-3"), 0, "below one")
    eq(jsonraw.exact_int("12e2"), 1200, "zeros added")
    for bad in ("", "-", "abc", "1.x", "1e", "1ee2", ".5"):
        eq(jsonraw.exact_int(bad), None, "not a number: %r" % bad)
    eq(jsonraw.exact_int("1e999999") is not None, True, "a huge exponent is clamped, not a hang")


def test_number_after_reads_the_number_that_follows_the_key():
    raw = b'{"a":"x","records_size": 1234,"b":5}'
    eq(jsonraw.number_after(raw, b"records_size"), b"1234", "spaces skipped")
    eq(jsonraw.number_after(raw, b"b"), b"5", "last key")
    eq(jsonraw.number_after(raw, b"missing"), None, "no key")
    eq(jsonraw.number_after(b'{"k":"v"}', b"k"), None, "a string is no number")


def test_surrogates_joins_pairs_and_replaces_lone_halves():
    eq(jsonraw.surrogates('"\\ud83d\\ude00"'), '"\U0001F600"', "a pair becomes the character")
    eq(jsonraw.surrogates(b'"\\ud83d"'), b'"\\ufffd"', "a lone high half")
    eq(jsonraw.surrogates('"\\\\ud83d"'), '"\\\\ud83d"', "an escaped backslash is no escape")
    eq(jsonraw.surrogates('"\\u00e9"'), '"\\u00e9"', "other escapes untouched")
    eq(jsonraw.surrogates("plain"), "plain", "nothing to do")
