"""Orders a marketplace notification named, pulled at once (DESIGN 13).

``take_notification`` records a verified notification once per (connection, event id) and
queues each order it names in ``order_pull_request`` (one row per connection and order),
in one transaction: a replayed notification queues nothing again. It never calls the
marketplace.

Each worker process runs the ``order_notified_pull`` loop (``NotifiedPullLoop``): it
claims due rows under a lease (``leases.Lease``: two workers never hold one order), reads
that one order from the marketplace through the gateway (``fetch_order``) and applies it
through the cursor pull's own path (``ingest.upsert_order``: the dedupe by (marketplace,
external id), reservations, listings marked pending, events, status changes and
cancellations behave as in a cursor pull). A failed pull is tried again after a backoff;
after ``MAX_ATTEMPTS`` the row is dropped, the cursor pull (still running every
``ORDER_PULL_INTERVAL_SECONDS``) being the safety net. A notification arriving while its
order is being pulled bumps ``requested``: the row is then pulled once more, not dropped.
A connector that cannot read one order (``fetch_order`` answers ``NotImplemented``) gets
an ``order_pull`` job of its connection instead.
"""

import logging
import secrets
import threading
from dataclasses import dataclass
from typing import Any

from peewee import IntegrityError

from .. import loophealth
from ..db import db, write_transaction
from ..errors import ApiError
from ..leases import DueProbe, Lease, backoff_seconds, delay_ms, honour_retry_after, lease_free
from ..marketplaces import gateway
from ..marketplaces.base import MarketplaceRejection, MarketplaceUnavailable, Notification
from ..marketplaces.models import MarketplaceConnection
from ..timeutil import now_ms
from .ingest import upsert_order
from .models import MarketplaceNotification, OrderPullRequest
from .pulls import check_page_orders, enqueue_pull, note_unknown_skus

log = logging.getLogger("commerce_api.orders")

LOOP_NAME = "order_notified_pull"
MAX_ATTEMPTS = 8
BACKOFF_BASE_SECONDS = 1.0
BACKOFF_CAP_SECONDS = 300.0
CLAIM_BATCH = 8
# a pull holds its row this long: the marketplace's deadline and the import, with room
LEASE_EXTRA_SECONDS = 15.0

LEASE = Lease(
    OrderPullRequest,
    lease="lease_until",
    holder="holder",
    due="{OrderPullRequest.due_at} <= {p:now} AND " + lease_free("{OrderPullRequest.lease_until}"),
    order="{OrderPullRequest.due_at}, {OrderPullRequest.id}",
    setting="{OrderPullRequest.lease_until} = {p:until}, {OrderPullRequest.holder} = {p:token}",
    claimable="1 = 1",
    returning=("id", "tenant_id", "connection_id", "external_order_id", "requested", "attempts"),
)

# (a due pull under a live lease counts: the claim finds nothing then, as it always did)
HAS_DUE = DueProbe(OrderPullRequest, "{OrderPullRequest.due_at} <= {p:now}")


@dataclass(frozen=True)
class Taken:
    """What ``take_notification`` did: ``duplicate`` when the event was taken before."""

    duplicate: bool
    queued: int


@dataclass(frozen=True)
class ClaimedPull:
    id: int
    tenant_id: str
    connection_id: str
    external_order_id: str
    requested: int
    attempts: int
    token: str


@dataclass(frozen=True)
class PullOutcome:
    """How one claimed pull ended: ``status`` created, updated, unchanged (applied),
    unknown (the marketplace does not know the order), cursor_pull (an ``order_pull`` job
    queued instead), gone (the connection is no longer active), retry or dropped."""

    status: str
    error: str | None = None


def take_notification(connection: MarketplaceConnection, notification: Notification) -> Taken:
    """Record ``notification`` and queue a pull of each order it names (once per event)."""
    now = now_ms()
    order_ids = list(dict.fromkeys(notification.order_ids))
    with write_transaction():
        try:
            with db.atomic():  # a savepoint: a replay leaves the transaction usable
                MarketplaceNotification.create(
                    tenant_id=connection.tenant_id,
                    connection_id=connection.id,
                    event_id=notification.event_id,
                    topic=notification.topic,
                    order_ids=order_ids,
                    received_at=now,
                )
        except IntegrityError:
            # the event was taken before (a replay, or the marketplace's own retry)
            return Taken(duplicate=True, queued=0)
        for external_id in order_ids:
            _queue(connection, external_id, notification.topic, now)
    return Taken(duplicate=False, queued=len(order_ids))


