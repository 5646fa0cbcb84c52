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

from collections.abc import Callable
from dataclasses import dataclass

from ..crypto import SecretUnreadable, decrypt
from ..db import is_postgres, write_transaction
from ..events.models import Event
from ..leases import DueProbe, Lease, honour_retry_after, lease_free
from ..sql import Statement, executemany, insert_statement
from . import deliveries, endpoint_health
from .models import WebhookAttempt, WebhookDelivery, WebhookEndpoint

MAX_RETRY_AFTER_SECONDS = 86_400
MAX_ERROR_LENGTH = 500
# a delivery whose endpoint secret cannot be decrypted waits this long, spending no
# attempt, and goes out once the secret reads again (the key put back, the secret rotated)
SECRET_RETRY_MS = 5_000
SECRET_REASON = "SECRET_KEY_MISMATCH: the endpoint's signing secret cannot be decrypted"


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
    unreadable: bool = False  # its endpoint's secret cannot be decrypted: not sent


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
    # what the receiver answered (sender.MAX_STORED_BODY_BYTES of it, as text; None: no
    # answer or not text), the size read, whether it was not text
    response_body: str | None = None
    response_body_size: int | None = None
    response_body_binary: bool | None = None

    @property
    def succeeded(self) -> bool:
        return self.error is None and self.status_code is not None and 200 <= self.status_code < 300


# Claiming -----------------------------------------------------------------------------------

# an outcome is written only with the token of the claim, while the delivery is pending
_HELD_CLAUSE = (
    " WHERE {WebhookDelivery.id} = {p:id} AND {WebhookDelivery.lease_token} = {p:token}"
    " AND {WebhookDelivery.status} = 'pending'"
)

# A due delivery of one endpoint, free, and not behind an earlier pending one of its
# resource; leased with the claim's token, in the order due, then event order.
LEASE = Lease(
    WebhookDelivery,
    lease="lease_until",
    holder="lease_token",
    source="{WebhookDelivery} d",
    select="d.{WebhookDelivery.id}",
    due=(
        "d.{WebhookDelivery.endpoint_id} = {p:endpoint} AND d.{WebhookDelivery.status} = 'pending'"
        " AND d.{WebhookDelivery.next_attempt_at} <= {p:now}"
        " AND " + lease_free("d.{WebhookDelivery.lease_until}") + " AND"
        " (d.{WebhookDelivery.resource_key} IS NULL OR NOT EXISTS ("
        "SELECT 1 FROM {WebhookDelivery} e WHERE e.{WebhookDelivery.status} = 'pending'"
        " AND e.{WebhookDelivery.endpoint_id} = d.{WebhookDelivery.endpoint_id}"
        " AND e.{WebhookDelivery.resource_key} = d.{WebhookDelivery.resource_key}"
        " AND e.{WebhookDelivery.event_seq} < d.{WebhookDelivery.event_seq}))"
    ),
    order="d.{WebhookDelivery.next_attempt_at}, d.{WebhookDelivery.event_seq}",
    setting="{WebhookDelivery.lease_until} = {p:until}, {WebhookDelivery.lease_token} = {p:token}",
    claimable="{WebhookDelivery.status} = 'pending'",
    returning=("id",),
)

