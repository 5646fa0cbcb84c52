"""The worker side of the job table: claim, lease, finish, sweep, give back; periodic locks.

Every state change a worker makes is a conditional UPDATE fenced by
``(status = 'running', worker_id, attempts)``: a worker that lost its lease (the sweeper
gave the job to someone else, or failed it) changes nothing, whatever it finishes later.
"""

import logging
from collections.abc import Iterable
from typing import Any

from peewee import BooleanField, Expression

from ..config import current_config
from ..db import JSONField
from ..events import emit
from ..leases import DueProbe, Lease, backoff_seconds, delay_ms, lease_free
from ..timeutil import now_ms
from .completion import emits_events, event_job, write_completions
from .models import RUNNING, Job, PeriodicTask, WorkerProcess
from .outcomes import AttemptFailure, PreparedCompletion, StepItem, Written
from .store import aging_ms, cancel_batch_rest, job_write, notify_workers

log = logging.getLogger("commerce_api.jobs")

MAX_BACKOFF_SECONDS = 3600


# Claim ----------------------------------------------------------------------------------


def claim_jobs(worker_id: str, limit: int, lease_ms: int, now: int | None = None) -> list[Job]:
    """Take up to ``limit`` due jobs, high > normal > low and FIFO, in one statement.

    SQLite: ``UPDATE ... WHERE id IN (SELECT ... LIMIT n) RETURNING`` inside BEGIN
    IMMEDIATE, so claims of all processes are serialized. PostgreSQL: the due rows are
    selected ``FOR UPDATE SKIP LOCKED`` in a materialized CTE, so concurrent workers take
    different rows without waiting for each other.
    """
    with job_write():
        rows = claim_rows(worker_id, limit, lease_ms, now)
    return jobs_from_rows(rows)


_JOB_FIELDS = tuple(Job._meta.sorted_fields)
_JOB_NAMES = tuple(field.name for field in _JOB_FIELDS)
_CLAIM_KEY = _JOB_NAMES.index("claim_key")
_ID = _JOB_NAMES.index("id")
# only these need converting from what the driver returns (JSON text, 0/1 on SQLite)
_CONVERTERS = tuple(
    (index, field.python_value)
    for index, field in enumerate(_JOB_FIELDS)
    if isinstance(field, JSONField | BooleanField)
)

# The job queue's leased claim: the due jobs in queue order (claim_key, id), each started
# with its attempt counted and a lease that never passes the attempt's deadline (started +
# the type's time-out). Held by the worker's id; taken by rowid on SQLite.
LEASE = Lease(
    Job,
    lease="lease_expires_at",
    holder="worker_id",
    due="{Job.status} = 'queued' AND {Job.run_at} <= {p:now}",
    order="{Job.claim_key}, {Job.id}",
    setting=(
        "{Job.status} = 'running', {Job.worker_id} = {p:worker_id},"
        " {Job.attempts} = {Job.attempts} + 1, {Job.started_at} = {p:now},"
        " {Job.deadline_at} = {Job.timeout_seconds} * 1000 + {p:now},"
        " {Job.lease_expires_at} = CASE WHEN {Job.timeout_seconds} * 1000 + {p:now}"
        " < {p:lease_until} THEN {Job.timeout_seconds} * 1000 + {p:now}"
        " ELSE {p:lease_until} END, {Job.updated_at} = {p:now}"
    ),
    claimable="{Job.status} = 'queued'",
    returning=_JOB_NAMES,
    by_rowid=True,
)
HAS_DUE = DueProbe(Job, "{Job.status} = 'queued' AND {Job.run_at} <= {p:now}")


def job_from_row(row: tuple) -> Job:
    """A Job built from a full row in column order (no peewee query building)."""
    values = list(row)
    for index, convert in _CONVERTERS:
        if values[index] is not None:
            values[index] = convert(values[index])
    job = Job(__no_default__=True)
    job.__data__ = dict(zip(_JOB_NAMES, values, strict=True))
    return job


def jobs_from_rows(rows: list[tuple]) -> list[Job]:
    """Claimed rows as Jobs in queue order (built after the claim's transaction: the
    write lock is not held for Python work)."""
    rows = sorted(rows, key=lambda row: (row[_CLAIM_KEY], row[_ID]))
    return [job_from_row(row) for row in rows]


