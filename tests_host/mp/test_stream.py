# The history a request sends (session.stream, session.window): streamed from flash byte for
# byte as the history parsed and converted would be, within the token budget (ESP-Claw line
# B, §6.9 in docs/DESIGN.md), never starting inside a tool exchange.
import json
import struct

from flashsim import mount
from history_corpus import SID, build
from mptest import eq, ok
from scripted_llm import expand
import strictjson

from claw_memory import fsutil, wire
from claw_memory._compat import dumps
from claw_memory.llm import transport
from claw_memory.session import Sessions
from claw_memory.session import window
from claw_memory.wire import convert, dump

HEAP = "8M"
D = "/flash/sessions"
BACKENDS = ("openai", "anthropic", "openai_responses")


def _fresh(**kw):
    dev = mount("lfs2", "/flash", blocks=256)
    fsutil.makedirs(D)
    return dev, Sessions(D, **kw)


def _bodies(h, backend):
    """(streamed body, body of the same history as dicts) as the clients write them."""
    head = {"model": "m", "max_tokens": 9}
    a = transport.Body(head, "messages", [{"role": "system", "content": "s"}, h], backend)
    b = transport.Body(head, "messages", [{"role": "system", "content": "s"}]
                       + convert(h.messages(backend), backend), backend)
    da = b"".join(a.pieces())
    db = b"".join(b.pieces())
    eq(len(da), a.length, "Content-Length of the streamed body")
    return da, db


def test_streamed_body_is_the_converted_history_byte_for_byte():
    dev, s = _fresh()
    build(s)
    for tokens in (0, 6144, 120, 40, 1):
        for backend in BACKENDS:
            h = s.history(SID, backend, tokens)
            da, db = _bodies(h, backend)
            eq(da, db, "%s, %d tokens" % (backend, tokens))
            json.loads(da)  # valid JSON
            expand([h], backend)  # and again, as the agent tests check it
    s.close()  # the index written: the same again from the .idx alone
    s = Sessions(D)
    for backend in BACKENDS:
        da, db = _bodies(s.history(SID, backend, 0), backend)
        eq(da, db, backend + " after close")
    dev.unmount()


def test_what_each_backend_gets():
    dev, s = _fresh()
    build(s)
    msgs = s.messages(SID, "openai", tokens=0)
    texts = [m.get("content") for m in msgs]
    ok("Noted: tea." in texts and "caf\u00e9 / written by another JSON writer" in texts, "finals")
    ids = [m.get("tool_call_id") for m in msgs if m.get("role") == "tool"]
    eq(ids, ["c1", "c2", "c9"], "paired results; the result for another id and its call left out, "
       "the Responses turn's tool traffic too (another backend format)")
    eq(msgs[-1]["tool_call_id"], "c9", "the unfinished turn's records are sent")
    ok(not any(m.get("tool_call_id") == "tu1" for m in msgs), "Anthropic tool traffic dropped for OpenAI")
    ok({"role": "assistant", "content": "You like tea."} in msgs, "Anthropic answer degraded to text")
    an = s.messages(SID, "anthropic", tokens=0)
    ok(any(m.get("tool_call_id") == "tu1" for m in an), "its own tool traffic kept")
    ok(not any(m.get("tool_call_id") in ("c1", "c2") for m in an), "OpenAI tool traffic dropped")
    body = json.loads(_bodies(s.history(SID, "anthropic", 0), "anthropic")[0])
    roles = [m["role"] for m in body["messages"]]
    for a, b in zip(roles, roles[1:]):
        ok(not (a == "assistant" and b == "assistant"), "no two assistant turns in a row")
    groups = [m for m in body["messages"] if isinstance(m["content"], list)
              and m["content"] and m["content"][0].get("type") == "tool_result"]
    ok(all(len(g["content"]) >= 1 for g in groups), "results grouped")
    dev.unmount()


