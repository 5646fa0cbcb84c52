"""The ``amazon`` connector: Amazon's Selling Partner API (DESIGN 13, docs/connector-amazon.md).

- **Login with Amazon**: the connection's ``refresh_token`` is exchanged for an access
  token (``grant_type=refresh_token``), kept per connection and process until 60 s before
  it expires and shared by the process's threads (``_TokenCache``): one thread refreshes
  while the others wait for it, and a failed refresh is remembered for a while, so a
  revoked token does not stampede the token endpoint. It is sent as
  ``x-amz-access-token``; a token Amazon no longer takes (403) is refreshed once.
- **Usage plans**: every call first draws from the connection's fleet-wide budget for its
  operation (``budgets``: the rate and burst below, from each operation's description in
  the published models, then what ``x-amzn-RateLimit-Limit`` says). A 429 drains that
  budget and the call waits and tries again; it is unavailable (``THROTTLED``, with
  ``Retry-After``) only when the wait would pass what the caller may wait. It never makes
  a push or a job fail.
- **Listings**: a few pending listings go one ``patchListingsItem`` each (quantity as
  ``fulfillment_availability``, price as ``purchasable_offer``); more as one
  ``JSON_LISTINGS_FEED`` (createFeedDocument, upload, createFeed). Both are accepted for
  processing only: the listing is ``submitted`` and ``check_submissions`` reads the
  result later (``getListingsItem`` until it shows the values; ``getFeed`` until done,
  then the processing report per message).
- **Orders** (``getOrders`` by ``LastUpdatedAfter`` with ``NextToken``,
  ``getOrderItems``, ``getOrderAddress``), **shipments** (``confirmShipment``), **FBA
  stock** (``getInventorySummaries``), **competitor offers** (``getListingOffersBatch``).
  Cancellation: the published models define no seller-initiated cancellation request;
  ``request_cancellation`` refuses with ``CANCELLATION_NOT_SUPPORTED`` (never a fake
  success).
"""

import hashlib
import json
import logging
import math
import threading
import time
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from decimal import Decimal, InvalidOperation
from typing import Any
from urllib.parse import quote

import requests

from .. import netguard
from ..config import current_config
from ..retry_after import parse_retry_after
from . import budgets
from .base import (
    Connector,
    ListingResult,
    MarketplaceRejection,
    MarketplaceUnavailable,
    OrderPage,
    SubmissionCheck,
)
from .limits import remaining, serving
from .offers import normalize_offers

log = logging.getLogger("commerce_api.marketplaces.amazon")

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
# the budget keeps a margin below the plan: calls leave when their token is due but arrive
# a little early or late, so a bucket one token smaller and 5% slower than Amazon's never
# finds Amazon's empty
BUDGET_MARGIN = 0.95


def budget_plan(rate: float, burst: int) -> tuple[float, int]:
    """The budget kept for a usage plan of ``rate`` per second and ``burst``."""
    return rate * BUDGET_MARGIN, max(1, burst - 1)


PATCH_AT_MOST = 5  # more listings than this at once go as a feed
FEED_AT_MOST = 10_000  # listings per JSON_LISTINGS_FEED (the schema allows 25,000)
FEED_CONTENT_TYPE = "application/json; charset=UTF-8"
PRODUCT_TYPE = "PRODUCT"  # offer-only changes of an existing listing
ORDERS_LOOKBACK_DAYS = 30  # the first order pull looks this far back
OFFERS_BATCH = 20  # getListingOffersBatch takes 20 requests at most
MAX_RESPONSE_BYTES = 50 * 1024 * 1024
# each Amazon store's currency: a listing priced without one is priced in it
MARKETPLACE_CURRENCIES = {
    "ATVPDKIKX0DER": "USD", "A2EUQ1WTGCTBG2": "CAD", "A1AM78C64UM0Y8": "MXN",
    "A2Q3Y263D00KWC": "BRL", "A1F83G8C2ARO7P": "GBP", "A1PA6795UKMFR9": "EUR",
    "A13V1IB3VIYZZH": "EUR", "APJ6JRA9NG5V4": "EUR", "A1RKKUPIHCS9HS": "EUR",
    "A1805IZSGTT6HS": "EUR", "AMEN7PMS3EDWL": "EUR", "A2NODRKZP88ZB9": "SEK",
    "A1C3SOZRARQ6R3": "PLN", "A33AVAJ2PDY3EV": "TRY", "A1VC38T7YXB528": "JPY",
    "A39IBJ37TRP1C6": "AUD", "A21TJRUUN4KGV": "INR", "A19VAU5U5O7RUS": "SGD",
    "A2VIGQ35RCS4UG": "AED", "A17E79C6D8DWNP": "SAR", "ARBP9OOSHTCHU": "EGP",
}  # fmt: skip
ORDER_STATUSES = {
    "Pending": "pending",
    "PendingAvailability": "pending",
    "Unshipped": "confirmed",
    "InvoiceUnconfirmed": "confirmed",
    "PartiallyShipped": "processing",
    "Shipped": "shipped",
    "Canceled": "cancelled",
    "Unfulfillable": "cancelled",
}


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

    def clear(self) -> None:
        with self.lock:
            self.entries.clear()


