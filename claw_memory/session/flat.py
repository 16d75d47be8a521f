# claw_memory.session.flat: a stored record's bytes checked and taken apart without parsing
# them into objects, through one fixed buffer.
# MIT license
#
# Most records are flat JSON objects ({"role":"user","content":"..."}, arrays of tool
# results with string fields): they can go to the LLM as the bytes stored, re-framed. This
# scanner finds the fields of such a record (their offsets in the file) and checks that the
# strings are exactly what json.dumps writes (no raw control character, valid UTF-8, only the
# escapes dumps uses): those bytes go on the wire as they are, so a history streamed and one
# parsed and written again are the same bytes.
# Anything else (nested values, duplicate keys, bad bytes) makes the caller parse the record.

from .._compat import EIO, const

_SHORT = const(256)  # string values kept as bytes up to this length (roles, ids, keys)
_BOM = b"\xef\xbb\xbf"


class Reader:
    """A window of `size` bytes over one record of an open file."""

    def __init__(self, size=2048):
        self.buf = bytearray(size)
        self.f = None
        self.base = self.pos = self.n = self.left = 0

    def open(self, f, off, ln):
        """Start reading the `ln` bytes at `off`; a UTF-8 BOM at the file's start is skipped
        (cJSON skips it too)."""
        self.f = f
        f.seek(off)
        self.base = off
        self.left = ln
        self.pos = self.n = 0
        if off == 0 and self.more() and self.buf[:3] == _BOM:
            self.pos = 3

    def use(self, f):
        """Copy spans of `f` from now on (nothing of it is in the buffer)."""
        self.f = f
        self.n = self.pos = self.left = 0

    def more(self):
        """Read on, keeping the unread bytes; False at the record's end (the buffer is then
        left as it is)."""
        if self.left <= 0:
            return False
        keep = self.n - self.pos
        if self.pos:
            if keep:
                self.buf[:keep] = self.buf[self.pos : self.n]
            self.base += self.pos
            self.pos = 0
            self.n = keep
        k = min(len(self.buf) - keep, self.left)
        got = self.f.readinto(memoryview(self.buf)[keep : keep + k])
        if not got:
            raise OSError(EIO, "session file shrank while reading")
        self.left -= got
        self.n += got
        return True

    def ends_line(self):
        """Whether the record read to its end is a whole line (its last byte a newline)."""
        return self.left == 0 and self.n > 0 and self.buf[self.n - 1] == 10

    def peek(self):
        """The next byte that is not JSON whitespace (not consumed), -1 at the end."""
        while True:
            buf = self.buf
            while self.pos < self.n:
                c = buf[self.pos]
                if c != 32 and c != 10 and c != 13 and c != 9:
                    return c
                self.pos += 1
            if not self.more():
                return -1

    def need(self, k):
        """At least `k` unread bytes in the buffer, unless the record ends first."""
        while self.n - self.pos < k:
            if not self.more():
                return False
        return True

    def held(self, start, end):
        """A view of file bytes [start, end) when they are in the buffer, else None."""
        if start >= self.base and end <= self.base + self.n:
            return memoryview(self.buf)[start - self.base : end - self.base]
        return None

    def copy(self, start, end):
        """Yield the file bytes [start, end) (views of the buffer: use each before the next)."""
        mv = self.held(start, end)
        if mv is not None:
            if end > start:
                yield mv
            return
        f = self.f
        f.seek(start)
        left = end - start
        buf = memoryview(self.buf)
        self.base = start  # the buffer now holds other bytes
        self.pos = self.n = self.left = 0
        while left:
            got = f.readinto(buf[: min(left, len(buf))])
            if not got:
                raise OSError(EIO, "session file shrank while reading")
            left -= got
            yield buf[:got]

    # -- JSON pieces ------------------------------------------------------------------------

    def string(self, check):
        """A JSON string whose opening quote was read: (start, end, bytes or None), the file
        offsets of its body and the body itself when short. None when the record ends in
        it or (`check`) it is not what json.dumps writes."""
        start = self.base + self.pos
        seg = self.pos  # bytes from here on are checked in one go (at the end or a refill)
        val = b""  # the body so far when it spanned a refill
        while True:
            buf = self.buf
            q = buf.find(b'"', self.pos, self.n)
            b = buf.find(b"\\", self.pos, q if q >= 0 else self.n)
            if b >= 0:  # an escape: the quote found may be escaped
                self.pos = b
                if self.n - b < 6 and self.left:  # an escape cut by the buffer: read on
                    if check and not _strict(buf, seg, b):
                        return None
                    val = _more(val, buf, seg, b)
                    self.more()
                    seg = self.pos
                    continue
                k = _escape(buf, b, self.n)
                if not k:
                    if check or b + 1 >= self.n:
                        return None
                    k = 2
                self.pos = b + k
                continue
            if q >= 0:
                if check and not _strict(buf, seg, q):
                    return None
                self.pos = q + 1
                if val is not None and (len(val) + q - seg) <= _SHORT:
                    val = val + bytes(buf[seg:q]) if val else bytes(buf[seg:q])
                else:
                    val = None
                return start, self.base + q, val
            cut = _whole(buf, seg, self.n)  # a character cut by the buffer waits
            if check and not _strict(buf, seg, cut):
                return None
            val = _more(val, buf, seg, cut)
            self.pos = cut
            if not self.more():
                return None
            seg = self.pos

    def literal(self):
        """The bytes of a number, true, false or null at the cursor."""
        out = bytearray()
        while True:
            buf = self.buf
            while self.pos < self.n:
                c = buf[self.pos]
                if c in b",}] \t\r\n":
                    return bytes(out)
                out.append(c)
                self.pos += 1
                if len(out) > 32:
                    return None
            if not self.more():
                return bytes(out)

    def obj(self, check):
        """The fields of the flat JSON object at the cursor: {key: (start, end, value)} with
        `start` -1 for a literal (its bytes in `value`). None when it is not a flat object
        (a nested value, a duplicate key, a long or escaped key) or not strict JSON."""
        if self.peek() != 123:  # {
            return None
        self.pos += 1
        fields = {}
        if self.peek() == 125:  # }
            self.pos += 1
            return fields
        while True:
            if self.peek() != 34:  # "
                return None
            self.pos += 1
            k = self.string(check)
            if k is None or k[2] is None or k[2] in fields or b"\\" in k[2]:
                return None
            if self.peek() != 58:  # :
                return None
            self.pos += 1
            c = self.peek()
            if c == 34:
                self.pos += 1
                v = self.string(check)
                if v is None:
                    return None
            elif c == 123 or c == 91 or c < 0:
                return None
            else:
                lit = self.literal()
                if not lit:
                    return None
                v = (-1, -1, lit)
            fields[bytes(k[2])] = v
            c = self.peek()
            self.pos += 1
            if c == 125:
                return fields
            if c != 44:  # ,
                return None


