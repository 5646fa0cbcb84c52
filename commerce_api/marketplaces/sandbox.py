"""The sandbox: an in-process simulated marketplace for demos and tests.

It behaves like a small marketplace with its own state (table ``sandbox_order`` and the
connection's ``state``), so pulls are incremental and repeatable:

- Every pull that has seen the changes of the last tick advances the marketplace by one
  tick (a pull paging through a backlog does not). The first tick
  emits ``initial_orders`` orders placed over the past week, later ticks
  ``orders_per_pull`` new ones, up to ``max_orders`` in all. Order number ``n`` of a
  connection is generated from a random stream seeded by (connection id, n) over the
  tenant's active products (sorted by SKU), so the same connection and catalogue always
  produce the same orders.
- On each tick existing orders move on: FBA orders pending -> shipped -> delivered ->
  completed (the marketplace ships them); FBM/FBS orders pending -> confirmed, then wait
  for our shipment, then delivered -> completed. About one delivered order in five comes
  back with a return. Every change bumps the order's revision; ``fetch_orders(cursor)``
  returns the orders whose revision is after the cursor.
- Shipments are accepted unless the tracking number starts with ``REJECT`` (rejected,
  ``INVALID_TRACKING_NUMBER``) or ``UNAVAILABLE`` (the marketplace is unreachable).
- Cancellations are approved unless the order's external id starts with ``NOCANCEL`` or the
  sandbox has already shipped it (rejected).
- Any call about an order whose external id starts with ``UNAVAILABLE`` finds the
  marketplace unreachable.
- Product pushes are accepted unless the product is archived (``PRODUCT_ARCHIVED``) or has
  no GTIN (``MISSING_GTIN``); the listing price is the one given, else twice the cost price,
  else 19.99.
- FBA stock of each active product (of the ``fba_skus`` setting's SKUs when it is given)
  starts at a level seeded by (connection id, SKU) and goes down by the FBA orders the
  sandbox has emitted for it. With ``fba_skus``, FBA orders are of those SKUs only and
  other orders of the others; a push without a quantity (a marketplace-fulfilled listing)
  is answered with the FBA stock.
- Notifications (``sandbox_notifications``): with a ``notification_secret`` credential
  the sandbox signs notifications about orders placed or cancelled on demand, and
  ``fetch_order`` reads one order.
- Product reviews come from ``sandbox_reviews`` (deterministic, mixed sentiment per SKU);
  a fetch naming a SKU that starts with ``UNAVAILABLE`` finds the marketplace unreachable.
"""

import hashlib
import random
from collections.abc import Sequence
from datetime import datetime
from decimal import ROUND_HALF_UP, Decimal
from typing import Any

from ..db import for_update, write_transaction
from ..products.models import Product
from ..timeutil import DAY_MS, format_ms, now_ms
from .base import Connector, MarketplaceRejection, MarketplaceUnavailable, OrderPage
from .models import MarketplaceConnection, SandboxOrder
from .offers import normalize_offers
from .sandbox_notifications import SandboxNotifications
from .sandbox_reviews import reviews_for, visible_count

PAGE_SIZE = 100
NAMES = (
    "Ada Lovelace",
    "Alan Turing",
    "Grace Hopper",
    "Edsger Dijkstra",
    "Barbara Liskov",
    "Donald Knuth",
    "Margaret Hamilton",
    "Ken Thompson",
    "Frances Allen",
    "John Backus",
)
CITIES = (
    ("Berlin", "BE", "10115", "DE"),
    ("Lyon", "ARA", "69001", "FR"),
    ("Leeds", "ENG", "LS1 1UR", "GB"),
    ("Austin", "TX", "73301", "US"),
    ("Portland", "OR", "97201", "US"),
    ("Madrid", "MD", "28001", "ES"),
)
STREETS = ("Main Street", "Station Road", "Church Lane", "Market Square", "Mill Road")
RETURN_REASONS = (
    ("damaged", "Arrived damaged."),
    ("not_as_described", "Colour differs from the photos."),
    ("no_longer_needed", "Bought by mistake."),
    ("wrong_item", "Received another item."),
)
COMPETITORS = ("BestDeals", "QuickShip Co", "ValueMart", "HomeGoods Direct", "Budget Bazaar")


def _money(value):
    return float(Decimal(str(value)).quantize(Decimal("0.01"), rounding=ROUND_HALF_UP))


def _digest(*parts):
    return hashlib.sha256(":".join(str(p) for p in parts).encode()).hexdigest()


