"""The ``http`` connector: JSON over HTTP to an operator-given base URL.

The wire contract (paths, bodies, how answers map to our outcomes) is in
``docs/connector-http.md``; keep the two in step.
"""

import json
import math
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any
from urllib.parse import quote

import requests

from .. import netguard
from ..config import current_config
from ..crypto import readable
from ..retry_after import parse_retry_after
from .answers import has_unstorable_text
from .base import (
    Connector,
    ListingResult,
    MarketplaceRejection,
    MarketplaceUnavailable,
    OrderPage,
)
from .limits import remaining
from .offers import normalize_offers

USER_AGENT = "commerce-api/0.1 (+connector-http)"
MAX_RESPONSE_BYTES = 5 * 1024 * 1024
PAGE_SIZE = 100
# Answers that say "not now" rather than "no": the request may be tried again later.
UNAVAILABLE_STATUSES = frozenset({401, 403, 407, 408, 425, 429})


class HttpConnector(Connector):
    name = "http"

    def _timeouts(self):
        return (
            float(current_config()["MARKETPLACE_CONNECT_TIMEOUT"]),
            float(current_config()["MARKETPLACE_READ_TIMEOUT"]),
        )

    def _headers(self, idempotency_key=None):
        headers = {
            "Accept": "application/json",
            "User-Agent": USER_AGENT,
            "X-Commerce-Connection": self.connection.id,
            "X-Commerce-Marketplace": self.connection.marketplace,
        }
        token = readable(self.connection.api_token)
        if token:
            headers["Authorization"] = f"Bearer {token}"
        if idempotency_key:
            headers["Idempotency-Key"] = idempotency_key
        return headers

    def _request(self, method, path, *, body=None, params=None, idempotency_key=None):
        """Send one request; return the decoded JSON object of a 2xx answer.

        The host is resolved and checked once and the request goes to the checked address
        (``netguard``): a connection made through the API never reaches a private one. The
        whole exchange ends by the call's wall-clock deadline (``limits.remaining``): a
        marketplace trickling its answer a byte at a time is cut off there.
        """
        deadline = remaining(current_config()["MARKETPLACE_DEADLINE_SECONDS"])
        url = self.connection.base_url.rstrip("/") + path
        kwargs = {
            "params": params,
            "headers": self._headers(idempotency_key),
            "timeout": self._timeouts(),
            "allow_redirects": False,
            "stream": True,
        }
        if body is not None:
            kwargs["data"] = json.dumps(body, separators=(",", ":"))
            kwargs["headers"]["Content-Type"] = "application/json"
        expired = None
        try:
            with (
                netguard.time_limit(deadline) as expired,
                self._send(method, url, kwargs) as response,
            ):
                raw = self._read(response)
                status = response.status_code
                retry_after = response.headers.get("Retry-After")
        except MarketplaceUnavailable:
            if expired is not None and expired.is_set():
                raise _deadline_passed(deadline) from None
            raise
        except Exception as exc:
            if expired is not None and expired.is_set():
                raise _deadline_passed(deadline) from None
            raise _unavailable(exc, self.connection.allow_private) from None
        if expired.is_set():  # an answer cut at the deadline may look complete: never trust it
            raise _deadline_passed(deadline)
        payload = self._decode(raw)
        if 200 <= status < 300:
            if not isinstance(payload, dict):
                raise MarketplaceUnavailable(
                    "The marketplace's answer is not a JSON object.",
                    code="INVALID_RESPONSE",
                    details={"http_status": status},
                )
            return payload
        error = payload.get("error") if isinstance(payload, dict) else None
        error = error if isinstance(error, dict) else {}
        code = str(error.get("code") or f"HTTP_{status}")[:64]
        message = str(error.get("message") or f"The marketplace answered HTTP {status}.")[:500]
        details = {"http_status": status}
        if status >= 500 or status in UNAVAILABLE_STATUSES or 300 <= status < 400:
            raise MarketplaceUnavailable(
                message, code=code, details=details, retry_after=_retry_after(retry_after)
            )
        raise MarketplaceRejection(message, code=code, details=details)

    def _send(self, method, url, kwargs):
        """The request through the connection's keep-alive pool (``gateway.session_for``),
        or a Session of its own; netguard checks the address either way."""
        if self.session is None:
            return netguard.request(
                method, url, allow_private=self.connection.allow_private, **kwargs
            )
        return self.session.request(method, url, **kwargs)

    @staticmethod
    def _read(response):
        chunks, size = [], 0
        for chunk in response.iter_content(65536):
            size += len(chunk)
            if size > MAX_RESPONSE_BYTES:
                raise MarketplaceUnavailable(
                    "The marketplace's answer is too large.", code="INVALID_RESPONSE"
                )
            chunks.append(chunk)
        return b"".join(chunks)

    @staticmethod
    def _decode(raw):
        if not raw:
            return None
        try:
            document = json.loads(raw, parse_constant=_no_constant)
        except (ValueError, UnicodeDecodeError, RecursionError):
            return None
        if b"\\u" in raw and has_unstorable_text(document):  # only \u escapes make them
            raise MarketplaceUnavailable(
                "The marketplace's answer holds NUL or a lone surrogate.", code="INVALID_RESPONSE"
            )
        return document

    # the interface ------------------------------------------------------------------------

    def push_product(
        self, product: dict[str, Any], idempotency_key: str | None = None
    ) -> dict[str, Any]:
        answer = self._request(
            "PUT",
            "/products/" + quote(product["sku"], safe=""),
            body=product,
            idempotency_key=idempotency_key,
        )
        external_id = answer.get("external_id")
        if not isinstance(external_id, str) or not external_id:
            raise MarketplaceUnavailable("The answer has no external_id.", code="INVALID_RESPONSE")
        # missing values default to what was sent; present ones are checked as they came
        # (answers.check_listing): a wrong one makes the answer unusable
        return {
            "external_id": external_id,
            "status": _given(answer, "status", "active"),
            "price": _given(answer, "price", product.get("price")),
            "currency": _given(answer, "currency", product.get("currency")),
            "quantity": _given(answer, "quantity", product.get("quantity")),
        }

    @property
    def batch_size(self) -> int:
        """Listings per ``POST /products/batch`` (``settings.batch_size``; 1: none)."""
        return max(1, int(self.settings.get("batch_size") or 1))

    def push_listings(self, items: Sequence[dict[str, Any]]) -> list[ListingResult]:
        """Many listings as one ``POST /products/batch`` (docs/connector-http.md), when
        the connection has a ``batch_size``; else one ``PUT /products/{sku}`` each."""
        if self.batch_size == 1 or len(items) == 1:
            return super().push_listings(items)
        answer = self._request(
            "POST",
            "/products/batch",
            body={
                "listings": [
                    {**item["payload"], "idempotency_key": item.get("idempotency_key")}
                    for item in items
                ]
            },
        )
        results = answer.get("results")
        if not isinstance(results, list) or len(results) != len(items):
            raise MarketplaceUnavailable(
                "The answer has no result for each listing.", code="INVALID_RESPONSE"
            )
        outcomes = []
        for item, result in zip(items, results, strict=True):
            payload = item["payload"]
            if not isinstance(result, dict) or result.get("sku") != payload["sku"]:
                raise MarketplaceUnavailable(
                    "The results do not follow the listings' order.", code="INVALID_RESPONSE"
                )
            error = result.get("error")
            if isinstance(error, dict):
                outcomes.append(
                    ListingResult(
                        "rejected",
                        error_code=str(error.get("code") or "REJECTED")[:64],
                        error_message=str(error.get("message") or "Refused.")[:500],
                    )
                )
                continue
            external_id = result.get("external_id")
            if not isinstance(external_id, str) or not external_id:
                outcomes.append(ListingResult("unavailable", error_code="INVALID_RESPONSE"))
                continue
            outcomes.append(
                ListingResult(
                    "accepted",
                    answer={
                        "external_id": external_id,
                        "status": _given(result, "status", "active"),
                        "price": _given(result, "price", payload.get("price")),
                        "currency": _given(result, "currency", payload.get("currency")),
                        "quantity": _given(result, "quantity", payload.get("quantity")),
                    },
                )
            )
        return outcomes

    def confirm_shipment(self, order: dict[str, Any], shipment: dict[str, Any]) -> dict[str, Any]:
        body = {
            "carrier": shipment["carrier"],
            "tracking_number": shipment["tracking_number"],
            "shipped_date": shipment["shipped_date"],
            "line_items": shipment["line_items"],
        }
        answer = self._request(
            "POST",
            "/orders/" + quote(order["external_order_id"], safe="") + "/shipment",
            body=body,
            idempotency_key=shipment.get("idempotency_key"),
        )
        confirmation = answer.get("confirmation_id")
        return {"confirmation_id": str(confirmation)[:200] if confirmation is not None else None}

    def request_cancellation(self, order: dict[str, Any], reason: str) -> dict[str, Any]:
        answer = self._request(
            "POST",
            "/orders/" + quote(order["external_order_id"], safe="") + "/cancellation",
            body={"reason": reason},
            idempotency_key=f"{order['id']}:cancellation:{order.get('requested_at')}",
        )
        status = answer.get("status")
        if status not in ("approved", "rejected", "pending"):
            raise MarketplaceUnavailable(
                "The answer's status is not approved, rejected or pending.",
                code="INVALID_RESPONSE",
            )
        return {"status": status, "message": str(answer.get("message") or "")[:500] or None}

    def fetch_orders(self, cursor: str | None) -> OrderPage:
        params = {"limit": PAGE_SIZE}
        if cursor:
            params["cursor"] = cursor
        answer = self._request("GET", "/orders", params=params)
        orders = answer.get("orders")
        if not isinstance(orders, list):
            raise MarketplaceUnavailable("The answer has no orders list.", code="INVALID_RESPONSE")
        next_cursor = answer.get("next_cursor")
        if next_cursor is not None and not isinstance(next_cursor, str | int):
            raise MarketplaceUnavailable("next_cursor is not a string.", code="INVALID_RESPONSE")
        return OrderPage(
            orders=orders,
            cursor=str(next_cursor) if next_cursor is not None else cursor,
            has_more=bool(answer.get("has_more")) and next_cursor is not None,
        )

    def fetch_inventory(self) -> list[dict[str, Any]]:
        answer = self._request("GET", "/inventory")
        items = answer.get("items")
        if not isinstance(items, list):
            raise MarketplaceUnavailable("The answer has no items list.", code="INVALID_RESPONSE")
        return [item for item in items if isinstance(item, dict)]

    def push_price(
        self, product: dict[str, Any], idempotency_key: str | None = None
    ) -> dict[str, Any]:
        # the listing shape of push_product with the new price (docs/connector-http.md)
        return self.push_product(product, idempotency_key=idempotency_key)

    def fetch_competitor_prices(self, skus: Sequence[str]) -> list[dict[str, Any]]:
        skus = list(skus)
        answer = self._request("GET", "/competitor-prices", params={"sku": skus})
        # every record is checked; one bad record makes the whole answer unusable
        return normalize_offers(answer.get("prices"), skus, self.connection.marketplace)

    def fetch_reviews(self, skus: Sequence[str], since: datetime | None) -> list[dict[str, Any]]:
        params = {"sku": list(skus)}
        if since is not None:
            params["since"] = since.astimezone(UTC).isoformat(timespec="milliseconds")[:-6] + "Z"
        answer = self._request("GET", "/reviews", params=params)
        reviews = answer.get("reviews")
        if not isinstance(reviews, list):
            raise MarketplaceUnavailable("The answer has no reviews list.", code="INVALID_RESPONSE")
        return [_review(item, index) for index, item in enumerate(reviews)]