def scan(rd, check=True):
    """The record opened on `rd` as a list of flat objects' fields (one for an object, one per
    element for an array of objects), or None when it is anything else."""
    c = rd.peek()
    if c == 123:
        one = rd.obj(check)
        out = None if one is None else [one]
    elif c == 91:  # [
        rd.pos += 1
        out = []
        if rd.peek() == 93:
            rd.pos += 1
        else:
            while True:
                one = rd.obj(check)
                if one is None:
                    return None
                out.append(one)
                c = rd.peek()
                rd.pos += 1
                if c == 93:
                    break
                if c != 44:
                    return None
    else:
        return None
    if out is not None and rd.peek() != -1:
        return None  # something after the value
    return out


def _whole(buf, a, n):
    """End of the last whole UTF-8 character in buf[a:n] (a cut one waits for more bytes)."""
    i = n - 1
    k = 0
    while i > a and k < 3 and buf[i] & 0xC0 == 0x80:
        i -= 1
        k += 1
    c = buf[i]
    need = 1 if c < 0x80 else 2 if c >> 5 == 6 else 3 if c >> 4 == 14 else 4 if c >> 3 == 30 else 1
    return i if i + need > n and i > a else n


def _strict(buf, a, b):
    """buf[a:b] holds no raw control character and is valid UTF-8."""
    if b <= a:
        return True
    seg = memoryview(buf)[a:b]
    if min(seg) < 32:
        return False
    try:
        str(seg, "utf-8")
    except UnicodeError:
        return False
    return True


def _more(val, buf, a, b):
    # The body so far, while it is short.
    if val is None or len(val) + b - a > _SHORT:
        return None
    return val + bytes(buf[a:b])


def _escape(buf, i, n):
    r"""Length of the escape at buf[i] (a backslash) when it is one json.dumps writes in
    MicroPython and CPython alike: \" \\ \n \r \t, and \u00XX in lower case for the other
    control characters but backspace and form feed. 0 for any other (\/ or \u00e9, valid
    JSON too): such a record is parsed and written again."""
    if i + 1 >= n:
        return 0  # the record ends on the backslash
    c = buf[i + 1]
    if c in b'"\\nrt':
        return 2
    if c == 117 and i + 6 <= n and buf[i + 2] == 48 and buf[i + 3] == 48 and buf[i + 4] in b"01":
        h = buf[i + 5]
        if 48 <= h <= 57 or 97 <= h <= 102:
            v = (buf[i + 4] - 48) * 16 + (h - 48 if h <= 57 else h - 87)
            if v not in (8, 9, 10, 12, 13):
                return 6
    return 0
