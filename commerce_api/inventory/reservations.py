"""Reservations: the stock interface that orders and marketplace connectors call.

Every function runs inside the caller's transaction when there is one (a nested
``write_transaction()`` is a savepoint, so a refusal undoes only this call) and opens its
own otherwise. On SQLite the caller should open its transaction with
``write_transaction()`` (BEGIN IMMEDIATE); on PostgreSQL the rows are locked with
``SELECT ... FOR UPDATE``. Callers that reserve several SKUs in one transaction should do
it in SKU order, which keeps concurrent transactions from deadlocking.

Ledger entries: a reservation raises ``reserved`` (reason ``reservation``), a release
lowers it (``release``), and consuming a shipped reservation lowers ``reserved`` and
``on_hand`` by the same amount (two adjustments, both reason ``sale``). Each adjustment
carries ``reference``.
"""

from collections.abc import Iterable
from typing import Any

from ulid import ULID

from ..db import for_update, is_postgres, write_transaction
from ..errors import ApiError, validation_error
from ..products.bundles import lock_listings_with_bundles
from ..products.models import Product
from ..products.services import find_product
from ..timeutil import now_ms
from .ledger import StockLedger, lock_warehouses, serialize_adjustment
from .models import InventorySummary, Reservation, Warehouse
from .services import MAX_QUANTITY


def lock_for_changes(tenant_id: str, skus: Iterable[str]) -> None:
    """Inside the caller's transaction, before it changes the stock of several SKUs one
    after another (an order's lines): take every lock those changes will take, at once and
    in the one lock order (own warehouses shared, records by product id, then the listings
    of the SKUs and of the bundles that use them, by id).

    Each change flushes on its own and marks listings then; a bundle's listings are marked
    by every component's change, so without this a transaction would hold a bundle's
    listing while it waits for the next component's record that another transaction holds
    while it waits for that listing (a deadlock found by bench/stock_soak.py on PostgreSQL).
    SQLite's write lock already serializes writers: nothing to do there.
    """
    if not is_postgres():
        return
    skus = sorted(set(skus))
    if not skus:
        return
    product_ids = [
        pid
        for (pid,) in Product.select(Product.id)
        .where((Product.tenant == tenant_id) & Product.sku.in_(skus))
        .tuples()
    ]
    if not product_ids:
        return
    own = [
        warehouse_id
        for (warehouse_id,) in Warehouse.select(Warehouse.id)
        .where((Warehouse.tenant == tenant_id) & (Warehouse.type == "own"))
        .tuples()
    ]
    lock_warehouses(tenant_id, own)
    list(
        for_update(
            InventorySummary.select(InventorySummary.product)
            .where(InventorySummary.product.in_(product_ids))
            .order_by(InventorySummary.product)
        ).tuples()
    )
    lock_listings_with_bundles(product_ids)


def _positive_int(name, value, minimum=1):
    if isinstance(value, bool) or not isinstance(value, int) or not (minimum <= value):
        raise validation_error({name: [f"An integer of at least {minimum}."]})
    if value > MAX_QUANTITY:
        raise validation_error({name: [f"At most {MAX_QUANTITY}."]})
    return value


def _reference(reference):
    if not isinstance(reference, str) or not reference or len(reference) > 200:
        raise validation_error({"reference": ["A string of 1 to 200 characters."]})
    return reference


def _reservations(tenant_id, reference, product_ids=None, lock=False):
    query = Reservation.select().where(
        (Reservation.tenant == tenant_id) & (Reservation.reference == reference)
    )
    if product_ids is not None:
        query = query.where(Reservation.product.in_(list(product_ids)))
    query = query.order_by(Reservation.sku, Reservation.created_at, Reservation.id)
    if lock:
        query = for_update(query)
    return list(query)


def _allocation(reservations):
    return [{"warehouse_id": r.warehouse_id, "quantity": r.quantity} for r in reservations]