def _bad_review(index, field, problem):
    return MarketplaceUnavailable(
        f"Review {index} of the answer: {field} {problem}.",
        code="INVALID_RESPONSE",
        details={"index": index, "field": field},
    )


def _review(item, index):
    """One review of a ``GET /reviews`` answer, checked; a bad shape is unavailable."""
    if not isinstance(item, dict):
        raise _bad_review(index, "review", "is not an object")
    review_id = item.get("id")
    if isinstance(review_id, bool) or not isinstance(review_id, str | int) or review_id == "":
        raise _bad_review(index, "id", "must be a non-empty string or an integer")
    review_id = str(review_id)
    if len(review_id) > 200:
        raise _bad_review(index, "id", "is longer than 200 characters")
    sku = item.get("sku")
    if not isinstance(sku, str) or not 1 <= len(sku) <= 64:
        raise _bad_review(index, "sku", "must be a string of 1 to 64 characters")
    rating = item.get("rating")
    if rating is not None and (
        isinstance(rating, bool) or not isinstance(rating, int) or not 1 <= rating <= 5
    ):
        raise _bad_review(index, "rating", "must be an integer from 1 to 5 or null")
    title = item.get("title")
    if title is not None and not isinstance(title, str):
        raise _bad_review(index, "title", "must be a string or null")
    text = item.get("text")
    if not isinstance(text, str):
        raise _bad_review(index, "text", "must be a string")
    created_at = item.get("created_at")
    if created_at is not None:
        try:
            parsed = (
                datetime.fromisoformat(str(created_at)) if isinstance(created_at, str) else None
            )
        except ValueError:
            parsed = None
        if parsed is None or parsed.tzinfo is None:
            raise _bad_review(index, "created_at", "must be an ISO 8601 time with a zone or null")
    return {
        "id": review_id,
        "sku": sku,
        "rating": rating,
        "title": title[:500] if title is not None else None,
        "text": text[:10_000],
        "created_at": created_at,
    }


