"""The loop of a worker service that claims work, sends it from a pool of threads and
records the outcomes: webhook delivery (``webhooks.service``) and listing pushes
(``marketplaces.listing_push_loop``).

One thread (the service's own, with the database connection) records outcomes and claims
more (``step``); the sending threads only talk to the outside and hand their outcomes
back through a queue. A subclass says what one step does, how much is in flight, and how
to record a batch of outcomes.
"""

import logging
import os
import queue
import secrets
import socket
import threading
import time
from abc import ABC, abstractmethod
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from . import loophealth
from .db import db, is_postgres, write_transaction

log = logging.getLogger("commerce_api.sendloop")


class SendLoop(ABC):
    thread_name_prefix = "send"
    loop_name = "send"  # as reported by the heartbeat (loophealth)

    def __init__(self, threads: int, poll_interval: float) -> None:
        self.threads = max(1, int(threads))
        self.poll_interval = max(0.005, float(poll_interval))
        self.outcomes = queue.Queue()
        self._unrecorded = []  # outcomes whose recording failed, to try again
        # who holds the leases this loop claims: every claim's token starts with it
        self.worker = f"{socket.gethostname()}:{os.getpid()}:{secrets.token_hex(3)}"
        self._claims = 0
        # a failed step (a busy or lost database) drops a broken connection and waits,
        # longer each time in a row; the loop never gives up (loophealth)
        self._backoff = loophealth.Backoff(first=min(1.0, self.poll_interval * 5))
        self._step_failed = False

    # what a subclass provides -------------------------------------------------------------

    @property
    def capacity(self) -> int:
        """Sends in flight at which the loop waits for outcomes instead of claiming."""
        return self.threads

    @abstractmethod
    def in_flight(self) -> int:
        """Sends handed out whose outcomes have not come back."""

    @abstractmethod
    def step(self, senders: Any, claim: bool) -> bool:
        """Record outcomes, then (with ``claim``) claim and hand work to ``senders``; True
        when there was work."""

    def landed(self, outcome: Any) -> None:
        """An outcome came back from a sending thread (no longer in flight); by default
        nothing to count."""
        return None

    def start_senders(self) -> Any:
        """The sending threads, handed to ``step``: by default a pool it submits to."""
        return ThreadPoolExecutor(self.threads, thread_name_prefix=self.thread_name_prefix)

    def stopping(self) -> None:
        """The stop was asked for: what is held but not yet sent may be given back (by
        default nothing is held)."""
        return None

    def stop_senders(self, senders: Any) -> None:
        """Let the sending threads finish what they are sending, then end them."""
        senders.shutdown(wait=True)

    @abstractmethod
    def record(self, outcomes: list) -> None:
        """Write ``outcomes`` (inside the caller's transaction)."""

    # claims and failures -------------------------------------------------------------------

    def next_token(self) -> str:
        """The lease token of a new claim: ``<worker>:<claim number>``."""
        self._claims += 1
        return f"{self.worker}:{self._claims}"

    def step_failed(self, error: BaseException | None = None) -> None:
        """A step failed (the caller logged it): recorded, and a connection it may have
        broken is dropped; the caller then pauses (``pause_after_failure``)."""
        self._step_failed = True
        loophealth.failed(self.loop_name)
        loophealth.drop_connection(error)

    def step_succeeded(self) -> None:
        self._backoff.reset()

    def pause_after_failure(self) -> None:
        time.sleep(self._backoff.next_delay())

    # the loop -----------------------------------------------------------------------------

    def run(self, stop: threading.Event) -> None:
        """Run until ``stop`` is set; with ``stop`` set on entry, until nothing is due."""
        once = stop.is_set()
        senders = self.start_senders()
        told = False
        try:
            while True:
                stopping = stop.is_set() and not once
                if stopping and not told:
                    self.stopping()
                    told = True
                busy = self._step(senders, claim=not stopping)
                if stopping and self.in_flight() == 0:
                    break
                if once and not busy and self.in_flight() == 0:
                    break
                if not busy or self.in_flight() >= self.capacity:
                    self.wait(self.poll_interval if not stopping else 0.05)
        finally:
            self.stop_senders(senders)
            self.record_left()  # outcomes of sends still running at shutdown
            if is_postgres() and not db.is_closed():
                db.close()

    def _step(self, senders, claim):
        """One step; a failure anywhere in it is logged and waited out, never fatal."""
        self._step_failed = False
        try:
            busy = self.step(senders, claim)
        except Exception as error:
            log.exception("%s: a step failed", self.loop_name)
            self.step_failed(error)
            self.pause_after_failure()
            return True
        if not self._step_failed:
            loophealth.passed(self.loop_name)
        return busy

    def wait(self, seconds: float) -> None:
        """Sleep until an outcome arrives or ``seconds`` pass."""
        try:
            outcome = self.outcomes.get(timeout=seconds)
        except queue.Empty:
            return
        self.outcomes.put(outcome)

    def take_outcomes(self) -> list:
        """The outcomes to record: those whose recording failed before, then the new ones."""
        done, self._unrecorded = self._unrecorded, []
        retried = len(done)  # already counted out of flight
        while True:
            try:
                done.append(self.outcomes.get_nowait())
            except queue.Empty:
                break
        for outcome in done[retried:]:
            self.landed(outcome)
        return done

    def keep_unrecorded(self, outcomes: list) -> None:
        """Recording ``outcomes`` failed: they are tried again with the next ones."""
        self._unrecorded.extend(outcomes)

    def record_left(self) -> None:
        """At shutdown: what is still unrecorded, tried a few times."""
        for attempt in range(3):
            done = self.take_outcomes()
            if not done:
                return
            try:
                with write_transaction():
                    self.record(done)
                return
            except Exception:
                log.exception("%s: recording outcomes failed (try %s)", type(self).__name__,
                              attempt + 1)  # fmt: skip
                self.keep_unrecorded(done)
                time.sleep(0.2 * (attempt + 1))