def test_window_as_line_b_without_its_defects():
    dev, s = _fresh()
    for n in range(30):
        s.persist("w", [(1, None, "question %d %s" % (n, "x" * 200))])
        s.persist("w", [(3, '{"role":"assistant","content":null,"tool_calls":[{"id":"c%d","type":"function","function":{"name":"t","arguments":"{}"}}]}' % n, None),
                        (4, '[{"role":"tool","tool_call_id":"c%d","content":"%s","is_error":false}]' % (n, "r" * 300), None)])
        s.persist("w", [(2, None, "answer %d" % n)], turn_completed=True)
    whole = s.messages("w", tokens=0)
    eq(whole[0]["role"], "user", "no budget: everything, no summary")
    eq(len(whole), 120, "all of it")
    eq(s.messages("w", tokens=10 ** 6), whole, "fits: unchanged, as line B returns it")
    for budget in (6144, 2000, 700, 300):
        msgs = s.messages("w", tokens=budget)
        head = msgs[0]
        eq(head["role"], "system", "a summary first (%d)" % budget)
        ok(head["content"].startswith(window.SUMMARY_HEAD), "line B's heading")
        lines = json.loads(head["content"][len(window.SUMMARY_HEAD):])
        kept = msgs[1:]
        eq(kept[0]["role"], "user", "the window starts at a user message (%d)" % budget)
        first = int(kept[0]["content"].split()[1])
        ok(len(lines) <= 21, "at most 20 lines and the note")
        eq(lines[0], "user: question 0 " + "x" * 53, "oldest first, 64 characters")
        eq(lines[1], "assistant: [no text]", "a tool call has no text")
        eq(lines[2], "assistant: answer 0", "answers")
        if first * 4 > 30:
            eq(lines[-1], "\u2026 %d earlier / tool messages omitted" % (first * 4 - 20),
               "the rest counted (%d)" % budget)
        cost = sum(window.cost(len(json.dumps(m, separators=(",", ":"))) + 1) for m in kept)
        ok(cost <= budget + 4 * len(kept), "within the budget (%d: %d)" % (budget, cost))
        for i, m in enumerate(kept):
            if m["role"] == "tool":
                ok(kept[i - 1].get("tool_calls") or kept[i - 1]["role"] == "tool", "every result after its call")
    one = s.messages("w", tokens=1)
    eq([m["role"] for m in one], ["system", "user", "assistant", "tool", "assistant"],
       "over the budget: the newest turn still goes whole")
    dev.unmount()


def test_window_costs_come_from_the_index():
    dev, s = _fresh()
    for n in range(40):
        s.persist("c", [(1, None, "q%d %s" % (n, "y" * 100))])
        s.persist("c", [(2, None, "a%d" % n)], turn_completed=True)
    s.close()
    s = Sessions(D)
    h = s.history("c", tokens=500)
    log = s.path("c")
    with open(log, "rb") as f:
        data = f.read()
    with open(log, "wb") as f:  # the record bytes are not read to choose the window
        f.write(b"#" * len(data))
    snap = window.Snapshot(log, s._open(log))
    eq(window.start(snap, 500, 65536), h.first, "same window from the index alone")
    dev.unmount()


def test_a_log_starting_with_a_bom():
    dev, s = _fresh()
    s.persist("b", [(1, None, "first")])
    s.persist("b", [(2, None, "second")], turn_completed=True)
    s.close()
    log = Sessions(D).path("b")
    with open(log, "rb") as f:
        data = f.read()
    with open(log, "wb") as f:
        f.write(b"\xef\xbb\xbf" + data)
    with open(log + ".idx", "rb") as f:
        idx = bytearray(f.read())
    for k in range(8, len(idx), 10):  # ESP-Claw's index of such a file: entry 0 covers the BOM
        off, ln, t, fmt = struct.unpack("<IIBB", idx[k:k + 10])
        idx[k:k + 10] = struct.pack("<IIBB", 0, ln + 3, t, fmt) if off == 0 else \
            struct.pack("<IIBB", off + 3, ln, t, fmt)
    with open(log + ".idx", "wb") as f:
        f.write(idx)
    s = Sessions(D)
    eq([m["content"] for m in s.messages("b")], ["first", "second"], "the first record is read")
    for backend in BACKENDS:
        da, db = _bodies(s.history("b", backend), backend)
        eq(da, db, backend)
        ok(b"\xef\xbb\xbf" not in da, "the BOM is not sent")
    dev.unmount()


