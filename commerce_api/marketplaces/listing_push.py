"""Listings kept in sync: claim pending listings, push their latest state, record the outcome.

The steps of the ``listing_push`` background loop (``listing_push_loop``); the sync history
names each call ``push_listing``. (A one-off ``marketplace_sync`` job is ``product_sync``.)

A listing's desired state (DESIGN 9) is its product's content, its own ``price`` and
``status``, and its ``quantity``: its allocation rules over the SKU's available stock in
its own warehouses (DESIGN 14, ``allocation.py``; by default all active own warehouses
minus the listing's ``stock_buffer``, never below 0). A listing fulfilled by the
marketplace (the SKU has stock in that marketplace's FBA/FBS warehouse) pushes no quantity.
A listing of a product that is not ``active``, or a listing set ``inactive``, is pushed
with ``status: inactive``.

Every change of that state marks the listing ``pending`` with a new ``version`` in the
changing transaction (``products.desired_state.mark_listings_pending``). Then:

1. **claim** (intent): due pending listings of one connection are leased, and the version
   being pushed is written (``pushing_version``) before any call;
2. **push**: the latest state goes through the gateway with
   ``Idempotency-Key: <listing id>:<version>``, no transaction open;
3. **outcome**: accepted, the listing is ``in_sync`` unless a change came meanwhile (then
   it stays ``pending`` and is pushed again, coalescing every change that came in between);
   rejected, it is ``error`` with ``last_sync_error`` and a ``listing.sync_failed`` event;
   unavailable, it stays ``pending`` and is due again after a backoff (``Retry-After`` when
   the marketplace gave one).

A process killed between 1 and 3 leaves the listing pending under a lease that runs out;
the next claim pushes it again with the same key when nothing changed.
"""

from dataclasses import dataclass, field
from typing import Any

from ..db import write_transaction
from ..events import emit
from ..inventory.models import Stock, Warehouse
from ..leases import DueProbe, Lease, backoff_seconds, delay_ms, honour_retry_after, lease_free
from ..products.models import Listing, Product
from ..products.services import MUTABLE_FIELDS
from ..sql import Statement
from ..timeutil import now_ms
from .allocation import ALLOCATION_COLUMNS, Allocation, desired_quantities
from .base import MarketplaceRejection, MarketplaceUnavailable
from .gateway import call
from .models import MarketplaceConnection

MAX_BACKOFF_SECONDS = 300
MAX_ERROR_LENGTH = 2000
# a pending listing, due, that no push holds
_DUE = "{Listing.sync_status} = 'pending' AND {Listing.next_push_at} <= {p:now} AND " + lease_free(
    "{Listing.lease_until}"
)
HAS_DUE = DueProbe(Listing, _DUE)
DUE_CONNECTIONS = Statement(
    "SELECT DISTINCT {Listing.tenant}, {Listing.marketplace} FROM {Listing} WHERE " + _DUE,
    Listing=Listing,
)


# Finding work -----------------------------------------------------------------------------


def has_due(now: int) -> bool:
    """A read-only look: is any pending listing due and free?"""
    return HAS_DUE(now)


def due_connections(now: int) -> list[tuple[str, str]]:
    """``[(tenant id, marketplace)]`` that have due, free pending listings."""
    return [(row[0], row[1]) for row in DUE_CONNECTIONS.execute({"now": now}).fetchall()]


# Claiming (the intent) --------------------------------------------------------------------


@dataclass
class ClaimedListing:
    """A listing leased for one push, with the state to push."""

    id: str
    tenant_id: str
    marketplace: str
    version: int
    token: str
    product_id: str = ""
    sku: str = ""
    payload: dict = field(default_factory=dict)
    fulfilled_by_marketplace: bool = False
    # what the connection knows of the listing on the marketplace: its id there, the
    # other ids it is pushed by (Shopify), the quantity the marketplace last took and the
    # own warehouses that feed it (a connector that maps warehouses to locations)
    external_id: str | None = None
    external_refs: dict | None = None
    last_quantity: int | None = None
    warehouse_ids: list | None = None
    allocation: Allocation | None = None  # its rules (a connector that spreads over places)

    def batch_item(self) -> dict[str, Any]:
        """The item ``push_listings`` takes for this listing."""
        return {
            "payload": self.payload,
            "idempotency_key": f"{self.id}:{self.version}",
            "external_id": self.external_id,
            "external_refs": self.external_refs,
            "last_quantity": self.last_quantity,
            "warehouse_ids": self.warehouse_ids,
            "product_id": self.product_id,
            "allocation": self.allocation,
        }


