"""The worker runtime in process: order, batches, retries, leases, fencing, time-outs,
graceful shutdown, events and periodic tasks."""

import signal
import threading
import time
import types

import marshmallow as ma
import pytest

from commerce_api.db import write_transaction as db_transaction
from commerce_api.events.models import Event
from commerce_api.jobs import completion, registry, runners
from commerce_api.jobs import queue as jobqueue
from commerce_api.jobs import services as jobservices
from commerce_api.jobs.enqueue import reset_estimates
from commerce_api.jobs.errors import JobFailed, JobLost
from commerce_api.jobs.models import Job, PeriodicTask, WorkerProcess
from commerce_api.jobs.services import enqueue_job
from commerce_api.jobs.store import serialize_job
from commerce_api.jobs.worker import Worker
from commerce_api.timeutil import now_ms, parse_timestamp
from tests.support import jobs_support
from tests.support.jobs_support import (
    dispatch,
    job_events,
    job_row,
    read_record,
    register_handler,
    run_worker,
    running_worker,
)
from tests.support.waiting import wait_for

jobs_app = jobs_support.jobs_app  # the fixture
SCAN = {"marketplace": "amazon", "skus": ["A"]}


def get(client, headers, job_id):
    return client.get(f"/api/ai-jobs/{job_id}", headers=headers).get_json()["data"]


def starts(app):
    return [row[1] for row in read_record(app) if row[0] == "start"]


class Gate:
    """A handler that blocks until released: a job that is observably running."""

    TIMEOUT_SECONDS = 30

    def __init__(self):
        self.started = threading.Event()
        self.release = threading.Event()
        self.finished = threading.Event()
        self.lost_seen = None

    def run(self, job, ctx):
        self.started.set()
        self.release.wait(20)
        self.lost_seen = ctx.lost
        self.finished.set()
        return {"gate": True}


# Order ----------------------------------------------------------------------------------


def test_one_worker_runs_by_priority_then_first_in_first_out(client, headers, jobs_app):
    plan = ["low", "normal", "high", "low", "high", "normal", "normal", "high"]
    ids = [dispatch(client, headers, params={"record": True}, priority=p)["id"] for p in plan]
    run_worker(jobs_app, concurrency=1)
    by_priority = {p: [i for i, q in zip(ids, plan, strict=True) if q == p] for p in set(plan)}
    assert starts(jobs_app) == by_priority["high"] + by_priority["normal"] + by_priority["low"]
    for job_id in ids:
        job = get(client, headers, job_id)
        assert job["status"] == "completed" and job["attempts"] == 1


def test_aging_keeps_low_priority_jobs_from_starving(client, headers, jobs_app, monkeypatch):
    aging = jobs_app.config["JOB_PRIORITY_AGING_SECONDS"] * 1000
    real_now = now_ms()

    def dispatch_at(offset_ms, priority):
        with monkeypatch.context() as patch:
            patch.setattr(jobservices, "now_ms", lambda: real_now + offset_ms)
            return dispatch(client, headers, params={"record": True}, priority=priority)["id"]

    # a low job that has waited more than two aging windows is ahead of a new high job;
    # one that waited less than two windows is still behind it
    old_low = dispatch_at(-2 * aging - 60_000, "low")
    recent_low = dispatch_at(-2 * aging + 60_000, "low")
    old_normal = dispatch_at(-aging - 1000, "normal")
    high = dispatch_at(0, "high")
    run_worker(jobs_app, concurrency=1)
    assert starts(jobs_app) == [old_low, old_normal, high, recent_low]


def test_claim_is_exclusive_between_workers(jobs_app, tenant):
    with jobs_app.app_context():
        for _ in range(10):
            enqueue_job(tenant.id, "test_noop", {})
        first = jobqueue.claim_jobs("worker-a", 4, 30_000)
        second = jobqueue.claim_jobs("worker-b", 10, 30_000)
        assert len(first) == 4 and len(second) == 6
        assert not {j.id for j in first} & {j.id for j in second}
        assert jobqueue.claim_jobs("worker-c", 10, 30_000) == []
        assert {j.status for j in first + second} == {"running"}
        assert {j.attempts for j in first + second} == {1}


# Batches --------------------------------------------------------------------------------


def _batch(client, headers, items, sequential):
    body = {"sequential": sequential, "jobs": items}
    response = client.post("/api/ai-jobs/batch", json=body, headers=headers)
    assert response.status_code == 201, response.get_json()
    return [j["id"] for j in response.get_json()["data"]["jobs"]]


