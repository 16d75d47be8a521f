# The strict JSON checker the gap tests read ESP-Claw's files with (tests_host/support/strictjson.py):
# it accepts JSON and refuses what cJSON refuses but MicroPython's json.loads lets through.
import json

import strictjson
from mptest import eq, raises

GOOD = [b"{}", b"[]", b' [ "a" , {"b":{}} ] ', b"0", b"-0.1E+2",
        b'{"a":[1,2.5,-3e4,true,false,null,"x\\"y\\u00e9\\n"]}', '{"k":"\u4e8c"}'.encode()]
BAD = [b"[,1]", b"[1,]", b"[1,,2]", b'{"a":1,}', b'{,"a":1}', b"[1 2]", b'{"a" 1}', b'{"a":}',
       b'"a\x01"', b'"\\x"', b"01", b"1.", b"tru", b"[1]x", b"", b'{"a":1', b'"abc']


def test_strict_json_accepts_json_and_refuses_the_rest():
    for data in GOOD:
        strictjson.check(data)
        json.loads(data)
    lenient = 0
    for data in BAD:
        raises(ValueError, strictjson.check, data)
        try:
            json.loads(data)
            lenient += 1
        except ValueError:
            pass
    eq(lenient > 0, True, "MicroPython's json.loads accepts some of these (why the checker exists)")
