"""Reading the ledger: the filters of every adjustments list, and the tenant's whole
ledger (``GET /api/inventory/adjustments``). No Flask here."""

from typing import Any

from peewee import ModelSelect

from ..errors import ApiError
from ..pagination import filter_date_range, paginate_args
from ..products.models import Product
from .ledger import serialize_adjustment
from .models import Adjustment, Warehouse

# the filters of the per-SKU list; the tenant-wide one adds ``sku``
LEDGER_FILTERS = ("quantity_type", "warehouse_id", "reason", "start_date", "end_date")


def check_warehouse_filter(tenant_id: str, warehouse_id: str | None) -> None:
    """A ``warehouse_id`` filter must name one of the tenant's warehouses (404 otherwise)."""
    if warehouse_id is None:
        return
    exists = (
        Warehouse.select(Warehouse.id)
        .where((Warehouse.tenant == tenant_id) & (Warehouse.id == warehouse_id))
        .exists()
    )
    if not exists:
        raise ApiError("WAREHOUSE_NOT_FOUND", details={"warehouse_id": warehouse_id})


def filter_ledger(query: ModelSelect, tenant_id: str, args: dict[str, Any]) -> ModelSelect:
    """``quantity_type`` (default ``on_hand``), ``warehouse_id``, ``reason`` and the
    inclusive ``start_date`` / ``end_date``."""
    quantity_type = args.get("quantity_type") or "on_hand"
    if quantity_type != "all":
        query = query.where(Adjustment.quantity_type == quantity_type)
    if args.get("warehouse_id"):
        check_warehouse_filter(tenant_id, args["warehouse_id"])
        query = query.where(Adjustment.warehouse == args["warehouse_id"])
    if args.get("reason"):
        query = query.where(Adjustment.reason == args["reason"])
    return filter_date_range(query, Adjustment.created_at, args)


def list_tenant_adjustments(
    tenant_id: str, args: dict[str, Any]
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """Every adjustment of the tenant, newest first; an unknown ``sku`` lists nothing."""
    query = Adjustment.select().where(Adjustment.tenant == tenant_id)
    if args.get("sku"):
        # by product id, a scalar subquery (SKUs are unique per tenant): the planner then
        # walks (tenant, product, created_at, id); with ``IN`` it would walk every product's
        product = Product.select(Product.id).where(
            (Product.tenant == tenant_id) & (Product.sku == args["sku"])
        )
        query = query.where(Adjustment.product == product)
    scope = [tenant_id, args.get("sku")] + [args.get(name) for name in LEDGER_FILTERS]
    return page_ledger(query, tenant_id, args, "tenant_adjustments", scope)


def page_ledger(
    query: ModelSelect,
    tenant_id: str,
    args: dict[str, Any],
    kind: str,
    scope: list[Any] | None = None,
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """One page of ``query``'s adjustments with the ledger filters, newest first."""
    rows, meta = paginate_args(
        filter_ledger(query, tenant_id, args),
        args,
        sort_field=Adjustment.created_at,
        tiebreak=Adjustment.id,
        kind=kind,
        scope=scope,
    )
    return [serialize_adjustment(row) for row in rows], meta
