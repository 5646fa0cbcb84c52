"""Real worker processes: the CLI, SIGKILL crashes, four workers draining 2,000 jobs,
graceful shutdown on SIGTERM, and ``serve --with-worker`` stopped by Ctrl-C."""

import collections
import os
import random
import signal
import subprocess
import sys
import time

import pytest
import requests

from commerce_api.cli import cli
from commerce_api.events.models import Event
from commerce_api.jobs import commands
from commerce_api.jobs.models import Job, WorkerProcess
from commerce_api.jobs.services import enqueue_job
from commerce_api.jobs.worker import Worker
from commerce_api.timeutil import now_ms
from tests.support import jobs_support
from tests.support.factories import headers_for
from tests.support.jobs_support import read_record
from tests.support.servers import ROOT, free_port, process_env, stop_process, wait_healthy
from tests.support.waiting import wait_for

jobs_app = jobs_support.jobs_app  # the fixture


def worker_settings(app, **extra):
    settings = {
        "EXTRA_TASK_MODULES": "tests.support.job_types",
        "TEST_JOBS_RECORD_FILE": app.config["TEST_JOBS_RECORD_FILE"],
        "WORKER_RETRY_BACKOFF_SECONDS": 0.1,
        "LOG_LEVEL": "WARNING",
    }
    settings.update(extra)
    return settings


def start_worker(app, database_url, *args, **settings):
    """``commerce-api worker`` in its own process group, its stderr in a log file."""
    log_path = app.config["TEST_JOBS_RECORD_FILE"] + ".workers.log"
    with open(log_path, "ab") as log:
        proc = subprocess.Popen(
            [sys.executable, "-m", "commerce_api.cli", "worker", *args],
            cwd=ROOT,
            env=process_env(database_url, **worker_settings(app, **settings)),
            start_new_session=True,
            stderr=log,
        )
    proc.log_path = log_path
    return proc


def exit_status(proc, timeout):
    """The worker's exit status within ``timeout``; else fail with its log."""
    try:
        return proc.wait(timeout)
    except subprocess.TimeoutExpired:
        raise AssertionError(
            f"worker still running after {timeout} s:\n{worker_log(proc)}"
        ) from None


def worker_log(proc, lines=40):
    with open(proc.log_path, errors="replace") as handle:
        return "".join(handle.readlines()[-lines:])


def running_job_of(app, proc, timeout=30, feed=None):
    """Wait until ``proc`` runs a job (``feed()`` keeps jobs coming); fail with its log if
    it died or never did."""

    def check():
        if feed is not None:
            feed()
        if proc.poll() is not None:
            raise RuntimeError(f"worker exited with {proc.returncode}:\n{worker_log(proc)}")
        return running_of(app, proc.pid)

    running = wait_for(check, timeout)
    if running:
        return running
    with app.app_context():
        rows = list(
            Job.select(Job.id, Job.status, Job.attempts, Job.run_at, Job.worker_id).tuples()
        )
        workers = list(WorkerProcess.select(WorkerProcess.id).tuples())
    state = f"now {now_ms()}\njobs {rows}\nworkers {workers}"
    raise AssertionError(
        f"a running job not reached within {timeout} s\n{state}\n{worker_log(proc, 400)}"
    )


def statuses(app):
    with app.app_context():
        return collections.Counter(status for (status,) in Job.select(Job.status).tuples())


def running_of(app, pid):
    with app.app_context():
        return (
            Job.select(Job.id)
            .where((Job.status == "running") & Job.worker_id.contains(f":{pid}:"))
            .count()
        )


def test_worker_once_command(runner, jobs_app, tenant):
    with jobs_app.app_context():
        ids = [enqueue_job(tenant.id, "test_task", {"record": True}).id for _ in range(3)]
    result = runner.invoke(
        cli, ["worker", "--once", "--concurrency", "2", "--poll-interval", "0.05"]
    )
    assert result.exit_code == 0, result.output
    with jobs_app.app_context():
        assert {Job.get_by_id(i).status for i in ids} == {"completed"}
    bad = runner.invoke(cli, ["worker", "--concurrency", "0"])
    assert bad.exit_code == 2