# The listing queue's leased claim: the due listings of one connection, oldest due first,
# with the version being pushed written as the intent before any call.
LEASE = Lease(
    Listing,
    lease="lease_until",
    holder="lease_token",
    due=_DUE + " AND {Listing.tenant} = {p:tenant} AND {Listing.marketplace} = {p:marketplace}",
    order="{Listing.next_push_at}",
    setting=(
        "{Listing.lease_until} = {p:until}, {Listing.lease_token} = {p:token},"
        " {Listing.pushing_version} = {Listing.version}"
    ),
    claimable="{Listing.sync_status} = 'pending'",
    returning=("id", "version"),
)


def connection_claim(
    tenant_id: str, marketplace: str, limit: int, lease_ms: int, token: str, now: int
) -> dict[str, Any]:
    """The parameters of a claim of one connection's listings (``LEASE``, and the
    submission checks' ``batches.CHECK_LEASE``)."""
    return {
        "now": now,
        "tenant": tenant_id,
        "marketplace": marketplace,
        "limit": limit,
        "until": now + lease_ms,
        "token": token,
    }


def claim(
    tenant_id: str, marketplace: str, limit: int, lease_ms: int, token: str, now: int
) -> list[ClaimedListing]:
    """Lease up to ``limit`` due listings of one connection; returns them with the state
    to push (read under the same transaction)."""
    if limit <= 0:
        return []
    with write_transaction():
        rows = LEASE.claim(connection_claim(tenant_id, marketplace, limit, lease_ms, token, now))
        if not rows:
            return []
        claimed = [ClaimedListing(row[0], tenant_id, marketplace, row[1], token) for row in rows]
        _fill_desired_state(tenant_id, marketplace, claimed)
    return claimed


# The desired state ------------------------------------------------------------------------

_PRODUCT_FIELDS = ("sku", *MUTABLE_FIELDS)  # what a listing carries of its product


def _number(value):
    return None if value is None else float(value)


# stock in the tenant's own active warehouses, per product
OWN_AVAILABLE = Statement(
    "SELECT s.{Stock.product}, SUM(s.{Stock.on_hand} - s.{Stock.reserved}) FROM {Stock} s"
    " JOIN {Warehouse} w ON w.{Warehouse.id} = s.{Stock.warehouse}"
    " WHERE s.{Stock.product} IN ({in:ids}) AND w.{Warehouse.type} = 'own'"
    " AND w.{Warehouse.is_active} GROUP BY s.{Stock.product}",
    Stock=Stock,
    Warehouse=Warehouse,
)
# products with stock in a marketplace's own (FBA/FBS) active warehouses
FULFILLED_BY = Statement(
    "SELECT DISTINCT s.{Stock.product} FROM {Stock} s"
    " JOIN {Warehouse} w ON w.{Warehouse.id} = s.{Stock.warehouse}"
    " WHERE s.{Stock.product} IN ({in:ids}) AND w.{Warehouse.type} IN ('FBA', 'FBS')"
    " AND w.{Warehouse.is_active} AND w.{Warehouse.marketplace} = {p:marketplace}"
    " AND s.{Stock.on_hand} > 0",
    Stock=Stock,
    Warehouse=Warehouse,
)


# the marketplaces (among some) whose own active warehouses hold stock of one product
FULFILLING_MARKETPLACES = Statement(
    "SELECT DISTINCT w.{Warehouse.marketplace} FROM {Stock} s"
    " JOIN {Warehouse} w ON w.{Warehouse.id} = s.{Stock.warehouse}"
    " WHERE s.{Stock.product} = {p:product} AND w.{Warehouse.type} IN ('FBA', 'FBS')"
    " AND w.{Warehouse.is_active} AND w.{Warehouse.marketplace} IN ({in:names})"
    " AND s.{Stock.on_hand} > 0",
    Stock=Stock,
    Warehouse=Warehouse,
)