TOKENS = _TokenCache()


class AmazonConnector(Connector):
    name = "amazon"
    batch_size = FEED_AT_MOST

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
        deadline = remaining(current_config()["MARKETPLACE_DEADLINE_SECONDS"])
        headers = {"User-Agent": USER_AGENT, "Accept": "application/json", **(headers or {})}
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
        try:
            with netguard.time_limit(deadline) as expired:
                if self.session is None:
                    response = netguard.request(
                        method, url, allow_private=self.connection.allow_private, **kwargs
                    )
                else:
                    response = self.session.request(method, url, **kwargs)
                with response:
                    raw = _read(response)
                    status, answer_headers = response.status_code, dict(response.headers)
        except MarketplaceUnavailable:
            raise
        except Exception as exc:
            if expired is not None and expired.is_set():
                raise MarketplaceUnavailable(
                    f"Amazon did not answer within the deadline of {deadline:g} s.", code="TIMEOUT"
                ) from None
            raise _unavailable(exc, self.connection.allow_private) from None
        if expired.is_set():
            raise MarketplaceUnavailable(
                f"Amazon did not answer within the deadline of {deadline:g} s.", code="TIMEOUT"
            )
        payload = None
        if raw:
            try:
                payload = json.loads(raw, parse_constant=_no_constant)
            except (ValueError, UnicodeDecodeError, RecursionError):
                payload = None
        return status, payload, {k.lower(): v for k, v in answer_headers.items()}

    def _budget_wait(self) -> float:
        return 5.0 if serving() else float(current_config()["MARKETPLACE_BUDGET_WAIT_SECONDS"])

    def _call(self, operation, method, path, *, params=None, body=None, accept=(200,)):
        """One SP-API operation: budget, token, exchange, Amazon's errors; returns the JSON
        answer (None for an empty one)."""
        rate, burst = budget_plan(*USAGE_PLANS[operation])
        url = self.endpoint + path
        params = {
            name: ",".join(value) if isinstance(value, list | tuple) else value
            for name, value in (params or {}).items()
            if value is not None
        }
        refreshed = False
        started = time.monotonic()
        max_wait = self._budget_wait()
        while True:
            try:
                budgets.take(self.connection.id, operation, rate, burst, max_wait)
            except budgets.BudgetExhausted as exc:
                raise MarketplaceUnavailable(
                    f"Amazon's usage plan for {operation} allows the next call in "
                    f"{exc.wait:.0f} s.",
                    code="THROTTLED",
                    details={"operation": operation},
                    retry_after=max(1, math.ceil(exc.wait)),
                ) from None
            token = self.access_token()
            status, payload, headers = self._exchange(
                method, url, params=params, json_body=body, headers={"x-amz-access-token": token}
            )
            limit = _rate(headers.get("x-amzn-ratelimit-limit"))
            if limit is not None and abs(limit * BUDGET_MARGIN - rate) > 1e-9:
                rate = limit * BUDGET_MARGIN
                budgets.adjust(self.connection.id, operation, rate, burst, rate)
            if status in accept:
                return payload
            error = _first_error(payload)
            if status == 429:
                # the budget's fault: empty it and wait for the next token
                budgets.drain(self.connection.id, operation, rate, burst)
                waited = time.monotonic() - started
                retry_after = parse_retry_after(headers.get("retry-after")) or 1 / (limit or rate)
                if not budgets.enabled():
                    raise MarketplaceUnavailable(
                        f"Amazon throttled {operation}: {error[1]}",
                        code="THROTTLED",
                        details={"operation": operation, "http_status": 429},
                        retry_after=max(1, math.ceil(retry_after)),
                    )
                if waited + retry_after > max_wait:
                    raise MarketplaceUnavailable(
                        f"Amazon throttled {operation}: {error[1]}",
                        code="THROTTLED",
                        details={"operation": operation, "http_status": 429},
                        retry_after=max(1, math.ceil(retry_after)),
                    )
                continue
            if status in (401, 403):
                if not refreshed:
                    refreshed = True
                    self.forget_token(token)
                    continue
                raise MarketplaceUnavailable(
                    f"Amazon refused the access token for {operation}: {error[1]}",
                    code="AUTH",
                    details={"operation": operation, "http_status": status},
                    retry_after=AUTH_FAILURE_HOLD_SECONDS,
                )
            if status >= 500 or 300 <= status < 400 or status in (408, 425):
                raise MarketplaceUnavailable(
                    f"Amazon answered HTTP {status} to {operation}: {error[1]}",
                    code=error[0] or f"HTTP_{status}",
                    details={"operation": operation, "http_status": status},
                    retry_after=_retry_after(headers.get("retry-after")),
                )
            raise MarketplaceRejection(
                error[1],
                code=(error[0] or f"HTTP_{status}")[:64],
                details={"operation": operation, "http_status": status},
            )

    # listings ---------------------------------------------------------------------------

    def _listing_path(self, sku):
        return f"/listings/2021-08-01/items/{quote(self.seller_id, safe='')}/{quote(sku, safe='')}"

    def _attributes(self, payload):
        """The listing's state as Amazon attributes (what a patch or a feed sends)."""
        attributes = {}
        quantity = payload.get("quantity")
        if quantity is not None:
            if payload.get("status") != "active":
                quantity = 0  # an inactive listing is taken off sale
            attributes["fulfillment_availability"] = [
                {"fulfillment_channel_code": "DEFAULT", "quantity": int(quantity)}
            ]
        price = payload.get("price")
        currency = payload.get("currency") or MARKETPLACE_CURRENCIES.get(self.marketplace_id)
        if price is not None and currency:
            attributes["purchasable_offer"] = [
                {
                    "marketplace_id": self.marketplace_id,
                    "currency": currency,
                    "our_price": [{"schedule": [{"value_with_tax": price}]}],
                }
            ]
        return attributes

    def _patches(self, payload):
        return [
            {"op": "replace", "path": f"/attributes/{name}", "value": value}
            for name, value in self._attributes(payload).items()
        ]

    def _sent(self, payload):
        price = payload.get("price")
        currency = payload.get("currency") or MARKETPLACE_CURRENCIES.get(self.marketplace_id)
        return {
            "sku": payload["sku"],
            "status": payload.get("status"),
            "quantity": (
                None
                if payload.get("quantity") is None
                else (int(payload["quantity"]) if payload.get("status") == "active" else 0)
            ),
            "price": price,
            "currency": currency if price is not None else payload.get("currency"),
        }

    def _patch(self, payload):
        """One patchListingsItem: a ListingResult (submitted, rejected)."""
        patches = self._patches(payload)
        sent = self._sent(payload)
        if not patches:  # nothing Amazon holds of ours changes (FBA, no price yet)
            return ListingResult("accepted", answer=_answer(payload["sku"], sent))
        answer = self._call(
            "patchListingsItem",
            "PATCH",
            self._listing_path(payload["sku"]),
            params={"marketplaceIds": [self.marketplace_id], "includedData": ["issues"]},
            body={"productType": PRODUCT_TYPE, "patches": patches},
        )
        if not isinstance(answer, dict) or answer.get("status") not in ("ACCEPTED", "INVALID"):
            raise MarketplaceUnavailable(
                "Amazon's patchListingsItem answer has no status.", code="INVALID_RESPONSE"
            )
        errors = [i for i in answer.get("issues") or [] if i.get("severity") == "ERROR"]
        if answer["status"] == "INVALID" or errors:
            code, message = _issue(errors[0] if errors else {})
            return ListingResult("rejected", error_code=code, error_message=message)
        submission = {
            "kind": "patch",
            "id": str(answer.get("submissionId") or "")[:200],
            "sent": sent,
        }
        return ListingResult("submitted", submission=submission)

    def push_listings(self, items: Sequence[dict[str, Any]]) -> list[ListingResult]:
        """A few listings: a patch each; more: one JSON_LISTINGS_FEED."""
        if len(items) <= PATCH_AT_MOST:
            results = []
            for item in items:
                try:
                    results.append(self._patch(item["payload"]))
                except MarketplaceRejection as exc:
                    results.append(
                        ListingResult("rejected", error_code=exc.code, error_message=exc.message)
                    )
                except MarketplaceUnavailable as exc:
                    results.append(
                        ListingResult(
                            "unavailable",
                            error_code=exc.code,
                            error_message=exc.message,
                            retry_after=exc.retry_after,
                        )
                    )
            return results
        return self._feed(items)

    def _feed(self, items):
        messages, sent = [], []
        for number, item in enumerate(items, start=1):
            payload = item["payload"]
            patches = self._patches(payload)
            sent.append(self._sent(payload))
            if patches:
                messages.append(
                    {
                        "messageId": number,
                        "sku": payload["sku"],
                        "operationType": "PATCH",
                        "productType": PRODUCT_TYPE,
                        "patches": patches,
                    }
                )
        results = [None] * len(items)
        for index, item in enumerate(items):
            if not self._patches(item["payload"]):
                results[index] = ListingResult(
                    "accepted", answer=_answer(sent[index]["sku"], sent[index])
                )
        if not messages:
            return results
        document = self._call(
            "createFeedDocument",
            "POST",
            "/feeds/2021-06-30/documents",
            body={"contentType": FEED_CONTENT_TYPE},
            accept=(201,),
        )
        if not isinstance(document, dict) or not document.get("url"):
            raise MarketplaceUnavailable(
                "Amazon's createFeedDocument answer has no url.", code="INVALID_RESPONSE"
            )
        content = {"header": {"sellerId": self.seller_id, "version": "2.0"}, "messages": messages}
        status, _, _ = self._exchange(
            "PUT",
            document["url"],
            data=json.dumps(content, separators=(",", ":")).encode(),
            headers={"Content-Type": FEED_CONTENT_TYPE},
        )
        if not 200 <= status < 300:
            raise MarketplaceUnavailable(
                f"Uploading the feed document answered HTTP {status}.", code=f"HTTP_{status}"
            )
        feed = self._call(
            "createFeed",
            "POST",
            "/feeds/2021-06-30/feeds",
            body={
                "feedType": "JSON_LISTINGS_FEED",
                "marketplaceIds": [self.marketplace_id],
                "inputFeedDocumentId": document["feedDocumentId"],
            },
            accept=(202,),
        )
        feed_id = str((feed or {}).get("feedId") or "")
        if not feed_id:
            raise MarketplaceUnavailable(
                "Amazon's createFeed answer has no feedId.", code="INVALID_RESPONSE"
            )
        for index in range(len(items)):
            if results[index] is None:
                results[index] = ListingResult(
                    "submitted",
                    submission={
                        "kind": "feed",
                        "id": feed_id,
                        "message_id": index + 1,
                        "sent": sent[index],
                    },
                )
        return results

    def check_submissions(self, items: Sequence[dict[str, Any]]) -> SubmissionCheck:
        """The results of submitted listings: ``items`` are ``{sku, submission}``."""
        results = [None] * len(items)
        notes = []
        feeds = {}
        for index, item in enumerate(items):
            submission = item["submission"] or {}
            if submission.get("kind") == "feed":
                feeds.setdefault(submission.get("id"), []).append(index)
            else:
                results[index] = self._check_patch(submission.get("sent") or {"sku": item["sku"]})
        for feed_id, indexes in feeds.items():
            outcome = self._check_feed(feed_id, [items[i] for i in indexes], notes)
            for index, result in zip(indexes, outcome, strict=True):
                results[index] = result
        return SubmissionCheck(results, notes)

    def _check_patch(self, sent):
        try:
            item = self._call(
                "getListingsItem",
                "GET",
                self._listing_path(sent["sku"]),
                params={
                    "marketplaceIds": [self.marketplace_id],
                    "includedData": ["summaries", "issues", "offers", "fulfillmentAvailability"],
                },
            )
        except MarketplaceRejection as exc:
            return ListingResult("rejected", error_code=exc.code, error_message=exc.message)
        except MarketplaceUnavailable as exc:
            return ListingResult(
                "unavailable",
                error_code=exc.code,
                error_message=exc.message,
                retry_after=exc.retry_after,
            )
        if not isinstance(item, dict):
            return ListingResult("unavailable", error_code="INVALID_RESPONSE")
        errors = [i for i in item.get("issues") or [] if i.get("severity") == "ERROR"]
        shown = _shown(item, self.marketplace_id)
        if _matches(sent, shown):
            return ListingResult("accepted", answer=_answer(sent["sku"], sent, shown))
        if errors:
            code, message = _issue(errors[0])
            return ListingResult("rejected", error_code=code, error_message=message)
        return ListingResult("submitted")  # not applied yet: read again later

    def _check_feed(self, feed_id, items, notes):
        try:
            report = self._feed_report(feed_id)
        except MarketplaceUnavailable as exc:
            return [
                ListingResult(
                    "unavailable",
                    error_code=exc.code,
                    error_message=exc.message,
                    retry_after=exc.retry_after,
                )
                for _ in items
            ]
        except MarketplaceRejection as exc:
            return [
                ListingResult("rejected", error_code=exc.code, error_message=exc.message)
                for _ in items
            ]
        if report is None:
            return [ListingResult("submitted") for _ in items]
        issues = {}
        by_message = {item["submission"].get("message_id"): item for item in items}
        for issue in report.get("issues") or []:
            if not isinstance(issue, dict) or issue.get("severity") != "ERROR":
                continue
            message_id = issue.get("messageId")
            issues.setdefault(message_id, issue)
            known = by_message.get(message_id)
            if known is None or (issue.get("sku") and issue.get("sku") != known["sku"]):
                notes.append(
                    {
                        "feed_id": feed_id,
                        "sku": str(issue.get("sku") or "")[:64] or None,
                        "message_id": message_id,
                        "code": str(issue.get("code") or "UNKNOWN")[:64],
                        "message": str(issue.get("message") or "")[:500],
                    }
                )
        results = []
        for item in items:
            issue = issues.get(item["submission"].get("message_id"))
            sent = item["submission"].get("sent") or {"sku": item["sku"]}
            if issue is not None and (not issue.get("sku") or issue.get("sku") == item["sku"]):
                code, message = _issue(issue)
                results.append(ListingResult("rejected", error_code=code, error_message=message))
            else:
                results.append(ListingResult("accepted", answer=_answer(item["sku"], sent)))
        return results

    def _feed_report(self, feed_id):
        """The processing report of a finished feed (cached), None while it is processed."""
        with _REPORTS_LOCK:
            if feed_id in _REPORTS:
                return _REPORTS[feed_id]
        feed = self._call("getFeed", "GET", f"/feeds/2021-06-30/feeds/{quote(feed_id, safe='')}")
        status = (feed or {}).get("processingStatus")
        if status in ("IN_QUEUE", "IN_PROGRESS"):
            return None
        if status != "DONE":
            raise MarketplaceRejection(
                f"Amazon did not process the feed {feed_id}: {status}.", code=f"FEED_{status}"
            )
        document_id = feed.get("resultFeedDocumentId")
        document = self._call(
            "getFeedDocument",
            "GET",
            f"/feeds/2021-06-30/documents/{quote(str(document_id), safe='')}",
        )
        if not isinstance(document, dict) or not document.get("url"):
            raise MarketplaceUnavailable(
                "Amazon's getFeedDocument answer has no url.", code="INVALID_RESPONSE"
            )
        if document.get("compressionAlgorithm") == "GZIP":
            raise MarketplaceUnavailable(
                "A compressed processing report is not read yet.", code="INVALID_RESPONSE"
            )
        status, report, _ = self._exchange("GET", document["url"])
        if status != 200 or not isinstance(report, dict) or "summary" not in report:
            raise MarketplaceUnavailable(
                "The feed's processing report is not a report.", code="INVALID_RESPONSE"
            )
        with _REPORTS_LOCK:
            _REPORTS[feed_id] = report
            while len(_REPORTS) > 64:
                _REPORTS.pop(next(iter(_REPORTS)))
        return report

    def push_product(
        self, product: dict[str, Any], idempotency_key: str | None = None
    ) -> dict[str, Any]:
        """A synchronous push (a manual sync, a price applied): the patch, then Amazon's
        listing read until it shows the values (within the call's deadline);
        unavailable (``NOT_CONFIRMED``) when Amazon has not applied it yet."""
        result = self._patch(product)
        if result.status == "rejected":
            raise MarketplaceRejection(result.error_message or "", code=result.error_code)
        if result.status == "accepted":
            return result.answer
        sent = result.submission["sent"]
        for attempt in range(4):
            check = self._check_patch(sent)
            if check.status == "accepted":
                return check.answer
            if check.status == "rejected":
                raise MarketplaceRejection(check.error_message or "", code=check.error_code)
            if attempt < 3:
                time.sleep(0.25 * (attempt + 1))
        raise MarketplaceUnavailable(
            "Amazon accepted the change for processing but does not show it yet.",
            code="NOT_CONFIRMED",
            details={"submission_id": result.submission["id"]},
            retry_after=30,
        )

    # orders -----------------------------------------------------------------------------

    def fetch_orders(self, cursor: str | None) -> OrderPage:
        state = {}
        if cursor:
            try:
                state = json.loads(cursor)
            except ValueError:
                state = {}
        after = state.get("after") or amazon_time(
            datetime.now(UTC) - timedelta(days=ORDERS_LOOKBACK_DAYS)
        )
        params = {"MarketplaceIds": [self.marketplace_id]}
        if state.get("next"):
            params["NextToken"] = state["next"]
        else:
            params["LastUpdatedAfter"] = after
            params["MaxResultsPerPage"] = 100
        answer = self._call("getOrders", "GET", "/orders/v0/orders", params=params)
        payload = (answer or {}).get("payload")
        if not isinstance(payload, dict) or not isinstance(payload.get("Orders"), list):
            raise MarketplaceUnavailable("getOrders answered no Orders.", code="INVALID_RESPONSE")
        orders, errors = [], []
        newest = state.get("newest") or after
        for order in payload["Orders"]:
            mapped, problem = self._order(order)
            updated = order.get("LastUpdateDate")
            if isinstance(updated, str) and updated > newest:
                newest = updated
            if problem is not None:
                errors.append(problem)
            else:
                orders.append(mapped)
        next_token = payload.get("NextToken")
        if next_token:
            state = {"after": after, "next": next_token, "newest": newest}
        else:
            state = {"after": newest}
        return OrderPage(
            orders=orders,
            cursor=json.dumps(state, separators=(",", ":")),
            has_more=bool(next_token),
            errors=errors,
        )

    def _order(self, order):
        """One Amazon order (with its items) in the import shape, or (None, a problem)."""
        order_id = str(order.get("AmazonOrderId") or "")

        def problem(code, message):
            return None, {"external_order_id": order_id, "code": code, "message": message}

        items, token = [], None
        for _ in range(20):
            answer = self._call(
                "getOrderItems",
                "GET",
                f"/orders/v0/orders/{quote(order_id, safe='')}/orderItems",
                params={"NextToken": token} if token else None,
            )
            payload = (answer or {}).get("payload") or {}
            items.extend(payload.get("OrderItems") or [])
            token = payload.get("NextToken")
            if not token:
                break
        total = order.get("OrderTotal") or {}
        currency = total.get("CurrencyCode")
        lines = []
        for item in items:
            quantity = item.get("QuantityOrdered")
            if not isinstance(quantity, int) or quantity < 1:
                continue  # a line cancelled to nothing
            sku = item.get("SellerSKU")
            if not sku:
                return problem("UNKNOWN_SKU", f"Order item {item.get('OrderItemId')} has no SKU.")
            line = {
                "external_line_item_id": str(item.get("OrderItemId"))[:200],
                "sku": sku,
                "quantity": quantity,
            }
            if item.get("Title"):
                line["title"] = str(item["Title"])[:500]
            price = item.get("ItemPrice")
            if isinstance(price, dict) and price.get("Amount") is not None:
                amount = _money(price.get("Amount"))
                if amount is None:
                    return problem("INVALID_AMOUNT", f"ItemPrice {price.get('Amount')!r}.")
                if currency and price.get("CurrencyCode") not in (None, currency):
                    return problem(
                        "MIXED_CURRENCIES",
                        f"Item {sku} is in {price.get('CurrencyCode')}, the order in {currency}.",
                    )
                currency = currency or price.get("CurrencyCode")
                line["line_total"] = amount
            lines.append(line)
        if not lines:
            return problem("NO_LINES", "The order has no items with a quantity.")
        mapped = {
            "external_order_id": order_id,
            "status": ORDER_STATUSES.get(order.get("OrderStatus"), "pending"),
            "fulfillment_method": "FBA" if order.get("FulfillmentChannel") == "AFN" else "FBM",
            "created_at": order.get("PurchaseDate"),
            "line_items": lines,
        }
        if currency:
            mapped["currency"] = currency
        if total.get("Amount") is not None:
            amount = _money(total["Amount"])
            if amount is None:
                return problem("INVALID_AMOUNT", f"OrderTotal {total['Amount']!r}.")
            mapped["total_amount"] = amount
        if mapped["fulfillment_method"] == "FBM" and mapped["status"] in ("pending", "confirmed"):
            address = self._address(order_id)
            if address:
                mapped["shipping_address"] = address
        return mapped, None

    def _address(self, order_id):
        """The shipping address, where Amazon gives it without a restricted data token."""
        answer = self._call(
            "getOrderAddress", "GET", f"/orders/v0/orders/{quote(order_id, safe='')}/address"
        )
        address = ((answer or {}).get("payload") or {}).get("ShippingAddress")
        if not isinstance(address, dict) or not address.get("AddressLine1"):
            return None
        country = str(address.get("CountryCode") or "")
        return {
            "name": str(address.get("Name") or "")[:200] or None,
            "line1": str(address["AddressLine1"])[:200],
            "line2": str(address.get("AddressLine2") or "")[:200] or None,
            "city": str(address.get("City") or "")[:100] or None,
            "region": str(address.get("StateOrRegion") or "")[:100] or None,
            "postal_code": str(address.get("PostalCode") or "")[:20] or None,
            "country": country if len(country) == 2 else None,
        }

    def confirm_shipment(self, order: dict[str, Any], shipment: dict[str, Any]) -> dict[str, Any]:
        lines = [
            {"orderItemId": str(line["external_line_item_id"]), "quantity": int(line["quantity"])}
            for line in shipment["line_items"]
        ]
        key = shipment.get("idempotency_key") or order["id"]
        body = {
            "marketplaceId": self.marketplace_id,
            "packageDetail": {
                "packageReferenceId": hashlib.sha256(key.encode()).hexdigest()[:16],
                "carrierCode": shipment["carrier"],
                "trackingNumber": shipment["tracking_number"],
                "shipDate": shipment["shipped_date"],
                "orderItems": lines,
            },
        }
        self._call(
            "confirmShipment",
            "POST",
            f"/orders/v0/orders/{quote(order['external_order_id'], safe='')}/shipmentConfirmation",
            body=body,
            accept=(204,),
        )
        return {"confirmation_id": body["packageDetail"]["packageReferenceId"]}

    def request_cancellation(self, order: dict[str, Any], reason: str) -> dict[str, Any]:
        raise MarketplaceRejection(
            "Amazon's published Orders API has no request by which a seller asks to cancel an "
            "order; cancel it in Seller Central (the next order pull brings the cancellation).",
            code="CANCELLATION_NOT_SUPPORTED",
        )

    # stock, offers, reviews ---------------------------------------------------------------

    def fetch_inventory(self) -> list[dict[str, Any]]:
        items, token = [], None
        for _ in range(200):
            params = {
                "details": "true",
                "granularityType": "Marketplace",
                "granularityId": self.marketplace_id,
                "marketplaceIds": [self.marketplace_id],
            }
            if token:
                params["nextToken"] = token
            answer = self._call(
                "getInventorySummaries", "GET", "/fba/inventory/v1/summaries", params=params
            )
            payload = (answer or {}).get("payload") or {}
            for summary in payload.get("inventorySummaries") or []:
                sku = summary.get("sellerSku")
                details = summary.get("inventoryDetails") or {}
                quantity = details.get("fulfillableQuantity")
                if quantity is None:
                    quantity = summary.get("totalQuantity")
                if sku and isinstance(quantity, int):
                    items.append({"sku": sku, "on_hand": quantity, "warehouse_type": "FBA"})
            token = ((answer or {}).get("pagination") or {}).get("nextToken")
            if not token:
                break
        return items

    def fetch_competitor_prices(self, skus: Sequence[str]) -> list[dict[str, Any]]:
        skus = list(skus)
        records = []
        observed = datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")
        for start in range(0, len(skus), OFFERS_BATCH):
            chunk = skus[start : start + OFFERS_BATCH]
            answer = self._call(
                "getListingOffersBatch",
                "POST",
                "/batches/products/pricing/v0/listingOffers",
                body={
                    "requests": [
                        {
                            "uri": f"/products/pricing/v0/listings/{quote(sku, safe='')}/offers",
                            "method": "GET",
                            "MarketplaceId": self.marketplace_id,
                            "ItemCondition": "New",
                        }
                        for sku in chunk
                    ]
                },
            )
            for sku, response in zip(chunk, (answer or {}).get("responses") or [], strict=False):
                payload = ((response or {}).get("body") or {}).get("payload") or {}
                for offer in payload.get("Offers") or []:
                    if offer.get("MyOffer"):
                        continue
                    price = (offer.get("ListingPrice") or {}).get("Amount")
                    shipping = (offer.get("Shipping") or {}).get("Amount") or 0
                    records.append(
                        {
                            "sku": sku,
                            "competitor": str(offer.get("SellerId") or "unknown")[:200],
                            "price": price,
                            "shipping": shipping,
                            "currency": (offer.get("ListingPrice") or {}).get("CurrencyCode"),
                            "is_buy_box_winner": bool(offer.get("IsBuyBoxWinner")),
                            "condition": "new",
                            "observed_at": observed,
                        }
                    )
        return normalize_offers(records, skus, self.connection.marketplace)

    def fetch_reviews(self, skus: Sequence[str], since: datetime | None) -> list[dict[str, Any]]:
        raise MarketplaceRejection(
            "The Selling Partner API gives no access to product reviews.",
            code="REVIEWS_NOT_SUPPORTED",
        )

    def check(self) -> dict[str, Any]:
        """One cheap authenticated call: a token, then the seller's first FBA summary."""
        self.access_token()
        self._call(
            "getInventorySummaries",
            "GET",
            "/fba/inventory/v1/summaries",
            params={
                "granularityType": "Marketplace",
                "granularityId": self.marketplace_id,
                "marketplaceIds": [self.marketplace_id],
            },
        )
        return {"ok": True, "detail": "Login with Amazon and the Selling Partner API answered."}


