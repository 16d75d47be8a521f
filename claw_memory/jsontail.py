# claw_memory.jsontail: JSON text that did not parse: where its first value ends, as
# cJSON_Parse (ESP-Claw) stops reading: what follows it is ignored (jsonraw.json_value with
# `rest`; a damaged chat map or memory line); and whether a text whose parse ran the heap out
# is a bomb (a model's or a tool's). Imported only then: its code is not in RAM otherwise.
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
    for i, c in _outside(b, i):
        if c in b"{[":
            depth += 1
        elif c in b"}]":
            depth -= 1
            if not depth:
                return i + 1 if isinstance(raw, bytes) else len(b[: i + 1].decode())
    return 0


def bloated(raw):
    """After parsing JSON text `raw` ran out of heap: whether its structure is at fault, not
    a heap too small for it: thousands of nested or empty arrays in a few KiB (MicroPython's
    parser allocates ~32 bytes for each), seen as over one `[` or `{` in 8 bytes of a text of
    at least 1 KiB (a shorter one that fails: the heap is out), or over 4 x its length free
    after a collection. (The count is needed: a stale pointer on the C stack can keep the
    failed parse's objects alive through the collection, hundreds of KiB of them. Brackets
    in strings are not counted: the parser makes one string of them, and a model's answer
    whose tool arguments are small arrays, on a heap too small for it, is no bomb.)"""
    import gc

    n = len(raw)
    a, b = ("[", "{") if isinstance(raw, str) else (b"[", b"{")
    if n >= 1024 and (raw.count(a) + raw.count(b)) * 8 > n:
        # those outside strings, byte by byte (MicroPython's str has a buffer: no copy; its
        # find and count from an index walk the text from its start)
        try:
            raw = memoryview(raw)
        except TypeError:
            raw = raw.encode()  # (CPython's str; it raises no MemoryError here)
        k = 0
        for _, c in _outside(raw):
            if c == 91 or c == 123:
                k += 1
        if k * 8 > n:
            return True
    gc.collect()
    free = getattr(gc, "mem_free", None)  # (MicroPython's; CPython raises no MemoryError here)
    return free is not None and free() > 4 * n


def _outside(b, i=0):
    """(position, byte) of each byte of `b` from `i` on that is outside JSON strings (a
    string's quotes given, its bytes and escapes skipped)."""
    n = len(b)
    while i < n:
        c = b[i]
        yield i, c
        if c == 34:
            i += 1
            while i < n and b[i] != 34:
                i += 2 if b[i] == 92 else 1
        i += 1
