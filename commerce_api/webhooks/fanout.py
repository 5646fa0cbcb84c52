"""Fan-out: turn outbox events into one delivery per matching active endpoint.

Events are claimed in outbox order (``seq`` on PostgreSQL, ``rowid`` on SQLite) among
those not yet fanned out, and marked in the same transaction as their deliveries are
written, so every event is fanned out exactly once. PostgreSQL: the rows are locked ``FOR
UPDATE SKIP LOCKED``, and one worker of the fleet fans out at a time (a transaction-level
advisory lock, taken without waiting): two workers fanning out overlapping stretches of the
outbox at once could commit a later event's delivery before an earlier one's, and the
per-resource order depends on deliveries appearing in event order. SQLite: the write lock
(BEGIN IMMEDIATE) serializes every writer anyway.
"""

import json
from collections.abc import Sequence

from ..db import db, is_postgres, write_transaction
from ..events.models import Event
from ..ids import new_id
from ..sql import Statement, executemany, insert_statement
from .models import WebhookDelivery, WebhookEndpoint
from .subscriptions import matches

ADVISORY_LOCK_KEY = 0x5745_4248_4F4F_4B31 & 0x7FFF_FFFF_FFFF_FFFF  # "WEBHOOK1"

_DELIVERY_COLUMNS = (
    "id",
    "tenant_id",
    "endpoint_id",
    "event_id",
    "event_type",
    "resource_key",
    "event_seq",
    "status",
    "attempt_count",
    "next_attempt_at",
    "created_at",
)
# ``fanned_out_at`` and ``seq`` are the outbox's own columns (migration 0009), not fields
# of the Event model; ``{order}``: ``event_order_column()``; ``{lock}``: PostgreSQL's
# row locks, skipping the events another transaction holds
_CLAIM = Statement(
    "SELECT {E.id}, {E.tenant_id}, {E.type}, {E.resource_type}, {E.resource_id},"
    " {E.created_at}, {order} FROM {E} WHERE fanned_out_at IS NULL ORDER BY {order}"
    " LIMIT {p:limit}{lock}",
    E=Event,
)
_PROBE = Statement("SELECT 1 FROM {E} WHERE fanned_out_at IS NULL LIMIT 1", E=Event)
_ACTIVE_ENDPOINTS = Statement(
    "SELECT {W.id}, {W.tenant_id}, {W.events}, {W.created_at} FROM {W}"
    " WHERE {W.is_active} = {p:active} AND {W.tenant_id} IN ({in:tenants})"
    " ORDER BY {W.created_at}, {W.id}",
    W=WebhookEndpoint,
)
_MARK_ONE = Statement(
    "UPDATE {E} SET fanned_out_at = {p:now} WHERE {E.id} = {p:id} RETURNING {order}", E=Event
)
_MARK_MANY = Statement("UPDATE {E} SET fanned_out_at = {p:now} WHERE {E.id} IN ({in:ids})", E=Event)


def delivery_row(
    tenant_id: str,
    endpoint_id: str,
    event_id: str,
    event_type: str,
    resource_type: str,
    resource_id: str,
    seq: int,
    now: int,
) -> tuple:
    """The parameters of one new delivery for the ``insert`` statement, due ``now``."""
    return (
        new_id("delivery"),
        tenant_id,
        endpoint_id,
        event_id,
        event_type,
        f"{resource_type}:{resource_id}"[:120],
        seq,
        "pending",
        0,
        now,
        now,
    )


def insert_deliveries(rows: Sequence[tuple]) -> None:
    """Insert rows made by ``delivery_row`` (in the caller's transaction)."""
    if rows:
        executemany(insert_statement(WebhookDelivery, _DELIVERY_COLUMNS), rows)


def event_order_column() -> str:
    """The column giving the outbox order: ``seq`` on PostgreSQL, ``rowid`` on SQLite."""
    return "seq" if is_postgres() else "rowid"


def has_unfanned_events() -> bool:
    """A read-only look: is anything waiting to be fanned out?"""
    return _PROBE.execute().fetchone() is not None


def _active_endpoints(tenant_ids):
    tenants = sorted(tenant_ids)
    rows = _ACTIVE_ENDPOINTS.execute({"active": True, "tenants": tenants}).fetchall()
    by_tenant = {}
    for endpoint_id, tenant_id, events, created_at in rows:
        by_tenant.setdefault(tenant_id, []).append((endpoint_id, json.loads(events), created_at))
    return by_tenant


def mark_fanned_out(event_id: str, now: int) -> int:
    """Mark one event as fanned out (an event meant for one endpoint, written in the
    caller's transaction); returns its place in the outbox order."""
    row = _MARK_ONE.execute({"now": now, "id": event_id}, order=event_order_column()).fetchone()
    return row[0]


def fan_out(limit: int, now: int) -> tuple[int, int]:
    """Fan out up to ``limit`` events; returns ``(events, deliveries)`` counts."""
    if is_postgres():
        parts = {"order": "seq", "lock": " FOR UPDATE SKIP LOCKED"}
    else:
        parts = {"order": "rowid", "lock": ""}
    with write_transaction():
        if is_postgres():
            locked = db.execute_sql(
                "SELECT pg_try_advisory_xact_lock(%s)", (ADVISORY_LOCK_KEY,)
            ).fetchone()[0]
            if not locked:
                return 0, 0  # another worker is fanning out; it takes these too
        events = _CLAIM.execute({"limit": limit}, **parts).fetchall()
        if not events:
            return 0, 0
        endpoints = _active_endpoints({row[1] for row in events})
        rows = []
        for event_id, tenant_id, event_type, resource_type, resource_id, created_at, seq in events:
            for endpoint_id, wanted, endpoint_created in endpoints.get(tenant_id, ()):
                # an event from before the endpoint existed is not sent to it
                if created_at < endpoint_created or not matches(wanted, event_type):
                    continue
                rows.append(
                    delivery_row(
                        tenant_id,
                        endpoint_id,
                        event_id,
                        event_type,
                        resource_type,
                        resource_id,
                        seq,
                        now,
                    )
                )
        insert_deliveries(rows)
        ids = [row[0] for row in events]
        _MARK_MANY.execute({"now": now, "ids": ids})
    return len(events), len(rows)
