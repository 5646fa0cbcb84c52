"""Cancellation: a request is recorded, pushed to the marketplace by the
``order_cancellation`` job, and the marketplace's decision applied.

The job claims the order before it asks the marketplace (claim before push, as shipments
do): a shipment confirmation meanwhile gets 409 ``CONCURRENT_UPDATE``, and so does a
cancellation request while a shipment is being pushed."""

from typing import Any

from ..claims import claimed, refuse_if_claimed
from ..db import write_transaction
from ..errors import ApiError
from ..events import emit
from ..jobs.models import Job
from ..jobs.services import enqueue_job, tenant_first
from ..marketplaces.calls import call_marketplace
from ..marketplaces.services import require_connection
from ..timeutil import format_ms, now_ms
from . import state, stock
from .models import Order
from .reading import event_body, find_order, lines_of, serialize_detail, wire_order


def request_cancellation(
    tenant_id: str, order_id: str, reason: str, created_by: str
) -> dict[str, Any]:
    """Record a cancellation request and queue its push to the marketplace (202)."""
    with tenant_first(tenant_id):  # the tenant row before the order (one lock order)
        order = find_order(tenant_id, order_id, lock=True)
        state.check_can_request_cancellation(order.status, order.id)
        refuse_if_claimed(order.id)  # a shipment (or this request's push) is in flight
        current = order.cancellation or {}
        if current.get("status") == "requested":
            job = Job.get_or_none(Job.id == current.get("job_id"))
            if job is not None and job.status in ("queued", "running"):
                # already on its way to the marketplace: asking again changes nothing
                return serialize_detail(order)
        require_connection(tenant_id, order.marketplace)
        job = enqueue_job(
            tenant_id,
            "order_cancellation",
            {"order_id": order.id},
            created_by=created_by,
            internal=True,
            check_capacity=True,
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
        lines = lines_of(order.id)
        emit(
            tenant_id,
            "order.cancellation_requested",
            "order",
            order.id,
            event_body(order, lines),
        )
    return serialize_detail(order, lines)


def push_cancellation(
    tenant_id: str, order_id: str, job_id: str, created_by: str
) -> dict[str, Any]:
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
    connection = require_connection(tenant_id, order.marketplace)
    # the job's own token: a retried attempt takes back the claim its killed one left
    with claimed(tenant_id, order.id, "request_cancellation", token=f"job:{job_id}") as claim:
        return _push_claimed(tenant_id, order_id, job_id, created_by, connection, claim)


def _push_claimed(tenant_id, order_id, job_id, created_by, connection, claim):
    order = Order.get_by_id(order_id)
    cancellation = order.cancellation or {}
    if cancellation.get("status") != "requested" or cancellation.get("job_id") not in (
        None,
        job_id,
    ):
        return {"order_id": order_id, "outcome": "skipped", "reason": "no request pending"}
    wire = {**wire_order(order, lines_of(order.id)), "requested_at": cancellation["requested_at"]}
    try:
        answer, _ = call_marketplace(
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
    return apply_cancellation_decision(tenant_id, order_id, answer, created_by, claim)


def apply_cancellation_decision(
    tenant_id: str, order_id: str, answer: dict[str, Any], created_by: str, claim: Any = None
) -> dict[str, Any]:
    """Apply the marketplace's answer to a pending cancellation request (and release the
    ``claim`` the push held, in the same transaction)."""
    decision = answer.get("status")
    if decision == "pending":
        return {"order_id": order_id, "outcome": "pending"}
    with write_transaction():
        if claim is not None:
            claim.release()
        order = find_order(tenant_id, order_id, lock=True)
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
        body = event_body(order, lines_of(order.id))
        if event == "order.updated":
            body["changed_fields"] = ["cancellation"]
        emit(tenant_id, event, "order", order.id, body)
    return {
        "order_id": order_id,
        "outcome": cancellation["status"],
        "order_status": order.status,
    }
