"""claw_memory.llm against a real loopback server, through CPython's real aiohttp (the same
clients under MicroPython with micropython-lib's aiohttp: test_llm_mp.py)."""

import asyncio
import copy
import json
import os
import socket
import time

import pytest

import tlscerts
from llm_server import LLMServer
from streamed_history import LyingHistory, StreamedHistory

from claw_memory import llm
from claw_memory.llm import transport
from claw_memory.core import Tool

BACKENDS = ("openai", "anthropic", "openai_responses")
PATHS = {"openai": "/v1/chat/completions", "anthropic": "/v1/messages",
         "openai_responses": "/v1/responses"}


@pytest.fixture
def srv():
    with LLMServer() as s:
        yield s


def client(srv, backend, **kw):
    kw.setdefault("api_key", "sk-test")
    kw.setdefault("timeout", 5)
    url = srv.anthropic_url if backend == "anthropic" else srv.openai_url
    return llm.from_config(backend, base_url=url, **kw)


def chat(c, system="sys", messages=None, tools=None):
    if messages is None:
        messages = [{"role": "user", "content": "hi"}]
    return asyncio.run(c.chat(system, messages, tools))


def fails(c, **kw):
    with pytest.raises(llm.LLMError) as info:
        chat(c, **kw)
    return info.value


async def _nop(args, request):
    return True, "{}"


TOOLS = [
    Tool(
        "memory_store",
        "Store a memory.",
        {"type": "object", "properties": {"content": {"type": "string"}}},
        _nop,
    ),
    Tool(
        "memory_recall",
        "Recall memories.",
        '{"type":"object","properties":{"labels":{"type":"array"}}}',
        _nop,
    ),
]
TOOLS_SCHEMAS = [
    {"type": "object", "properties": {"content": {"type": "string"}}},
    {"type": "object", "properties": {"labels": {"type": "array"}}},
]


# -- plain answers -------------------------------------------------------------------


@pytest.mark.parametrize("backend", BACKENDS)
def test_plain_text_answer(srv, backend):
    srv.reply("Hello there.")
    r = chat(client(srv, backend))
    assert r.text == "Hello there."
    assert r.tool_calls == []
    assert r.stop == {"openai": "stop", "anthropic": "end_turn"}.get(backend, "completed")
    raw = json.loads(r.raw)
    assert raw["role"] == "assistant"
    req = srv.last()
    assert req.path == PATHS[backend]
    assert req.headers["content-type"] == "application/json"
    assert "tools" not in req.body
    assert req.body["model"] == (
        "claude-3-5-haiku-latest" if backend == "anthropic" else "gpt-4o-mini"
    )
    assert req.body["max_output_tokens" if backend == "openai_responses" else "max_tokens"] == 1024


def test_openai_request_without_system_or_key(srv):
    srv.reply("ok")
    chat(client(srv, "openai", api_key=None, model="m", max_tokens=7), system="", tools=[])
    req = srv.last()
    assert req.body == {
        "model": "m",
        "max_tokens": 7,
        "messages": [{"role": "user", "content": "hi"}],
    }
    assert "authorization" not in req.headers


def test_anthropic_request_without_system_or_key(srv):
    srv.reply("ok")
    chat(client(srv, "anthropic", api_key=None, version="2099-01-01"), system="")
    req = srv.last()
    assert "system" not in req.body and "tools" not in req.body
    assert "x-api-key" not in req.headers
    assert req.headers["anthropic-version"] == "2099-01-01"


@pytest.mark.parametrize("backend", BACKENDS)
def test_base_url_trailing_slash_and_extra_headers(srv, backend):
    srv.reply("ok")
    url = (srv.anthropic_url if backend == "anthropic" else srv.openai_url) + "/"
    c = llm.from_config(
        backend, base_url=url, headers={"X-Trace": "42", "content-type": "application/json"}
    )
    chat(c)
    req = srv.last()
    assert req.path.startswith("/v1/")
    assert req.headers["x-trace"] == "42"
    assert req.headers["content-type"] == "application/json"


def test_from_config():
    assert isinstance(llm.from_config("openai"), llm.OpenAI)
    assert isinstance(llm.from_config("openai_compatible"), llm.OpenAI)
    assert isinstance(llm.from_config("anthropic", model="x"), llm.Anthropic)
    assert isinstance(llm.from_config("anthropic_compatible"), llm.Anthropic)
    assert llm.from_config("anthropic", model="x").model == "x"
    assert isinstance(llm.from_config("openai_responses"), llm.OpenAIResponses)
    assert llm.OpenAI.backend == "openai" and llm.Anthropic.backend == "anthropic"
    assert llm.OpenAIResponses.backend == "openai_responses"
    with pytest.raises(ValueError):
        llm.from_config("gemini")
    for bad in ("api.openai.com/v1", "ftp://x", "https://h:port/v1", "http://[::1/v1"):
        with pytest.raises(ValueError):
            llm.from_config("openai", base_url=bad)
    assert transport.split_url("http://[::1]:81/x") == ("http", "[::1]", 81, "/x")


# -- tool calls ----------------------------------------------------------------------


def test_openai_tool_call_raw_is_the_message_in_request_shape(srv):
    srv.reply(
        "",
        tool_calls=[
            {"id": "call_a", "name": "memory_store", "arguments": '{"content": "likes tea"}'}
        ],
        message_extra={
            "reasoning_content": "The user said something worth keeping.",
            "refusal": None,
        },
    )
    r = chat(client(srv, "openai"), tools=TOOLS)
    assert r.text == ""
    assert r.stop == "tool_calls"
    assert len(r.tool_calls) == 1
    call = r.tool_calls[0]
    assert (call.id, call.name, call.arguments) == (
        "call_a",
        "memory_store",
        '{"content": "likes tea"}',
    )
    expected = {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": "call_a",
                "type": "function",
                "function": {"name": "memory_store", "arguments": '{"content": "likes tea"}'},
            }
        ],
    }
    # role, content, tool_calls: what a request carries back (reasoning_content and refusal
    # are answer-only fields some servers refuse in a request)
    assert json.loads(r.raw) == expected
    srv.reply("Noted.")
    r = chat(client(srv, "openai"), tools=TOOLS)
    assert r.raw == '{"role":"assistant","content":"Noted."}', "a plain answer in ESP-Claw's key order"
    assert srv.last().body["tools"] == [
        {
            "type": "function",
            "function": {"name": t.name, "description": t.description, "parameters": s},
        }
        for t, s in zip(TOOLS, TOOLS_SCHEMAS)
    ]