def claim_rows(worker_id: str, limit: int, lease_ms: int, now: int | None = None) -> list[tuple]:
    """The claim, inside the caller's write transaction: the claimed rows as they are."""
    now = now_ms() if now is None else now
    return LEASE.claim(
        {"now": now, "limit": limit, "worker_id": worker_id, "lease_until": now + lease_ms}
    )


def claim_in_transaction(
    worker_id: str, limit: int, lease_ms: int, now: int | None = None
) -> list[Job]:
    """The claim, inside the caller's write transaction."""
    return jobs_from_rows(claim_rows(worker_id, limit, lease_ms, now))


def step(
    worker_id: str, outcomes: list[StepItem], claim_limit: int, lease_ms: int
) -> tuple[list[Written], list[Job]]:
    """Write finished jobs' outcomes and claim the next jobs, in one transaction.

    ``outcomes``: ``PreparedCompletion`` or ``AttemptFailure`` items. Returns ``(results,
    jobs)``: what writing each outcome did (``Written.LOST``: the worker had lost the job).
    """
    completions = [item for item in outcomes if isinstance(item, PreparedCompletion)]
    with job_write():
        now = now_ms()
        done = iter(write_completions(completions, now) if completions else ())
        results = []
        for item in outcomes:
            if isinstance(item, PreparedCompletion):
                results.append(Written.COMPLETED if next(done) else Written.LOST)
            else:
                results.append(_record(item, worker_id, now) or Written.LOST)
        rows = claim_rows(worker_id, claim_limit, lease_ms, now) if claim_limit else ()
    return results, jobs_from_rows(rows)


def _record(item: AttemptFailure, worker_id: str, now: int) -> Written | None:
    failed = item.failed
    return record_failure(
        item.job, worker_id, failed.code, failed.message, failed.retryable, failed.details, now
    )


def has_due_jobs(now: int | None = None) -> bool:
    """A cheap read-only probe: is any job claimable now?"""
    now = now_ms() if now is None else now
    return HAS_DUE(now)


# Leases ---------------------------------------------------------------------------------


def renew_leases(
    worker_id: str, held: Iterable[tuple[str, int]], lease_ms: int, now: int | None = None
) -> set[tuple[str, int]]:
    """Extend the leases of ``held`` ``[(job_id, attempt)]``; return the pairs still held.

    A lease is never extended past the attempt's deadline (started + the type's
    time-out): a hung job's lease then runs out and the sweeper takes it.
    """
    if not held:
        return set()
    now = now_ms() if now is None else now
    with job_write():
        rows = LEASE.renew(
            [job_id for job_id, _ in held],
            worker_id,
            now + lease_ms,
            held=Job.status == "running",
            cap="deadline_at",
            returning=("id", "attempts"),
        )
    return {(job_id, attempts) for job_id, attempts in rows} & set(held)


def record_progress(job_id: str, attempt: int, done: int, total: int) -> bool:
    """Store a running attempt's ``{done, total}``; False when the job is no longer its."""
    query = Job.update(
        progress={"done": int(done), "total": int(total)}, updated_at=now_ms()
    ).where((Job.id == job_id) & (Job.attempts == attempt) & (Job.status == "running"))
    with job_write():
        return query.execute() == 1


# Finish ---------------------------------------------------------------------------------


def _fence(job: Job, worker_id: str) -> Expression:
    return (
        (Job.id == job.id)
        & (Job.status == "running")
        & (Job.worker_id == worker_id)
        & (Job.attempts == job.attempts)
    )


def backoff_ms(attempt: int, config: dict | None = None) -> int:
    """Exponential: base, 2 x base, 4 x base, ... (capped), plus up to 10% jitter."""
    base = float((config or current_config())["WORKER_RETRY_BACKOFF_SECONDS"])
    return delay_ms(backoff_seconds(attempt, base, MAX_BACKOFF_SECONDS), jitter=0.1)


def fail_attempt(
    job: Job, worker_id: str, code: str, message: str, retryable: bool, **more: Any
) -> Written | None:
    """End the current attempt with an error: back to the queue after a backoff while
    attempts remain and the error is retryable, else ``failed`` (event, batch cancelled).
    ``more``: ``details``, ``now``, ``fence``, as ``record_failure`` takes them.

    Returns ``Written.RETRYING`` or ``Written.FAILED``, or None when the worker no longer
    held the job.
    """
    with job_write():
        return record_failure(job, worker_id, code, message, retryable, **more)


