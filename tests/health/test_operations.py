"""Operating it: readiness, metrics, JSON logs, and what a database failure means."""

import json
import logging
import sqlite3

import peewee
import pytest

from commerce_api import create_app, db_errors
from commerce_api.db import db, make_database
from commerce_api.jobs.models import WorkerProcess
from commerce_api.serve import access_log_target, gunicorn_options
from commerce_api.timeutil import now_ms
from tests.support.health_support import (
    FLEET_SERIES,
    REQUEST_SERIES,
    check_fleet,
    scrape,
    seed_fleet,
)
from tests.support.servers import free_port


@pytest.fixture
def restore_db(app):
    """Apps built inside a test rebind the database proxy; give the test's back after."""
    yield
    db.initialize(app.extensions["commerce"]["database"])


@pytest.fixture
def metrics_app(app, base_config, restore_db):
    return create_app({**base_config, "METRICS_ENABLED": True})


# Readiness -------------------------------------------------------------------------


def test_ready_is_200_on_a_healthy_database(client):
    response = client.get("/api/health/ready")
    assert response.status_code == 200
    body = response.get_json()
    assert body["status"] == "ok"
    assert body["checks"]["database"]["status"] == "ok"
    assert body["checks"]["migrations"] == {"status": "ok"}
    assert body["worker_heartbeat_age_seconds"] is None  # no worker has run


def test_ready_reports_the_newest_worker_heartbeat(client):
    now = now_ms()
    for name, seen in (("w-old", now - 60_000), ("w-new", now - 3_000)):
        WorkerProcess.create(id=name, hostname="h", pid=1, concurrency=1, last_seen_at=seen)
    age = client.get("/api/health/ready").get_json()["worker_heartbeat_age_seconds"]
    assert 2.5 <= age < 30


def test_ready_is_503_naming_the_database_when_it_is_unreachable(app, base_config, restore_db):
    closed = f"postgresql://postgres@127.0.0.1:{free_port()}/nothing"
    unreachable = create_app({**base_config, "DATABASE_URL": closed})
    response = unreachable.test_client().get("/api/health/ready")
    assert response.status_code == 503
    body = response.get_json()
    assert body["status"] == "unavailable"
    assert body["checks"]["database"]["status"] == "unavailable"
    assert body["checks"]["database"]["error"]
    assert body["checks"]["migrations"]["status"] == "unknown"
    # liveness does not depend on the database
    assert unreachable.test_client().get("/api/health").status_code == 200


def test_ready_is_503_naming_the_migrations_before_init_db(app, base_config, restore_db, tmp_path):
    empty = create_app({**base_config, "DATABASE_URL": f"sqlite:///{tmp_path}/empty.db"})
    response = empty.test_client().get("/api/health/ready")
    assert response.status_code == 503
    body = response.get_json()
    assert body["checks"]["database"]["status"] == "ok"
    assert body["checks"]["migrations"]["status"] == "pending"
    assert "0001_core" in body["checks"]["migrations"]["pending"]


# Metrics ---------------------------------------------------------------------------


def test_metrics_are_off_unless_enabled(client):
    assert client.get("/metrics").status_code == 404


def test_metrics_count_requests_by_route_template(metrics_app, tenant, headers):
    client = metrics_app.test_client()
    before = scrape(client.get("/metrics").get_data(as_text=True))
    client.get("/api/products/NOPE-1", headers=headers)
    client.get("/api/products/NOPE-2", headers=headers)
    client.get("/api/no-such-path")
    response = client.get("/metrics")
    assert response.status_code == 200
    assert response.headers["Content-Type"].startswith("text/plain")
    after = scrape(response.get_data(as_text=True))
    for name in REQUEST_SERIES + FLEET_SERIES:
        assert name in after, name

    def grew(family, sample, labels):
        key = (sample, tuple(sorted(labels.items())))
        return after[family].get(key, 0) - before.get(family, {}).get(key, 0)

    route = {"route": "/api/products/{sku}", "method": "GET"}
    assert (
        grew("commerce_http_requests", "commerce_http_requests_total", {**route, "status": "404"})
        == 2
    )
    assert (
        grew(
            "commerce_http_request_duration_seconds",
            "commerce_http_request_duration_seconds_count",
            route,
        )
        == 2
    )
    unmatched = {"route": "<unmatched>", "method": "GET", "status": "404"}
    assert grew("commerce_http_requests", "commerce_http_requests_total", unmatched) == 1