def test_openai_tool_call_arguments_as_object_and_missing_id(srv):
    # some compatible servers send arguments as an object, or no id
    srv.json(
        {
            "choices": [
                {
                    "message": {
                        "role": "assistant",
                        "content": "",
                        "tool_calls": [
                            {
                                "type": "function",
                                "function": {"name": "t", "arguments": {"a": [1, 2]}},
                            }
                        ],
                    },
                    "finish_reason": "tool_calls",
                }
            ]
        }
    )
    r = chat(client(srv, "openai"))
    call = r.tool_calls[0]
    assert call.name == "t" and json.loads(call.arguments) == {"a": [1, 2]}
    assert isinstance(call.arguments, str)
    assert call.id
    assert json.loads(r.raw)["tool_calls"][0]["id"] == call.id  # replayable with its result


NO_ID = {"anthropic": {"content": [{"type": "tool_use", "name": "t", "input": {}}]},
         "openai_responses": {"status": "completed",
                              "output": [{"type": "function_call", "name": "t", "arguments": "{}"}]}}


@pytest.mark.parametrize("backend", sorted(NO_ID))
def test_a_tool_call_without_an_id_gets_one_on_every_backend(srv, backend):
    # (OpenAI's case is the test above) the result can then be paired with its call
    srv.json(NO_ID[backend])
    r = chat(client(srv, backend))
    call = r.tool_calls[0]
    assert call.id and call.name == "t"
    raw = json.loads(r.raw)
    if backend == "anthropic":
        assert raw["content"][0]["id"] == call.id
    else:
        assert raw["tool_calls"][0]["id"] == call.id
        assert raw["_claw_provider_state"]["output"][0]["call_id"] == call.id


BAD_TYPES = {
    "openai": {"choices": [{"message": {"role": "assistant", "content": None, "tool_calls": [
        {"id": 12345, "type": "function", "function": {"name": "t", "arguments": "{}"}}]},
        "finish_reason": "tool_calls"}]},
    "anthropic": {"content": [{"type": "tool_use", "id": ["x"], "name": "t", "input": "not an object"},
                              {"type": "tool_use", "id": "toolu_2", "name": "u"}]},
    "openai_responses": {"status": "completed", "output": [
        {"type": "function_call", "call_id": 7, "name": "t", "arguments": "{}"}]},
}


@pytest.mark.parametrize("backend", sorted(BAD_TYPES))
def test_fields_of_the_wrong_type_are_stored_as_the_api_takes_them_back(srv, backend):
    # An id that is no text, a tool_use `input` that is no object or missing: stored as they
    # came, they were replayed with every later request of the session, which the API refused
    srv.json(BAD_TYPES[backend])
    r = chat(client(srv, backend))
    assert all(isinstance(c.id, str) and c.id for c in r.tool_calls), r.tool_calls
    raw = json.loads(r.raw)
    if backend == "anthropic":
        assert [b["input"] for b in raw["content"]] == [{}, {}]
        assert [b["id"] for b in raw["content"]] == [r.tool_calls[0].id, "toolu_2"]
        assert r.tool_calls[0].arguments == "not an object"  # (the handler says invalid_json)
    else:
        assert [c["id"] for c in raw["tool_calls"]] == [r.tool_calls[0].id]
    if backend == "openai_responses":
        assert raw["_claw_provider_state"]["output"][0]["call_id"] == r.tool_calls[0].id


def test_anthropic_tool_call(srv):
    srv.reply(
        "Let me note that.",
        tool_calls=[{"id": "toolu_1", "name": "memory_store", "arguments": {"content": "x"}}],
    )
    r = chat(client(srv, "anthropic"), tools=TOOLS)
    assert r.text == "Let me note that."
    assert r.stop == "tool_use"
    assert [(c.id, c.name, c.arguments) for c in r.tool_calls] == [
        ("toolu_1", "memory_store", '{"content":"x"}')
    ]
    assert json.loads(r.raw) == {
        "role": "assistant",
        "content": [
            {"type": "text", "text": "Let me note that."},
            {
                "type": "tool_use",
                "id": "toolu_1",
                "name": "memory_store",
                "input": {"content": "x"},
            },
        ],
    }
    assert srv.last().body["tools"] == [
        {"name": t.name, "description": t.description, "input_schema": s}
        for t, s in zip(TOOLS, TOOLS_SCHEMAS)
    ]


def test_anthropic_text_blocks_are_concatenated_and_other_blocks_kept(srv):
    content = [
        {"type": "thinking", "thinking": "hmm", "signature": "sig"},
        {"type": "text", "text": "one "},
        {"type": "text", "text": "two"},
    ]
    srv.json(
        {"type": "message", "role": "assistant", "content": content, "stop_reason": "max_tokens"}
    )
    r = chat(client(srv, "anthropic"))
    assert r.text == "one two"
    assert r.stop == "max_tokens"
    # An answer is kept as its text (thinking blocks matter only within a tool-using turn),
    # in the form the streamed history sends as stored.
    assert r.raw == '{"role":"assistant","content":"one two"}'
    # With a tool call every block is kept, the thinking one included.
    calls = content + [{"type": "tool_use", "id": "tu_1", "name": "t", "input": {}}]
    srv.json({"type": "message", "role": "assistant", "content": calls, "stop_reason": "tool_use"})
    r = chat(client(srv, "anthropic"))
    assert json.loads(r.raw) == {"role": "assistant", "content": calls}


def test_tools_as_dicts_and_missing_schema(srv):
    srv.reply("ok")
    chat(client(srv, "anthropic"), tools=[{"name": "t", "description": "d", "schema": None}])
    assert srv.last().body["tools"] == [
        {"name": "t", "description": "d", "input_schema": {"type": "object", "properties": {}}}
    ]


def test_bad_tool_schema_is_value_error():
    class T:
        name, description, schema = "x", "d", "{not json"

    c = llm.OpenAI(base_url="http://127.0.0.1:9")
    with pytest.raises(ValueError, match="tool x"):
        asyncio.run(c.chat("s", [], [T()]))


# -- multi-turn conversations --------------------------------------------------------

HISTORY_OPENAI = [
    {"role": "user", "content": "Remember I like tea."},
    {
        "role": "assistant",
        "content": None,
        "reasoning_content": "store it",
        "tool_calls": [
            {
                "id": "call_1",
                "type": "function",
                "function": {"name": "memory_store", "arguments": '{"content":"tea"}'},
            },
            {
                "id": "call_2",
                "type": "function",
                "function": {"name": "memory_recall", "arguments": "{}"},
            },
        ],
    },
    {"role": "tool", "tool_call_id": "call_1", "content": '{"ok":true}', "is_error": False},
    {"role": "tool", "tool_call_id": "call_2", "content": "disk full", "is_error": True},
]

