"""Recover: send an endpoint what it has not received successfully since a time (Svix's
"recover failed messages since"), for a receiver that was down. No Flask here.

Each matching event since then (within the retention, not before the endpoint existed)
that has no succeeded delivery to the endpoint is delivered once more, and only once:
- a delivery still pending (waiting out its backoff) is made due now, not doubled;
- one being sent right now (leased) is left to its outcome, and marked: if that attempt
  fails, the delivery is due at once (``recover_now``, migration 0036);
- otherwise (failed for good, or never fanned out to this endpoint: it was disabled or
  did not subscribe then) a new delivery is queued, keyed by its resource so that one
  resource's events still go out in event order.
Events not yet fanned out are left to the fan-out, which delivers them anyway.
"""

from typing import Any

from ..db import db, for_update, write_transaction
from ..errors import ApiError
from ..timeutil import format_ms, now_ms
from .endpoints import matches
from .fanout import delivery_row, event_order_column, insert_deliveries
from .models import WebhookEndpoint


def _candidates(tenant_id, endpoint_id, start):
    """Events since ``start`` the endpoint has not received, with a pending delivery's id."""
    p = db.param
    order = event_order_column()
    return db.execute_sql(
        f"SELECT e.id, e.type, e.resource_type, e.resource_id, e.{order},"
        f" (SELECT d.id FROM webhook_delivery d WHERE d.endpoint_id = {p}"
        " AND d.event_id = e.id AND d.status = 'pending' LIMIT 1)"
        f' FROM "event" e WHERE e.tenant_id = {p} AND e.created_at >= {p}'
        " AND e.fanned_out_at IS NOT NULL AND NOT EXISTS (SELECT 1 FROM webhook_delivery s"
        f" WHERE s.endpoint_id = {p} AND s.event_id = e.id AND s.status = 'succeeded')"
        f" ORDER BY e.{order}",
        (endpoint_id, tenant_id, start, endpoint_id),
    ).fetchall()


def _make_due(delivery_ids, now):
    """Pending deliveries become due now; one being sent is marked, so that a failure of
    the attempt in flight makes it due at once instead of putting it back on the schedule
    (marked first: on PostgreSQL an outcome recorded in between is then seen by the
    second statement, as a delivery no longer being sent)."""
    p = db.param
    for start in range(0, len(delivery_ids), 500):
        chunk = delivery_ids[start : start + 500]
        marks = ", ".join([p] * len(chunk))
        db.execute_sql(
            f"UPDATE webhook_delivery SET recover_now = {p} WHERE id IN ({marks})"
            f" AND status = 'pending' AND lease_until >= {p}",
            (True, *chunk, now),
        )
        db.execute_sql(
            f"UPDATE webhook_delivery SET next_attempt_at = {p} WHERE id IN ({marks})"
            f" AND status = 'pending' AND next_attempt_at > {p}"
            f" AND (lease_until IS NULL OR lease_until < {p})",
            (now, *chunk, now, now),
        )


def recover(
    tenant_id: str, endpoint_id: str, since: int, retention_days: float, now: int | None = None
) -> dict[str, Any]:
    """Queue what the endpoint missed since ``since`` (epoch ms); returns the summary."""
    now = now_ms() if now is None else now
    with write_transaction():
        query = WebhookEndpoint.select().where(
            (WebhookEndpoint.id == endpoint_id) & (WebhookEndpoint.tenant_id == tenant_id)
        )
        endpoint = for_update(query).first()  # one recovery of an endpoint at a time
        if endpoint is None:
            raise ApiError("WEBHOOK_NOT_FOUND", details={"id": endpoint_id})
        if not endpoint.is_active:
            raise ApiError(
                "WEBHOOK_DISABLED",
                "The endpoint is disabled; activate it (PATCH is_active) to recover.",
                details={"id": endpoint.id, "disabled_reason": endpoint.disabled_reason},
            )
        # events that happened before the endpoint existed are never sent to it
        start = max(since, now - int(retention_days * 86_400_000), endpoint.created_at)
        pending, rows = [], []
        for event_id, event_type, resource_type, resource_id, seq, delivery_id in _candidates(
            tenant_id, endpoint.id, start
        ):
            # ``webhook.*`` (the test event) goes to one endpoint only, never recovered
            if event_type.startswith("webhook.") or not matches(endpoint.events, event_type):
                continue
            if delivery_id is not None:
                pending.append(delivery_id)
            else:
                rows.append(
                    delivery_row(
                        tenant_id,
                        endpoint.id,
                        event_id,
                        event_type,
                        resource_type,
                        resource_id,
                        seq,
                        now,
                    )
                )
        _make_due(pending, now)
        insert_deliveries(rows)
    return {
        "webhook_id": endpoint.id,
        "since": format_ms(since),
        "queued": len(rows),
        "pending": len(pending),
    }
