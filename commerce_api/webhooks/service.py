"""The delivery loop each worker process runs (``@service("webhook_delivery")``).

One thread (the service's own, with the database connection) fans events out, claims due
deliveries and records outcomes; a small pool of sending threads only does HTTP. Which
endpoints are claimed for and which held delivery is sent next is ``fairness.Slots``'s
choice. Outcomes come back through a queue and are written in batches, together with the
next claim.
"""

import logging
import os
import queue
import secrets
import socket
import threading
import time

from ..db import db, is_postgres, write_transaction
from ..timeutil import now_ms
from . import dispatch, fanout, sender
from .fairness import Slots
from .signing import event_body

log = logging.getLogger("commerce_api.webhooks")
MAX_CONSECUTIVE_FAILURES = 20
# a delivery waiting in the process is sent only while its lease outlasts the attempt by
# this share of the time-out (the lease is at least twice the time-out)
LEASE_MARGIN = 0.25


def parse_schedule(text):
    """``"5,300,1800"`` -> (5.0, 300.0, 1800.0): seconds between attempts."""
    text = str(text if text is not None else "").strip()
    if not text:
        return ()
    try:
        delays = tuple(float(part) for part in text.split(","))
    except ValueError:
        raise ValueError(
            f"WEBHOOK_RETRY_SCHEDULE is not a comma list of seconds: {text!r}"
        ) from None
    if any(delay < 0 or delay != delay for delay in delays):
        raise ValueError(f"WEBHOOK_RETRY_SCHEDULE has a negative delay: {text!r}")
    return delays