HISTORY_ANTHROPIC = [
    {"role": "user", "content": "Remember I like tea."},
    {
        "role": "assistant",
        "content": [
            {"type": "text", "text": "Storing."},
            {
                "type": "tool_use",
                "id": "toolu_1",
                "name": "memory_store",
                "input": {"content": "tea"},
            },
            {"type": "tool_use", "id": "toolu_2", "name": "memory_recall", "input": {}},
        ],
    },
    {"role": "tool", "tool_call_id": "toolu_1", "content": '{"ok":true}', "is_error": False},
    {"role": "tool", "tool_call_id": "toolu_2", "content": "disk full", "is_error": True},
]


def test_openai_multi_turn_request_body(srv):
    srv.reply("Noted.")
    history = copy.deepcopy(HISTORY_OPENAI)
    r = chat(
        client(srv, "openai", model="gpt-x"), system="You are Claw.", messages=history, tools=TOOLS
    )
    assert r.text == "Noted."
    assert history == HISTORY_OPENAI  # the caller's history is not modified
    req = srv.last()
    assert req.headers["authorization"] == "Bearer sk-test"
    assert req.body == {
        "model": "gpt-x",
        "max_tokens": 1024,
        "messages": [
            {"role": "system", "content": "You are Claw."},
            {"role": "user", "content": "Remember I like tea."},
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": "call_1",
                        "type": "function",
                        "function": {"name": "memory_store", "arguments": '{"content":"tea"}'},
                    },
                    {
                        "id": "call_2",
                        "type": "function",
                        "function": {"name": "memory_recall", "arguments": "{}"},
                    },
                ],
            },
            {"role": "tool", "tool_call_id": "call_1", "content": '{"ok":true}'},
            {"role": "tool", "tool_call_id": "call_2", "content": "Error: disk full"},
        ],
        "tools": [
            {
                "type": "function",
                "function": {"name": t.name, "description": t.description, "parameters": s},
            }
            for t, s in zip(TOOLS, TOOLS_SCHEMAS)
        ],
    }


def test_anthropic_multi_turn_request_body(srv):
    srv.reply("Noted.")
    history = copy.deepcopy(HISTORY_ANTHROPIC) + [
        {"role": "user", "content": "And coffee?"},  # a turn of its own: the API combines them
        {"role": "assistant", "content": []},  # empty assistant turns are dropped
        {"role": "user", "content": [{"type": "text", "text": "Please."}]},
    ]
    before = copy.deepcopy(history)
    r = chat(
        client(srv, "anthropic", api_key="ak"),
        system="You are Claw.",
        messages=history,
        tools=TOOLS,
    )
    assert r.text == "Noted."
    assert history == before
    req = srv.last()
    assert req.headers["x-api-key"] == "ak"
    assert req.headers["anthropic-version"] == "2023-06-01"
    assert "authorization" not in req.headers
    assert req.body == {
        "model": "claude-3-5-haiku-latest",
        "max_tokens": 1024,
        "system": "You are Claw.",
        "messages": [
            {"role": "user", "content": "Remember I like tea."},
            HISTORY_ANTHROPIC[1],
            {
                "role": "user",
                "content": [
                    {
                        "type": "tool_result",
                        "tool_use_id": "toolu_1",
                        "content": '{"ok":true}',
                        "is_error": False,
                    },
                    {
                        "type": "tool_result",
                        "tool_use_id": "toolu_2",
                        "content": "disk full",
                        "is_error": True,
                    },
                ],
            },
            {"role": "user", "content": "And coffee?"},
            {"role": "user", "content": [{"type": "text", "text": "Please."}]},
        ],
        "tools": [
            {"name": t.name, "description": t.description, "input_schema": s}
            for t, s in zip(TOOLS, TOOLS_SCHEMAS)
        ],
    }
    # The results of one round of calls go in one user message, right after the tool_use
    # turn; other consecutive turns of one role are sent as they are (the API combines them),
    # so that a history streamed record by record gives the same messages.


def test_anthropic_sends_consecutive_user_turns_as_they_are(srv):
    srv.reply("ok")
    chat(
        client(srv, "anthropic"),
        messages=[{"role": "user", "content": "a"}, {"role": "user", "content": "b"}],
    )
    assert srv.last().body["messages"] == [{"role": "user", "content": "a"}, {"role": "user", "content": "b"}]


# -- cross-backend history -----------------------------------------------------------


def test_openai_history_sent_to_anthropic(srv):
    srv.reply("ok")
    history = copy.deepcopy(HISTORY_OPENAI)
    history[1]["content"] = "Storing."
    history[1]["tool_calls"][1]["function"]["arguments"] = "{broken"
    history += [
        {"role": "assistant", "content": "Done.", "reasoning_content": "x"},
        {"role": "user", "content": "Thanks"},
    ]
    chat(client(srv, "anthropic"), messages=history)
    assert srv.last().body["messages"] == [
        {"role": "user", "content": "Remember I like tea."},
        {
            "role": "assistant",
            "content": [
                {"type": "text", "text": "Storing."},
                {
                    "type": "tool_use",
                    "id": "call_1",
                    "name": "memory_store",
                    "input": {"content": "tea"},
                },
                {"type": "tool_use", "id": "call_2", "name": "memory_recall", "input": {}},
            ],
        },
        {
            "role": "user",
            "content": [
                {
                    "type": "tool_result",
                    "tool_use_id": "call_1",
                    "content": '{"ok":true}',
                    "is_error": False,
                },
                {
                    "type": "tool_result",
                    "tool_use_id": "call_2",
                    "content": "disk full",
                    "is_error": True,
                },
            ],
        },
        {"role": "assistant", "content": "Done."},  # a string: the API takes it, and stored plain answers stream as they are
        {"role": "user", "content": "Thanks"},
    ]


def test_openai_history_without_text_sent_to_anthropic_has_no_empty_text_block(srv):
    srv.reply("ok")
    chat(
        client(srv, "anthropic"),
        messages=HISTORY_OPENAI[:2] + [{"role": "assistant", "content": ""}],
    )
    msgs = srv.last().body["messages"]
    assert msgs[1]["content"][0]["type"] == "tool_use"
    assert len(msgs) == 2  # the empty assistant turn is gone


