"""The worker must not look healthy without runners; claiming is fair between tenants;
internal jobs have a capacity (issue 13, defect 2)."""

import contextlib
import os
import signal
import subprocess
import sys
import threading

import pytest
import requests

from commerce_api.jobs import queue as jobqueue
from commerce_api.jobs.models import Job
from commerce_api.jobs.services import enqueue_job
from commerce_api.jobs.worker import EXIT_HUNG, Worker
from commerce_api.orders.ingest import upsert_order
from tests.support import jobs_support
from tests.support.factories import make_tenant
from tests.support.jobs_support import register_handler
from tests.support.orders_support import connect, make_products, order_body, snapshot
from tests.support.servers import ROOT, free_port, process_env, stop_process
from tests.support.waiting import wait_for

jobs_app = jobs_support.jobs_app  # the fixture


def test_a_worker_whose_runners_all_hang_exits(jobs_app, tenant, monkeypatch, caplog):
    monkeypatch.setitem(jobs_app.config, "WORKER_LEASE_SECONDS", 1)
    monkeypatch.setitem(jobs_app.config, "WORKER_MAX_HUNG_RUNNERS", 1)
    monkeypatch.setitem(jobs_app.config, "WORKER_MAX_ATTEMPTS", 1)
    release = threading.Event()

    class Hang:
        TIMEOUT_SECONDS = 1

        @staticmethod
        def run(job, ctx):
            release.wait(30)
            return {}

    register_handler("hang_forever", Hang, internal=True)
    with jobs_app.app_context():
        for _ in range(3):
            enqueue_job(tenant.id, "hang_forever", {}, internal=True)
    worker = Worker(jobs_app, concurrency=1, poll_interval=0.05, install_signals=False)
    outcome = {}
    thread = threading.Thread(target=lambda: outcome.setdefault("code", worker.run()))
    try:
        thread.start()
        thread.join(30)  # nobody stops it: it must stop by itself
        assert not thread.is_alive()
    finally:
        release.set()
        if thread.is_alive():
            worker.stop()
            thread.join(10)
    assert outcome["code"] == worker.exit_code == EXIT_HUNG != 0
    assert worker.stats["lost"] == 2  # one runner replaced, the second hang is one too many
    assert "cannot keep concurrency 1, exiting with code 3" in caplog.text


@pytest.mark.slow
def test_serve_with_worker_restarts_a_worker_that_exited(
    app, tenant, database_url, tmp_path, monkeypatch
):
    # the hung jobs get one attempt each (a job's attempts are fixed when it is queued)
    monkeypatch.setenv("COMMERCE_WORKER_MAX_ATTEMPTS", "1")
    port = free_port()
    env = process_env(
        database_url,
        EXTRA_TASK_MODULES="tests.support.job_types",
        WORKER_CONCURRENCY=1,
        WORKER_MAX_HUNG_RUNNERS=1,
        WORKER_LEASE_SECONDS=1,
        WORKER_MAX_ATTEMPTS=1,
        WORKER_POLL_INTERVAL=0.1,
    )
    log_path = tmp_path / "serve.log"
    hung = [enqueue_job(tenant.id, "test_hang", {}, internal=True).id for _ in range(2)]
    with open(log_path, "wb") as log:
        proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "commerce_api.cli",
                "serve",
                "--bind",
                f"127.0.0.1:{port}",
                "--workers",
                "1",
                "--threads",
                "2",
                "--with-worker",
            ],  # fmt: skip
            cwd=ROOT,
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    try:

        def text():
            return log_path.read_text(errors="replace")

        assert wait_for(lambda: "starting another" in text(), timeout=60), text()
        assert "cannot keep concurrency 1, exiting with code 3" in text()
        # the API kept answering, and the new worker runs jobs
        assert requests.get(f"http://127.0.0.1:{port}/api/health", timeout=5).status_code == 200
        fresh = enqueue_job(tenant.id, "test_noop", {}).id
        assert wait_for(lambda: Job.get_by_id(fresh).status == "completed", timeout=60), text()

        def statuses():
            return {Job.get_by_id(job_id).status for job_id in hung}

        assert wait_for(lambda: statuses() == {"failed"}, timeout=30), (statuses(), text())
        # the restarted worker's start line may reach the log after its first jobs' effects
        assert wait_for(lambda: text().count("started: concurrency 1") >= 2, timeout=30), text()
    finally:
        stop_process(proc, timeout=40)
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)


def test_claiming_is_fair_between_tenants(app, monkeypatch):
    # a spacing far longer than queuing 500 jobs takes on a loaded machine (at 1 s, the
    # quiet job came after the busy tenant's third when the 500 took over 2 s)
    monkeypatch.setenv("COMMERCE_JOB_FAIR_SPACING_MS", "600000")
    busy, quiet = make_tenant(), make_tenant()
    for _ in range(500):
        enqueue_job(busy.id, "test_noop", {})
    single = enqueue_job(quiet.id, "test_noop", {}).id
    claimed = []
    for _ in range(3):
        claimed += [job.id for job in jobqueue.claim_jobs("fair-worker", 1, 30_000)]
    assert single in claimed  # within its first few claims, not after 500


def test_priority_and_order_hold_within_a_tenant(app):
    busy = make_tenant()
    normal = [enqueue_job(busy.id, "test_noop", {}).id for _ in range(20)]
    high = enqueue_job(busy.id, "test_noop", {}, priority="high").id
    low = enqueue_job(busy.id, "test_noop", {}, priority="low").id
    order = []
    while True:
        jobs = jobqueue.claim_jobs("order-worker", 5, 30_000)
        if not jobs:
            break
        order += [job.id for job in jobs]
    assert order == [high, *normal, low]


def test_internal_jobs_respect_the_tenant_capacity(client, headers, tenant, app, monkeypatch):
    monkeypatch.setitem(app.config, "INTERNAL_JOB_CAPACITY", 2)
    make_products(client, headers, "MUG-1")
    connect(tenant, "amazon")
    for _ in range(2):
        response = client.post("/api/products/MUG-1/sync", json={}, headers=headers)
        assert response.status_code == 202, response.get_json()
    before = Job.select().count()
    response = client.post("/api/products/MUG-1/sync", json={}, headers=headers)
    assert response.status_code == 429
    error = response.get_json()["error"]
    assert error["code"] == "QUEUE_FULL"
    assert error["details"]["queue"] == "internal" and error["details"]["capacity"] == 2
    assert int(response.headers["Retry-After"]) >= 1
    assert Job.select().count() == before  # nothing queued
    # a cancellation would queue one more internal job: refused too, the order unchanged
    _, order_id = upsert_order(tenant.id, order_body("A-9"), source="import")
    state = snapshot()
    response = client.post(
        f"/api/orders/{order_id}/cancel", json={"reason": "customer_request"}, headers=headers
    )
    assert response.status_code == 429 and response.get_json()["error"]["code"] == "QUEUE_FULL"
    assert snapshot() == state and Job.select().count() == before
