"""The one timestamp format, and conversions to the stored form.

Timestamps are stored as integer epoch milliseconds (UTC) on every engine: they compare,
sort and encode into cursors exactly, with no text-format drift between SQLite and
PostgreSQL.
"""

import datetime as dt
import time

UTC = dt.UTC
# What ``format_ms`` can print (years 0001-9999 in UTC); ``parse_timestamp`` refuses the rest.
MIN_MS = -62135596800000  # 0001-01-01T00:00:00.000Z
MAX_MS = 253402300799999  # 9999-12-31T23:59:59.999Z
DAY_MS = 86_400_000


def now_ms():
    """Current time as epoch milliseconds."""
    return time.time_ns() // 1_000_000


def format_ms(ms):
    """Epoch milliseconds to ``2026-11-22T10:04:05.123Z`` (None stays None)."""
    if ms is None:
        return None
    seconds, millis = divmod(int(ms), 1000)
    moment = time.gmtime(seconds)
    # %Y is not zero-padded below year 1000 on every platform
    return f"{moment.tm_year:04d}" + time.strftime("-%m-%dT%H:%M:%S", moment) + f".{millis:03d}Z"


def datetime_to_ms(value):
    """An aware or naive-UTC datetime to epoch milliseconds."""
    if value.tzinfo is None:
        value = value.replace(tzinfo=UTC)
    return int(value.timestamp() * 1000)


def parse_timestamp(text):
    """ISO 8601 text to epoch milliseconds; raises ValueError when it is not one, or when
    its UTC time falls outside years 0001-9999 (``0001-01-01T00:00:00+14:00`` is in year 0
    in UTC: no timestamp of ours could show it)."""
    text = text.strip()
    if text.endswith("Z") or text.endswith("z"):
        text = text[:-1] + "+00:00"
    value = dt.datetime.fromisoformat(text)
    ms = datetime_to_ms(value)
    if not MIN_MS <= ms <= MAX_MS:
        raise ValueError(f"{text} is outside years 0001-9999 in UTC")
    return ms


def date_start_ms(day):
    """The first millisecond of a ``datetime.date`` (UTC)."""
    return datetime_to_ms(dt.datetime(day.year, day.month, day.day, tzinfo=UTC))


def date_end_ms(day):
    """The last millisecond of a ``datetime.date`` (UTC), for inclusive date filters."""
    return date_start_ms(day) + 86_400_000 - 1