def test_anthropic_history_sent_to_openai(srv):
    srv.reply("ok")
    history = copy.deepcopy(HISTORY_ANTHROPIC)
    history[1]["content"].insert(0, {"type": "thinking", "thinking": "hm", "signature": "s"})
    history[1]["content"].append({"type": "text", "text": " Done."})
    history.append({"role": "assistant", "content": [{"type": "text", "text": "Final."}]})
    chat(client(srv, "openai"), system="", messages=history)
    assert srv.last().body["messages"] == [
        {"role": "user", "content": "Remember I like tea."},
        {
            "role": "assistant",
            "content": "Storing. Done.",
            "tool_calls": [
                {
                    "id": "toolu_1",
                    "type": "function",
                    "function": {"name": "memory_store", "arguments": '{"content":"tea"}'},
                },
                {
                    "id": "toolu_2",
                    "type": "function",
                    "function": {"name": "memory_recall", "arguments": "{}"},
                },
            ],
        },
        {"role": "tool", "tool_call_id": "toolu_1", "content": '{"ok":true}'},
        {"role": "tool", "tool_call_id": "toolu_2", "content": "Error: disk full"},
        {"role": "assistant", "content": "Final."},
    ]


@pytest.mark.parametrize("backend", BACKENDS)
def test_reply_raw_replays_on_every_backend(srv, backend):
    """A persisted Reply.raw of any backend goes back to any backend."""
    srv.reply("", tool_calls=[("memory_store", {"content": "ü"})])
    first = chat(client(srv, backend))
    call = first.tool_calls[0]
    history = [
        {"role": "user", "content": "hi"},
        json.loads(first.raw),
        {"role": "tool", "tool_call_id": call.id, "content": "stored", "is_error": False},
    ]
    for other in BACKENDS:
        srv.reply("done")
        assert chat(client(srv, other), messages=history).text == "done"
        body = srv.last().body
        if other == "openai":
            assert body["messages"][2]["tool_calls"][0]["id"] == call.id
            assert json.loads(body["messages"][2]["tool_calls"][0]["function"]["arguments"]) == {
                "content": "ü"
            }
            assert body["messages"][3] == {
                "role": "tool",
                "tool_call_id": call.id,
                "content": "stored",
            }
        elif other == "openai_responses":
            calls = [i for i in body["input"] if i.get("type") == "function_call"]
            assert [(c["call_id"], c["name"]) for c in calls] == [(call.id, "memory_store")]
            assert json.loads(calls[0]["arguments"]) == {"content": "ü"}
            assert body["input"][-1] == {"type": "function_call_output", "call_id": call.id,
                                         "output": "stored"}
        else:
            assert body["messages"][1]["content"][-1]["input"] == {"content": "ü"}
            assert body["messages"][2]["content"][0]["tool_use_id"] == call.id


# -- errors --------------------------------------------------------------------------


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize(
    "status,message",
    [(401, "Incorrect API key provided: sk-t***"), (500, "The server had an error")],
)
def test_http_errors_carry_api_message(srv, backend, status, message):
    srv.error(status, message)
    e = fails(client(srv, backend))
    assert e.kind == "http"
    assert e.status == status
    assert str(status) in str(e) and message in str(e)
    assert backend in str(e)


@pytest.mark.parametrize("backend", BACKENDS)
def test_http_error_with_string_error_or_html(srv, backend):
    srv.error(429, body=json.dumps({"error": "rate limited, slow down"}))
    e = fails(client(srv, backend))
    assert (e.kind, e.status) == ("http", 429) and "rate limited, slow down" in str(e)
    srv.error(502, body="<html>" + "x" * 500 + "</html>")
    e = fails(client(srv, backend))
    assert (e.kind, e.status) == ("http", 502)
    assert "<html>xxx" in str(e) and "</html>" not in str(e)  # first 200 characters only
    srv.error(503, body="")
    e = fails(client(srv, backend))
    assert (e.kind, e.status) == ("http", 503)


@pytest.mark.parametrize("backend", BACKENDS)
def test_an_answer_outside_2xx_is_an_http_error_with_the_api_message(srv, backend):
    # 3xx is not a success either (no redirect to follow here: no Location header)
    srv.error(300, "multiple choices")
    e = fails(client(srv, backend))
    assert (e.kind, e.status) == ("http", 300), e
    # an error body with only a top-level "message" is quoted as that message
    srv.error(429, body=json.dumps({"message": "quota exceeded"}))
    e = fails(client(srv, backend))
    assert str(e) == "%s: HTTP 429: quota exceeded" % backend


REDIRECTS = (301, 302, 303, 307, 308)


@pytest.mark.parametrize("backend", BACKENDS)
def test_no_redirect_is_followed_and_the_key_stays_home(backend):
    # Issue 24 item 5: CPython's aiohttp followed a redirect to another origin with the API
    # key (Anthropic's x-api-key is not a header it strips) and took that host's answer.
    with LLMServer() as home, LLMServer() as other:
        other.fallback = LLMServer.spec_reply("the other host's answer")
        for status in REDIRECTS:
            target = other.url + PATHS[backend]
            home.redirect(status, target)
            e = fails(client(home, backend, api_key="sk-secret"))
            assert (e.kind, e.status) == ("http", status), (status, e)
            assert "redirect" in str(e) and target in str(e), str(e)
        assert len(home.requests) == len(REDIRECTS)
        assert other.requests == []  # neither the key nor the conversation went there


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_callers_header_replaces_the_clients_own_whatever_its_case(srv, backend):
    srv.reply("ok")
    own = "x-api-key" if backend == "anthropic" else "authorization"
    chat(client(srv, backend, headers={own.upper(): "Bearer mine"}))
    sent = [v for k, v in srv.last().header_items if k.lower() == own]
    assert sent == ["Bearer mine"], srv.last().header_items  # once, the caller's


@pytest.mark.parametrize("backend", BACKENDS)
def test_an_answer_over_max_answer_is_malformed(srv, backend):
    c = client(srv, backend)
    c.max_answer = 4000
    srv.reply("x" * 4500)
    e = fails(c)
    assert e.kind == "malformed" and "answer over 4000 bytes" in str(e), e
    srv.reply("x" * 3000)
    assert chat(c).text == "x" * 3000


def _raw_server(answers):
    """One connection per answer: reads the request, sends these raw bytes, closes."""
    import threading

    lst = socket.socket()
    lst.bind(("127.0.0.1", 0))
    lst.listen(8)

    def serve():
        with lst:
            for data in answers:
                conn, _ = lst.accept()
                with conn:
                    buf = b""
                    while b"\r\n\r\n" not in buf:
                        buf += conn.recv(4096)
                    head, _, rest = buf.partition(b"\r\n\r\n")
                    n = int(head.lower().split(b"content-length:")[1].split(b"\r\n")[0])
                    while len(rest) < n:
                        rest += conn.recv(65536)
                    try:
                        conn.sendall(data)
                    except OSError:  # the client stopped reading
                        pass

    threading.Thread(target=serve, daemon=True).start()
    return "http://127.0.0.1:%d/v1" % lst.getsockname()[1]