def test_records_that_are_not_what_dumps_writes_are_parsed():
    dev, s = _fresh()
    for raw in ('{"role":"user","content":"a\\/b"}', '{"role":"user","content":"\\u00e9"}',
                '{"role":"user","content":"tab\\u0009"}', '{"role":"user","content":"bs\\b"}',
                '{"role":"user", "content":"spaced"}', '{"role":"user","content":"x","role":"user"}',
                '{"role":"user","content":"upper \\u001F"}'):
        s.persist("p", [(1, raw, None)])
    s.persist("p", [(2, None, "ok")], turn_completed=True)
    for backend in BACKENDS:
        h = s.history("p", backend)
        da, db = _bodies(h, backend)
        eq(da, db, backend)
        eq(bytes(h._plan.verdicts[:7]), b"\x00\x00\x00\x00\x01\x00\x00", "parsed, but for the spaced one")
    dev.unmount()


def test_messages_for_another_backend_and_dump_order():
    eq(dump({"content": "c", "role": "user"}), '{"role":"user","content":"c"}', "role first")
    eq(dump({"is_error": True, "content": "x", "tool_use_id": "i", "type": "tool_result"}),
       '{"type":"tool_result","tool_use_id":"i","content":"x","is_error":true}', "blocks too")


def test_a_parsed_tool_result_with_non_ascii_text_is_counted_in_bytes():
    # A tool result that is not what dumps writes (here an escaped slash) is parsed and
    # written again; its length on the wire must count bytes ("é" is two), or the body is
    # not what its Content-Length announced and the request fails.
    dev, s = _fresh()
    call = ('{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function",'
            '"function":{"name":"t","arguments":"{}"}}]}')
    res = '[{"role":"tool","tool_call_id":"c1","content":"caf\u00e9 a\\/b \u00fc","is_error":%s}]'
    for backend in BACKENDS:
        for err in ("false", "true"):
            sid = backend + err
            s.persist(sid, [(1, None, "hi")], backend=backend)
            s.persist(sid, [(3, call, None), (4, res % err, None)], backend=backend)
            s.persist(sid, [(2, None, "done")], turn_completed=True, backend=backend)
            da, db = _bodies(s.history(sid, backend, 0), backend)
            eq(da, db, backend)
            ok("caf\u00e9 a/b \u00fc" in da.decode(), "the result is sent (%s)" % backend)
            json.loads(da)
    dev.unmount()


