#!/usr/bin/env python3
"""Write the bad-input corpus in tests_host/corpus/ (the files are committed; re-run this
after changing a case). tests_host/mp/test_corpus.py applies every case to a good data root
under the unix port and checks for a clear error or a repair, and no loss of data that was
acknowledged before the damage.

cases.json: {"files": [{"name", "target", "how", "expect", "keep"}], ...}
  target: session .log/.idx/.pending, or a memory/ or profile file
  how:    "replace" the file, "append" to it, or "middle" (overwrite bytes in its middle)
  expect: "repair" (everything still readable) ; keep: records/items that must survive
Plus text lists (one JSON string per line): hostile ids, aliases, labels, LLM answers, tool
arguments.
"""

import json
import os
import random
import struct

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "tests_host", "corpus")
HEADER = struct.pack("<IHH", 0x58444843, 1, 10)


def main():
    rnd = random.Random(20261130)
    os.makedirs(OUT, exist_ok=True)
    cases = []

    def case(name, data, target, how, keep, why):
        with open(os.path.join(OUT, name), "wb") as f:
            f.write(data)
        cases.append({"name": name, "target": target, "how": how, "keep": keep, "why": why})

    # The good session holds 12 records (3 turns of user, call, result, final); 4 records = 1 turn.
    case("idx_bad_magic.bin", b"XXXX" + HEADER[4:] + bytes(rnd.randrange(256) for _ in range(40)),
         "idx", "replace", 12, "index header garbage: rebuilt from the log")
    case("idx_partial_entry.bin", b"\x07\x00\x00", "idx", "append", 12, "torn index append")
    case("idx_entry_past_log.bin", struct.pack("<IIBB", 10 ** 6, 50, 1, 1), "idx", "append", 12,
         "entry pointing past the log")
    case("idx_overlapping_entry.bin", struct.pack("<IIBB", 0, 20, 1, 1), "idx", "append", 12,
         "entry overlapping earlier records")
    case("idx_bad_type.bin", struct.pack("<IIBB", 0, 1, 77, 9), "idx", "middle", 12,
         "garbage entry in the middle: rescanned from the log")
    case("idx_empty.bin", b"", "idx", "replace", 12, "zero-length index")
    case("idx_random.bin", bytes(rnd.randrange(256) for _ in range(333)), "idx", "replace", 12,
         "random bytes instead of an index")
    case("idx_header_only.bin", HEADER, "idx", "replace", 12, "index lost its entries")
    case("log_torn_tail.bin", b'{"role":"user","content":"half a rec', "log", "append", 12, "torn log tail")
    case("log_garbage_line.bin", b"\x00\xff\xfe garbage \x01\x02\n", "log", "append", 12, "binary line")
    case("log_invalid_utf8.bin", b'{"role":"user","content":"bad \xff\xfe bytes"}\n', "log", "append", 12,
         "a record with invalid UTF-8")
    case("log_not_a_record.bin", b'{"role":"system","content":"x"}\n[1,2,3]\n"just a string"\n42\n',
         "log", "append", 12, "JSON that is not a chat record")
    case("log_overlong_line.bin", b'{"role":"user","content":"' + b"z" * 70000 + b'"}\n', "log", "append", 12,
         "a line over the record size bound")
    case("log_binary_middle.bin", b"\x00\xffBROKEN\xff\x00", "log", "middle", 10,
         "bytes overwritten inside one record: only that record (and its tool pair) is lost")
    case("log_empty.bin", b"", "log", "replace", 0, "zero-length log")
    case("pending_torn.bin", b'11{"role":"user","content":"torn pend', "pending", "append", 12,
         "torn pending record")
    case("pending_bad_header.bin", b"garbage header\n11{}\n", "pending", "replace", 12,
         "pending file with a bad header")
    # The good store holds 3 items.
    case("jsonl_garbage_lines.bin", b"\x00\x01\x02\n\xff\xfe\xfd\nnot json at all\n{}\n[]\n", "records", "append",
         3, "binary and non-item lines")
    case("jsonl_5kb_line.bin", b'{"id":"mem-9-0009","content":"' + b"x" * 5000 + b'"}\n', "records", "append", 3,
         "a 5 KB records line")
    case("jsonl_torn_last.bin", b'{"id":"mem-8-0008","content":"torn', "records", "append", 3, "torn last line")
    case("jsonl_wrong_types.bin", b'{"id":123,"content":["x"]}\n{"id":"mem-7-0007","content":42,"deleted":"yes"}\n',
         "records", "append", 3, "fields of the wrong type")
    case("jsonl_invalid_utf8.bin", b'{"id":"mem-6-0006","content":"bad \xff bytes","tags":"x"}\n', "records",
         "append", 3, "invalid UTF-8 in a records line")
    case("index_not_json.bin", b"{not json", "index", "replace", 3, "memory_index.json not JSON")
    case("index_empty.bin", b"", "index", "replace", 3, "empty memory_index.json")
    case("index_wrong_shape.bin", b'{"version":3,"summaries":{"a":1},"keyword_index":[]}', "index", "replace", 3,
         "valid JSON of the wrong shape")
    case("index_array.bin", b"[1,2,3]", "index", "replace", 3, "a JSON array")
    case("index_huge.bin", b'{"summaries":[],"keyword_index":{"k":["' + b"a" * 100000 + b'"]}}', "index",
         "replace", 3, "an index too big to read")
    case("digest_garbage.bin", b"\x00\xff\n1\trecall\n\trecall\tmem-x\taccess_count+1\nx\ty\tz\tw\tv\tu\n"
         + b"q" * 10000 + b"\n", "digest", "append", 3, "garbage and malformed digest lines")
    case("memory_md_binary.bin", bytes(rnd.randrange(256) for _ in range(500)), "memory_md", "replace", 3,
         "MEMORY.md full of binary")
    case("profile_binary.bin", bytes(rnd.randrange(256) for _ in range(300)), "user.md", "replace", 3,
         "user.md full of binary")
    case("profile_huge.bin", ("# Soul\n\n" + "Ü" * 60000).encode(), "soul.md", "replace", 3,
         "a 120 KB soul.md")
    case("profile_invalid_utf8.bin", b"# Identity\n\nName: \xff\xfeBot\xe4\n", "identity.md", "replace", 3,
         "identity.md with invalid UTF-8")
    with open(os.path.join(OUT, "cases.json"), "w") as f:
        json.dump(cases, f, indent=1)
        f.write("\n")

    def lines(name, items):
        with open(os.path.join(OUT, name), "w") as f:
            for it in items:
                f.write(json.dumps(it) + "\n")

    lines("hostile_session_ids.txt", ["../x", "/", "..", "../../etc/passwd", "a/../../b", "x\u0000y",
                                      "\\..\\windows", "con", "s_x.log", "chat:a:b:../../..", "\u202e\u0000",
                                      "会话/../", " ", "\n", "x" * 512, ".log.idx", "*", "?"])
    lines("hostile_aliases.txt", ["../x", "/", "..", "a/b", "a\u0000", "é", "x" * 33, "a b", "", " ",
                                  "new", "default_01/..", "$(reboot)", "a;b", "\t", "CON", "ﬀ"])
    lines("hostile_labels.txt", ["../../x", ",,,;;;", "a/b/c", "\u0000", "x" * 300, "😀" * 40, "'\";--",
                                 "|||", " / ", "label\nwith newline"])
    lines("llm_answers.txt", ["", "   ", "null", "true", "42", "[]", "{}", "[[[[[[", "{\"intent\":",
                              "I think the user likes cheese.", "```json\n{\"memories\": \"no\"}\n```",
                              "{\"memories\":[1,2,3]}", "{\"memories\":[{\"content\":null}]}",
                              "{\"memories\":[{\"content\":\"\"}]}", "{\"intent\":\"replace\",\"memories\":{}}",
                              "\u0000\u0001\u0002", "{\"memories\":[{\"content\":\"x\",\"tags\":{\"a\":1}}]}",
                              "[" * 5000 + "]" * 5000, "{\"memories\":[{\"content\":\"" + "A" * 10000 + "\"}]}"])
    lines("tool_args.txt", ["", "null", "[]", "\"str\"", "42", "{", "{\"content\":null}", "{\"content\":{}}",
                            "{\"memory_id\":[1]}", "{\"memory_id\":\"../../x\"}", "{\"summary_labels\":\"x\"}",
                            "{\"summary_labels\":[1,null,{}]}", "{\"limit\":\"all\"}", "{\"limit\":-1e309}",
                            "{\"limit\":1e400}", "{\"name\":\"../user\"}", "{\"command\":\"new ../x\"}",
                            "{\"content\":\"" + "x" * 100000 + "\"}", "\u0000", "{\"tags\":[[[[]]]]}"])


if __name__ == "__main__":
    main()
