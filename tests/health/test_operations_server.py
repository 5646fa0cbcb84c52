"""Operating it with real processes: metrics of a two-process server, the CLI on a folder
without a database, and a backup taken while a writer runs."""

import os
import sqlite3
import threading
import time

import pytest
import requests

from commerce_api.db import sqlite_path
from tests.support.factories import product_body
from tests.support.health_support import (
    FLEET_SERIES,
    REQUEST_SERIES,
    check_fleet,
    scrape,
    seed_fleet,
)
from tests.support.servers import (
    free_port,
    gunicorn_server,
    process_env,
    run_cli,
    start_command,
    stop_process,
    wait_healthy,
)


@pytest.mark.slow
def test_metrics_of_a_two_process_server_add_up_and_match_the_database(
    app, database_url, tenant, tmp_path
):
    expected = seed_fleet(tenant.id)
    port = free_port()
    proc = start_command(
        ["serve", "--bind", f"127.0.0.1:{port}", "--workers", "2", "--threads", "1"],
        database_url,
        METRICS_ENABLED=1,
        ACCESS_LOG="off",
    )
    base = f"http://127.0.0.1:{port}"
    try:
        wait_healthy(base, proc)
        before = scrape(requests.get(base + "/metrics", timeout=10).text)
        for _ in range(40):  # a new connection each: both processes answer some
            assert requests.get(base + "/api/health", timeout=10).status_code == 200
        # whichever process answers, the scrape adds up both: every scrape agrees
        scrapes = [scrape(requests.get(base + "/metrics", timeout=10).text) for _ in range(4)]
    finally:
        stop_process(proc)
    key = (
        "commerce_http_requests_total",
        (("method", "GET"), ("route", "/api/health"), ("status", "200")),
    )
    started = before["commerce_http_requests"][key]
    for families in scrapes:
        for name in REQUEST_SERIES + FLEET_SERIES:
            assert name in families, name
        assert families["commerce_http_requests"][key] - started == 40
        check_fleet(families, expected)


# The CLI never creates an empty database ------------------------------------------------
# (engine_free: these tests set their own database URL, or none)


@pytest.mark.engine_free
@pytest.mark.parametrize(
    "args",
    [
        ["keys", "revoke", "key_01ABC"],
        ["tenants", "create", "--name", "N"],
        ["worker", "--once"],
        ["backup", "--to", "copy.db"],
    ],
)
def test_a_command_without_a_database_exits_2_and_creates_nothing(tmp_path, args):
    env = dict(os.environ)
    env.pop("COMMERCE_DATABASE_URL", None)  # the default: ./instance/commerce.db
    done = run_cli(args, env, cwd=tmp_path)
    assert done.returncode == 2, (done.stdout, done.stderr)
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert str(tmp_path / "instance" / "commerce.db") in lines[0]
    assert "init-db" in lines[0]
    assert list(tmp_path.iterdir()) == []  # no instance/, no db file, no rate-limit file


@pytest.mark.engine_free
def test_a_file_without_the_schema_is_refused_too(tmp_path):
    path = tmp_path / "other.db"
    sqlite3.connect(path).close()
    env = {**os.environ, "COMMERCE_DATABASE_URL": f"sqlite:///{path}"}
    done = run_cli(["keys", "list", "--tenant", "t"], env)
    assert done.returncode == 2
    assert str(path) in done.stderr and "no schema" in done.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["other.db"]


@pytest.mark.engine_free
def test_version_prints_the_services_version():
    from commerce_api.health.routes import VERSION

    done = run_cli(["--version"], dict(os.environ))
    assert done.returncode == 0
    assert done.stdout.strip() == f"commerce-api {VERSION}"


@pytest.mark.engine_free
def test_backup_on_postgres_points_to_pg_dump():
    env = {**os.environ, "COMMERCE_DATABASE_URL": "postgresql://u@127.0.0.1:1/x"}
    done = run_cli(["backup", "--to", "/tmp/never.db"], env)
    assert done.returncode != 0
    assert "pg_dump" in done.stderr
    assert not os.path.exists("/tmp/never.db")


# Backup and restore while the service runs ---------------------------------------------


