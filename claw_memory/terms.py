# claw_memory.terms: the terms of a text, as ranked recall and history search count them.
# MIT license
#
# One tokeniser for the store's ranking and the session search index, giving the same terms
# on MicroPython and CPython:
# - words: runs of letters, ASCII lowered (and Latin-1, Latin Extended-A, Greek and Cyrillic
#   capitals, which MicroPython's str.lower() leaves alone); a short English stop list is
#   dropped, as are one-letter ASCII words; English words get light suffix stemming (plurals,
#   -ing, -ed: Porter's steps 1a and 1b), so "cats", "liked" and "running" meet "cat", "like"
#   and "run";
# - numbers: runs of digits are terms of their own ("room42" gives "room" and "42");
# - CJK (Han, kana, Hangul), written without spaces: overlapping character bigrams ("绿茶好"
#   gives "绿茶", "茶好"); a lone character is a term of its own;
# - everything else (punctuation, symbols, emoji, control characters) separates terms.
# Terms are UTF-8 bytes. ASCII text, the common case, is split by `re` in C and only its words
# are handled in Python; other text is walked character by character.

import re

from . import text
from ._compat import const

_TERM_MAX = const(32)  # bytes of a term kept (longer words are cut on a character)
_HASH_MASK = const(0x3FFFFFFF)  # small ints on a 32-bit chip

# ASCII bytes that are not letters or digits (NUL..space, punctuation) become spaces; bytes of
# multi-byte characters are kept for the slow path.
_SEP = re.compile(b"[^a-z0-9\x80-\xff]+")

# Stop words as one blob searched for " word " (a set of them would hold ~6 KB of heap).
STOP = (
    b" a about above after again against all also am an and any are as at be because been "
    b"before being below between both but by can could did didn do does doesn doing don down "
    b"during each few for from further had has have having he her here hers herself him "
    b"himself his how i if in into is isn it its itself just ll me more most my myself no nor "
    b"not now of off on once only or other our ours ourselves out over own re same she should "
    b"so some such than that the their theirs them themselves then there these they this "
    b"those through to too under until up ve very was wasn we were what when where which "
    b"while who whom why will with won would you your yours yourself yourselves "
)

_VOWELS = b"aeiou"


def terms(s, out=None):
    """The terms of `s` (str or UTF-8 bytes), in order, repeats kept, appended to `out` (a
    list, made when None); returns it."""
    if out is None:
        out = []
    b = (text.to_bytes(s) if isinstance(s, str) else bytes(s)).lower()
    try:
        words = _SEP.sub(b" ", b).split()
    except RuntimeError:
        # (MicroPython's re recurses once per byte of a run of separators: a ruled line or
        # ASCII art of a few hundred bytes exceeds the C stack; a byte loop then, rarely)
        b = bytearray(b)
        for i in range(len(b)):
            c = b[i]
            if c < 48 or 57 < c < 97 or 122 < c < 128:
                b[i] = 32
        words = bytes(b).split()
    b = None
    for w in words:
        if w.isalpha():
            _word(w, out)
        elif w.isdigit():
            out.append(w[:_TERM_MAX])
        elif max(w) < 128:
            _ascii_mixed(w, out)
        else:
            _walk(w, out)
    return out


def term_hash(term):
    """A 30-bit hash of a term (bytes): what RAM tables and on-flash indexes keep."""
    return text.fnv1a32(term) & _HASH_MASK


def index_hash(term):
    """A 30-bit hash of a term (bytes) for the session text index: C-speed arithmetic (a
    byte loop in Python, like term_hash, costs more than finding the terms), the same on
    every runtime, spread over all 30 bits (a block's bucket is its low byte, its key the
    high byte) also for a term of one or two bytes."""
    return (int.from_bytes(term, "little") * 0x9E3779B1 + len(term)) % 1073741789


def _word(w, out):
    # An ASCII word: stop words and single letters dropped, then stemmed.
    if len(w) < 2 or STOP.find(b" " + w + b" ") >= 0:
        return
    out.append(stem(w)[:_TERM_MAX])


def _ascii_mixed(w, out):
    # Letters and digits glued together ("room42", "4k"): split at every change of kind.
    i = 0
    n = len(w)
    while i < n:
        j = i + 1
        digit = 48 <= w[i] <= 57
        while j < n and (48 <= w[j] <= 57) == digit:
            j += 1
        part = w[i:j]
        if digit:
            out.append(part[:_TERM_MAX])
        else:
            _word(part, out)
        i = j