def _queue(connection, external_id, topic, now):
    """One row per (connection, order): a new one, or the waiting one due now again (also
    when another notification of the same order inserted it a moment before)."""
    for _ in range(2):
        if _requeue(connection, external_id, topic, now):
            return
        try:
            with db.atomic():
                OrderPullRequest.create(
                    tenant_id=connection.tenant_id,
                    connection_id=connection.id,
                    external_order_id=external_id,
                    topic=topic,
                    requested=1,
                    due_at=now,
                    attempts=0,
                    notified_at=now,
                    created_at=now,
                )
            return
        except IntegrityError:
            continue  # a concurrent notification of this order inserted it: bump that one
    raise AssertionError(f"order {external_id} could not be queued")


def _requeue(connection, external_id, topic, now):
    return (
        OrderPullRequest.update(
            requested=OrderPullRequest.requested + 1,
            topic=topic,
            due_at=now,
            attempts=0,
        )
        .where(
            (OrderPullRequest.connection_id == connection.id)
            & (OrderPullRequest.external_order_id == external_id)
        )
        .execute()
    )


def any_due(now: int | None = None) -> bool:
    """A read-only look: is any pull due (so that an idle worker never takes SQLite's write
    lock, nor a PostgreSQL row lock, just to find nothing)?"""
    return HAS_DUE(now_ms() if now is None else now)


def claim_pulls(
    worker: str, limit: int, lease_ms: int, now: int | None = None
) -> list[ClaimedPull]:
    """Lease up to ``limit`` due pulls for ``worker`` (a lease token per claim)."""
    now = now_ms() if now is None else now
    token = f"{worker}:{secrets.token_hex(6)}"
    with write_transaction():
        rows = LEASE.claim({"now": now, "limit": limit, "until": now + lease_ms, "token": token})
    return [ClaimedPull(*row, token=token) for row in rows]


def pull_claimed(claimed: ClaimedPull) -> PullOutcome:
    """Pull one claimed order and record the outcome (the row done, or due again later)."""
    connection = MarketplaceConnection.get_or_none(
        (MarketplaceConnection.id == claimed.connection_id)
        & (MarketplaceConnection.tenant == claimed.tenant_id)
    )
    if connection is None or connection.status != "active":
        _done(claimed)  # disabled or deleted: nothing is pulled from it
        return PullOutcome("gone")
    created_by = f"marketplace:{connection.marketplace}"
    try:
        order = gateway.call(
            connection,
            "fetch_order",
            lambda connector: connector.fetch_order(claimed.external_order_id),
        ).result
        if order is NotImplemented:
            with write_transaction():
                enqueue_pull(connection, created_by="notification")
            _done(claimed)
            return PullOutcome("cursor_pull")
        if order is None:
            log.info("notified order %s is unknown to %s", claimed.external_order_id, connection.id)
            _done(claimed)
            return PullOutcome("unknown")
        check_page_orders(connection, [order])
        if order.get("external_order_id") != claimed.external_order_id:
            raise MarketplaceUnavailable(
                "The marketplace's fetch_order answer is another order.", code="INVALID_RESPONSE"
            )
        outcome, order_id = upsert_order(
            connection.tenant_id, order, source="pull", connection=connection, created_by=created_by
        )
        if outcome == "created":
            note_unknown_skus(connection, order, order_id, created_by)
    except MarketplaceUnavailable as exc:
        return _retry(claimed, f"{exc.code}: {exc.message}", exc.retry_after)
    except MarketplaceRejection as exc:
        log.warning("notified order %s: %s %s", claimed.external_order_id, exc.code, exc.message)
        _done(claimed)
        return PullOutcome("dropped", f"{exc.code}: {exc.message}")
    except ApiError as error:
        # the order breaks the import rules: the cursor pull reports it the same way
        log.warning("notified order %s: %s", claimed.external_order_id, error.code)
        _done(claimed)
        return PullOutcome("dropped", f"{error.code}: {error.message}")
    _done(claimed)
    return PullOutcome(outcome)