def test_sequential_batch_runs_one_after_another(client, headers, jobs_app):
    items = [{"type": "test_task", "params": {"record": True, "sleep": 0.05}} for _ in range(4)]
    ids = _batch(client, headers, items, sequential=True)
    # distractors, so free slots exist while the batch waits for its predecessor
    others = [dispatch(client, headers, params={"sleep": 0.1})["id"] for _ in range(3)]
    run_worker(jobs_app, concurrency=4)
    record = read_record(jobs_app)
    timeline = {(event, job_id): moment for event, job_id, _, _, moment in record}
    for before, after in zip(ids, ids[1:], strict=False):
        assert timeline[("start", after)] >= timeline[("end", before)]
    jobs = [get(client, headers, i) for i in ids + others]
    assert {j["status"] for j in jobs} == {"completed"}
    for before, after in zip(jobs, jobs[1:4], strict=False):
        assert after["started_at"] >= before["completed_at"]


def test_sequential_batch_stops_at_a_failure(client, headers, jobs_app):
    items = [
        {"type": "test_task", "params": {"record": True}},
        {"type": "test_task", "params": {"record": True, "fail": "BAD_INPUT"}},
        {"type": "test_task", "params": {"record": True}},
        {"type": "test_task", "params": {"record": True}},
    ]
    ids = _batch(client, headers, items, sequential=True)
    run_worker(jobs_app, concurrency=4)
    jobs = [get(client, headers, i) for i in ids]
    assert [j["status"] for j in jobs] == ["completed", "failed", "cancelled", "cancelled"]
    assert jobs[1]["error"] == {
        "code": "BAD_INPUT",
        "message": "test_task failed on purpose",
        "retry_count": 0,
    }
    assert [j.get("cancel_reason") for j in jobs[2:]] == ["batch_predecessor_failed"] * 2
    assert starts(jobs_app) == ids[:2]  # the cancelled jobs never ran


def test_sequential_batch_waits_for_retries(client, headers, jobs_app):
    items = [
        {"type": "test_task", "params": {"record": True, "fail_attempts": 2}},
        {"type": "test_task", "params": {"record": True}},
    ]
    ids = _batch(client, headers, items, sequential=True)
    run_worker(jobs_app, concurrency=2)
    assert starts(jobs_app) == [ids[0], ids[0], ids[0], ids[1]]
    first = get(client, headers, ids[0])
    assert first["status"] == "completed" and first["attempts"] == 3
    assert get(client, headers, ids[1])["status"] == "completed"


def test_parallel_batch_runs_at_once(client, headers, jobs_app):
    items = [{"type": "test_task", "params": {"record": True, "sleep": 0.3}} for _ in range(3)]
    ids = _batch(client, headers, items, sequential=False)
    run_worker(jobs_app, concurrency=3)
    record = read_record(jobs_app)
    first_end = min(m for e, _, _, _, m in record if e == "end")
    assert all(m < first_end for e, _, _, _, m in record if e == "start")
    assert {get(client, headers, i)["status"] for i in ids} == {"completed"}


# Outcomes, retries, events --------------------------------------------------------------


def test_completion_sets_result_and_emits_one_event(client, headers, jobs_app):
    job_id = dispatch(client, headers, params={"result": {"answer": 42}})["id"]
    run_worker(jobs_app, concurrency=1)
    job = get(client, headers, job_id)
    assert job["status"] == "completed"
    assert job["result"]["answer"] == 42 and job["result"]["attempt"] == 1
    assert job["duration_seconds"] == 0 and job["completed_at"] >= job["started_at"]
    with jobs_app.app_context():
        events = job_events(job_id)
        assert [e.type for e in events] == ["ai_job.completed"]
        assert events[0].data["status"] == "completed"
        assert events[0].data["result"] == job["result"]
        assert events[0].resource_type == "ai_job"


class _Line(ma.Schema):
    sku = ma.fields.String()
    price = ma.fields.Float()
    note = ma.fields.String(allow_none=True)


class _Result(ma.Schema):
    count = ma.fields.Integer()
    lines = ma.fields.List(ma.fields.Nested(_Line))
    details = ma.fields.Dict()


class Shaped:
    """A job type with a documented result; returns ``self.result``."""

    RESULT_SCHEMA = _Result

    def __init__(self, result):
        self.result = result

    def run(self, job, ctx):
        return self.result


def test_a_result_is_stored_as_its_documented_schema_shows_it(client, headers, jobs_app):
    returned = {"count": 1, "lines": [{"sku": "A", "price": 2}], "undocumented": True}
    register_handler("test_shaped", Shaped(returned))
    job_id = dispatch(client, headers, "test_shaped")["id"]
    run_worker(jobs_app, concurrency=1)
    job = get(client, headers, job_id)
    assert job["status"] == "completed", job
    # a missing list or object is empty, a nullable field null, a number a float; keys the
    # schema does not have are not kept
    assert job["result"] == {
        "count": 1,
        "lines": [{"sku": "A", "price": 2.0, "note": None}],
        "details": {},
    }


def test_a_result_that_lacks_a_required_field_fails_the_job(client, headers, jobs_app):
    register_handler("test_shaped", Shaped({"count": 1, "lines": [{"price": 2}]}))
    job_id = dispatch(client, headers, "test_shaped")["id"]
    run_worker(jobs_app, concurrency=1)
    job = get(client, headers, job_id)
    assert job["status"] == "failed", job
    assert job["error"]["code"] == "INTERNAL_ERROR" and job["attempts"] == 1
    assert "documented schema" in job["error"]["message"]
    with jobs_app.app_context():
        assert [e.type for e in job_events(job_id)] == ["ai_job.failed"]