class DeliveryService:
    def __init__(self, config):
        self.schedule = parse_schedule(config["WEBHOOK_RETRY_SCHEDULE"])
        self.timeout = float(config["WEBHOOK_TIMEOUT_SECONDS"])
        self.concurrency = max(1, int(config["WEBHOOK_SEND_CONCURRENCY"]))
        self.batch_size = max(1, int(config["WEBHOOK_BATCH_SIZE"]))
        self.poll_interval = max(0.005, float(config["WEBHOOK_POLL_INTERVAL"]))
        self.lease_ms = max(
            int(self.timeout * 1000) * 2, int(config["WEBHOOK_LEASE_SECONDS"]) * 1000
        )
        self.allow_private = bool(config["WEBHOOK_ALLOW_PRIVATE_TARGETS"])
        self.disable_after_ms = int(float(config["WEBHOOK_DISABLE_AFTER_DAYS"]) * 86_400_000)
        self.slots = Slots(
            threads=self.concurrency,
            capacity=self.capacity,
            endpoint_limit=int(config["WEBHOOK_ENDPOINT_CONCURRENCY"]),
        )
        self.worker = f"{socket.gethostname()}:{os.getpid()}:{secrets.token_hex(3)}"
        self.outcomes = queue.Queue()
        self.inflight = 0
        self._unrecorded = []  # outcomes whose recording failed, to try again
        self._failures = 0
        self._claims = 0
        self.stats = {"fanned_out": 0, "sent": 0, "recorded": 0}

    # The loop -----------------------------------------------------------------------------

    def run(self, stop):
        """Deliver until ``stop`` is set; with ``stop`` set on entry, until nothing is due."""
        once = stop.is_set()
        threads = [
            threading.Thread(target=self._sending, name=f"webhook-send-{n}", daemon=True)
            for n in range(self.concurrency)
        ]
        for thread in threads:
            thread.start()
        unqueued = False
        try:
            while True:
                stopping = stop.is_set() and not once
                if stopping and not unqueued:
                    # held but not yet sent: given back at once, not sent during shutdown
                    for delivery in self.slots.unqueue():
                        self.outcomes.put(self._given_back(delivery))
                    unqueued = True
                busy = self._step(claim=not stopping)
                if stopping and self.inflight == 0:
                    break
                if once and not busy and self.inflight == 0:
                    break
                if not busy or self.inflight >= self.capacity:
                    self._wait(self.poll_interval if not stopping else 0.05)
        finally:
            for delivery in self.slots.close():  # nothing is queued unless the loop failed
                self.outcomes.put(self._given_back(delivery))
            for thread in threads:
                thread.join()
            self._record_left()  # outcomes of sends still running at shutdown
            if is_postgres() and not db.is_closed():
                db.close()
        return self.stats

    @property
    def capacity(self):
        return self.concurrency * 2  # a few queued per thread keep every thread busy

    def _step(self, claim):
        """Record outcomes, fan out, claim and send; True when there was work."""
        done = self._drain()
        busy = bool(done)
        if claim and fanout.has_unfanned_events():
            events, _ = fanout.fan_out(self.batch_size, now_ms())
            self.stats["fanned_out"] += events
            busy = busy or events > 0
        free = self.capacity - self.inflight
        claim = claim and free > 0 and dispatch.has_due(now_ms())
        if not (done or claim):
            return busy
        self._claims += 1
        token = f"{self.worker}:{self._claims}"
        claimed = []
        try:
            # one commit for the outcomes and the next claim
            with write_transaction():
                self._record(done)
                if claim:
                    claimed = self._claim(min(free, self.batch_size), token)
        except Exception:
            # the outcomes are tried again; unrecorded, their leases would run out and the
            # deliveries be sent again (at-least-once)
            log.exception("webhook delivery: recording or claiming failed")
            self._unrecorded.extend(done)
            self._failures += 1
            if self._failures >= MAX_CONSECUTIVE_FAILURES:
                raise  # the worker logs it; leases run out and other workers go on
            time.sleep(min(1.0, self.poll_interval * 5))
            return True
        self._failures = 0
        self.inflight += len(claimed)
        self.slots.add(claimed)
        return busy or bool(claimed)

    def _claim(self, free, token):
        now = now_ms()
        candidates = dispatch.due_endpoints(now, self.worker)
        quotas = self.slots.plan(free, candidates)
        return dispatch.claim(quotas, self.lease_ms, token, now, event_body)

    def _sending(self):
        """A sending thread: take the next delivery the slots choose, send it, report."""
        while True:
            delivery = self.slots.take()
            if delivery is None:
                return
            try:
                self.outcomes.put(self._send(delivery))
            finally:
                self.slots.done(delivery)

    def _send(self, delivery):
        # a delivery held in the queue until its lease could run out mid-send goes back
        # unsent (another worker could take it meanwhile and send it a second time)
        if now_ms() + self.timeout * 1000 * (1 + LEASE_MARGIN) > delivery.lease_until:
            return self._given_back(delivery)
        try:
            return sender.send(delivery, timeout=self.timeout, allow_private=self.allow_private)
        except Exception as exc:  # a bug must not lose the outcome: record a failed attempt
            log.exception("webhook delivery %s: sending failed", delivery.id)
            return dispatch.Outcome(
                delivery, now_ms(), 0, error=f"Internal error while sending: {type(exc).__name__}"
            )

    @staticmethod
    def _given_back(delivery):
        return dispatch.Outcome(delivery, now_ms(), 0, sent=False, given_back=True)

    def _wait(self, seconds):
        """Sleep until an outcome arrives or ``seconds`` pass."""
        try:
            outcome = self.outcomes.get(timeout=seconds)
        except queue.Empty:
            return
        self.outcomes.put(outcome)

    def _drain(self):
        done, self._unrecorded = self._unrecorded, []
        retried = len(done)  # already counted out of flight
        while True:
            try:
                done.append(self.outcomes.get_nowait())
            except queue.Empty:
                break
        self.inflight -= len(done) - retried
        return done

    def _record(self, outcomes):
        if outcomes:
            self.stats["sent"] += sum(1 for o in outcomes if o.sent)
            self.stats["recorded"] += dispatch.record(
                outcomes, self.schedule, now_ms(), self.disable_after_ms
            )

    def _record_left(self):
        """At shutdown: what is still unrecorded, tried a few times."""
        for attempt in range(3):
            done = self._drain()
            if not done:
                return
            try:
                with write_transaction():
                    self._record(done)
                return
            except Exception:
                log.exception("webhook outcomes: recording failed (try %s)", attempt + 1)
                self._unrecorded.extend(done)
                time.sleep(0.2 * (attempt + 1))


def run_service(config, stop):
    service = DeliveryService(config)
    return service.run(stop)
