# claw_memory: text utilities (UTF-8 cuts and repair, dedupe keys, token estimate, line lists).
# MIT license
#
# Every cut happens on a UTF-8 character boundary and invalid bytes are dropped, so what we
# write decodes under CPython's strict decoder too (ESP-Claw cuts bytes and may split a
# character; see docs/DESIGN.md, deliberate difference 4).


from ._compat import MICROPYTHON, const

_SPACE = const(" \t\n\r\x0b\x0c")
_TOKEN_SEPS = const(",;/|")
_LINE_MAX = const(255)
_DOC_BREAKS = const(("\r\n", "\r", "\x85", "\u2028", "\u2029"))
_BREAK = const(" \u23ce ")  # what a line break becomes in a value rendered on one line: " ⏎ "

# Full-width / CJK punctuation that the dedupe key ignores (ESP-Claw's list).
_KEY_PUNCT = const("。，！？；：、（）【】《》“”‘’「」『』·…—－～\u3000．")


def to_bytes(s):
    """UTF-8 bytes of a str (lone surrogates kept, to be dropped by `clean`), bytes as is."""
    if isinstance(s, (bytes, bytearray, memoryview)):
        return bytes(s)
    if not isinstance(s, str):
        raise ValueError("expected text, got %s" % type(s).__name__)
    if MICROPYTHON:
        return s.encode()
    return s.encode("utf-8", "surrogatepass")


def _seq_len(b, i, n):
    """Length of the valid UTF-8 sequence at b[i] (RFC 3629: no overlongs, no surrogates,
    nothing above U+10FFFF), or 0 when the byte at i does not start one."""
    c = b[i]
    if c < 0x80:
        return 1
    if 0xC2 <= c <= 0xDF:
        need, lo, hi = 1, 0x80, 0xBF
    elif 0xE0 <= c <= 0xEF:
        need = 2
        lo = 0xA0 if c == 0xE0 else 0x80
        hi = 0x9F if c == 0xED else 0xBF
    elif 0xF0 <= c <= 0xF4:
        need = 3
        lo = 0x90 if c == 0xF0 else 0x80
        hi = 0x8F if c == 0xF4 else 0xBF
    else:
        return 0
    if i + need >= n:
        return 0
    if not lo <= b[i + 1] <= hi:
        return 0
    for k in range(2, need + 1):
        if not 0x80 <= b[i + k] <= 0xBF:
            return 0
    return need + 1


def clean_bytes(b):
    """`b` with every byte that is not part of a valid UTF-8 sequence dropped."""
    n = len(b)
    i = 0
    while i < n and b[i] < 0x80:
        i += 1
    if i == n:
        return bytes(b)
    out = bytearray(b[:i])
    while i < n:
        k = _seq_len(b, i, n)
        if k:
            out += b[i : i + k]
            i += k
        else:
            i += 1
    return bytes(out)


def clean(s, max_chars=None):
    """Valid text from str or bytes: invalid UTF-8 dropped, then cut to `max_chars` chars."""
    t = clean_bytes(to_bytes(s)).decode()
    if max_chars is not None and len(t) > max_chars:
        t = t[:max_chars]
    return t


def cut_bytes(s, max_bytes):
    """`s` cut to at most `max_bytes` UTF-8 bytes, on a character boundary."""
    b = s.encode()
    if len(b) <= max_bytes:
        return s
    i = max_bytes
    while i > 0 and b[i] & 0xC0 == 0x80:
        i -= 1
    return b[:i].decode()


def one_line(s, max_bytes=None):
    """`s` rendered as data on one line: line breaks (CR, LF, NEL, U+2028, U+2029) shown as
    " ⏎ ", other control characters (C0, DEL, C1) as spaces; then cut to `max_bytes`
    UTF-8 bytes, on a character boundary. A value from outside (a file, a bundle, a chat id)
    that goes into a prompt or MEMORY.md can then start no line of its own (no heading, no
    fake entry)."""
    if any(c < " " or "\x7f" <= c <= "\x9f" or c in "\u2028\u2029" for c in s):
        s = s.replace("\r\n", "\n")
        out = []
        for c in s:
            if c in "\n\r\x85\u2028\u2029":
                out.append(_BREAK)
            elif c < " " or "\x7f" <= c <= "\x9f":
                out.append(" ")
            else:
                out.append(c)
        s = "".join(out)
    return s if max_bytes is None else cut_bytes(s, max_bytes)


# Characters a terminal acts on or that reorder a line: what `shown` escapes beyond C0, DEL
# and C1 (line and paragraph separators; Arabic letter mark, LRM, RLM; the bidi embeddings,
# overrides and isolates U+202A-U+202E, U+2066-U+2069).
_FORMAT = const("\u061c\u200e\u200f\u2028\u2029\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")


def unsafe(c):
    """True for a character that must not reach a terminal raw: C0, DEL, C1 (ESC, CSI, OSC
    start sequences that clear the screen, set the clipboard, retitle the window), and
    the separators and bidi controls of _FORMAT (Trojan Source)."""
    return c < " " or "\x7f" <= c <= "\x9f" or c in _FORMAT


def shown(s, lines=False):
    """`s` (stored text: a chat, a memory, a profile, an id) rendered as data for a terminal:
    each `unsafe` character written as its escape (`\\x1b`, `\\u202e`); with `lines`, LF
    (CR LF too) and tab stay, for text shown on lines of its own. The REPL's and the host
    CLI's output go through it."""
    keep = "\n\t" if lines else ""
    if not any(unsafe(c) and c not in keep for c in s):
        return s
    s = s.replace("\r\n", "\n") if lines else s
    out = []
    for c in s:
        if unsafe(c) and c not in keep:
            c = ("\\x%02x" if c < "\u0100" else "\\u%04x") % ord(c)
        out.append(c)
    return "".join(out)


