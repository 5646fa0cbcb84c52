"""The listing push loop each worker process runs (``@background_loop("listing_push")``).

One thread (the service's own) records outcomes and claims due listings; a pool of pushing
threads only calls the gateway (the loop itself: ``sendloop.SendLoop``). Connections take
turns, and tenants before them: each pass goes through the tenants with due listings in a
rotating order, and through each tenant's connections in turn, claiming at most
``MARKETPLACE_CONNECTION_CONCURRENCY`` pushes in flight per connection. A tenant with
10,000 pending listings so holds at most that many pushing threads, and another tenant's
pushes go out beside them.

A connector that takes batches (``batch_size`` above 1: ``amazon``, ``http`` with
``settings.batch_size``) gets up to that many due listings of a connection in one push,
which counts as one of the connection's pushes in flight; listings a marketplace accepted
for processing (``submitted``) are checked the same way (``batches``).
"""

import contextvars
import logging
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from ..db import db, is_postgres, write_transaction
from ..sendloop import SendLoop
from ..timeutil import now_ms
from . import batches, listing_push
from .models import MarketplaceConnection
from .registry import CONNECTOR_CLASSES

log = logging.getLogger("commerce_api.marketplaces")


def in_turn(due: list[tuple[str, str]], turn: int) -> list[tuple[str, str]]:
    """``due`` connections ``[(tenant, marketplace)]`` in the order they are served:
    tenants in a rotating order, then the first connection of each, the second...."""
    by_tenant = {}
    for tenant_id, marketplace in sorted(due):
        by_tenant.setdefault(tenant_id, []).append((tenant_id, marketplace))
    tenants = list(by_tenant)
    if not tenants:
        return []
    start = turn % len(tenants)
    tenants = tenants[start:] + tenants[:start]
    ordered, depth = [], 0
    while len(ordered) < len(due):
        for tenant_id in tenants:
            keys = by_tenant[tenant_id]
            if depth < len(keys):
                ordered.append(keys[depth])
        depth += 1
    return ordered