def _cost(ln):
    # A record of ln stored bytes (its JSON and newline): 4 tokens, and one per 3 bytes
    # begun (ESP-Claw line B's overhead per message; a token per 3 bytes, rounded up).
    return 4 + (ln // 3 + (1 if ln % 3 else 0))


def test_a_history_costing_exactly_the_budget_is_sent_whole():
    dev, s = _fresh()
    lines = []
    for n in range(3):
        q = '{"role":"user","content":"question %d?"}' % n
        a = '{"role":"assistant","content":"answer %d."}' % n
        s.persist("e", [(1, q, None)])
        s.persist("e", [(2, a, None)], turn_completed=True)
        lines += [q, a]
    ok(any((len(x) + 1) % 3 for x in lines), "lengths that rounding changes")
    total = sum(_cost(len(x) + 1) for x in lines)
    whole = s.messages("e", tokens=total)
    eq([m["role"] for m in whole], ["user", "assistant"] * 3, "exactly the budget: all, no summary")
    cut = s.messages("e", tokens=total - 1)
    eq(cut[0]["role"], "system", "one token less: a summary")
    eq([m["content"] for m in cut[1:]], ["question 1?", "answer 1.", "question 2?", "answer 2."],
       "the oldest turn summarized")
    dev.unmount()


def _summary_lines(msgs):
    ok(msgs[0]["role"] == "system" and msgs[0]["content"].startswith(window.SUMMARY_HEAD), "a summary")
    return json.loads(msgs[0]["content"][len(window.SUMMARY_HEAD):])


def test_summary_lines_follow_the_backend_and_the_window_start():
    # OpenAI tool rounds: the OpenAI summary shows a call as "[no text]"; for Anthropic another
    # backend's tool traffic is left out of the summary as it is left out of the messages.
    # Each request's summary is its own, whatever an earlier request of the session summarized.
    dev, s = _fresh()
    for n in range(8):
        s.persist("k", [(1, None, "q%d" % n)])
        s.persist("k", [(3, '{"role":"assistant","content":null,"tool_calls":[{"id":"c%d","type":'
                            '"function","function":{"name":"t","arguments":"{}"}}]}' % n, None),
                        (4, '[{"role":"tool","tool_call_id":"c%d","content":"r","is_error":false}]' % n,
                         None)])
        s.persist("k", [(2, None, "a%d" % n)], turn_completed=True)

    def expect(backend, msgs):
        k = int(msgs[1]["content"][1:])  # the first turn sent
        want = []
        for j in range(k):
            want += ["user: q%d" % j] + (["assistant: [no text]"] if backend == "openai" else []) + \
                ["assistant: a%d" % j]
        want = want[:20]  # at most 20 lines, then how many records they leave out
        want.append("\u2026 %d earlier / tool messages omitted" % (4 * k - len(want)))
        eq(_summary_lines(msgs), want, "%s, from turn %d" % (backend, k))
        return k

    k1 = expect("anthropic", s.messages("k", "anthropic", tokens=250))
    eq(expect("openai", s.messages("k", "openai", tokens=250)), k1, "the same window start")
    k2 = expect("openai", s.messages("k", "openai", tokens=550))
    ok(0 < k2 < k1, "a bigger budget starts earlier (%d, %d)" % (k1, k2))
    eq(expect("anthropic", s.messages("k", "anthropic", tokens=550)), k2, "and for Anthropic")
    dev.unmount()


def test_error_results_and_results_without_their_call():
    dev, s = _fresh()
    call = ('{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function",'
            '"function":{"name":"t","arguments":"{}"}}]}')
    for backend in BACKENDS:
        sid = "e-" + backend
        s.persist(sid, [(1, None, "q1")], backend=backend)
        s.persist(sid, [(3, call, None), (4, '[{"role":"tool","tool_call_id":"c1","content":"boom",'
                                             '"is_error":true}]', None)], backend=backend)
        s.persist(sid, [(2, None, "a1")], turn_completed=True, backend=backend)
        s.persist(sid, [(1, None, "q2")], backend=backend)
        s.persist(sid, [(4, '[{"role":"tool","tool_call_id":"c7","content":"orphan","is_error":false}]',
                         None)], backend=backend)
        s.persist(sid, [(2, None, "a2")], turn_completed=True, backend=backend)
        da, db = _bodies(s.history(sid, backend, 0), backend)
        eq(da, db, backend)
        text = da.decode()
        ok("orphan" not in text, "a result whose call is not right before it is not sent (%s)" % backend)
        if backend == "anthropic":
            ok('"content":"boom","is_error":true}' in text, "Anthropic's error flag")
        else:
            ok('"Error: boom"' in text, "the error in the text (%s)" % backend)
    dev.unmount()


def test_records_another_writer_damaged_are_not_sent_as_stored():
    # A log and index written by hand: raw control characters and invalid UTF-8 inside
    # strings (also before the read buffer's first refill of a long string), an entry that
    # ends without the record's newline, bytes after a record's message. What goes out is
    # what parsing the records gives (damaged ones left out), and strict JSON.
    dev, s = _fresh()
    recs = [
        (1, b'{"role":"user","content":"a raw\ttab"}\n'),
        (2, b'{"role":"assistant","content":"bad \xff byte"}\n'),
        (1, b'{"role":"user","content":"early \x01 control' + b"x" * 3000 + b'"}\n'),
        (2, b'{"role":"assistant","content":"no newline"} '),
        (1, b'\n{"role":"user","content":"trailing"} x\n'),
        (2, b'{"role":"assistant","content":"fine"}\n'),
    ]
    log = s.path("h")
    data = bytearray()
    idx = bytearray(b"CHDX\x01\x00\x0a\x00")
    for kind, rec in recs:
        skip = 1 if rec[:1] == b"\n" else 0  # the newline ending the entry before
        idx += struct.pack("<IIBB", len(data) + skip, len(rec) - skip, kind, 1)
        data += rec
    with open(log, "wb") as f:
        f.write(data)
    with open(log + ".idx", "wb") as f:
        f.write(idx)
    s = Sessions(D)
    for backend in BACKENDS:
        da, db = _bodies(s.history("h", backend, 0), backend)
        eq(da, db, backend)
        strictjson.check(da)
        text = da.decode()
        for gone in ("no newline", "trailing"):
            ok(gone not in text, "%r is not sent (%s)" % (gone, backend))
        ok('"content":"fine"' in text, "the sound record is sent")
    dev.unmount()


def test_a_user_record_without_content_goes_as_empty_text():
    # Another writer's user record with no content: every API wants text there (OpenAI
    # rejects a user message whose content is null).
    dev, s = _fresh()
    for backend in BACKENDS:
        sid = "u-" + backend
        s.persist(sid, [(1, '{"role":"user"}', None)], backend=backend)
        s.persist(sid, [(2, None, "hello")], turn_completed=True, backend=backend)
        da, db = _bodies(s.history(sid, backend, 0), backend)
        eq(da, db, backend)
        strictjson.check(da)
        eq(json.loads(da)["messages"], [{"role": "system", "content": "s"}, {"role": "user", "content": ""},
                                        {"role": "assistant", "content": "hello"}], backend)
    dev.unmount()


def test_anthropic_tool_use_input_is_always_an_object():
    # Arguments that are JSON but not an object (or not JSON) go to Anthropic as {}: its API
    # rejects any other tool_use input. OpenAI takes the arguments text as it is.
    dev, s = _fresh()
    for n, args in enumerate(("[1,2]", "42", '"text"', "null", "{not json", '{"name":"user"}')):
        call = ('{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function",'
                '"function":{"name":"t","arguments":%s}}]}' % json.dumps(args))
        for backend in ("anthropic", "openai"):
            sid = "a%d-%s" % (n, backend)
            s.persist(sid, [(1, None, "q")], backend=backend)
            s.persist(sid, [(3, call, None), (4, '[{"role":"tool","tool_call_id":"c1","content":"r",'
                                                 '"is_error":false}]', None)], backend=backend)
            s.persist(sid, [(2, None, "a")], turn_completed=True, backend=backend)
            da, db = _bodies(s.history(sid, backend, 0), backend)
            eq(da, db, backend)
            strictjson.check(da)
            turn = json.loads(da)["messages"][2]
            if backend == "anthropic":
                want = {"name": "user"} if n == 5 else {}
                eq(turn, {"role": "assistant", "content": [{"type": "tool_use", "id": "c1", "name": "t",
                                                            "input": want}]}, "%s: %r" % (backend, args))
            else:
                eq(turn["tool_calls"][0]["function"]["arguments"], args, "%s: %r" % (backend, args))
    dev.unmount()


# -- the byte frames and the dict shapes agree ----------------------------------------------
# wire.py spells each message shape twice: as dicts (to_wire, dumped by the clients) and as
# the bytes a flat record's strings are copied between (frame, ANTHROPIC_ROUND, RECORD_*).
# The tests below hold the two together: each frame directly, then whole histories of every
# record shape, written by every backend and read for every backend, streamed and as dicts.

_VALUES = ("plain", "caf\u00e9 \u00fc \u4e2d\u6587 \U0001f99e", 'say "hi" \\ back\\slash',
           "line\nbreak\ttab\rreturn", "ctl \x01 \x08 \x0c \x1f end", "")


def _body(s):
    # A JSON string's body as dumps writes it (what a record stores between the quotes).
    return dumps(s)[1:-1].encode()


def test_every_flat_frame_is_the_dict_shape_for_every_backend():
    for backend in BACKENDS + ("unknown",):  # an unknown backend gets OpenAI's shapes
        for v in _VALUES:
            if v:  # an empty content is never flat (Anthropic sends no empty assistant turn)
                for kind, role in ((wire.FLAT_USER, "user"), (wire.FLAT_ASSISTANT, "assistant")):
                    head, tail = wire.frames(backend)[kind]
                    eq(head + _body(v) + tail, wire.dumped({"role": role, "content": v}, backend),
                       "%s %s %r" % (backend, role, v))
            for tid in ("c1", "toolu_\u00e9", ""):
                for err in (False, True):
                    head, mid, tail = wire.frames(backend)[wire.FLAT_TOOL_ERROR if err else wire.FLAT_TOOL]
                    m = {"role": "tool", "tool_call_id": tid, "content": v, "is_error": err}
                    eq(head + _body(tid) + mid + _body(v) + tail,
                       wire.dumped(m, backend, backend == "anthropic"), "%s result %r %r %s" % (backend, tid, v, err))
    for err in (False, True):  # a round of Anthropic results: one user message of their blocks
        call = {"role": "assistant", "content": None, "tool_calls": [
            {"id": i, "type": "function", "function": {"name": "t", "arguments": "{}"}} for i in ("a", "b")]}
        rs = [{"role": "tool", "tool_call_id": i, "content": "r" + i, "is_error": err} for i in ("a", "b")]
        blocks = [wire.dumped(r, "anthropic", True) for r in rs]
        head, tail = wire.ANTHROPIC_ROUND
        eq(head + b",".join(blocks) + tail, dump(convert([call] + rs, "anthropic")[1]).encode(), "a round")


def test_record_frames_are_what_dump_writes():
    # The records the agent writes (wire.dump of the message dicts) are read by these bytes.
    for v in _VALUES[:-1]:
        for head, kind, role in wire.RECORD_HEADS:
            eq(head + _body(v) + b'"}', dump({"role": role, "content": v}).encode(), role)
    head, mid, err = wire.RECORD_TOOL
    for v in _VALUES:
        for flag in (False, True):
            rec = dump({"is_error": flag, "content": v, "tool_call_id": "c1", "role": "tool"}).encode()
            eq(head + b'c1"' + mid + _body(v) + b'"' + err + (b"true}" if flag else b"false}"), rec, repr(v))


def _call(backend, ids, text=None):
    """A tool-call record as `backend`'s client writes it."""
    if backend == "anthropic":
        blocks = [{"type": "text", "text": text}] if text else []
        blocks += [{"type": "tool_use", "id": i, "name": "t", "input": {"q": text or "x"}} for i in ids]
        return dumps({"role": "assistant", "content": blocks})
    calls = [{"id": i, "type": "function", "function": {"name": "t", "arguments": dumps({"q": text or "x"})}}
             for i in ids]
    m = {"role": "assistant", "content": text, "tool_calls": calls}
    if backend == "openai_responses":
        out = [{"type": "reasoning", "id": "rs", "summary": [], "encrypted_content": "gAAA"},
               {"type": "reasoning", "id": "rs2", "summary": []}]  # not replayable without it
        if text:
            out.append({"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": text}]})
        out += [{"type": "function_call", "call_id": i, "name": "t", "arguments": "{}"} for i in ids]
        m["_claw_provider_state"] = {"backend": "openai_responses", "output": out}
    return dump(m)


