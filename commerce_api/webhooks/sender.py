"""Sending one attempt: a POST of the signed bytes, from a sending thread.

Each sending thread keeps one keep-alive client (``netguard.GuardedPoolManager``: the host
is resolved and checked before every request and the connection made to the checked
address; urllib3 directly, at about half the CPU of a requests Session). No redirects are
followed; the whole exchange is bounded by the time-out.
"""

import threading
import time

import urllib3

from .. import netguard
from ..retry_after import parse_retry_after
from .dispatch import Claimed, Outcome
from .signing import delivery_headers

MAX_RESPONSE_BYTES = 64 * 1024  # read at most this much of an answer
MAX_STORED_BODY_BYTES = 4096  # of which the attempt keeps the first 4 KiB, as text

_local = threading.local()


def _client(allow_private):
    client = getattr(_local, "client", None)
    if client is None or client.allow_private != allow_private:
        client = _local.client = netguard.GuardedPoolManager(allow_private=allow_private)
    return client


def send(delivery: Claimed, *, timeout: float, allow_private: bool) -> Outcome:
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
    body = None
    try:
        with netguard.time_limit(timeout) as expired:
            try:
                client = _client(allow_private)
                response = client.post(delivery.url, delivery.body, headers, timeout)
                try:
                    status = response.status
                    retry_after = parse_retry_after(response.headers.get("Retry-After"))
                    body = _read(response)
                finally:
                    response.release_conn()
            except (urllib3.exceptions.HTTPError, OSError):
                if expired.is_set():
                    raise TimeoutError from None
                raise
    except netguard.AddressNotAllowed as exc:
        status, error = None, f"Not sent: {exc}"
    except netguard.HostNotResolved as exc:
        status, error = None, str(exc)
    except urllib3.exceptions.NewConnectionError as exc:  # (a ConnectTimeoutError subclass)
        status, error = None, f"Connection failed: {_reason(exc)}"
    except (TimeoutError, urllib3.exceptions.TimeoutError):
        status, error = None, f"No complete answer within {timeout:g} s."
    except (urllib3.exceptions.HTTPError, OSError) as exc:
        status, error = None, f"Connection failed: {_reason(exc)}"
    duration_ms = int((time.monotonic() - started) * 1000)
    if error is None and duration_ms > timeout * 1000:
        error = f"No complete answer within {timeout:g} s."
    if error is None and not 200 <= status < 300:
        error = f"The endpoint answered HTTP {status}."
    outcome = Outcome(delivery, attempted_at, duration_ms, status, error, retry_after)
    if body is not None:
        outcome.response_body, outcome.response_body_binary = _as_text(body[0])
        outcome.response_body_size = body[1]
    return outcome


def _read(response):
    """The answer's first ``MAX_STORED_BODY_BYTES`` and the size read (at most
    ``MAX_RESPONSE_BYTES``; the rest is not read)."""
    size = 0
    head = bytearray()
    for chunk in response.stream(16384):
        if len(head) < MAX_STORED_BODY_BYTES:
            head += chunk[: MAX_STORED_BODY_BYTES - len(head)]
        size += len(chunk)
        if size >= MAX_RESPONSE_BYTES:
            response.close()  # don't keep a connection whose answer we did not finish
            break
    return bytes(head), size


def _as_text(head):
    """``(text, binary)``: the kept bytes as UTF-8 text (a character cut at the 4 KiB
    bound dropped), or ``(None, True)`` for a body that is not text (not UTF-8, or NUL
    bytes in it)."""
    if not head:
        return "", False
    try:
        text = head.decode("utf-8")
    except UnicodeDecodeError as exc:
        # only a multi-byte character cut at the bound is forgiven: the bytes end in the
        # middle of a valid sequence, and everything before it is UTF-8
        cut = exc.reason == "unexpected end of data" and len(head) == MAX_STORED_BODY_BYTES
        if not cut:
            return None, True
        text = head[: exc.start].decode("utf-8")
    if "\x00" in text:
        return None, True
    return text, False


def _reason(exc):
    text = str(exc)
    return text[:300] if text else type(exc).__name__
