# claw_memory: the date: whether the board's clock is set, days as text, time zones, and the
# expiry a memory may carry ("2026-12-24", "7d").
# MIT license
#
# A board boots in 2000 (or 1970) until NTP sets its clock: before 2024 nothing is dated
# relative to now (no expiry, no date in the prompt). Dates are the board's local time
# (time.localtime: UTC on an ESP32) unless a time zone with an offset is given
# ("UTC+2", "+05:30", "Europe/Lisbon (UTC+0)"): then they are computed in that offset.

import time

from . import text
from ._compat import EPOCH_OFFSET, const

CLOCK_SET = const(1704067200)  # 2024-01-01 00:00 UTC: a clock before it was never set
DATED = const(1600000000)  # an item stamped before 2020 was dated by a clock never set
_DAY = const(86400)
_EXPIRY_MAX = const(3650)  # days ahead an expiry may be (ten years)
_TZ_MAX = const(48)  # bytes of a time zone shown in the prompt
_UNITS = "mhdw"  # a duration's unit: minutes, hours, days, weeks
_SECONDS = (60, 3600, _DAY, 7 * _DAY)
_WEEKDAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")


def clock_set(now):
    """Whether `now` (unix seconds) comes from a clock that was set (2024 or later)."""
    return isinstance(now, int) and now >= CLOCK_SET


def offset_of(tz):
    """The UTC offset in seconds a time zone text names ("UTC+2", "GMT-05:00", "+05:30",
    "Europe/Lisbon (UTC+1)", "UTC": 0), or None when it names none."""
    if not isinstance(tz, str):
        return None
    s = tz.upper()
    for mark in ("UTC", "GMT"):
        i = s.find(mark)
        if i >= 0:
            rest = s[i + 3 :].strip()
            if not rest or rest[0] not in "+-":
                return 0
            return _hhmm(rest)
    for i, c in enumerate(s):
        if c in "+-" and (i == 0 or s[i - 1] in " (") and i + 1 < len(s) and s[i + 1].isdigit():
            return _hhmm(s[i:])
    return None


def _hhmm(s):
    # "+2", "-05:00", "+0530", "+5:30" -> seconds; None when it is no offset.
    sign = -1 if s[0] == "-" else 1
    digits = ""
    colon = -1
    for c in s[1:]:
        if c.isdigit():
            digits += c
        elif c == ":" and colon < 0:
            colon = len(digits)
        else:
            break
    if not digits:
        return None
    if colon > 0:
        h, m = digits[:colon], digits[colon:] or "0"
    elif len(digits) > 2:
        h, m = digits[:-2], digits[-2:]
    else:
        h, m = digits, "0"
    h, m = int(h), int(m)
    if h > 14 or m > 59:
        return None
    return sign * (h * 3600 + m * 60)


