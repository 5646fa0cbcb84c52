"""The outcomes that pass between a job's run, the runners and the queue: what a handler's
run came to, what the queue is asked to write, and what writing it did. Values only (as
saleor's ``interface.py``); ``runtime`` makes them, ``queue.step`` writes them."""

import enum
from dataclasses import dataclass
from typing import Any

from .models import Job


@dataclass(frozen=True)
class Completed:
    """The handler returned: its result as ``completion.encode_result`` JSON text."""

    encoded: str


@dataclass(frozen=True)
class Failed:
    """The handler failed (or could not run): the error the attempt records."""

    code: str
    message: str
    retryable: bool
    details: dict | None = None


Outcome = Completed | Failed


@dataclass(frozen=True)
class PreparedCompletion:
    """Everything a completion writes, computed before the write transaction opens
    (``completion.prepare_completion``): the fenced update's values and the outbox row."""

    job: Job
    result: str  # the result's JSON text, as stored
    completed_at: int
    worker_id: str
    event: list[Any] | None  # the ``ai_job.completed`` outbox row; None: an internal job

    @property
    def params(self) -> dict[str, Any]:
        """The fenced update's parameters by name (``completion._COMPLETE``)."""
        job = self.job
        return {
            "id": job.id,
            "attempts": job.attempts,
            "worker_id": self.worker_id,
            "result": self.result,
            "completed_at": self.completed_at,
        }


@dataclass(frozen=True)
class AttemptFailure:
    """A failed attempt to record (``queue.record_failure``)."""

    job: Job
    failed: Failed


# What ``queue.step`` is given per finished job.
StepItem = PreparedCompletion | AttemptFailure


class Written(enum.Enum):
    """What writing an attempt's outcome did."""

    COMPLETED = "completed"
    RETRYING = "retrying"  # back to the queue after a backoff
    FAILED = "failed"  # no attempt left, or not retryable
    LOST = "lost"  # the worker no longer held the job: nothing changed
