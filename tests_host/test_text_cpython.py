"""The text module runs unchanged under CPython (host tools use it)."""

from claw_memory import jsonraw, jsontail, text


def test_clean_matches_cpython_strict_decoder():
    samples = [b"ab\xffc", b"\xc0\x80x", b"\xed\xa0\x80y", b"\xe4\xbd\xa0\xe4\xbd", b"ok \xf0\x9f\x98\x80"]
    for raw in samples:
        assert text.clean(raw) == raw.decode("utf-8", "ignore"), raw


def test_lone_surrogates_from_cpython_are_dropped():
    assert text.clean("a\udcffb") == "ab"


def test_a_key_named_twice_has_its_first_value_as_under_micropython():
    assert jsonraw.json_value(b'{"role":"user","content":"c","role":"assistant"}') == {"role": "user", "content": "c"}
    assert jsonraw.json_value('[{"a":{"b":1,"b":2},"a":3}]') == [{"a": {"b": 1}}]


def test_a_stray_tail_is_read_as_cjson_parse_reads_it_under_cpython_too():
    good = b'{"chat_key":"k \\"}{\\\\","sessions":["a"]}'
    for tail in (b"x", b"\x00junk", b"}{", b'"'):
        assert jsonraw.json_value(good + tail, True) == {"chat_key": 'k "}{\\', "sessions": ["a"]}, tail
        assert jsonraw.json_value(good + tail) is None, tail
    for bad in (good[:-1], good[:9] + b"\x00" + good[9:], b"x" + good, b'{"a":"x\x00y"}'):
        assert jsonraw.json_value(bad, True) is None, bad


def test_an_agent_number_is_ascii_digits_under_cpython_too():
    from claw_memory.chats import agent_of

    for sid in ("agent:\u00b2:chat:web:u:d", "agent:\u0662:chat:web:u:d", "agent:\uff11:chat:web:u:d"):
        assert agent_of(sid) == 0, sid
    assert agent_of("agent:12:chat:web:u:d") == 12


def test_a_bool_limit_is_refused_under_cpython_too(tmp_path):
    # CPython's True is an int (MicroPython's is not): Sessions.search refuses it as a limit,
    # and memory_search gives a model's `"limit": true` the default, as under MicroPython.
    import asyncio
    import json
    from types import SimpleNamespace

    import pytest

    from claw_memory.chat_tools import SearchTool
    from claw_memory.session import Sessions

    s = Sessions(str(tmp_path))
    sid = "chat:web:u1:default_01"
    for n in range(7):
        s.persist(sid, [(1, None, "kiwi number %d" % n)])
        s.persist(sid, [(2, None, "ok")], turn_completed=True)
    for bad in (True, False):
        with pytest.raises(ValueError):
            s.search("kiwi", bad, [sid])
    assert len(s.search("kiwi", 5, [sid])) == 5
    tool = SearchTool(s, None)
    req = SimpleNamespace(session_id=sid, channel=None, chat_id=None)
    ok, out = asyncio.run(tool.memory_search('{"query":"kiwi","limit":true}', req))
    assert ok, out
    assert len(json.loads(out)["hits"]) == 5, out
    s.close()


def test_a_tool_calls_booleans_are_not_searched_under_cpython_too():
    # CPython's True is an int: the values a tool record is searched by still leave it out
    # (MicroPython's indexer never sees a bool as a number).
    from claw_memory.core import TOOL_CALL
    from claw_memory.session import indexer

    call = {"role": "assistant", "tool_calls": [{"id": "c1", "type": "function", "function": {
        "name": "lamp", "arguments": '{"on":true,"level":3,"room":"hall"}'}}]}
    assert indexer.record_text(call, TOOL_CALL).split("\n") == ["lamp", "3", "hall"]


def test_the_system_prompt_is_stripped_at_its_two_ends_only():
    # core.system_text strips the prompt's ends in place (no second copy of it on a board):
    # the text is that of joining it whole and stripping it
    from claw_memory.core import system_text

    assert system_text("", [("A", "x\n\n")]) == "## A\nx"
    assert system_text(None, [("A", " x "), ("B", "y \n")], "c", "") == (
        "## A\n x \n\n## B\ny \n\n\n## Core Request\nsource_channel: c\nsource_chat_id:")
    assert system_text("  base \n", [("A", "x")]) == "base \n\n\n## A\nx"
    assert system_text(" \n ", []) == ""
    assert system_text(" b ", []) == "b"


def test_a_bomb_is_told_by_its_shape_from_one_kib_on():
    # (CPython has no free-heap figure: only the count of brackets speaks)
    assert jsontail.bloated("[]" * 512) is True
    assert jsontail.bloated("[]" * 511) is False, "under 1 KiB: a failure there means the heap is out"
    assert jsontail.bloated("[" + "1234567," * 200 + "1]") is False, "one bracket in 8 bytes"
    assert jsontail.bloated('{"a":' * 300 + "1" + "}" * 300) is True, "nested objects"
    # (brackets in a string cost the parser nothing: a model's or a tool's text of them is no bomb)
    assert jsontail.bloated('{"a":"' + "[1,2]," * 200 + '"}') is False, "in a string"
    assert jsontail.bloated(b'["' + b"[{" * 600 + b'"]') is False, "in a string, as bytes"
    assert jsontail.bloated(r'["\"' + "[]" * 600 + '"]') is False, "after an escaped quote: still in it"
    assert jsontail.bloated(r'["a\\", ' + "[]," * 400 + "[]]") is True, "after an escaped backslash: out"
    assert jsontail.bloated('["x"' + ",[]" * 400 + "]") is True, "after a string: out"