class ListingPushLoop(SendLoop):
    thread_name_prefix = "listing-push"
    loop_name = "listing_push"

    def __init__(self, config: dict[str, Any]) -> None:
        self.per_connection = max(1, int(config["MARKETPLACE_CONNECTION_CONCURRENCY"]))
        super().__init__(self.per_connection * 4, config["MARKETPLACE_PUSH_POLL_INTERVAL"])
        self.spacing_ms = int(float(config["MARKETPLACE_LISTING_PUSH_SPACING_SECONDS"]) * 1000)
        deadline = float(config["MARKETPLACE_DEADLINE_SECONDS"])
        # a push waits for a tenant slot at most this long (then it is due again shortly);
        # the lease outlives the wait and the call, so a live push never loses it
        self.slot_wait = 2 * deadline
        self.lease_ms = int((self.slot_wait + deadline + 10) * 1000)
        self.inflight = {}  # (tenant id, marketplace) -> pushes in flight
        self._turn = 0
        self._due = []  # connections with due listings, as last looked up
        self._checks = []  # connections with submitted listings whose result is due
        self._connections = {}  # (tenant id, marketplace) -> active connection
        self._next_lookup = 0.0  # monotonic time of the next look-up of both
        self.stats = {"pushed": 0, "accepted": 0, "rejected": 0, "unavailable": 0}

    def run(self, stop: threading.Event) -> dict[str, int]:
        """Push until ``stop`` is set; with ``stop`` set on entry, until nothing is due."""
        super().run(stop)
        return self.stats

    def in_flight(self) -> int:
        return sum(self.inflight.values())

    def landed(self, outcome: listing_push.PushOutcome | batches.BatchOutcome) -> None:
        if isinstance(outcome, batches.BatchOutcome):
            key = (outcome.connection.tenant_id, outcome.connection.marketplace)
        else:
            key = (outcome.listing.tenant_id, outcome.listing.marketplace)
        left = self.inflight.get(key, 0) - 1
        if left > 0:
            self.inflight[key] = left
        else:
            self.inflight.pop(key, None)

    def step(self, pool: ThreadPoolExecutor, claim: bool) -> bool:
        """Record outcomes, then claim and hand out pushes; True when there was work."""
        done = self.take_outcomes()
        if done and not self._record_batch(done):
            self.pause_after_failure()
            return True
        busy = bool(done)
        if not claim or self.in_flight() >= self.threads:
            return busy
        try:
            claimed = self._claim(pool)
        except Exception as error:
            # a busy database, a lost connection: the loop goes on (a claim that failed
            # took nothing; one that committed is pushed, or its lease runs out)
            log.exception("listing push: looking for or claiming pending listings failed")
            self.step_failed(error)
            self._due = []
            self.pause_after_failure()
            return True
        self.step_succeeded()
        return busy or claimed

    def _claim(self, pool):
        """Claim due listings, connections in turn, and submit their pushes; True when
        some were claimed."""
        busy = False
        now = now_ms()
        if not self._due or time.monotonic() >= self._next_lookup:
            # which connections have work: looked up once per poll interval, not per push
            # (a scan of the pending listings), or at once when none was known
            self._next_lookup = time.monotonic() + self.poll_interval
            pushes, checks = listing_push.has_due(now), batches.has_checks_due(now)
            if not pushes and not checks:
                self._due, self._checks = [], []
                return busy
            self._connections = {
                (c.tenant_id, c.marketplace): c
                for c in MarketplaceConnection.select().where(
                    MarketplaceConnection.status == "active"
                )
            }
            due = listing_push.due_connections(now) if pushes else []
            self._due = in_turn([key for key in due if key in self._connections], self._turn)
            due = batches.check_connections(now) if checks else []
            self._checks = in_turn([k for k in due if k in self._connections], self._turn)
            self._turn += 1
        busy = self._claim_batches(pool, now) or busy
        for key in list(self._due):
            if self._batch_size(self._connections[key]) > 1:
                continue  # pushed in batches (_claim_batches)
            free = min(
                self.per_connection - self.inflight.get(key, 0),
                self.threads - self.in_flight(),
            )
            if free <= 0:
                continue
            token = self.next_token()
            claimed = listing_push.claim(key[0], key[1], free, self.lease_ms, token, now)
            if len(claimed) < free:
                self._due.remove(key)  # nothing more due there for now
            connection = self._connections[key]
            for item in claimed:
                self.inflight[key] = self.inflight.get(key, 0) + 1
                # each push runs in a copy of this thread's context (the app's settings)
                pool.submit(contextvars.copy_context().run, self._push, connection, item)
            busy = busy or bool(claimed)
        return busy

    def _batch_size(self, connection):
        cls = CONNECTOR_CLASSES.get(connection.connector)
        size = getattr(cls, "batch_size", 1)
        if connection.connector == "http":
            size = int((connection.settings or {}).get("batch_size") or 1)
        return max(1, int(size))

    def _claim_batches(self, pool, now):
        """Claim and hand out batch pushes and submission checks; True when some were."""
        busy = False
        for kind, keys in (("check", self._checks), ("push", self._due)):
            for key in list(keys):
                connection = self._connections[key]
                size = self._batch_size(connection)
                if kind == "push" and size == 1:
                    continue  # single pushes: below
                if (
                    self.inflight.get(key, 0) >= self.per_connection
                    or self.in_flight() >= self.threads
                ):
                    continue
                token = self.next_token()
                claim = batches.claim_checks if kind == "check" else listing_push.claim
                claimed = claim(key[0], key[1], size, self.lease_ms, token, now)
                if len(claimed) < size:
                    keys.remove(key)
                if not claimed:
                    continue
                self.inflight[key] = self.inflight.get(key, 0) + 1
                run = self._check_batch if kind == "check" else self._push_batch
                pool.submit(contextvars.copy_context().run, run, connection, claimed)
                busy = True
        return busy

    def _push_batch(self, connection, items):
        self._batch(batches.push_batch, connection, items)

    def _check_batch(self, connection, items):
        self._batch(batches.check_batch, connection, items)

    def _batch(self, fn, connection, items):
        try:
            outcome = fn(connection, items, slot_wait=self.slot_wait)
        except Exception as exc:  # a bug must not lose the listings: due again after a pause
            log.exception("listings of %s: pushing a batch failed", connection.id)
            outcome = batches.BatchOutcome(
                connection,
                [
                    listing_push.PushOutcome(
                        item, now_ms(), "unavailable", None, "INTERNAL_ERROR", type(exc).__name__
                    )
                    for item in items
                ],
            )
            if fn is batches.check_batch:
                for pushed in outcome.outcomes:
                    pushed.status = "processing"
                outcome.check = True
        finally:
            if is_postgres() and not db.is_closed():
                db.close()
        self.outcomes.put(outcome)

    def _push(self, connection, item):
        try:
            outcome = listing_push.push(connection, item, slot_wait=self.slot_wait)
        except Exception as exc:  # a bug must not lose the listing: due again after a pause
            log.exception("listing %s: pushing failed", item.id)
            outcome = listing_push.PushOutcome(
                item, now_ms(), "unavailable", None, "INTERNAL_ERROR", type(exc).__name__
            )
        finally:
            if is_postgres() and not db.is_closed():
                db.close()  # back to the pool: pushing threads outlive many pushes
        self.outcomes.put(outcome)

    def record(self, outcomes: list[Any]) -> None:
        batches.record(outcomes, self.spacing_ms)
        for outcome in outcomes:
            for each in getattr(outcome, "outcomes", [outcome]):
                self.stats["pushed"] += 1
                self.stats[each.status] = self.stats.get(each.status, 0) + 1

    def _record_batch(self, outcomes):
        """Record the outcomes in one transaction; False (kept to try again) on failure."""
        try:
            with write_transaction():
                self.record(outcomes)
        except Exception as error:
            log.exception("listing push: recording outcomes failed")
            self.keep_unrecorded(outcomes)
            self.step_failed(error)
            return False
        self.step_succeeded()
        return True


def run_loop(config: dict[str, Any], stop: threading.Event) -> dict[str, int]:
    return ListingPushLoop(config).run(stop)