def reserve_stock(
    tenant_id: str, sku: str, quantity: int, *, reference: str, created_by: str
) -> list[dict[str, Any]]:
    """Reserve ``quantity`` of ``sku`` for ``reference`` in the tenant's own warehouses.

    Returns the allocation ``[{"warehouse_id", "quantity"}]``. The first own, active
    warehouse (in creation order) that has all of it available is chosen; when none has,
    the quantity is split over the own warehouses in that order. Refuses with
    ``INSUFFICIENT_STOCK`` when the own warehouses together have less available, and with
    ``PRODUCT_NOT_FOUND`` for an unknown SKU. Idempotent per (reference, sku): when the
    reference already reserved the SKU, nothing more is reserved and the existing
    allocation is returned (also after a release: use a new reference to reserve again).
    """
    _positive_int("quantity", quantity)
    _reference(reference)
    with write_transaction():
        product_id = find_product(tenant_id, sku)["id"]
        existing = _reservations(tenant_id, reference, [product_id])
        if existing:
            return _allocation(existing)
        order = _own_warehouses_in_order(tenant_id)
        ledger = StockLedger(tenant_id, created_by)
        ledger.lock({product_id: sku}, warehouse_ids=[w.id for w in order])
        # checked again under the record's lock: a concurrent call may have just reserved
        existing = _reservations(tenant_id, reference, [product_id])
        if existing:
            return _allocation(existing)
        rows = [ledger.stocks.get((product_id, w.id)) for w in order]
        rows = [row for row in rows if row is not None and row.available > 0]
        available = sum(row.available for row in rows)
        if available < quantity:
            raise ApiError(
                "INSUFFICIENT_STOCK",
                f"Only {available} of {sku} available in own warehouses; {quantity} requested.",
                details={"sku": sku, "requested": quantity, "available": available},
            )
        plan = _plan(rows, quantity)
        now = now_ms()
        reservations = []
        for row, take in plan:
            ledger.change(row, "reserved", row.reserved + take, "reservation", reference=reference)
            reservations.append(
                {
                    "id": f"rsv_{ULID()}",  # internal rows: never shown, no public prefix
                    "tenant": tenant_id,
                    "reference": reference,
                    "product": product_id,
                    "sku": sku,
                    "warehouse": row.warehouse_id,
                    "quantity": take,
                    "created_at": now,
                    "updated_at": now,
                }
            )
        Reservation.insert_many(reservations).execute()
        ledger.flush()
    return [{"warehouse_id": r["warehouse"], "quantity": r["quantity"]} for r in reservations]


def _own_warehouses_in_order(tenant_id):
    """The tenant's own, active, writable warehouses, locked, in creation order."""
    own = [
        warehouse_id
        for (warehouse_id,) in Warehouse.select(Warehouse.id)
        .where(
            (Warehouse.tenant == tenant_id)
            & (Warehouse.type == "own")
            & (Warehouse.is_active == True)  # noqa: E712 (SQL, not Python)
        )
        .tuples()
    ]
    warehouses = lock_warehouses(tenant_id, own)
    order = sorted(
        (w for w in warehouses.values() if w.is_active and not w.is_readonly),
        key=lambda w: (w.created_at, w.id),
    )
    return order


def _plan(rows, quantity):
    """``[(stock row, quantity)]``: the first row that has all of ``quantity`` available,
    else the rows in order until it is covered (``rows`` have enough together)."""
    whole = next((row for row in rows if row.available >= quantity), None)
    if whole is not None:
        plan = [(whole, quantity)]
    else:
        plan, left = [], quantity
        for row in rows:
            take = min(row.available, left)
            plan.append((row, take))
            left -= take
            if not left:
                break
    return plan


def _lock_reservations(tenant_id, reference, sku, created_by):
    """The reference's reservations (of one SKU, or all), locked with their stock rows."""
    product_ids = None
    if sku is not None:
        product = (
            Product.select(Product.id)
            .where((Product.tenant == tenant_id) & (Product.sku == sku))
            .tuples()
            .first()
        )
        if product is None:
            return None, []
        product_ids = [product[0]]
    found = _reservations(tenant_id, reference, product_ids)
    if not found:
        return None, []
    ledger = StockLedger(tenant_id, created_by)
    ledger.lock(
        {r.product_id: r.sku for r in found},
        warehouse_ids=sorted({r.warehouse_id for r in found}),
    )
    # read again under the records' locks: a concurrent release or consume may have run
    return ledger, _reservations(tenant_id, reference, product_ids, lock=True)


def release_stock(
    tenant_id: str, reference: str, *, created_by: str, sku: str | None = None
) -> list[dict[str, Any]]:
    """Give back what ``reference`` still holds reserved (all its SKUs, or ``sku``).

    Idempotent: what was released or consumed already is not released again. Returns the
    released ``[{"sku", "warehouse_id", "quantity"}]`` (empty when nothing was held).
    """
    _reference(reference)
    released = []
    with write_transaction():
        ledger, reservations = _lock_reservations(tenant_id, reference, sku, created_by)
        now = now_ms()
        for reservation in reservations:
            left = reservation.remaining
            if left <= 0:
                continue
            row = ledger.stocks[(reservation.product_id, reservation.warehouse_id)]
            ledger.change(row, "reserved", row.reserved - left, "release", reference=reference)
            Reservation.update(released=Reservation.released + left, updated_at=now).where(
                Reservation.id == reservation.id
            ).execute()
            released.append(
                {"sku": reservation.sku, "warehouse_id": reservation.warehouse_id, "quantity": left}
            )
        if ledger is not None:
            ledger.flush()
    return released