HAS_DUE = DueProbe(
    WebhookDelivery,
    "{WebhookDelivery.status} = 'pending' AND {WebhookDelivery.next_attempt_at} <= {p:now}"
    " AND " + LEASE.free(),
)
# A loose scan: one index seek per endpoint with pending deliveries, however long their
# backlogs; then the endpoints whose earliest pending delivery is due.
CANDIDATES = Statement(
    "WITH RECURSIVE ep(id) AS ("
    "SELECT MIN({WebhookDelivery.endpoint_id}) FROM {WebhookDelivery}"
    " WHERE {WebhookDelivery.status} = 'pending'"
    " UNION ALL SELECT (SELECT MIN(d.{WebhookDelivery.endpoint_id}) FROM {WebhookDelivery} d"
    " WHERE d.{WebhookDelivery.status} = 'pending' AND d.{WebhookDelivery.endpoint_id} > ep.id)"
    " FROM ep WHERE ep.id IS NOT NULL)"
    " SELECT w.{WebhookEndpoint.id}, w.{WebhookEndpoint.tenant_id}"
    " FROM ep JOIN {WebhookEndpoint} w ON w.{WebhookEndpoint.id} = ep.id"
    " WHERE (SELECT MIN(n.{WebhookDelivery.next_attempt_at}) FROM {WebhookDelivery} n"
    " WHERE n.{WebhookDelivery.status} = 'pending' AND n.{WebhookDelivery.endpoint_id} = ep.id)"
    " <= {p:now}",
    WebhookDelivery=WebhookDelivery,
    WebhookEndpoint=WebhookEndpoint,
)
HELD_ELSEWHERE = Statement(
    "SELECT DISTINCT {WebhookDelivery.endpoint_id} FROM {WebhookDelivery}"
    " WHERE {WebhookDelivery.status} = 'pending' AND {WebhookDelivery.lease_until} >= {p:now}"
    " AND substr({WebhookDelivery.lease_token}, 1, {p:length}) <> {p:prefix}",
    WebhookDelivery=WebhookDelivery,
)
LOCK_ENDPOINTS = Statement(
    "SELECT {WebhookEndpoint.id} FROM {WebhookEndpoint} WHERE {WebhookEndpoint.id} IN ({in:ids})"
    " FOR UPDATE SKIP LOCKED",
    WebhookEndpoint=WebhookEndpoint,
)
DETAILS = Statement(
    "SELECT d.{WebhookDelivery.id}, d.{WebhookDelivery.attempt_count},"
    " d.{WebhookDelivery.endpoint_id}, w.{WebhookEndpoint.tenant_id}, w.{WebhookEndpoint.url},"
    " w.{WebhookEndpoint.secret}, w.{WebhookEndpoint.previous_secret},"
    " w.{WebhookEndpoint.previous_secret_expires_at}, w.{WebhookEndpoint.is_active},"
    " d.{WebhookDelivery.event_id}, d.{WebhookDelivery.event_type}, e.{Event.tenant_id},"
    " e.{Event.created_at}, e.{Event.data}, e.{Event.id}, d.{WebhookDelivery.lease_until}"
    " FROM {WebhookDelivery} d"
    " JOIN {WebhookEndpoint} w ON w.{WebhookEndpoint.id} = d.{WebhookDelivery.endpoint_id}"
    " LEFT JOIN {Event} e ON e.{Event.id} = d.{WebhookDelivery.event_id}"
    " WHERE d.{WebhookDelivery.id} IN ({in:ids})",
    WebhookDelivery=WebhookDelivery,
    WebhookEndpoint=WebhookEndpoint,
    Event=Event,
)


def has_due(now: int) -> bool:
    """A read-only look: is a delivery due and free? (Spares idle workers the write lock.)"""
    return HAS_DUE(now)


def due_endpoints(now: int, worker: str) -> dict[str, str]:
    """``{endpoint_id: tenant_id}`` of the endpoints with a delivery due that no other
    worker is sending to (one worker at a time sends to an endpoint, so the endpoint's
    concurrency holds fleet-wide); call it inside the claim's transaction."""
    endpoints = dict(CANDIDATES.execute({"now": now}).fetchall())
    if endpoints:
        for endpoint_id in _held_elsewhere(now, worker):
            endpoints.pop(endpoint_id, None)
    return endpoints


def _held_elsewhere(now, worker):
    prefix = worker + ":"  # lease tokens are "<worker>:<claim number>"
    return {
        row[0]
        for row in HELD_ELSEWHERE.execute(
            {"now": now, "length": len(prefix), "prefix": prefix}
        ).fetchall()
    }


def _lock_endpoints(endpoint_ids, now, worker):
    """PostgreSQL: lock the endpoints about to be claimed (skipping those another worker is
    claiming right now) and drop any another worker took meanwhile."""
    rows = LOCK_ENDPOINTS.execute({"ids": endpoint_ids}).fetchall()
    return {row[0] for row in rows} - _held_elsewhere(now, worker)


def claim(
    quotas: dict[str, int],
    lease_ms: int,
    token: str,
    now: int,
    make_body: Callable[..., bytes],
) -> list[Claimed]:
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
    ids = []
    for endpoint_id, limit in quotas.items():
        rows = LEASE.claim(
            {
                "endpoint": endpoint_id,
                "now": now,
                "limit": limit,
                "until": now + lease_ms,
                "token": token,
            }
        )
        ids += [row[0] for row in rows]
    if not ids:
        return []
    claimed = [_claimed(row, token, now, make_body) for row in _details(ids)]
    # secrets are decrypted per row: one unreadable secret holds back its own endpoint's
    # deliveries (visibly) and no other's
    unreadable = [item for item in claimed if item.unreadable]
    if unreadable:
        _hold_back(unreadable, now)
    _mark_readable({item.endpoint_id for item in claimed} - {i.endpoint_id for i in unreadable})
    order = {delivery_id: index for index, delivery_id in enumerate(ids)}
    claimed = [item for item in claimed if not item.unreadable]
    claimed.sort(key=lambda item: order[item.id])
    return claimed


