"""One HTTP exchange with a marketplace's own API (the ``amazon`` and ``shopify``
connectors): within the call's deadline, through the connection's keep-alive pool or
``netguard`` (no private address unless the operator allowed it), the answer capped in
size and read as JSON (no NaN or Infinity)."""

import json
from typing import Any

import requests

from .. import netguard
from ..config import current_config
from .base import MarketplaceUnavailable
from .limits import remaining

MAX_RESPONSE_BYTES = 50 * 1024 * 1024


def exchange(
    connector: Any,
    label: str,
    method: str,
    url: str,
    *,
    params: dict[str, Any] | None = None,
    json_body: Any = None,
    data: bytes | str | dict[str, Any] | None = None,
    headers: dict[str, str] | None = None,
) -> tuple[int, Any, dict[str, str]]:
    """One HTTP exchange of ``connector`` (``label``: the marketplace's name in messages);
    returns (status, JSON body or None, headers with lower-case names)."""
    deadline = remaining(current_config()["MARKETPLACE_DEADLINE_SECONDS"])
    headers = {"Accept": "application/json", **(headers or {})}
    kwargs = {
        "params": params,
        "headers": headers,
        "timeout": (
            float(current_config()["MARKETPLACE_CONNECT_TIMEOUT"]),
            float(current_config()["MARKETPLACE_READ_TIMEOUT"]),
        ),
        "allow_redirects": False,
        "stream": True,
    }
    if json_body is not None:
        kwargs["data"] = json.dumps(json_body, separators=(",", ":")).encode()
        headers.setdefault("Content-Type", "application/json")
    elif data is not None:
        kwargs["data"] = data
    expired = None
    allow_private = connector.connection.allow_private
    try:
        with netguard.time_limit(deadline) as expired:
            if connector.session is None:
                response = netguard.request(method, url, allow_private=allow_private, **kwargs)
            else:
                response = connector.session.request(method, url, **kwargs)
            with response:
                raw = read_capped(response, label)
                status, answer_headers = response.status_code, dict(response.headers)
    except MarketplaceUnavailable:
        raise
    except Exception as exc:
        if expired is not None and expired.is_set():
            raise MarketplaceUnavailable(
                f"{label} did not answer within the deadline of {deadline:g} s.", code="TIMEOUT"
            ) from None
        raise unavailable(exc, allow_private, label) from None
    if expired.is_set():
        raise MarketplaceUnavailable(
            f"{label} did not answer within the deadline of {deadline:g} s.", code="TIMEOUT"
        )
    payload = None
    if raw:
        try:
            payload = json.loads(raw, parse_constant=_no_constant)
        except (ValueError, UnicodeDecodeError, RecursionError):
            payload = None
    return status, payload, {k.lower(): v for k, v in answer_headers.items()}


def read_capped(response: requests.Response, label: str) -> bytes:
    """The answer's body, refused past ``MAX_RESPONSE_BYTES``."""
    chunks, size = [], 0
    for chunk in response.iter_content(65536):
        size += len(chunk)
        if size > MAX_RESPONSE_BYTES:
            raise MarketplaceUnavailable(f"{label}'s answer is too large.", code="INVALID_RESPONSE")
        chunks.append(chunk)
    return b"".join(chunks)


def _no_constant(name):
    raise ValueError(f"{name} is not JSON")


def unavailable(exc: Exception, allow_private: bool, label: str) -> MarketplaceUnavailable:
    """The unavailable error for a failed exchange (re-raises what is not one)."""
    if isinstance(exc, netguard.AddressNotAllowed):
        return MarketplaceUnavailable(str(exc), code="TARGET_NOT_ALLOWED")
    if isinstance(exc, netguard.HostNotResolved):
        code = "CONNECTION_FAILED" if allow_private else "TARGET_NOT_ALLOWED"
        return MarketplaceUnavailable(str(exc), code=code)
    if isinstance(exc, requests.Timeout):
        return MarketplaceUnavailable(f"{label} did not answer in time.", code="TIMEOUT")
    if isinstance(exc, requests.RequestException):
        return MarketplaceUnavailable(
            f"The connection to {label} failed.",
            code="CONNECTION_FAILED",
            details={"error": str(exc)[:300]},
        )
    raise exc