def test_retryable_failures_are_retried_then_succeed(client, headers, jobs_app):
    job_id = dispatch(client, headers, params={"fail_attempts": 3})["id"]
    run_worker(jobs_app, concurrency=1)
    job = get(client, headers, job_id)
    assert job["status"] == "completed" and job["attempts"] == 4
    assert job["result"]["attempt"] == 4


def test_retries_are_used_up_then_failed(client, headers, jobs_app):
    job_id = dispatch(client, headers, params={"fail": "UPSTREAM_DOWN", "retryable": True})["id"]
    run_worker(jobs_app, concurrency=1)
    job = get(client, headers, job_id)
    assert job["status"] == "failed" and job["attempts"] == 4
    assert job["error"] == {
        "code": "UPSTREAM_DOWN",
        "message": "test_task failed on purpose",
        "retry_count": 3,
    }
    assert "result" not in job and job["failed_at"]
    with jobs_app.app_context():
        assert [e.type for e in job_events(job_id)] == ["ai_job.failed"]


def test_an_unexpected_exception_is_an_internal_error(client, headers, jobs_app):
    job_id = dispatch(client, headers, params={"crash": True})["id"]
    run_worker(jobs_app, concurrency=1)
    job = get(client, headers, job_id)
    assert job["status"] == "failed"
    assert job["error"]["code"] == "INTERNAL_ERROR"
    assert "crashed on purpose" not in job["error"]["message"]  # no internals
    assert job["error"]["retry_count"] == 3


def test_retry_waits_for_its_backoff(client, headers, jobs_app, monkeypatch):
    monkeypatch.setitem(jobs_app.config, "WORKER_RETRY_BACKOFF_SECONDS", 60.0)
    job_id = dispatch(client, headers, params={"fail_attempts": 1})["id"]
    run_worker(jobs_app, concurrency=1)  # --once: the retry is not due yet
    with jobs_app.app_context():
        job = job_row(job_id)
    assert job.status == "queued" and job.attempts == 1
    assert job.last_error["code"] == "TEST_FAILURE"
    assert 60_000 <= job.run_at - job.updated_at <= 66_000
    api = get(client, headers, job_id)
    assert api["status"] == "queued" and "error" not in api


def test_backoff_doubles(jobs_app):
    with jobs_app.app_context():
        jobs_app.config["WORKER_RETRY_BACKOFF_SECONDS"] = 5.0
        delays = [jobqueue.backoff_ms(attempt) for attempt in (1, 2, 3)]
    for delay, expected in zip(delays, (5000, 10000, 20000), strict=True):
        assert expected <= delay <= expected * 1.1


def test_types_without_a_handler_fail_without_retries(client, headers, jobs_app):
    registry.declare_job_type("not_built_yet", params=None)
    try:
        job_id = dispatch(client, headers, "not_built_yet", {"skus": ["A"]})["id"]
        run_worker(jobs_app, concurrency=1)
    finally:
        registry.unregister("not_built_yet")
    job = get(client, headers, job_id)
    assert job["status"] == "failed" and job["attempts"] == 1
    assert job["error"]["code"] == "JOB_TYPE_NOT_IMPLEMENTED"
    assert job["error"]["retry_count"] == 0
    assert "result" not in job


def test_internal_job_handler_hook(client, headers, tenant, jobs_app):
    calls = []
    handler = types.SimpleNamespace(
        TIMEOUT_SECONDS=5, PARAMS_SCHEMA=None, run=lambda job, ctx: calls.append(job.params) or {}
    )
    register_handler("internal_probe", handler, internal=True)
    with jobs_app.app_context():
        job = enqueue_job(tenant.id, "internal_probe", {"sku": "A"}, internal=True)
    refused = client.post("/api/ai-jobs", json={"type": "internal_probe"}, headers=headers)
    assert refused.get_json()["error"]["code"] == "INVALID_JOB_TYPE"
    run_worker(jobs_app, concurrency=1)
    assert calls == [{"sku": "A"}]
    assert get(client, headers, job.id)["status"] == "completed"


def test_a_result_that_is_not_an_object_fails(client, headers, jobs_app):
    register_handler("bad_result", types.SimpleNamespace(run=lambda job, ctx: [1, 2]))
    job_id = dispatch(client, headers, "bad_result")["id"]
    run_worker(jobs_app, concurrency=1)
    job = get(client, headers, job_id)
    assert job["status"] == "failed" and job["error"]["code"] == "INTERNAL_ERROR"


# Leases, fencing, sweeping --------------------------------------------------------------


def _expire(job_id):
    Job.update(lease_expires_at=now_ms() - 1).where(Job.id == job_id).execute()