def test_lines_that_never_end_are_malformed_answers():
    # Issue 24 item 8 on CPython: aiohttp bounds the lines itself; its refusal is a
    # malformed answer (as on MicroPython), quoted in a few hundred characters, not kilobytes
    endless = b"y" * (1 << 20)
    te = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
    answers = [b"HTTP/1.1 200 " + endless, b"HTTP/1.1 200 OK\r\nX-Big: " + endless,
               te + b"1" + endless, te + b"2\r\n{}" + endless, te + b"2\r\n{}\r\n0\r\nX-T: " + endless]
    url = _raw_server(answers)
    for data in answers:
        e = fails(llm.from_config("openai", base_url=url, timeout=5))
        assert e.kind == "malformed" and len(str(e)) < 400, (data[:60], e)


def test_max_answer_at_its_exact_edge():
    # Content-Length, chunked and to the end of the stream: max_answer bytes are read,
    # one more is refused
    shape = b'{"choices":[{"message":{"role":"assistant","content":"%s"},"finish_reason":"stop"}]}'
    n = 4096
    ok = shape % (b"x" * (n - len(shape % b"")))
    bodies = {"length": lambda b: b"Content-Length: %d\r\n\r\n%s" % (len(b), b),
              "chunked": lambda b: b"Transfer-Encoding: chunked\r\n\r\n%x\r\n%s\r\n0\r\n\r\n" % (len(b), b),
              "eof": lambda b: b"Connection: close\r\n\r\n" + b}
    answers = []
    for frame in bodies.values():
        answers += [b"HTTP/1.1 200 OK\r\n" + frame(ok), b"HTTP/1.1 200 OK\r\n" + frame(ok + b" ")]
    url = _raw_server(answers)
    for kind in bodies:
        c = llm.from_config("openai", base_url=url, timeout=5, max_answer=n)
        assert chat(c).text == "x" * (n - len(shape % b"")), kind
        e = fails(c)
        assert e.kind == "malformed" and "answer over 4096 bytes" in str(e), (kind, e)


@pytest.mark.parametrize("backend", BACKENDS)
def test_slow_answer_times_out(srv, backend):
    srv.delay(5)
    t = time.monotonic()
    e = fails(client(srv, backend, timeout=0.3))
    assert time.monotonic() - t < 2
    assert e.kind == "timeout" and e.status is None
    assert "no answer within 0.3 s" in str(e)
    # the server keeps working after an abandoned request
    srv.reply("fast")
    assert chat(client(srv, backend, timeout=2)).text == "fast"


@pytest.mark.parametrize("backend", BACKENDS)
def test_garbage_body_is_malformed(srv, backend):
    srv.garbage(b"\xff\xfe<<not json at all>>")
    e = fails(client(srv, backend))
    assert e.kind == "malformed" and e.status == 200
    assert "not JSON" in str(e)


OPENAI_BAD = [
    ([1, 2], "not a JSON object"),
    ({"id": "x"}, "no choices"),
    ({"choices": []}, "no choices"),
    ({"error": {"message": "quota exceeded"}}, "quota exceeded"),
    ({"choices": [None]}, "message is not an object"),
    ({"choices": [{"message": "hi"}]}, "message is not an object"),
    ({"choices": [{"message": {"tool_calls": {"a": 1}}}]}, "tool_calls is not a list"),
    (
        {"choices": [{"message": {"tool_calls": [{"id": "c"}]}}]},
        "tool call 0 has no function name",
    ),
    ({"choices": [{"message": {"tool_calls": ["x"]}}]}, "tool call 0 has no function name"),
    ({"choices": [{"message": {"tool_calls": [{"id": "c", "function": {"arguments": "{}"}}]}}]},
     "tool call 0 has no function name"),
    ({"choices": [{"message": {"tool_calls": [{"id": "c", "function": {"name": ""}}]}}]},
     "tool call 0 has no function name"),
    ({"choices": "abc"}, "no choices"),
]

ANTHROPIC_BAD = [
    ("just a string", "not a JSON object"),
    ({"type": "message"}, "content is not a list"),
    (
        {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}},
        "Overloaded",
    ),
    ({"content": "hi"}, "content is not a list"),
    ({"content": [None]}, "content block 0 is not an object"),
    ({"content": [{"type": "text"}]}, "text block 0 has no text"),
    ({"content": [{"type": "tool_use", "id": "t", "input": {}}]}, "tool_use block 0 has no name"),
]


@pytest.mark.parametrize("body,what", OPENAI_BAD)
def test_openai_wrong_shapes_are_malformed(srv, body, what):
    srv.json(body)
    e = fails(client(srv, "openai"))
    assert e.kind == "malformed", e
    assert what in str(e)


@pytest.mark.parametrize("body,what", ANTHROPIC_BAD)
def test_anthropic_wrong_shapes_are_malformed(srv, body, what):
    srv.json(body)
    e = fails(client(srv, "anthropic"))
    assert e.kind == "malformed", e
    assert what in str(e)


@pytest.mark.parametrize("backend", BACKENDS)
def test_connection_refused_is_network(backend):
    # a bound socket that never listens: connections to it are refused, and no one else
    # can take the port while the test runs
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    try:
        port = s.getsockname()[1]
        url = "http://127.0.0.1:%d" % port + ("" if backend == "anthropic" else "/v1")
        t = time.monotonic()
        e = fails(llm.from_config(backend, base_url=url, timeout=5))
        assert time.monotonic() - t < 2
    finally:
        s.close()
    assert e.kind == "network" and e.status is None
    assert "127.0.0.1:%d" % port in str(e)


@pytest.mark.parametrize("backend", BACKENDS)
def test_dropped_connection_is_network(srv, backend):
    srv.drop()
    e = fails(client(srv, backend))
    assert e.kind == "network"


def test_unscripted_server_answers_500(srv):
    e = fails(client(srv, "openai"))
    assert (e.kind, e.status) == ("http", 500) and "nothing scripted" in str(e)


# -- unicode -------------------------------------------------------------------------


@pytest.mark.parametrize("backend", BACKENDS)
def test_unicode_round_trip(srv, backend):
    words = 'Grüße, 你好, Привет 😀 \u2028 "quoted" \\ back'
    srv.reply("Antwort: " + words, tool_calls=[("memory_store", {"content": words})])
    history = [
        {"role": "user", "content": words},
        {"role": "tool", "tool_call_id": "x", "content": words, "is_error": False},
    ]
    r = chat(client(srv, backend), system="Système: " + words, messages=history)
    assert r.text == "Antwort: " + words
    assert json.loads(r.tool_calls[0].arguments) == {"content": words}
    assert words in r.raw or json.dumps(words, ensure_ascii=False)[1:-1] in r.raw
    req = srv.last()
    assert "你好" in req.text and "\\u" not in req.text.replace(
        "\\u2028", ""
    )  # raw UTF-8 on the wire
    assert req.headers["content-length"] == str(len(req.text.encode()))
    if backend == "openai":
        assert req.body["messages"][0]["content"] == "Système: " + words
        assert req.body["messages"][1]["content"] == words
    elif backend == "openai_responses":
        assert req.body["instructions"] == "Système: " + words
        assert req.body["input"][0] == {"role": "user", "content": words}
        assert req.body["input"][1]["output"] == words
    else:
        assert req.body["system"] == "Système: " + words
        assert req.body["messages"][0]["content"] == words
        assert req.body["messages"][1]["content"][0]["content"] == words