def record_failure(
    job: Job,
    worker_id: str,
    code: str,
    message: str,
    retryable: bool,
    details: dict | None = None,
    now: int | None = None,
    fence: Expression | None = None,
) -> Written | None:
    """``fail_attempt`` inside the caller's transaction."""
    now = now_ms() if now is None else now
    condition = _fence(job, worker_id) if fence is None else fence
    error = {"code": code, "message": message, "retry_count": max(0, job.attempts - 1)}
    if details:
        error["details"] = details
    final = not retryable or job.attempts >= job.max_attempts
    if final:
        changed = (
            Job.update(
                status="failed",
                error=error,
                last_error=error,
                completed_at=now,
                lease_expires_at=None,
                deadline_at=None,
                updated_at=now,
            )
            .where(condition)
            .execute()
        )
        if not changed:
            return None
        job.status, job.error, job.last_error, job.completed_at = "failed", error, error, now
        job.lease_expires_at = job.deadline_at = None
        if emits_events(job):
            emit(job.tenant_id, "ai_job.failed", "ai_job", job.id, event_job(job))
        cancel_batch_rest(job, "batch_predecessor_failed", now)
        return Written.FAILED
    run_at = now + backoff_ms(job.attempts)
    changed = LEASE.release(
        condition,
        {
            "status": "queued",
            "last_error": error,
            "run_at": run_at,
            "claim_key": run_at + job.priority_rank * aging_ms(),
            "deadline_at": None,
            "updated_at": now,
        },
    )
    return Written.RETRYING if changed else None


def give_back(job: Job, worker_id: str, now: int | None = None) -> bool:
    """Return a running job to the queue without spending its attempt (graceful shutdown).

    It keeps its claim_key, so it goes back to its place at the head of the queue.
    """
    now = now_ms() if now is None else now
    with job_write():
        changed = LEASE.release(
            _fence(job, worker_id),
            {
                "status": "queued",
                "attempts": Job.attempts - 1,
                "deadline_at": None,
                "updated_at": now,
            },
        )
        if changed:
            notify_workers()
    return bool(changed)


# Sweep ----------------------------------------------------------------------------------


def sweep_expired_leases(now: int | None = None, limit: int = 100) -> dict[str, int]:
    """Jobs whose lease ran out (worker killed, hung, or past the type's time-out): count a
    ``WORKER_TIMEOUT`` attempt; retried with backoff, or failed once attempts are used up.

    Returns ``{"retrying": n, "failed": n}``. Safe to run on every worker at once: each
    change is fenced by the expired lease it saw.
    """
    now = now_ms() if now is None else now
    expired = list(
        Job.select().where(RUNNING & LEASE.expired(now)).order_by(Job.lease_expires_at).limit(limit)
    )
    counts = {"retrying": 0, "failed": 0}
    for job in expired:
        timed_out = job.deadline_at is not None and job.lease_expires_at >= job.deadline_at
        if timed_out:
            message = f"The job did not finish within its time-out of {job.timeout_seconds} s."
        else:
            message = "The worker running the job stopped answering (its lease ran out)."
        fence = _fence(job, job.worker_id) & LEASE.expired(now)
        outcome = fail_attempt(
            job,
            job.worker_id,
            "WORKER_TIMEOUT",
            message,
            retryable=True,
            details={"reason": "timeout" if timed_out else "lease_expired"},
            now=now,
            fence=fence,
        )
        if outcome:
            counts[outcome.value] += 1
            log.warning(
                "job %s (%s) attempt %s: %s -> %s",
                job.id,
                job.type,
                job.attempts,
                message,
                outcome.value,
            )
    return counts


# Workers --------------------------------------------------------------------------------


def register_worker(
    worker_id: str, hostname: str, pid: int, concurrency: int, now: int | None = None
) -> None:
    now = now_ms() if now is None else now
    with job_write():
        WorkerProcess.insert(
            id=worker_id,
            hostname=hostname[:255],
            pid=pid,
            concurrency=concurrency,
            started_at=now,
            last_seen_at=now,
        ).execute()


