"""Dispatch, read, list and cancel jobs (the worker side lives in queue.py; what both
sides share in store.py)."""

import contextlib
import contextvars
import math
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import marshmallow as ma

from ..auth.models import Tenant
from ..config import current_config
from ..db import db, first_or_error, is_postgres
from ..errors import ApiError, validation_error
from ..ids import new_id
from ..pagination import filter_date_range, filter_equal, paginate_args
from ..timeutil import format_ms, now_ms
from ..totals import maintained
from . import registry
from .enqueue import estimate_completion, insert_job, insert_row, job_row
from .models import HELD, PRIORITIES, QUEUED, Job
from .store import (
    cancel_batch_rest,
    job_write,
    notify_workers,
    queue_writer,
    serialize_job,
    typical_ms,
)

Holds = Callable[[str], bool]  # the caller's scope test: holds("orders:read")

# Dispatch -------------------------------------------------------------------------------


def enqueue_job(
    tenant_id: str,
    job_type: str,
    params: dict,
    priority: str = "normal",
    created_by: str | None = None,
    internal: bool = False,
    check_capacity: bool = False,
) -> Job:
    """Insert a queued job; call inside the caller's transaction when it has one.

    No type or params checks: this is for the service's own (internal) jobs. With
    ``check_capacity`` (an API request queuing an internal job) the tenant's queued internal
    jobs must stay within ``INTERNAL_JOB_CAPACITY``, or QUEUE_FULL.
    """
    config = current_config()
    now = now_ms()
    if check_capacity:
        _require_tenant_first(tenant_id)
        with job_write():
            _check_internal_capacity(tenant_id, config)
            job = insert_job(
                tenant_id, job_type, params, priority, created_by, internal, now, config
            )
            notify_workers()
        return job
    if db.transaction_depth() == 0 and not is_postgres():
        # one INSERT is atomic by itself: no BEGIN/COMMIT round trips (SQLite workers
        # notice the commit through data_version, nothing to notify)
        job, values = job_row(
            tenant_id, job_type, params, priority, created_by, internal, now, config
        )
        with queue_writer():
            insert_row(values)
        return job
    with job_write():
        job = insert_job(tenant_id, job_type, params, priority, created_by, internal, now, config)
        notify_workers()
    return job


def _check_public_type(job_type, index=None):
    allowed = registry.public_types()
    if job_type not in allowed:
        details = {"type": job_type, "allowed": list(allowed)}
        if index is not None:
            details["index"] = index
        raise ApiError("INVALID_JOB_TYPE", f"Unknown job type: {job_type!r}.", details=details)


def check_dispatch_scopes(job_types: Sequence[str], holds: Holds | None) -> None:
    """INSUFFICIENT_SCOPE unless the caller holds the scope of what each job touches
    (``JobType.scope``; DESIGN 3: scopes follow the data). ``holds(scope) -> bool`` is the
    caller's; None means the caller was authorized for the job already (a domain route)."""
    if holds is None:
        return
    for index, job_type in enumerate(job_types):
        scope = registry.get(job_type).scope
        if scope is not None and not holds(scope):
            details = {"required_scope": scope, "type": job_type}
            if len(job_types) > 1:
                details["index"] = index
            raise ApiError(
                "INSUFFICIENT_SCOPE",
                f"Dispatching a {job_type} job needs the {scope} scope.",
                details=details,
            )


def params_schema_for(job_type: str) -> type | ma.Schema | None:
    """The marshmallow schema (class or instance) checking the type's params, or None."""
    spec = registry.get(job_type)
    return spec.params if spec is not None else None


def validate_params(job_type: str, params: dict) -> dict:
    """The params as stored (defaults filled in), or raise ma.ValidationError."""
    schema_class = params_schema_for(job_type)
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


# One lock order for the whole service (DESIGN 9): the tenant row is locked first in its
# transaction, never while the transaction holds a domain row (a product, an order). A
# request that held a product and then waited for the tenant row deadlocked with an order
# pull that held the tenant (its inserts' foreign keys) and waited for the product.
_tenant_locked = contextvars.ContextVar("tenant_locked", default=None)


def lock_tenant(tenant_id: str) -> None:
    """Serialize the tenant's capacity checks and rule writes on its row (PostgreSQL;
    SQLite's immediate transaction serializes already). ``FOR NO KEY UPDATE``: inserts
    that reference the tenant (``FOR KEY SHARE``) are never blocked by it."""
    if is_postgres():
        Tenant.select(Tenant.id).where(Tenant.id == tenant_id).for_update(
            "FOR NO KEY UPDATE"
        ).execute()


@contextlib.contextmanager
def tenant_first(tenant_id: str) -> Iterator[None]:
    """A write transaction that locks the tenant row before anything else, for a change
    that will lock domain rows and then queue a job with ``check_capacity``."""
    with job_write():
        lock_tenant(tenant_id)
        token = _tenant_locked.set(tenant_id)
        try:
            yield
        finally:
            _tenant_locked.reset(token)


