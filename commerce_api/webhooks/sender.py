"""Sending one attempt: a POST of the signed bytes, from a sending thread.

Each sending thread keeps one keep-alive session (``netguard.guarded_session``: the host
is resolved and checked before every request and the connection made to the checked
address). No redirects are followed; the whole exchange is bounded by the time-out.
"""

import email.utils
import threading
import time

import requests

from .. import netguard
from .dispatch import Outcome
from .signing import delivery_headers

MAX_RESPONSE_BYTES = 64 * 1024  # read (and discard) at most this much of an answer

_local = threading.local()


def _session(allow_private):
    session = getattr(_local, "session", None)
    if session is None or _local.allow_private != allow_private:
        session = netguard.guarded_session(allow_private=allow_private, pool_maxsize=4)
        _local.session, _local.allow_private = session, allow_private
    return session


def parse_retry_after(value):
    """Seconds from a Retry-After header (delta-seconds or an HTTP date), or None."""
    if not value:
        return None
    value = value.strip()
    if value.isdigit():
        return float(value)
    try:
        moment = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    if moment is None:
        return None
    return max(0.0, moment.timestamp() - time.time())


def send(delivery, *, timeout, allow_private):
    """Make one attempt of ``delivery`` (a ``dispatch.Claimed``); returns an ``Outcome``."""
    attempted_at = time.time_ns() // 1_000_000
    if not delivery.is_active:
        return Outcome(delivery, attempted_at, 0, error="The endpoint is disabled.", sent=False)
    if delivery.body is None:
        return Outcome(delivery, attempted_at, 0, error="The event no longer exists.", sent=False)
    headers = delivery_headers(
        body=delivery.body,
        event_id=delivery.event_id,
        event_type=delivery.event_type,
        delivery_id=delivery.id,
        secret=delivery.secret,
        old_secret=delivery.old_secret,
        timestamp=attempted_at // 1000,
    )
    started = time.monotonic()
    status = error = retry_after = None
    try:
        with netguard.time_limit(timeout) as expired:
            try:
                with _session(allow_private).post(
                    delivery.url,
                    data=delivery.body,
                    headers=headers,
                    timeout=(timeout, timeout),
                    allow_redirects=False,
                    stream=True,
                ) as response:
                    status = response.status_code
                    retry_after = parse_retry_after(response.headers.get("Retry-After"))
                    _drain(response)
            except (requests.RequestException, OSError):
                if expired.is_set():
                    raise TimeoutError from None
                raise
    except netguard.AddressNotAllowed as exc:
        status, error = None, f"Not sent: {exc}"
    except netguard.HostNotResolved as exc:
        status, error = None, str(exc)
    except (TimeoutError, requests.Timeout):
        status, error = None, f"No complete answer within {timeout:g} s."
    except requests.ConnectionError as exc:
        status, error = None, f"Connection failed: {_reason(exc)}"
    except (requests.RequestException, OSError) as exc:
        status, error = None, f"Request failed: {_reason(exc)}"
    duration_ms = int((time.monotonic() - started) * 1000)
    if error is None and duration_ms > timeout * 1000:
        error = f"No complete answer within {timeout:g} s."
    if error is None and not 200 <= status < 300:
        error = f"The endpoint answered HTTP {status}."
    return Outcome(delivery, attempted_at, duration_ms, status, error, retry_after)


def _drain(response):
    size = 0
    for chunk in response.iter_content(16384):
        size += len(chunk)
        if size >= MAX_RESPONSE_BYTES:
            response.close()  # don't keep a connection whose answer we did not finish
            return


def _reason(exc):
    text = str(exc)
    return text[:300] if text else type(exc).__name__