def test_a_late_worker_cannot_overwrite_the_result(jobs_app, tenant):
    with jobs_app.app_context():
        job_id = enqueue_job(tenant.id, "test_noop", {}).id
        (stale,) = jobqueue.claim_jobs("worker-a", 1, 30_000)
        _expire(job_id)
        assert jobqueue.sweep_expired_leases() == {"retrying": 1, "failed": 0}
        queued = job_row(job_id)
        assert queued.status == "queued" and queued.last_error["code"] == "WORKER_TIMEOUT"
        Job.update(run_at=now_ms()).where(Job.id == job_id).execute()  # skip the backoff
        (fresh,) = jobqueue.claim_jobs("worker-b", 1, 30_000)
        assert fresh.attempts == 2
        # worker A wakes up: neither its result nor its failure lands
        assert completion.complete_job(stale, "worker-a", {"from": "a"}) is False
        assert jobqueue.fail_attempt(stale, "worker-a", "X", "late", retryable=False) is None
        assert jobqueue.renew_leases("worker-a", [(job_id, 1)], 30_000) == set()
        assert completion.complete_job(fresh, "worker-b", {"from": "b"}) is True
        assert completion.complete_job(fresh, "worker-b", {"from": "b2"}) is False
        done = job_row(job_id)
        assert done.status == "completed" and done.result == {"from": "b"}
        assert [e.type for e in job_events(job_id)] == ["ai_job.completed"]


def test_same_worker_reclaiming_fences_by_attempt(jobs_app, tenant):
    with jobs_app.app_context():
        job_id = enqueue_job(tenant.id, "test_noop", {}).id
        (first,) = jobqueue.claim_jobs("worker-a", 1, 30_000)
        _expire(job_id)
        jobqueue.sweep_expired_leases()
        Job.update(run_at=now_ms()).where(Job.id == job_id).execute()
        (second,) = jobqueue.claim_jobs("worker-a", 1, 30_000)
        assert jobqueue.renew_leases("worker-a", [(job_id, 1), (job_id, 2)], 30_000) == {
            (job_id, 2)
        }
        assert completion.complete_job(first, "worker-a", {"attempt": 1}) is False
        assert completion.complete_job(second, "worker-a", {"attempt": 2}) is True
        assert job_row(job_id).result == {"attempt": 2}


def test_expired_leases_fail_with_worker_timeout_when_attempts_are_used_up(jobs_app, tenant):
    with jobs_app.app_context():
        job_id = enqueue_job(tenant.id, "test_noop", {}).id
        for attempt in range(1, 5):
            (job,) = jobqueue.claim_jobs("worker-a", 1, 30_000)
            assert job.attempts == attempt
            _expire(job_id)
            outcome = jobqueue.sweep_expired_leases()
            Job.update(run_at=now_ms()).where(Job.id == job_id).execute()
        assert outcome == {"retrying": 0, "failed": 1}
        failed = job_row(job_id)
        assert failed.status == "failed"
        assert failed.error["code"] == "WORKER_TIMEOUT"
        assert failed.error["retry_count"] == 3
        assert failed.error["message"]
        assert failed.lease_expires_at is None
        assert [e.type for e in job_events(job_id)] == ["ai_job.failed"]
        assert jobqueue.claim_jobs("worker-a", 1, 30_000) == []


def test_a_renewed_lease_is_not_swept(jobs_app, tenant):
    with jobs_app.app_context():
        job_id = enqueue_job(tenant.id, "test_noop", {}).id
        jobqueue.claim_jobs("worker-a", 1, 30_000)
        _expire(job_id)
        assert jobqueue.renew_leases("worker-a", [(job_id, 1)], 30_000) == {(job_id, 1)}
        assert jobqueue.sweep_expired_leases() == {"retrying": 0, "failed": 0}
        assert job_row(job_id).status == "running"


def test_the_lease_never_passes_the_deadline(jobs_app, tenant):
    with jobs_app.app_context():
        job_id = enqueue_job(tenant.id, "test_noop", {}).id
        Job.update(timeout_seconds=2).where(Job.id == job_id).execute()
        (job,) = jobqueue.claim_jobs("worker-a", 1, 30_000)
        row = job_row(job_id)
        assert row.deadline_at == row.started_at + 2000
        assert row.lease_expires_at == row.deadline_at
        jobqueue.renew_leases("worker-a", [(job_id, 1)], 30_000)
        assert job_row(job_id).lease_expires_at == row.deadline_at


