"""Dispatch and claim on the hot path (issue 14): the one-statement INSERT stores the job
dispatch returned; batch claims keep queue order, fairness and leases; batch completions
are fenced per job; a runner writes a full batch's outcomes with its next claim."""

from commerce_api.db import db, is_postgres, write_transaction
from commerce_api.events.models import Event
from commerce_api.jobs import completion, runners
from commerce_api.jobs import queue as jobqueue
from commerce_api.jobs.models import HELD, Job
from commerce_api.jobs.runners import Runner
from commerce_api.jobs.services import dispatch_batch, enqueue_job
from commerce_api.jobs.worker import Worker
from commerce_api.timeutil import now_ms
from tests.support import jobs_support
from tests.support.factories import make_tenant

jobs_app = jobs_support.jobs_app  # the fixture


def test_the_stored_row_is_the_job_dispatch_returned(jobs_app, tenant):
    spacing = jobs_app.config["JOB_FAIR_SPACING_MS"]
    with jobs_app.app_context():
        first = enqueue_job(tenant.id, "test_noop", {"a": [1, 2]}, priority="low")
        second = enqueue_job(tenant.id, "test_noop", {}, priority="low")
        for job in (first, second):
            stored = Job.get_by_id(job.id)
            for name in Job._meta.fields:
                if name != "claim_key":
                    assert getattr(stored, name) == getattr(job, name), name
        assert Job.get_by_id(first.id).claim_key == first.claim_key  # its natural key
        assert (first.status, first.attempts, first.result, first.worker_id) == (
            "queued",
            0,
            None,
            None,
        )
        # the tenant's second queued job of that priority goes one spacing after the first
        assert Job.get_by_id(second.id).claim_key == first.claim_key + spacing


def test_a_held_batch_job_is_stored_held(jobs_app, tenant):
    items = [{"type": "test_noop"}, {"type": "test_noop"}]
    with jobs_app.app_context():
        batch = dispatch_batch(tenant.id, items, sequential=True)
        later = Job.get_by_id(batch["jobs"][1]["id"])
        assert (later.run_at, later.claim_key, later.batch_position) == (HELD, HELD, 1)
        assert later.batch_sequential is True and later.status == "queued"


def test_a_batch_claim_keeps_order_fairness_and_leases(jobs_app):
    busy, quiet = make_tenant(), make_tenant()
    with jobs_app.app_context():
        crowd = [enqueue_job(busy.id, "test_noop", {}).id for _ in range(30)]
        single = enqueue_job(quiet.id, "test_noop", {}).id
        before = now_ms()
        jobs = jobqueue.claim_jobs("batch-worker", 5, 30_000)
        ids = [job.id for job in jobs]
        # one claim of five: the quiet tenant's job is in it, the busy tenant's in order
        assert single in ids and len(ids) == 5
        assert [i for i in ids if i != single] == crowd[:4]
        for job in jobs:
            stored = Job.get_by_id(job.id)
            assert (stored.status, stored.worker_id, stored.attempts) == (
                "running",
                "batch-worker",
                1,
            )
            assert stored.lease_expires_at >= before + 30_000
            assert (job.status, job.attempts, job.lease_expires_at) == (
                "running",
                1,
                stored.lease_expires_at,
            )
        # the rest stay queued for others
        assert Job.select().where(Job.status == "queued").count() == 26


def test_a_batch_of_completions_is_fenced_by_attempt(jobs_app, tenant):
    with jobs_app.app_context():
        ids = [enqueue_job(tenant.id, "test_noop", {}).id for _ in range(3)]
        jobs = jobqueue.claim_jobs("worker-a", 3, 30_000)
        # the worker's view of the second job is of an older attempt: its outcome is void
        Job.update(attempts=Job.attempts + 1).where(Job.id == ids[1]).execute()
        prepared = [completion.prepare_completion(j, "worker-a", {"n": 1}) for j in jobs]
        with write_transaction():
            assert completion.write_completions(prepared) == [True, False, True]
        statuses = [Job.get_by_id(i).status for i in ids]
        assert statuses == ["completed", "running", "completed"]
        assert Job.get_by_id(ids[0]).result == {"n": 1}
        events = Event.select().where(Event.type == "ai_job.completed")
        assert sorted(e.resource_id for e in events) == sorted([ids[0], ids[2]])


def test_a_full_batch_of_outcomes_goes_with_the_next_claim(jobs_app, tenant, monkeypatch):
    monkeypatch.setattr(runners, "BATCH_SIZE", 4)
    steps = []
    real_step = jobqueue.step

    def recording_step(worker_id, outcomes, claim_limit, lease_ms):
        results, jobs = real_step(worker_id, outcomes, claim_limit, lease_ms)
        steps.append((len(outcomes), claim_limit, len(jobs)))
        return results, jobs

    monkeypatch.setattr(jobqueue, "step", recording_step)
    with jobs_app.app_context():
        ids = [enqueue_job(tenant.id, "test_noop", {}).id for _ in range(8)]
    worker = Worker(jobs_app, concurrency=1, once=True, install_signals=False)
    worker.runners.record_duration("test_noop", 0.0001)  # known to be short: claimed in batches
    worker.run()
    with jobs_app.app_context():
        assert {Job.get_by_id(i).status for i in ids} == {"completed"}
    assert worker.stats["completed"] == 8
    # four claimed at once; their four outcomes written in the transaction of the next
    # claim, never on their own
    assert (0, 4, 4) in steps and (4, 4, 4) in steps
    assert all(not (outcomes == 4 and limit == 0) for outcomes, limit, _ in steps), steps


def test_a_runner_woken_with_nothing_due_opens_no_write_transaction(jobs_app, tenant, monkeypatch):
    steps = []
    real_step = jobqueue.step

    def recording_step(worker_id, outcomes, claim_limit, lease_ms):
        steps.append((len(outcomes), claim_limit))
        return real_step(worker_id, outcomes, claim_limit, lease_ms)

    monkeypatch.setattr(jobqueue, "step", recording_step)
    worker = Worker(jobs_app, concurrency=1, once=True, install_signals=False)
    runner = Runner(1, main=lambda runner: None)  # not started: driven by hand
    with jobs_app.app_context():
        # another runner took what was due: a read-only look, no claim
        assert worker.runners.write_and_claim(runner, claim=True) is False
        assert steps == []
        job = enqueue_job(tenant.id, "test_noop", {})
        assert worker.runners.write_and_claim(runner, claim=True) is True
        assert steps == [(0, 1)]
        assert [entry.job.id for entry in runner.local] == [job.id]
        assert Job.get_by_id(job.id).status == "running"


def test_the_outbox_has_one_index_per_query_and_none_on_tenant_alone(jobs_app):
    with jobs_app.app_context():
        names = {index.name for index in db.get_indexes("event")}
        assert "event_tenant_id" not in names  # migration 0016
        assert {"event_tenant_id_created_at", "event_fanned_out_at"} <= names
        if not is_postgres():
            plan = db.execute_sql(
                'EXPLAIN QUERY PLAN SELECT id FROM "event" WHERE tenant_id = ?'
                " ORDER BY created_at LIMIT 5",
                ("t",),
            ).fetchall()
            assert "event_tenant_id_created_at" in str(plan)
            plan = db.execute_sql(
                'EXPLAIN QUERY PLAN SELECT id FROM "event" WHERE fanned_out_at IS NULL'
                " ORDER BY rowid LIMIT 5"
            ).fetchall()
            assert "event_fanned_out_at" in str(plan)
