"""Collecting orders: one order from a marketplace pull or a file, created or brought up
to date (an upsert by marketplace and external order id), and file imports.

No Flask here. The status rules live in ``state.py``, the stock effects in ``stock.py``.
"""

import hashlib
from decimal import Decimal
from typing import Any

import marshmallow as ma
from peewee import IntegrityError
from ulid import ULID

from ..db import for_update, quantize_money, row_getter, write_transaction
from ..errors import ApiError, validation_error
from ..events import emit
from ..ids import new_id
from ..marketplaces.models import MarketplaceConnection
from ..marketplaces.services import connection_for, record_attempt
from ..timeutil import format_ms, now_ms
from . import state, stock
from .models import OPEN_STATUSES, RESERVING_METHODS, Order, OrderLine, OrderReturn
from .reading import event_body, lines_of
from .schemas import ImportOrderSchema

IGNORED_IMPORT_FIELDS = (
    "id",
    "updated_at",
    "has_returns",
    "stock_shortage",
    "shipment",
    "cancellation",
    "sync_history",
)
_import_schema = ImportOrderSchema()


def validate_incoming(raw: Any) -> dict[str, Any]:
    """Check one order in the import shape; returns the normalized dict or raises
    VALIDATION_ERROR naming the fields."""
    if not isinstance(raw, dict):
        raise validation_error({"_schema": ["An order must be a JSON object."]})
    try:
        data = _import_schema.load(raw)
    except ma.ValidationError as exc:
        raise validation_error(exc.messages) from None
    for name in IGNORED_IMPORT_FIELDS:
        data.pop(name, None)
    lines = []
    for position, line in enumerate(data["line_items"], start=1):
        line.pop("shipped_quantity", None)
        quantity = line["quantity"]
        unit_price, line_total = line.get("unit_price"), line.get("line_total")
        if unit_price is None and line_total is not None:
            unit_price = quantize_money(line_total / quantity)
        unit_price = unit_price if unit_price is not None else Decimal("0.00")
        if line_total is None:
            line_total = quantize_money(unit_price * quantity)
        lines.append(
            {
                "position": position,
                # when the file leaves it out, the line's position is its id
                "external_line_item_id": line.get("external_line_item_id") or str(position),
                "sku": line["sku"],
                "title": line.get("title"),
                "quantity": quantity,
                "unit_price": unit_price,
                "line_total": line_total,
            }
        )
    ids = [line["external_line_item_id"] for line in lines]
    if len(ids) != len(set(ids)):
        raise validation_error(
            {"line_items": ["external_line_item_id values (or positions) must be unique."]}
        )
    data["line_items"] = lines
    if data.get("total_amount") is None:
        data["total_amount"] = sum((line["line_total"] for line in lines), Decimal("0.00"))
    for item in data["returns"]:
        item.pop("id", None)
    return data


def _return_key(item):
    raw = f"{item['sku']}|{item['quantity']}|{item.get('reason')}|{item['created_at']}"
    return hashlib.sha256(raw.encode()).hexdigest()[:32]


def _add_returns(order, items, existing_keys=()):
    added = 0
    seen = set(existing_keys)
    for item in items:
        key = _return_key(item)
        if key in seen:
            continue
        seen.add(key)
        OrderReturn.create(
            id=new_id("return"),
            order=order.id,
            tenant=order.tenant_id,
            dedupe_key=key,
            sku=item["sku"],
            quantity=item["quantity"],
            reason=item.get("reason"),
            reason_text=item.get("reason_text"),
            returned_at=item["created_at"],
            created_at=now_ms(),
        )
        added += 1
    return added


def _line_rows(order, lines):
    return [
        OrderLine(
            id=f"oln_{ULID()}",  # internal rows: never shown, no public prefix
            order=order.id,
            tenant=order.tenant_id,
            position=line["position"],
            external_line_item_id=line["external_line_item_id"],
            sku=line["sku"],
            title=line["title"],
            quantity=line["quantity"],
            unit_price=line["unit_price"],
            line_total=line["line_total"],
            shipped_quantity=0,
        )
        for line in lines
    ]


