"""Inventory rules: warehouses, inventory records, setting stock, the adjustments ledger."""

from collections.abc import Callable
from typing import Any

import peewee

from ..auth.models import Tenant
from ..db import db, for_update, write_transaction
from ..errors import ApiError, validation_error
from ..ids import new_id
from ..pagination import filter_equal, paginate_args
from ..products.bundles import bundle_ids, bundle_stock_error
from ..products.models import Product
from ..products.services import find_product
from ..shapes import compile_serializer, field_names
from ..timeutil import now_ms
from ..totals import maintained
from .adjustments import check_warehouse_filter, page_ledger
from .bundles import derived_record
from .ledger import StockLedger, compute_status, lock_warehouses, serialize_adjustment
from .models import (
    MARKETPLACE_TYPES,
    MAX_QUANTITY,
    Adjustment,
    InventorySummary,
    Stock,
    Warehouse,
)
from .shapes import AdjustmentSchema, InventoryRecordSchema, WarehouseSchema

RECORD_FIELDS = field_names(InventoryRecordSchema)
WAREHOUSE_FIELDS = field_names(WarehouseSchema)
ADJUSTMENT_FIELDS = field_names(AdjustmentSchema)
RECORD_SORTS = {
    "sku": InventorySummary.sku,
    "updated_at": InventorySummary.updated_at,
    "total_available": InventorySummary.total_available,
}
_RETRYABLE_PG_CODES = ("40P01", "40001")  # deadlock detected, serialization failure


# -- helpers ---------------------------------------------------------------------------


def run_with_retry(func: Callable[..., Any], *args: Any, attempts: int = 3, **kwargs: Any) -> Any:
    """Run a transaction of our own again when PostgreSQL aborted it for a deadlock.

    Only the outermost transaction is retried; inside a caller's transaction the error
    propagates to the caller, whose transaction is the one to retry.
    """
    for attempt in range(attempts):
        try:
            return func(*args, **kwargs)
        except peewee.OperationalError as exc:
            # peewee keeps the driver's exception as ``orig`` (psycopg2 sets ``pgcode``)
            original = getattr(exc, "orig", None) or exc.__context__
            code = getattr(original, "pgcode", None)
            if (
                attempt + 1 == attempts
                or db.transaction_depth() > 0
                or code not in _RETRYABLE_PG_CODES
            ):
                raise
    raise AssertionError("unreachable")


def _warehouse_not_found(warehouse_id):
    return ApiError("WAREHOUSE_NOT_FOUND", details={"warehouse_id": warehouse_id})


# -- warehouses ------------------------------------------------------------------------


_warehouse = compile_serializer(WarehouseSchema)


def serialize_warehouse(warehouse: Warehouse) -> dict[str, Any]:
    """A warehouse as the API shows it (``is_readonly`` is the model's, not a column)."""
    return _warehouse(warehouse, is_readonly=warehouse.is_readonly)


def tenant_warehouses(tenant_id: str) -> list[Warehouse]:
    """Every warehouse of the tenant, oldest first (the CLI list)."""
    return list(
        Warehouse.select()
        .where(Warehouse.tenant == tenant_id)
        .order_by(Warehouse.created_at, Warehouse.id)
    )


def get_warehouse(tenant_id: str, warehouse_id: str) -> Warehouse:
    warehouse = Warehouse.get_or_none(
        (Warehouse.tenant == tenant_id) & (Warehouse.id == warehouse_id)
    )
    if warehouse is None:
        raise _warehouse_not_found(warehouse_id)
    return warehouse