HOLD_BACK = Statement(
    "UPDATE {WebhookDelivery} SET {WebhookDelivery.next_attempt_at} = {p:due},"
    " {WebhookDelivery.last_error} = {p:error}, " + LEASE.released() + _HELD_CLAUSE,
    WebhookDelivery=WebhookDelivery,
)
UNREADABLE_ENDPOINT = Statement(
    "UPDATE {WebhookEndpoint} SET {WebhookEndpoint.status_reason} = {p:reason}"
    " WHERE {WebhookEndpoint.id} = {p:id} AND ({WebhookEndpoint.status_reason} IS NULL"
    " OR {WebhookEndpoint.status_reason} <> {p:reason})",
    WebhookEndpoint=WebhookEndpoint,
)
READABLE_ENDPOINTS = Statement(
    "UPDATE {WebhookEndpoint} SET {WebhookEndpoint.status_reason} = NULL"
    " WHERE {WebhookEndpoint.id} IN ({in:ids}) AND {WebhookEndpoint.status_reason} IS NOT NULL",
    WebhookEndpoint=WebhookEndpoint,
)


def _hold_back(items, now):
    """Deliveries whose endpoint secret cannot be decrypted: given back unsent, due again
    in ``SECRET_RETRY_MS`` (no attempt spent), the reason on the delivery and endpoint."""
    message = SECRET_REASON + " with the service's keys (COMMERCE_SECRET_KEY)."
    for item in items:
        HOLD_BACK.execute(
            {"due": now + SECRET_RETRY_MS, "error": message, "id": item.id, "token": item.token}
        )
    for endpoint_id in sorted({item.endpoint_id for item in items}):
        UNREADABLE_ENDPOINT.execute({"reason": SECRET_REASON, "id": endpoint_id})


def _mark_readable(endpoint_ids):
    if endpoint_ids:
        READABLE_ENDPOINTS.execute({"ids": sorted(endpoint_ids)})


def _details(ids):
    return DETAILS.execute({"ids": ids}).fetchall()


def _claimed(row, token, now, make_body):
    (delivery_id, attempts, endpoint_id, tenant_id, url, secret, old_secret, old_until, active,
     event_id, event_type, event_tenant, created_at, data, found, lease_until) = row  # fmt: skip
    if old_until is None or old_until <= now:
        old_secret = None
    unreadable = False
    try:
        secret, old_secret = decrypt(secret, quiet=True), decrypt(old_secret, quiet=True)
    except SecretUnreadable:  # encrypted at rest, with a key the service no longer has
        secret = old_secret = None
        unreadable = bool(active)  # a disabled endpoint's delivery fails unsent anyway
    body = None
    if found is not None and not unreadable:
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
        unreadable,
    )


def _next_delay(attempt_number, schedule, retry_after):
    """Seconds until the next attempt, or None when the schedule is over."""
    if attempt_number > len(schedule):
        return None
    # never sooner than the receiver asked (within reason), never faster than the schedule
    return honour_retry_after(
        schedule[attempt_number - 1], retry_after, cap=MAX_RETRY_AFTER_SECONDS
    )