@pytest.mark.slow
def test_sigkill_in_the_middle_of_jobs(jobs_app, tenant, database_url):
    """A worker is killed with SIGKILL mid-job 20 times: every job still ends exactly once."""
    settings = {"WORKER_LEASE_SECONDS": 1}
    params = {"sleep": 0.5, "record": True}

    def feed():
        """Keep at least four jobs queued or running, so there is always one to kill."""
        counts = statuses(jobs_app)
        if counts["queued"] + counts["running"] < 4:
            with jobs_app.app_context():
                for _ in range(4):
                    enqueue_job(tenant.id, "test_task", params)

    def open_jobs():
        counts = statuses(jobs_app)
        return counts["queued"] + counts["running"]

    with jobs_app.app_context():
        for _ in range(8):
            enqueue_job(tenant.id, "test_task", params)
    kills = 0
    # the next worker boots while the current one runs, so the 20 rounds overlap
    upcoming = start_worker(jobs_app, database_url, "--concurrency", "2", **settings)
    try:
        while kills < 20:
            current = upcoming
            upcoming = start_worker(jobs_app, database_url, "--concurrency", "2", **settings)
            try:
                running_job_of(jobs_app, current, feed=feed)
                time.sleep(random.uniform(0.0, 0.4))
                os.killpg(current.pid, signal.SIGKILL)
                current.wait(10)
                kills += 1
            finally:
                stop_process(current)
    finally:
        stop_process(upcoming)
    # one last worker finishes what the killed ones left (retries wait out their backoff)
    proc = start_worker(jobs_app, database_url, "--concurrency", "4", **settings)
    try:
        assert wait_for(lambda: open_jobs() == 0, 30), "every job finished not reached within 30 s"
    finally:
        stop_process(proc)

    with jobs_app.app_context():
        jobs = list(Job.select())
        events = collections.Counter(
            (e.resource_id, e.type) for e in Event.select().where(Event.type.startswith("ai_job."))
        )
    record = read_record(jobs_app)
    ends = {
        (job_id, attempt, worker) for event, job_id, attempt, worker, _ in record if event == "end"
    }
    outcome = collections.Counter()
    for job in jobs:
        assert job.status in ("completed", "failed"), (job.id, job.status)
        outcome[job.status] += 1
        terminal_events = [t for (i, t), n in events.items() if i == job.id for _ in range(n)]
        if job.status == "completed":
            # completed once: one event, and the result is the one attempt that won
            assert terminal_events == ["ai_job.completed"]
            assert job.result["attempt"] == job.attempts
            assert (job.id, job.attempts, job.result["worker_id"]) in ends
        else:
            assert terminal_events == ["ai_job.failed"]
            assert job.error["code"] == "WORKER_TIMEOUT", job.error
            assert job.error["retry_count"] == 3 and job.attempts == 4
    assert sum(1 for e, *_ in record if e == "start") >= len(jobs) + 20 - 1
    print(f"after 20 kills: {dict(outcome)} of {len(jobs)} jobs")


@pytest.mark.slow
def test_four_workers_drain_2000_jobs_exactly_once(jobs_app, tenant, database_url):
    procs = [
        start_worker(jobs_app, database_url, "--concurrency", "2", "--poll-interval", "0.1")
        for _ in range(4)
    ]
    try:
        with jobs_app.app_context():
            assert wait_for(lambda: WorkerProcess.select().count() == 4, 30), (
                "4 workers up not reached within 30 s"
            )
        started = time.monotonic()
        with jobs_app.app_context():
            ids = [enqueue_job(tenant.id, "test_task", {"record": True}).id for _ in range(2000)]
        assert wait_for(lambda: statuses(jobs_app)["completed"] == 2000, 90, 0.2), (
            "2,000 completed not reached within 90 s"
        )
        elapsed = time.monotonic() - started
    finally:
        for proc in procs:
            stop_process(proc)
    for proc in procs:
        assert proc.returncode == 0  # SIGTERM: a clean, graceful exit
    record = read_record(jobs_app)
    starts = collections.Counter(job_id for event, job_id, *_ in record if event == "start")
    assert set(starts) == set(ids)
    duplicates = [job_id for job_id, n in starts.items() if n > 1]
    assert duplicates == []
    with jobs_app.app_context():
        assert Job.select().where(Job.attempts != 1).count() == 0
        completed_events = Event.select().where(Event.type == "ai_job.completed").count()
    assert completed_events == 2000
    per_worker = collections.Counter(
        worker for event, _, _, worker, _ in record if event == "start"
    )
    assert len(per_worker) >= 2, per_worker
    print(f"2,000 jobs in {elapsed:.1f} s; per worker: {sorted(per_worker.values())}")


