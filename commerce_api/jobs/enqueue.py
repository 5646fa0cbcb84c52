"""Dispatch's hot path: a job's row, its completion estimate, and the one INSERT that
queues it (``services.py`` checks types, params and capacity around it)."""

import threading
import time
from collections.abc import Mapping
from typing import Any

from ..config import current_config
from ..db import db, is_postgres
from ..ids import new_id
from ..sql import Statement
from . import registry
from .models import HELD, PRIORITIES, Job, WorkerProcess
from .store import timeout_seconds_for, typical_ms

# Estimates ------------------------------------------------------------------------------

_QUEUED_BY_TYPE = Statement(
    "SELECT {Job.type}, 'queued', {Job.priority_rank}, COUNT(*) FROM {Job}"
    " WHERE {Job.status} = 'queued' AND {Job.run_at} < {p:held}"
    " GROUP BY {Job.type}, {Job.priority_rank}",
    Job=Job,
)
_RUNNING_BY_TYPE = Statement(
    "SELECT {Job.type}, 'running', {Job.priority_rank}, COUNT(*) FROM {Job}"
    " WHERE {Job.status} = 'running' GROUP BY {Job.type}, {Job.priority_rank}",
    Job=Job,
)

SNAPSHOT_SECONDS = 1.0


class _QueueSnapshot:
    """The queue as one process last counted it (once a second), plus what this process
    dispatched since: an estimate costs no query on the dispatch path."""

    def __init__(self, now, config):
        self.expires = time.monotonic() + SNAPSHOT_SECONDS
        self.queued = [0] * len(PRIORITIES)  # claimable queued jobs per priority rank
        self.queued_work = 0  # their typical durations, ms
        self.running = self.running_work = 0
        rows = (
            _QUEUED_BY_TYPE.execute({"held": HELD}).fetchall()
            + _RUNNING_BY_TYPE.execute().fetchall()
        )
        for job_type, status, rank, count in rows:
            if status == "queued":
                self.queued[min(max(rank, 0), len(self.queued) - 1)] += count
                self.queued_work += typical_ms(job_type) * count
            else:
                self.running += count
                # on average a running job is half done
                self.running_work += typical_ms(job_type) * count // 2
        alive_after = now - 3 * int(config["WORKER_LEASE_SECONDS"]) * 1000
        slots = (
            WorkerProcess.select(WorkerProcess.concurrency)
            .where(
                (WorkerProcess.last_seen_at >= alive_after) & (WorkerProcess.stopping == False)  # noqa: E712
            )
            .tuples()
        )
        self.slots = max(1, sum(row[0] for row in slots))

    def estimate(self, job_type: str, rank: int, now: int, record: bool) -> int:
        ahead = sum(self.queued[: rank + 1])
        total = sum(self.queued)
        mean = self.queued_work / total if total else registry.DEFAULT_TYPICAL_SECONDS * 1000
        # a free slot takes the job at once; otherwise the work ahead is shared by all slots
        if ahead + self.running < self.slots:
            wait = 0
        else:
            wait = (ahead * mean + self.running_work) / self.slots
        if record:
            self.queued[rank] += 1
            self.queued_work += typical_ms(job_type)
        return int(now + wait + typical_ms(job_type))


_snapshot_lock = threading.Lock()
_snapshots = {}  # id(database) -> _QueueSnapshot


def reset_estimates() -> None:
    """Forget the cached queue snapshot (tests, after emptying the tables)."""
    with _snapshot_lock:
        _snapshots.clear()


def estimate_completion(
    job_type: str,
    rank: int,
    now: int,
    config: Mapping[str, Any] | None = None,
    record: bool = True,
) -> int:
    """When a job of priority ``rank`` dispatched now should complete.

    The work ahead (queued jobs of the same or a higher priority, each costed at the mean
    typical duration of the queue, plus half the typical duration of each running job)
    spread over the live slots (workers seen in the last three leases; at least one),
    plus the type's typical duration. Older lower-priority jobs that aging moves ahead are
    not counted: it is an estimate.
    """
    config = config or current_config()
    key = id(db.obj)
    snapshot = _snapshots.get(key)
    if snapshot is None or snapshot.expires < time.monotonic():
        snapshot = _QueueSnapshot(now, config)
        with _snapshot_lock:
            _snapshots[key] = snapshot
    with _snapshot_lock:
        return snapshot.estimate(job_type, rank, now, record)


# The row ---------------------------------------------------------------------------------

# What a new job's row holds besides the values bound per dispatch: SQL literals in the
# INSERT (no Python work, no parameters for them) and the same values on the Job object.
_CONSTANTS = {
    "status": "queued",
    "attempts": 0,
    "result": None,
    "error": None,
    "last_error": None,
    "progress": None,
    "worker_id": None,
    "lease_expires_at": None,
    "deadline_at": None,
    "cancel_reason": None,
    "started_at": None,
    "completed_at": None,
}
# bound per dispatch, by name; the claim key is an expression (see ``INSERT``)
_BOUND = (
    "id",
    "tenant_id",
    "type",
    "internal",
    "priority",
    "priority_rank",
    "params",
    "max_attempts",
    "timeout_seconds",
    "run_at",
    "claim_key",
    "batch_id",
    "batch_position",
    "batch_sequential",
    "created_by",
    "created_at",
    "estimated_completion_at",
    "updated_at",
)
if set(_BOUND) | set(_CONSTANTS) != set(Job._meta.fields):  # a new column must be placed
    raise RuntimeError("jobs.enqueue: every Job field must be bound or a constant")
_dump_params = Job.params.db_value