def test_a_hung_job_times_out(client, headers, jobs_app, monkeypatch):
    monkeypatch.setitem(jobs_app.config, "WORKER_LEASE_SECONDS", 1)
    monkeypatch.setitem(jobs_app.config, "WORKER_MAX_ATTEMPTS", 2)
    released = threading.Event()
    seen = []

    def hang(job, ctx):
        released.wait(10)
        seen.append(ctx.lost)
        try:
            ctx.heartbeat()
        except JobLost:
            seen.append("JobLost")
        return {"late": True}

    register_handler("hang", types.SimpleNamespace(TIMEOUT_SECONDS=1, run=hang))
    job_id = dispatch(client, headers, "hang")["id"]
    started = time.monotonic()
    worker = run_worker(jobs_app, concurrency=1)
    elapsed = time.monotonic() - started
    job = get(client, headers, job_id)
    assert job["status"] == "failed" and job["attempts"] == 2
    assert job["error"]["code"] == "WORKER_TIMEOUT"
    assert job["error"]["retry_count"] == 1
    assert "time-out of 1 s" in job["error"]["message"]
    assert worker.stats["lost"] == 2
    assert elapsed < 8
    released.set()  # the abandoned runners finish now; their results are dropped
    assert wait_for(lambda: len(seen) == 4)
    assert seen == [True, "JobLost", True, "JobLost"]
    assert get(client, headers, job_id)["status"] == "failed"


def test_heartbeat_raises_job_lost_after_a_sweep(jobs_app, tenant):
    gate = Gate()
    outcome = {}

    def run(job, ctx):
        gate.started.set()
        gate.release.wait(10)
        try:
            ctx._last_renewal = 0  # skip the throttle
            ctx.heartbeat()
        except JobLost:
            outcome["lost"] = True
            raise
        return {}

    register_handler("probe", types.SimpleNamespace(run=run))
    with jobs_app.app_context():
        job_id = enqueue_job(tenant.id, "probe", {}).id
    worker = Worker(jobs_app, concurrency=1, install_signals=False)
    thread = threading.Thread(target=worker.run)
    thread.start()
    try:
        assert gate.started.wait(10)
        with jobs_app.app_context():
            _expire(job_id)
            jobqueue.sweep_expired_leases()
        gate.release.set()
        assert wait_for(lambda: outcome.get("lost"))
        with jobs_app.app_context():  # the retry (no backoff here) runs and completes
            assert wait_for(lambda: job_row(job_id).status == "completed", timeout=20)
    finally:
        worker.stop()
        thread.join(15)
    with jobs_app.app_context():
        row = job_row(job_id)
        assert row.status == "completed" and row.attempts == 2


# Shutdown -------------------------------------------------------------------------------


def test_stop_lets_a_running_job_finish(client, headers, jobs_app):
    gate = Gate()
    register_handler("gate", gate)
    job_id = dispatch(client, headers, "gate")["id"]
    worker = Worker(jobs_app, concurrency=1, install_signals=False, grace_seconds=10)
    thread = threading.Thread(target=worker.run)
    thread.start()
    assert gate.started.wait(10)
    later = dispatch(client, headers, "test_noop")["id"]
    worker.stop()
    time.sleep(0.2)
    gate.release.set()
    thread.join(15)
    assert not thread.is_alive()
    assert get(client, headers, job_id)["status"] == "completed"
    assert get(client, headers, later)["status"] == "queued"  # nothing new was claimed
    with jobs_app.app_context():
        assert WorkerProcess.select().count() == 0


def test_stop_gives_back_unfinished_jobs_without_spending_an_attempt(client, headers, jobs_app):
    gate = Gate()
    register_handler("gate", gate)
    job_id = dispatch(client, headers, "gate")["id"]
    worker = Worker(jobs_app, concurrency=1, install_signals=False, grace_seconds=0.3)
    thread = threading.Thread(target=worker.run)
    thread.start()
    assert gate.started.wait(10)
    worker.stop()
    thread.join(15)
    assert not thread.is_alive()
    job = get(client, headers, job_id)
    assert job["status"] == "queued" and job["attempts"] == 0
    with jobs_app.app_context():
        row = job_row(job_id)
        assert row.worker_id is None and row.lease_expires_at is None
    gate.release.set()  # the abandoned handler returns: its result is dropped
    assert gate.finished.wait(10)
    time.sleep(0.1)
    assert get(client, headers, job_id)["status"] == "queued"
    register_handler("gate", types.SimpleNamespace(run=lambda job, ctx: {"second": 1}))
    run_worker(jobs_app, concurrency=1)
    job = get(client, headers, job_id)
    assert job["status"] == "completed" and job["attempts"] == 1
    assert job["result"] == {"second": 1}


def test_a_signal_that_arrives_while_the_worker_holds_its_lock_stops_it(jobs_app):
    """A signal handler runs in the main thread wherever that thread is, even while it
    holds the runners' lock (waking runners when a NOTIFY came): it must not take the
    lock."""
    worker = Worker(jobs_app, concurrency=1, install_signals=False)
    done = threading.Event()

    def main_thread_at_the_wrong_moment():
        with worker.runners._lock:
            worker._on_signal(signal.SIGTERM, None)
        done.set()

    threading.Thread(target=main_thread_at_the_wrong_moment, daemon=True).start()
    assert done.wait(5), "the signal handler waited for the lock its own thread held"
    assert worker.stopping.is_set()
    worker._wakeup.close()