def fulfilling_marketplaces(product_id: str, marketplaces: list[str]) -> set[str]:
    """Which of ``marketplaces`` fulfil the product (the rule ``fulfilled_by`` applies to
    a push, for the API's ``fulfilled_by``); registered with products by ``create_app``."""
    names = sorted(set(marketplaces))
    if not names:
        return set()
    rows = FULFILLING_MARKETPLACES.execute({"product": product_id, "names": names})
    return {row[0] for row in rows.fetchall()}


def own_available(product_ids: list[str]) -> dict[str, int]:
    """``{product id: available}`` in active own warehouses."""
    if not product_ids:
        return {}
    rows = OWN_AVAILABLE.execute({"ids": product_ids}).fetchall()
    return {row[0]: int(row[1] or 0) for row in rows}


def fulfilled_by(product_ids: list[str], marketplace: str) -> set[str]:
    """The products among ``product_ids`` with stock in ``marketplace``'s own (FBA/FBS)
    warehouses: their listings take the quantity from the marketplace."""
    if not product_ids:
        return set()
    rows = FULFILLED_BY.execute({"ids": product_ids, "marketplace": marketplace}).fetchall()
    return {row[0] for row in rows}


def desired_quantity(available: int, stock_buffer: int | None) -> int:
    """What a listing with no allocation rule but a buffer offers: available own stock
    minus the buffer, never below 0 (``allocation.allocate`` is the whole formula)."""
    return max(0, int(available) - int(stock_buffer or 0))


def wire_body(
    product: dict[str, Any],
    *,
    status: str,
    price: Any,
    currency: str | None,
    quantity: int | None,
) -> dict[str, Any]:
    """The ``PUT /products/{sku}`` body (docs/connector-http.md): the product's content
    (a row with its columns) and the listing's ``status``, ``price``, ``currency`` and
    ``quantity`` (None, a listing fulfilled by the marketplace: left out)."""
    body = {
        "sku": product["sku"],
        "title": product["title"],
        "description": product["description"],
        "status": status,
        "gtin": product["gtin"],
        "category": product["category"],
        "cost_price": _number(product["cost_price"]),
        "weight_kg": _number(product["weight_kg"]),
        "images": product["images"] or [],
        "price": _number(price),
        "currency": currency,
    }
    if quantity is not None:
        body["quantity"] = quantity
    return body


def listing_payload(
    product: dict[str, Any], listing: dict[str, Any], quantity: int | None
) -> dict[str, Any]:
    """The body of a listing push: ``status`` is ``active`` only while both the listing
    and its product are active."""
    active = listing["status"] == "active" and product["status"] == "active"
    return wire_body(
        product,
        status="active" if active else "inactive",
        price=listing["price"],
        currency=listing["currency"],
        quantity=quantity,
    )


def _fill_desired_state(tenant_id, marketplace, claimed):
    rows = (
        Listing.select(
            Listing.id,
            Listing.price,
            Listing.currency,
            Listing.status.alias("listing_status"),
            Listing.external_id,
            Listing.external_refs,
            Listing.quantity,
            *ALLOCATION_COLUMNS,
            Product.id.alias("product_id"),
            *(getattr(Product, name) for name in _PRODUCT_FIELDS),
        )
        .join(Product, on=(Product.id == Listing.product))
        .where(Listing.id.in_([c.id for c in claimed]))
        .dicts()
    )
    by_id = {row["id"]: row for row in rows}
    product_ids = sorted({row["product_id"] for row in by_id.values()})
    by_marketplace = fulfilled_by(product_ids, marketplace)
    quantities = desired_quantities(
        (row["id"], row["product_id"], Allocation.of(row))
        for row in by_id.values()
        if row["product_id"] not in by_marketplace
    )
    for item in claimed:
        row = by_id[item.id]
        item.product_id, item.sku = row["product_id"], row["sku"]
        product = {name: row[name] for name in _PRODUCT_FIELDS}
        listing = {
            "price": row["price"],
            "currency": row["currency"],
            "status": row["listing_status"],
        }
        item.fulfilled_by_marketplace = row["product_id"] in by_marketplace
        item.external_id, item.external_refs = row["external_id"], row["external_refs"]
        item.last_quantity, item.warehouse_ids = row["quantity"], row["warehouse_ids"]
        item.allocation = Allocation.of(row)
        quantity = None
        if not item.fulfilled_by_marketplace:
            quantity = quantities[item.id]
        item.payload = listing_payload(product, listing, quantity)