def _done(claimed):
    """The pull is done: the row goes, unless a notification came meanwhile (then it is
    due again at once and pulled once more)."""
    fence = (OrderPullRequest.id == claimed.id) & (OrderPullRequest.holder == claimed.token)
    with write_transaction():
        deleted = (
            OrderPullRequest.delete()
            .where(fence & (OrderPullRequest.requested == claimed.requested))
            .execute()
        )
        if not deleted:
            LEASE.release(fence, {"attempts": 0})


def _retry(claimed, error, retry_after):
    attempts = claimed.attempts + 1
    if attempts >= MAX_ATTEMPTS:
        log.warning(
            "notified order %s: given up after %s attempts (%s); the cursor pull remains",
            claimed.external_order_id,
            attempts,
            error,
        )
        _done(claimed)
        return PullOutcome("dropped", error)
    delay = backoff_seconds(attempts, BACKOFF_BASE_SECONDS, BACKOFF_CAP_SECONDS)
    delay = honour_retry_after(delay, retry_after, cap=BACKOFF_CAP_SECONDS)
    with write_transaction():
        LEASE.release(
            (OrderPullRequest.id == claimed.id) & (OrderPullRequest.holder == claimed.token),
            {
                "attempts": attempts,
                "due_at": now_ms() + delay_ms(delay, jitter=0.2),
                "last_error": error[:2000],
            },
        )
    return PullOutcome("retry", error)


# The loop -------------------------------------------------------------------------------


class NotifiedPullLoop:
    """The ``order_notified_pull`` loop of one worker process."""

    def __init__(self, config: dict[str, Any], worker: str) -> None:
        self.poll_interval = max(0.01, float(config["ORDER_NOTIFIED_POLL_INTERVAL"]))
        deadline = float(config["MARKETPLACE_DEADLINE_SECONDS"])
        self.lease_ms = int((deadline + LEASE_EXTRA_SECONDS) * 1000)
        self.worker = worker
        self.backoff = loophealth.Backoff(first=min(1.0, self.poll_interval * 5))
        self.stats = {"pulled": 0, "retried": 0, "dropped": 0}

    def run(self, stop: threading.Event) -> dict[str, int]:
        """Pull until ``stop`` is set; with ``stop`` set on entry, until nothing is due."""
        once = stop.is_set()
        while once or not stop.is_set():
            try:
                busy = self.step()
            except Exception as error:
                log.exception("%s: a step failed", LOOP_NAME)
                if once:
                    raise
                loophealth.after_failure(LOOP_NAME, self.backoff, error, stop)
                continue
            loophealth.passed(LOOP_NAME)
            self.backoff.reset()
            if once and not busy:
                break
            if not busy:
                stop.wait(self.poll_interval)
        return self.stats

    def step(self) -> bool:
        """Claim due pulls and do them one by one; True when there were some."""
        if not any_due():
            return False
        claimed = claim_pulls(self.worker, CLAIM_BATCH, self.lease_ms)
        for index, pull in enumerate(claimed):
            try:
                outcome = pull_claimed(pull)
            except Exception as error:
                # a lost database or a bug: this one is tried again after a backoff, those
                # not started are given back (when the database answers; else their leases
                # run out)
                self._give_back(pull, claimed[index + 1 :], error)
                raise
            if outcome.status == "retry":
                self.stats["retried"] += 1
            elif outcome.status == "dropped":
                self.stats["dropped"] += 1
            else:
                self.stats["pulled"] += 1
        return bool(claimed)

    def _give_back(self, failed, pulls, error):
        try:
            _retry(failed, f"INTERNAL_ERROR: {type(error).__name__}", None)
            for pull in pulls:
                with write_transaction():
                    LEASE.release(
                        (OrderPullRequest.id == pull.id) & (OrderPullRequest.holder == pull.token)
                    )
        except Exception:
            log.debug("giving back claimed pulls failed; their leases run out", exc_info=True)