def consume_stock(
    tenant_id: str,
    reference: str,
    *,
    created_by: str,
    sku: str | None = None,
    quantity: int | None = None,
) -> list[dict[str, Any]]:
    """Turn ``reference``'s reservation into an on_hand decrease (a shipment; reason ``sale``).

    Without ``quantity`` everything still reserved is consumed (all SKUs, or ``sku``).
    ``quantity`` (with ``sku``) is the CUMULATIVE quantity shipped so far for that SKU:
    the call consumes only what brings the consumed total up to it, so repeating a call is
    harmless (idempotent), and it never consumes more than was reserved and not released.
    Returns the consumed ``[{"sku", "warehouse_id", "quantity"}]``.
    """
    _reference(reference)
    if quantity is not None:
        if sku is None:
            raise validation_error({"quantity": ["Give the sku that the quantity is for."]})
        _positive_int("quantity", quantity, minimum=0)
    consumed = []
    with write_transaction():
        ledger, reservations = _lock_reservations(tenant_id, reference, sku, created_by)
        to_consume = None
        if quantity is not None:
            already = sum(r.consumed for r in reservations)
            holding = sum(max(r.remaining, 0) for r in reservations)
            to_consume = max(0, min(quantity - already, holding))
        now = now_ms()
        for reservation in reservations:
            take = reservation.remaining
            if to_consume is not None:
                take = min(take, to_consume)
                to_consume -= max(take, 0)
            if take <= 0:
                continue
            row = ledger.stocks[(reservation.product_id, reservation.warehouse_id)]
            ledger.change(row, "reserved", row.reserved - take, "sale", reference=reference)
            ledger.change(row, "on_hand", row.on_hand - take, "sale", reference=reference)
            Reservation.update(consumed=Reservation.consumed + take, updated_at=now).where(
                Reservation.id == reservation.id
            ).execute()
            consumed.append(
                {"sku": reservation.sku, "warehouse_id": reservation.warehouse_id, "quantity": take}
            )
        if ledger is not None:
            ledger.flush()
    return consumed


def set_marketplace_stock(
    tenant_id: str, warehouse_id: str, sku: str, on_hand: int, *, created_by: str
) -> dict[str, Any] | None:
    """Record the on_hand a connector reports for a marketplace (FBA/FBS) warehouse.

    Bypasses the read-only rule that applies to API callers; the adjustment's reason is
    ``marketplace_sync``. A report equal to the current level writes nothing. Returns the
    adjustment written (as the API shows it) or None.
    """
    if isinstance(on_hand, bool) or not isinstance(on_hand, int):
        raise validation_error({"on_hand": ["An integer."]})
    if on_hand < 0:
        raise ApiError(
            "NEGATIVE_QUANTITY",
            "The quantity cannot be negative.",
            details={"sku": sku, "quantity": on_hand},
        )
    if on_hand > MAX_QUANTITY:
        raise validation_error({"on_hand": [f"At most {MAX_QUANTITY}."]})
    with write_transaction():
        product_id = find_product(tenant_id, sku)["id"]
        warehouse = lock_warehouses(tenant_id, [warehouse_id]).get(warehouse_id)
        if warehouse is None:
            raise ApiError("WAREHOUSE_NOT_FOUND", details={"warehouse_id": warehouse_id})
        if not warehouse.is_readonly:
            raise validation_error(
                {"warehouse_id": ["Not a marketplace-operated (FBA/FBS) warehouse."]}
            )
        if not warehouse.is_active:
            raise ApiError("WAREHOUSE_INACTIVE", details={"warehouse_id": warehouse_id})
        pair = (product_id, warehouse_id)
        ledger = StockLedger(tenant_id, created_by)
        ledger.lock(
            {product_id: sku}, warehouse_ids=[warehouse_id], create=[pair] if on_hand else []
        )
        row = ledger.stocks.get(pair)
        if row is None or row.on_hand == on_hand:
            return None
        adjustment = ledger.change(row, "on_hand", on_hand, "marketplace_sync")
        ledger.flush()
    return serialize_adjustment(adjustment)


def available_quantity(tenant_id: str, sku: str) -> int:
    """Available stock of ``sku`` over all its warehouses (own and marketplace); 0 when
    the SKU is unknown or has no stock."""
    row = (
        InventorySummary.select(InventorySummary.total_available)
        .where((InventorySummary.tenant == tenant_id) & (InventorySummary.sku == sku))
        .tuples()
        .first()
    )
    return max(0, row[0]) if row else 0


def get_reservations(tenant_id: str, reference: str) -> list[dict[str, Any]]:
    """What ``reference`` reserved: ``[{sku, warehouse_id, quantity, consumed, released,
    remaining}]``."""
    return [
        {
            "sku": r.sku,
            "warehouse_id": r.warehouse_id,
            "quantity": r.quantity,
            "consumed": r.consumed,
            "released": r.released,
            "remaining": r.remaining,
        }
        for r in _reservations(tenant_id, reference)
    ]
