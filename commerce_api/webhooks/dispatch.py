"""Claim due deliveries under a lease, and record the outcome of each attempt.

A claimed delivery carries a lease (``lease_until``, ``lease_token``): no other worker
takes it until the lease runs out, and an outcome is recorded only with the token of the
claim, so a worker that lost its lease (it hung, or was presumed dead) records nothing.
A worker killed between sending and recording leaves the lease to run out and the
delivery is sent again: delivery is at-least-once, but never again once a success is
recorded (the claim takes only ``pending`` rows).

Order: a delivery is claimed only when no earlier delivery (by event order) of the same
resource to the same endpoint is still pending: later ones wait, spending no attempts,
while an earlier one is retried, and go on once it succeeded or failed for good.
"""

from dataclasses import dataclass

from ..db import db, is_postgres, write_transaction
from . import deliveries

MAX_RETRY_AFTER_SECONDS = 86_400
MAX_ERROR_LENGTH = 500


@dataclass
class Claimed:
    """A delivery to send now, with what sending it needs."""

    id: str
    token: str
    attempt_count: int
    endpoint_id: str
    url: str
    secret: str
    old_secret: str | None
    is_active: bool
    event_id: str
    event_type: str
    body: bytes | None  # None: the event is gone (purged)


@dataclass
class Outcome:
    """One attempt's result, made by a sending thread."""

    delivery: Claimed
    attempted_at: int
    duration_ms: int
    status_code: int | None = None
    error: str | None = None
    retry_after: float | None = None
    sent: bool = True  # False: not sent at all (endpoint disabled, event gone)

    @property
    def succeeded(self):
        return self.error is None and self.status_code is not None and 200 <= self.status_code < 300


_cache = {}

_DUE = (
    "SELECT d.id FROM webhook_delivery d"
    " WHERE d.status = 'pending' AND d.next_attempt_at <= {p}"
    " AND (d.lease_until IS NULL OR d.lease_until < {p})"
    " AND (d.resource_key IS NULL OR NOT EXISTS ("
    "SELECT 1 FROM webhook_delivery e WHERE e.status = 'pending'"
    " AND e.endpoint_id = d.endpoint_id AND e.resource_key = d.resource_key"
    " AND e.event_seq < d.event_seq))"
    " ORDER BY d.next_attempt_at, d.event_seq LIMIT {p}"
)


def _claim_sql():
    key = id(db.obj)
    sql = _cache.get(key)
    if sql is None:
        p = db.param
        due = _DUE.format(p=p)
        if is_postgres():
            sql = (
                f"WITH due AS MATERIALIZED ({due} FOR UPDATE SKIP LOCKED)"
                f" UPDATE webhook_delivery SET lease_until = {p}, lease_token = {p}"
                " FROM due WHERE webhook_delivery.id = due.id"
                " AND webhook_delivery.status = 'pending' RETURNING webhook_delivery.id"
            )
        else:
            sql = (
                f"UPDATE webhook_delivery SET lease_until = {p}, lease_token = {p}"
                f" WHERE id IN ({due}) AND status = 'pending' RETURNING id"
            )
        _cache[key] = sql
    return sql


def has_due(now):
    """A read-only look: is a delivery due and free? (Spares idle workers the write lock.)"""
    p = db.param
    row = db.execute_sql(
        "SELECT 1 FROM webhook_delivery WHERE status = 'pending'"
        f" AND next_attempt_at <= {p} AND (lease_until IS NULL OR lease_until < {p}) LIMIT 1",
        (now, now),
    ).fetchone()
    return row is not None


def _details(ids, now):
    marks = ", ".join([db.param] * len(ids))
    rows = db.execute_sql(
        "SELECT d.id, d.attempt_count, d.endpoint_id, w.url, w.secret, w.previous_secret,"
        " w.previous_secret_expires_at, w.is_active, d.event_id, d.event_type,"
        " e.tenant_id, e.created_at, e.data, e.id"
        " FROM webhook_delivery d JOIN webhook_endpoint w ON w.id = d.endpoint_id"
        f" LEFT JOIN event e ON e.id = d.event_id WHERE d.id IN ({marks})",
        ids,
    ).fetchall()
    return rows


