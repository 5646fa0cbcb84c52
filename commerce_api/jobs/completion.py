"""Completing jobs: the fenced update, its ``ai_job.completed`` outbox row in the same
transaction, and the release of a sequential batch's next job.

The worker writes the completions of a runner's finished jobs together, with its next
claim (``queue.step``): one UPDATE for all of them, fenced per job by
``(status = 'running', worker_id, attempts)``, which returns the jobs it changed, then
their outbox rows. A completion whose lease was lost changes nothing and writes no event.
"""

import json
from collections.abc import Sequence
from typing import Any

from ..db import db, json_default
from ..events.outbox import event_params, write_events
from ..sql import Statement
from ..timeutil import now_ms
from . import registry
from .models import HELD, Job
from .outcomes import PreparedCompletion
from .store import aging_ms, job_write, notify_workers, serialize_job

# An event (and so every webhook delivery of it) carries a job's params and result up to
# this size each; a larger one (10,000 scored reviews: megabytes) is left out and flagged,
# and the receiver reads it with GET /api/ai-jobs/:id.
EVENT_PAYLOAD_LIMIT = 64 * 1024
# completions written by one statement at most (its parameters: 5 per job)
MANY_LIMIT = 64


def encode_result(result: Any) -> str:
    """The handler's result as the stored JSON text (Decimal -> number, tuple and set ->
    list); TypeError or ValueError when it is not JSON. Encoded once: the column stores
    this text and the job and its event get it decoded."""
    return json.dumps({} if result is None else result, separators=(",", ":"), default=json_default)


def jsonable_result(result: Any) -> Any:
    """The handler's result as plain JSON (Decimal -> number); TypeError when it is not."""
    return json.loads(encode_result(result))


def event_job(job: Job, result_chars: int | None = None) -> dict[str, Any]:
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


def emits_events(job: Job) -> bool:
    """Only caller-dispatched jobs emit ``ai_job.*`` events: the service's own work (syncs,
    pulls, cancellation pushes, periodic work: internal types or rows) is silent."""
    spec = registry.get(job.type)
    return not (job.internal or (spec is not None and spec.internal))


def completed_event_row(job: Job, now: int, result_chars: int | None = None) -> list[Any] | None:
    """The ``ai_job.completed`` outbox row, as parameters for ``events.write_events``
    (built before the transaction opens, so the write lock is held for the statements only);
    None for an internal job."""
    if not emits_events(job):
        return None
    data = event_job(job, result_chars)
    return event_params(job.tenant_id, "ai_job.completed", "ai_job", job.id, data, now)


def prepare_completion(
    job: Job, worker_id: str, result: Any, now: int | None = None, encoded: str | None = None
) -> PreparedCompletion:
    """Everything a completion writes, computed before the transaction opens (so the
    write lock is held for the statements only). ``encoded``: the result already as
    ``encode_result`` text (the worker encodes it once, when checking it is JSON)."""
    now = now_ms() if now is None else now
    text = encode_result(result) if encoded is None else encoded
    job.status, job.result, job.completed_at = "completed", json.loads(text), now
    job.lease_expires_at = job.deadline_at = job.last_error = None
    return PreparedCompletion(job, text, now, worker_id, completed_event_row(job, now, len(text)))


def complete_job(job: Job, worker_id: str, result: Any, now: int | None = None) -> bool:
    """Record success; False when the worker no longer holds the job (nothing changes)."""
    prepared = prepare_completion(job, worker_id, result, now)
    with job_write():
        return write_completions([prepared])[0]


# One fenced completion, built once per engine (peewee would compose it every time).
_COMPLETE = Statement(
    "UPDATE {Job} SET {Job.status} = 'completed', {Job.result} = {p:result},"
    " {Job.completed_at} = {p:completed_at},"
    " {Job.lease_expires_at} = NULL, {Job.deadline_at} = NULL, {Job.last_error} = NULL,"
    " {Job.updated_at} = {p:completed_at}"
    " WHERE {Job.id} = {p:id} AND {Job.status} = 'running' AND {Job.worker_id} = {p:worker_id}"
    " AND {Job.attempts} = {p:attempts}",
    Job=Job,
)
# ``{rows}`` fenced completions in one statement (``_complete_many``); it returns the
# (id, attempts) of those that landed (the others had lost their lease)
_COMPLETE_MANY = (
    "WITH done (id, attempts, worker_id, result, completed_at) AS (VALUES {rows})"
    " UPDATE {Job} SET {Job.status} = 'completed', {Job.result} = done.result,"
    " {Job.completed_at} = done.completed_at, {Job.lease_expires_at} = NULL,"
    " {Job.deadline_at} = NULL, {Job.last_error} = NULL, {Job.updated_at} = done.completed_at"
    " FROM done WHERE {Job}.{Job.id} = done.id AND {Job}.{Job.status} = 'running'"
    " AND {Job}.{Job.worker_id} = done.worker_id AND {Job}.{Job.attempts} = done.attempts"
    " RETURNING {Job}.{Job.id}, {Job}.{Job.attempts}"
)
_ROW = ("id", "attempts", "worker_id", "result", "completed_at")  # a ``done`` row's names
_COMPLETE_MANY_BY_COUNT: dict[int, Statement] = {}


def _complete_many(count: int) -> Statement:
    """``_COMPLETE_MANY`` for ``count`` rows, their parameters named ``<name><row>``."""
    statement = _COMPLETE_MANY_BY_COUNT.get(count)
    if statement is None:
        rows = ", ".join(
            "(" + ", ".join(f"{{p:{name}{index}}}" for name in _ROW) + ")" for index in range(count)
        )
        statement = Statement(_COMPLETE_MANY.replace("{rows}", rows), Job=Job)
        _COMPLETE_MANY_BY_COUNT[count] = statement
    return statement


def _write_many(prepared):
    """The fenced updates of ``prepared`` (several), a boolean per item."""
    landed = set()
    for start in range(0, len(prepared), MANY_LIMIT):
        chunk = prepared[start : start + MANY_LIMIT]
        values = {
            f"{name}{index}": value
            for index, item in enumerate(chunk)
            for name, value in item.params.items()
        }
        rows = _complete_many(len(chunk)).execute(values).fetchall()
        landed.update((job_id, attempts) for job_id, attempts in rows)
    return [(item.job.id, item.job.attempts) in landed for item in prepared]


def write_completions(prepared: Sequence[PreparedCompletion], now: int | None = None) -> list[bool]:
    """Inside the caller's transaction: the fenced updates, their outbox rows and the
    release of sequential-batch successors; a list of booleans (False: lease lost)."""
    if db.transaction_depth() == 0:
        raise RuntimeError("completions must be written inside a transaction")
    if len(prepared) == 1:
        changed = [_COMPLETE.execute(prepared[0].params).rowcount == 1]
    else:
        changed = _write_many(prepared)
    landed = [item for item, ok in zip(prepared, changed, strict=True) if ok]
    events = [item.event for item in landed if item.event is not None]
    if events:
        write_events(events)
    for item in landed:
        if item.job.batch_sequential:
            release_next(item.job, item.job.completed_at if now is None else now)
    return changed


def release_next(job: Job, now: int) -> int:
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
