# A session history with every kind of record the streamed history must handle, for tests
# under MicroPython and CPython: plain text, escapes, tool rounds of the three backends (one
# with an error result), another backend's records (degraded or dropped), a tool call whose
# result is for another id (both dropped), records another writer stored with other key order
# or escapes (parsed and written again; \u0008 and \u000c are what MicroPython's dumps
# writes, CPython's writes \b and \f), an empty answer, and an unfinished turn.
# MIT license

SID = "chat:test:corpus:default_01"

_OA_CALL = ('{"role":"assistant","content":null,"tool_calls":['
            '{"id":"c1","type":"function","function":{"name":"memory_store","arguments":"{\\"content\\":\\"tea\\"}"}},'
            '{"id":"c2","type":"function","function":{"name":"memory_recall","arguments":"{}"}}]}')
_OA_RESULTS = ('[{"role":"tool","tool_call_id":"c1","content":"{\\"ok\\":true}","is_error":false},'
               '{"role":"tool","tool_call_id":"c2","content":"disk full \u00e9\\b","is_error":true}]')
_AN_CALL = ('{"role":"assistant","content":[{"type":"text","text":"Let me look."},'
            '{"type":"tool_use","id":"tu1","name":"memory_recall","input":{"labels":["tea"]}}]}')
_RESP_CALL = ('{"role":"assistant","content":null,"tool_calls":[{"id":"fc1","type":"function",'
              '"function":{"name":"memory_list","arguments":"{}"}}],"_claw_provider_state":'
              '{"backend":"openai_responses","output":[{"type":"function_call","call_id":"fc1",'
              '"name":"memory_list","arguments":"{}"}]}}')

# A reasoning model's tool turn in the Responses API: a reasoning item, text and two parallel
# calls, kept raw under _claw_provider_state (several wire items from one record).
_RESP_MULTI = ('{"role":"assistant","content":"Checking both.","tool_calls":['
               '{"id":"fa","type":"function","function":{"name":"memory_list","arguments":"{}"}},'
               '{"id":"fb","type":"function","function":{"name":"profile_read","arguments":"{}"}}],'
               '"_claw_provider_state":{"backend":"openai_responses","output":['
               '{"type":"reasoning","id":"rs_1","summary":[],"encrypted_content":"gAAA"},'
               '{"type":"message","role":"assistant","content":[{"type":"output_text","text":"Checking both."}]},'
               '{"type":"function_call","call_id":"fa","name":"memory_list","arguments":"{}"},'
               '{"type":"function_call","call_id":"fb","name":"profile_read","arguments":"{}"}]}}')

TURNS = [
    ("openai", [(1, None, 'Remember I like tea \u00fc, "quoted"\nand a tab\t.')],
     [(3, _OA_CALL, None), (4, _OA_RESULTS, None)],
     (2, '{"role":"assistant","content":"Noted: tea."}', "Noted: tea.")),
    ("anthropic", [(1, None, "Now the Anthropic turn")],
     [(3, _AN_CALL, None), (4, '[{"role":"tool","tool_call_id":"tu1","content":"found","is_error":false}]', None)],
     (2, '{"role":"assistant","content":[{"type":"text","text":"You like tea."}]}', "You like tea.")),
    ("openai", [(1, '{"content":"key order of another writer","role":"user"}', None)],
     [(3, '{"role":"assistant","content":"","tool_calls":[{"id":"c3","type":"function","function":{"name":"t","arguments":"{}"}}]}', None),
      (4, '[{"role":"tool","tool_call_id":"zz","content":"not for c3","is_error":false}]', None)],
     (2, '{"role":"assistant","content":"caf\\u00e9 \\/ written by another JSON writer","reasoning_content":"hm"}', None)),
    ("openai_responses", [(1, None, "A Responses turn")],
     [(3, _RESP_CALL, None), (4, '[{"role":"tool","tool_call_id":"fc1","content":"[]","is_error":false,"extra":1}]', None)],
     (2, '{"role":"assistant","content":"Nothing stored (\\u0008 \\u000c)."}', None)),
    ("openai_responses", [(1, '{"role":"user","content":"two at once \\ud83e\\udd9e"}', None)],
     [(3, _RESP_MULTI, None), (4, '[{"role":"tool","tool_call_id":"fa","content":"[]","is_error":false},'
                                  '{"role":"tool","tool_call_id":"fb","content":"# User","is_error":false}]', None)],
     (2, '{"role":"assistant","content":"Done."}', None)),
    ("openai", [(1, None, "control \x01 and \x08 characters, a lobster \U0001f99e")],
     [],
     (2, '{"role":"assistant","content":""}', None)),
]


def build(sessions, sid=SID, pending=True):
    """Persist the corpus into `sessions`; with `pending`, an unfinished turn at the end."""
    for backend, user, tools, final in TURNS:
        sessions.persist(sid, user, backend=backend)
        if tools:
            sessions.persist(sid, tools, backend=backend)
        sessions.persist(sid, [final], turn_completed=True, backend=backend)
    if pending:
        sessions.persist(sid, [(1, None, "an unfinished question")], backend="openai")
        sessions.persist(sid, [
            (3, '{"role":"assistant","content":null,"tool_calls":[{"id":"c9","type":"function","function":{"name":"t","arguments":"{}"}}]}', None),
            (4, '[{"role":"tool","tool_call_id":"c9","content":"ok","is_error":false}]', None)],
            backend="openai")