def _kind(o):
    """0 separator, 1 letter, 2 digit, 3 CJK, for a code point `o` >= 128; with the letter's
    lower-case code point."""
    if 0x3400 <= o <= 0x9FFF or 0xAC00 <= o <= 0xD7AF or 0x3040 <= o <= 0x30FF or (
            0xF900 <= o <= 0xFAFF or 0x20000 <= o <= 0x2FFFF or 0x1100 <= o <= 0x11FF or
            0x3130 <= o <= 0x318F or 0x31F0 <= o <= 0x31FF):
        return 3, o
    if 0xFF10 <= o <= 0xFF19:  # full-width digits
        return 2, o - 0xFF10 + 48
    if 0xFF21 <= o <= 0xFF3A or 0xFF41 <= o <= 0xFF5A:  # full-width letters
        return 1, (o - 0xFF21 if o <= 0xFF3A else o - 0xFF41) + 97
    if o < 0xC0:  # Latin-1 punctuation and symbols (nbsp, «, », ¿, ©, ...)
        return (1, o) if o in (0xAA, 0xB5, 0xBA) else (0, o)
    if o in (0xD7, 0xF7) or 0x2000 <= o <= 0x2BFF or 0x3000 <= o <= 0x303F or (
            0xFE30 <= o <= 0xFE4F or 0xFF00 <= o <= 0xFFEF or 0xE000 <= o <= 0xF8FF or
            o >= 0x1F000):
        return 0, o
    return 1, _lower(o)


def _lower(o):
    if 0xC0 <= o <= 0xDE:  # Latin-1 capitals (0xD7 is a separator)
        return o + 32
    if 0x100 <= o <= 0x17F:  # Latin Extended-A: capital, small pairs (mostly even, odd)
        if 0x139 <= o <= 0x148 or 0x179 <= o <= 0x17E:
            return o + 1 if o % 2 else o
        return o if o % 2 else o + 1
    if 0x391 <= o <= 0x3A9:  # Greek
        return o + 32
    if 0x410 <= o <= 0x42F:  # Cyrillic
        return o + 32
    if 0x400 <= o <= 0x40F:
        return o + 80
    return o


def _walk(w, out):
    # Text with characters outside ASCII: classified one by one.
    run = []  # characters of the current word, number or CJK run
    kind = 0
    for ch in text.clean(w):  # invalid UTF-8 (lone surrogates included) dropped
        o = ord(ch)
        if o < 128:
            k = 1 if 97 <= o <= 122 else 2  # (_SEP left only lowered letters and digits)
        else:
            k, o = _kind(o)
        if k != kind or not k:
            _flush(run, kind, out)
            run = []
            kind = k
        if k:
            run.append(chr(o))
    _flush(run, kind, out)


def _flush(run, kind, out):
    if not run:
        return
    if kind == 3:
        if len(run) == 1:
            out.append(run[0].encode())
        for i in range(len(run) - 1):
            out.append((run[i] + run[i + 1]).encode())
        return
    b = "".join(run).encode()
    if kind == 2:
        out.append(b[:_TERM_MAX])
    elif max(b) < 128:
        _word(b, out)
    elif len(run) > 1:
        out.append(text.cut_bytes("".join(run), _TERM_MAX).encode())


# -- stemming (Porter's steps 1a and 1b) -----------------------------------------------------


def _cons(w, i):
    c = w[i]
    if c in _VOWELS:
        return False
    if c == 121:  # y: a consonant after a vowel or at the start
        return i == 0 or not _cons(w, i - 1)
    return True


def _measure(w, n):
    # Porter's m of w[:n]: the number of vowel-consonant sequences.
    m = 0
    i = 0
    while i < n and _cons(w, i):
        i += 1
    while i < n:
        while i < n and not _cons(w, i):
            i += 1
        if i >= n:
            break
        m += 1
        while i < n and _cons(w, i):
            i += 1
    return m


def _has_vowel(w, n):
    for i in range(n):
        if not _cons(w, i):
            return True
    return False


def _cvc(w, n):
    # w[:n] ends consonant, vowel, consonant, and the last is not w, x or y.
    return n >= 3 and _cons(w, n - 1) and not _cons(w, n - 2) and _cons(w, n - 3) and (
        w[n - 1] not in b"wxy")


def stem(w):
    """Light English stemming of a lower-case ASCII word (bytes): plurals, -ed, -ing."""
    n = len(w)
    if n < 4:
        return w
    if w.endswith(b"sses"):
        w = w[:-2]
    elif w.endswith(b"ies") or w.endswith(b"ied"):
        w = w[:-3] + b"y" if n > 4 else w[:-1]
    elif w.endswith(b"xes") or w.endswith(b"ches") or w.endswith(b"shes") or w.endswith(b"zzes"):
        w = w[:-2]
    elif w.endswith(b"s") and not (w.endswith(b"ss") or w.endswith(b"us") or w.endswith(b"is")):
        w = w[:-1]
    n = len(w)
    if w.endswith(b"eed"):
        if _measure(w, n - 3) > 0:
            w = w[:-1]
        return w
    if w.endswith(b"ed") and _has_vowel(w, n - 2):
        w = w[:-2]
    elif w.endswith(b"ing") and n > 5 and _has_vowel(w, n - 3):
        w = w[:-3]
    else:
        return w
    n = len(w)
    if w.endswith(b"at") or w.endswith(b"bl") or w.endswith(b"iz"):
        return w + b"e"
    if n >= 2 and w[-1] == w[-2] and _cons(w, n - 1) and w[-1] not in b"lsz":
        return w[:-1]
    if _measure(w, n) == 1 and _cvc(w, n):
        return w + b"e"
    return w