# Pushing ----------------------------------------------------------------------------------


@dataclass
class PushOutcome:
    """What one push came to (made by a pushing thread, recorded by the service)."""

    listing: ClaimedListing
    started_at: int
    status: str  # accepted, rejected, unavailable
    answer: dict | None = None
    error_code: str | None = None
    error_message: str | None = None
    retry_after: float | None = None


def push(
    connection: MarketplaceConnection, listing: ClaimedListing, slot_wait: float | None = None
) -> PushOutcome:
    """Push one claimed listing through the gateway; returns a ``PushOutcome``."""
    started = now_ms()
    key = f"{listing.id}:{listing.version}"
    payload = listing.payload
    try:
        answer = call(
            connection,
            "push_listing",
            lambda connector: connector.push_product(payload, idempotency_key=key),
            resource_type="product",
            resource_id=listing.product_id,
            sku=listing.sku,
            created_by="listing_sync",
            details={
                "listing_id": listing.id,
                "version": listing.version,
                "quantity": payload.get("quantity"),
                "price": payload.get("price"),
                "status": payload.get("status"),
            },
            slot_wait=slot_wait,
        )
    except MarketplaceRejection as exc:
        return PushOutcome(listing, started, "rejected", None, exc.code, exc.message)
    except MarketplaceUnavailable as exc:
        return PushOutcome(
            listing, started, "unavailable", None, exc.code, exc.message, exc.retry_after
        )
    return PushOutcome(listing, started, "accepted", answer.result)


# Recording the outcome --------------------------------------------------------------------


# an outcome lands only with the token of the claim; every one gives the lease back
_RELEASED = LEASE.released() + ", {Listing.pushing_version} = NULL"
_HELD = " WHERE {Listing.id} = {p:id} AND {Listing.lease_token} = {p:token}"
ACCEPTED = Statement(
    "UPDATE {Listing} SET {Listing.synced_version} = {p:version},"
    " {Listing.last_synced_at} = {p:now}, {Listing.updated_at} = {p:now},"
    " {Listing.external_id} = {p:external_id},"
    " {Listing.external_refs} = COALESCE({p:external_refs}, {Listing.external_refs}),"
    " {Listing.quantity} = COALESCE({p:quantity}, {Listing.quantity}),"
    " {Listing.price} = COALESCE({Listing.price}, {p:price}),"
    " {Listing.currency} = COALESCE({Listing.currency}, {p:currency}),"
    " {Listing.last_sync_error} = NULL, {Listing.push_failures} = 0, " + _RELEASED + ","
    " {Listing.sync_status} = CASE WHEN {Listing.version} = {p:version} THEN 'in_sync'"
    " ELSE 'pending' END, {Listing.next_push_at} = {p:next_push_at}" + _HELD,
    Listing=Listing,
)
REJECTED = Statement(
    "UPDATE {Listing} SET {Listing.last_sync_error} = {p:error}, {Listing.updated_at} = {p:now},"
    " {Listing.push_failures} = 0, " + _RELEASED + ","
    " {Listing.sync_status} = CASE WHEN {Listing.version} = {p:version} THEN 'error'"
    " ELSE 'pending' END, {Listing.next_push_at} = {p:now}" + _HELD,
    Listing=Listing,
)
UNAVAILABLE = Statement(
    "UPDATE {Listing} SET {Listing.last_sync_error} = {p:error},"
    " {Listing.push_failures} = {Listing.push_failures} + 1, " + _RELEASED + ","
    " {Listing.next_push_at} = {p:due}" + _HELD,
    Listing=Listing,
)
FAILURES = Statement(
    "SELECT {Listing.push_failures} FROM {Listing} WHERE {Listing.id} = {p:id}", Listing=Listing
)


