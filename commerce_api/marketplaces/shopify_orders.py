"""The ``shopify`` connector's orders, shipments, cancellations, notifications and check.

Orders: ``orders(query: "updated_at:>=...", sortKey: UPDATED_AT)`` with cursors (the first
pull looks back ``ORDERS_LOOKBACK_DAYS``), each with its line items (more than a page:
read on through the order's ``lineItems`` cursor) and shipping address, mapped to the
import shape with the money exact (Shopify's decimal strings). An order that cannot be
mapped is reported on the page (``OrderPage.errors``), never dropped silently; the order
gid is its ``external_order_id``. ``fetch_order`` reads one order by that gid (the pull a
notification queues).

Shipment: ``fulfillmentCreate`` on the order's open fulfillment orders, with the lines
and quantities of the shipment and its tracking. Cancellation: ``orderCancel`` (refunded
and restocked; Shopify cancels in a job, so an accepted request is ``approved``).
Notifications: ``X-Shopify-Hmac-Sha256`` checked in constant time over the raw body.
"""

import base64
import hashlib
import hmac
import json
import threading
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime, timedelta
from decimal import Decimal, InvalidOperation
from typing import Any

from .base import MarketplaceRejection, MarketplaceUnavailable, Notification, OrderPage
from .shopify_client import ShopifyClient

ORDERS_LOOKBACK_DAYS = 30
ORDERS_PER_PAGE = 2  # each order with up to LINES_PER_PAGE lines: ~37 points
LINES_PER_PAGE = 10
# one notified order is read with its first 5 lines (22 points instead of 37: with its
# listing's quantity push, 33 points an order against the bucket's 50 a second); the
# rest, if any, page in with MORE_LINES
ORDER_LINES = 5
ORDER_TOPICS = ("orders/create", "orders/updated", "orders/cancelled")
CANCEL_REASONS = {
    "customer_request": "CUSTOMER",
    "out_of_stock": "INVENTORY",
    "fraud_suspected": "FRAUD",
    "pricing_error": "OTHER",
    "other": "OTHER",
}

_ORDER_FIELDS = """id name createdAt updatedAt cancelledAt currencyCode
      displayFinancialStatus displayFulfillmentStatus
      totalPriceSet { shopMoney { amount currencyCode } }
      shippingAddress { name address1 address2 city provinceCode zip countryCodeV2 }
      lineItems(first: LINES) {
        pageInfo { hasNextPage endCursor }
        nodes { id sku name quantity originalTotalSet { shopMoney { amount currencyCode } } }
      }"""
ORDERS = """query Orders($first: Int!, $after: String, $query: String!) {
  orders(first: $first, after: $after, query: $query, sortKey: UPDATED_AT) {
    pageInfo { hasNextPage endCursor }
    nodes { FIELDS }
  }
}""".replace("FIELDS", _ORDER_FIELDS.replace("LINES", str(LINES_PER_PAGE)))
ORDER = """query Order($id: ID!) { order(id: $id) { FIELDS } }""".replace(
    "FIELDS", _ORDER_FIELDS.replace("LINES", str(ORDER_LINES))
)
MORE_LINES = """query OrderLines($id: ID!, $after: String) {
  order(id: $id) {
    lineItems(first: LINES, after: $after) {
      pageInfo { hasNextPage endCursor }
      nodes { id sku name quantity originalTotalSet { shopMoney { amount currencyCode } } }
    }
  }
}""".replace("LINES", str(LINES_PER_PAGE))
ORDER_COST = 1 + 2 + 1 + (3 + LINES_PER_PAGE * 3)  # one order of a page
ONE_ORDER_COST = 1 + 2 + 1 + (3 + ORDER_LINES * 3)
FULFILLMENT_ORDERS = """query FulfillmentOrders($id: ID!) {
  order(id: $id) {
    id
    fulfillmentOrders(first: 3) {
      nodes {
        id status
        lineItems(first: 10) { nodes { id remainingQuantity lineItem { id } } }
      }
    }
  }
}"""
FULFILL = """mutation Fulfill($fulfillment: FulfillmentInput!) {
  fulfillmentCreate(fulfillment: $fulfillment) {
    fulfillment { id status }
    userErrors { field message }
  }
}"""
CANCEL = """mutation Cancel($orderId: ID!, $reason: OrderCancelReason!, $staffNote: String) {
  orderCancel(orderId: $orderId, reason: $reason, refund: true, restock: true,
              notifyCustomer: false, staffNote: $staffNote) {
    job { id }
    orderCancelUserErrors { code field message }
  }
}"""
SHOP = """query Shop { shop { name currencyCode } }"""
LOCATIONS = """query Locations($first: Int!) {
  shop { name currencyCode }
  locations(first: $first) { nodes { id name isActive } }
}"""

