"""Dispatch and read jobs (the worker side lives in queue.py)."""

from ..db import write_transaction
from ..ids import new_id
from ..timeutil import format_ms, now_ms
from .models import PRIORITIES, Job

# Typical durations (seconds) used for estimated_completion_at.
TYPICAL_SECONDS = {
    "pricing_recalculate": 35,
    "review_sentiment": 75,
    "return_classify": 55,
    "llm_visibility_score": 180,
    "competitor_scan": 37,
    "listing_optimize": 75,
    "marketplace_sync": 5,
}


def enqueue_job(tenant_id, job_type, params, priority="normal", created_by=None, internal=False):
    """Insert a queued job; call inside the caller's transaction when it has one."""
    now = now_ms()
    with write_transaction():
        job = Job.create(
            id=new_id("job"),
            tenant_id=tenant_id,
            type=job_type,
            internal=internal,
            status="queued",
            priority=priority,
            priority_rank=PRIORITIES[priority],
            params=params,
            created_by=created_by,
            created_at=now,
            updated_at=now,
            run_at=now,
            estimated_completion_at=now + TYPICAL_SECONDS.get(job_type, 60) * 1000,
        )
    return job


def serialize_job(job):
    data = {
        "id": job.id,
        "type": job.type,
        "status": job.status,
        "priority": job.priority,
        "params": job.params,
        "created_at": format_ms(job.created_at),
        "estimated_completion_at": format_ms(job.estimated_completion_at),
    }
    if job.started_at is not None:
        data["started_at"] = format_ms(job.started_at)
    if job.status == "completed":
        data["completed_at"] = format_ms(job.completed_at)
        data["duration_seconds"] = int(round((job.completed_at - job.started_at) / 1000))
        data["result"] = job.result
    if job.status == "failed":
        data["error"] = job.error
    if job.batch_id:
        data["batch_id"] = job.batch_id
    return data
