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

from ..crypto import decrypt
from ..db import db, is_postgres, write_transaction
from ..sql import cached_statement
from . import deliveries, endpoint_health

MAX_RETRY_AFTER_SECONDS = 86_400
MAX_ERROR_LENGTH = 500


@dataclass
class Claimed:
    """A delivery to send now, with what sending it needs."""

    id: str
    token: str
    attempt_count: int
    endpoint_id: str
    tenant_id: str
    url: str
    secret: str
    old_secret: str | None
    is_active: bool
    event_id: str
    event_type: str
    body: bytes | None  # None: the event is gone (purged)
    lease_until: int  # epoch ms: not sent after this less one attempt's time-out


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
    given_back: bool = False  # not sent, and not an attempt: the lease ran short in the queue

    @property
    def succeeded(self):
        return self.error is None and self.status_code is not None and 200 <= self.status_code < 300


# Claiming -----------------------------------------------------------------------------------

# a due delivery of one endpoint, free, and not behind an earlier pending one of its resource
_DUE = (
    "SELECT d.id FROM webhook_delivery d"
    " WHERE d.endpoint_id = {p} AND d.status = 'pending' AND d.next_attempt_at <= {p}"
    " AND (d.lease_until IS NULL OR d.lease_until < {p})"
    " AND (d.resource_key IS NULL OR NOT EXISTS ("
    "SELECT 1 FROM webhook_delivery e WHERE e.status = 'pending'"
    " AND e.endpoint_id = d.endpoint_id AND e.resource_key = d.resource_key"
    " AND e.event_seq < d.event_seq))"
    " ORDER BY d.next_attempt_at, d.event_seq LIMIT {p}"
)


def _claim_sql():
    p = db.param
    due = _DUE.format(p=p)
    if is_postgres():
        return (
            f"WITH due AS MATERIALIZED ({due} FOR UPDATE SKIP LOCKED)"
            f" UPDATE webhook_delivery SET lease_until = {p}, lease_token = {p}"
            " FROM due WHERE webhook_delivery.id = due.id"
            " AND webhook_delivery.status = 'pending' RETURNING webhook_delivery.id"
        )
    return (
        f"UPDATE webhook_delivery SET lease_until = {p}, lease_token = {p}"
        f" WHERE id IN ({due}) AND status = 'pending' RETURNING id"
    )


def _candidates_sql():
    # A loose scan: one index seek per endpoint with pending deliveries, however long
    # their backlogs; then the endpoints whose earliest pending delivery is due.
    p = db.param
    return (
        "WITH RECURSIVE ep(id) AS ("
        "SELECT MIN(endpoint_id) FROM webhook_delivery WHERE status = 'pending'"
        " UNION ALL SELECT (SELECT MIN(d.endpoint_id) FROM webhook_delivery d"
        " WHERE d.status = 'pending' AND d.endpoint_id > ep.id) FROM ep WHERE ep.id IS NOT NULL)"
        " SELECT w.id, w.tenant_id FROM ep JOIN webhook_endpoint w ON w.id = ep.id"
        " WHERE (SELECT MIN(n.next_attempt_at) FROM webhook_delivery n"
        f" WHERE n.status = 'pending' AND n.endpoint_id = ep.id) <= {p}"
    )


def _held_elsewhere_sql():
    p = db.param
    return (
        "SELECT DISTINCT endpoint_id FROM webhook_delivery"
        f" WHERE status = 'pending' AND lease_until >= {p}"
        f" AND substr(lease_token, 1, {p}) <> {p}"
    )


def has_due(now):
    """A read-only look: is a delivery due and free? (Spares idle workers the write lock.)"""
    p = db.param
    row = db.execute_sql(
        "SELECT 1 FROM webhook_delivery WHERE status = 'pending'"
        f" AND next_attempt_at <= {p} AND (lease_until IS NULL OR lease_until < {p}) LIMIT 1",
        (now, now),
    ).fetchone()
    return row is not None


