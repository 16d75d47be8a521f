# claw_memory.jsonraw: raw JSON text that the parsers get wrong on one runtime or another:
# JSON read as ESP-Claw's cJSON reads it (the first of a key named twice, a stray tail),
# surrogate-pair escapes, integers a single-precision float cannot hold, a number read from
# an object's bytes without parsing it.
# MIT license

import json


def surrogates(raw):
    """JSON text (str or bytes) with its \\uD8xx\\uDCxx surrogate-pair escapes written as the
    character's UTF-8 and lone surrogate escapes as \\ufffd. MicroPython's json.loads
    decodes each half of a pair on its own, into bytes that are no UTF-8 (and an API refuses);
    CPython's json.dumps writes such pairs for every emoji by default."""
    b = raw.encode() if isinstance(raw, str) else raw
    if b.find(b"\\ud") < 0 and b.find(b"\\uD") < 0:
        return raw
    out = bytearray()
    i = 0
    while True:
        j = b.find(b"\\u", i)
        if j < 0:
            break
        k = j
        while k > 0 and b[k - 1] == 92:  # an escaped backslash before it: no escape
            k -= 1
        hi = _hex4(b, j + 2)
        if (j - k) % 2 or hi < 0xD800 or hi > 0xDFFF:
            out += b[i : j + 2]
            i = j + 2
            continue
        lo = _hex4(b, j + 8) if b[j + 6 : j + 8] == b"\\u" else -1
        out += b[i:j]
        if hi <= 0xDBFF and 0xDC00 <= lo <= 0xDFFF:
            out += chr(0x10000 + ((hi - 0xD800) << 10) + lo - 0xDC00).encode()
            i = j + 12
        else:
            out += b"\\ufffd"
            i = j + 6
    out += b[i:]
    return out.decode() if isinstance(raw, str) else bytes(out)


def _hex4(b, i):
    try:
        return int(b[i : i + 4], 16) if len(b[i : i + 4]) == 4 else -1
    except ValueError:
        return -1


def exact_int(num):
    """The integer part of a JSON number's text (str or bytes), computed from its digits so
    that `1796081397.0` or `1.796081397e9` are exact where a single-precision float is not;
    None when it is not a number."""
    t = num.decode() if isinstance(num, (bytes, bytearray)) else num
    neg = t[:1] == "-"
    if neg:
        t = t[1:]
    mant, e, exp = t.replace("E", "e").partition("e")
    ip, _, fp = mant.partition(".")
    if not ip.isdigit() or (fp and not fp.isdigit()) or (e and not exp):
        return None
    try:
        shift = int(exp) if exp else 0
    except ValueError:
        return None
    point = len(ip) + min(shift, 40)  # beyond 40 digits every field is clamped anyway
    digits = ip + fp
    if point <= 0:
        return 0
    v = int(digits[:point] + "0" * max(point - len(digits), 0))
    return -v if neg else v


def number_after(raw, key):
    """The text of the number that follows `"key":` in a JSON object's raw bytes, or None."""
    at = raw.find(b'"' + key + b'":')
    if at < 0:
        return None
    i = at + len(key) + 3
    while i < len(raw) and raw[i] in b" \t\r\n":
        i += 1
    j = i
    while j < len(raw) and raw[j] in b"+-.0123456789eE":
        j += 1
    return raw[i:j] if j > i else None


