"""The delivery loop each worker process runs (``@service("webhook_delivery")``).

One thread (the service's own, with the database connection) fans events out, claims due
deliveries and records outcomes; a small pool of sending threads only does HTTP. Outcomes
come back through a queue and are written in batches, together with the next claim
(the loop itself: ``sendloop.SendLoop``).
"""

import logging
import os
import secrets
import socket
import time

from ..db import write_transaction
from ..sendloop import SendLoop
from ..timeutil import now_ms
from . import dispatch, fanout, sender
from .signing import event_body

log = logging.getLogger("commerce_api.webhooks")
MAX_CONSECUTIVE_FAILURES = 20


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


class DeliveryService(SendLoop):
    thread_name_prefix = "webhook-send"

    def __init__(self, config):
        self.concurrency = max(1, int(config["WEBHOOK_SEND_CONCURRENCY"]))
        super().__init__(self.concurrency, config["WEBHOOK_POLL_INTERVAL"])
        self.schedule = parse_schedule(config["WEBHOOK_RETRY_SCHEDULE"])
        self.timeout = float(config["WEBHOOK_TIMEOUT_SECONDS"])
        self.batch_size = max(1, int(config["WEBHOOK_BATCH_SIZE"]))
        self.lease_ms = max(
            int(self.timeout * 1000) * 2, int(config["WEBHOOK_LEASE_SECONDS"]) * 1000
        )
        self.allow_private = bool(config["WEBHOOK_ALLOW_PRIVATE_TARGETS"])
        self.worker = f"{socket.gethostname()}:{os.getpid()}:{secrets.token_hex(3)}"
        self.inflight = 0
        self._failures = 0
        self._claims = 0
        self.stats = {"fanned_out": 0, "sent": 0, "recorded": 0}

    def run(self, stop):
        """Deliver until ``stop`` is set; with ``stop`` set on entry, until nothing is due."""
        super().run(stop)
        return self.stats

    @property
    def capacity(self):
        return self.concurrency * 2  # a few queued per thread keep every thread busy

    def in_flight(self):
        return self.inflight

    def landed(self, outcome):
        self.inflight -= 1

    def step(self, pool, claim):
        """Record outcomes, fan out, claim and send; True when there was work."""
        done = self.take_outcomes()
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
                self.record(done)
                if claim:
                    claimed = dispatch.claim(
                        min(free, self.batch_size), self.lease_ms, token, now_ms(), event_body
                    )
        except Exception:
            # the outcomes are tried again; unrecorded, their leases would run out and the
            # deliveries be sent again (at-least-once)
            log.exception("webhook delivery: recording or claiming failed")
            self.keep_unrecorded(done)
            self._failures += 1
            if self._failures >= MAX_CONSECUTIVE_FAILURES:
                raise  # the worker logs it; leases run out and other workers go on
            time.sleep(min(1.0, self.poll_interval * 5))
            return True
        self._failures = 0
        for delivery in claimed:
            self.inflight += 1
            pool.submit(self._send, delivery)
        return busy or bool(claimed)

    def _send(self, delivery):
        try:
            outcome = sender.send(delivery, timeout=self.timeout, allow_private=self.allow_private)
        except Exception as exc:  # a bug must not lose the outcome: record a failed attempt
            log.exception("webhook delivery %s: sending failed", delivery.id)
            outcome = dispatch.Outcome(
                delivery, now_ms(), 0, error=f"Internal error while sending: {type(exc).__name__}"
            )
        self.outcomes.put(outcome)

    def record(self, outcomes):
        if outcomes:
            self.stats["sent"] += sum(1 for o in outcomes if o.sent)
            self.stats["recorded"] += dispatch.record(outcomes, self.schedule, now_ms())


def run_service(config, stop):
    service = DeliveryService(config)
    return service.run(stop)
