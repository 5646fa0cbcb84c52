"""The rules of loops that survive a lost database (``loophealth``), and the send loops
never giving up (issue 31: they stopped after 20 failed steps in a row)."""

import sqlite3

import peewee
import pytest

from commerce_api import loophealth
from commerce_api.db import db
from commerce_api.webhooks import dispatch
from tests.support import dbutil
from tests.support.waiting import wait_for
from tests.support.webhooks_support import Receiver, create_webhook, delivering, emit_events


def test_the_backoff_doubles_up_to_its_cap_and_starts_again_after_a_success():
    backoff = loophealth.Backoff(first=0.2, cap=1.0)
    delays = [backoff.next_delay() for _ in range(6)]
    assert all(0.15 <= d <= 0.2 for d in delays[:1])
    assert all(0.75 * 0.4 <= d <= 0.4 for d in delays[1:2])
    assert all(0.75 <= d <= 1.0 for d in delays[3:])  # capped
    backoff.reset()
    assert backoff.next_delay() <= 0.2


def test_a_loop_is_stalled_when_its_last_pass_is_too_old():
    now = 100_000
    loops = {"main": now - 500, "webhook_delivery": now - 5_000, "listing_push": 0}
    assert loophealth.stalled(loops, now, stall_ms=2_000) == {
        "listing_push": 100.0,
        "webhook_delivery": 5.0,
    }


def test_passes_and_failures_are_recorded_per_loop():
    loophealth.forget()
    loophealth.failed("main")  # no pass yet: reported as never passed
    assert loophealth.snapshot() == {"main": 0}
    loophealth.passed("main")
    assert loophealth.snapshot()["main"] > 0
    loophealth.forget("main")
    assert loophealth.snapshot() == {}


def wrapped(message):
    """A driver error as peewee raises it (the driver's error is its context)."""
    try:
        try:
            raise sqlite3.OperationalError(message)
        except sqlite3.OperationalError as driver:
            raise peewee.OperationalError(driver) from driver
    except peewee.OperationalError as error:
        return error


@pytest.mark.skipif(dbutil.is_postgres_url(dbutil.BASE_URL), reason="SQLite's rule")
def test_sqlite_keeps_its_connection_on_lock_contention_only(app):
    with app.app_context():
        db.connect(reuse_if_open=True)
        loophealth.drop_connection(wrapped("database is locked"))
        assert not db.is_closed()
        loophealth.drop_connection(RuntimeError("a bug, not the database"))
        assert not db.is_closed()
        loophealth.drop_connection(wrapped("disk I/O error"))
        assert db.is_closed()


@pytest.fixture
def receiver():
    with Receiver() as server:
        yield server


def test_the_delivery_loop_goes_on_after_many_failed_steps(
    app, client, headers, receiver, monkeypatch
):
    """25 failed steps in a row (the old limit was 20): the loop is still there after."""
    monkeypatch.setitem(app.config, "WEBHOOK_ALLOW_PRIVATE_TARGETS", True)
    hooks_app = app
    create_webhook(client, headers, receiver.url)
    real_has_due, failures = dispatch.has_due, []

    def failing_has_due(now):
        if len(failures) < 25:
            failures.append(now)
            raise peewee.OperationalError("server closed the connection unexpectedly")
        return real_has_due(now)

    monkeypatch.setattr(dispatch, "has_due", failing_has_due)
    monkeypatch.setattr(loophealth.Backoff, "next_delay", lambda self: 0.001)
    with hooks_app.app_context():
        emit_events(headers["X-Tenant-ID"], [("order.created", "ord_1", {"n": 1})])
    with delivering(hooks_app):
        assert wait_for(lambda: receiver.requests, timeout=20)
    assert len(failures) == 25
    assert loophealth.snapshot().get("webhook_delivery", 0) > 0


def test_readiness_and_metrics_name_a_stalled_loop(app, base_config, monkeypatch):
    from commerce_api import create_app
    from commerce_api.jobs.models import WorkerProcess
    from commerce_api.timeutil import now_ms
    from tests.support.health_support import scrape

    now = now_ms()
    loops = {"main": now - 1_000, "webhook_delivery": now - 90_000, "listing_push": now - 2_000}
    WorkerProcess.create(id="h:41:aa", hostname="h", pid=41, concurrency=1, loops=loops)
    # a stopping worker is not reported
    WorkerProcess.create(
        id="h:42:bb", hostname="h", pid=42, concurrency=1, stopping=True, loops={"main": 1}
    )
    ready = app.test_client().get("/api/health/ready")
    assert ready.status_code == 200  # a stuck worker does not take the API host out
    workers = ready.get_json()["checks"]["workers"]
    assert workers["status"] == "stalled"
    ((stalled),) = workers["stalled"]
    assert (stalled["worker"], stalled["loop"]) == ("h:41:aa", "webhook_delivery")
    assert 89 <= stalled["seconds_since_pass"] < 120

    metrics_app = create_app({**base_config, "METRICS_ENABLED": True})
    try:
        text = metrics_app.test_client().get("/metrics").get_data(as_text=True)
    finally:
        db.initialize(app.extensions["commerce"]["database"])
    ages = scrape(text)["commerce_worker_loop_last_pass_age_seconds"]
    by_loop = {dict(labels)["loop"]: value for (_, labels), value in ages.items()}
    assert set(by_loop) == {"main", "webhook_delivery", "listing_push"}
    assert by_loop["webhook_delivery"] >= 89 and by_loop["main"] < 30
