# claw_memory.jsontail: where the first JSON value of a text ends, as cJSON_Parse (ESP-Claw)
# stops reading: what follows it is ignored (jsonraw.json_value with `rest`). Imported only
# for text that does not parse whole (a damaged chat map or memory line).
# MIT license


def value_end(raw):
    """Where the first JSON object or array of `raw` (str or bytes) ends, strings and their
    escapes skipped; 0 when it does not end."""
    b = raw.encode() if isinstance(raw, str) else raw
    i = 0
    n = len(b)
    while i < n and b[i] in b" \t\r\n":
        i += 1
    if i == n or b[i] not in b"{[":
        return 0
    depth = 0
    while i < n:
        c = b[i]
        if c == 34:  # a string: to its closing quote, escapes skipped
            i += 1
            while i < n and b[i] != 34:
                i += 2 if b[i] == 92 else 1
        elif c in b"{[":
            depth += 1
        elif c in b"}]":
            depth -= 1
            if not depth:
                return i + 1 if isinstance(raw, bytes) else len(b[: i + 1].decode())
        i += 1
    return 0
