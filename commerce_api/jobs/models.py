"""The job table shared by the API (dispatch, poll) and the worker fleet (claim, run)."""

from peewee import BigIntegerField, BooleanField, CharField, IntegerField

from ..db import BaseModel, JSONField
from ..timeutil import now_ms

JOB_STATUSES = ("queued", "running", "completed", "failed", "cancelled")
PRIORITIES = {"high": 0, "normal": 1, "low": 2}


class Job(BaseModel):
    id = CharField(primary_key=True, max_length=40)
    tenant_id = CharField(max_length=36)
    type = CharField(max_length=64)
    internal = BooleanField(default=False)  # marketplace_sync and other system jobs
    status = CharField(max_length=16, default="queued")
    priority = CharField(max_length=8, default="normal")
    priority_rank = IntegerField(default=1)  # 0 high, 1 normal, 2 low: sorts the queue
    params = JSONField(default=dict)
    result = JSONField(null=True)
    error = JSONField(null=True)
    attempts = IntegerField(default=0)
    max_attempts = IntegerField(default=4)
    run_at = BigIntegerField(default=now_ms)  # not claimable before (backoff, batch order)
    batch_id = CharField(max_length=40, null=True)
    batch_position = IntegerField(null=True)
    batch_sequential = BooleanField(default=False)
    worker_id = CharField(max_length=100, null=True)
    lease_expires_at = BigIntegerField(null=True)
    created_by = CharField(max_length=200, null=True)
    created_at = BigIntegerField(default=now_ms)
    estimated_completion_at = BigIntegerField(null=True)
    started_at = BigIntegerField(null=True)
    completed_at = BigIntegerField(null=True)
    updated_at = BigIntegerField(default=now_ms)

    class Meta:
        indexes = (
            (("status", "priority_rank", "run_at", "id"), False),
            (("tenant_id", "created_at", "id"), False),
            (("tenant_id", "status"), False),
            (("batch_id", "batch_position"), False),
            (("status", "lease_expires_at"), False),
        )
