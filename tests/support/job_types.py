"""Test-only job types, loaded through ``EXTRA_TASK_MODULES=tests.support.job_types``.

They never ship in the package: a production deployment has no way to dispatch them.
- ``test_noop`` does nothing but say when it started (the worker benchmark measures
  dispatch-to-start latency with it);
- ``test_hang`` (internal) sleeps past its one-second time-out: a hung runner;
- ``test_task`` sleeps, fails or records on request. It records ``start``/``end`` lines
  (job id, attempt, worker id, time) to the file named by ``TEST_JOBS_RECORD_FILE`` when
  ``record`` is true, so tests in other processes can see every execution.
"""

import os
import time

import marshmallow as ma

from commerce_api.http.schemas import StrictBoolean, StrictSchema
from commerce_api.jobs.errors import JobFailed
from commerce_api.jobs.registry import job_type


class NoopParams(StrictSchema):
    pass


class TaskParams(StrictSchema):
    sleep = ma.fields.Float(load_default=0.0, validate=ma.validate.Range(min=0, max=30))
    fail = ma.fields.String(validate=ma.validate.Length(min=1, max=64))
    retryable = StrictBoolean(load_default=False)
    fail_attempts = ma.fields.Integer(
        validate=ma.validate.Range(min=0, max=10),
        metadata={"description": "Fail (retryably) while the attempt is at most this."},
    )
    crash = StrictBoolean(load_default=False)
    record = StrictBoolean(load_default=False)
    result = ma.fields.Dict()


@job_type("test_noop", scope=None, params=NoopParams, typical_seconds=1, timeout=60)
def test_noop(job, ctx):
    return {"started_at": time.time()}


def _record(ctx, event, job):
    path = os.environ.get("COMMERCE_TEST_JOBS_RECORD_FILE") or ctx.config.get(
        "TEST_JOBS_RECORD_FILE"
    )
    if not path:
        return
    line = f"{event} {job.id} {job.attempts} {ctx.worker_id} {time.time():.6f}\n"
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    try:
        os.write(fd, line.encode())  # one O_APPEND write: lines never interleave
    finally:
        os.close(fd)


@job_type("test_task", scope=None, params=TaskParams, typical_seconds=1, timeout=60)
def test_task(job, ctx):
    params = job.params or {}
    if params.get("record"):
        _record(ctx, "start", job)
    deadline = time.monotonic() + float(params.get("sleep") or 0)
    while time.monotonic() < deadline:
        time.sleep(min(0.05, max(0.0, deadline - time.monotonic())))
    if params.get("crash"):
        raise RuntimeError("test_task crashed on purpose")
    if params.get("fail_attempts") is not None and job.attempts <= params["fail_attempts"]:
        raise JobFailed("TEST_FAILURE", f"attempt {job.attempts} fails", retryable=True)
    if params.get("fail"):
        raise JobFailed(params["fail"], "test_task failed on purpose", params.get("retryable"))
    if params.get("record"):
        _record(ctx, "end", job)
    return {"attempt": job.attempts, "worker_id": ctx.worker_id, **(params.get("result") or {})}


@job_type("test_hang", scope=None, typical_seconds=1, timeout=1, internal=True)
def test_hang(job, ctx):
    """Hangs past its one-second time-out, ignoring everything (a stuck marketplace call).

    Internal: queued by tests with ``enqueue_job`` only."""
    time.sleep(float((job.params or {}).get("seconds") or 30))
    return {}