def _results(pairs):
    # (id, content, is_error) -> a tool-results record as the agent writes it.
    return "[" + ",".join(dump({"role": "tool", "tool_call_id": i, "content": c, "is_error": e})
                          for i, c, e in pairs) + "]"


def _every_shape(s, sid):
    """A history of every record shape the streamed history meets, each turn written by each
    backend (and by a writer that names none, format 0)."""
    for w, writer in enumerate(("openai", "anthropic", "openai_responses", 0)):
        tag = "w%d" % w
        for n, v in enumerate(_VALUES):
            c1, c2 = "%s_%d_a" % (tag, n), "%s_%d_b" % (tag, n)
            s.persist(sid, [(1, None, v or "empty answer next")], backend=writer)
            s.persist(sid, [(3, _call(writer, [c1, c2], v or None), None),
                            (4, _results([(c1, v, False), (c2, "failed: " + v, True)]), None)], backend=writer)
            s.persist(sid, [(2, dump({"role": "assistant", "content": v}), None)], turn_completed=True,
                      backend=writer)
        s.persist(sid, [
            (1, '{"role":"user","content":[{"type":"text","text":"blocks \u00e9"},{"type":"image","x":1}]}', None),
            (1, '{"content":"another writer\'s key order","role":"user"}', None),
            (1, '{"role":"user","content":"escapes \\/ \\u00e9 \\b \\f"}', None),
            (1, '{"role":"user"}', None),
            (3, _call(writer, [tag + "_c"]), None),
            (4, '[{"role":"tool","tool_call_id":"%s_c","content":null,"is_error":null},'
                '{"role":"tool","tool_call_id":null,"content":"no id","is_error":false},'
                '{"role":"tool","tool_call_id":"%s_c","content":{"obj":[1,"\u00fc"]},"is_error":false,"extra":1}]'
                % (tag, tag), None),
            (3, _call(writer, [tag + "_d"], "a call with text"), None),
            (4, '[{"role":"tool","tool_call_id":"%s_d","content":"out of the usual order","is_error":true,'
                '"role":"tool"}]' % tag, None),
            (3, _call(writer, [tag + '_"q\\']), None),  # an id with escapes: never sent as stored
            (4, _results([(tag + '_"q\\', "escaped id", False)]), None),
            (3, _call(writer, [tag + "_n"]), None),
            (4, '[{"role":"tool","tool_call_id":"%s_n","content":42,"is_error":false}]' % tag, None),
            (3, _call(writer, [tag + "_e", tag + "_f"]), None),
            (4, '[{"role":"tool","tool_call_id":"%s_e","content":"only one of two"}]' % tag, None),
            (4, '[{"role":"tool","tool_call_id":"%s_x","content":"a result without its call"}]' % tag, None),
            (2, '{"role":"assistant","content":[{"type":"text","text":"blocks "},{"type":"text","text":"joined"}]}', None),
            (2, '{"role":"assistant","content":"thought","reasoning_content":"hm"}', None),
            (2, '{"role":"assistant","content":null}', None),
            (2, '{"role":"assistant","content":[{"type":"tool_result_like","x":1}]}', None),
        ], turn_completed=True, backend=writer)


