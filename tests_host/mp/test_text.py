# claw_memory.text: UTF-8 cuts and repair, dedupe key, token estimate, line lists
# (jsonraw has its own file: test_jsonraw.py).
from mptest import eq, raises

from claw_memory import text


def test_clean_drops_invalid_utf8():
    eq(text.clean(b"ab\xffc"), "abc", "stray byte")
    eq(text.clean(b"\xe4\xbd\xa0\xe4\xbd"), "你", "truncated sequence at the end")
    eq(text.clean(b"\xc0\x80x"), "x", "overlong NUL")
    eq(text.clean(b"\xed\xa0\x80y"), "y", "UTF-16 surrogate")
    eq(text.clean(b"\xf4\x90\x80\x80z"), "z", "above U+10FFFF")
    eq(text.clean(b"\xf0\x9f\x98\x80"), "\U0001F600", "4-byte emoji kept")
    eq(text.clean("plain"), "plain", "str passes through")
    eq(text.clean(b"\x80\x80abc\xe4"), "abc", "leading continuation bytes")
    raises(ValueError, text.clean, 42)


def test_clean_cuts_on_characters():
    eq(text.clean("héllo wörld", 4), "héll", "characters, not bytes")
    eq(text.clean("你好世界", 2), "你好", "CJK")
    eq(text.clean("ab", 10), "ab", "short text untouched")


def test_cut_bytes_never_splits_a_character():
    eq(text.cut_bytes("abc", 10), "abc", "fits")
    eq(text.cut_bytes("你好", 4), "你", "3-byte char not split")
    eq(text.cut_bytes("你好", 6), "你好", "exact fit")
    eq(text.cut_bytes("a\U0001F600", 4), "a", "4-byte char not split")
    eq(text.cut_bytes("é" * 20, 39), "é" * 19, "39-byte label bound")


def test_cut_marks_a_cut_within_its_bound():
    eq(text.cut("abcde", 5), "abcde", "exactly at the bound: untouched")
    eq(text.cut("abcdef", 5), "ab...", "one over: the marker inside the bound")
    eq(len(text.cut("x" * 100, 32)), 32, "a long text cut to the bound exactly")
    eq(text.cut("你好世界你好", 5), "你好...", "characters, not bytes")


def test_trim_ascii_whitespace():
    eq(text.trim(" \t\nx y\r\x0b\x0c"), "x y", "C isspace")


def test_norm_key():
    eq(text.norm_key("The User likes Lettuce!"), "theuserlikeslettuce", "ASCII")
    eq(text.norm_key("我喜欢，苹果。"), "我喜欢苹果", "CJK punctuation dropped")
    eq(text.norm_key("Café 42"), "café42", "other characters kept")
    eq(len(text.norm_key("a" * 400)), 159, "bounded to 159 bytes")
    eq(text.cut_bytes(text.norm_key("你" * 40), 36), "你" * 12, "36-byte key = 12 CJK chars")


def test_estimate_tokens_matches_reference_examples():
    eq(text.estimate_tokens("hello world"), 3, "ascii")
    eq(text.estimate_tokens("你好世界"), 4, "cjk")
    eq(text.estimate_tokens("hi 你好"), 3, "mixed")
    eq(text.estimate_tokens(""), 0, "empty")
    eq(text.estimate_tokens(None), 0, "none")


def test_split_tokens():
    eq(text.split_tokens(" a, b;c / d|e ,, "), ["a", "b", "c", "d", "e"], "all separators")
    eq(text.split_tokens(""), [], "empty")


def test_line_lists():
    lines = []
    eq(text.lines_add(lines, "a"), True, "added")
    eq(text.lines_add(lines, "a"), False, "duplicate")
    text.lines_merge(lines, "b\na\nc")
    eq(lines, ["a", "b", "c"], "merge keeps first-seen order")
    text.lines_merge(lines, ["x" * 300])
    eq(len(lines[-1]), 255, "lines cut to 255 bytes")
    eq(text.stage_note(["a", "b"]), "Memory update: [a;b]", "note")
    eq(text.stage_note([]), None, "no note")