_HELD = _HELD_CLAUSE
SUCCEEDED = Statement(
    "UPDATE {WebhookDelivery} SET {WebhookDelivery.status} = 'succeeded',"
    " {WebhookDelivery.attempt_count} = {WebhookDelivery.attempt_count} + 1,"
    " {WebhookDelivery.last_status_code} = {p:status_code},"
    " {WebhookDelivery.last_error} = NULL,"
    " {WebhookDelivery.last_duration_ms} = {p:duration_ms},"
    " {WebhookDelivery.delivered_at} = {p:now}, {WebhookDelivery.finished_at} = {p:now},"
    " {WebhookDelivery.next_attempt_at} = NULL, " + LEASE.released() + _HELD,
    WebhookDelivery=WebhookDelivery,
)
# (``recover_now`` is a column of migration 0036, not a field of the model)
FAILED_DISABLED = Statement(
    "UPDATE {WebhookDelivery} SET {WebhookDelivery.status} = {p:status},"
    " {WebhookDelivery.attempt_count} = {p:attempts},"
    " {WebhookDelivery.last_status_code} = {p:status_code},"
    " {WebhookDelivery.last_error} = {p:error},"
    " {WebhookDelivery.last_duration_ms} = {p:duration_ms},"
    " {WebhookDelivery.next_attempt_at} = {p:next_at},"
    " {WebhookDelivery.finished_at} = {p:finished},"
    " recover_now = {p:recover_now}, " + LEASE.released() + _HELD,
    WebhookDelivery=WebhookDelivery,
)
# a recovery asked for while it was in flight (recovery.py): due at once
FAILED = Statement(
    "UPDATE {WebhookDelivery} SET"
    " {WebhookDelivery.status} = CASE WHEN recover_now THEN 'pending' ELSE {p:status} END,"
    " {WebhookDelivery.attempt_count} = {p:attempts},"
    " {WebhookDelivery.last_status_code} = {p:status_code},"
    " {WebhookDelivery.last_error} = {p:error},"
    " {WebhookDelivery.last_duration_ms} = {p:duration_ms},"
    " {WebhookDelivery.next_attempt_at} = CASE WHEN recover_now"
    " THEN CAST({p:now} AS BIGINT) ELSE CAST({p:next_at} AS BIGINT) END,"
    " {WebhookDelivery.finished_at} = CASE WHEN recover_now THEN NULL"
    " ELSE CAST({p:finished} AS BIGINT) END, recover_now = {p:recover_now}, "
    + LEASE.released()
    + _HELD,
    WebhookDelivery=WebhookDelivery,
)
ATTEMPT_FIELDS = (
    "delivery_id",
    "attempted_at",
    "status_code",
    "duration_ms",
    "error",
    "response_body",
    "response_body_size",
    "response_body_binary",
)


def record(
    outcomes: list[Outcome],
    schedule: list[float],
    now: int,
    disable_after_ms: int | None = None,
) -> int:
    """Write the outcomes of attempts in one transaction; returns how many were recorded.

    Endpoint changes come first, in id order (the lock order of the API's changes too):
    a 410 disables the endpoint; the failing run is tracked, and an endpoint failing for
    ``disable_after_ms`` is disabled as ``failing``.
    """
    if not outcomes:
        return 0
    attempts = []
    recorded = 0
    with write_transaction():
        disabled = endpoint_health.update(outcomes, now, disable_after_ms)
        for outcome in outcomes:
            delivery = outcome.delivery
            if outcome.given_back:
                changed = give_back(delivery)
            else:
                statement, params = _attempted(outcome, schedule, now, disabled)
                changed = statement.execute(params).rowcount
            if changed != 1:
                continue  # the lease was lost: another worker owns the delivery now
            recorded += 1
            if outcome.sent and not outcome.given_back:
                error = None if outcome.succeeded else params["error"]
                attempts.append(
                    (delivery.id, outcome.attempted_at, outcome.status_code,
                     outcome.duration_ms, error, outcome.response_body,
                     outcome.response_body_size, outcome.response_body_binary)
                )  # fmt: skip
        if attempts:
            executemany(insert_statement(WebhookAttempt, ATTEMPT_FIELDS), attempts)
        for endpoint_id, reason in disabled.items():
            deliveries.fail_pending(endpoint_id, "The endpoint was disabled: " + reason, now)
    return recorded


def give_back(delivery: Claimed) -> int:
    """The lease's own give-back of a delivery not sent: no attempt spent, due as it was;
    the rows changed (0: the lease was lost)."""
    return LEASE.release(
        (WebhookDelivery.id == delivery.id)
        & (WebhookDelivery.lease_token == delivery.token)
        & (WebhookDelivery.status == "pending")
    )


def _attempted(outcome, schedule, now, disabled):
    """The UPDATE of an attempt's outcome and its parameters (fenced by the lease)."""
    delivery = outcome.delivery
    held = {"id": delivery.id, "token": delivery.token}
    if outcome.succeeded:
        params = {"status_code": outcome.status_code, "duration_ms": outcome.duration_ms}
        return SUCCEEDED, {**params, "now": now, **held}
    statement, params = _failure(outcome, schedule, now, delivery.endpoint_id in disabled)
    return statement, {**params, **held}


def _failure(outcome, schedule, now, disabled):
    """The UPDATE of a failed attempt (or a delivery not sent): retried or failed."""
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
    params = {
        "status": status,
        "attempts": number,
        "status_code": outcome.status_code,
        "error": error,
        "duration_ms": duration,
        "next_at": next_at,
        "finished": finished,
        "recover_now": False,
    }
    if disabled:
        return FAILED_DISABLED, params
    return FAILED, {**params, "now": now}