def _literal(value):
    if value is None:
        return "NULL"
    return f"'{value}'" if isinstance(value, str) else str(int(value))


def _insert_template() -> str:
    """The INSERT of a queued job: one statement, the constant columns as literals.

    The claim key is fair between tenants: a tenant that already has queued jobs of the
    same priority gets its new one ``JOB_FAIR_SPACING_MS`` after the last of them when
    that is later than its natural key (``claim_key_for``). A tenant queuing 500 jobs at
    once spreads them over 500 spacings, so another tenant's job, keyed at its own dispatch
    time, is claimed within a few claims instead of after all 500; within one tenant keys
    still grow in dispatch order per priority. The tail is one lookup in the partial index
    ``job_fair_tail``, inside the INSERT itself (no extra statement). ``{greatest}``: the
    engine's two-argument maximum.
    """
    values = {name: f"{{p:{name}}}" for name in _BOUND}
    values["claim_key"] = (
        "{greatest}({p:claim_key}, COALESCE((SELECT MAX({Job.claim_key}) FROM {Job}"
        " WHERE {Job.tenant_id} = {p:fair_tenant} AND {Job.priority_rank} = {p:priority_rank}"
        " AND {Job.status} = 'queued' AND {Job.claim_key} < {p:held}) + {p:spacing}, 0))"
    )
    values.update((name, _literal(value)) for name, value in _CONSTANTS.items())
    columns = ", ".join(f"{{Job.{name}}}" for name in values)
    return "INSERT INTO {Job} (" + columns + ") VALUES (" + ", ".join(values.values()) + ")"


# built once per engine (peewee would spend ~0.6 ms composing it on every dispatch)
INSERT = Statement(_insert_template(), Job=Job)


def job_row(
    tenant_id: str,
    job_type: str,
    params: dict[str, Any],
    priority: str,
    created_by: str | None,
    internal: bool,
    now: int,
    config: Mapping[str, Any],
    batch_id: str | None = None,
    batch_position: int | None = None,
    sequential: bool = False,
    held: bool = False,
    estimate: int | None = None,
) -> tuple[Job, dict[str, Any]]:
    """The new job (a Job object, not saved) and the parameters of ``INSERT``."""
    rank = PRIORITIES[priority]
    if held:
        run_at = claim_key = HELD
    else:
        run_at = now
        claim_key = now + rank * int(config["JOB_PRIORITY_AGING_SECONDS"]) * 1000
    if estimate is None:
        estimate = estimate_completion(job_type, rank, now, config)
    spacing = int(config["JOB_FAIR_SPACING_MS"])
    fields = {
        "id": new_id("job"),
        "tenant_id": tenant_id,
        "type": job_type,
        "internal": internal,
        "priority": priority,
        "priority_rank": rank,
        "params": params,
        "max_attempts": int(config["WORKER_MAX_ATTEMPTS"]),
        "timeout_seconds": timeout_seconds_for(job_type, config),
        "run_at": run_at,
        "claim_key": claim_key,
        "batch_id": batch_id,
        "batch_position": batch_position,
        "batch_sequential": sequential,
        "created_by": created_by,
        "created_at": now,
        "estimated_completion_at": estimate,
        "updated_at": now,
    }
    job = Job(__no_default__=True)
    job.__data__ = dict(_CONSTANTS, **fields)
    values = {
        **fields,
        "params": _dump_params(params),
        # the claim key's tail: the tenant's last queued key (None: no tail looked for)
        "fair_tenant": tenant_id if not held and spacing > 0 else None,
        "held": HELD,
        "spacing": spacing,
    }
    return job, values


def insert_job(*args: Any, **kwargs: Any) -> Job:
    """Build and insert a job row (inside the caller's transaction)."""
    job, values = job_row(*args, **kwargs)
    insert_row(values)
    return job


def insert_row(values: Mapping[str, Any]) -> None:
    """Insert a job row from ``job_row``'s parameters."""
    INSERT.execute(values, greatest="GREATEST" if is_postgres() else "MAX")


# The ai_jobs list's total --------------------------------------------------------------

# Finished AI jobs are counted in ``list_count`` (status ''); the live ones, queued or
# running, are few (bounded by the queue capacity and the fleet's runners) and counted from
# the queue's own partial indexes, named on SQLite, whose planner would otherwise walk the
# tenant's list. Added to the maintained count in its statement: one snapshot, so a job
# finishing meanwhile is counted once.
_LIVE_JOBS_SQLITE = Statement(
    " + (SELECT COUNT(*) FROM {Job} INDEXED BY job_fair_tail"
    " WHERE {Job.status} = 'queued' AND {Job.tenant_id} = {p} AND NOT {Job.internal})"
    " + (SELECT COUNT(*) FROM {Job} INDEXED BY job_lease_expires_at"
    " WHERE {Job.status} = 'running' AND {Job.tenant_id} = {p} AND NOT {Job.internal})",
    Job=Job,
)
_LIVE_JOBS_POSTGRES = Statement(
    " + (SELECT COUNT(*) FROM {Job} WHERE {Job.status} IN ('queued', 'running')"
    " AND {Job.tenant_id} = {p} AND NOT {Job.internal})",
    Job=Job,
)


def live_jobs_term(tenant_id: str) -> tuple[str, tuple[str, ...]]:
    """The tenant's public queued and running jobs, as a term of ``totals.maintained``."""
    if is_postgres():
        return _LIVE_JOBS_POSTGRES.sql(), (tenant_id,)
    return _LIVE_JOBS_SQLITE.sql(), (tenant_id, tenant_id)