def nested(doc):
    """A document (a profile, LITE's MEMORY.md) as data inside a prompt section: every line
    break an LF (CR LF, CR, NEL, U+2028, U+2029 too), other control characters but tab
    spaces, and each Markdown heading nested two levels deeper (`# Soul` becomes `### Soul`),
    so that no line of it reads as a heading of the prompt itself (`## Core Request`)."""
    # Documents go into every request (up to 40 KB): the work is on bytes (a str index walks
    # a non-ASCII string), in C where it can be; only a document with a control character is
    # rewritten character by character.
    for b in _DOC_BREAKS:
        if b in doc:
            doc = doc.replace(b, "\n")
    raw = doc.encode()
    flat = raw.replace(b"\n", b"").replace(b"\t", b"")
    if b"\xc2" in raw or b"\x7f" in raw or (flat and min(flat) < 32):  # C1 is \xc2\x80-\x9f
        raw = "".join(" " if (c < " " and c not in "\n\t") or "\x7f" <= c <= "\x9f" else c
                      for c in doc).encode()
    out = []
    at = 0
    i = raw.find(b"#")
    while i >= 0:
        start = raw.rfind(b"\n", 0, i) + 1
        j = i
        while raw[j : j + 1] == b"#":
            j += 1
        indent = i - start  # a heading: up to 3 spaces, hashes, then a space or the end
        if indent <= 3 and raw[start:i] == b"   "[:indent] and raw[j : j + 1] in (b"", b" ", b"\t", b"\n"):
            out.append(raw[at:i])
            out.append(b"##")
            at = i
        i = raw.find(b"#", j)
    out.append(raw[at:])
    return b"".join(out).decode()


def cut(s, n):
    """`s` at most `n` characters, `...` marking a cut."""
    return s if len(s) <= n else s[: n - 3] + "..."


def ascii_lower(s):
    """`s` with only the ASCII letters lowered (the same on MicroPython and CPython)."""
    return "".join(chr(ord(c) + 32) if "A" <= c <= "Z" else c for c in s)


def fnv1a32(data, h=0x811C9DC5):
    """32-bit FNV-1a of bytes (or of a str's UTF-8); `h` another offset basis for a second,
    independent hash."""
    if isinstance(data, str):
        data = data.encode()
    hi = h >> 16
    lo = h & 0xFFFF
    for b in data:
        # (hi:lo) * 0x01000193 mod 2**32 in 16-bit halves: no big ints on a 32-bit chip.
        lo ^= b
        t = lo * 0x193
        hi = (hi * 0x193 + (t >> 16) + ((lo & 0xFF) << 8)) & 0xFFFF
        lo = t & 0xFFFF
    return (hi << 16) | lo


def trim(s):
    """Strip ASCII whitespace (C isspace) at both ends."""
    return s.strip(_SPACE)


def norm_key(s, max_bytes=159):
    """Dedupe normalisation: ASCII letters lowered, other ASCII but digits dropped, CJK
    punctuation dropped, every other character kept; at most `max_bytes` bytes."""
    out = []
    used = 0
    for ch in s:
        o = ord(ch)
        if o < 0x80:
            if 0x41 <= o <= 0x5A:
                ch = chr(o + 32)
            elif not (0x61 <= o <= 0x7A or 0x30 <= o <= 0x39):
                continue
            k = 1
        elif ch in _KEY_PUNCT:
            continue
        else:
            k = 2 if o < 0x800 else 3 if o < 0x10000 else 4
        if used + k > max_bytes:
            break
        out.append(ch)
        used += k
    return "".join(out)


def estimate_tokens(s):
    """Rough token count: one per CJK (3-byte) character plus one per 4 other characters."""
    if not s:
        return 0
    b = s.encode() if isinstance(s, str) else s
    cjk = other = 0
    i = 0
    n = len(b)
    while i < n:
        c = b[i]
        if c < 0x80:
            step = 1
        elif c >= 0xF0:
            step = 4
        elif c >= 0xE0:
            step = 3
        elif c >= 0xC0:
            step = 2
        else:  # stray continuation byte: count it as one "other" character
            step = 1
        if step == 3:
            cjk += 1
        else:
            other += 1
        i += step
    return cjk + (other + 3) // 4


def split_tokens(s):
    """Tokens of a tag/keyword list separated by `, ; / |` or any control character (a line
    break separates like a comma), trimmed, empty ones skipped."""
    out = []
    tok = []
    for ch in s:
        if ch in _TOKEN_SEPS or ch < " " or ch == "\x7f":
            t = trim("".join(tok))
            if t:
                out.append(t)
            tok = []
        else:
            tok.append(ch)
    t = trim("".join(tok))
    if t:
        out.append(t)
    return out


def lines_add(lines, line):
    """Append `line` (cut to 255 bytes) to the list unless it is already there."""
    line = cut_bytes(line, _LINE_MAX)
    if line and line not in lines:
        lines.append(line)
        return True
    return False


def lines_merge(lines, other):
    """Merge a list, or newline-separated text, into `lines` keeping first-seen order."""
    if isinstance(other, str):
        other = other.split("\n")
    for line in other:
        lines_add(lines, line)
    return lines


def stage_note(labels):
    """`Memory update: [a;b]`, or None for no labels."""
    if not labels:
        return None
    return "Memory update: [" + ";".join(labels) + "]"
