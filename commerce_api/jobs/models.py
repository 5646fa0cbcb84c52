"""The job table shared by the API (dispatch, poll) and the worker fleet (claim, run).

Besides ``Job``: ``PeriodicTask`` (one row per ``@periodic`` task: when it is next due and
which worker holds its run lock) and ``WorkerProcess`` (live workers and their slots, for
estimates and operations). Both are created by migration 0004.
"""

from peewee import SQL, BigIntegerField, BooleanField, CharField, IntegerField, TextField

from ..db import BaseModel, JSONField
from ..timeutil import now_ms

JOB_STATUSES = ("queued", "running", "completed", "failed", "cancelled")
TERMINAL_STATUSES = ("completed", "failed", "cancelled")
PRIORITIES = {"high": 0, "normal": 1, "low": 2}

# run_at/claim_key of a sequential-batch job waiting for its predecessor: never due.
HELD = 2**62


class Job(BaseModel):
    id = CharField(primary_key=True, max_length=40)
    tenant_id = CharField(max_length=36)
    type = CharField(max_length=64)
    internal = BooleanField(default=False)  # marketplace_sync and other system jobs
    status = CharField(max_length=16, default="queued")
    priority = CharField(max_length=8, default="normal")
    priority_rank = IntegerField(default=1)  # 0 high, 1 normal, 2 low
    params = JSONField(default=dict)
    result = JSONField(null=True)
    error = JSONField(null=True)  # {code, message, retry_count} once failed
    last_error = JSONField(null=True)  # the latest failed attempt while a retry is pending
    progress = JSONField(null=True)  # {done, total} reported by the running handler
    attempts = IntegerField(default=0)  # attempts started (claims); the fencing token
    max_attempts = IntegerField(default=4)
    timeout_seconds = IntegerField(default=600)  # per attempt, from the handler's TIMEOUT_SECONDS
    run_at = BigIntegerField(default=now_ms)  # not claimable before (backoff; HELD in a batch)
    # The queue order: run_at plus one aging window per priority level below high, so a
    # low job waiting long enough overtakes newer high jobs (no starvation).
    claim_key = BigIntegerField(default=now_ms)
    batch_id = CharField(max_length=40, null=True)
    batch_position = IntegerField(null=True)
    batch_sequential = BooleanField(default=False)
    worker_id = CharField(max_length=100, null=True)  # the holder of the lease (or last one)
    lease_expires_at = BigIntegerField(null=True)
    deadline_at = BigIntegerField(null=True)  # started_at + timeout: the lease never passes it
    cancel_reason = CharField(max_length=40, null=True)
    created_by = CharField(max_length=200, null=True)
    created_at = BigIntegerField(default=now_ms)
    estimated_completion_at = BigIntegerField(null=True)
    started_at = BigIntegerField(null=True)  # start of the latest attempt
    completed_at = BigIntegerField(null=True)  # when it became completed, failed or cancelled
    updated_at = BigIntegerField(default=now_ms)

    class Meta:
        indexes = ((("tenant_id", "created_at", "id"), False),)  # the list


# Every index entry costs each dispatch and each status change, so the queue's indexes are
# partial: a job is in the claim and capacity indexes while queued, in the sweep index
# while running, and in none once finished (queries name the status as a literal, so
# SQLite can tell a partial index applies).
QUEUED = SQL("status = 'queued'")
RUNNING = SQL("status = 'running'")
Job.add_index(Job.claim_key, Job.id, where=QUEUED)  # the claim, in queue order
# queue capacity (its tenant_id prefix), and fairness between tenants: the last queued
# claim key of a tenant and priority (migration 0014 replaced the tenant_id-only index)
Job.add_index(
    Job.index(Job.tenant_id, Job.priority_rank, Job.claim_key, name="job_fair_tail", where=QUEUED)
)
Job.add_index(Job.lease_expires_at, where=RUNNING)  # the sweep
Job.add_index(Job.batch_id, Job.batch_position, where=SQL("batch_id IS NOT NULL"))


class PeriodicTask(BaseModel):
    """A ``@periodic`` task's schedule and fleet-wide run lock."""

    name = CharField(primary_key=True, max_length=100)
    interval_seconds = IntegerField()
    next_run_at = BigIntegerField()
    locked_by = CharField(max_length=100, null=True)
    locked_until = BigIntegerField(null=True)
    last_started_at = BigIntegerField(null=True)
    last_finished_at = BigIntegerField(null=True)
    last_error = TextField(null=True)
    run_count = IntegerField(default=0)


class WorkerProcess(BaseModel):
    """A running worker: renewed with its heartbeat, removed when it stops."""

    id = CharField(primary_key=True, max_length=100)
    hostname = CharField(max_length=255)
    pid = IntegerField()
    concurrency = IntegerField()
    started_at = BigIntegerField(default=now_ms)
    last_seen_at = BigIntegerField(default=now_ms, index=True)
    stopping = BooleanField(default=False)
    # {loop name: epoch ms of its last successful pass}, written by the heartbeat (0051)
    loops = JSONField(null=True)
