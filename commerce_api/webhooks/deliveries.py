"""The delivery log: list, detail with attempts, redeliver. No Flask here."""

from collections.abc import Iterable
from typing import Any

from ..db import first_or_error, write_transaction
from ..errors import ApiError, raises
from ..events import emit
from ..ids import new_id
from ..pagination import filter_equal, paginate_args
from ..shapes import compile_serializer, field_names
from ..timeutil import now_ms
from .fanout import mark_fanned_out
from .models import WebhookAttempt, WebhookDelivery, WebhookEndpoint
from .shapes import DeliveryDetailSchema, DeliverySchema

TEST_MESSAGE = "A test event sent by POST /api/webhooks/{id}/test."

DELIVERY_FIELDS = field_names(DeliverySchema)
_delivery_row = compile_serializer(DeliverySchema)
_delivery_detail = compile_serializer(DeliveryDetailSchema)


def serialize_delivery(
    delivery: WebhookDelivery, attempts: Iterable[WebhookAttempt] | None = None
) -> dict[str, Any]:
    """A delivery as the API shows it (the next attempt only while pending); with its
    attempts on detail."""
    upcoming = delivery.next_attempt_at if delivery.status == "pending" else None
    if attempts is None:
        return _delivery_row(delivery, next_attempt_at=upcoming)
    return _delivery_detail(delivery, next_attempt_at=upcoming, attempts=attempts)


@raises("WEBHOOK_NOT_FOUND")
def _endpoint(tenant_id, endpoint_id):
    endpoint = WebhookEndpoint.get_or_none(
        (WebhookEndpoint.id == endpoint_id) & (WebhookEndpoint.tenant_id == tenant_id)
    )
    if endpoint is None:
        raise ApiError("WEBHOOK_NOT_FOUND", details={"id": endpoint_id})
    return endpoint


@raises("DELIVERY_NOT_FOUND")
def _delivery(tenant_id, endpoint_id, delivery_id, lock=False):
    query = WebhookDelivery.select().where(
        (WebhookDelivery.id == delivery_id)
        & (WebhookDelivery.endpoint_id == endpoint_id)
        & (WebhookDelivery.tenant_id == tenant_id)
    )
    return first_or_error(query, "DELIVERY_NOT_FOUND", {"id": delivery_id}, lock)


@raises(_endpoint, "INVALID_CURSOR")
def list_deliveries(
    tenant_id: str, endpoint_id: str, args: dict[str, Any]
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    _endpoint(tenant_id, endpoint_id)
    query = WebhookDelivery.select().where(
        (WebhookDelivery.endpoint_id == endpoint_id) & (WebhookDelivery.tenant_id == tenant_id)
    )
    query = filter_equal(query, WebhookDelivery, args, ("status",))
    rows, meta = paginate_args(
        query,
        args,
        sort_field=WebhookDelivery.created_at,
        tiebreak=WebhookDelivery.id,
        kind="webhook_deliveries",
        scope={"tenant": tenant_id, "endpoint": endpoint_id, "status": args.get("status")},
    )
    return [serialize_delivery(row) for row in rows], meta


@raises(_endpoint, _delivery)
def get_delivery(tenant_id: str, endpoint_id: str, delivery_id: str) -> dict[str, Any]:
    _endpoint(tenant_id, endpoint_id)
    delivery = _delivery(tenant_id, endpoint_id, delivery_id)
    attempts = list(
        WebhookAttempt.select()
        .where(WebhookAttempt.delivery_id == delivery.id)
        .order_by(WebhookAttempt.attempted_at, WebhookAttempt.id)
    )
    return serialize_delivery(delivery, attempts)


@raises("WEBHOOK_DISABLED")
def _check_active(endpoint, action):
    if not endpoint.is_active:
        raise ApiError(
            "WEBHOOK_DISABLED",
            f"The endpoint is disabled; activate it (PATCH is_active) to {action}.",
            details={"id": endpoint.id, "disabled_reason": endpoint.disabled_reason},
        )
    return endpoint


def _queue_delivery(endpoint, event_id, event_type, event_seq, now, redelivery_of=None):
    """A delivery sent at once and on its own: it neither waits for nor holds back the
    resource's other deliveries."""
    return WebhookDelivery.create(
        id=new_id("delivery"),
        tenant_id=endpoint.tenant_id,
        endpoint_id=endpoint.id,
        event_id=event_id,
        event_type=event_type,
        resource_key=None,
        event_seq=event_seq,
        status="pending",
        attempt_count=0,
        next_attempt_at=now,
        redelivery_of=redelivery_of,
        created_at=now,
    )


@raises(_endpoint, _delivery, _check_active)
def redeliver(tenant_id: str, endpoint_id: str, delivery_id: str) -> dict[str, Any]:
    """Queue a new delivery of the same event to the same endpoint."""
    now = now_ms()
    with write_transaction():
        endpoint = _endpoint(tenant_id, endpoint_id)
        original = _delivery(tenant_id, endpoint_id, delivery_id, lock=True)
        _check_active(endpoint, "redeliver")
        delivery = _queue_delivery(
            endpoint, original.event_id, original.event_type, original.event_seq, now, original.id
        )
    return serialize_delivery(delivery, [])


@raises(_endpoint, _check_active)
def send_test(tenant_id: str, endpoint_id: str) -> dict[str, Any]:
    """Queue one ``webhook.test`` event for this endpoint alone (whatever its ``events``);
    returns ``{delivery_id}``."""
    now = now_ms()
    with write_transaction():
        endpoint = _check_active(_endpoint(tenant_id, endpoint_id), "test it")
        data = {"webhook_id": endpoint.id, "message": TEST_MESSAGE.format(id=endpoint.id)}
        event_id = emit(tenant_id, "webhook.test", "webhook", endpoint.id, data)
        seq = mark_fanned_out(event_id, now)  # never fanned out to other endpoints
        delivery = _queue_delivery(endpoint, event_id, "webhook.test", seq, now)
    return {"delivery_id": delivery.id}


def fail_pending(endpoint_id: str, reason: str, now: int) -> int:
    """End the endpoint's pending deliveries that no worker is sending (in the caller's
    transaction); one being sent is recorded when it returns, and not sent again."""
    return (
        WebhookDelivery.update(
            status="failed",
            last_error=reason,
            finished_at=now,
            next_attempt_at=None,
        )
        .where(
            (WebhookDelivery.endpoint_id == endpoint_id)
            & (WebhookDelivery.status == "pending")
            & (WebhookDelivery.lease_until.is_null() | (WebhookDelivery.lease_until < now))
        )
        .execute()
    )