def _require_tenant_first(tenant_id):
    if db.transaction_depth() > 0 and _tenant_locked.get() != tenant_id:
        # the caller's transaction may hold domain rows: locking the tenant now breaks
        # the lock order (open the transaction with tenant_first instead)
        raise RuntimeError("the tenant row must be locked first: use jobs.services.tenant_first")


def _check_capacity(tenant_id, adding, now, config):
    """Refuse with QUEUE_FULL when the tenant's queued (public) jobs would pass capacity."""
    # PostgreSQL: serialize dispatches of one tenant on its row, so two concurrent
    # requests cannot both see room for one more (SQLite's immediate transaction does it).
    lock_tenant(tenant_id)
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
    lock_tenant(tenant_id)
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


def dispatch_job(
    tenant_id: str, data: dict, created_by: str | None = None, holds: Holds | None = None
) -> dict:
    """``POST /api/ai-jobs``: check type, scope, params and capacity, then queue the job."""
    config = current_config()
    job_type = data["type"]
    _check_public_type(job_type)
    check_dispatch_scopes([job_type], holds)
    try:
        params = validate_params(job_type, data.get("params") or {})
    except ma.ValidationError as exc:
        raise validation_error({"params": exc.messages}, "The job params are not valid.") from None
    now = now_ms()
    with job_write():
        _check_capacity(tenant_id, 1, now, config)
        job = insert_job(
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


def dispatch_batch(
    tenant_id: str,
    items: list[dict],
    sequential: bool = False,
    created_by: str | None = None,
    holds: Holds | None = None,
) -> dict:
    """``POST /api/ai-jobs/batch``: all jobs are queued, or none (one transaction)."""
    config = current_config()
    loaded = _checked_batch(items, holds)
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
            job = insert_job(
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
        "jobs": [_batch_job(job) for job in jobs],
    }


def _checked_batch(items: list[dict], holds: Holds | None) -> list[dict]:
    """The batch's types allowed and its params valid (all, or 422/403): the params loaded."""
    for index, item in enumerate(items):
        _check_public_type(item["type"], index)
    check_dispatch_scopes([item["type"] for item in items], holds)
    loaded, errors = [], {}
    for index, item in enumerate(items):
        try:
            loaded.append(validate_params(item["type"], item.get("params") or {}))
        except ma.ValidationError as exc:
            errors[str(index)] = {"params": exc.messages}
    if errors:
        raise validation_error({"jobs": errors}, "Some job params are not valid.")
    return loaded


def _batch_job(job: Job) -> dict[str, Any]:
    return {
        "id": job.id,
        "type": job.type,
        "status": job.status,
        "priority": job.priority,
        "estimated_completion_at": format_ms(job.estimated_completion_at),
    }


# Read, list, cancel ---------------------------------------------------------------------


def _job_of_tenant(tenant_id, job_id, lock=False):
    query = Job.select().where((Job.id == job_id) & (Job.tenant_id == tenant_id))
    return first_or_error(query, "JOB_NOT_FOUND", {"job_id": job_id}, lock)


def _check_internal_read(job_type, holds):
    """Internal jobs are readable with their domain's read scope only (DESIGN 3)."""
    spec = registry.get(job_type)
    scope = spec.read_scope if spec is not None else None
    if spec is not None and spec.internal and scope is not None and not holds(scope):
        raise ApiError(
            "INSUFFICIENT_SCOPE",
            f"Reading {job_type} jobs needs the {scope} scope.",
            details={"required_scope": scope, "type": job_type},
        )


def shown_job(job: Job, holds: Holds) -> dict:
    """The job as this caller may see it: ``params``, ``result`` and ``error.details``
    only with ``ai-jobs:read`` or the job's domain read scope, else ``redacted: true``."""
    data = serialize_job(job)
    spec = registry.get(job.type)
    scope = spec.read_scope if spec is not None else None
    if holds("ai-jobs:read") and not (spec is not None and spec.internal):
        return data
    if scope is None or holds(scope):
        return data
    data.pop("params", None)
    data.pop("result", None)
    if isinstance(data.get("error"), dict):
        data["error"] = {k: v for k, v in data["error"].items() if k != "details"}
    data["redacted"] = True
    return data


def get_job(tenant_id: str, job_id: str, holds: Holds) -> dict:
    """A job of the tenant (internal jobs included), or JOB_NOT_FOUND; shown as ``holds``
    (the caller's scope test) allows."""
    job = _job_of_tenant(tenant_id, job_id)
    _check_internal_read(job.type, holds)
    return shown_job(job, holds)


def list_jobs(tenant_id: str, holds: Holds, args: dict) -> tuple[list[dict], dict]:
    """The tenant's jobs, newest first; internal jobs only when ``type`` names them."""
    query = Job.select().where(Job.tenant_id == tenant_id)
    job_type = args.get("type")
    if job_type:
        if job_type not in registry.known_types():
            raise validation_error({"type": [f"Unknown job type: {job_type!r}."]})
        _check_internal_read(job_type, holds)
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
    return [shown_job(row, holds) for row in rows], meta


def cancel_job(tenant_id: str, job_id: str) -> None:
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
