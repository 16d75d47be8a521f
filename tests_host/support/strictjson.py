# A strict JSON validator (RFC 8259) for tests. MicroPython's json.loads accepts some malformed
# text (a stray comma in an array, for one) that ESP-Claw's cJSON refuses, so a file meant for
# ESP-Claw is checked with this before it is parsed.
# MIT license

_WS = b" \t\r\n"
_ESC = b'"\\/bfnrt'
_HEX = b"0123456789abcdefABCDEF"
_DIGITS = b"0123456789"


def check(data):
    """Raise ValueError unless `data` (bytes or str) is exactly one JSON value."""
    if isinstance(data, str):
        data = data.encode()
    i = _ws(data, _value(data, _ws(data, 0)))
    if i != len(data):
        raise ValueError("extra data at byte %d" % i)


def _ws(b, i):
    while i < len(b) and b[i] in _WS:
        i += 1
    return i


def _at(b, i, c):
    return i < len(b) and b[i] == c


def _value(b, i):
    if i >= len(b):
        raise ValueError("a value expected at the end")
    c = b[i]
    if c == 0x7B:
        return _container(b, i, 0x7D, True)
    if c == 0x5B:
        return _container(b, i, 0x5D, False)
    if c == 0x22:
        return _string(b, i)
    for lit in (b"true", b"false", b"null"):
        if b[i:i + len(lit)] == lit:
            return i + len(lit)
    return _number(b, i)


def _container(b, i, close, is_object):
    i = _ws(b, i + 1)
    if _at(b, i, close):
        return i + 1
    while True:
        if is_object:
            if not _at(b, i, 0x22):
                raise ValueError("a key expected at byte %d" % i)
            i = _ws(b, _string(b, i))
            if not _at(b, i, 0x3A):
                raise ValueError("':' expected at byte %d" % i)
            i = _ws(b, i + 1)
        i = _ws(b, _value(b, i))
        if _at(b, i, 0x2C):
            i = _ws(b, i + 1)
        elif _at(b, i, close):
            return i + 1
        else:
            raise ValueError("',' or a closing bracket expected at byte %d" % i)


def _string(b, i):
    i += 1
    while i < len(b):
        c = b[i]
        if c == 0x22:
            return i + 1
        if c == 0x5C:
            e = b[i + 1] if i + 1 < len(b) else 0
            if e == 0x75:
                if len(b[i + 2:i + 6]) != 4 or any(h not in _HEX for h in b[i + 2:i + 6]):
                    raise ValueError("bad \\u escape at byte %d" % i)
                i += 6
                continue
            if e not in _ESC:
                raise ValueError("bad escape at byte %d" % i)
            i += 2
            continue
        if c < 0x20:
            raise ValueError("raw control character in a string at byte %d" % i)
        i += 1
    raise ValueError("unterminated string")


def _digits(b, i):
    j = i
    while j < len(b) and b[j] in _DIGITS:
        j += 1
    if j == i:
        raise ValueError("a digit expected at byte %d" % i)
    return j


def _number(b, i):
    if _at(b, i, 0x2D):
        i += 1
    if _at(b, i, 0x30):
        i += 1
    else:
        if i >= len(b) or b[i] not in b"123456789":
            raise ValueError("a value expected at byte %d" % i)
        i = _digits(b, i)
    if _at(b, i, 0x2E):
        i = _digits(b, i + 1)
    if i < len(b) and b[i] in b"eE":
        i += 1
        if i < len(b) and b[i] in b"+-":
            i += 1
        i = _digits(b, i)
    return i
