"""The ``amazon`` connector's orders, shipments, FBA stock and competitor offers.

Orders: ``getOrders`` by ``LastUpdatedAfter`` (the first pull looks back
``ORDERS_LOOKBACK_DAYS``), following ``NextToken``; each order's ``getOrderItems`` and,
for a merchant-fulfilled open order, ``getOrderAddress`` (the address as far as Amazon
gives it without a restricted data token), mapped to the import shape: FBA (``AFN``) or
FBM, money as exact decimals (``ItemPrice`` is the line's total), Amazon's timestamps. An
order that cannot be mapped is reported on the page (``OrderPage.errors``), never
dropped silently. Shipments: ``confirmShipment``. FBA stock: ``getInventorySummaries``.
Competitor offers: ``getListingOffersBatch`` (20 SKUs a call). Cancellation: the
published models define no seller-initiated cancellation request, so it is refused with
``CANCELLATION_NOT_SUPPORTED`` (never a fake success). Reviews: not in SP-API.
"""

import hashlib
import json
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from typing import Any
from urllib.parse import quote

from .amazon_client import AmazonClient, amazon_time, money_amount
from .base import MarketplaceRejection, MarketplaceUnavailable, OrderPage
from .offers import normalize_offers

ORDERS_LOOKBACK_DAYS = 30  # the first order pull looks this far back
OFFERS_BATCH = 20  # getListingOffersBatch takes 20 requests at most
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


class _OrderProblem(Exception):
    """Why an Amazon order cannot be mapped to the import shape."""

    def __init__(self, code, message):
        super().__init__(message)
        self.code = code
        self.message = message


def _order_lines(items, currency):
    """The import shape's lines of the items with a quantity, and the order's currency
    (the order's, else the first priced item's); ``_OrderProblem`` when one cannot be
    mapped."""
    lines = []
    for item in items:
        quantity = item.get("QuantityOrdered")
        if not isinstance(quantity, int) or quantity < 1:
            continue  # a line cancelled to nothing
        sku = item.get("SellerSKU")
        if not sku:
            raise _OrderProblem("UNKNOWN_SKU", f"Order item {item.get('OrderItemId')} has no SKU.")
        line = {
            "external_line_item_id": str(item.get("OrderItemId"))[:200],
            "sku": sku,
            "quantity": quantity,
        }
        if item.get("Title"):
            line["title"] = str(item["Title"])[:500]
        price = item.get("ItemPrice")
        if isinstance(price, dict) and price.get("Amount") is not None:
            amount = money_amount(price.get("Amount"))
            if amount is None:
                raise _OrderProblem("INVALID_AMOUNT", f"ItemPrice {price.get('Amount')!r}.")
            if currency and price.get("CurrencyCode") not in (None, currency):
                raise _OrderProblem(
                    "MIXED_CURRENCIES",
                    f"Item {sku} is in {price.get('CurrencyCode')}, the order in {currency}.",
                )
            currency = currency or price.get("CurrencyCode")
            line["line_total"] = amount
        lines.append(line)
    if not lines:
        raise _OrderProblem("NO_LINES", "The order has no items with a quantity.")
    return lines, currency


class AmazonOrders(AmazonClient):
    """Orders, shipments, stock and offers (the listings: ``amazon.AmazonConnector``)."""

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
        try:
            return self._mapped_order(order_id, order), None
        except _OrderProblem as problem:
            return None, {
                "external_order_id": order_id,
                "code": problem.code,
                "message": problem.message,
            }

    def _mapped_order(self, order_id, order):
        """The order in the import shape; ``_OrderProblem`` when it cannot be mapped."""
        total = order.get("OrderTotal") or {}
        lines, currency = _order_lines(self._order_items(order_id), total.get("CurrencyCode"))
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
            amount = money_amount(total["Amount"])
            if amount is None:
                raise _OrderProblem("INVALID_AMOUNT", f"OrderTotal {total['Amount']!r}.")
            mapped["total_amount"] = amount
        if mapped["fulfillment_method"] == "FBM" and mapped["status"] in ("pending", "confirmed"):
            address = self._address(order_id)
            if address:
                mapped["shipping_address"] = address
        return mapped

    def _order_items(self, order_id):
        """The order's items, following ``NextToken`` (20 pages at most)."""
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
        return items

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