def create_warehouse(tenant_id: str, data: dict[str, Any]) -> dict[str, Any]:
    """Create a warehouse: ``own``, or marketplace-operated (``FBA``/``FBS``, read-only)."""
    kind = data.get("type", "own")
    marketplace = data.get("marketplace")
    errors = {}
    if kind not in ("own", *MARKETPLACE_TYPES):
        errors["type"] = ["Must be one of: own, FBA, FBS."]
    elif kind in MARKETPLACE_TYPES and not marketplace:
        errors["marketplace"] = [f"A {kind} warehouse names its marketplace."]
    elif kind == "own" and marketplace:
        errors["marketplace"] = ["Only FBA and FBS warehouses belong to a marketplace."]
    name = (data.get("name") or "").strip()
    if not name or len(name) > 200:
        errors["name"] = ["1 to 200 characters."]
    if errors:
        raise validation_error(errors)
    now = now_ms()
    with write_transaction():
        if not Tenant.select().where(Tenant.id == tenant_id).exists():
            raise ApiError("RESOURCE_NOT_FOUND", "The tenant does not exist.")
        warehouse = Warehouse.create(
            id=new_id("warehouse"),
            tenant=tenant_id,
            name=name,
            type=kind,
            marketplace=marketplace,
            address=data.get("address"),
            is_active=data.get("is_active", True),
            created_at=now,
            updated_at=now,
        )
    return serialize_warehouse(warehouse)


def update_warehouse(tenant_id: str, warehouse_id: str, changes: dict[str, Any]) -> dict[str, Any]:
    """Rename, re-address, activate or deactivate one of the tenant's own warehouses.

    Marketplace warehouses are read-only; a warehouse that still holds stock cannot be
    deactivated (WAREHOUSE_NOT_EMPTY), so inactive warehouses never hold stock.
    """
    with write_transaction():
        query = Warehouse.select().where(
            (Warehouse.tenant == tenant_id) & (Warehouse.id == warehouse_id)
        )
        warehouse = for_update(query).first()
        if warehouse is None:
            raise _warehouse_not_found(warehouse_id)
        if warehouse.is_readonly:
            raise ApiError(
                "READONLY_WAREHOUSE",
                "Marketplace-operated warehouses are managed by their marketplace.",
                details={"warehouse_id": warehouse_id},
            )
        changed = {k: v for k, v in changes.items() if getattr(warehouse, k) != v}
        if "name" in changed:
            changed["name"] = changed["name"].strip()
            if not changed["name"]:
                raise validation_error({"name": ["1 to 200 characters."]})
        if not changed:
            return serialize_warehouse(warehouse)
        if changed.get("is_active") is False:
            holding = (
                Stock.select(Stock.id)
                .where(
                    (Stock.warehouse == warehouse_id)
                    & ((Stock.on_hand > 0) | (Stock.reserved > 0) | (Stock.incoming > 0))
                )
                .exists()
            )
            if holding:
                raise ApiError(
                    "WAREHOUSE_NOT_EMPTY",
                    "Set its stock to zero and receive or cancel the transfers into it before "
                    "deactivating the warehouse.",
                    details={"warehouse_id": warehouse_id},
                )
        changed["updated_at"] = now_ms()
        Warehouse.update(**changed).where(Warehouse.id == warehouse_id).execute()
        for name, value in changed.items():
            setattr(warehouse, name, value)
    return serialize_warehouse(warehouse)


