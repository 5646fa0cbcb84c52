"""One run of a job: the entry the worker keeps for a held job, the ``ctx`` its handler
gets, and the handler's outcome as the runners write it."""

import logging
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..shapes import ShapeError
from . import completion, registry
from . import queue as jobqueue
from .errors import JobFailed, JobLost
from .models import Job
from .outcomes import AttemptFailure, Completed, Failed, Outcome, PreparedCompletion, StepItem

log = logging.getLogger("commerce_api.worker")


class Entry:
    """A job this process holds: prefetched, or running on a runner."""

    __slots__ = ("job", "runner", "lost")

    def __init__(self, job: Job) -> None:
        self.job = job
        self.runner = None  # the runners.Runner that claimed it
        self.lost = False  # taken away (lease ran out) or given back: its outcome is void

    @property
    def key(self) -> tuple[str, int]:
        return (self.job.id, self.job.attempts)


# Outcomes -------------------------------------------------------------------------------


@dataclass(frozen=True)
class Finished:
    """A run's outcome waiting to be written, with the runner's next claim.

    ``completion``: for a ``Completed`` outcome, what ``completion.prepare_completion``
    computed before the write transaction (None for a ``Failed`` one).
    """

    entry: Entry
    outcome: Outcome
    completion: PreparedCompletion | None = None

    @classmethod
    def of(cls, entry: Entry, outcome: Outcome, worker_id: str) -> "Finished":
        if isinstance(outcome, Completed):
            prepared = completion.prepare_completion(
                entry.job, worker_id, None, encoded=outcome.encoded
            )
            return cls(entry, outcome, prepared)
        return cls(entry, outcome)

    def step_item(self) -> StepItem:
        """What ``queue.step`` writes for this run."""
        if isinstance(self.outcome, Completed):
            return self.completion
        return AttemptFailure(self.entry.job, self.outcome)


# The handler's side -------------------------------------------------------------------


class JobContext:
    """What a handler gets besides the job: heartbeat, progress, worker id, attempt.

    ``on_lost(entry)`` is called when a renewal or progress write finds the job taken.
    """

    def __init__(
        self,
        entry: Entry,
        worker_id: str,
        config: Any,
        lease_seconds: float,
        lease_ms: int,
        on_lost: Callable[[Entry], None],
    ) -> None:
        self._entry = entry
        self._on_lost = on_lost
        self._lease_seconds = lease_seconds
        self._lease_ms = lease_ms
        self.worker_id = worker_id
        self.attempt = entry.job.attempts
        self.config = config
        self._last_renewal = time.monotonic()
        self._last_progress = 0.0

    @property
    def lost(self) -> bool:
        return self._entry.lost

    @property
    def log(self) -> logging.Logger:
        return logging.getLogger(f"commerce_api.jobs.{self._entry.job.type}")

    def heartbeat(self) -> None:
        """Renew the lease now; raise JobLost when the job is no longer ours."""
        if self._entry.lost:
            raise JobLost(self._entry.job.id)
        # the heartbeat thread renews anyway; don't hammer the database from tight loops
        if time.monotonic() - self._last_renewal < min(1.0, self._lease_seconds / 10):
            return
        self._last_renewal = time.monotonic()
        job = self._entry.job
        held = jobqueue.renew_leases(self.worker_id, [(job.id, job.attempts)], self._lease_ms)
        if not held:
            self._on_lost(self._entry)
            raise JobLost(job.id)

    def progress(self, done: int, total: int) -> None:
        """Report ``{done, total}`` (shown by GET /api/ai-jobs/:id) and renew the lease.

        Written at most twice a second, and always for the last step (done == total).
        """
        now = time.monotonic()
        if done < total and now - self._last_progress < 0.5:
            return
        self._last_progress = now
        job = self._entry.job
        if not jobqueue.record_progress(job.id, job.attempts, done, total):
            self._on_lost(self._entry)
            raise JobLost(job.id)
        self.heartbeat()


def run_handler(entry: Entry, ctx: JobContext) -> Outcome | None:
    """Run the entry's handler: its outcome, or None when the job was lost meanwhile."""
    job = entry.job
    handler = registry.get(job.type)
    if handler is None or handler.run is None:
        message = f"Job type {job.type!r} has no handler yet; it cannot run."
        return Failed("JOB_TYPE_NOT_IMPLEMENTED", message, False)
    try:
        result = handler.run(job, ctx)
    except JobLost:
        log.info("job %s: stopped after losing its lease", job.id)
        return None
    except JobFailed as failure:
        return Failed(failure.code, failure.message, failure.retryable, failure.details)
    except Exception:
        log.error("job %s (%s) raised:\n%s", job.id, job.type, traceback.format_exc())
        return Failed("INTERNAL_ERROR", "The job failed with an unexpected error.", True)
    if result is not None and not isinstance(result, dict):
        message = "The job handler returned something other than an object."
        return Failed("INTERNAL_ERROR", message, False)
    if handler.result is not None:
        # stored as the document shows it: every required field present, or no result
        try:
            result = registry.result_shape(handler.result)(result or {})
        except ShapeError as exc:
            log.error(
                "job %s (%s): its result does not match its schema: %s", job.id, job.type, exc
            )
            message = "The job's result does not match its documented schema."
            return Failed("INTERNAL_ERROR", message, False)
    try:
        return Completed(completion.encode_result(result))
    except (TypeError, ValueError) as exc:
        log.error("job %s: result is not JSON: %s", job.id, exc)
        return Failed("INTERNAL_ERROR", "The job result could not be stored.", False)
