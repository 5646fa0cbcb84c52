"""Reading orders: serialization (lists, details, events, what a connector is told) and
the order reads and list."""

from collections.abc import Sequence
from typing import Any

from ..db import first_or_error
from ..marketplaces.services import attempts_for
from ..pagination import filter_date_range, filter_equal, paginate_args
from ..shapes import compile_serializer, field_names
from ..totals import maintained
from .models import Order, OrderLine, OrderReturn
from .shapes import LineItemSchema, OrderDetailSchema, OrderSchema, ReturnSchema

ORDER_FIELDS = field_names(OrderSchema)
DETAIL_FIELDS = field_names(OrderDetailSchema)
SORT_FIELDS = {"created_at": Order.placed_at, "updated_at": Order.updated_at}


# Serialization --------------------------------------------------------------------------


serialize_line = compile_serializer(LineItemSchema)
serialize_return = compile_serializer(ReturnSchema)
_order = compile_serializer(OrderSchema)
# sync_history comes serialized by attempts_for (a sync attempt's error is two columns)
_detail = compile_serializer(OrderDetailSchema, convert={"sync_history": None})


def serialize_order(order: Order, lines: Sequence[OrderLine]) -> dict[str, Any]:
    """An order as lists and events show it."""
    return _order(order, line_items=lines)


def event_body(order: Order, lines: Sequence[OrderLine]) -> dict[str, Any]:
    return {
        **serialize_order(order, lines),
        "shipment": order.shipment,
        "cancellation": order.cancellation,
    }


def lines_of(order_id: str) -> list[OrderLine]:
    return list(OrderLine.select().where(OrderLine.order == order_id).order_by(OrderLine.position))


def serialize_detail(order: Order, lines: Sequence[OrderLine] | None = None) -> dict[str, Any]:
    lines = lines_of(order.id) if lines is None else lines
    returns = (
        OrderReturn.select()
        .where(OrderReturn.order == order.id)
        .order_by(OrderReturn.returned_at, OrderReturn.id)
    )
    return _detail(
        order,
        line_items=lines,
        returns=returns,
        sync_history=attempts_for(order.tenant_id, "order", order.id),
    )


def wire_order(order: Order, lines: Sequence[OrderLine]) -> dict[str, Any]:
    """What a connector is told about an order."""
    return {
        "id": order.id,
        "external_order_id": order.external_order_id,
        "marketplace": order.marketplace,
        "status": order.status,
        "fulfillment_method": order.fulfillment_method,
        "line_items": [
            {
                "external_line_item_id": line.external_line_item_id,
                "sku": line.sku,
                "quantity": line.quantity,
            }
            for line in lines
        ],
    }


# Reading --------------------------------------------------------------------------------


def find_order(tenant_id: str, order_id: str, lock: bool = False) -> Order:
    query = Order.select().where((Order.id == order_id) & (Order.tenant == tenant_id))
    return first_or_error(query, "ORDER_NOT_FOUND", {"order_id": order_id}, lock)


def get_order(tenant_id: str, order_id: str) -> dict[str, Any]:
    return serialize_detail(find_order(tenant_id, order_id))


LOOKUPS = ("external_order_id", "sku", "updated_after")
# a SKU on at most this many order lines is looked up line first (see _tenant_orders)
FEW_LINES = 1000


def _lines_with_sku(tenant_id, sku):
    return OrderLine.select(OrderLine.order).where(
        (OrderLine.tenant == tenant_id) & (OrderLine.sku == sku)
    )


def _tenant_orders(tenant_id, args):
    """The tenant's orders, the plan driven by a look-up that matches few rows.

    Without statistics SQLite prefers walking the tenant's orders in the list's order and
    testing each, to sorting a few rows: linear in the tenant's orders (70 ms for a
    marketplace order number among 200,000). For a marketplace order number, or a SKU on
    few lines, the tenant is compared as ``tenant_id || ''``, which still keeps the rows
    to the tenant but takes the tenant-first indexes out of the planner's choice, so it
    reads ``order (external_order_id, tenant_id)`` or the SKU's lines and sorts what it
    found (0.1-0.2 ms). A SKU on many lines keeps the walk: matches are dense there."""
    few = bool(args.get("external_order_id"))
    if not few and args.get("sku"):
        few = _lines_with_sku(tenant_id, args["sku"]).limit(FEW_LINES + 1).count() <= FEW_LINES
    tenant = Order.tenant.concat("") if few else Order.tenant
    return Order.select().where(tenant == tenant_id)


def _filter_lookups(query, tenant_id, args):
    """The daily look-ups: the marketplace's order number, a SKU, changes since a time."""
    if args.get("external_order_id"):
        query = query.where(Order.external_order_id == args["external_order_id"])
    if args.get("sku"):
        query = query.where(Order.id.in_(_lines_with_sku(tenant_id, args["sku"])))
    if args.get("updated_after") is not None:
        query = query.where(Order.updated_at >= args["updated_after"])
    return query


def list_orders(
    tenant_id: str, args: dict[str, Any]
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    query = _tenant_orders(tenant_id, args)
    query = filter_equal(query, Order, args, ("status", "marketplace", "fulfillment_method"))
    query = filter_date_range(query, Order.placed_at, args)
    if args.get("has_returns") is not None:
        query = query.where(Order.has_returns == bool(args["has_returns"]))
    query = _filter_lookups(query, tenant_id, args)
    other_filters = ("marketplace", "fulfillment_method", "start_date", "end_date", *LOOKUPS)
    total = None  # a filter besides status: counted, bounded
    if args.get("has_returns") is None and not any(
        args.get(name) is not None for name in other_filters
    ):
        total = maintained(tenant_id, "orders", args.get("status") or None)
    rows, meta = paginate_args(
        query,
        args,
        sort_field=SORT_FIELDS[args.get("sort") or "created_at"],
        tiebreak=Order.id,
        kind="orders",
        total=total,
        # a cursor only continues the query (tenant and filters) that issued it
        scope=[tenant_id]
        + [
            args.get(name)
            for name in (
                "status",
                "marketplace",
                "fulfillment_method",
                "start_date",
                "end_date",
                "has_returns",
                *LOOKUPS,
            )
        ],
    )
    lines = {}
    if rows:
        for line in (
            OrderLine.select()
            .where(OrderLine.order.in_([row.id for row in rows]))
            .order_by(OrderLine.order, OrderLine.position)
        ):
            lines.setdefault(line.order_id, []).append(line)
    return [serialize_order(row, lines.get(row.id, [])) for row in rows], meta
