"""The Admin GraphQL client under the ``shopify`` connector (``shopify.py``).

- **One endpoint**: ``POST https://<shop>/admin/api/<version>/graphql.json`` with
  ``X-Shopify-Access-Token`` (a custom app's Admin API token); ``settings.endpoint``
  replaces ``https://<shop>`` (an operator's sandbox, a test fake).
- **Cost-based throttling, fleet-wide**: Shopify prices every query and keeps one leaky
  bucket per shop and app. Each answer's ``extensions.cost`` says what the query cost
  (``requestedQueryCost``) and how the bucket stands (``throttleStatus``:
  ``maximumAvailable``, ``currentlyAvailable``, ``restoreRate``). Before each query the
  connection's budget (``budgets``, one bucket ``graphql`` per connection, in the database
  or Redis, shared by every worker) gives up the query's cost, waiting until it is
  there; after each answer the budget takes Shopify's size and rate and never holds more
  than Shopify said was left (``budgets.observe``). The budget is smaller than Shopify's
  bucket by what it restores in ``budgets.HEADROOM_SECONDS`` (``budget_terms``): a query's points
  leave the budget when it is sent but Shopify's bucket when the query arrives, and a full
  bucket restores nothing meanwhile, so a budget as big as the bucket would believe in
  points Shopify never had (the query after it THROTTLED). The cost of a query is
  estimated from its shape and raised to what Shopify asked for it the last time. A
  ``THROTTLED`` answer
  empties the budget and the query waits and goes again: it never fails a push or a job
  (unavailable with ``Retry-After`` only past what the caller may wait).
- Errors: 401/403 (a revoked token) are unavailable with code ``AUTH``; 5xx, 429 and a
  body that is not GraphQL's JSON are unavailable; other top-level GraphQL ``errors`` are
  rejections with Shopify's code. Per-item ``userErrors`` are for the caller to read.
"""

import json
import logging
import math
import threading
import time
from dataclasses import dataclass
from typing import Any

from ..config import current_config
from . import budgets
from .base import Connector, MarketplaceRejection, MarketplaceUnavailable
from .limits import serving
from .wire import exchange

log = logging.getLogger("commerce_api.marketplaces")

USER_AGENT = "commerce-api/0.1 (+connector-shopify)"
DEFAULT_API_VERSION = "2025-01"
BUDGET = "graphql"  # one bucket per shop: every query draws from it
# before the first answer says otherwise: the smallest bucket Shopify documents
FIRST_PLAN = (50.0, 100.0)


def budget_terms(rate: float, maximum: float) -> tuple[float, float]:
    """(refill rate, size) of the budget for a Shopify bucket restoring ``rate`` points a
    second up to ``maximum`` (``budgets.terms``: 5 % slower, and smaller by what Shopify
    restores in 0.5 s, at most half the bucket)."""
    return budgets.terms(rate, maximum)


class _Plans:
    """What each connection's last answer said of its bucket, and what each query cost."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.plans = {}  # connection id -> (restore rate, maximum)
        self.costs = {}  # (connection id, query name) -> requested cost

    def plan(self, connection_id):
        with self.lock:
            return self.plans.get(connection_id, FIRST_PLAN)

    def cost(self, connection_id, name, estimate):
        with self.lock:
            return max(estimate, self.costs.get((connection_id, name), 0))

    def learn(self, connection_id, name, requested, rate, maximum):
        with self.lock:
            if requested:
                self.costs[(connection_id, name)] = requested
            if rate and maximum:
                self.plans[connection_id] = (rate, maximum)

    def clear(self) -> None:
        with self.lock:
            self.plans.clear()
            self.costs.clear()


PLANS = _Plans()


@dataclass(frozen=True)
class _Draw:
    """What one query took from the connection's budget: the budget's terms, the points,
    how long to wait for them and the budget's ticket for them."""

    terms: tuple[float, float]
    cost: float
    wait: float
    ticket: Any