# -- the server helper itself --------------------------------------------------------


def test_server_async_use_and_fallback():
    async def main():
        async with LLMServer() as s:
            s.fallback = lambda req: LLMServer.spec_reply("echo %d" % len(req.body["messages"]))
            c = llm.OpenAI(base_url=s.openai_url)
            a = await c.chat("", [{"role": "user", "content": "a"}])
            b = await c.chat("sys", [{"role": "user", "content": "a"}])
            return a.text, b.text, len(s.requests)

    assert asyncio.run(main()) == ("echo 1", "echo 2", 2)


# -- OpenAI Responses ----------------------------------------------------------------


def test_responses_request_body(srv):
    srv.reply("Noted.")
    history = copy.deepcopy(HISTORY_OPENAI) + [{"role": "assistant", "content": "Done."},
                                               {"role": "user", "content": [
                                                   {"type": "text", "text": "And "},
                                                   {"type": "text", "text": "coffee?"}]}]
    before = copy.deepcopy(history)
    c = client(srv, "openai_responses", model="gpt-x", max_tokens=77, reasoning_effort="low")
    r = chat(c, system="You are Claw.", messages=history, tools=TOOLS)
    assert r.text == "Noted." and history == before
    req = srv.last()
    assert req.headers["authorization"] == "Bearer sk-test"
    assert req.body == {
        "model": "gpt-x",
        "max_output_tokens": 77,
        "store": False,
        "instructions": "You are Claw.",
        "reasoning": {"effort": "low"},
        "include": ["reasoning.encrypted_content"],
        "tools": [{"type": "function", "name": t.name, "description": t.description,
                   "parameters": s} for t, s in zip(TOOLS, TOOLS_SCHEMAS)],
        "input": [
            {"role": "user", "content": "Remember I like tea."},
            {"type": "function_call", "call_id": "call_1", "name": "memory_store",
             "arguments": '{"content":"tea"}'},
            {"type": "function_call", "call_id": "call_2", "name": "memory_recall",
             "arguments": "{}"},
            {"type": "function_call_output", "call_id": "call_1", "output": '{"ok":true}'},
            {"type": "function_call_output", "call_id": "call_2", "output": "Error: disk full"},
            {"role": "assistant", "content": "Done."},
            {"role": "user", "content": "And coffee?"},
        ],
    }


def test_responses_without_system_reasoning_or_key(srv):
    srv.reply("ok")
    chat(client(srv, "openai_responses", api_key=None), system="")
    body = srv.last().body
    assert set(body) == {"model", "max_output_tokens", "store", "input"}
    assert "authorization" not in srv.last().headers


def test_anthropic_history_sent_to_responses(srv):
    srv.reply("ok")
    chat(client(srv, "openai_responses"), messages=HISTORY_ANTHROPIC)
    assert srv.last().body["input"] == [
        {"role": "user", "content": "Remember I like tea."},
        {"role": "assistant", "content": "Storing."},
        {"type": "function_call", "call_id": "toolu_1", "name": "memory_store",
         "arguments": '{"content":"tea"}'},
        {"type": "function_call", "call_id": "toolu_2", "name": "memory_recall",
         "arguments": "{}"},
        {"type": "function_call_output", "call_id": "toolu_1", "output": '{"ok":true}'},
        {"type": "function_call_output", "call_id": "toolu_2", "output": "Error: disk full"},
    ]


def test_responses_tool_call_raw_is_esp_claw_shape_and_replays_verbatim(srv):
    srv.reply("Storing.", tool_calls=[{"id": "call_7", "name": "memory_store",
                                       "arguments": {"content": "tea"}}], reasoning="gAAAA-secret")
    r = chat(client(srv, "openai_responses"), tools=TOOLS)
    assert r.text == "Storing." and r.stop == "completed"
    assert [(c.id, c.name, c.arguments) for c in r.tool_calls] == [
        ("call_7", "memory_store", '{"content": "tea"}')]
    raw = json.loads(r.raw)
    output = raw.pop("_claw_provider_state")
    assert raw == {"role": "assistant", "content": "Storing.", "tool_calls": [
        {"id": "call_7", "type": "function",
         "function": {"name": "memory_store", "arguments": '{"content": "tea"}'}}]}
    assert output["backend"] == "openai_responses"
    assert [i["type"] for i in output["output"]] == ["reasoning", "message", "function_call"]
    assert list(json.loads(r.raw))[:3] == ["role", "content", "tool_calls"]  # ESP-Claw's order
    # replayed: the output items verbatim; a reasoning item only with its encrypted content
    msg = json.loads(r.raw)
    bare = copy.deepcopy(msg)
    del bare["_claw_provider_state"]["output"][0]["encrypted_content"]
    result = {"role": "tool", "tool_call_id": "call_7", "content": "ok", "is_error": False}
    for m, kinds in ((msg, ["reasoning", "message", "function_call"]),
                     (bare, ["message", "function_call"])):
        srv.reply("done")
        chat(client(srv, "openai_responses"), messages=[{"role": "user", "content": "hi"}, m, result])
        items = srv.last().body["input"]
        assert [i.get("type") for i in items[1:-1]] == kinds
        assert items[1:-1] == [i for i in msg["_claw_provider_state"]["output"] if i["type"] in kinds]
        assert items[-1] == {"type": "function_call_output", "call_id": "call_7", "output": "ok"}


def test_responses_answers(srv):
    srv.json({"status": "completed", "output": [
        {"type": "message", "content": [{"type": "refusal", "refusal": "I can't."}]}]})
    r = chat(client(srv, "openai_responses"))
    assert r.text == "I can't." and json.loads(r.raw) == {"role": "assistant", "content": "I can't."}
    srv.reply("partial answ", stop="length")
    r = chat(client(srv, "openai_responses"))
    assert (r.text, r.stop) == ("partial answ", "max_output_tokens")
    srv.json({"status": "completed", "output": [
        {"type": "function_call", "name": "t", "arguments": {"a": 1}}]})  # no call_id
    r = chat(client(srv, "openai_responses"))
    raw = json.loads(r.raw)
    assert r.tool_calls[0].id and raw["tool_calls"][0]["id"] == r.tool_calls[0].id
    assert raw["_claw_provider_state"]["output"][0]["call_id"] == r.tool_calls[0].id
    assert json.loads(r.tool_calls[0].arguments) == {"a": 1} and raw["content"] is None
    srv.json({"status": "completed", "output": []})
    r = chat(client(srv, "openai_responses"))
    assert r.text == "" and r.tool_calls == []


