"""Order rules: collect (pull, import), read, list, ship, cancel.

No Flask here. The status rules live in ``state.py``, the stock effects in ``stock.py``.
Calls to a marketplace never run inside a database transaction: read, call, then apply
the outcome in a transaction that checks the state again.
"""

import hashlib
import json
import logging
from decimal import Decimal

import marshmallow as ma
from peewee import IntegrityError
from ulid import ULID

from ..db import for_update, quantize_money, write_transaction
from ..errors import ApiError, validation_error
from ..events import emit
from ..ids import new_id
from ..marketplaces import services as marketplaces
from ..pagination import filter_date_range, paginate
from ..timeutil import format_ms, now_ms
from . import state, stock
from .models import OPEN_STATUSES, RESERVING_METHODS, Order, OrderLine, OrderReturn
from .schemas import BulkShipmentItemSchema, ImportOrderSchema

log = logging.getLogger("commerce_api.orders")

ORDER_FIELDS = (
    "id",
    "external_order_id",
    "marketplace",
    "status",
    "fulfillment_method",
    "total_amount",
    "currency",
    "created_at",
    "updated_at",
    "has_returns",
    "stock_shortage",
    "line_items",
)
DETAIL_FIELDS = ORDER_FIELDS + (
    "shipping_address",
    "shipment",
    "cancellation",
    "returns",
    "sync_history",
)
SORT_FIELDS = {"created_at": Order.placed_at, "updated_at": Order.updated_at}
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
_bulk_item_schema = BulkShipmentItemSchema()


# Serialization --------------------------------------------------------------------------


def _money(value):
    return None if value is None else float(value)


def serialize_line(line):
    return {
        "external_line_item_id": line.external_line_item_id,
        "sku": line.sku,
        "title": line.title,
        "quantity": line.quantity,
        "unit_price": _money(line.unit_price),
        "line_total": _money(line.line_total),
        "shipped_quantity": line.shipped_quantity,
    }


def serialize_return(row):
    return {
        "id": row.id,
        "sku": row.sku,
        "quantity": row.quantity,
        "reason": row.reason,
        "reason_text": row.reason_text,
        "created_at": format_ms(row.returned_at),
    }


def serialize_order(order, lines):
    """An order as lists and events show it."""
    return {
        "id": order.id,
        "external_order_id": order.external_order_id,
        "marketplace": order.marketplace,
        "status": order.status,
        "fulfillment_method": order.fulfillment_method,
        "total_amount": _money(order.total_amount),
        "currency": order.currency,
        "created_at": format_ms(order.placed_at),
        "updated_at": format_ms(order.updated_at),
        "has_returns": bool(order.has_returns),
        "stock_shortage": bool(order.stock_shortage),
        "line_items": [serialize_line(line) for line in lines],
    }


def _event_body(order, lines):
    return {
        **serialize_order(order, lines),
        "shipment": order.shipment,
        "cancellation": order.cancellation,
    }


def _lines_of(order_id):
    return list(OrderLine.select().where(OrderLine.order == order_id).order_by(OrderLine.position))


def serialize_detail(order, lines=None):
    lines = _lines_of(order.id) if lines is None else lines
    returns = (
        OrderReturn.select()
        .where(OrderReturn.order == order.id)
        .order_by(OrderReturn.returned_at, OrderReturn.id)
    )
    return {
        **serialize_order(order, lines),
        "shipping_address": order.shipping_address,
        "shipment": order.shipment,
        "cancellation": order.cancellation,
        "returns": [serialize_return(row) for row in returns],
        "sync_history": marketplaces.attempts_for(order.tenant_id, "order", order.id),
    }


def _wire_order(order, lines):
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


def _find(tenant_id, order_id, lock=False):
    query = Order.select().where((Order.id == order_id) & (Order.tenant == tenant_id))
    order = (for_update(query) if lock else query).first()
    if order is None:
        raise ApiError("ORDER_NOT_FOUND", details={"order_id": order_id})
    return order


def get_order(tenant_id, order_id):
    return serialize_detail(_find(tenant_id, order_id))