def list_warehouses(
    tenant_id: str, args: dict[str, Any]
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    query = Warehouse.select().where(Warehouse.tenant == tenant_id)
    if args.get("type"):
        query = query.where(Warehouse.type == args["type"])
    if args.get("is_active") is not None:
        query = query.where(Warehouse.is_active == args["is_active"])
    rows, meta = paginate_args(
        query,
        args,
        sort_field=Warehouse.created_at,
        tiebreak=Warehouse.id,
        default_order="asc",
        kind="warehouses",
    )
    return [serialize_warehouse(row) for row in rows], meta


# -- inventory records -----------------------------------------------------------------


def _entries(product_ids):
    """Per-warehouse entries of the given products: product id -> [entry]."""
    entries = {pid: [] for pid in product_ids}
    if not product_ids:
        return entries
    query = (
        Stock.select(
            Stock.product,
            Stock.warehouse,
            Warehouse.name,
            Warehouse.type,
            Stock.on_hand,
            Stock.reserved,
            Stock.incoming,
        )
        .join(Warehouse)
        .where(Stock.product.in_(list(product_ids)))
        .order_by(Warehouse.created_at, Warehouse.id)
        .tuples()
    )
    for product_id, warehouse_id, name, kind, on_hand, reserved, incoming in query:
        entries[product_id].append(
            {
                "warehouse_id": warehouse_id,
                "name": name,
                "type": kind,
                "on_hand": on_hand,
                "reserved": reserved,
                "available": on_hand - reserved,
                "incoming": incoming,
            }
        )
    return entries


_record = compile_serializer(InventoryRecordSchema)


def serialize_record(
    summary: InventorySummary, title: str | None, entries: list[dict[str, Any]]
) -> dict[str, Any]:
    """A SKU's stock record: its summary row, its product's title, its warehouse entries
    (``total_incoming`` is theirs: in transit is not stock of the record's totals)."""
    total_incoming = sum(entry["incoming"] for entry in entries)
    return _record(summary, title=title, warehouses=entries, total_incoming=total_incoming)


def _records():
    """Records with their product's title as ``.title`` (flat, so ``product_id`` stays)."""
    return (
        InventorySummary.select(InventorySummary, Product.title.alias("title"))
        .join(Product)
        .objects()
    )


def _summary_of(tenant_id, sku):
    """The SKU's record row, PRODUCT_NOT_FOUND for an unknown SKU, or INVENTORY_NOT_FOUND
    for a product that has never had stock or a safety stock set."""
    row = (
        _records()
        .where((InventorySummary.tenant == tenant_id) & (InventorySummary.sku == sku))
        .first()
    )
    if row is None:
        find_product(tenant_id, sku)
        raise ApiError("INVENTORY_NOT_FOUND", details={"sku": sku})
    return row


def get_record(tenant_id: str, sku: str) -> dict[str, Any]:
    row = (
        _records()
        .where((InventorySummary.tenant == tenant_id) & (InventorySummary.sku == sku))
        .first()
    )
    if row is None or bundle_ids([row.product_id]):
        # a bundle's record is derived from its components (read-only)
        record = derived_record(find_product(tenant_id, sku))
        if record is not None:
            return serialize_record(record, record["title"], [])
    summary = _summary_of(tenant_id, sku)
    entries = _entries([summary.product_id])[summary.product_id]
    return serialize_record(summary, summary.title, entries)


def list_records(
    tenant_id: str, args: dict[str, Any]
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    query = _records().where(InventorySummary.tenant == tenant_id)
    query = filter_equal(query, InventorySummary, args, ("status", "sku"))
    warehouse_id = args.get("warehouse_id")
    if warehouse_id:
        check_warehouse_filter(tenant_id, warehouse_id)
        stocked = Stock.select(Stock.product).where(Stock.warehouse == warehouse_id)
        query = query.where(InventorySummary.product.in_(stocked))
    sort = args.get("sort") or "sku"
    rows, meta = paginate_args(
        query,
        args,
        sort_field=RECORD_SORTS[sort],
        tiebreak=InventorySummary.sku,
        default_order="asc",
        kind="inventory",
        total=None
        if args.get("sku") or warehouse_id
        else maintained(tenant_id, "inventory", args.get("status") or None),
    )
    entries = _entries([row.product_id for row in rows])
    return [serialize_record(row, row.title, entries[row.product_id]) for row in rows], meta


def set_safety_stock(
    tenant_id: str, sku: str, safety_stock: int, created_by: str
) -> dict[str, Any]:
    """Set a SKU's safety stock (creating its inventory record if needed)."""

    def apply():
        with write_transaction():
            product_id = find_product(tenant_id, sku)["id"]
            if bundle_ids([product_id]):
                raise bundle_stock_error(sku)
            ledger = StockLedger(tenant_id, created_by)
            ledger.lock({product_id: sku}, warehouse_ids=(), create=())
            summary = ledger.summaries.get(product_id)
            if summary is None:
                _create_empty_summary(tenant_id, product_id, sku)
                ledger.lock({product_id: sku}, warehouse_ids=())
                summary = ledger.summaries[product_id]
            ledger.set_safety_stock(summary, safety_stock)
            ledger.flush()

    run_with_retry(apply)
    return get_record(tenant_id, sku)


def _create_empty_summary(tenant_id, product_id, sku):
    now = now_ms()
    (
        InventorySummary.insert(
            product=product_id,
            tenant=tenant_id,
            sku=sku,
            status=compute_status(0, 0),
            created_at=now,
            updated_at=now,
        )
        .on_conflict_ignore()
        .execute()
    )


# -- setting stock (PUT and bulk) --------------------------------------------------------


def _item_error(item, error):
    return {
        "index": item["index"],
        "sku": item.get("sku"),
        "code": error.code,
        "message": error.message,
        "details": error.details,
    }


def _apply_set_items(tenant_id, items, created_by):
    """Set on_hand for each item ``{index, sku, warehouse_id, quantity, reason, note}``.

    One transaction for the whole batch. Everything an item needs is read once and locked
    up front (products, warehouses, records, stock rows); each item is then checked and
    applied in memory in request order, and all writes go out together at the end. An
    item that fails changes nothing (its checks run before any change of it), so each
    item is atomic on its own. Returns ``(applied count, errors)``.
    """
    errors = []
    with write_transaction():
        products = _product_ids(tenant_id, {item["sku"] for item in items})
        bundles = bundle_ids(products.values())
        warehouses = lock_warehouses(tenant_id, {item["warehouse_id"] for item in items})
        valid = []
        for item in items:
            error = _precheck(item, products, warehouses, bundles)
            if error is not None:
                errors.append(_item_error(item, error))
            else:
                valid.append(item)
        applied = 0
        if valid:
            ledger = StockLedger(tenant_id, created_by)
            pairs = {(products[i["sku"]], i["warehouse_id"]) for i in valid}
            ledger.lock(
                {products[i["sku"]]: i["sku"] for i in valid},
                warehouse_ids=sorted({w for _, w in pairs}),
                create=pairs,
            )
            for item in valid:
                row = ledger.stocks[(products[item["sku"]], item["warehouse_id"])]
                error = _set_item(ledger, row, item)
                if error is not None:
                    errors.append(_item_error(item, error))
                else:
                    applied += 1
            ledger.flush()
    errors.sort(key=lambda e: e["index"])
    return applied, errors


def _product_ids(tenant_id, skus):
    """``{sku: product id}`` of the tenant's products among ``skus``."""
    skus = sorted(skus)
    products = {}
    for start in range(0, len(skus), 400):
        chunk = skus[start : start + 400]
        for product_id, sku in (
            Product.select(Product.id, Product.sku)
            .where((Product.tenant == tenant_id) & Product.sku.in_(chunk))
            .tuples()
        ):
            products[sku] = product_id
    return products


def _set_item(ledger, row, item):
    """Apply one checked item to its locked stock row in the ledger; the error that
    refuses it (nothing changed), or None."""
    if "delta" in item:
        # relative: applied to the value read under the lock, so two concurrent deltas
        # both count (DESIGN 14)
        error = _delta_error(item, row)
        if error is not None:
            return error
        item["adjustment"] = ledger.change(
            row, "on_hand", row.on_hand + item["delta"], item["reason"], item.get("note")
        )
        return None
    if item["quantity"] < row.reserved:
        return ApiError(
            "NEGATIVE_QUANTITY",
            "On hand cannot be set below the reserved quantity.",
            details={
                "sku": item["sku"],
                "warehouse_id": item["warehouse_id"],
                "quantity": item["quantity"],
                "reserved": row.reserved,
            },
        )
    ledger.change(row, "on_hand", item["quantity"], item["reason"], item.get("note"))
    return None


def _delta_error(item, row):
    """A delta that would take on_hand below what is reserved (or below 0), or above the
    per-row maximum: the item's ApiError; else None."""
    after = row.on_hand + item["delta"]
    details = {
        "sku": item["sku"],
        "warehouse_id": item["warehouse_id"],
        "on_hand": row.on_hand,
        "reserved": row.reserved,
        "delta": item["delta"],
    }
    if after < row.reserved:
        return ApiError(
            "NEGATIVE_QUANTITY",
            "The delta would take on hand below zero or below the reserved quantity.",
            details=details,
        )
    if after > MAX_QUANTITY:
        return validation_error({"delta": [f"On hand would exceed {MAX_QUANTITY}."]})
    return None


def _precheck(item, products, warehouses, bundles=frozenset()):
    """What can be refused before any lock on stock: the item's ApiError or None."""
    if item.get("quantity", 0) < 0:
        return ApiError(
            "NEGATIVE_QUANTITY",
            "The quantity cannot be negative.",
            details={"sku": item["sku"], "quantity": item["quantity"]},
        )
    if item["sku"] not in products:
        return ApiError("PRODUCT_NOT_FOUND", details={"sku": item["sku"]})
    if products[item["sku"]] in bundles:
        return bundle_stock_error(item["sku"])
    warehouse = warehouses.get(item["warehouse_id"])
    if warehouse is None:
        return _warehouse_not_found(item["warehouse_id"])
    if warehouse.is_readonly:
        return ApiError(
            "READONLY_WAREHOUSE",
            f"{warehouse.type} stock is reported by the marketplace and cannot be set.",
            details={"warehouse_id": warehouse.id, "type": warehouse.type},
        )
    if not warehouse.is_active:
        return ApiError("WAREHOUSE_INACTIVE", details={"warehouse_id": warehouse.id})
    return None


def set_stock(tenant_id: str, sku: str, data: dict[str, Any], created_by: str) -> dict[str, Any]:
    """``PUT /api/inventory/:sku``: set on_hand in one warehouse; returns the record."""
    item = {**data, "sku": sku, "index": 0}
    _, errors = run_with_retry(_apply_set_items, tenant_id, [item], created_by)
    if errors:
        error = errors[0]
        raise ApiError(error["code"], error["message"], error["details"])
    return get_record(tenant_id, sku)


def adjust_stock(tenant_id: str, sku: str, data: dict[str, Any], created_by: str) -> dict[str, Any]:
    """``POST /api/inventory/:sku/adjustments``: add ``delta`` to on_hand in one warehouse,
    atomically (the current value is read under the row's lock); returns the adjustment."""
    item = {**data, "sku": sku, "index": 0}
    _, errors = run_with_retry(_apply_set_items, tenant_id, [item], created_by)
    if errors:
        error = errors[0]
        raise ApiError(error["code"], error["message"], error["details"])
    return serialize_adjustment(item["adjustment"])


def bulk_set_stock(tenant_id: str, items: list[dict[str, Any]], created_by: str) -> dict[str, Any]:
    """Set on_hand (``quantity``) or change it (``delta``) for up to 500 items, each on its
    own; report per item."""
    prechecked = [item for item in items if "error" not in item]
    invalid = [
        {"index": item["index"], "sku": item.get("sku"), **item["error"]}
        for item in items
        if "error" in item
    ]
    applied, errors = 0, []
    if prechecked:
        applied, errors = run_with_retry(_apply_set_items, tenant_id, prechecked, created_by)
    errors = sorted(invalid + errors, key=lambda e: e["index"])
    return {"updated": applied, "failed": len(errors), "errors": errors}


# -- the ledger --------------------------------------------------------------------------


def list_adjustments(
    tenant_id: str, sku: str, args: dict[str, Any]
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """A SKU's ledger; a bundle's is its own (none since it became one: its orders move
    its components'), as its derived record has no record row."""
    try:
        product_id = _summary_of(tenant_id, sku).product_id
    except ApiError as error:
        product_id = find_product(tenant_id, sku)["id"]
        if error.code != "INVENTORY_NOT_FOUND" or not bundle_ids([product_id]):
            raise
    query = Adjustment.select().where(
        (Adjustment.tenant == tenant_id) & (Adjustment.product == product_id)
    )
    return page_ledger(query, tenant_id, args, "adjustments")


__all__ = [
    "MAX_QUANTITY",
    "adjust_stock",
    "bulk_set_stock",
    "create_warehouse",
    "get_record",
    "list_adjustments",
    "list_records",
    "list_warehouses",
    "set_safety_stock",
    "set_stock",
    "update_warehouse",
]
