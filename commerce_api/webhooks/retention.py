"""Outbox retention: finished deliveries and fanned-out events older than the retention
age are deleted, in short batches (each its own transaction: SQLite's write lock is never
held for long)."""

from ..db import write_transaction
from ..events.models import Event
from ..sql import Statement
from ..timeutil import now_ms
from .models import WebhookAttempt, WebhookDelivery

BATCH = 2000


def _delete_in_batches(select_ids, delete_rows, cutoff):
    total = 0
    while True:
        with write_transaction():
            found = select_ids.execute({"cutoff": cutoff, "limit": BATCH}).fetchall()
            ids = [row[0] for row in found]
            if ids:
                delete_rows(ids)
        total += len(ids)
        if len(ids) < BATCH:
            return total


_DELETE_ATTEMPTS = Statement(
    "DELETE FROM {A} WHERE {A.delivery_id} IN ({in:ids})", A=WebhookAttempt
)
_DELETE_DELIVERIES = Statement("DELETE FROM {D} WHERE {D.id} IN ({in:ids})", D=WebhookDelivery)
_FINISHED_DELIVERIES = Statement(
    "SELECT {D.id} FROM {D} WHERE {D.finished_at} < {p:cutoff} LIMIT {p:limit}", D=WebhookDelivery
)
_DELETE_EVENTS = Statement("DELETE FROM {E} WHERE {E.id} IN ({in:ids})", E=Event)
# an event still referenced by a delivery (pending, or recent) stays; ``fanned_out_at``
# is the outbox's own column
_OLD_EVENTS = Statement(
    "SELECT {E.id} FROM {E} WHERE fanned_out_at < {p:cutoff} AND NOT EXISTS"
    " (SELECT 1 FROM {D} d WHERE d.{D.event_id} = {E}.{E.id}) LIMIT {p:limit}",
    E=Event,
    D=WebhookDelivery,
)


def purge(retention_days: float, now: int | None = None) -> dict[str, int]:
    """Delete what is older than ``retention_days``; returns the counts deleted."""
    now = now_ms() if now is None else now
    cutoff = now - int(retention_days * 86_400_000)

    def delete_deliveries(ids):
        _DELETE_ATTEMPTS.execute({"ids": ids})
        _DELETE_DELIVERIES.execute({"ids": ids})

    deliveries = _delete_in_batches(_FINISHED_DELIVERIES, delete_deliveries, cutoff)

    def delete_events(ids):
        _DELETE_EVENTS.execute({"ids": ids})

    events = _delete_in_batches(_OLD_EVENTS, delete_events, cutoff)
    return {"deliveries": deliveries, "events": events}