def _deadline_passed(seconds):
    return MarketplaceUnavailable(
        f"The marketplace did not answer within the deadline of {seconds:g} s.",
        code="TIMEOUT",
        details={"deadline_seconds": round(seconds, 3)},
    )


def _unavailable(exc, allow_private):
    """The MarketplaceUnavailable for a failed exchange (other exceptions are re-raised)."""
    if isinstance(exc, netguard.AddressNotAllowed):
        return MarketplaceUnavailable(str(exc), code="TARGET_NOT_ALLOWED")
    if isinstance(exc, netguard.HostNotResolved):
        if allow_private:
            return MarketplaceUnavailable(
                str(exc), code="CONNECTION_FAILED", details={"error": str(exc)[:300]}
            )
        return MarketplaceUnavailable(str(exc), code="TARGET_NOT_ALLOWED")
    if isinstance(exc, requests.Timeout):
        return MarketplaceUnavailable(
            "The marketplace did not answer in time.",
            code="TIMEOUT",
            details={"error": str(exc)[:300]},
        )
    if isinstance(exc, requests.ConnectionError):
        return MarketplaceUnavailable(
            "The marketplace refused or dropped the connection.",
            code="CONNECTION_FAILED",
            details={"error": str(exc)[:300]},
        )
    if isinstance(exc, requests.RequestException):
        return MarketplaceUnavailable(
            "The request to the marketplace failed.",
            code="REQUEST_FAILED",
            details={"error": str(exc)[:300]},
        )
    raise exc


def _retry_after(value: str | None) -> int | None:
    """Whole seconds from the answer's ``Retry-After`` (delta-seconds or an HTTP date),
    1 s to an hour; None when it gave none (or junk)."""
    seconds = parse_retry_after(value)
    if seconds is None:
        return None
    return max(1, min(math.ceil(seconds), 3600))


def _given(answer, name, default):
    value = answer.get(name)
    return default if value is None else value


def _no_constant(name):
    # NaN, Infinity and -Infinity are not JSON: an answer holding them is not usable
    raise ValueError(f"{name} is not JSON")