def due_endpoints(now, worker):
    """``{endpoint_id: tenant_id}`` of the endpoints with a delivery due that no other
    worker is sending to (one worker at a time sends to an endpoint, so the endpoint's
    concurrency holds fleet-wide); call it inside the claim's transaction."""
    rows = db.execute_sql(cached_statement("webhook-candidates", _candidates_sql), (now,))
    endpoints = dict(rows.fetchall())
    if endpoints:
        for endpoint_id in _held_elsewhere(now, worker):
            endpoints.pop(endpoint_id, None)
    return endpoints


def _held_elsewhere(now, worker):
    prefix = worker + ":"  # lease tokens are "<worker>:<claim number>"
    sql = cached_statement("webhook-held-elsewhere", _held_elsewhere_sql)
    return {row[0] for row in db.execute_sql(sql, (now, len(prefix), prefix)).fetchall()}


def _lock_endpoints(endpoint_ids, now, worker):
    """PostgreSQL: lock the endpoints about to be claimed (skipping those another worker is
    claiming right now) and drop any another worker took meanwhile."""
    marks = ", ".join([db.param] * len(endpoint_ids))
    rows = db.execute_sql(
        f"SELECT id FROM webhook_endpoint WHERE id IN ({marks}) FOR UPDATE SKIP LOCKED",
        list(endpoint_ids),
    ).fetchall()
    return {row[0] for row in rows} - _held_elsewhere(now, worker)


def claim(quotas, lease_ms, token, now, make_body):
    """Lease up to ``quotas[endpoint_id]`` due deliveries of each endpoint, in the order
    given; returns them as ``Claimed``, endpoint by endpoint, each in its claim order.
    Call it inside a write transaction, after ``due_endpoints``."""
    quotas = {endpoint_id: n for endpoint_id, n in quotas.items() if n > 0}
    if not quotas:
        return []
    if is_postgres():
        worker = token.rsplit(":", 1)[0]
        free = _lock_endpoints(quotas, now, worker)
        quotas = {endpoint_id: n for endpoint_id, n in quotas.items() if endpoint_id in free}
    sql = cached_statement("webhook-claim", _claim_sql)
    ids = []
    for endpoint_id, limit in quotas.items():
        due = (endpoint_id, now, now, limit)
        setting = (now + lease_ms, token)
        params = due + setting if is_postgres() else setting + due
        ids += [row[0] for row in db.execute_sql(sql, params).fetchall()]
    if not ids:
        return []
    claimed = [_claimed(row, token, now, make_body) for row in _details(ids)]
    order = {delivery_id: index for index, delivery_id in enumerate(ids)}
    claimed.sort(key=lambda item: order[item.id])
    return claimed


def _details(ids):
    marks = ", ".join([db.param] * len(ids))
    return db.execute_sql(
        "SELECT d.id, d.attempt_count, d.endpoint_id, w.tenant_id, w.url, w.secret,"
        " w.previous_secret, w.previous_secret_expires_at, w.is_active, d.event_id,"
        " d.event_type, e.tenant_id, e.created_at, e.data, e.id, d.lease_until"
        " FROM webhook_delivery d JOIN webhook_endpoint w ON w.id = d.endpoint_id"
        f" LEFT JOIN event e ON e.id = d.event_id WHERE d.id IN ({marks})",
        ids,
    ).fetchall()


def _claimed(row, token, now, make_body):
    (delivery_id, attempts, endpoint_id, tenant_id, url, secret, old_secret, old_until, active,
     event_id, event_type, event_tenant, created_at, data, found, lease_until) = row  # fmt: skip
    if old_until is None or old_until <= now:
        old_secret = None
    secret, old_secret = decrypt(secret), decrypt(old_secret)  # encrypted at rest
    body = None
    if found is not None:
        body = make_body(event_id, event_type, created_at, event_tenant, data)
    return Claimed(
        delivery_id,
        token,
        attempts,
        endpoint_id,
        tenant_id,
        url,
        secret,
        old_secret,
        bool(active),
        event_id,
        event_type,
        body,
        lease_until,
    )


