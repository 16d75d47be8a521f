# claw_memory.jsonraw: raw JSON text that the parsers get wrong on one runtime or another:
# surrogate-pair escapes, integers a single-precision float cannot hold, a number read from
# an object's bytes without parsing it.
# MIT license


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