def test_the_worker_checkpoints_a_sqlite_wal_from_a_thread_of_its_own(jobs_app):
    from commerce_api.db import is_postgres

    with running_worker(jobs_app, concurrency=1) as worker:
        assert wait_for(lambda: worker._heartbeat_thread is not None)
        checkpointer = worker._checkpointer
        if is_postgres():
            assert checkpointer is None
        else:
            assert checkpointer is not None and checkpointer.frames == 200
            assert checkpointer._thread.is_alive()
    assert checkpointer is None or checkpointer._thread is None  # stopped with the worker


def test_worker_registers_itself_while_running(jobs_app):
    gate = Gate()
    register_handler("gate", gate)
    worker = Worker(jobs_app, concurrency=3, install_signals=False)
    thread = threading.Thread(target=worker.run)
    thread.start()
    try:
        with jobs_app.app_context():
            assert wait_for(lambda: WorkerProcess.select().count() == 1)
            row = WorkerProcess.get()
            assert row.id == worker.id and row.concurrency == 3 and not row.stopping
    finally:
        worker.stop()
        thread.join(15)
    with jobs_app.app_context():
        assert WorkerProcess.select().count() == 0


def test_live_slots_shorten_the_estimate(client, headers, jobs_app):
    typical = registry.typical_seconds("competitor_scan") * 1000

    def waits(count):
        jobs = [dispatch(client, headers, "competitor_scan", SCAN) for _ in range(count)]
        return [
            parse_timestamp(j["estimated_completion_at"]) - parse_timestamp(j["created_at"])
            for j in jobs
        ]

    # no worker seen: one slot, so each job waits for the ones before it
    alone = waits(3)
    assert alone[0] == typical and typical < alone[1] < alone[2]
    # a live worker with eight slots: the three queued and three more all start at once
    with jobs_app.app_context():
        jobqueue.register_worker("w1", "host", 1, 8)
    reset_estimates()
    assert waits(3) == [typical] * 3


# Periodic tasks -------------------------------------------------------------------------


@pytest.fixture
def periodic_tasks():
    saved = dict(registry.PERIODIC_TASKS)
    registry.PERIODIC_TASKS.clear()
    yield registry.PERIODIC_TASKS
    registry.PERIODIC_TASKS.clear()
    registry.PERIODIC_TASKS.update(saved)


def test_periodic_task_runs_once_when_due_across_workers(jobs_app, periodic_tasks):
    calls = []
    registry.add_periodic("probe", 3600, lambda: calls.append(time.time()))
    run_worker(jobs_app)
    assert len(calls) == 1
    run_worker(jobs_app)  # another worker: not due for an hour
    assert len(calls) == 1
    with jobs_app.app_context():
        row = PeriodicTask.get_by_id("probe")
        assert row.run_count == 1 and row.locked_by is None and row.last_error is None
        assert row.next_run_at - row.last_started_at == 3600 * 1000
        PeriodicTask.update(next_run_at=now_ms() - 1).execute()
    run_worker(jobs_app)
    assert len(calls) == 2


def test_periodic_task_is_skipped_while_another_worker_runs_it(jobs_app, periodic_tasks):
    calls = []
    registry.add_periodic("probe", 60, lambda: calls.append(1))
    with jobs_app.app_context():
        jobqueue.ensure_periodic_rows(periodic_tasks)
        assert jobqueue.claim_periodic("probe", "other-worker", 30_000)
        PeriodicTask.update(next_run_at=now_ms() - 1).execute()  # due, but locked
    run_worker(jobs_app)
    assert calls == []
    with jobs_app.app_context():
        PeriodicTask.update(locked_until=now_ms() - 1).execute()  # the other worker died
    run_worker(jobs_app)
    assert calls == [1]


def test_periodic_errors_are_logged_and_never_stop_the_worker(
    client, headers, jobs_app, periodic_tasks
):
    def broken():
        raise RuntimeError("marketplace down")

    registry.add_periodic("broken", 60, broken)
    job_id = dispatch(client, headers, "test_noop")["id"]
    run_worker(jobs_app)
    assert get(client, headers, job_id)["status"] == "completed"
    with jobs_app.app_context():
        row = PeriodicTask.get_by_id("broken")
        assert "marketplace down" in row.last_error and row.locked_by is None


def test_job_failed_contract():
    failure = JobFailed("CODE", "message")
    assert (failure.code, failure.message, failure.retryable, failure.details) == (
        "CODE",
        "message",
        False,
        {},
    )


# Short jobs in batches ------------------------------------------------------------------