def _next_delay(attempt_number, schedule, retry_after):
    """Seconds until the next attempt, or None when the schedule is over."""
    if attempt_number > len(schedule):
        return None
    delay = schedule[attempt_number - 1]
    if retry_after is not None:
        # never sooner than the receiver asked (within reason), never faster than the schedule
        delay = max(delay, min(retry_after, MAX_RETRY_AFTER_SECONDS))
    return delay


def record(outcomes, schedule, now, disable_after_ms=None):
    """Write the outcomes of attempts in one transaction; returns how many were recorded.

    Endpoint changes come first, in id order (the lock order of the API's changes too):
    a 410 disables the endpoint; the failing run is tracked, and an endpoint failing for
    ``disable_after_ms`` is disabled as ``failing``.
    """
    if not outcomes:
        return 0
    p = db.param
    attempts = []
    recorded = 0
    with write_transaction():
        disabled = endpoint_health.update(outcomes, now, disable_after_ms)
        for outcome in outcomes:
            delivery = outcome.delivery
            if outcome.given_back:
                sql = "UPDATE webhook_delivery SET lease_until = NULL, lease_token = NULL"
                params = []
            elif outcome.succeeded:
                sql = (
                    "UPDATE webhook_delivery SET status = 'succeeded',"
                    f" attempt_count = attempt_count + 1, last_status_code = {p},"
                    f" last_error = NULL, last_duration_ms = {p}, delivered_at = {p},"
                    f" finished_at = {p}, next_attempt_at = NULL, lease_until = NULL,"
                    " lease_token = NULL"
                )
                params = [outcome.status_code, outcome.duration_ms, now, now]
            else:
                sql, params = _failure(outcome, schedule, now, delivery.endpoint_id in disabled)
            sql += f" WHERE id = {p} AND lease_token = {p} AND status = 'pending'"
            cursor = db.execute_sql(sql, (*params, delivery.id, delivery.token))
            if cursor.rowcount != 1:
                continue  # the lease was lost: another worker owns the delivery now
            recorded += 1
            if outcome.sent and not outcome.given_back:
                error = None if outcome.succeeded else params[3]
                attempts.append(
                    (delivery.id, outcome.attempted_at, outcome.status_code,
                     outcome.duration_ms, error)
                )  # fmt: skip
        if attempts:
            db.cursor().executemany(
                "INSERT INTO webhook_attempt (delivery_id, attempted_at, status_code,"
                f" duration_ms, error) VALUES ({p}, {p}, {p}, {p}, {p})",
                attempts,
            )
        for endpoint_id, reason in disabled.items():
            deliveries.fail_pending(endpoint_id, "The endpoint was disabled: " + reason, now)
    return recorded


def _failure(outcome, schedule, now, disabled):
    """The UPDATE of a failed attempt (or a delivery not sent): retried or failed."""
    p = db.param
    error = (outcome.error or "")[:MAX_ERROR_LENGTH] or None
    if error is None:
        error = f"The endpoint answered HTTP {outcome.status_code}."
    number = outcome.delivery.attempt_count + (1 if outcome.sent else 0)
    delay = None
    if outcome.sent and not disabled:
        delay = _next_delay(number, schedule, outcome.retry_after)
    if delay is None:
        status, next_at, finished = "failed", None, now
    else:
        status, next_at, finished = "pending", now + int(delay * 1000), None
    duration = outcome.duration_ms if outcome.sent else None
    if disabled:
        sql = (
            f"UPDATE webhook_delivery SET status = {p}, attempt_count = {p},"
            f" last_status_code = {p}, last_error = {p}, last_duration_ms = {p},"
            f" next_attempt_at = {p}, finished_at = {p}, recover_now = {p},"
            " lease_until = NULL, lease_token = NULL"
        )
        params = [status, number, outcome.status_code, error, duration, next_at, finished]
        return sql, [*params, False]
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
    params = [status, number, outcome.status_code, error, duration, now, next_at, finished]
    return sql, [*params, False]