def _civil(ts, offset):
    # (year, month, day, weekday 0=Monday) of unix time `ts` in UTC+offset, or in local time.
    if offset is None:
        t = time.localtime(ts - EPOCH_OFFSET)
        return t[0], t[1], t[2], t[6]
    days = (ts + offset) // _DAY
    # Howard Hinnant's civil_from_days: no dependence on the port's epoch or its mktime.
    z = days + 719468
    era = z // 146097
    doe = z - era * 146097
    yoe = (doe - doe // 1460 + doe // 36524 - doe // 146096) // 365
    y = yoe + era * 400
    doy = doe - (365 * yoe + yoe // 4 - yoe // 100)
    mp = (5 * doy + 2) // 153
    d = doy - (153 * mp + 2) // 5 + 1
    m = mp + 3 if mp < 10 else mp - 9
    return y + (1 if m <= 2 else 0), m, d, (days + 3) % 7


def _days(y, m, d):
    # days_from_civil: days since 1970-01-01 of a date (proleptic Gregorian).
    y -= 1 if m <= 2 else 0
    era = y // 400
    yoe = y - era * 400
    doy = (153 * (m - 3 if m > 2 else m + 9) + 2) // 5 + d - 1
    doe = yoe * 365 + yoe // 4 - yoe // 100 + doy
    return era * 146097 + doe - 719468


def day(ts, offset=None):
    """`YYYY-MM-DD` of unix time `ts` (local time, or UTC+`offset` seconds)."""
    y, m, d, _ = _civil(ts, offset)
    return "%04d-%02d-%02d" % (y, m, d)


def today(now, offset=None):
    """`Wednesday, 2026-12-02`: the day of `now` with its weekday."""
    y, m, d, wd = _civil(now, offset)
    return "%s, %04d-%02d-%02d" % (_WEEKDAYS[wd], y, m, d)


def _local_start(y, m, d, offset):
    # Unix time of 00:00 of a date, in UTC+offset or in the board's local time.
    if offset is not None:
        return _days(y, m, d) * _DAY - offset
    base = _days(y, m, d) * _DAY
    # The board's local offset at that time: local midnight = UTC midnight - offset.
    t = time.localtime(base - EPOCH_OFFSET)
    local = _days(t[0], t[1], t[2]) * _DAY + t[3] * 3600 + t[4] * 60 + t[5]
    return base - (local - base)


def expiry(value, now, offset=None):
    """The unix time a memory given `value` expires: "7d", "12h", "2w", "30m" (from `now`),
    or a date "2026-12-24" (the end of that day) or "2026-12-24 18:00"; None for no value, 0
    for a duration while the clock is not set (it cannot be dated). ValueError with a message
    for anything else, a time not in the future, or more than ten years ahead."""
    if value is None or value == "":
        return None
    if not isinstance(value, str):
        raise ValueError("expires must be text: a date (2026-12-24) or a duration (7d)")
    v = text.trim(value).lower()
    at = None
    if len(v) >= 2 and v[-1] in _UNITS and v[:-1].isdigit():
        if not clock_set(now):
            return 0
        at = now + int(v[:-1]) * _SECONDS[_UNITS.find(v[-1])]
    elif len(v) >= 10 and v[4] == "-" and v[7] == "-":
        try:
            y, m, d = int(v[:4]), int(v[5:7]), int(v[8:10])
            hh = mm = 0
            rest = v[10:].strip().lstrip("t").strip()
            if rest:
                if len(rest) != 5 or rest[2] != ":":
                    raise ValueError
                hh, mm = int(rest[:2]), int(rest[3:])
        except ValueError:
            raise ValueError("expires: not a date: %s" % text.cut(value, 32))
        if not (1 <= m <= 12 and 1 <= d <= 31 and hh < 24 and mm < 60) or _civil(
                _days(y, m, d) * _DAY, 0)[1:3] != (m, d):
            raise ValueError("expires: not a date: %s" % text.cut(value, 32))
        at = _local_start(y, m, d, offset)
        at += hh * 3600 + mm * 60 if v[10:].strip() else _DAY  # a date: through its end
    else:
        raise ValueError("expires must be a date (2026-12-24) or a duration (7d, 12h, 2w)")
    if clock_set(now):
        if at <= now:
            raise ValueError("expires: %s is not in the future" % text.cut(value, 32))
        if at > now + _EXPIRY_MAX * _DAY:
            raise ValueError("expires: more than ten years ahead")
    if at <= 0 or at > 0xFFFFFFFF:
        raise ValueError("expires: out of range")
    return at


def expired(expires_at, now):
    """Whether an item with `expires_at` (0: none) has expired at `now`; never while the
    clock is not set (a board before NTP)."""
    return bool(expires_at) and clock_set(now) and expires_at <= now


def zone(tz):
    """A time zone text as one bounded line for the prompt, or ""."""
    if not isinstance(tz, str):
        return ""
    return text.trim(text.one_line(tz, _TZ_MAX))


def zone_in(doc):
    """The time zone a profile document names on a `Time zone:` or `Timezone:` line, or ""."""
    if not isinstance(doc, str):
        return ""
    low = doc.lower()
    for mark in ("time zone:", "timezone:"):
        i = low.find(mark)
        if i >= 0:
            j = doc.find("\n", i)
            return zone(doc[i + len(mark) : j if j >= 0 else len(doc)].strip(" *_`"))
    return ""