def ledger_mismatches(path):
    """Stock rows whose on-hand quantity is not the sum of their ledger."""
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        rows = conn.execute(
            "SELECT s.id, s.on_hand, (SELECT COALESCE(SUM(a.delta), 0) FROM adjustment a"
            " WHERE a.stock_id = s.id AND a.quantity_type = 'on_hand') FROM stock s"
        ).fetchall()
        adjustments = conn.execute("SELECT COUNT(*) FROM adjustment").fetchone()[0]
    finally:
        conn.close()
    return [row for row in rows if row[1] != row[2]], len(rows), adjustments


@pytest.mark.slow
def test_a_backup_taken_while_a_writer_runs_restores_consistent(
    app, client, headers, database_url, tmp_path
):
    source = sqlite_path(database_url)
    if source is None:
        pytest.skip("backup copies SQLite databases (PostgreSQL: pg_dump)")
    warehouse = client.post(
        "/api/inventory/warehouses", json={"name": "Main"}, headers=headers
    ).get_json()["data"]["id"]
    skus = [f"BK-{i}" for i in range(5)]
    for sku in skus:
        assert (
            client.post("/api/products", json=product_body(sku=sku), headers=headers).status_code
            == 201
        )
    env = process_env(database_url)
    copy = tmp_path / "copy.db"
    writes = []
    stop = threading.Event()
    with gunicorn_server(database_url, workers=2) as base:

        def writer():
            i = 0
            while not stop.is_set():
                i += 1
                response = requests.put(
                    f"{base}/api/inventory/{skus[i % len(skus)]}",
                    json={"warehouse_id": warehouse, "quantity": i, "reason": "cycle_count"},
                    headers=headers,
                    timeout=20,
                )
                writes.append(response.status_code)

        thread = threading.Thread(target=writer)
        thread.start()
        try:
            time.sleep(0.5)
            taken = run_cli(["backup", "--to", str(copy)], env)
            time.sleep(0.3)
            # the running service holds the database: restore refuses to replace it
            refused = run_cli(["restore", "--from", str(copy)], env)
        finally:
            stop.set()
            thread.join(timeout=30)
    assert taken.returncode == 0, taken.stderr
    assert refused.returncode != 0
    assert "running process" in refused.stderr
    assert writes and set(writes) == {200}, set(writes)
    # the live database went on and is intact
    assert ledger_mismatches(source)[0] == []
    # restored elsewhere: a complete, consistent database the service can open
    target = tmp_path / "restored" / "commerce.db"
    restored_env = {**env, "COMMERCE_DATABASE_URL": f"sqlite:///{target}"}
    done = run_cli(["restore", "--from", str(copy)], restored_env)
    assert done.returncode == 0, done.stderr
    mismatches, stock_rows, adjustments = ledger_mismatches(target)
    assert mismatches == []
    assert stock_rows == len(skus) and adjustments >= 1
    listed = run_cli(["keys", "list", "--tenant", headers["X-Tenant-ID"], "--json"], restored_env)
    assert listed.returncode == 0, listed.stderr


# The drivers are extras -------------------------------------------------------------------

WITHOUT_DRIVERS = """
import sys
sys.modules["psycopg2"] = None  # as if the postgres and redis extras were not installed
sys.modules["redis"] = None
from commerce_api.cli import main
sys.argv = ["commerce-api", *sys.argv[1:]]
main()
"""


@pytest.mark.engine_free
@pytest.mark.parametrize(
    ("setting", "url", "extra"),
    [
        ("DATABASE_URL", "postgresql://u@127.0.0.1:1/x", "postgres"),
        ("REDIS_URL", "redis://127.0.0.1:1/0", "redis"),
    ],
)
def test_a_url_without_its_driver_says_which_extra_to_install(tmp_path, setting, url, extra):
    env = {**process_env(f"sqlite:///{tmp_path}/db.sqlite"), f"COMMERCE_{setting}": url}
    done = run_cli(["keys", "list", "--tenant", "t"], env, program=("-c", WITHOUT_DRIVERS))
    assert done.returncode == 2, done.stderr
    assert f"commerce-api[{extra}]" in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1


@pytest.mark.engine_free
def test_sqlite_needs_neither_driver(tmp_path):
    env = process_env(f"sqlite:///{tmp_path}/db.sqlite")
    for args in (["init-db"], ["tenants", "create", "--name", "N", "--json"]):
        done = run_cli(args, env, program=("-c", WITHOUT_DRIVERS))
        assert done.returncode == 0, done.stderr