_CURRENCIES_LOCK = threading.Lock()
_CURRENCIES = {}  # connection id -> the shop's currency (a small per-process cache)


class ShopifyOrders(ShopifyClient):
    """Orders, shipments, cancellations, notifications (the listings: ``shopify``)."""

    def shop_currency(self) -> str:
        with _CURRENCIES_LOCK:
            known = _CURRENCIES.get(self.connection.id)
        if known:
            return known
        shop = self.graphql("shop", SHOP, {}, 1).get("shop") or {}
        currency = shop.get("currencyCode")
        if not isinstance(currency, str) or len(currency) != 3:
            raise MarketplaceUnavailable("Shopify's shop has no currency.", code="INVALID_RESPONSE")
        with _CURRENCIES_LOCK:
            _CURRENCIES[self.connection.id] = currency
        return currency

    # orders -----------------------------------------------------------------------------

    def fetch_orders(self, cursor: str | None) -> OrderPage:
        state = {}
        if cursor:
            try:
                state = json.loads(cursor)
            except ValueError:
                state = {}
        since = state.get("since") or _iso(datetime.now(UTC) - timedelta(days=ORDERS_LOOKBACK_DAYS))
        data = self.graphql(
            "orders",
            ORDERS,
            {
                "first": ORDERS_PER_PAGE,
                "after": state.get("page"),
                "query": f"updated_at:>='{since}'",
            },
            3 + ORDERS_PER_PAGE * ORDER_COST,
        )
        page = data.get("orders")
        if not isinstance(page, dict) or not isinstance(page.get("nodes"), list):
            raise MarketplaceUnavailable(
                "Shopify's orders answer has no nodes.", code="INVALID_RESPONSE"
            )
        orders, errors = [], []
        newest = state.get("newest") or since
        for node in page["nodes"]:
            mapped, problem = self._order(node)
            updated = node.get("updatedAt") if isinstance(node, dict) else None
            if isinstance(updated, str) and updated > newest:
                newest = updated
            if problem is not None:
                errors.append(problem)
            else:
                orders.append(mapped)
        info = page.get("pageInfo") or {}
        more = bool(info.get("hasNextPage") and info.get("endCursor"))
        if more:
            state = {"since": since, "page": info["endCursor"], "newest": newest}
        else:
            state = {"since": newest}
        return OrderPage(
            orders=orders,
            cursor=json.dumps(state, separators=(",", ":")),
            has_more=more,
            errors=errors,
        )

    def fetch_order(self, external_id: str) -> dict[str, Any] | None:
        """One order by its gid in the import shape; None when the shop has no such order."""
        if not isinstance(external_id, str) or not external_id.startswith("gid://shopify/Order/"):
            return None
        node = self.graphql("order", ORDER, {"id": external_id}, ONE_ORDER_COST).get("order")
        if node is None:
            return None
        mapped, problem = self._order(node)
        if problem is not None:
            raise MarketplaceRejection(problem["message"], code=problem["code"])
        return mapped

    def _order(self, node):
        """One Shopify order in the import shape, or (None, a problem)."""
        order_id = str((node or {}).get("id") or "") if isinstance(node, dict) else ""

        def problem(code, message):
            return None, {"external_order_id": order_id, "code": code, "message": message}

        if not order_id:
            return problem("INVALID_ORDER", "An order without an id.")
        currency = node.get("currencyCode")
        lines = []
        for item in self._lines(node):
            quantity = item.get("quantity")
            if not isinstance(quantity, int) or quantity < 1:
                continue
            sku = item.get("sku")
            if not sku:
                return problem("UNKNOWN_SKU", f"Line item {item.get('id')} has no SKU.")
            line = {
                "external_line_item_id": str(item.get("id"))[:200],
                "sku": str(sku)[:64],
                "quantity": quantity,
            }
            if item.get("name"):
                line["title"] = str(item["name"])[:500]
            money = ((item.get("originalTotalSet") or {}).get("shopMoney")) or {}
            if money.get("amount") is not None:
                amount = _amount(money.get("amount"))
                if amount is None:
                    return problem("INVALID_AMOUNT", f"Line total {money.get('amount')!r}.")
                if money.get("currencyCode") not in (None, currency):
                    return problem(
                        "MIXED_CURRENCIES",
                        f"Line {sku} is in {money.get('currencyCode')}, the order in {currency}.",
                    )
                line["line_total"] = amount
            lines.append(line)
        if not lines:
            return problem("NO_LINES", "The order has no line items with a quantity.")
        mapped = {
            "external_order_id": order_id[:200],
            "status": _status(node),
            "fulfillment_method": "FBM",
            "created_at": node.get("createdAt"),
            "line_items": lines,
        }
        if currency:
            mapped["currency"] = currency
        total = ((node.get("totalPriceSet") or {}).get("shopMoney")) or {}
        if total.get("amount") is not None:
            amount = _amount(total["amount"])
            if amount is None:
                return problem("INVALID_AMOUNT", f"Order total {total['amount']!r}.")
            mapped["total_amount"] = amount
        address = _address(node.get("shippingAddress"))
        if address:
            mapped["shipping_address"] = address
        return mapped, None

    def _lines(self, node):
        connection = node.get("lineItems") or {}
        lines = list(connection.get("nodes") or [])
        info = connection.get("pageInfo") or {}
        for _ in range(50):
            if not info.get("hasNextPage") or not info.get("endCursor"):
                break
            data = self.graphql(
                "orderLines",
                MORE_LINES,
                {"id": node["id"], "after": info["endCursor"]},
                3 + 3 * LINES_PER_PAGE + 1,
            )
            connection = (data.get("order") or {}).get("lineItems") or {}
            lines.extend(connection.get("nodes") or [])
            info = connection.get("pageInfo") or {}
        return [line for line in lines if isinstance(line, dict)]

    # shipments and cancellations --------------------------------------------------------

    def confirm_shipment(self, order: dict[str, Any], shipment: dict[str, Any]) -> dict[str, Any]:
        order_id = order["external_order_id"]
        data = self.graphql("fulfillmentOrders", FULFILLMENT_ORDERS, {"id": order_id}, 75)
        found = data.get("order")
        if not found:
            raise MarketplaceRejection(f"Shopify has no order {order_id}.", code="ORDER_NOT_FOUND")
        wanted = {
            str(line["external_line_item_id"]): int(line["quantity"])
            for line in shipment["line_items"]
        }
        groups, remaining_any = [], False
        for fulfillment_order in (found.get("fulfillmentOrders") or {}).get("nodes") or []:
            if fulfillment_order.get("status") not in ("OPEN", "IN_PROGRESS"):
                continue
            lines = []
            for item in (fulfillment_order.get("lineItems") or {}).get("nodes") or []:
                line_id = (item.get("lineItem") or {}).get("id")
                left = item.get("remainingQuantity") or 0
                if line_id in wanted and wanted[line_id] > 0 and left > 0:
                    take = min(left, wanted[line_id])
                    wanted[line_id] -= take
                    lines.append({"id": item["id"], "quantity": take})
                    remaining_any = True
            if lines:
                groups.append(
                    {
                        "fulfillmentOrderId": fulfillment_order["id"],
                        "fulfillmentOrderLineItems": lines,
                    }
                )
        if not remaining_any:
            # nothing left to fulfil: a retried confirmation that Shopify took already
            return {"confirmation_id": f"{order_id}:fulfilled"}
        data = self.graphql(
            "fulfillmentCreate",
            FULFILL,
            {
                "fulfillment": {
                    "lineItemsByFulfillmentOrder": groups,
                    "notifyCustomer": False,
                    "trackingInfo": {
                        "company": shipment["carrier"],
                        "number": shipment["tracking_number"],
                    },
                }
            },
            12,
        )
        answer = data.get("fulfillmentCreate") or {}
        errors = answer.get("userErrors") or []
        if errors:
            raise MarketplaceRejection(
                "; ".join(str(e.get("message")) for e in errors)[:500], code="FULFILLMENT_REFUSED"
            )
        fulfillment = answer.get("fulfillment") or {}
        if not fulfillment.get("id"):
            raise MarketplaceUnavailable(
                "Shopify's fulfillmentCreate answer has no fulfillment.", code="INVALID_RESPONSE"
            )
        return {"confirmation_id": str(fulfillment["id"])[:200]}

    def request_cancellation(self, order: dict[str, Any], reason: str) -> dict[str, Any]:
        data = self.graphql(
            "orderCancel",
            CANCEL,
            {
                "orderId": order["external_order_id"],
                "reason": CANCEL_REASONS.get(reason, "OTHER"),
                "staffNote": f"Cancelled through commerce-api ({reason}).",
            },
            12,
        )
        answer = data.get("orderCancel") or {}
        errors = answer.get("orderCancelUserErrors") or []
        if errors:
            message = "; ".join(str(e.get("message")) for e in errors)[:500]
            return {"status": "rejected", "message": message}
        return {"status": "approved", "message": "Shopify is cancelling the order."}

    # stock, offers, reviews -------------------------------------------------------------

    def fetch_inventory(self) -> list[dict[str, Any]]:
        return []  # Shopify holds no stock of its own for the seller (no FBA/FBS)

    def fetch_competitor_prices(self, skus: Sequence[str]) -> list[dict[str, Any]]:
        raise MarketplaceRejection(
            "A Shopify store is the seller's own: it has no competitor offers.",
            code="OFFERS_NOT_SUPPORTED",
        )

    def fetch_reviews(self, skus: Sequence[str], since: datetime | None) -> list[dict[str, Any]]:
        raise MarketplaceRejection(
            "The Admin API gives no access to product reviews (review apps keep them).",
            code="REVIEWS_NOT_SUPPORTED",
        )

    # the shop ---------------------------------------------------------------------------

    def shop_locations(self) -> dict[str, str]:
        """{location gid: name} of the shop's active locations."""
        data = self.graphql("locations", LOCATIONS, {"first": 50}, 2 + 50 + 1)
        nodes = (data.get("locations") or {}).get("nodes") or []
        return {
            node["id"]: str(node.get("name") or "")
            for node in nodes
            if isinstance(node, dict) and node.get("id") and node.get("isActive", True)
        }

    def check(self) -> dict[str, Any]:
        """The shop answers the token, and every mapped location is one of the shop's."""
        known = self.shop_locations()
        unknown = sorted({gid for gid in self.locations.values() if gid not in known})
        listed = ", ".join(f"{name} ({gid})" for gid, name in sorted(known.items()))
        if unknown:
            return {
                "ok": False,
                "detail": f"Not a location of the shop: {', '.join(unknown)}. "
                f"The shop's locations: {listed or 'none'}.",
            }
        return {"ok": True, "detail": f"Shopify answered; the shop's locations: {listed}."}

    # notifications ----------------------------------------------------------------------

    def verify_notification(self, headers: Mapping[str, str], raw_body: bytes) -> Notification:
        """A Shopify webhook: its HMAC over the raw body (constant time), its shop; the
        order it names (by gid)."""
        lower = {str(k).lower(): v for k, v in headers.items()}
        secret = self.credentials().get("webhook_secret") or ""
        given = str(lower.get("x-shopify-hmac-sha256") or "")
        expected = base64.b64encode(
            hmac.new(secret.encode(), raw_body, hashlib.sha256).digest()
        ).decode()
        if not secret or not given or not hmac.compare_digest(given.encode(), expected.encode()):
            raise MarketplaceRejection(
                "The notification's X-Shopify-Hmac-Sha256 does not match its body.",
                code="NOTIFICATION_SIGNATURE_INVALID",
            )
        shop = str(lower.get("x-shopify-shop-domain") or "").lower()
        if shop != self.shop_domain.lower():
            raise MarketplaceRejection(
                f"The notification is from {shop or 'no shop'}, not {self.shop_domain}.",
                code="NOTIFICATION_SIGNATURE_INVALID",
            )
        event_id = str(lower.get("x-shopify-webhook-id") or "")
        topic = str(lower.get("x-shopify-topic") or "")
        if not event_id or not topic:
            raise MarketplaceRejection(
                "The notification has no X-Shopify-Webhook-Id or X-Shopify-Topic.",
                code="NOTIFICATION_BODY_INVALID",
            )
        try:
            body = json.loads(raw_body)
        except (ValueError, UnicodeDecodeError, RecursionError):
            raise MarketplaceRejection(
                "The notification's body is not JSON.", code="NOTIFICATION_BODY_INVALID"
            ) from None
        if not isinstance(body, dict):
            raise MarketplaceRejection(
                "The notification's body is not a JSON object.", code="NOTIFICATION_BODY_INVALID"
            )
        order_ids = []
        if topic in ORDER_TOPICS:
            gid = body.get("admin_graphql_api_id")
            if not gid and isinstance(body.get("id"), int) and not isinstance(body["id"], bool):
                gid = f"gid://shopify/Order/{body['id']}"
            if not isinstance(gid, str) or not gid:
                raise MarketplaceRejection(
                    "The order notification names no order.", code="NOTIFICATION_BODY_INVALID"
                )
            order_ids = [gid[:200]]
        return Notification(event_id=event_id[:200], topic=topic[:100], order_ids=order_ids)


