"""The Selling Partner API client under the ``amazon`` connector (``amazon.py``).

- **Login with Amazon**: the connection's ``refresh_token`` is exchanged for an access
  token (``grant_type=refresh_token``), kept per connection and process until 60 s before
  it expires and shared by the process's threads (``_TokenCache``): one thread refreshes
  while the others wait for it, and a failed refresh is remembered for a while
  (``AUTH_FAILURE_HOLD_SECONDS``), so a revoked token does not stampede the token
  endpoint. It is sent as ``x-amz-access-token``; a token Amazon no longer takes (403) is
  refreshed once.
- **Usage plans**: every call first draws from the connection's fleet-wide budget for its
  operation (``budgets``: the rate and burst of ``USAGE_PLANS``, from each operation's
  description in the published models, kept below them by ``budget_plan``, then what
  ``x-amzn-RateLimit-Limit`` says). A 429 drains that budget and the call waits and tries
  again; it is unavailable (``THROTTLED``, with ``Retry-After``) only when the wait would
  pass what the caller may wait. It never makes a push or a job fail.
- Amazon's errors (``{errors: [{code, message}]}``): 5xx and time-outs are unavailable,
  other 4xx are rejections with Amazon's code.
"""

import hashlib
import json
import math
import threading
import time
from datetime import UTC, datetime
from decimal import Decimal, InvalidOperation

from ..config import current_config
from ..retry_after import parse_retry_after
from . import budgets
from .base import Connector, MarketplaceRejection, MarketplaceUnavailable
from .limits import serving
from .wire import exchange

USER_AGENT = "commerce-api/0.1 (Language=Python; +connector-amazon)"
REGION_ENDPOINTS = {
    "na": "https://sellingpartnerapi-na.amazon.com",
    "eu": "https://sellingpartnerapi-eu.amazon.com",
    "fe": "https://sellingpartnerapi-fe.amazon.com",
}
TOKEN_ENDPOINT = "https://api.amazon.com/auth/o2/token"
TOKEN_MARGIN_SECONDS = 60  # a token is renewed this long before it expires
AUTH_FAILURE_HOLD_SECONDS = 30  # a refused refresh is not tried again before this
# Usage plans (rate per second, burst) as each operation's description in the published
# models gives them (tests/marketplaces/test_amazon.py checks this table against them).
USAGE_PLANS = {
    "patchListingsItem": (5.0, 5),
    "getListingsItem": (5.0, 10),
    "createFeedDocument": (0.5, 15),
    "createFeed": (0.0083, 15),
    "getFeed": (2.0, 15),
    "getFeedDocument": (0.0222, 10),
    "getOrders": (0.0167, 20),
    "getOrderItems": (0.5, 30),
    "getOrderAddress": (0.5, 30),
    "confirmShipment": (2.0, 10),
    "getInventorySummaries": (2.0, 2),
    "getListingOffersBatch": (0.5, 1),
}


def budget_plan(rate: float, burst: int) -> tuple[float, float]:
    """The budget kept for a usage plan of ``rate`` per second and ``burst``
    (``budgets.terms``): 5 % slower, and smaller by what the plan restores in 0.5 s, or by
    one token where the burst keeps one beside it (whichever is more, at most half); a
    burst of 1 keeps the 0.5 s between its calls instead."""
    return budgets.terms(rate, burst, least=1)


def amazon_time(moment: datetime) -> str:
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


class _TokenCache:
    """Access tokens per connection (and credentials) in this process."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.entries = {}

    def entry(self, key):
        with self.lock:
            entry = self.entries.get(key)
            if entry is None:
                entry = self.entries[key] = {
                    "lock": threading.Lock(),
                    "token": None,
                    "expires": 0.0,
                    "failed_until": 0.0,
                    "failure": None,
                }
            return entry

    def forget(self, connection_id: str) -> None:
        """Drop a connection's tokens and remembered failures (its credentials changed)."""
        with self.lock:
            for key in [key for key in self.entries if key[0] == connection_id]:
                del self.entries[key]

    def clear(self) -> None:
        with self.lock:
            self.entries.clear()


TOKENS = _TokenCache()