class ShopifyClient(Connector):
    """Settings, credentials and one GraphQL query (``graphql``)."""

    @property
    def shop_domain(self) -> str:
        return self.settings["shop_domain"]

    @property
    def api_version(self) -> str:
        return self.settings.get("api_version") or DEFAULT_API_VERSION

    @property
    def url(self) -> str:
        base = (self.settings.get("endpoint") or f"https://{self.shop_domain}").rstrip("/")
        return f"{base}/admin/api/{self.api_version}/graphql.json"

    @property
    def locations(self) -> dict[str, str]:
        """Our own warehouse id -> the Shopify location (gid) its stock is sold from."""
        return dict(self.settings.get("locations") or {})

    def credentials(self) -> dict[str, str]:
        raw = self.connection.credentials
        try:
            credentials = json.loads(raw) if raw else {}
        except ValueError:
            credentials = {}
        if not credentials.get("access_token"):
            raise MarketplaceUnavailable("The connection has no Shopify access token.", code="AUTH")
        return credentials

    def _budget_wait(self) -> float:
        return 5.0 if serving() else float(current_config()["MARKETPLACE_BUDGET_WAIT_SECONDS"])

    def graphql(
        self, name: str, document: str, variables: dict[str, Any], estimate: int
    ) -> dict[str, Any]:
        """Run one query or mutation (``name`` names it in costs and errors); returns its
        ``data``."""
        token = self.credentials()["access_token"]
        started = time.monotonic()
        max_wait = self._budget_wait()
        while True:
            draw = self._draw(name, estimate, max_wait)
            status, payload, headers = self._send(draw, document, variables, token)
            throttle = self._observe(name, payload, draw.terms, draw.cost, draw.ticket)
            _raise_for_http_status(name, status, payload, headers)
            errors = payload.get("errors")
            if errors:
                code, message = _first_error(errors)
                if code == "THROTTLED":
                    wait = throttle or 1.0
                    if not budgets.enabled() or time.monotonic() - started + wait > max_wait:
                        raise MarketplaceUnavailable(
                            f"Shopify throttled {name}: {message}",
                            code="THROTTLED",
                            details={"operation": name},
                            retry_after=max(1, math.ceil(wait)),
                        )
                    continue  # the budget holds what Shopify has left: it waits for the points
                if status != 200 or payload.get("data") is None:
                    raise MarketplaceRejection(
                        f"Shopify refused {name}: {message}",
                        code=code or "GRAPHQL_ERROR",
                        details={"operation": name, "http_status": status},
                    )
            if status != 200 or not isinstance(payload.get("data"), dict):
                raise MarketplaceUnavailable(
                    f"Shopify's answer to {name} has no data (HTTP {status}).",
                    code="INVALID_RESPONSE",
                    details={"operation": name, "http_status": status},
                )
            return payload["data"]

    def _draw(self, name, estimate, max_wait):
        """Take the query's estimated cost from the connection's budget (waiting at most
        ``max_wait``); unavailable (THROTTLED) when the budget cannot give it in time."""
        connection_id = self.connection.id
        rate, maximum = PLANS.plan(connection_id)
        cost = min(PLANS.cost(connection_id, name, estimate), maximum)
        terms = budget_terms(rate, maximum)
        try:
            wait, ticket = budgets.reserve_priced(connection_id, BUDGET, *terms, max_wait, cost)
        except budgets.BudgetExhausted as exc:
            message = f"Shopify's query cost budget allows {name} in {{wait}} s."
            raise exc.unavailable(message, name) from None
        return _Draw(terms, cost, wait, ticket)

    def _send(self, draw, document, variables, token):
        """Wait for the drawn points and POST the query; a query that never got an answer
        gives its points back."""
        try:
            if draw.wait > 0:
                time.sleep(draw.wait)
            return exchange(
                self,
                "Shopify",
                "POST",
                self.url,
                json_body={"query": document, "variables": variables},
                headers={"User-Agent": USER_AGENT, "X-Shopify-Access-Token": token},
            )
        except BaseException:
            self._settle(draw.terms, draw.cost)
            raise

    def _settle(self, terms, drawn):
        try:
            budgets.settle(self.connection.id, BUDGET, *terms, drawn)
        except Exception:
            log.warning("shopify: settling the cost budget failed", exc_info=True)

    def _observe(self, name, payload, drawn_terms, drawn, ticket):
        """Take what the answer to the query drawn as ``ticket`` (``drawn`` points) says of
        the bucket; returns how long a throttled query must wait for its points (None when
        the answer says nothing)."""
        cost = ((payload or {}).get("extensions") or {}).get("cost") if payload else None
        if not isinstance(cost, dict):
            self._settle(drawn_terms, drawn)
            return None
        status = cost.get("throttleStatus") or {}
        maximum = _number(status.get("maximumAvailable"))
        left = _number(status.get("currentlyAvailable"))
        rate = _number(status.get("restoreRate"))
        requested = _number(cost.get("requestedQueryCost"))
        PLANS.learn(self.connection.id, name, requested and math.ceil(requested), rate, maximum)
        if not (maximum and rate and left is not None):
            self._settle(drawn_terms, drawn)
        else:
            try:
                terms = budget_terms(rate, maximum)
                budgets.observe(self.connection.id, BUDGET, *terms, *terms, left, drawn, ticket)
            except Exception:
                # Shopify has answered (and may have written): a busy budget store must
                # not turn that answer into a failure; the next draw or THROTTLED corrects
                log.warning("shopify: recording the cost bucket failed", exc_info=True)
            if requested and requested > left:
                return (requested - left) / rate
        return None


def _number(value):
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value) if math.isfinite(value) and value >= 0 else None


def _raise_for_http_status(name, status, payload, headers):
    """Unavailable on a refused token (AUTH), 429, 5xx or an answer that is not GraphQL's
    JSON."""
    if status in (401, 403):
        raise MarketplaceUnavailable(
            f"Shopify refused the access token (HTTP {status}). Install the custom app "
            "again or replace the connection's access_token.",
            code="AUTH",
            details={"operation": name, "http_status": status},
            retry_after=30,
        )
    if status == 429 or status >= 500 or not isinstance(payload, dict):
        raise MarketplaceUnavailable(
            f"Shopify answered HTTP {status} to {name}"
            + ("" if isinstance(payload, dict) else " without GraphQL's JSON")
            + ".",
            code="INVALID_RESPONSE" if status == 200 else f"HTTP_{status}",
            details={"operation": name, "http_status": status},
            retry_after=_retry_after(headers.get("retry-after")),
        )


def _first_error(errors):
    if isinstance(errors, list) and errors and isinstance(errors[0], dict):
        extensions = errors[0].get("extensions") or {}
        code = extensions.get("code") if isinstance(extensions, dict) else None
        message = str(errors[0].get("message") or "")[:500] or "Shopify refused the query."
        return (str(code)[:64] if code else None), message
    if isinstance(errors, str):
        return None, errors[:500]
    return None, "Shopify refused the query."


def _retry_after(value):
    try:
        seconds = float(value)
    except (TypeError, ValueError):
        return None
    return max(1, min(math.ceil(seconds), 3600)) if math.isfinite(seconds) else None