def backoff_ms(failures: int, retry_after: float | None = None) -> int:
    """How long an unavailable marketplace is left alone: ``Retry-After`` when given
    (0.1 s to an hour), else 1, 2, 4... seconds up to 5 minutes."""
    seconds = backoff_seconds(failures + 1, 1, MAX_BACKOFF_SECONDS)
    seconds = honour_retry_after(
        seconds, retry_after, cap=MAX_BACKOFF_SECONDS * 12, minimum=0.1, shortens=True
    )
    return delay_ms(seconds)


def record(outcomes: list[PushOutcome], spacing_ms: int, now: int | None = None) -> int:
    """Write the outcomes (inside the caller's transaction); returns how many landed.

    An outcome whose lease was lost (taken by another worker after it ran out) writes
    nothing. A listing still pending after an accepted push (changed meanwhile) is due
    again ``spacing_ms`` after this push started: a burst of changes is coalesced into a
    push every ``spacing_ms`` at most.
    """
    now = now_ms() if now is None else now
    landed = 0
    # in listing id order, as mark_listings_pending locks them (no deadlock on PostgreSQL)
    for outcome in sorted(outcomes, key=lambda o: o.listing.id):
        if outcome.status == "accepted":
            landed += _record_accepted(outcome, spacing_ms, now)
        elif outcome.status == "rejected":
            landed += _record_rejected(outcome, now)
        else:
            landed += _record_unavailable(outcome, now)
    return landed


def _held(item: ClaimedListing) -> dict[str, Any]:
    """The parameters that fence an outcome's write to the claim that made it."""
    return {"id": item.id, "token": item.token}


def _record_accepted(outcome: PushOutcome, spacing_ms: int, now: int) -> int:
    item = outcome.listing
    answer = outcome.answer or {}
    quantity = item.payload.get("quantity")
    if quantity is None:
        quantity = answer.get("quantity")
    cursor = ACCEPTED.execute(
        {
            "version": item.version,
            "now": now,
            "external_id": answer.get("external_id"),
            "external_refs": Listing.external_refs.db_value(answer.get("refs")),
            "quantity": quantity,
            "price": Listing.price.db_value(answer.get("price")),
            "currency": answer.get("currency"),
            "next_push_at": max(now, outcome.started_at + spacing_ms),
            **_held(item),
        }
    )
    return cursor.rowcount or 0


def _record_rejected(outcome: PushOutcome, now: int) -> int:
    """A refused push: the listing in error (unless changed meanwhile), and its event."""
    item = outcome.listing
    message = f"{outcome.error_code}: {outcome.error_message}"[:MAX_ERROR_LENGTH]
    cursor = REJECTED.execute(
        {"error": message, "now": now, "version": item.version, **_held(item)}
    )
    if cursor.rowcount:
        emit(
            item.tenant_id,
            "listing.sync_failed",
            "listing",
            item.id,
            {
                "listing_id": item.id,
                "sku": item.sku,
                "marketplace": item.marketplace,
                "version": item.version,
                "error": {"code": outcome.error_code, "message": outcome.error_message},
                "pushed": item.payload,
            },
        )
    return cursor.rowcount or 0


def _record_unavailable(outcome: PushOutcome, now: int) -> int:
    """The marketplace was unavailable: due again after a backoff."""
    item = outcome.listing
    failures = _failures(item.id)
    message = f"{outcome.error_code}: {outcome.error_message}"[:MAX_ERROR_LENGTH]
    due = now + backoff_ms(failures, outcome.retry_after)
    cursor = UNAVAILABLE.execute({"error": message, "due": due, **_held(item)})
    return cursor.rowcount or 0


def _failures(listing_id):
    row = FAILURES.execute({"id": listing_id}).fetchone()
    return row[0] if row else 0