def test_every_record_shape_streams_as_its_dicts_for_every_backend():
    dev, s = _fresh()
    _every_shape(s, "m")
    s.persist("m", [(1, None, "the unfinished turn \u00e9")], backend="anthropic")
    s.persist("m", [(3, _call("anthropic", ["p1"]), None), (4, _results([("p1", "r", True)]), None)],
              backend="anthropic")
    for round_ in range(2):  # in the cache, then reopened from the index alone
        for backend in BACKENDS:
            for tokens in (0, 2000, 300):
                h = s.history("m", backend, tokens)
                for again in range(2):  # the first pass, then the later ones from what it kept
                    da, db = _bodies(h, backend)
                    eq(da, db, "%s, %d tokens, %d" % (backend, tokens, again))
                    strictjson.check(da)
                v = h._plan.verdicts
                ok(0 < sum(v) < len(v), "flat records sent as stored, the others converted (%s)" % backend)
        s.close()
        s = Sessions(D)
    dev.unmount()


def test_a_history_longer_than_what_the_first_pass_keeps():
    # Over 512 flat messages and 2 KiB of converted ones: later passes read the rest again.
    dev, s = _fresh()
    for n in range(240):
        writer = BACKENDS[n % 3]
        ids = ["c%d_%d" % (n, k) for k in range(2)]
        s.persist("long", [(1, None, "question %d \u00e9" % n), (3, _call(writer, ids, "t%d" % n), None),
                           (4, _results([(ids[0], "r%d" % n, False), (ids[1], "e%d" % n, True)]), None),
                           (2, None, "answer %d" % n)], turn_completed=True, backend=writer)
    for backend in BACKENDS:
        h = s.history("long", backend, 0)
        for again in range(2):
            da, db = _bodies(h, backend)
            eq(da, db, "%s, %d" % (backend, again))
        p = h._plan
        ok(sum(p.verdicts) > len(set(p.spans[k] for k in range(0, len(p.spans), 6))), "flat records the first pass kept no place of (%s)" % backend)
        ok(sum(p.counts) > len(p.tix) // 3, "converted messages it kept no text of (%s)" % backend)
    dev.unmount()


def test_the_passes_take_the_window_from_what_start_read():
    # Choosing the window reads the newest index entries; a request's passes (its length,
    # then its bytes, once per LLM call) take them from there instead of opening the index
    # again: each open looks the name up in the sessions folder. The bytes are the same.
    opened = []

    def counting(path, mode="r"):
        opened.append(path)
        return open(path, mode)

    dev, s = _fresh()
    build(s)
    for n in range(150):  # (300 more records: a window of 256 or more entries is read again)
        s.persist(SID, [(1, None, "q%d" % n)])
        s.persist(SID, [(2, None, "a%d" % n)], turn_completed=True)
    s.close()
    s = Sessions(D)
    head = {"model": "m", "max_tokens": 9}
    for tokens, idx_opens in ((2000, 0), (120, 0), (40000, 1), (0, 1)):
        h = s.history(SID, "openai", tokens)
        h.summary  # (the summary of what the window leaves out reads older entries: cached)
        window.open = counting
        try:
            body = transport.Body(head, "messages", [{"role": "system", "content": "s"}, h], "openai")
            sent = [b"".join(body.pieces()) for _ in range(2)]  # (two LLM calls: a tool round)
        finally:
            del window.open  # (the builtin again)
        got = len([p for p in opened if p.endswith(".idx")])
        ok(got == 0 if idx_opens == 0 else got > 0, "%d tokens: the index opened %d times" % (tokens, got))
        ref = s.history(SID, "openai", tokens)
        ref.snap.win, ref.snap.wfirst = None, ref.snap.count  # (its entries from the index)
        eq(ref.first, h.first, "%d tokens: (the same window)" % tokens)
        eq(sent[0], _bodies(ref, "openai")[0], "%d tokens: the bytes read from the index" % tokens)
        eq(sent[1], sent[0], "%d tokens: the second call's the same" % tokens)
        opened[:] = []
    dev.unmount()


def test_a_long_message_cut_inside_a_character_has_its_summary_line():
    # A record over 4 KiB is summarized from its first 512 bytes, which here end inside a
    # two-byte character (the question) or a \u escape (the answer): each line holds the
    # text's first 64 characters all the same.
    dev, s = _fresh()
    text = "x" + "\u00e9" * 3000  # (its 512th byte begins a character)
    s.persist("k", [(1, '{"role":"user","content":"%s"}' % text, None)])
    s.persist("k", [(2, '{"role":"assistant","content":"%s"}' % ("\\u00e9" * 1000), None)],
              turn_completed=True)
    for n in range(1, 4):
        s.persist("k", [(1, None, "q%d" % n)])
        s.persist("k", [(2, None, "a%d" % n)], turn_completed=True)
    msgs = s.messages("k", "openai", tokens=100)
    eq(msgs[1]["content"], "q1", "(the first turn summarized)")
    eq(_summary_lines(msgs)[:2], ["user: x" + "\u00e9" * 63, "assistant: " + "\u00e9" * 64],
       "the long records' lines")
    dev.unmount()