RESPONSES_BAD = [
    ({"id": "x"}, "output is not a list"),
    ({"error": {"message": "quota exceeded"}, "output": []}, "quota exceeded"),
    ({"status": "failed", "output": []}, "status failed"),
    ({"status": "incomplete", "incomplete_details": {"reason": "max_output_tokens"}, "output": []},
     "incomplete (max_output_tokens)"),
    ({"output": [None]}, "output item 0 is not an object"),
    ({"output": [{"type": "function_call", "call_id": "c"}]}, "function_call 0 has no name"),
    ({"output": "x"}, "output is not a list"),
]


@pytest.mark.parametrize("body,what", RESPONSES_BAD)
def test_responses_wrong_shapes_are_malformed(srv, body, what):
    srv.json(body)
    e = fails(client(srv, "openai_responses"))
    assert e.kind == "malformed", e
    assert what in str(e)


# -- the streamed request body -------------------------------------------------------


@pytest.mark.parametrize("backend", BACKENDS)
def test_streamed_history_is_sent_byte_identical(srv, backend):
    history = copy.deepcopy(HISTORY_OPENAI) + [{"role": "assistant", "content": "Ok ü."},
                                               {"role": "user", "content": "More?"}]
    texts = []
    # (split after the tool results: Anthropic's merge of neighbours stops at a streamed element)
    for messages in (history, [StreamedHistory(history)], [StreamedHistory(history[:4])] + history[4:]):
        srv.reply("ok")
        chat(client(srv, backend), system="sys", messages=messages, tools=TOOLS)
        texts.append(srv.last().text)
        assert srv.last().headers["content-length"] == str(len(texts[-1].encode()))
    assert texts[0] == texts[1] == texts[2]


@pytest.mark.parametrize("backend", BACKENDS)
def test_session_history_streamed_from_flash_is_the_history_parsed(srv, backend, tmp_path):
    # The Session History element (records copied from the files where they can be) and the
    # same history as dicts, through CPython's real aiohttp: the server gets the same bytes.
    from history_corpus import SID, build

    from claw_memory.session import Sessions

    s = Sessions(str(tmp_path / "sessions"))
    build(s)
    for tokens in (0, 6144, 60):
        h = s.history(SID, backend, tokens)
        texts = []
        for messages in ([h], h.messages(backend)):
            srv.reply("ok")
            chat(client(srv, backend), system="sys", messages=messages + [{"role": "user", "content": "next"}],
                 tools=TOOLS)
            texts.append(srv.last().text)
        assert texts[0] == texts[1], tokens
        sent = json.loads(texts[0])
        assert sent["messages" if backend != "openai_responses" else "input"], tokens


def test_streamed_history_that_lies_is_a_body_error(srv):
    srv.fallback = LLMServer.spec_reply("ok")
    for delta in (5, -5):
        with pytest.raises(transport.BodyError, match="json_length"):
            chat(client(srv, "openai"), messages=[LyingHistory(HISTORY_OPENAI, delta)])


# -- TLS -------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def certs(tmp_path_factory):
    return tlscerts.make(str(tmp_path_factory.mktemp("certs")))


def _fds():
    return len(os.listdir("/proc/self/fd"))


@pytest.mark.parametrize("backend", BACKENDS)
def test_tls_verifies_the_server(certs, backend):
    good = tlscerts.server_context(certs.server_cert, certs.server_key)
    evil = tlscerts.server_context(certs.evil_cert, certs.evil_key)
    with LLMServer(ssl=good) as srv, LLMServer(ssl=evil) as bad:
        srv.fallback = bad.fallback = LLMServer.spec_reply("secure")
        with open(certs.ca, "rb") as f:
            pem = f.read()
        with open(certs.ca_der, "rb") as f:
            der = f.read()
        for ca in (certs.ca, pem, der):
            assert chat(client(srv, backend, ca=ca)).text == "secure"
        assert srv.last().headers["content-length"] == str(len(srv.last().text.encode()))
        n = len(srv.requests)
        for s, ca in ((srv, certs.wrong_ca), (bad, certs.ca), (bad, certs.evil_cert),
                      (srv, None)):  # None: the system store, which knows no test CA
            e = fails(client(s, backend, ca=ca))
            assert e.kind == "tls" and "TLS connection to https://127.0.0.1:" in str(e), e
            assert "not trusted for this host" in str(e)
        assert len(srv.requests) == n and bad.requests == []  # no API key ever sent
        logs = []
        assert chat(client(bad, backend, insecure=True, log=logs.append)).text == "secure"
        assert len(logs) == 1 and "verification is OFF (insecure=True)" in logs[0]
        assert bad.last().headers.get("authorization", bad.last().headers.get("x-api-key"))


def test_a_damaged_certificate_in_the_ca_bundle_is_skipped_and_logged(certs, tmp_path):
    # Issue 24 item 11: one damaged base64 block failed every client ("incorrect padding")
    with open(certs.ca, "rb") as f:
        ca = f.read()
    with open(certs.wrong_ca, "rb") as f:
        other = f.read()
    bundle = tmp_path / "bundle.pem"
    bundle.write_bytes(tlscerts.bad_bundle(ca))
    with LLMServer(ssl=tlscerts.server_context(certs.server_cert, certs.server_key)) as srv:
        srv.fallback = LLMServer.spec_reply("secure")
        for ca_arg in (str(bundle), bundle.read_bytes()):
            logs = []
            c = client(srv, "anthropic", ca=ca_arg, log=logs.append)
            assert chat(c).text == "secure"
            where = str(bundle) if isinstance(ca_arg, str) else "(%d bytes)" % len(ca_arg)
            assert [ln.split(" skipped: ")[0] for ln in logs] == [
                "anthropic: CA bundle %s: certificate %d (line %d)" % (where, n, line)
                for n, line in ((1, 1), (2, 5), (4, 8 + ca.count(b"\n")))], logs
            assert "bad base64" in logs[0] and "cut short" in logs[2], logs
        # what is left trusts only what it should: another server is still refused
        only_other = tmp_path / "other.pem"
        only_other.write_bytes(tlscerts.bad_bundle(other))
        e = fails(client(srv, "openai", ca=str(only_other)))
        assert e.kind == "tls" and len(srv.requests) == 2, e  # nothing sent
    nothing = tmp_path / "nothing.pem"
    nothing.write_bytes(tlscerts.damaged(ca) + tlscerts.damaged(other))
    logs = []
    with pytest.raises(ValueError) as info:
        llm.from_config("openai", base_url="https://127.0.0.1:1/v1", ca=str(nothing), log=logs.append)
    assert str(info.value) == "openai: no usable certificate in the CA bundle %s" % nothing
    assert len(logs) == 2 and all(str(nothing) in ln for ln in logs), logs