def upsert_order(
    tenant_id: str,
    raw: Any,
    *,
    source: str,
    connection: MarketplaceConnection | None = None,
    created_by: str | None = None,
) -> tuple[str, str]:
    """Create or update one order from a marketplace or a file, keyed by (marketplace,
    external_order_id); returns ``(outcome, order_id)`` with outcome created, updated or
    unchanged. Each order is applied atomically on its own."""
    if connection is not None and isinstance(raw, dict):
        raw = {"marketplace": connection.marketplace, **raw}
    data = validate_incoming(raw)
    if connection is not None and data["marketplace"] != connection.marketplace:
        raise validation_error(
            {"marketplace": [f"The connection is for {connection.marketplace}."]}
        )
    if connection is None:
        connection = connection_for(tenant_id, data["marketplace"], active_only=False)
    created_by = created_by or f"marketplace:{data['marketplace']}"
    for attempt in range(2):
        try:
            with write_transaction():
                existing = for_update(
                    Order.select().where(
                        (Order.tenant == tenant_id)
                        & (Order.marketplace == data["marketplace"])
                        & (Order.external_order_id == data["external_order_id"])
                    )
                ).first()
                if existing is None:
                    order = _create_order(tenant_id, data, source, connection, created_by)
                    return "created", order.id
                return _update_order(existing, data, source, connection, created_by), existing.id
        except IntegrityError:
            # a concurrent pull created the same order first: apply ours as an update
            if attempt:
                raise
    raise AssertionError("unreachable")


def _record_receipt(order, connection, source, change, created_by):
    record_attempt(
        connection,
        tenant_id=order.tenant_id,
        marketplace=order.marketplace,
        resource_type="order",
        resource_id=order.id,
        operation="order_import" if source == "import" else "order_pull",
        direction="inbound",
        status="succeeded",
        details={"change": change, "status": order.status},
        created_by=created_by,
    )


def _create_order(tenant_id, data, source, connection, created_by):
    now = now_ms()
    order = Order(
        id=new_id("order"),
        tenant=tenant_id,
        connection_id=connection.id if connection is not None else None,
        marketplace=data["marketplace"],
        external_order_id=data["external_order_id"],
        status=data["status"],
        fulfillment_method=data["fulfillment_method"],
        total_amount=data["total_amount"],
        currency=data["currency"],
        placed_at=data["created_at"],
        shipping_address=data.get("shipping_address"),
        shipment=None,
        cancellation=None,
        has_returns=bool(data["returns"]),
        stock_shortage=False,
        reserved={},
        source=source,
        created_at=now,
        updated_at=now,
    )
    order.save(force_insert=True)
    lines = _line_rows(order, data["line_items"])
    OrderLine.bulk_create(lines)
    _add_returns(order, data["returns"])
    # Only an order that is open when it arrives holds stock: one that arrives already
    # shipped, delivered, completed or cancelled is history the stock already reflects.
    if order.status in OPEN_STATUSES and order.fulfillment_method in RESERVING_METHODS:
        targets = stock.targets_of(data["line_items"])
        order.reserved, order.stock_shortage = stock.sync_reservations(
            tenant_id, order.id, {}, targets, created_by
        )
        Order.update(reserved=order.reserved, stock_shortage=order.stock_shortage).where(
            Order.id == order.id
        ).execute()
    emit(tenant_id, "order.created", "order", order.id, event_body(order, lines))
    _record_receipt(order, connection, source, "created", created_by)
    return order


def _same_lines(current, incoming):
    def key(line):
        get = row_getter(line)
        return (
            get("position"),
            get("external_line_item_id"),
            get("sku"),
            get("title"),
            get("quantity"),
            quantize_money(get("unit_price")),
            quantize_money(get("line_total")),
        )

    return [key(line) for line in current] == [key(line) for line in incoming]


def _update_order(order, data, source, connection, created_by):
    """Apply what the marketplace says now; returns updated or unchanged."""
    changes = {}
    was_open = order.status in OPEN_STATUSES
    new_status = _follow_status(order, data, changes)
    lines = _follow_details(order, data, was_open, changes)
    _follow_returns(order, data, changes)
    lines = _follow_stock(order, lines, was_open, new_status, changes, created_by)
    if not changes:
        return "unchanged"
    _write_update(order, lines, was_open, new_status, changes, (connection, source, created_by))
    return "updated"


def _follow_status(order, data, changes):
    """The status the order moves to, with a pending cancellation request decided by it."""
    target = data["status"]
    cancellation = dict(order.cancellation) if order.cancellation else None
    decided = data.get("cancellation_status")
    if cancellation and cancellation.get("status") == "requested":
        if target == "cancelled" or decided == "approved":
            target = "cancelled"
            cancellation.update(status="approved", decided_at=format_ms(now_ms()))
            changes["cancellation"] = cancellation
        elif decided == "rejected":
            cancellation.update(
                status="rejected",
                decided_at=format_ms(now_ms()),
                message="Rejected by the marketplace.",
            )
            changes["cancellation"] = cancellation
    # A status the state machine does not allow from ours (a stale or backward report)
    # is ignored; the rest of the order is still brought up to date.
    if target != order.status and state.can_transition(order.status, target):
        changes["status"] = target
        return target
    return order.status