_REPORTS_LOCK = threading.Lock()
_REPORTS = {}  # feed id -> processing report (a small per-process cache)


def _shown(item, marketplace_id):
    """What Amazon's listing shows: {asin, quantity, price, currency}."""
    shown = {"asin": None, "quantity": None, "price": None, "currency": None}
    for summary in item.get("summaries") or []:
        if summary.get("marketplaceId") == marketplace_id:
            shown["asin"] = summary.get("asin")
    for availability in item.get("fulfillmentAvailability") or []:
        if availability.get("fulfillmentChannelCode") == "DEFAULT":
            shown["quantity"] = availability.get("quantity")
    for offer in item.get("offers") or []:
        if offer.get("marketplaceId") == marketplace_id and offer.get("offerType") == "B2C":
            price = offer.get("price") or {}
            shown["price"] = _money(price.get("amount"))
            shown["currency"] = price.get("currencyCode")
    return shown


def _matches(sent, shown):
    if sent.get("quantity") is not None and shown["quantity"] != sent["quantity"]:
        return False
    if sent.get("price") is not None and sent.get("currency"):
        if shown["price"] is None or _money(sent["price"]) != shown["price"]:
            return False
        if shown["currency"] != sent["currency"]:
            return False
    return True


def _answer(sku, sent, shown=None):
    """The listing answer (``check_listing``'s shape) for a confirmed value."""
    shown = shown or {}
    return {
        "external_id": str(shown.get("asin") or sku)[:200],
        "status": sent.get("status") or "active",
        "price": sent.get("price"),
        "currency": sent.get("currency"),
        "quantity": sent.get("quantity"),
    }