def _iso(moment):
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _amount(value):
    if value is None or isinstance(value, bool):
        return None
    try:
        amount = Decimal(str(value))
    except InvalidOperation:
        return None
    if not amount.is_finite() or amount < 0 or amount >= Decimal("1e10"):
        return None
    return amount.quantize(Decimal("0.01")) if amount == amount.quantize(Decimal("0.01")) else None


def _status(node):
    if node.get("cancelledAt"):
        return "cancelled"
    fulfillment = node.get("displayFulfillmentStatus")
    if fulfillment == "FULFILLED":
        return "shipped"
    if fulfillment in ("PARTIALLY_FULFILLED", "IN_PROGRESS"):
        return "processing"
    if node.get("displayFinancialStatus") in ("PENDING", "AUTHORIZED", "EXPIRED"):
        return "pending"
    return "confirmed"


def _address(address):
    if not isinstance(address, dict) or not address.get("address1"):
        return None
    country = str(address.get("countryCodeV2") or "")
    return {
        "name": str(address.get("name") or "")[:200] or None,
        "line1": str(address["address1"])[:200],
        "line2": str(address.get("address2") or "")[:200] or None,
        "city": str(address.get("city") or "")[:100] or None,
        "region": str(address.get("provinceCode") or "")[:100] or None,
        "postal_code": str(address.get("zip") or "")[:20] or None,
        "country": country if len(country) == 2 else None,
    }
