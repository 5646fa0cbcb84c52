"""Completing jobs: the fenced update, its ``ai_job.completed`` outbox row in the same
transaction, and the release of a sequential batch's next job.

The worker writes the completions of a runner's finished jobs together, with its next
claim (``queue.step``): one UPDATE for all of them, fenced per job by
``(status = 'running', worker_id, attempts)``, which returns the jobs it changed, then
their outbox rows. A completion whose lease was lost changes nothing and writes no event.
"""

import json

from ..db import db, json_default
from ..events.outbox import event_params, write_events
from ..sql import cached_statement
from ..timeutil import now_ms
from . import registry
from .models import HELD, Job
from .store import aging_ms, job_write, notify_workers, serialize_job

# An event (and so every webhook delivery of it) carries a job's params and result up to
# this size each; a larger one (10,000 scored reviews: megabytes) is left out and flagged,
# and the receiver reads it with GET /api/ai-jobs/:id.
EVENT_PAYLOAD_LIMIT = 64 * 1024
# completions written by one statement at most (its parameters: 5 per job)
MANY_LIMIT = 64


def encode_result(result):
    """The handler's result as the stored JSON text (Decimal -> number, tuple and set ->
    list); TypeError or ValueError when it is not JSON. Encoded once: the column stores
    this text and the job and its event get it decoded."""
    return json.dumps({} if result is None else result, separators=(",", ":"), default=json_default)


def jsonable_result(result):
    """The handler's result as plain JSON (Decimal -> number); TypeError when it is not."""
    return json.loads(encode_result(result))


def event_job(job, result_chars=None):
    """The job as its ``ai_job.*`` events carry it (``result_chars``: the length of the
    result's JSON when the caller has it)."""
    data = serialize_job(job)
    for name in ("params", "result"):
        value = data.get(name)
        if name == "result" and result_chars is not None:
            size = result_chars if value else 0
        else:
            size = len(json.dumps(value, default=str, separators=(",", ":"))) if value else 0
        if size > EVENT_PAYLOAD_LIMIT:
            data[name] = None
            data[f"{name}_omitted"] = True
    return data


def emits_events(job):
    """Only caller-dispatched jobs emit ``ai_job.*`` events: the service's own work (syncs,
    pulls, cancellation pushes, periodic work: internal types or rows) is silent."""
    spec = registry.get(job.type)
    return not (job.internal or (spec is not None and spec.internal))


def completed_event_row(job, now, result_chars=None):
    """The ``ai_job.completed`` outbox row, as parameters for ``events.write_events``
    (built before the transaction opens, so the write lock is held for the statements only);
    None for an internal job."""
    if not emits_events(job):
        return None
    data = event_job(job, result_chars)
    return event_params(job.tenant_id, "ai_job.completed", "ai_job", job.id, data, now)


def prepare_completion(job, worker_id, result, now=None, encoded=None):
    """Everything a completion writes, computed before the transaction opens (so the
    write lock is held for the statements only). ``encoded``: the result already as
    ``encode_result`` text (the worker encodes it once, when checking it is JSON)."""
    now = now_ms() if now is None else now
    text = encode_result(result) if encoded is None else encoded
    job.status, job.result, job.completed_at = "completed", json.loads(text), now
    job.lease_expires_at = job.deadline_at = job.last_error = None
    params = (text, now, now, job.id, worker_id, job.attempts)
    return job, params, completed_event_row(job, now, len(text))


def complete_job(job, worker_id, result, now=None):
    """Record success; False when the worker no longer holds the job (nothing changes)."""
    prepared = prepare_completion(job, worker_id, result, now)
    with job_write():
        return write_completions([prepared])[0]


def _complete_sql():
    """One fenced completion, built once per engine (peewee would compose it every time)."""
    p = db.param
    return (
        f"UPDATE job SET status = 'completed', result = {p}, completed_at = {p},"
        " lease_expires_at = NULL, deadline_at = NULL, last_error = NULL,"
        f" updated_at = {p}"
        f" WHERE id = {p} AND status = 'running' AND worker_id = {p} AND attempts = {p}"
    )


def _complete_many_sql(count):
    """``count`` fenced completions in one statement; it returns the (id, attempts) of
    those that landed (the others had lost their lease)."""

    def build():
        p = db.param
        rows = ", ".join([f"({p}, {p}, {p}, {p}, {p})"] * count)
        return (
            f"WITH done (id, attempts, worker_id, result, completed_at) AS (VALUES {rows})"
            " UPDATE job SET status = 'completed', result = done.result,"
            " completed_at = done.completed_at, lease_expires_at = NULL, deadline_at = NULL,"
            " last_error = NULL, updated_at = done.completed_at"
            " FROM done WHERE job.id = done.id AND job.status = 'running'"
            " AND job.worker_id = done.worker_id AND job.attempts = done.attempts"
            " RETURNING job.id, job.attempts"
        )

    return cached_statement(("job-complete-many", count), build)


def _write_many(prepared):
    """The fenced updates of ``prepared`` (several), a boolean per item."""
    landed = set()
    for start in range(0, len(prepared), MANY_LIMIT):
        chunk = prepared[start : start + MANY_LIMIT]
        values = []
        for _, (text, completed_at, _, job_id, worker_id, attempts), _ in chunk:
            values += (job_id, attempts, worker_id, text, completed_at)
        rows = db.execute_sql(_complete_many_sql(len(chunk)), values).fetchall()
        landed.update((job_id, attempts) for job_id, attempts in rows)
    return [(params[3], params[5]) in landed for _, params, _ in prepared]


def write_completions(prepared, now=None):
    """Inside the caller's transaction: the fenced updates, their outbox rows and the
    release of sequential-batch successors; a list of booleans (False: lease lost)."""
    if db.transaction_depth() == 0:
        raise RuntimeError("completions must be written inside a transaction")
    if len(prepared) == 1:
        update = cached_statement("job-complete", _complete_sql)
        changed = [db.execute_sql(update, prepared[0][1]).rowcount == 1]
    else:
        changed = _write_many(prepared)
    events = [
        event
        for (_, _, event), ok in zip(prepared, changed, strict=True)
        if ok and event is not None
    ]
    if events:
        write_events(events)
    for (job, _, _), ok in zip(prepared, changed, strict=True):
        if ok and job.batch_sequential:
            release_next(job, job.completed_at if now is None else now)
    return changed


def release_next(job, now):
    """Make the job after ``job`` in its sequential batch claimable."""
    if not (job.batch_id and job.batch_sequential):
        return 0
    released = (
        Job.update(
            run_at=now,
            # its place in the queue is that of the batch's dispatch, not of this moment
            claim_key=Job.created_at + Job.priority_rank * aging_ms(),
            updated_at=now,
        )
        .where(
            (Job.batch_id == job.batch_id)
            & (Job.batch_position == job.batch_position + 1)
            & (Job.status == "queued")
            & (Job.run_at == HELD)
        )
        .execute()
    )
    if released:
        notify_workers()
    return released