def _issue(issue):
    code = str(issue.get("code") or "INVALID")[:64]
    message = str(issue.get("message") or "Amazon refused the listing.")[:500]
    return code, message


def _money(value):
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


def _read(response):
    chunks, size = [], 0
    for chunk in response.iter_content(65536):
        size += len(chunk)
        if size > MAX_RESPONSE_BYTES:
            raise MarketplaceUnavailable("Amazon's answer is too large.", code="INVALID_RESPONSE")
        chunks.append(chunk)
    return b"".join(chunks)


def _no_constant(name):
    raise ValueError(f"{name} is not JSON")


def _unavailable(exc, allow_private):
    if isinstance(exc, netguard.AddressNotAllowed):
        return MarketplaceUnavailable(str(exc), code="TARGET_NOT_ALLOWED")
    if isinstance(exc, netguard.HostNotResolved):
        code = "CONNECTION_FAILED" if allow_private else "TARGET_NOT_ALLOWED"
        return MarketplaceUnavailable(str(exc), code=code)
    if isinstance(exc, requests.Timeout):
        return MarketplaceUnavailable("Amazon did not answer in time.", code="TIMEOUT")
    if isinstance(exc, requests.RequestException):
        return MarketplaceUnavailable(
            "The connection to Amazon failed.",
            code="CONNECTION_FAILED",
            details={"error": str(exc)[:300]},
        )
    raise exc
