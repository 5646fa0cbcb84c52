"""Outbox retention: finished deliveries and fanned-out events older than the retention
age are deleted, in short batches (each its own transaction: SQLite's write lock is never
held for long)."""

from ..db import db, write_transaction
from ..timeutil import now_ms

BATCH = 2000


def _delete_in_batches(select_ids, delete_rows, cutoff):
    total = 0
    while True:
        with write_transaction():
            ids = [row[0] for row in db.execute_sql(select_ids, (cutoff, BATCH)).fetchall()]
            if ids:
                delete_rows(ids)
        total += len(ids)
        if len(ids) < BATCH:
            return total


def _in(ids):
    return ", ".join([db.param] * len(ids))


def purge(retention_days: float, now: int | None = None) -> dict[str, int]:
    """Delete what is older than ``retention_days``; returns the counts deleted."""
    now = now_ms() if now is None else now
    cutoff = now - int(retention_days * 86_400_000)
    p = db.param

    def delete_deliveries(ids):
        db.execute_sql(f"DELETE FROM webhook_attempt WHERE delivery_id IN ({_in(ids)})", ids)
        db.execute_sql(f"DELETE FROM webhook_delivery WHERE id IN ({_in(ids)})", ids)

    deliveries = _delete_in_batches(
        f"SELECT id FROM webhook_delivery WHERE finished_at < {p} LIMIT {p}",
        delete_deliveries,
        cutoff,
    )

    def delete_events(ids):
        db.execute_sql(f'DELETE FROM "event" WHERE id IN ({_in(ids)})', ids)

    # an event still referenced by a delivery (pending, or recent) stays
    events = _delete_in_batches(
        f'SELECT id FROM "event" WHERE fanned_out_at < {p} AND NOT EXISTS'
        " (SELECT 1 FROM webhook_delivery d WHERE d.event_id = event.id)"
        f" LIMIT {p}",
        delete_events,
        cutoff,
    )
    return {"deliveries": deliveries, "events": events}
