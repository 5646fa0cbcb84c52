"""Shipments: confirm one (pushed to the marketplace first) or many, each on its own.

Calls to a marketplace never run inside a database transaction: claim the order (a
concurrent confirmation, cancellation push or shipment gets 409 ``CONCURRENT_UPDATE``
without calling the marketplace), read, call, then apply the outcome and release the claim
in a transaction that checks the state again (the lease may have run out meanwhile).
"""

import hashlib
import json
from typing import Any

from ..claims import claimed
from ..config import current_config
from ..db import write_transaction
from ..errors import ApiError, validation_error
from ..events import emit
from ..marketplaces.calls import call_marketplace
from ..marketplaces.limits import deadline_scope, outer_deadline_passed
from ..marketplaces.services import require_connection
from ..timeutil import format_ms, now_ms
from . import state, stock
from .models import RESERVING_METHODS, Order, OrderLine
from .reading import event_body, find_order, lines_of, serialize_detail, wire_order


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


def _recheck_line(order_id, by_id, item):
    """The re-locked line ``item`` ships, checked again: it still exists, and the quantity
    still fits what the line holds less what has shipped already (a concurrent shipment or
    an order pull may have changed it while the marketplace was answering)."""
    line = by_id.get(item["external_line_item_id"])
    if line is None:
        raise ApiError(
            "INVALID_STATUS_TRANSITION",
            "The order's lines changed while the shipment was confirmed.",
            details={"order_id": order_id},
        )
    left = line.quantity - (line.shipped_quantity or 0)
    if item["quantity"] > left:
        raise ApiError(
            "INVALID_STATUS_TRANSITION",
            "The order's lines changed while the shipment was confirmed: "
            f"line {line.external_line_item_id} has {left} left to ship.",
            details={
                "order_id": order_id,
                "external_line_item_id": line.external_line_item_id,
                "quantity": item["quantity"],
                "line_quantity": line.quantity,
                "shipped_quantity": line.shipped_quantity or 0,
            },
        )
    return line


def confirm_shipment(
    tenant_id: str, order_id: str, data: dict[str, Any], created_by: str
) -> dict[str, Any]:
    """Push the shipment to the marketplace, then mark the order shipped.

    A shipment closes the order's fulfilment: the lines and quantities it lists are
    consumed from stock and whatever else was held is released.
    """
    order = find_order(tenant_id, order_id)
    state.check_can_ship(order.status, order.cancellation, order.id)
    with claimed(tenant_id, order.id, "confirm_shipment") as claim:
        return _confirm_claimed(tenant_id, order_id, data, created_by, claim)


def _shipment_fingerprint(shipment):
    """The same confirmation retried (shipped_date defaults to "now") has the same one."""
    return hashlib.sha256(
        json.dumps(
            [shipment["carrier"], shipment["tracking_number"], shipment["line_items"]],
            sort_keys=True,
        ).encode()
    ).hexdigest()[:16]


def _record_shipped_lines(order_id, lines, shipped_lines):
    """Write each shipped line's shipped quantity (checked again); returns SKU -> units."""
    by_id = {line.external_line_item_id: line for line in lines}
    shipped = {}
    for item in shipped_lines:
        line = _recheck_line(order_id, by_id, item)
        shipped[line.sku] = shipped.get(line.sku, 0) + item["quantity"]
        OrderLine.update(shipped_quantity=item["quantity"]).where(OrderLine.id == line.id).execute()
    return shipped


def _confirm_claimed(tenant_id, order_id, data, created_by, claim):
    # read again under the claim: a confirmation that finished just before it took the
    # claim has shipped the order already
    order = find_order(tenant_id, order_id)
    state.check_can_ship(order.status, order.cancellation, order.id)
    lines = lines_of(order.id)
    shipped_lines = _shipment_lines(order, lines, data.get("line_items"))
    connection = require_connection(tenant_id, order.marketplace)
    shipment = {
        "carrier": data["carrier"],
        "tracking_number": data["tracking_number"],
        "shipped_date": format_ms(data.get("shipped_date") or now_ms()),
        "line_items": shipped_lines,
    }
    # the same confirmation retried (shipped_date defaults to "now") carries the same key
    fingerprint = _shipment_fingerprint(shipment)
    wire = wire_order(order, lines)
    result, _ = call_marketplace(
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
        order = find_order(tenant_id, order_id, lock=True)
        # checked again: the order may have changed while the marketplace was answering
        state.check_can_ship(order.status, order.cancellation, order.id)
        shipped = _record_shipped_lines(order.id, lines_of(order.id), shipped_lines)
        reserved, shortage = order.reserved or {}, False
        if order.fulfillment_method in RESERVING_METHODS:
            reserved, shortage = stock.consume_shipped(
                tenant_id, order.id, reserved, shipped, created_by
            )
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
        lines = lines_of(order.id)
        emit(tenant_id, "order.shipped", "order", order.id, event_body(order, lines))
        claim.release()
    return serialize_detail(order, lines)


def bulk_confirm_shipment(
    tenant_id: str, items: list[dict[str, Any]], created_by: str
) -> dict[str, Any]:
    """Confirm up to 100 shipments, each on its own; report per item.

    ``items`` come from ``http.bulk.load_items``: loaded, or an ``error`` of their own.
    The whole request ends by ``MARKETPLACE_BULK_DEADLINE_SECONDS``: each call's own
    deadline is cut to what is left, and items not reached by then fail with
    ``MARKETPLACE_UNAVAILABLE`` (reason ``BULK_DEADLINE``) without calling the marketplace.
    """
    seconds = float(current_config()["MARKETPLACE_BULK_DEADLINE_SECONDS"])
    with deadline_scope(seconds):
        return _confirm_each(tenant_id, items, created_by, seconds)


def _confirm_each(tenant_id, items, created_by, seconds):
    succeeded, errors = 0, []
    for item in items:
        if "error" in item:
            errors.append({"index": item["index"], "order_id": item["order_id"], **item["error"]})
            continue
        data = {k: v for k, v in item.items() if k not in ("index", "order_id")}
        try:
            if outer_deadline_passed():
                raise ApiError(
                    "MARKETPLACE_UNAVAILABLE",
                    f"The bulk request's deadline of {seconds:g} s passed before this item.",
                    details={"reason": "BULK_DEADLINE", "retry_after": 1},
                )
            confirm_shipment(tenant_id, item["order_id"], data, created_by)
            succeeded += 1
        except ApiError as error:
            errors.append(
                {
                    "index": item["index"],
                    "order_id": item["order_id"],
                    "code": error.code,
                    "message": error.message,
                    "details": error.details,
                }
            )
    return {"succeeded": succeeded, "failed": len(errors), "errors": errors}