@pytest.mark.slow
def test_sigterm_lets_the_running_job_finish(jobs_app, tenant, database_url):
    with jobs_app.app_context():
        job_id = enqueue_job(tenant.id, "test_task", {"sleep": 1.0}).id
    proc = start_worker(
        jobs_app, database_url, "--concurrency", "1", WORKER_SHUTDOWN_GRACE_SECONDS=5
    )
    try:
        running_job_of(jobs_app, proc)
        with jobs_app.app_context():
            later = enqueue_job(tenant.id, "test_noop", {}).id
        os.kill(proc.pid, signal.SIGTERM)
        assert exit_status(proc, 20) == 0
    finally:
        stop_process(proc)
    with jobs_app.app_context():
        assert Job.get_by_id(job_id).status == "completed"
        assert Job.get_by_id(later).status == "queued"
        assert WorkerProcess.select().count() == 0


@pytest.mark.slow
def test_sigterm_gives_back_what_cannot_finish_and_a_second_signal_exits_at_once(
    jobs_app, tenant, database_url
):
    with jobs_app.app_context():
        job_id = enqueue_job(tenant.id, "test_task", {"sleep": 20}).id
    proc = start_worker(jobs_app, database_url, WORKER_SHUTDOWN_GRACE_SECONDS=1)
    try:
        running_job_of(jobs_app, proc)
        started = time.monotonic()
        os.kill(proc.pid, signal.SIGTERM)
        assert exit_status(proc, 10) == 0
        assert time.monotonic() - started < 5
    finally:
        stop_process(proc)
    with jobs_app.app_context():
        job = Job.get_by_id(job_id)
        assert job.status == "queued" and job.attempts == 0 and job.worker_id is None

    proc = start_worker(jobs_app, database_url, WORKER_SHUTDOWN_GRACE_SECONDS=30)
    try:
        running_job_of(jobs_app, proc)
        os.kill(proc.pid, signal.SIGTERM)
        time.sleep(0.3)
        started = time.monotonic()
        os.kill(proc.pid, signal.SIGTERM)
        assert exit_status(proc, 5) == 1
        assert time.monotonic() - started < 3
    finally:
        stop_process(proc)
    with jobs_app.app_context():
        job = Job.get_by_id(job_id)
        # left as it was: its lease runs out and the sweeper counts the attempt
        assert job.status == "running" and job.attempts == 1


@pytest.mark.slow
def test_serve_with_worker_and_ctrl_c_stops_both(jobs_app, tenant, database_url):
    headers = headers_for(tenant, scopes=["ai-jobs:read", "ai-jobs:write"])
    port = free_port()
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
            "--with-worker",
        ],
        cwd=ROOT,
        env=process_env(database_url, **worker_settings(jobs_app)),
        start_new_session=True,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        wait_healthy(base, proc, 30)
        response = requests.post(
            base + "/api/ai-jobs",
            json={"type": "test_task", "params": {"result": {"served": True}}},
            headers=headers,
            timeout=10,
        )
        assert response.status_code == 201, response.text
        job_id = response.json()["data"]["id"]

        def done():
            body = requests.get(f"{base}/api/ai-jobs/{job_id}", headers=headers, timeout=5).json()
            return body["data"]["status"] == "completed" and body["data"]

        job = wait_for(done, 30, 0.1)
        assert job, "the job completed by the worker not reached within 30 s"
        assert job["result"]["served"] is True
        with jobs_app.app_context():
            worker_pid = WorkerProcess.get().pid
        os.killpg(proc.pid, signal.SIGINT)  # Ctrl-C in the terminal
        assert proc.wait(40) == 0
        assert wait_for(lambda: not _alive(worker_pid), 10), (
            "the worker gone not reached within 10 s"
        )
        with jobs_app.app_context():
            assert WorkerProcess.select().count() == 0  # it stopped cleanly
    finally:
        stop_process(proc)


def _alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # a zombie (exited, not yet reaped by its parent) counts as gone
    try:
        with open(f"/proc/{pid}/stat") as handle:
            return handle.read().split(")")[-1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def test_the_worker_command_hands_the_gil_over_quickly(runner, jobs_app, monkeypatch):
    # the worker's own process only (see jobs.commands); the API keeps Python's default
    before = sys.getswitchinterval()
    seen = []
    real_run = Worker.run

    def run(worker):
        seen.append(sys.getswitchinterval())
        return real_run(worker)

    monkeypatch.setattr(Worker, "run", run)
    result = runner.invoke(cli, ["worker", "--once", "--poll-interval", "0.05"])
    assert result.exit_code == 0, result.output
    assert seen == [pytest.approx(commands.SWITCH_INTERVAL_SECONDS)]
    assert commands.SWITCH_INTERVAL_SECONDS < 0.005  # Python's default
    assert sys.getswitchinterval() == before  # given back when the command returns