def test_metrics_token_is_required_when_set(app, base_config, restore_db):
    guarded = create_app({**base_config, "METRICS_ENABLED": True, "METRICS_TOKEN": "s3cret"})
    client = guarded.test_client()
    refused = client.get("/metrics")
    assert refused.status_code == 401
    assert refused.get_json()["error"]["code"] == "UNAUTHENTICATED"
    assert client.get("/metrics", headers={"Authorization": "Bearer wrong"}).status_code == 401
    assert client.get("/metrics", headers={"Authorization": "Bearer s3cret"}).status_code == 200


def test_fleet_gauges_match_the_database(metrics_app, tenant):
    expected = seed_fleet(tenant.id)
    text = metrics_app.test_client().get("/metrics").get_data(as_text=True)
    check_fleet(scrape(text), expected)


def test_a_scrape_while_the_database_is_down_says_so(app, base_config, restore_db):
    closed = f"postgresql://postgres@127.0.0.1:{free_port()}/nothing"
    down = create_app({**base_config, "DATABASE_URL": closed, "METRICS_ENABLED": True})
    response = down.test_client().get("/metrics")
    assert response.status_code == 200
    families = scrape(response.get_data(as_text=True))
    assert families["commerce_database_up"][("commerce_database_up", ())] == 0


# Logs ------------------------------------------------------------------------------


@pytest.fixture
def json_logs(app, base_config, restore_db):
    root = logging.getLogger()
    saved = (root.level, list(root.handlers))
    yield create_app({**base_config, "LOG_FORMAT": "json"})
    root.handlers[:] = saved[1]
    root.setLevel(saved[0])


def test_json_log_lines_parse_and_carry_the_request_id(capsys, json_logs, tenant, headers):
    client = json_logs.test_client()
    capsys.readouterr()
    ok = client.get("/api/products", headers=headers)
    missing = client.get("/api/products/NOPE", headers={**headers, "X-Request-ID": "mine-1"})
    assert missing.headers["X-Request-ID"] == "mine-1"
    lines = [line for line in capsys.readouterr().err.splitlines() if line.strip()]
    entries = [json.loads(line) for line in lines]  # every line is one JSON object
    access = [e for e in entries if e["logger"] == "commerce_api.access"]
    assert [e["request_id"] for e in access] == [ok.headers["X-Request-ID"], "mine-1"]
    first, second = access
    assert first["tenant_id"] == tenant.id
    assert (first["method"], first["route"], first["status"]) == ("GET", "/api/products", 200)
    assert (second["route"], second["status"]) == ("/api/products/{sku}", 404)
    assert first["duration_ms"] >= 0


def test_serve_writes_an_access_log_by_default(monkeypatch):
    monkeypatch.delenv("COMMERCE_ACCESS_LOG", raising=False)
    config = {"LOG_FORMAT": "text", "METRICS_ENABLED": False}
    assert access_log_target(config) == "-"
    assert gunicorn_options("127.0.0.1:0", 1, config=config)["accesslog"] == "-"
    # JSON: the app writes the access lines itself (with route and tenant), not gunicorn
    assert access_log_target({**config, "LOG_FORMAT": "json"}) is None
    monkeypatch.setenv("COMMERCE_ACCESS_LOG", "off")
    assert access_log_target(config) is None


# What a database error means ----------------------------------------------------------


def wrapped(driver_error):
    """The error as peewee raises it: the DB-API exception is its first argument."""
    return peewee.OperationalError(driver_error, *driver_error.args)


@pytest.mark.parametrize(
    "message",
    ["database is locked", "database table is locked: job"],
)
def test_sqlite_lock_contention_is_busy(message):
    assert db_errors.classify(wrapped(sqlite3.OperationalError(message))) == db_errors.BUSY


@pytest.mark.parametrize(
    "message",
    [
        "no such table: blocked_items",
        "row value misused (unblocked)",
        "near 'locked': syntax error",
    ],
)
def test_a_message_that_merely_contains_locked_is_not_busy(message):
    assert db_errors.classify(wrapped(sqlite3.OperationalError(message))) is None


def test_a_refused_postgres_connection_is_an_outage():
    database = make_database(f"postgresql://postgres@127.0.0.1:{free_port()}/x")
    with pytest.raises(peewee.OperationalError) as caught:
        database.connect()
    assert db_errors.classify(caught.value) == db_errors.UNAVAILABLE


def test_an_operational_error_that_is_not_a_lock_answers_500(client, headers, monkeypatch):
    from commerce_api.products import routes

    def blocked(*args, **kwargs):
        raise peewee.OperationalError(sqlite3.OperationalError("statement blocked by policy"))

    monkeypatch.setattr(routes.services, "list_products", blocked)
    response = client.get("/api/products", headers=headers)
    assert response.status_code == 500
    assert response.get_json()["error"]["code"] == "INTERNAL_ERROR"