def claim(limit, lease_ms, token, now, make_body):
    """Lease up to ``limit`` due deliveries; returns them as ``Claimed`` in claim order."""
    if limit <= 0:
        return []
    due = (now, now, limit)
    setting = (now + lease_ms, token)
    params = due + setting if is_postgres() else setting + due
    with write_transaction():
        ids = [row[0] for row in db.execute_sql(_claim_sql(), params).fetchall()]
        if not ids:
            return []
        rows = _details(ids, now)
    claimed = []
    for row in rows:
        (delivery_id, attempts, endpoint_id, url, secret, old_secret, old_until, active,
         event_id, event_type, tenant_id, created_at, data, found) = row  # fmt: skip
        if old_until is None or old_until <= now:
            old_secret = None
        body = None
        if found is not None:
            body = make_body(event_id, event_type, created_at, tenant_id, data)
        claimed.append(
            Claimed(
                delivery_id,
                token,
                attempts,
                endpoint_id,
                url,
                secret,
                old_secret,
                bool(active),
                event_id,
                event_type,
                body,
            )  # fmt: skip
        )
    order = {delivery_id: index for index, delivery_id in enumerate(ids)}
    claimed.sort(key=lambda item: order[item.id])
    return claimed


def _next_delay(attempt_number, schedule, retry_after):
    """Seconds until the next attempt, or None when the schedule is over."""
    if attempt_number > len(schedule):
        return None
    delay = schedule[attempt_number - 1]
    if retry_after is not None:
        # never sooner than the receiver asked (within reason), never faster than the schedule
        delay = max(delay, min(retry_after, MAX_RETRY_AFTER_SECONDS))
    return delay


def record(outcomes, schedule, now):
    """Write the outcomes of attempts in one transaction; returns how many were recorded."""
    if not outcomes:
        return 0
    p = db.param
    attempts = []
    disable = {}
    recorded = 0
    with write_transaction():
        for outcome in outcomes:
            delivery = outcome.delivery
            error = (outcome.error or "")[:MAX_ERROR_LENGTH] or None
            if outcome.succeeded:
                sql = (
                    "UPDATE webhook_delivery SET status = 'succeeded',"
                    f" attempt_count = attempt_count + 1, last_status_code = {p},"
                    f" last_error = NULL, last_duration_ms = {p}, delivered_at = {p},"
                    f" finished_at = {p}, next_attempt_at = NULL, lease_until = NULL,"
                    " lease_token = NULL"
                )
                params = [outcome.status_code, outcome.duration_ms, now, now]
            else:
                if error is None:
                    error = f"The endpoint answered HTTP {outcome.status_code}."
                number = delivery.attempt_count + (1 if outcome.sent else 0)
                delay = None
                if outcome.status_code == 410:
                    disable[delivery.endpoint_id] = "The endpoint answered 410 Gone."
                elif outcome.sent:
                    delay = _next_delay(number, schedule, outcome.retry_after)
                if delay is None:
                    status, next_at, finished = "failed", None, now
                else:
                    status, next_at, finished = "pending", now + int(delay * 1000), None
                # a recovery asked for while it was in flight (recovery.py): due at once
                sql = (
                    "UPDATE webhook_delivery SET"
                    f" status = CASE WHEN recover_now THEN 'pending' ELSE {p} END,"
                    f" attempt_count = {p}, last_status_code = {p}, last_error = {p},"
                    f" last_duration_ms = {p},"
                    " next_attempt_at = CASE WHEN recover_now"
                    f" THEN CAST({p} AS BIGINT) ELSE CAST({p} AS BIGINT) END,"
                    f" finished_at = CASE WHEN recover_now THEN NULL ELSE CAST({p} AS BIGINT) END,"
                    f" recover_now = {p}, lease_until = NULL, lease_token = NULL"
                )
                params = [
                    status,
                    number,
                    outcome.status_code,
                    error,
                    outcome.duration_ms if outcome.sent else None,
                    now,
                    next_at,
                    finished,
                    False,
                ]
            sql += f" WHERE id = {p} AND lease_token = {p} AND status = 'pending'"
            cursor = db.execute_sql(sql, (*params, delivery.id, delivery.token))
            if cursor.rowcount != 1:
                continue  # the lease was lost: another worker owns the delivery now
            recorded += 1
            if outcome.sent:
                attempts.append(
                    (
                        delivery.id,
                        outcome.attempted_at,
                        outcome.status_code,
                        outcome.duration_ms,
                        error if not outcome.succeeded else None,
                    )  # fmt: skip
                )
        if attempts:
            db.cursor().executemany(
                "INSERT INTO webhook_attempt (delivery_id, attempted_at, status_code,"
                f" duration_ms, error) VALUES ({p}, {p}, {p}, {p}, {p})",
                attempts,
            )
        for endpoint_id, reason in disable.items():
            db.execute_sql(
                f"UPDATE webhook_endpoint SET is_active = {p}, disabled_reason = {p},"
                f" updated_at = {p} WHERE id = {p} AND is_active = {p}",
                (False, reason, now, endpoint_id, True),
            )
            deliveries.fail_pending(endpoint_id, "The endpoint was disabled: " + reason, now)
    return recorded
