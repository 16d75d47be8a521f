# claw_memory.jsonraw: surrogate escapes, exact integers, a number read from raw bytes.
from mptest import eq, raises

from claw_memory import jsonraw, jsontail


def test_exact_int_is_exact_where_a_float32_is_not():
    eq(jsonraw.exact_int("1796081397.0"), 1796081397, "a float's text")
    eq(jsonraw.exact_int(b"1.796081397e9"), 1796081397, "exponent, bytes")
    eq(jsonraw.exact_int("1796081397E0"), 1796081397, "capital E")
    eq(jsonraw.exact_int("-42.9"), -42, "negative: the integer part")
    eq(jsonraw.exact_int("5e-3"), 0, "below one")
    eq(jsonraw.exact_int("5e-1"), 0, "below one, its point just before its first digit")
    eq(jsonraw.exact_int("-25e-2"), 0, "below one, negative")
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
    eq(jsonraw.surrogates('"\\udc00\\udfff"'), '"\\ufffd\\ufffd"', "two low halves: no pair")
    eq(jsonraw.json_value(b'{"a":"\\ude00\\ude00x"}'), {"a": "\ufffd\ufffdx"}, "and parsed")
    eq(jsonraw.surrogates("plain"), "plain", "nothing to do")


def _hog(keep):
    """Hold the heap until about `keep` bytes are left free; returns what holds it."""
    import gc

    gc.collect()
    hog = []
    piece = 32768
    while gc.mem_free() > keep + 40000:
        try:
            hog.append(bytearray(piece))
        except MemoryError:  # (a fragmented heap: smaller pieces)
            if piece <= 1024:
                break
            piece //= 2
    return hog


def test_foreign_text_whose_shape_runs_the_heap_out_is_no_json_but_a_small_heap_still_says_so():
    # 8,000 nested arrays in 16 KB (a hostile server or tool): MicroPython's parser allocates
    # for each level, about 0.5 MB here. What a model or a tool wrote is then not JSON; the
    # stored data's reader (json_value) still raises, and so does foreign() when the heap,
    # not the text, is short (a text of 400 KB with 300 KB free).
    bomb = "[" * 8000 + "]" * 8000
    big = '"' + "m" * 400000 + '"'
    hog = _hog(300000)
    try:
        jsonraw.json_value(bomb)
        raise AssertionError("the bomb parsed: the test's heap is too big to show anything")
    except MemoryError:
        pass
    eq(jsonraw.foreign(bomb), None, "the bomb is no JSON")
    eq(jsonraw.foreign('{"a": [1, {"b": 2}]}'), {"a": [1, {"b": 2}]}, "JSON still is")
    try:
        jsonraw.foreign(big)
        raise AssertionError("a 400 KB text parsed with 300 KB free")
    except MemoryError:
        pass
    del hog


def test_every_reader_of_a_model_s_or_a_tool_s_json_takes_a_bomb_as_no_json():
    # the history's conversion (a stored tool call's arguments to Anthropic's `input`: every
    # later request would fail) and the extraction's answer
    from claw_memory import extract, wire

    bomb = "[" * 8000 + "]" * 8000
    call = {"role": "assistant", "content": None, "tool_calls": [
        {"id": "c1", "type": "function", "function": {"name": "memory_list", "arguments": bomb}}]}
    hog = _hog(300000)
    out = wire.convert([{"role": "user", "content": "hi"}, call], "anthropic")
    eq(out[1]["content"][0]["input"], {}, "no object: an empty one")
    eq(extract.parse_document(bomb), None, "the extraction's answer")
    del hog


def test_a_bomb_is_told_by_its_shape_where_the_heap_cannot_say():
    # After a parse ran the heap out, a collection may not give its objects back (a stale
    # pointer on the C stack holds them: seen in one checkout's path and not another's): a
    # text of nested or empty arrays is a bomb by its count of brackets; plain text of the same
    # length, and a short one (a failure there means the heap is out), by the free heap alone.
    nested, empty = "[" * 50000 + "]" * 50000, b"[]," * 33000
    string, numbers = '"' + "m" * 100000 + '"', "[1, 2, 3, 4, 5, 6, 7, 8] " * 4000
    hog = _hog(300000)  # (the texts made first: 100 KB in one piece may not fit beside it)
    try:
        eq(jsontail.bloated(nested), True, "nested arrays, 100 KB: 4 x its length not free")
        eq(jsontail.bloated(empty), True, "empty arrays, as bytes")
        eq(jsontail.bloated(string), False, "a string of 100 KB: the heap is too small")
        eq(jsontail.bloated(numbers), False, "numbers: one bracket in 25 bytes")
        eq(jsontail.bloated(string[:16000]), True, "16 KB with 300 KB free: the text at fault, whatever it holds")
    finally:
        del hog


def test_brackets_inside_strings_are_no_bomb_and_a_heap_too_small_is_seen():
    # An OpenAI answer whose tool arguments (JSON text in a string) are lists of small arrays:
    # one bracket in 6 bytes, but the parser makes one string of them, not an array each. On
    # a heap too small for the answer its reader raises MemoryError (the caller's to see),
    # not a malformed answer; a model's text of the same shape is no bomb either.
    import json

    from claw_memory.llm.base import _check

    args = '{"points":[' + ",".join(["[1,2]"] * 6000) + "]}"
    body = json.dumps({"choices": [{"message": {"role": "assistant", "content": None,
        "tool_calls": [{"id": "c1", "type": "function",
                        "function": {"name": "draw", "arguments": args}}]}}]})
    args = None
    said = '"' + "[1,2] " * 6000 + '"'
    bomb = r'["a\\", ' + "[]," * 12000 + "[]]"
    hog = _hog(60000)
    try:
        raises(MemoryError, _check, "openai", 200, body)
        eq(jsontail.bloated(body), False, "the answer: its brackets are in a string")
        eq(jsontail.bloated(said.encode()), False, "a string of brackets, as bytes")
        eq(jsontail.bloated(bomb), True, "empty arrays after a string ending in an escaped backslash")
    finally:
        del hog


def test_json_value_reads_what_cjson_reads():
    # A BOM before bytes, a key named twice in an object beside arrays of strings (its first
    # value), a stray tail after leading whitespace or after text that is not ASCII.
    eq(jsonraw.json_value(b'\xef\xbb\xbf{"a":1}'), {"a": 1}, "a BOM before bytes")
    eq(jsonraw.json_value('\ufeff{"a":1}'), {"a": 1}, "a BOM before text")
    eq(jsonraw.json_value(b'{"s":["x","y"],"k":["p","q"],"s":[]}'), {"s": ["x", "y"], "k": ["p", "q"]},
       "a key named twice beside arrays of strings")
    eq(jsonraw.json_value(b' \n {"a":[1]}x', True), {"a": [1]}, "leading whitespace, a stray tail")
    eq(jsonraw.json_value('{"a":"\u00e9\u4e2d"}}x', True), {"a": "\u00e9\u4e2d"}, "text, not ASCII, a tail")
    eq(jsonraw.json_value(b'{"a":"\xc3\xa9"}}x', True), {"a": "\u00e9"}, "bytes, not ASCII, a tail")