def test_https_to_a_plain_http_server_is_a_tls_error(srv, certs):
    srv.fallback = LLMServer.spec_reply("never")
    url = "https://127.0.0.1:%d/v1" % srv.port
    e = fails(llm.from_config("openai", base_url=url, ca=certs.ca, timeout=5))
    assert e.kind == "tls" and "not trusted" not in str(e), e


def test_plain_http_with_a_key_to_another_host_is_logged():
    logs = []
    llm.OpenAI(base_url="http://192.168.1.20:8080/v1", api_key="k", log=logs.append)
    llm.OpenAI(base_url="http://127.0.0.1:8080/v1", api_key="k", log=logs.append)
    llm.OpenAI(base_url="http://192.168.1.20:8080/v1", log=logs.append)  # no key
    assert logs == ["openai: the API key goes to http://192.168.1.20:8080/v1 over plain http"]


def test_no_fd_leaked_on_cpython(certs):
    # The servers run in this process: count with none of them running.
    with LLMServer() as warm:
        warm.reply("warm")
        chat(client(warm, "openai"))  # aiohttp's first use opens what it keeps
    before = _fds()
    with LLMServer() as srv, \
            LLMServer(ssl=tlscerts.server_context(certs.evil_cert, certs.evil_key)) as evil:
        srv.delay(5)
        srv.drop()
        srv.error(500)
        srv.garbage(b"<html>")
        srv.reply("ok")
        kinds = []
        for backend, kw in (("openai", {"timeout": 0.3}), ("anthropic", {}),
                            ("openai_responses", {}), ("openai", {}), ("anthropic", {})):
            try:
                chat(client(srv, backend, **kw))
                kinds.append("ok")
            except llm.LLMError as e:
                kinds.append(e.kind)
        kinds.append(fails(client(evil, "openai", ca=certs.ca)).kind)
    assert kinds == ["timeout", "network", "http", "malformed", "ok", "tls"]
    assert _fds() == before


# -- core's builders give what the real client gives -----------------------------------------

# (text, tool calls as (id, name, arguments)) of answers a model may give
BUILT = [
    ("Noted.", []),
    ("Gr\u00fc\u00dfe \U0001f99e \"quoted\"", []),
    ("", [("call_a", "memory_store", '{"content":"likes jasmine tea","tags":"preference"}')]),
    ("Let me look.", [("call_b", "profile_read", '{"name":"user"}'), ("call_c", "memory_list", "{}")]),
]


def _built(backend, text, calls):
    from claw_memory.reply import Reply, ToolCall

    if calls:
        return Reply.calls(backend, [ToolCall(*c) for c in calls], text)
    return Reply.answer(backend, text)


def _server_fields(raw):
    # What a real Responses server adds to the output items it returns (ids, status,
    # annotations) and an offline stand-in has no reason to invent.
    raw = json.loads(raw)
    for item in (raw.get("_claw_provider_state") or {}).get("output", ()):
        item.pop("id", None)
        item.pop("status", None)
        for part in item.get("content") or ():
            part.pop("annotations", None)
    return raw


@pytest.mark.parametrize("backend", BACKENDS)
def test_core_builders_give_the_reply_the_client_gives(srv, backend):
    """Reply.answer / Reply.calls (an offline stand-in) build the Reply the backend's client
    returns for the same answer from the server: text, calls, stop and the persisted raw
    record (byte for byte, but for the ids and status a Responses server adds to its output)."""
    for text, calls in BUILT:
        srv.reply(text, tool_calls=[{"id": i, "name": n, "arguments": a} for i, n, a in calls])
        got = chat(client(srv, backend), tools=TOOLS)
        want = _built(backend, text, calls)
        assert (got.text, got.stop) == (want.text, want.stop), (backend, text)
        assert [(c.id, c.name, c.arguments) for c in got.tool_calls] == [
            (c.id, c.name, c.arguments) for c in want.tool_calls] == [
            (i, n, a) for i, n, a in calls], (backend, text)
        if backend == "openai_responses" and calls:
            assert _server_fields(got.raw) == _server_fields(want.raw)
        else:
            assert got.raw == want.raw, (backend, text)


def test_core_builders_fill_in_ids_and_refuse_what_no_client_returns():
    from claw_memory.reply import LLMError, Reply, ToolCall

    for backend in BACKENDS:
        r = Reply.calls(backend, [("memory_store", {"content": "tea"}), ("memory_list", None)])
        ids = [c.id for c in r.tool_calls]
        assert len(set(ids)) == 2 and all(i.startswith("call_") for i in ids)
        assert [c.arguments for c in r.tool_calls] == ['{"content":"tea"}', "{}"]
        assert Reply.calls(backend, [("memory_list", None)]).tool_calls[0].id not in ids, "fresh"
        assert r.text == "" and r.stop in ("tool_calls", "tool_use", "completed")
        with pytest.raises(ValueError, match="no tool call"):
            Reply.calls(backend, [])
    # arguments given as an object become JSON text, as every client gives them
    for backend in BACKENDS:
        r = Reply.calls(backend, [ToolCall("t0", "memory_list", {"limit": 3})])
        assert [(c.id, c.arguments) for c in r.tool_calls] == [("t0", '{"limit":3}')]
        assert r.raw == _built(backend, "", [("t0", "memory_list", '{"limit":3}')]).raw
    # Anthropic's tool_use input is an object: the client re-encodes it
    r = Reply.calls("anthropic", [ToolCall("t1", "memory_store", '{"content": "tea"}')])
    assert r.tool_calls[0].arguments == '{"content":"tea"}'
    assert json.loads(r.raw)["content"] == [
        {"type": "tool_use", "id": "t1", "name": "memory_store", "input": {"content": "tea"}}]
    with pytest.raises(ValueError, match="not a JSON object"):
        Reply.calls("anthropic", [("memory_store", "[1]")])
    # ESP-Claw's backend names are accepted; others are not
    assert Reply.answer("openai_compatible", "x").raw == Reply.answer("openai", "x").raw
    with pytest.raises(ValueError, match="unknown LLM backend"):
        Reply.answer("gemini", "x")
    # the contract's types are the ones claw_memory.llm re-exports
    assert (llm.Reply, llm.ToolCall, llm.LLMError) == (Reply, ToolCall, LLMError)