def test_completion_event_row_matches_emit(jobs_app, tenant):
    from commerce_api.events import emit, write_events

    with jobs_app.app_context():
        job_id = enqueue_job(tenant.id, "test_noop", {}).id
        (job,) = jobqueue.claim_jobs("worker-a", 1, 30_000)
        row = completion.prepare_completion(job, "worker-a", {"ok": 1}, now_ms()).event
        fields = Event._meta.sorted_fields
        assert {f.name for f in fields} == {
            "id",
            "tenant_id",
            "type",
            "resource_type",
            "resource_id",
            "data",
            "created_at",
        }, "Event changed: check event_params() writes what the model expects"
        with db_transaction():
            write_events([row])
            emit(job.tenant_id, "ai_job.completed", "ai_job", job.id, serialize_job(job))
        fast, reference = Event.select().where(Event.resource_id == job_id).order_by(Event.id)
        for field in fields:
            if field.name not in ("id", "created_at"):
                assert getattr(fast, field.name) == getattr(reference, field.name), field.name
        assert fast.id.startswith("evt_") and abs(fast.created_at - reference.created_at) < 5000


def test_short_jobs_run_in_batches_and_a_stuck_runner_hands_its_jobs_on(
    client, headers, jobs_app, monkeypatch
):
    monkeypatch.setitem(jobs_app.config, "WORKER_LEASE_SECONDS", 3)  # heartbeat every 1 s
    gate = Gate()
    register_handler("slow", gate)
    register_handler("quick", types.SimpleNamespace(run=lambda job, ctx: {"q": 1}))
    worker = Worker(jobs_app, concurrency=2, install_signals=False)
    thread = threading.Thread(target=worker.run)
    thread.start()
    try:
        warm = [dispatch(client, headers, "quick")["id"] for _ in range(3)]
        assert wait_for(lambda: all(get(client, headers, i)["status"] == "completed" for i in warm))
        # quick is known to be short now: one claim takes the whole batch
        items = [{"type": "quick"}] * 3 + [{"type": "slow"}] + [{"type": "quick"}] * 5
        body = {"jobs": items, "sequential": False}
        batch = client.post("/api/ai-jobs/batch", json=body, headers=headers).get_json()["data"]
        ids = [j["id"] for j in batch["jobs"]]
        assert gate.started.wait(10)
        # the quick jobs before the slow one were written before it started; those
        # after it, claimed by the same runner, are handed on and finish meanwhile
        assert wait_for(
            lambda: all(
                get(client, headers, i)["status"] == "completed" for i in ids[:3] + ids[4:]
            ),
            timeout=10,
        )
        assert get(client, headers, ids[3])["status"] == "running"
        gate.release.set()
        assert wait_for(lambda: get(client, headers, ids[3])["status"] == "completed")
    finally:
        gate.release.set()
        worker.stop()
        thread.join(15)
    assert worker.stats["completed"] == 12


class Overlap:
    """A sub-millisecond handler that records how many runners ran it at once."""

    def __init__(self):
        self.lock = threading.Lock()
        self.active = self.most = self.runs = 0
        self.threads = set()

    def run(self, job, ctx):
        with self.lock:
            self.active += 1
            self.runs += 1
            self.most = max(self.most, self.active)
            self.threads.add(threading.current_thread().name)
        time.sleep(0)  # lets the GIL go: another runner could start one meanwhile
        with self.lock:
            self.active -= 1
        return {}


def test_sub_millisecond_jobs_are_run_by_one_runner_at_a_time(jobs_app, tenant, monkeypatch):
    # what counts as sub-millisecond is widened: a GIL hand-over on a busy machine can
    # make one run of the handler take milliseconds, and the lane is what is tested here
    monkeypatch.setattr(runners, "LANE_JOB_SECONDS", 0.5)
    monkeypatch.setattr(runners, "SHORT_JOB_SECONDS", 0.5)
    overlap = Overlap()
    register_handler("tiny", overlap)
    with running_worker(jobs_app, concurrency=4) as worker, jobs_app.app_context():
        warm = 0
        while not worker.runners.lane_mode() and warm < 50:  # its runs are timed first
            warm += 1
            job_id = enqueue_job(tenant.id, "tiny", {}).id
            assert wait_for(lambda job_id=job_id: job_row(job_id).status == "completed")
        assert worker.runners.lane_mode()
        overlap.most, overlap.threads = 0, set()
        ids = [enqueue_job(tenant.id, "tiny", {}).id for _ in range(300)]
        assert wait_for(lambda: overlap.runs >= warm + 300, timeout=30)
        assert wait_for(lambda: all(job_row(i).status == "completed" for i in ids[-5:]))
    # 300 jobs, claimed 32 at a time, by one runner at a time (the lane passes on when
    # its holder goes idle, so several threads may have held it in turn)
    assert overlap.most == 1
    assert worker.stats["completed"] == warm + 300


