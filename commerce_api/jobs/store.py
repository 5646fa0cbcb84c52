"""The job queue's shared ground, used by dispatch (``services.py``) and by the worker
side (``queue.py``, ``worker.py``): the writers' lock and its transaction, the wake-up
signal, the queue settings, the job as the API and events show it, and the batch
cancellation both sides write. The worker side imports this, never ``services.py``.
"""

from contextlib import contextmanager
from typing import Any

from ..config import current_config
from ..db import db, is_postgres, sqlite_file, write_transaction
from ..filelock import Turns
from ..shapes import compile_serializer, field_names
from ..timeutil import format_ms
from . import registry
from .models import Job
from .shapes import JOB_HEAD, JobSchema

# PostgreSQL workers LISTEN on this channel; dispatch NOTIFYs it (delivered at commit).
NOTIFY_CHANNEL = "commerce_jobs"

JOB_FIELDS = field_names(JobSchema)
_job_head = compile_serializer(JobSchema(only=JOB_HEAD))


# Settings -------------------------------------------------------------------------------


def typical_ms(job_type):
    return registry.typical_seconds(job_type) * 1000


def aging_ms(config=None):
    return int((config or current_config())["JOB_PRIORITY_AGING_SECONDS"]) * 1000


def claim_key_for(run_at, rank, config=None):
    """Queue order: one aging window per priority level below high (see models.Job)."""
    return run_at + rank * aging_ms(config)


def timeout_seconds_for(job_type, config=None):
    config = config or current_config()
    spec = registry.get(job_type)
    timeout = spec.timeout if spec is not None else None
    return int(timeout or config["JOB_DEFAULT_TIMEOUT_SECONDS"])


# The writers' lock ----------------------------------------------------------------------

# The job writers (dispatch and the worker's threads and processes) take turns on a lock
# of their own (``filelock.Turns``: woken at once, not polled by SQLite's busy handler).
# Other writers don't take it; against them SQLite's busy handler still applies.
_turns = {}  # id(database) -> Turns of "<database>-queue.lock"


def _queue_turns():
    key = id(db.obj)
    turns = _turns.get(key)
    if turns is None:
        path = sqlite_file(db.obj)
        turns = _turns[key] = Turns(f"{path}-queue.lock" if path else None)
    return turns


@contextmanager
def queue_writer():
    """Hold the job writers' lock (SQLite only; PostgreSQL locks rows)."""
    if is_postgres():
        yield
        return
    with _queue_turns().turn():
        yield


@contextmanager
def job_write():
    """A write transaction of the job queue: the writers' lock first (when no transaction
    is open yet: the lock is always taken before SQLite's, never while holding it), then
    BEGIN IMMEDIATE. On PostgreSQL an ordinary transaction."""
    if is_postgres() or db.transaction_depth() > 0:
        with write_transaction():
            yield
        return
    with queue_writer(), write_transaction():
        yield


def notify_workers():
    """Wake PostgreSQL workers at commit; SQLite workers notice the commit by themselves."""
    if is_postgres():
        db.execute_sql(f"NOTIFY {NOTIFY_CHANNEL}")


# Batches and representation ---------------------------------------------------------------


def cancel_batch_rest(job, reason, now):
    """Cancel the queued jobs after ``job`` in its sequential batch."""
    if not (job.batch_id and job.batch_sequential):
        return 0
    return (
        Job.update(status="cancelled", cancel_reason=reason, completed_at=now, updated_at=now)
        .where(
            (Job.batch_id == job.batch_id)
            & (Job.batch_position > job.batch_position)
            & (Job.status == "queued")
        )
        .execute()
    )


def serialize_job(job: Job) -> dict[str, Any]:
    data = _job_head(job)
    if job.started_at is not None:
        data["started_at"] = format_ms(job.started_at)
    if job.progress is not None and job.status in ("running", "completed"):
        data["progress"] = job.progress
    if job.status == "completed":
        data["completed_at"] = format_ms(job.completed_at)
        started = job.started_at if job.started_at is not None else job.completed_at
        data["duration_seconds"] = int(round((job.completed_at - started) / 1000))
        data["result"] = job.result
    elif job.status == "failed":
        data["error"] = job.error
        data["failed_at"] = format_ms(job.completed_at)
    elif job.status == "cancelled":
        data["cancelled_at"] = format_ms(job.completed_at)
        data["cancel_reason"] = job.cancel_reason
    if job.batch_id:
        data["batch_id"] = job.batch_id
        data["batch_index"] = job.batch_position
    return data