def touch_worker(
    worker_id: str,
    stopping: bool = False,
    now: int | None = None,
    loops: dict[str, int] | None = None,
    registration: tuple[str, int, int] | None = None,
) -> None:
    """The heartbeat: the worker is alive (with each loop's last successful pass). With
    ``registration`` (hostname, pid, concurrency), a row pruned meanwhile (the worker was
    cut off from the database for a while) is made again."""
    now = now_ms() if now is None else now
    fields = {"last_seen_at": now, "stopping": stopping}
    if loops is not None:
        fields["loops"] = loops
    with job_write():
        touched = WorkerProcess.update(**fields).where(WorkerProcess.id == worker_id).execute()
        if not touched and registration is not None:
            hostname, pid, concurrency = registration
            WorkerProcess.insert(
                id=worker_id,
                hostname=hostname[:255],
                pid=pid,
                concurrency=concurrency,
                started_at=now,
                **fields,
            ).on_conflict_ignore().execute()


def deregister_worker(worker_id: str) -> None:
    with job_write():
        WorkerProcess.delete().where(WorkerProcess.id == worker_id).execute()


def prune_workers(older_than_ms: int, now: int | None = None) -> int:
    """Forget workers not seen for a while (they were killed; their jobs are swept)."""
    now = now_ms() if now is None else now
    with job_write():
        return (
            WorkerProcess.delete().where(WorkerProcess.last_seen_at < now - older_than_ms).execute()
        )


# Periodic tasks -------------------------------------------------------------------------


def ensure_periodic_rows(tasks: dict[str, tuple[float, Any]], now: int | None = None) -> None:
    """One row per registered task (first run due at once); intervals follow the code."""
    now = now_ms() if now is None else now
    with job_write():
        for name, (interval, _func) in tasks.items():
            PeriodicTask.insert(
                name=name, interval_seconds=int(interval), next_run_at=now
            ).on_conflict_ignore().execute()
            PeriodicTask.update(interval_seconds=int(interval)).where(
                (PeriodicTask.name == name) & (PeriodicTask.interval_seconds != int(interval))
            ).execute()


def due_periodic_tasks(names: Iterable[str], now: int | None = None) -> list[str]:
    now = now_ms() if now is None else now
    if not names:
        return []
    rows = (
        PeriodicTask.select(PeriodicTask.name)
        .where(
            PeriodicTask.name.in_(list(names))
            & (PeriodicTask.next_run_at <= now)
            & (PeriodicTask.locked_until.is_null() | (PeriodicTask.locked_until < now))
        )
        .tuples()
    )
    return [row[0] for row in rows]


# A periodic task's fleet-wide run lock: the one leased claim (``leases.Lease``) on its row,
# held by a worker id until ``locked_until``; claiming it starts the run and schedules the
# next one.
PERIODIC_LEASE = Lease(
    PeriodicTask,
    lease="locked_until",
    holder="locked_by",
    due="{PeriodicTask.name} = {p:name} AND {PeriodicTask.next_run_at} <= {p:now} AND "
    + lease_free("{PeriodicTask.locked_until}"),
    order="{PeriodicTask.name}",
    setting=(
        "{PeriodicTask.locked_by} = {p:worker_id}, {PeriodicTask.locked_until} = {p:until},"
        " {PeriodicTask.last_started_at} = {p:now},"
        " {PeriodicTask.next_run_at} = {p:now} + {PeriodicTask.interval_seconds} * 1000"
    ),
    claimable="1 = 1",
    returning=("name",),
)


def claim_periodic(name: str, worker_id: str, lock_ms: int, now: int | None = None) -> bool:
    """Take the fleet-wide run lock of a due task; True when this worker should run it."""
    now = now_ms() if now is None else now
    params = {"name": name, "now": now, "limit": 1, "worker_id": worker_id, "until": now + lock_ms}
    with job_write():
        return bool(PERIODIC_LEASE.claim(params))


def renew_periodic_locks(
    names: Iterable[str], worker_id: str, lock_ms: int, now: int | None = None
) -> None:
    if not names:
        return
    now = now_ms() if now is None else now
    with job_write():
        PERIODIC_LEASE.renew(names, worker_id, now + lock_ms, returning=("name",))


def finish_periodic(
    name: str,
    worker_id: str,
    error: str | None = None,
    now: int | None = None,
    rerun: bool = False,
) -> None:
    """Release the run lock; ``rerun`` makes the task due again at once (run cut short)."""
    now = now_ms() if now is None else now
    values: dict[str, Any] = {
        "last_finished_at": now,
        "last_error": error[:4000] if error else None,
    }
    if rerun:
        values["next_run_at"] = now
    else:
        values["run_count"] = PeriodicTask.run_count + 1
    with job_write():
        PERIODIC_LEASE.release(
            (PeriodicTask.name == name) & (PeriodicTask.locked_by == worker_id), values
        )
