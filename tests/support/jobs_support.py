"""Helpers of the job tests: handlers registered by a test, an in-process worker, records."""

import threading
from contextlib import contextmanager

import pytest

from commerce_api.events.models import Event
from commerce_api.jobs import registry
from commerce_api.jobs.enqueue import reset_estimates
from commerce_api.jobs.models import Job
from commerce_api.jobs.worker import Worker


@pytest.fixture
def jobs_app(app, monkeypatch, tmp_path):
    """The app with a record file for test_task and retries without backoff."""
    monkeypatch.setitem(app.config, "TEST_JOBS_RECORD_FILE", str(tmp_path / "record.log"))
    monkeypatch.setitem(app.config, "WORKER_RETRY_BACKOFF_SECONDS", 0.0)
    reset_estimates()
    yield app
    while _registered:
        registry.unregister(_registered.pop())


_registered = []


def register_handler(name, handler, internal=False):
    """Register ``handler`` (anything with ``run``, optional ``TIMEOUT_SECONDS``,
    ``PARAMS_SCHEMA`` and ``RESULT_SCHEMA``) as job type ``name`` for one test (``jobs_app``
    removes it)."""
    registry.register(
        registry.JobType(
            name,
            handler.run,
            params=getattr(handler, "PARAMS_SCHEMA", None),
            timeout=getattr(handler, "TIMEOUT_SECONDS", None),
            internal=internal,
            result=getattr(handler, "RESULT_SCHEMA", None),
        )
    )
    _registered.append(name)


def run_worker(app, **options):
    """Run an in-process worker until nothing is due (``--once``)."""
    options.setdefault("once", True)
    options.setdefault("install_signals", False)
    worker = Worker(app, **options)
    worker.run()
    return worker


@contextmanager
def running_worker(app, **options):
    """An in-process worker on a thread of its own for the block; stopped (and joined)
    after it."""
    options.setdefault("install_signals", False)
    worker = Worker(app, **options)
    thread = threading.Thread(target=worker.run)
    thread.start()
    try:
        yield worker
    finally:
        worker.stop()
        thread.join(15)


def read_record(app):
    """``[(event, job_id, attempt, worker_id, time)]`` written by test_task."""
    path = app.config["TEST_JOBS_RECORD_FILE"]
    try:
        with open(path) as handle:
            lines = handle.read().splitlines()
    except FileNotFoundError:
        return []
    rows = []
    for line in lines:
        event, job_id, attempt, worker_id, moment = line.split(" ")
        rows.append((event, job_id, int(attempt), worker_id, float(moment)))
    return rows


def job_row(job_id):
    return Job.get_by_id(job_id)


def job_events(job_id):
    return list(
        Event.select().where(Event.resource_id == job_id).order_by(Event.created_at, Event.id)
    )


def dispatch(client, headers, job_type="test_task", params=None, priority=None, status=201):
    body = {"type": job_type, "params": params or {}}
    if priority:
        body["priority"] = priority
    response = client.post("/api/ai-jobs", json=body, headers=headers)
    assert response.status_code == status, response.get_json()
    return response.get_json()["data"] if status == 201 else response.get_json()


def job_count():
    return Job.select().count()