class AmazonClient(Connector):
    """Settings, credentials, tokens and one SP-API call (``_call``)."""

    # settings and credentials ---------------------------------------------------------------

    @property
    def endpoint(self) -> str:
        return (self.settings.get("endpoint") or REGION_ENDPOINTS[self.settings["region"]]).rstrip(
            "/"
        )

    @property
    def token_endpoint(self) -> str:
        return self.settings.get("token_endpoint") or TOKEN_ENDPOINT

    @property
    def marketplace_id(self) -> str:
        return self.settings["marketplace_id"]

    @property
    def seller_id(self) -> str:
        return self.settings["seller_id"]

    def _credentials(self) -> dict[str, str]:
        raw = self.connection.credentials
        try:
            credentials = json.loads(raw) if raw else {}
        except ValueError:
            credentials = {}
        if not all(
            credentials.get(name)
            for name in ("lwa_client_id", "lwa_client_secret", "refresh_token")
        ):
            raise MarketplaceUnavailable(
                "The connection has no Login with Amazon credentials.", code="AUTH"
            )
        return credentials

    # Login with Amazon ------------------------------------------------------------------

    def _token_key(self, credentials):
        material = json.dumps([credentials, self.token_endpoint], sort_keys=True)
        return (self.connection.id, hashlib.sha256(material.encode()).hexdigest())

    def access_token(self) -> str:
        """A live access token: cached, or exchanged now by one thread of the process."""
        credentials = self._credentials()
        entry = TOKENS.entry(self._token_key(credentials))
        with entry["lock"]:
            now = time.monotonic()
            if entry["token"] and now < entry["expires"] - TOKEN_MARGIN_SECONDS:
                return entry["token"]
            if now < entry["failed_until"]:
                failure = entry["failure"]
                raise MarketplaceUnavailable(
                    failure.message,
                    code=failure.code,
                    details=failure.details,
                    retry_after=max(1, math.ceil(entry["failed_until"] - now)),
                )
            try:
                token, lifetime = self._exchange_token(credentials)
            except MarketplaceUnavailable as exc:
                hold = AUTH_FAILURE_HOLD_SECONDS if exc.code == "AUTH" else 5
                entry["failed_until"] = now + hold
                entry["failure"] = exc
                exc.retry_after = exc.retry_after or hold
                raise
            entry.update(token=token, expires=now + lifetime, failed_until=0.0, failure=None)
            return token

    def forget_token(self, token: str) -> None:
        entry = TOKENS.entry(self._token_key(self._credentials()))
        with entry["lock"]:
            if entry["token"] == token:
                entry["token"] = None

    def _exchange_token(self, credentials):
        form = {
            "grant_type": "refresh_token",
            "refresh_token": credentials["refresh_token"],
            "client_id": credentials["lwa_client_id"],
            "client_secret": credentials["lwa_client_secret"],
        }
        status, payload, _ = self._exchange(
            "POST",
            self.token_endpoint,
            data=form,
            headers={"Content-Type": "application/x-www-form-urlencoded;charset=UTF-8"},
        )
        if status >= 500 or status == 429:
            raise MarketplaceUnavailable(
                f"Login with Amazon answered HTTP {status}.", code="AUTH_UNAVAILABLE"
            )
        if status != 200 or not isinstance(payload, dict):
            error = payload.get("error") if isinstance(payload, dict) else None
            description = payload.get("error_description") if isinstance(payload, dict) else None
            raise MarketplaceUnavailable(
                "Login with Amazon refused the refresh token"
                + (f": {error}" if error else f" (HTTP {status})")
                + (f" ({str(description)[:200]})" if description else "")
                + ". Authorize the app again in Seller Central and replace the credentials.",
                code="AUTH",
                details={"http_status": status, "error": str(error)[:100] if error else None},
            )
        token, lifetime = payload.get("access_token"), payload.get("expires_in")
        if not isinstance(token, str) or not token or isinstance(lifetime, bool):
            raise MarketplaceUnavailable(
                "Login with Amazon's answer has no access token.", code="INVALID_RESPONSE"
            )
        if not isinstance(lifetime, int) or lifetime <= 0:
            lifetime = 3600
        return token, min(lifetime, 24 * 3600)

    # one exchange -----------------------------------------------------------------------

    def _exchange(self, method, url, *, params=None, json_body=None, data=None, headers=None):
        """One HTTP exchange within the call's deadline; returns (status, body, headers)."""
        return exchange(
            self,
            "Amazon",
            method,
            url,
            params=params,
            json_body=json_body,
            data=data,
            headers={"User-Agent": USER_AGENT, **(headers or {})},
        )

    def _budget_wait(self) -> float:
        return 5.0 if serving() else float(current_config()["MARKETPLACE_BUDGET_WAIT_SECONDS"])

    def _call(self, operation, method, path, *, params=None, body=None, accept=(200,)):
        """One SP-API operation: budget, token, exchange, Amazon's errors; returns the JSON
        answer (None for an empty one)."""
        rate, burst = budget_plan(*USAGE_PLANS[operation])
        url = self.endpoint + path
        params = _query_params(params)
        refreshed = False
        started = time.monotonic()
        max_wait = self._budget_wait()
        while True:
            self._take_budget(operation, rate, burst, max_wait)
            token = self.access_token()
            status, payload, headers = self._exchange(
                method, url, params=params, json_body=body, headers={"x-amz-access-token": token}
            )
            limit = _rate(headers.get("x-amzn-ratelimit-limit"))
            rate = self._follow_rate_limit(operation, limit, rate, burst)
            if status in accept:
                return payload
            error = _first_error(payload)
            if status == 429:
                # the budget's fault: empty it and wait for the next token
                budgets.drain(self.connection.id, operation, rate, burst)
                waited = time.monotonic() - started
                retry_after = parse_retry_after(headers.get("retry-after")) or 1 / (limit or rate)
                if not budgets.enabled() or waited + retry_after > max_wait:
                    raise MarketplaceUnavailable(
                        f"Amazon throttled {operation}: {error[1]}",
                        code="THROTTLED",
                        details={"operation": operation, "http_status": 429},
                        retry_after=max(1, math.ceil(retry_after)),
                    )
                continue
            if status in (401, 403) and not refreshed:
                refreshed = True
                self.forget_token(token)
                continue
            raise _failure(operation, status, error, headers)

    def _take_budget(self, operation, rate, burst, max_wait):
        """Draw one call from the operation's budget, waiting at most ``max_wait``;
        unavailable (THROTTLED) when it cannot give one in time."""
        try:
            budgets.take(self.connection.id, operation, rate, burst, max_wait)
        except budgets.BudgetExhausted as exc:
            message = f"Amazon's usage plan for {operation} allows the next call in {{wait}} s."
            raise exc.unavailable(message, operation) from None

    def _follow_rate_limit(self, operation, limit, rate, burst):
        """The budget's rate after Amazon's ``x-amzn-RateLimit-Limit`` (``limit``), adjusting
        the budget when it differs."""
        if limit is not None:
            wanted = budget_plan(limit, USAGE_PLANS[operation][1])[0]
            if abs(wanted - rate) > 1e-9:
                rate = wanted
                budgets.adjust(self.connection.id, operation, rate, burst, rate)
        return rate


