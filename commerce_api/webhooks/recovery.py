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

from collections.abc import Callable
from typing import Any

from ..db import for_update, write_transaction
from ..errors import ApiError, raises
from ..events.models import Event
from ..sql import Statement
from ..timeutil import format_ms, now_ms
from .fanout import delivery_row, event_order_column, insert_deliveries
from .models import WebhookDelivery, WebhookEndpoint
from .subscriptions import matches, require_event_scopes

# ``{order}``: ``event_order_column()``; ``fanned_out_at`` is the outbox's own column
_CANDIDATES = Statement(
    "SELECT e.{E.id}, e.{E.type}, e.{E.resource_type}, e.{E.resource_id}, e.{order},"
    " (SELECT d.{D.id} FROM {D} d WHERE d.{D.endpoint_id} = {p:endpoint}"
    " AND d.{D.event_id} = e.{E.id} AND d.{D.status} = 'pending' LIMIT 1)"
    " FROM {E} e WHERE e.{E.tenant_id} = {p:tenant} AND e.{E.created_at} >= {p:start}"
    " AND e.fanned_out_at IS NOT NULL AND NOT EXISTS (SELECT 1 FROM {D} s"
    " WHERE s.{D.endpoint_id} = {p:endpoint} AND s.{D.event_id} = e.{E.id}"
    " AND s.{D.status} = 'succeeded')"
    " ORDER BY e.{order}",
    E=Event,
    D=WebhookDelivery,
)
# ``recover_now``: the delivery's own column (migration 0036)
_MARK_RECOVER_NOW = Statement(
    "UPDATE {D} SET recover_now = {p:recover} WHERE {D.id} IN ({in:ids})"
    " AND {D.status} = 'pending' AND {D.lease_until} >= {p:now}",
    D=WebhookDelivery,
)
_DUE_NOW = Statement(
    "UPDATE {D} SET {D.next_attempt_at} = {p:now} WHERE {D.id} IN ({in:ids})"
    " AND {D.status} = 'pending' AND {D.next_attempt_at} > {p:now}"
    " AND ({D.lease_until} IS NULL OR {D.lease_until} < {p:now})",
    D=WebhookDelivery,
)


def _candidates(tenant_id: str, endpoint_id: str, start: int) -> list[tuple]:
    """Events since ``start`` the endpoint has not received, with a pending delivery's id."""
    return _CANDIDATES.execute(
        {"endpoint": endpoint_id, "tenant": tenant_id, "start": start}, order=event_order_column()
    ).fetchall()


def _make_due(delivery_ids: list[str], now: int) -> None:
    """Pending deliveries become due now; one being sent is marked, so that a failure of
    the attempt in flight makes it due at once instead of putting it back on the schedule
    (marked first: on PostgreSQL an outcome recorded in between is then seen by the
    second statement, as a delivery no longer being sent)."""
    for start in range(0, len(delivery_ids), 500):
        chunk = delivery_ids[start : start + 500]
        _MARK_RECOVER_NOW.execute({"recover": True, "ids": chunk, "now": now})
        _DUE_NOW.execute({"now": now, "ids": chunk})


@raises("WEBHOOK_NOT_FOUND", "WEBHOOK_DISABLED", "INSUFFICIENT_SCOPE")
def recover(
    tenant_id: str,
    endpoint_id: str,
    since: int,
    retention_days: float,
    now: int | None = None,
    has_scope: Callable[[str], bool] | None = None,
) -> dict[str, Any]:
    """Queue what the endpoint missed since ``since`` (epoch ms); returns the summary.

    ``has_scope``: the caller's scope check; it must read every event the endpoint
    subscribes to (``endpoints.require_event_scopes``)."""
    now = now_ms() if now is None else now
    with write_transaction():
        query = WebhookEndpoint.select().where(
            (WebhookEndpoint.id == endpoint_id) & (WebhookEndpoint.tenant_id == tenant_id)
        )
        endpoint = for_update(query).first()  # one recovery of an endpoint at a time
        if endpoint is None:
            raise ApiError("WEBHOOK_NOT_FOUND", details={"id": endpoint_id})
        require_event_scopes(endpoint.events, has_scope)
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