def list_orders(tenant_id, args):
    query = Order.select().where(Order.tenant == tenant_id)
    for name in ("status", "marketplace", "fulfillment_method"):
        if args.get(name):
            query = query.where(getattr(Order, name) == args[name])
    query = filter_date_range(query, Order.placed_at, args)
    if args.get("has_returns") is not None:
        query = query.where(Order.has_returns == bool(args["has_returns"]))
    rows, meta = paginate(
        query,
        sort_field=SORT_FIELDS[args.get("sort") or "created_at"],
        tiebreak=Order.id,
        order=args.get("order") or "desc",
        limit=args["limit"],
        cursor=args.get("cursor"),
        kind="orders",
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


# Collecting orders (pulls and imports) ---------------------------------------------------


def validate_incoming(raw):
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


def upsert_order(tenant_id, raw, *, source, connection=None, created_by=None):
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
        connection = marketplaces.connection_for(tenant_id, data["marketplace"], active_only=False)
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
    marketplaces.record_attempt(
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
    emit(tenant_id, "order.created", "order", order.id, _event_body(order, lines))
    _record_receipt(order, connection, source, "created", created_by)
    return order


def _same_lines(current, incoming):
    def key(line):
        get = line.get if isinstance(line, dict) else line.__data__.get
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
    tenant_id = order.tenant_id
    lines = _lines_of(order.id)
    changes = {}
    was_open = order.status in OPEN_STATUSES
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
    new_status = order.status
    # A status the state machine does not allow from ours (a stale or backward report)
    # is ignored; the rest of the order is still brought up to date.
    if target != order.status and state.can_transition(order.status, target):
        new_status = changes["status"] = target
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

    # stock follows the new state
    method = changes.get("fulfillment_method", order.fulfillment_method)
    reserved, shortage = order.reserved or {}, bool(order.stock_shortage)
    targets = stock.targets_of([{"sku": line.sku, "quantity": line.quantity} for line in lines])
    if was_open and new_status == "cancelled":
        reserved, shortage = stock.release_all(tenant_id, reserved, created_by), False
    elif was_open and new_status in state.SHIPPED_STATUSES:
        # shipped outside this service (or by the marketplace): everything left
        if method in RESERVING_METHODS:
            reserved, shortage = _consume(tenant_id, order.id, reserved, targets, created_by)
        OrderLine.update(shipped_quantity=OrderLine.quantity).where(
            OrderLine.order == order.id
        ).execute()
        lines = _lines_of(order.id)
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
    if not changes:
        return "unchanged"

    columns = {k: v for k, v in changes.items() if k not in ("line_items", "returns")}
    columns["updated_at"] = now_ms()
    Order.update(**columns).where(Order.id == order.id).execute()
    order = Order.get_by_id(order.id)
    visible = set(changes) - {"reserved"}
    if visible:
        body = {**_event_body(order, lines), "changed_fields": sorted(visible)}
        if "status" in changes and new_status == "cancelled":
            event = "order.cancelled"
        elif "status" in changes and was_open and new_status in state.SHIPPED_STATUSES:
            event = "order.shipped"
        else:
            event = "order.updated"
        emit(tenant_id, event, "order", order.id, body)
        _record_receipt(order, connection, source, "updated", created_by)
    return "updated"


def _consume(tenant_id, order_id, reserved, shipped, created_by):
    """Top the reservation up to what was shipped where stock allows, then consume it."""
    wanted = {
        sku: max(quantity, stock.held_quantity(reserved, sku)) for sku, quantity in shipped.items()
    }
    reserved, _ = stock.sync_reservations(tenant_id, order_id, reserved, wanted, created_by)
    short = any(stock.held_quantity(reserved, sku) < qty for sku, qty in shipped.items())
    return stock.consume_for_shipment(tenant_id, reserved, shipped, created_by), short


def import_orders(tenant_id, items, created_by="cli:orders-import"):
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


# Shipments ------------------------------------------------------------------------------


def _shipment_lines(order, lines, requested):
    """``[{external_line_item_id, quantity}]`` shipped, checked against the order."""
    if requested is None:
        return [
            {"external_line_item_id": line.external_line_item_id, "quantity": line.quantity}
            for line in lines
        ]
    by_id = {line.external_line_item_id: line for line in lines}
    errors, seen = {}, set()
    for index, item in enumerate(requested):
        line = by_id.get(item["external_line_item_id"])
        if line is None:
            errors[str(index)] = {"external_line_item_id": ["Not a line of this order."]}
        elif item["external_line_item_id"] in seen:
            errors[str(index)] = {"external_line_item_id": ["Listed twice."]}
        elif item["quantity"] > line.quantity:
            errors[str(index)] = {"quantity": [f"The line has {line.quantity}."]}
        seen.add(item["external_line_item_id"])
    if errors:
        raise validation_error({"line_items": errors})
    return [
        {"external_line_item_id": item["external_line_item_id"], "quantity": item["quantity"]}
        for item in requested
    ]


def confirm_shipment(tenant_id, order_id, data, created_by):
    """Push the shipment to the marketplace, then mark the order shipped.

    A shipment closes the order's fulfilment: the lines and quantities it lists are
    consumed from stock and whatever else was held is released.
    """
    order = _find(tenant_id, order_id)
    state.check_can_ship(order.status, order.cancellation, order.id)
    lines = _lines_of(order.id)
    shipped_lines = _shipment_lines(order, lines, data.get("line_items"))
    connection = marketplaces.require_connection(tenant_id, order.marketplace)
    shipment = {
        "carrier": data["carrier"],
        "tracking_number": data["tracking_number"],
        "shipped_date": format_ms(data.get("shipped_date") or now_ms()),
        "line_items": shipped_lines,
    }
    # the same confirmation retried (shipped_date defaults to "now") carries the same key
    fingerprint = hashlib.sha256(
        json.dumps(
            [shipment["carrier"], shipment["tracking_number"], shipment["line_items"]],
            sort_keys=True,
        ).encode()
    ).hexdigest()[:16]
    wire = _wire_order(order, lines)
    result, _ = marketplaces.call_marketplace(
        connection,
        "confirm_shipment",
        lambda connector: connector.confirm_shipment(
            wire, {**shipment, "idempotency_key": f"{order.id}:shipment:{fingerprint}"}
        ),
        resource_type="order",
        resource_id=order.id,
        created_by=created_by,
        details={"carrier": shipment["carrier"], "tracking_number": shipment["tracking_number"]},
    )
    with write_transaction():
        order = _find(tenant_id, order_id, lock=True)
        # checked again: the order may have changed while the marketplace was answering
        state.check_can_ship(order.status, order.cancellation, order.id)
        lines = _lines_of(order.id)
        by_id = {line.external_line_item_id: line for line in lines}
        shipped = {}
        for item in shipped_lines:
            line = by_id.get(item["external_line_item_id"])
            if line is None:
                raise ApiError(
                    "INVALID_STATUS_TRANSITION",
                    "The order's lines changed while the shipment was confirmed.",
                    details={"order_id": order.id},
                )
            shipped[line.sku] = shipped.get(line.sku, 0) + item["quantity"]
            OrderLine.update(shipped_quantity=item["quantity"]).where(
                OrderLine.id == line.id
            ).execute()
        reserved, shortage = order.reserved or {}, False
        if order.fulfillment_method in RESERVING_METHODS:
            reserved, shortage = _consume(tenant_id, order.id, reserved, shipped, created_by)
        now = now_ms()
        shipment.update(
            confirmation_id=(result or {}).get("confirmation_id"),
            confirmed_at=format_ms(now),
            confirmed_by=created_by,
        )
        Order.update(
            status="shipped",
            shipment=shipment,
            reserved=reserved,
            stock_shortage=shortage,
            updated_at=now,
        ).where(Order.id == order.id).execute()
        order = Order.get_by_id(order.id)
        lines = _lines_of(order.id)
        emit(tenant_id, "order.shipped", "order", order.id, _event_body(order, lines))
    return serialize_detail(order, lines)


def bulk_confirm_shipment(tenant_id, items, created_by):
    """Confirm up to 100 shipments, each on its own; report per item."""
    succeeded, errors = 0, []
    for index, item in enumerate(items):
        order_id = item.get("order_id") if isinstance(item, dict) else None
        order_id = order_id if isinstance(order_id, str) else None
        try:
            if not isinstance(item, dict):
                raise validation_error({"_schema": ["Not an object."]})
            try:
                data = _bulk_item_schema.load(item)
            except ma.ValidationError as exc:
                raise validation_error(exc.messages, "The item is not valid.") from None
            confirm_shipment(tenant_id, data.pop("order_id"), data, created_by)
            succeeded += 1
        except ApiError as error:
            errors.append(
                {
                    "index": index,
                    "order_id": order_id,
                    "code": error.code,
                    "message": error.message,
                    "details": error.details,
                }
            )
    return {"succeeded": succeeded, "failed": len(errors), "errors": errors}


# Cancellation ---------------------------------------------------------------------------


def request_cancellation(tenant_id, order_id, reason, created_by):
    """Record a cancellation request and queue its push to the marketplace (202)."""
    from ..jobs.models import Job
    from ..jobs.services import enqueue_job

    with write_transaction():
        order = _find(tenant_id, order_id, lock=True)
        state.check_can_request_cancellation(order.status, order.id)
        current = order.cancellation or {}
        if current.get("status") == "requested":
            job = Job.get_or_none(Job.id == current.get("job_id"))
            if job is not None and job.status in ("queued", "running"):
                # already on its way to the marketplace: asking again changes nothing
                return serialize_detail(order)
        marketplaces.require_connection(tenant_id, order.marketplace)
        job = enqueue_job(
            tenant_id,
            "order_cancellation",
            {"order_id": order.id},
            created_by=created_by,
            internal=True,
        )
        now = now_ms()
        cancellation = {
            "status": "requested",
            "reason": reason,
            "requested_at": format_ms(now),
            "requested_by": created_by,
            "decided_at": None,
            "message": None,
            "job_id": job.id,
        }
        Order.update(cancellation=cancellation, updated_at=now).where(
            Order.id == order.id
        ).execute()
        order = Order.get_by_id(order.id)
        lines = _lines_of(order.id)
        emit(
            tenant_id,
            "order.cancellation_requested",
            "order",
            order.id,
            _event_body(order, lines),
        )
    return serialize_detail(order, lines)


def push_cancellation(tenant_id, order_id, job_id, created_by):
    """The ``order_cancellation`` job: ask the marketplace, then apply its decision.

    Returns the outcome; raises ApiError MARKETPLACE_UNAVAILABLE when it cannot be asked.
    """
    order = Order.get_or_none((Order.id == order_id) & (Order.tenant == tenant_id))
    if order is None:
        return {"order_id": order_id, "outcome": "skipped", "reason": "order not found"}
    cancellation = order.cancellation or {}
    if cancellation.get("status") != "requested" or cancellation.get("job_id") not in (
        None,
        job_id,
    ):
        return {"order_id": order_id, "outcome": "skipped", "reason": "no request pending"}
    connection = marketplaces.require_connection(tenant_id, order.marketplace)
    wire = {**_wire_order(order, _lines_of(order.id)), "requested_at": cancellation["requested_at"]}
    try:
        answer, _ = marketplaces.call_marketplace(
            connection,
            "request_cancellation",
            lambda connector: connector.request_cancellation(wire, cancellation["reason"]),
            resource_type="order",
            resource_id=order.id,
            created_by=created_by,
            details={"reason": cancellation["reason"]},
        )
    except ApiError as error:
        if error.code != "MARKETPLACE_REJECTION":
            raise
        # the marketplace refused the request itself: that is its decision
        answer = {"status": "rejected", "message": error.details.get("marketplace_message")}
    return apply_cancellation_decision(tenant_id, order_id, answer, created_by)


def apply_cancellation_decision(tenant_id, order_id, answer, created_by):
    """Apply the marketplace's answer to a pending cancellation request."""
    decision = answer.get("status")
    if decision == "pending":
        return {"order_id": order_id, "outcome": "pending"}
    with write_transaction():
        order = _find(tenant_id, order_id, lock=True)
        cancellation = dict(order.cancellation or {})
        if cancellation.get("status") != "requested":
            return {"order_id": order_id, "outcome": "skipped", "reason": "no request pending"}
        now = now_ms()
        cancellation.update(decided_at=format_ms(now), message=answer.get("message"))
        changes = {"updated_at": now}
        if decision == "approved" and state.can_transition(order.status, "cancelled"):
            cancellation["status"] = "approved"
            changes.update(
                status="cancelled",
                reserved=stock.release_all(tenant_id, order.reserved, created_by),
                stock_shortage=False,
            )
            event = "order.cancelled"
        else:
            cancellation["status"] = "rejected"
            if decision == "approved":
                cancellation["message"] = f"Approved, but the order is already {order.status}."
            event = "order.updated"
        changes["cancellation"] = cancellation
        Order.update(**changes).where(Order.id == order.id).execute()
        order = Order.get_by_id(order.id)
        body = _event_body(order, _lines_of(order.id))
        if event == "order.updated":
            body["changed_fields"] = ["cancellation"]
        emit(tenant_id, event, "order", order.id, body)
    return {
        "order_id": order_id,
        "outcome": cancellation["status"],
        "order_status": order.status,
    }
