"""Dispatch, read, list and cancel jobs (the worker side lives in queue.py; what both
sides share in store.py)."""

import math
import threading
import time

import marshmallow as ma

from ..auth.models import Tenant
from ..config import current_config
from ..db import JSONField, cached_statement, db, for_update, is_postgres
from ..errors import ApiError, validation_error
from ..ids import new_id
from ..pagination import filter_date_range, filter_equal, paginate_args
from ..timeutil import format_ms, now_ms
from ..totals import maintained
from . import registry
from .models import HELD, PRIORITIES, QUEUED, Job, WorkerProcess
from .store import (
    cancel_batch_rest,
    claim_key_for,
    job_write,
    notify_workers,
    queue_writer,
    serialize_job,
    timeout_seconds_for,
    typical_ms,
)

# Estimates ------------------------------------------------------------------------------

SNAPSHOT_SECONDS = 1.0


class _QueueSnapshot:
    """The queue as one process last counted it (once a second), plus what this process
    dispatched since: an estimate costs no query on the dispatch path."""

    def __init__(self, now, config):
        self.expires = time.monotonic() + SNAPSHOT_SECONDS
        self.queued = [0] * len(PRIORITIES)  # claimable queued jobs per priority rank
        self.queued_work = 0  # their typical durations, ms
        self.running = self.running_work = 0
        p = db.param
        rows = (
            db.execute_sql(
                "SELECT type, 'queued', priority_rank, COUNT(*) FROM job WHERE status = 'queued'"
                f" AND run_at < {p} GROUP BY type, priority_rank",
                (HELD,),
            ).fetchall()
            + db.execute_sql(
                "SELECT type, 'running', priority_rank, COUNT(*) FROM job WHERE status = 'running'"
                " GROUP BY type, priority_rank"
            ).fetchall()
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

    def estimate(self, job_type, rank, now, record):
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


def reset_estimates():
    """Forget the cached queue snapshot (tests, after emptying the tables)."""
    with _snapshot_lock:
        _snapshots.clear()


def estimate_completion(job_type, rank, now, config=None, record=True):
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


# Dispatch -------------------------------------------------------------------------------


def _job_row(
    tenant_id,
    job_type,
    params,
    priority,
    created_by,
    internal,
    now,
    config,
    batch_id=None,
    batch_position=None,
    sequential=False,
    held=False,
    estimate=None,
):
    rank = PRIORITIES[priority]
    run_at = HELD if held else now
    claim_key = HELD if held else claim_key_for(now, rank, config)
    if estimate is None:
        estimate = estimate_completion(job_type, rank, now, config)
    row = dict(
        id=new_id("job"),
        tenant_id=tenant_id,
        type=job_type,
        internal=internal,
        status="queued",
        priority=priority,
        priority_rank=rank,
        params=params,
        result=None,
        error=None,
        last_error=None,
        progress=None,
        attempts=0,
        max_attempts=int(config["WORKER_MAX_ATTEMPTS"]),
        timeout_seconds=timeout_seconds_for(job_type, config),
        run_at=run_at,
        claim_key=claim_key,
        batch_id=batch_id,
        batch_position=batch_position,
        batch_sequential=sequential,
        worker_id=None,
        lease_expires_at=None,
        deadline_at=None,
        cancel_reason=None,
        created_by=created_by,
        created_at=now,
        updated_at=now,
        estimated_completion_at=estimate,
        started_at=None,
        completed_at=None,
    )
    values = [row[name] for name in _INSERT_NAMES]
    for index, convert in _INSERT_CONVERTERS:
        values[index] = convert(values[index])
    spacing = int(config["JOB_FAIR_SPACING_MS"])
    fair = not held and spacing > 0
    # the claim key's expression (_insert_sql): natural, tenant, rank, HELD, spacing
    values[_CLAIM_KEY_INDEX : _CLAIM_KEY_INDEX + 1] = (
        claim_key,
        tenant_id if fair else None,
        rank,
        HELD,
        spacing,
    )
    job = Job(__no_default__=True)
    job.__data__ = row
    return job, values


def _insert_job(*args, **kwargs):
    """Build and insert a job row (inside the caller's transaction)."""
    job, values = _job_row(*args, **kwargs)
    db.execute_sql(_insert_sql(), values)
    return job


_INSERT_FIELDS = tuple(Job._meta.sorted_fields)
_INSERT_NAMES = tuple(field.name for field in _INSERT_FIELDS)
# the only values that need the field's conversion (JSON text); the rest go as they are
_INSERT_CONVERTERS = tuple(
    (index, field.db_value)
    for index, field in enumerate(_INSERT_FIELDS)
    if isinstance(field, JSONField)
)


_CLAIM_KEY_INDEX = _INSERT_NAMES.index("claim_key")


def _insert_sql():
    """The INSERT: peewee would spend ~0.6 ms composing this 30-column statement on every
    dispatch, and dispatch is a hot path. Built once per engine.

    The claim key is fair between tenants: a tenant that already has queued jobs of the
    same priority gets its new one ``JOB_FAIR_SPACING_MS`` after the last of them when
    that is later than its natural key (``claim_key_for``). A tenant queuing 500 jobs at
    once spreads them over 500 spacings, so another tenant's job, keyed at its own dispatch
    time, is claimed within a few claims instead of after all 500; within one tenant keys
    still grow in dispatch order per priority. The tail is one lookup in the partial index
    ``job_fair_tail``, inside the INSERT itself (no extra statement).
    """
    return cached_statement("job-insert-fair", _build_insert_sql)


def _build_insert_sql():
    p = db.param
    greatest = "GREATEST" if is_postgres() else "MAX"
    tail = (
        "(SELECT MAX(claim_key) FROM job WHERE tenant_id = "
        f"{p} AND priority_rank = {p} AND status = 'queued' AND claim_key < {p})"
    )
    marks = [p] * len(_INSERT_FIELDS)
    marks[_CLAIM_KEY_INDEX] = f"{greatest}({p}, COALESCE({tail} + {p}, 0))"
    columns = ", ".join(f'"{field.column_name}"' for field in _INSERT_FIELDS)
    return f"INSERT INTO job ({columns}) VALUES ({', '.join(marks)})"


def enqueue_job(
    tenant_id,
    job_type,
    params,
    priority="normal",
    created_by=None,
    internal=False,
    check_capacity=False,
):
    """Insert a queued job; call inside the caller's transaction when it has one.

    No type or params checks: this is for the service's own (internal) jobs. With
    ``check_capacity`` (an API request queuing an internal job) the tenant's queued internal
    jobs must stay within ``INTERNAL_JOB_CAPACITY``, or QUEUE_FULL.
    """
    config = current_config()
    now = now_ms()
    if check_capacity:
        with job_write():
            _check_internal_capacity(tenant_id, config)
            job = _insert_job(
                tenant_id, job_type, params, priority, created_by, internal, now, config
            )
            notify_workers()
        return job
    if db.transaction_depth() == 0 and not is_postgres():
        # one INSERT is atomic by itself: no BEGIN/COMMIT round trips (SQLite workers
        # notice the commit through data_version, nothing to notify)
        job, values = _job_row(
            tenant_id, job_type, params, priority, created_by, internal, now, config
        )
        with queue_writer():
            db.execute_sql(_insert_sql(), values)
        return job
    with job_write():
        job = _insert_job(tenant_id, job_type, params, priority, created_by, internal, now, config)
        notify_workers()
    return job


def _check_public_type(job_type, config, index=None):
    allowed = registry.public_types()
    if job_type not in allowed:
        details = {"type": job_type, "allowed": list(allowed)}
        if index is not None:
            details["index"] = index
        raise ApiError("INVALID_JOB_TYPE", f"Unknown job type: {job_type!r}.", details=details)


def params_schema_for(job_type, config=None):
    spec = registry.get(job_type)
    return spec.params if spec is not None else None


def validate_params(job_type, params, config=None):
    """The params as stored (defaults filled in), or raise ma.ValidationError."""
    schema_class = params_schema_for(job_type, config)
    if schema_class is None:
        return params
    schema = schema_class() if isinstance(schema_class, type) else schema_class
    loaded = schema.load(params, unknown=ma.RAISE)
    try:
        dumped = schema.dump(loaded)
    except Exception:  # a schema whose load builds objects: keep what the caller sent
        return params
    return dumped if isinstance(dumped, dict) else params


def _retry_after(tenant_id, now, config):
    """Seconds until the tenant's next queued job should start (1-60)."""
    first = (
        Job.select(Job.type, Job.priority, Job.claim_key)
        .where(
            (Job.tenant_id == tenant_id)
            & QUEUED
            & (Job.internal == False)  # noqa: E712
            & (Job.run_at < HELD)
        )
        .order_by(Job.claim_key, Job.id)
        .first()
    )
    if first is None:
        return 5
    rank = PRIORITIES.get(first.priority, 1)
    start = estimate_completion(first.type, rank, now, config, record=False)
    start -= typical_ms(first.type)
    return max(1, min(60, math.ceil((start - now) / 1000)))


def _check_capacity(tenant_id, adding, now, config):
    """Refuse with QUEUE_FULL when the tenant's queued (public) jobs would pass capacity."""
    # PostgreSQL: serialize dispatches of one tenant on its row, so two concurrent
    # requests cannot both see room for one more (SQLite's immediate transaction does it).
    for_update(Tenant.select(Tenant.id).where(Tenant.id == tenant_id)).execute()
    capacity = int(config["JOB_QUEUE_CAPACITY"])
    queued = (
        Job.select()
        .where(
            (Job.tenant_id == tenant_id) & QUEUED & (Job.internal == False)  # noqa: E712
        )
        .count()
    )
    if queued + adding > capacity:
        retry_after = _retry_after(tenant_id, now, config)
        raise ApiError(
            "QUEUE_FULL",
            details={
                "capacity": capacity,
                "queued": queued,
                "requested": adding,
                "retry_after_seconds": retry_after,
            },
            headers={"Retry-After": str(retry_after)},
        )


INTERNAL_RETRY_AFTER = 5  # seconds, when the tenant's internal jobs are at capacity


def _check_internal_capacity(tenant_id, config):
    """QUEUE_FULL when one more internal job would pass the tenant's internal capacity."""
    for_update(Tenant.select(Tenant.id).where(Tenant.id == tenant_id)).execute()
    capacity = int(config["INTERNAL_JOB_CAPACITY"])
    queued = (
        Job.select()
        .where((Job.tenant_id == tenant_id) & QUEUED & (Job.internal == True))  # noqa: E712
        .count()
    )
    if queued + 1 > capacity:
        raise ApiError(
            "QUEUE_FULL",
            "The tenant's queue of background work (syncs, cancellations) is full.",
            details={
                "queue": "internal",
                "capacity": capacity,
                "queued": queued,
                "requested": 1,
                "retry_after_seconds": INTERNAL_RETRY_AFTER,
            },
            headers={"Retry-After": str(INTERNAL_RETRY_AFTER)},
        )


def dispatch_job(tenant_id, data, created_by=None):
    """``POST /api/ai-jobs``: check type, params and capacity, then queue the job."""
    config = current_config()
    job_type = data["type"]
    _check_public_type(job_type, config)
    try:
        params = validate_params(job_type, data.get("params") or {}, config)
    except ma.ValidationError as exc:
        raise validation_error({"params": exc.messages}, "The job params are not valid.") from None
    now = now_ms()
    with job_write():
        _check_capacity(tenant_id, 1, now, config)
        job = _insert_job(
            tenant_id,
            job_type,
            params,
            data.get("priority") or "normal",
            created_by,
            False,
            now,
            config,
        )
        notify_workers()
    return serialize_job(job)


def dispatch_batch(tenant_id, items, sequential=False, created_by=None):
    """``POST /api/ai-jobs/batch``: all jobs are queued, or none (one transaction)."""
    config = current_config()
    for index, item in enumerate(items):
        _check_public_type(item["type"], config, index)
    loaded, errors = [], {}
    for index, item in enumerate(items):
        try:
            loaded.append(validate_params(item["type"], item.get("params") or {}, config))
        except ma.ValidationError as exc:
            errors[str(index)] = {"params": exc.messages}
    if errors:
        raise validation_error({"jobs": errors}, "Some job params are not valid.")
    batch_id = new_id("batch")
    now = now_ms()
    jobs = []
    with job_write():
        _check_capacity(tenant_id, len(items), now, config)
        previous_estimate = None
        for position, (item, params) in enumerate(zip(items, loaded, strict=True)):
            held = sequential and position > 0
            estimate = None
            if held:  # runs once the one before it completed
                estimate = previous_estimate + typical_ms(item["type"])
            job = _insert_job(
                tenant_id,
                item["type"],
                params,
                item.get("priority") or "normal",
                created_by,
                False,
                now,
                config,
                batch_id=batch_id,
                batch_position=position,
                sequential=sequential,
                held=held,
                estimate=estimate,
            )
            previous_estimate = job.estimated_completion_at
            jobs.append(job)
        notify_workers()
    return {
        "batch_id": batch_id,
        "sequential": sequential,
        "jobs": [
            {
                "id": job.id,
                "type": job.type,
                "status": job.status,
                "priority": job.priority,
                "estimated_completion_at": format_ms(job.estimated_completion_at),
            }
            for job in jobs
        ],
    }


# Read, list, cancel ---------------------------------------------------------------------


def _job_of_tenant(tenant_id, job_id, lock=False):
    query = Job.select().where((Job.id == job_id) & (Job.tenant_id == tenant_id))
    job = (for_update(query) if lock else query).first()
    if job is None:
        raise ApiError("JOB_NOT_FOUND", details={"job_id": job_id})
    return job


def get_job(tenant_id, job_id):
    """A job of the tenant (internal jobs included), or JOB_NOT_FOUND."""
    return serialize_job(_job_of_tenant(tenant_id, job_id))


def list_jobs(tenant_id, args):
    """The tenant's jobs, newest first; internal jobs only when ``type`` names them."""
    query = Job.select().where(Job.tenant_id == tenant_id)
    job_type = args.get("type")
    if job_type:
        if job_type not in registry.known_types():
            raise validation_error({"type": [f"Unknown job type: {job_type!r}."]})
        query = query.where(Job.type == job_type)
    else:
        query = query.where(Job.internal == False)  # noqa: E712
    query = filter_equal(query, Job, args, ("status", "priority", "batch_id"))
    query = filter_date_range(query, Job.created_at, args)
    filters = ("type", "status", "priority", "batch_id", "start_date", "end_date")
    rows, meta = paginate_args(
        query,
        args,
        sort_field=Job.created_at,
        tiebreak=Job.id,
        kind="ai_jobs",
        # every public job of the tenant: maintained; any filter: counted, bounded
        total=None if any(args.get(name) for name in filters) else maintained(tenant_id, "ai_jobs"),
    )
    return [serialize_job(row) for row in rows], meta


def cancel_job(tenant_id, job_id):
    """Cancel a queued job (``DELETE /api/ai-jobs/:jobId``); running or finished: 409."""
    now = now_ms()
    with job_write():
        job = _job_of_tenant(tenant_id, job_id, lock=True)
        if job.internal:
            raise ApiError(
                "JOB_NOT_CANCELLABLE",
                "Internal jobs cannot be cancelled.",
                details={"job_id": job.id, "status": job.status, "reason": "internal"},
            )
        if job.status != "queued":
            raise ApiError(
                "JOB_NOT_CANCELLABLE",
                f"The job is {job.status}; only queued jobs can be cancelled.",
                details={"job_id": job.id, "status": job.status},
            )
        changed = (
            Job.update(
                status="cancelled", cancel_reason="requested", completed_at=now, updated_at=now
            )
            .where((Job.id == job.id) & (Job.status == "queued"))
            .execute()
        )
        if not changed:  # claimed between the read and the write (not possible under the lock)
            raise ApiError("JOB_NOT_CANCELLABLE", details={"job_id": job.id, "status": "running"})
        cancel_batch_rest(job, "batch_predecessor_cancelled", now)