def _follow_details(order, data, was_open, changes):
    """Lines, fulfilment, amounts, dates and address; returns the order's lines."""
    lines = lines_of(order.id)
    if was_open:
        # lines, and how the order is fulfilled, follow the marketplace while it is open
        if data["fulfillment_method"] != order.fulfillment_method:
            changes["fulfillment_method"] = data["fulfillment_method"]
        if not _same_lines(lines, data["line_items"]):
            OrderLine.delete().where(OrderLine.order == order.id).execute()
            lines = _line_rows(order, data["line_items"])
            OrderLine.bulk_create(lines)
            changes["line_items"] = True
    if quantize_money(order.total_amount) != quantize_money(data["total_amount"]):
        changes["total_amount"] = data["total_amount"]
    if data["currency"] != order.currency:
        changes["currency"] = data["currency"]
    if data["created_at"] != order.placed_at:
        changes["placed_at"] = data["created_at"]
    if data.get("shipping_address") != order.shipping_address:
        changes["shipping_address"] = data.get("shipping_address")
    return lines


def _follow_returns(order, data, changes):
    """Add the returns not recorded yet."""
    known = {
        key
        for (key,) in OrderReturn.select(OrderReturn.dedupe_key)
        .where(OrderReturn.order == order.id)
        .tuples()
    }
    if _add_returns(order, data["returns"], known):
        changes["returns"] = True
        if not order.has_returns:
            changes["has_returns"] = True


def _follow_stock(order, lines, was_open, new_status, changes, created_by):
    """Stock follows the new state; returns the order's lines (shipped quantities)."""
    tenant_id = order.tenant_id
    method = changes.get("fulfillment_method", order.fulfillment_method)
    reserved, shortage = order.reserved or {}, bool(order.stock_shortage)
    targets = stock.targets_of([{"sku": line.sku, "quantity": line.quantity} for line in lines])
    targets = stock.expand(tenant_id, targets)  # bundles hold their components
    if was_open and new_status == "cancelled":
        reserved, shortage = stock.release_all(tenant_id, reserved, created_by), False
    elif was_open and new_status in state.SHIPPED_STATUSES:
        # shipped outside this service (or by the marketplace): everything left
        if method in RESERVING_METHODS:
            reserved, shortage = stock.consume_shipped(
                tenant_id, order.id, reserved, targets, created_by
            )
        OrderLine.update(shipped_quantity=OrderLine.quantity).where(
            OrderLine.order == order.id
        ).execute()
        lines = lines_of(order.id)
    elif new_status in OPEN_STATUSES:
        wanted = targets if method in RESERVING_METHODS else {}
        if any(stock.held_quantity(reserved, sku) != qty for sku, qty in wanted.items()) or any(
            stock.held_quantity(reserved, sku) and sku not in wanted for sku in reserved
        ):
            reserved, shortage = stock.sync_reservations(
                tenant_id, order.id, reserved, wanted, created_by
            )
    if reserved != (order.reserved or {}):
        changes["reserved"] = reserved
    if shortage != bool(order.stock_shortage):
        changes["stock_shortage"] = shortage
    return lines


def _write_update(order, lines, was_open, new_status, changes, receipt):
    """Store the changes, emit the event a user sees, record the receipt."""
    columns = {k: v for k, v in changes.items() if k not in ("line_items", "returns")}
    columns["updated_at"] = now_ms()
    Order.update(**columns).where(Order.id == order.id).execute()
    order = Order.get_by_id(order.id)
    visible = set(changes) - {"reserved"}
    if not visible:
        return
    body = {**event_body(order, lines), "changed_fields": sorted(visible)}
    if "status" in changes and new_status == "cancelled":
        event = "order.cancelled"
    elif "status" in changes and was_open and new_status in state.SHIPPED_STATUSES:
        event = "order.shipped"
    else:
        event = "order.updated"
    emit(order.tenant_id, event, "order", order.id, body)
    connection, source, created_by = receipt
    _record_receipt(order, connection, source, "updated", created_by)


def import_orders(
    tenant_id: str, items: Any, created_by: str = "cli:orders-import"
) -> dict[str, Any]:
    """Import a list of orders: all are checked first (nothing is written when one is not
    valid), then each is applied on its own. Returns the counts and each order's outcome."""
    if not isinstance(items, list):
        raise validation_error({"_schema": ["The file must hold a JSON list of orders."]})
    errors = {}
    for index, raw in enumerate(items):
        try:
            validate_incoming(raw)
        except ApiError as error:
            errors[str(index)] = error.details.get("fields", {})
    if errors:
        raise validation_error(
            errors, "Some orders in the file are not valid; nothing was imported."
        )
    summary = {"created": 0, "updated": 0, "unchanged": 0, "orders": []}
    for raw in items:
        outcome, order_id = upsert_order(tenant_id, raw, source="import", created_by=created_by)
        summary[outcome] += 1
        summary["orders"].append(
            {"id": order_id, "external_order_id": raw["external_order_id"], "outcome": outcome}
        )
    return summary
