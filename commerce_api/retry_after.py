"""The one ``Retry-After`` parser (RFC 9110 10.2.3): webhook receivers, marketplaces and
LLM providers all answer with it."""

from __future__ import annotations

import datetime as dt
import email.utils
import re
import time

# delta-seconds: digits (a fraction is tolerated: some servers send one)
_SECONDS = re.compile(r"[0-9]+(?:\.[0-9]+)?")


def parse_retry_after(value: str | None, now: float | None = None) -> float | None:
    """Seconds to wait from a ``Retry-After`` value: delta-seconds (``120``) or an HTTP
    date (``Wed, 21 Oct 2015 07:28:00 GMT``, counted from ``now``, epoch seconds, default
    the clock; a date past is 0). None when it is missing or neither."""
    if not value:
        return None
    value = str(value).strip()
    if _SECONDS.fullmatch(value):
        return float(value)
    try:
        moment = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    if moment is None:
        return None
    if moment.tzinfo is None:  # "-0000": UTC, as HTTP dates are
        moment = moment.replace(tzinfo=dt.UTC)
    now = time.time() if now is None else now
    return max(0.0, moment.timestamp() - now)