def _query_params(params):
    """Query parameters without the None ones, lists joined with commas."""
    return {
        name: ",".join(value) if isinstance(value, list | tuple) else value
        for name, value in (params or {}).items()
        if value is not None
    }


def _failure(operation, status, error, headers):
    """The error for an answer that is neither accepted nor to be tried again: a refused
    token (AUTH), a 5xx/3xx/408/425 (unavailable) or a rejection with Amazon's code."""
    if status in (401, 403):
        return MarketplaceUnavailable(
            f"Amazon refused the access token for {operation}: {error[1]}",
            code="AUTH",
            details={"operation": operation, "http_status": status},
            retry_after=AUTH_FAILURE_HOLD_SECONDS,
        )
    if status >= 500 or 300 <= status < 400 or status in (408, 425):
        return MarketplaceUnavailable(
            f"Amazon answered HTTP {status} to {operation}: {error[1]}",
            code=error[0] or f"HTTP_{status}",
            details={"operation": operation, "http_status": status},
            retry_after=_retry_after(headers.get("retry-after")),
        )
    return MarketplaceRejection(
        error[1],
        code=(error[0] or f"HTTP_{status}")[:64],
        details={"operation": operation, "http_status": status},
    )


def money_amount(value: object) -> Decimal | None:
    """An amount Amazon gives (a string or a number) as an exact Decimal of cents, or
    None when it is not one."""
    if value is None or isinstance(value, bool):
        return None
    try:
        amount = Decimal(str(value))
    except InvalidOperation:
        return None
    if not amount.is_finite() or amount < 0 or amount >= Decimal("1e10"):
        return None
    return amount.quantize(Decimal("0.01")) if amount == amount.quantize(Decimal("0.01")) else None


def _first_error(payload):
    if isinstance(payload, dict):
        errors = payload.get("errors")
        if isinstance(errors, list) and errors and isinstance(errors[0], dict):
            code = str(errors[0].get("code") or "")[:64] or None
            message = str(errors[0].get("message") or "")[:500] or "Amazon refused the request."
            return code, message
    return None, "Amazon gave no error details."


def _rate(value):
    try:
        rate = float(value)
    except (TypeError, ValueError):
        return None
    return rate if math.isfinite(rate) and rate > 0 else None


def _retry_after(value):
    seconds = parse_retry_after(value)
    return None if seconds is None else max(1, min(math.ceil(seconds), 3600))