def json_value(raw, rest=False):
    """The JSON value of text or bytes, or None when it does not parse (invalid UTF-8
    included). A key named twice in an object has its first value, as cJSON (ESP-Claw) reads
    it, on every runtime. A leading UTF-8 BOM is skipped, as cJSON skips it. A NUL byte makes
    it no JSON (MicroPython's parser stops there and takes what came before). With `rest`,
    read as ESP-Claw's cJSON_Parse reads a C string: the text up to a NUL byte, its first
    value, whatever follows it ignored (a chat map or a memory line with a stray tail).
    MemoryError is not swallowed."""
    if isinstance(raw, str):
        if raw[:1] == "\ufeff":
            raw = raw[1:]
    else:
        if isinstance(raw, memoryview):
            raw = bytes(raw)  # a line of a chunk; memoryview has no find()
        if raw[:3] == b"\xef\xbb\xbf":
            raw = raw[3:]
    if not rest and raw.find("\x00" if isinstance(raw, str) else b"\x00") >= 0:
        return None
    raw = surrogates(raw)
    try:
        v = json.loads(raw)  # (MicroPython's parser stops at a NUL, as cJSON_Parse does)
        if _duplicates(raw, v):
            v = json.loads(_first_keys(raw))
        return v
    except MemoryError:
        raise
    except Exception:  # noqa: BLE001 -- ValueError, UnicodeError, TypeError: all "not JSON"
        if not rest:
            return None
    from .jsontail import value_end  # (damaged text only: its code is not in RAM otherwise)

    end = value_end(raw)
    return json_value(raw[:end]) if 0 < end < len(raw) else None


def foreign(raw):
    """json_value of JSON text a model or a tool wrote; None also when its structure, not
    the board, ran the heap out (see jsontail.bloated)."""
    try:
        return json_value(raw)
    except MemoryError:
        from .jsontail import bloated  # (after a failure only: its code is not in RAM otherwise)

        if not bloated(raw):
            raise
        return None


def _duplicates(raw, v):
    """Whether JSON text `raw` (parsed: `v`) may name a key twice in one object: its colons
    outside strings (one per member) outnumber the members parsed. With a \\u003x escape
    (maybe a colon) the count cannot tell: then it may."""
    colon, esc = (":", "\\u003") if isinstance(raw, str) else (b":", b"\\u003")
    n = raw.count(colon)
    if isinstance(v, dict) and n == len(v):
        return False  # (most records) one colon a member: no other member, no colon in text
    if not n:
        return False
    if raw.find(esc) >= 0:
        return True
    todo = [v]
    while todo:
        x = todo.pop()
        if isinstance(x, dict):
            n -= len(x)
            for k in x:
                n -= k.count(":")
            todo.extend(x.values())
        elif isinstance(x, list):
            todo.extend(x)
        elif isinstance(x, str):
            n -= x.count(":")
    return n > 0


def _first_keys(raw):
    """JSON text `raw` (valid) without the members whose key an earlier member of the same
    object has: cJSON's lookup (ESP-Claw's) finds the first, json.loads keeps the last."""
    b = raw.encode() if isinstance(raw, str) else raw
    out = bytearray()
    seen = []  # per open container: the keys of an object, None for an array
    mark = comma = 0  # b[mark:] not copied yet; the last comma
    skip = 0  # depth of the object whose duplicate member is being left out (0: none)
    key = False  # the next string is a key
    i = 0
    n = len(b)
    while i < n:
        c = b[i]
        if c == 34:  # a string: find its closing quote
            j = i + 1
            while True:
                j = b.find(b'"', j)
                if j < 0:
                    return b  # (no valid JSON)
                k = j
                while b[k - 1] == 92:
                    k -= 1
                if not (j - k) % 2:  # not escaped
                    break
                j += 1
            if key and not skip:
                name = json.loads(b[i : j + 1])
                if name in seen[-1]:
                    out += b[mark:comma]  # from its comma on, the member is left out
                    skip = len(seen)
                else:
                    seen[-1].add(name)
            key = False
            i = j + 1
            continue
        if c == 123 or c == 91:  # { [
            seen.append(set() if c == 123 else None)
            key = c == 123
        elif c == 125 or c == 93 or c == 44:  # } ] ,
            if skip == len(seen):
                skip = 0
                mark = i
            if c == 44:
                key = seen[-1] is not None
                comma = i
            else:
                seen.pop()
        i += 1
    out += b[mark:]
    return bytes(out)