class SandboxConnector(SandboxNotifications, Connector):
    name = "sandbox"
    remote = False  # in-process and instant: no outbound call to bound

    # deterministic randomness ---------------------------------------------------------

    def _rng(self, *parts):
        # str seeds are hashed with SHA-512 by random.Random: stable across runs
        return random.Random(":".join(str(p) for p in (self.connection.id, *parts)))

    def _setting(self, name, default):
        value = (self.settings or {}).get(name)
        return default if value is None else value

    @property
    def currency(self) -> str:
        return "USD"

    def _products(self):
        return list(
            Product.select()
            .where((Product.tenant == self.connection.tenant_id) & (Product.status == "active"))
            .order_by(Product.sku)
            .limit(200)
        )

    @staticmethod
    def _list_price(product, given=None):
        if given is not None:
            return _money(given)
        if product is not None and product.cost_price is not None and product.cost_price > 0:
            return _money(Decimal(product.cost_price) * 2)
        return 19.99

    # state ----------------------------------------------------------------------------

    def _locked_connection(self):
        return for_update(
            MarketplaceConnection.select().where(MarketplaceConnection.id == self.connection.id)
        ).get()

    @staticmethod
    def _bump(state):
        state["revision"] = int(state.get("revision", 0)) + 1
        return state["revision"]

    def _save_state(self, state):
        MarketplaceConnection.update(state=state).where(
            MarketplaceConnection.id == self.connection.id
        ).execute()

    def _change(self, state, order, status, now, **payload_changes):
        payload = dict(order.payload)
        payload["status"] = status
        payload.update(payload_changes)
        order.payload = payload
        order.status = status
        order.revision = self._bump(state)
        order.updated_at = now
        order.save()

    # orders ---------------------------------------------------------------------------

    def _fba_skus(self):
        """The SKUs the marketplace's warehouse holds (the setting), or None: every one."""
        skus = self._setting("fba_skus", None)
        return None if skus is None else set(skus)

    def _generate(self, sequence, products, now, backfill):
        rng = self._rng("order", sequence)
        external_id = f"SBX-{sequence:06d}"
        method = rng.choices(("FBM", "FBA", "FBS"), weights=(6, 3, 1))[0]
        fba = self._fba_skus()
        if fba is not None:  # the marketplace ships what it holds, the merchant the rest
            pool = [p for p in products if (p.sku in fba) == (method == "FBA")]
            products = pool or products
        chosen = rng.sample(products, rng.randint(1, min(3, len(products))))
        lines = []
        for position, product in enumerate(chosen, start=1):
            quantity = rng.randint(1, 3)
            unit_price = self._list_price(product)
            lines.append(
                {
                    "external_line_item_id": f"{external_id}-{position}",
                    "sku": product.sku,
                    "title": product.title,
                    "quantity": quantity,
                    "unit_price": unit_price,
                    "line_total": _money(Decimal(str(unit_price)) * quantity),
                }
            )
        total = _money(sum(Decimal(str(line["line_total"])) for line in lines))
        spread = 7 * DAY_MS if backfill else 5 * 60_000
        city, region, postal_code, country = rng.choice(CITIES)
        return {
            "external_order_id": external_id,
            "marketplace": self.connection.marketplace,
            "status": "pending",
            "fulfillment_method": method,
            "total_amount": total,
            "currency": self.currency,
            "created_at": format_ms(now - rng.randint(0, spread)),
            "line_items": lines,
            "shipping_address": {
                "name": rng.choice(NAMES),
                "line1": f"{rng.randint(1, 200)} {rng.choice(STREETS)}",
                "line2": None,
                "city": city,
                "region": region,
                "postal_code": postal_code,
                "country": country,
            },
            "returns": [],
        }

    def _progress(self, state, order, now):
        method, status = order.fulfillment_method, order.status
        if status == "pending":
            self._change(state, order, "shipped" if method == "FBA" else "confirmed", now)
        elif status == "shipped":
            returns = list(order.payload.get("returns") or [])
            rng = self._rng("return", order.sequence)
            if rng.random() < 0.2 and order.payload.get("line_items"):
                line = order.payload["line_items"][0]
                reason, text = rng.choice(RETURN_REASONS)
                returns.append(
                    {
                        "sku": line["sku"],
                        "quantity": 1,
                        "reason": reason,
                        "reason_text": text,
                        "created_at": format_ms(now),
                    }
                )
            self._change(state, order, "delivered", now, returns=returns)
        elif status == "delivered":
            self._change(state, order, "completed", now)

    def _tick(self, state, now):
        ticks = int(state.get("ticks", 0))
        for order in (
            SandboxOrder.select()
            .where(
                (SandboxOrder.connection_id == self.connection.id)
                & (SandboxOrder.status.in_(("pending", "shipped", "delivered")))
            )
            .order_by(SandboxOrder.sequence)
        ):
            self._progress(state, order, now)
        emitted = int(state.get("sequence", 0))
        wanted = (
            self._setting("initial_orders", 8)
            if ticks == 0
            else self._setting("orders_per_pull", 2)
        )
        wanted = max(0, min(wanted, self._setting("max_orders", 500) - emitted))
        products = self._products() if wanted else []
        if products:
            for _ in range(wanted):
                emitted += 1
                payload = self._generate(emitted, products, now, backfill=ticks == 0)
                SandboxOrder.create(
                    connection_id=self.connection.id,
                    external_order_id=payload["external_order_id"],
                    sequence=emitted,
                    revision=self._bump(state),
                    status="pending",
                    fulfillment_method=payload["fulfillment_method"],
                    payload=payload,
                    created_at=now,
                    updated_at=now,
                )
        state["sequence"] = emitted
        state["ticks"] = ticks + 1
        state["tick_revision"] = int(state.get("revision", 0))

    def fetch_orders(self, cursor: str | None) -> OrderPage:
        try:
            after = int(cursor) if cursor else 0
        except ValueError:
            after = 0
        now = now_ms()
        with write_transaction():
            connection = self._locked_connection()
            state = dict(connection.state or {})
            if after >= int(state.get("tick_revision", 0)):
                # the caller has seen every change of the last tick (changes our own pushes
                # made since do not hold the clock back): the marketplace moves on a tick
                self._tick(state, now)
                self._save_state(state)
            rows = list(
                SandboxOrder.select()
                .where(
                    (SandboxOrder.connection_id == self.connection.id)
                    & (SandboxOrder.revision > after)
                )
                .order_by(SandboxOrder.revision)
                .limit(PAGE_SIZE + 1)
            )
        has_more = len(rows) > PAGE_SIZE
        rows = rows[:PAGE_SIZE]
        next_cursor = str(rows[-1].revision) if rows else str(after)
        return OrderPage(
            orders=[row.payload for row in rows], cursor=next_cursor, has_more=has_more
        )

    def _known(self, external_order_id):
        return for_update(
            SandboxOrder.select().where(
                (SandboxOrder.connection_id == self.connection.id)
                & (SandboxOrder.external_order_id == external_order_id)
            )
        ).first()

    @staticmethod
    def _check_reachable(order):
        if str(order["external_order_id"]).upper().startswith("UNAVAILABLE"):
            raise MarketplaceUnavailable(
                "The sandbox simulates an outage for this order.",
                code="SIMULATED_OUTAGE",
                retry_after=5,
            )

    def confirm_shipment(self, order: dict[str, Any], shipment: dict[str, Any]) -> dict[str, Any]:
        self._check_reachable(order)
        tracking = str(shipment.get("tracking_number") or "")
        if tracking.upper().startswith("UNAVAILABLE"):
            raise MarketplaceUnavailable(
                "The sandbox simulates an outage.", code="SIMULATED_OUTAGE", retry_after=5
            )
        if tracking.upper().startswith("REJECT"):
            raise MarketplaceRejection(
                f"The tracking number {tracking} is not valid for {shipment.get('carrier')}.",
                code="INVALID_TRACKING_NUMBER",
            )
        now = now_ms()
        with write_transaction():
            connection = self._locked_connection()
            state = dict(connection.state or {})
            known = self._known(order["external_order_id"])
            if known is not None:
                if known.status == "cancelled":
                    raise MarketplaceRejection(
                        "The order is cancelled on the marketplace.", code="ORDER_CANCELLED"
                    )
                if known.status in ("pending", "confirmed", "processing"):
                    self._change(
                        state,
                        known,
                        "shipped",
                        now,
                        shipment={k: shipment.get(k) for k in ("carrier", "tracking_number")},
                    )
                    self._save_state(state)
        digest = _digest(self.connection.id, order["external_order_id"], tracking)
        return {"confirmation_id": "SBX-SHP-" + digest[:12].upper()}

    def request_cancellation(self, order: dict[str, Any], reason: str) -> dict[str, Any]:
        self._check_reachable(order)
        external_id = str(order["external_order_id"])
        if external_id.upper().startswith("NOCANCEL"):
            return {
                "status": "rejected",
                "message": "The buyer's order can no longer be cancelled.",
            }
        now = now_ms()
        with write_transaction():
            connection = self._locked_connection()
            state = dict(connection.state or {})
            known = self._known(external_id)
            if known is not None:
                if known.status in ("shipped", "delivered", "completed"):
                    return {
                        "status": "rejected",
                        "message": "The marketplace has shipped the order.",
                    }
                if known.status != "cancelled":
                    self._change(state, known, "cancelled", now)
                    self._save_state(state)
        return {"status": "approved", "message": "Cancelled."}

    # catalogue ------------------------------------------------------------------------

    def push_product(
        self, product: dict[str, Any], idempotency_key: str | None = None
    ) -> dict[str, Any]:
        if product.get("status") == "archived":
            raise MarketplaceRejection(
                "Archived products cannot be listed.", code="PRODUCT_ARCHIVED"
            )
        if not product.get("gtin"):
            raise MarketplaceRejection("A GTIN is required to list a product.", code="MISSING_GTIN")
        cost = product.get("cost_price")
        if product.get("price") is not None:
            price = _money(product["price"])
        elif cost:
            price = _money(Decimal(str(cost)) * 2)
        else:
            price = 19.99
        return {
            "external_id": "SBX-" + _digest(self.connection.id, product["sku"])[:10].upper(),
            "status": "active" if product.get("status") == "active" else "inactive",
            "price": price,
            "currency": self.currency,
            "quantity": self._listed_quantity(product),
        }

    def _listed_quantity(self, product):
        if product.get("quantity") is not None:
            return int(product["quantity"])
        held = {item["sku"]: item["on_hand"] for item in self.fetch_inventory()}
        return held.get(product.get("sku"), 0)  # fulfilled here: what the warehouse holds

    def fetch_inventory(self) -> list[dict[str, Any]]:
        sold = {}
        for order in SandboxOrder.select().where(
            (SandboxOrder.connection_id == self.connection.id)
            & (SandboxOrder.fulfillment_method == "FBA")
            & (SandboxOrder.status != "cancelled")
        ):
            for line in order.payload.get("line_items") or []:
                sold[line["sku"]] = sold.get(line["sku"], 0) + int(line["quantity"])
        items = []
        fba = self._fba_skus()
        for product in self._products():
            if fba is not None and product.sku not in fba:
                continue
            base = self._rng("fba", product.sku).randint(10, 60)
            items.append(
                {
                    "sku": product.sku,
                    "on_hand": max(0, base - sold.get(product.sku, 0)),
                    "warehouse_type": "FBA",
                }
            )
        return items

    def fetch_competitor_prices(self, skus: Sequence[str]) -> list[dict[str, Any]]:
        now = now_ms()
        day = now // DAY_MS
        products = {
            p.sku: p
            for p in Product.select().where(
                (Product.tenant == self.connection.tenant_id) & (Product.sku.in_(list(skus)))
            )
        }
        records = []
        for sku in skus:
            product = products.get(sku)
            if product is None:
                continue
            rng = self._rng("competitors", sku, day)
            reference = Decimal(str(self._list_price(product)))
            offers = []
            for competitor in rng.sample(COMPETITORS, 3):
                price = _money(reference * Decimal(str(round(rng.uniform(0.85, 1.15), 4))))
                shipping = rng.choice((0.0, 2.99, 4.99))
                offers.append(
                    {
                        "sku": sku,
                        "marketplace": self.connection.marketplace,
                        "competitor": competitor,
                        "price": price,
                        "shipping": shipping,
                        "landed_price": _money(Decimal(str(price)) + Decimal(str(shipping))),
                        "currency": self.currency,
                        "is_buy_box_winner": False,
                        "condition": "new",
                        "observed_at": format_ms(now),
                    }
                )
            min(offers, key=lambda o: (o["landed_price"], o["competitor"]))["is_buy_box_winner"] = (
                True
            )
            records.extend(offers)
        return normalize_offers(records, skus, self.connection.marketplace, now)

    # reviews ----------------------------------------------------------------------------

    def fetch_reviews(self, skus: Sequence[str], since: datetime | None) -> list[dict[str, Any]]:
        """Reviews of the tenant's products among ``skus`` (see ``sandbox_reviews``). Each
        call is a tick of the marketplace's review clock, until ``max_reviews`` is reached."""
        if any(str(sku).upper().startswith("UNAVAILABLE") for sku in skus):
            raise MarketplaceUnavailable(
                "The sandbox simulates an outage for this SKU.",
                code="SIMULATED_OUTAGE",
                retry_after=5,
            )
        with write_transaction():
            connection = self._locked_connection()
            state = dict(connection.state or {})
            ticks = list(state.get("review_ticks") or [])
            if not ticks or visible_count(len(ticks) + 1) > visible_count(len(ticks)):
                ticks.append(now_ms())
                state["review_ticks"] = ticks
                self._save_state(state)
        titles = dict(
            Product.select(Product.sku, Product.title)
            .where((Product.tenant == self.connection.tenant_id) & (Product.sku.in_(list(skus))))
            .tuples()
        )
        since_ms = int(since.timestamp() * 1000) if since is not None else None
        return reviews_for(self.connection, titles, ticks, since_ms)
