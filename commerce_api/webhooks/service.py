"""The delivery loop each worker process runs (``@background_loop("webhook_delivery")``).

One thread (the service's own, with the database connection) fans events out, claims due
deliveries and records outcomes; a small pool of sending threads only does HTTP. Which
endpoints are claimed for and which held delivery is sent next is ``fairness.Slots``'s
choice. Outcomes come back through a queue and are written in batches, together with the
next claim (the loop itself: ``sendloop.SendLoop``, with sending threads of its own that
take what the slots choose instead of a pool).
"""

import logging
import threading
from typing import Any

from ..db import write_transaction
from ..sendloop import SendLoop
from ..timeutil import now_ms
from . import dispatch, fanout, sender
from .fairness import Slots
from .signing import event_body

log = logging.getLogger("commerce_api.webhooks")
# a delivery waiting in the process is sent only while its lease outlasts the attempt by
# this share of the time-out (the lease is at least twice the time-out)
LEASE_MARGIN = 0.25


def parse_schedule(text: str | None) -> tuple[float, ...]:
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
    loop_name = "webhook_delivery"

    def __init__(self, config: dict[str, Any]) -> None:
        self.schedule = parse_schedule(config["WEBHOOK_RETRY_SCHEDULE"])
        self.timeout = float(config["WEBHOOK_TIMEOUT_SECONDS"])
        self.concurrency = max(1, int(config["WEBHOOK_SEND_CONCURRENCY"]))
        super().__init__(self.concurrency, config["WEBHOOK_POLL_INTERVAL"])
        self.batch_size = max(1, int(config["WEBHOOK_BATCH_SIZE"]))
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
        self.inflight = 0
        self.stats = {"fanned_out": 0, "sent": 0, "recorded": 0}

    # The loop (sendloop.SendLoop.run) ---------------------------------------------------

    def run(self, stop: threading.Event) -> dict[str, int]:
        """Deliver until ``stop`` is set; with ``stop`` set on entry, until nothing is due."""
        super().run(stop)
        return self.stats

    def start_senders(self) -> list[threading.Thread]:
        threads = [
            threading.Thread(
                target=self._sending, name=f"{self.thread_name_prefix}-{n}", daemon=True
            )
            for n in range(self.concurrency)
        ]
        for thread in threads:
            thread.start()
        return threads

    def stopping(self) -> None:
        # held but not yet sent: given back at once, not sent during shutdown
        for delivery in self.slots.unqueue():
            self.outcomes.put(self._given_back(delivery))

    def stop_senders(self, senders: list[threading.Thread]) -> None:
        for delivery in self.slots.close():  # nothing is queued unless the loop failed
            self.outcomes.put(self._given_back(delivery))
        for thread in senders:
            thread.join()

    def in_flight(self) -> int:
        return self.inflight

    def landed(self, outcome: dispatch.Outcome) -> None:
        self.inflight -= 1

    @property
    def capacity(self) -> int:
        return self.concurrency * 2  # a few queued per thread keep every thread busy

    def step(self, senders: list[threading.Thread], claim: bool) -> bool:
        """Record outcomes, fan out, claim and hand the claimed to the slots (the sending
        threads take them from there); True when there was work."""
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
        token = self.next_token()
        claimed = []
        try:
            # one commit for the outcomes and the next claim
            with write_transaction():
                self.record(done)
                if claim:
                    claimed = self._claim(min(free, self.batch_size), token)
        except Exception as error:
            # the outcomes are tried again; unrecorded, their leases would run out and the
            # deliveries be sent again (at-least-once)
            log.exception("webhook delivery: recording or claiming failed")
            self.keep_unrecorded(done)
            self.step_failed(error)
            self.pause_after_failure()
            return True
        self.step_succeeded()
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

    def record(self, outcomes: list[dispatch.Outcome]) -> None:
        if outcomes:
            self.stats["sent"] += sum(1 for o in outcomes if o.sent)
            self.stats["recorded"] += dispatch.record(
                outcomes, self.schedule, now_ms(), self.disable_after_ms
            )


def run_loop(config: dict[str, Any], stop: threading.Event) -> dict[str, int]:
    service = DeliveryService(config)
    return service.run(stop)
