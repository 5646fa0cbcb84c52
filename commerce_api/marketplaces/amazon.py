"""The ``amazon`` connector: Amazon's Selling Partner API (DESIGN 13, docs/connector-amazon.md).

- **Login with Amazon, usage plans, errors**: ``amazon_client.AmazonClient``.
- **Listings**: a few pending listings go one ``patchListingsItem`` each (quantity as
  ``fulfillment_availability``, price as ``purchasable_offer``); more as one
  ``JSON_LISTINGS_FEED`` (createFeedDocument, upload, createFeed). Both are accepted for
  processing only: the listing is ``submitted`` and ``check_submissions`` reads the
  result later (``getListingsItem`` until it shows the values; ``getFeed`` until done,
  then the processing report per message).
- **Orders, shipments, FBA stock, competitor offers, cancellation**:
  ``amazon_orders.AmazonOrders``.
"""

import json
import threading
import time
from collections.abc import Sequence
from typing import Any
from urllib.parse import quote

from .amazon_client import TOKENS, USAGE_PLANS, AmazonClient, budget_plan, money_amount
from .amazon_orders import AmazonOrders
from .base import (
    ListingResult,
    MarketplaceRejection,
    MarketplaceUnavailable,
    SubmissionCheck,
    push_each,
)

__all__ = ["TOKENS", "USAGE_PLANS", "AmazonClient", "AmazonConnector", "budget_plan"]

PATCH_AT_MOST = 5  # more listings than this at once go as a feed
FEED_AT_MOST = 10_000  # listings per JSON_LISTINGS_FEED (the schema allows 25,000)
FEED_CONTENT_TYPE = "application/json; charset=UTF-8"
PRODUCT_TYPE = "PRODUCT"  # offer-only changes of an existing listing
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


class AmazonConnector(AmazonOrders):
    name = "amazon"
    batch_size = FEED_AT_MOST

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
            return push_each(items, lambda item: self._patch(item["payload"]))
        return self._feed(items)

    def _feed(self, items):
        messages, sent = self._feed_messages(items)
        results = [None] * len(items)
        for index, item in enumerate(items):
            if not self._patches(item["payload"]):
                results[index] = ListingResult(
                    "accepted", answer=_answer(sent[index]["sku"], sent[index])
                )
        if not messages:
            return results
        feed_id = self._submit_feed(messages)
        for index in range(len(items)):
            if results[index] is None:
                results[index] = ListingResult(
                    "submitted",
                    submission={
                        "kind": "feed",
                        "id": feed_id,
                        "message_id": index + 1,
                        "messages": len(items),
                        # processed minutes later, in no documented order with patches:
                        # it may land after a newer write (batches: superseded writes)
                        "unordered": True,
                        "sent": sent[index],
                    },
                )
        return results

    def _feed_messages(self, items):
        """The feed's PATCH messages (numbered by the item's place, for the items with
        patches) and what is sent for each item."""
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
        return messages, sent

    def _submit_feed(self, messages):
        """Create a feed document, upload the messages into it and create the feed;
        returns the feed's id."""
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
        return feed_id

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
        # the feed's other messages (listings not read in this check) are not news
        sent = max((item["submission"].get("messages") or 0) for item in items)
        for issue in report.get("issues") or []:
            if not isinstance(issue, dict) or issue.get("severity") != "ERROR":
                continue
            message_id = issue.get("messageId")
            issues.setdefault(message_id, issue)
            known = by_message.get(message_id)
            ours = isinstance(message_id, int) and 0 < message_id <= sent
            if (known is None and not ours) or (
                known is not None and issue.get("sku") and issue.get("sku") != known["sku"]
            ):
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
            shown["price"] = money_amount(price.get("amount"))
            shown["currency"] = price.get("currencyCode")
    return shown


def _matches(sent, shown):
    if sent.get("quantity") is not None and shown["quantity"] != sent["quantity"]:
        return False
    if sent.get("price") is not None and sent.get("currency"):
        if shown["price"] is None or money_amount(sent["price"]) != shown["price"]:
            return False
        if shown["currency"] != sent["currency"]:
            return False
    return True


def _answer(sku, sent, shown=None):
    """The listing answer (``check_listing``'s shape) for a confirmed value: what was sent,
    and what Amazon shows where nothing was sent (a price the service never set)."""
    shown = shown or {}
    price, currency = sent.get("price"), sent.get("currency")
    if price is None and shown.get("price") is not None:
        price, currency = shown["price"], shown.get("currency")
    return {
        "external_id": str(shown.get("asin") or sku)[:200],
        "status": sent.get("status") or "active",
        "price": price,
        "currency": currency,
        "quantity": sent.get("quantity"),
    }


def _issue(issue):
    code = str(issue.get("code") or "INVALID")[:64]
    message = str(issue.get("message") or "Amazon refused the listing.")[:500]
    return code, message