def test_a_stuck_lane_holder_hands_the_lane_and_its_claimed_jobs_on(jobs_app, tenant, monkeypatch):
    """The lane's holder blocks in a job of a type that was sub-millisecond until now: the
    heartbeat hands its unstarted jobs back and frees the lane, and another runner runs
    them while the first is still stuck."""
    monkeypatch.setitem(jobs_app.config, "WORKER_LEASE_SECONDS", 3)  # heartbeat every 1 s
    monkeypatch.setattr(runners, "LANE_JOB_SECONDS", 0.5)
    monkeypatch.setattr(runners, "SHORT_JOB_SECONDS", 0.5)
    gate = Gate()

    class Tiny:
        def run(self, job, ctx):
            return gate.run(job, ctx) if job.params.get("block") else {}

    register_handler("tiny", Tiny())
    with running_worker(jobs_app, concurrency=2) as worker, jobs_app.app_context():
        warm = [enqueue_job(tenant.id, "tiny", {}).id for _ in range(3)]
        assert wait_for(lambda: all(job_row(i).status == "completed" for i in warm))
        assert worker.runners.lane_mode()
        blocker = enqueue_job(tenant.id, "tiny", {"block": True}).id
        assert gate.started.wait(10)  # the holder claimed it alone: nothing else it holds
        rest = [enqueue_job(tenant.id, "tiny", {}).id for _ in range(20)]
        assert wait_for(lambda: all(job_row(i).status == "completed" for i in rest), timeout=15)
        assert job_row(blocker).status == "running"
        gate.release.set()
        assert wait_for(lambda: job_row(blocker).status == "completed")
    assert worker.stats["completed"] == 24


def test_a_batch_of_completions_skips_the_one_whose_lease_was_lost(jobs_app, tenant):
    with jobs_app.app_context():
        ids = [enqueue_job(tenant.id, "test_noop", {}).id for _ in range(3)]
        jobs = jobqueue.claim_jobs("worker-a", 3, 30_000)
        assert [j.id for j in jobs] == ids
        _expire(ids[1])
        jobqueue.sweep_expired_leases()
        Job.update(run_at=now_ms()).where(Job.id == ids[1]).execute()
        (taken,) = jobqueue.claim_jobs("worker-b", 1, 30_000)
        assert taken.id == ids[1]
        prepared = [completion.prepare_completion(j, "worker-a", {"by": "a"}) for j in jobs]
        with db_transaction():
            assert completion.write_completions(prepared) == [True, False, True]
        assert [job_row(i).status for i in ids] == ["completed", "running", "completed"]
        assert job_row(ids[1]).worker_id == "worker-b"
        completed = {e.resource_id for e in Event.select().where(Event.type == "ai_job.completed")}
        assert completed == {ids[0], ids[2]}


def test_a_running_job_reports_progress(client, headers, jobs_app):
    seen = {}

    def run(job, ctx):
        ctx.progress(0, 3)
        seen["running"] = Job.get_by_id(job.id).progress
        for done in (1, 2, 3):
            ctx.progress(done, 3)
        return {"ok": True}

    register_handler("progressive", types.SimpleNamespace(run=run))
    job_id = dispatch(client, headers, "progressive")["id"]
    assert "progress" not in get(client, headers, job_id)
    run_worker(jobs_app, concurrency=1)
    assert seen["running"] == {"done": 0, "total": 3}
    job = get(client, headers, job_id)
    assert job["status"] == "completed" and job["progress"] == {"done": 3, "total": 3}


def test_background_loops_run_beside_the_runners_and_stop_with_the_worker(jobs_app):
    passes = []
    started = threading.Event()

    def loop(stop):
        while True:
            passes.append(stop.is_set())
            started.set()
            if stop.wait(0.01):
                return

    registry.BACKGROUND_LOOPS["probe"] = loop
    try:
        run_worker(jobs_app, concurrency=1)  # --once: a single pass, stop already set
        assert passes == [True]
        passes.clear()
        started.clear()
        worker = Worker(jobs_app, concurrency=1, install_signals=False, grace_seconds=5)
        thread = threading.Thread(target=worker.run)
        thread.start()
        assert started.wait(10)
        worker.stop()
        thread.join(10)
        assert not thread.is_alive()
        assert len(passes) >= 1 and not passes[0]
    finally:
        registry.BACKGROUND_LOOPS.pop("probe", None)


def test_events_leave_out_a_huge_result_and_say_so(client, headers, jobs_app):
    big = {"rows": ["x" * 100] * 1000}  # ~100 KB of JSON
    register_handler("big", types.SimpleNamespace(run=lambda job, ctx: big))
    register_handler("small", types.SimpleNamespace(run=lambda job, ctx: {"ok": 1}))
    big_id = dispatch(client, headers, "big")["id"]
    small_id = dispatch(client, headers, "small")["id"]
    run_worker(jobs_app, concurrency=1)
    (big_event,) = [e for e in job_events(big_id) if e.type == "ai_job.completed"]
    assert big_event.data["result"] is None and big_event.data["result_omitted"] is True
    assert get(client, headers, big_id)["result"] == big  # the API still has all of it
    (small_event,) = [e for e in job_events(small_id) if e.type == "ai_job.completed"]
    assert small_event.data["result"] == {"ok": 1} and "result_omitted" not in small_event.data
