"""A running worker process survives a lost database (issue 31, High).

PostgreSQL: the worker's connections are terminated (``pg_terminate_backend``, what a
restart or a failover does), twice; then it is cut off from the database for a while (a
proxy on 127.0.0.1 refuses its connections, the test still reaches the database). After
each, a job, a webhook and a listing push made afterwards are all done within 30 s without
a restart, and while it is cut off readiness names its stalled loops. SQLite: the same
after the database file was held locked past the busy time-out.
"""

import contextlib
import os
import sqlite3
import time

import psycopg2
import pytest

from commerce_api.db import sqlite_file
from commerce_api.products.models import Listing
from tests.support import dbutil
from tests.support.dbproxy import DatabaseProxy
from tests.support.listing_marketplace import ListingMarketplace
from tests.support.orders_support import connect, make_own_warehouse, make_products, stock_up
from tests.support.products_support import price_listing
from tests.support.servers import start_command, stop_process
from tests.support.waiting import wait_for
from tests.support.webhooks_support import Receiver, create_webhook

pytestmark = pytest.mark.slow

APP_NAME = "commerce-failover-worker"
DONE_WITHIN = 30.0  # seconds, from the issue
WORKER = {
    "LOG_LEVEL": "WARNING",
    "EXTRA_TASK_MODULES": "tests.support.job_types",
    "WORKER_POLL_INTERVAL": 0.1,
    "WORKER_LEASE_SECONDS": 6,  # a heartbeat every 2 s
    "WORKER_STALL_SECONDS": 3,
    "MARKETPLACE_PUSH_POLL_INTERVAL": 0.1,
    "WEBHOOK_POLL_INTERVAL": 0.1,
    "WEBHOOK_ALLOW_PRIVATE_TARGETS": 1,
    "WEBHOOK_RETRY_SCHEDULE": "1,1,1,1,1,1,1,1",
    "ORDER_PULL_INTERVAL_SECONDS": 3600,
}
LOOPS = {"main", "runners", "heartbeat", "webhook_delivery", "listing_push"}


@pytest.fixture
def shop(app, client, headers, tenant, monkeypatch):
    """A webhook endpoint on a receiver, a listed product on an http marketplace."""
    monkeypatch.setitem(app.config, "WEBHOOK_ALLOW_PRIVATE_TARGETS", True)
    monkeypatch.setitem(app.config, "WORKER_STALL_SECONDS", WORKER["WORKER_STALL_SECONDS"])
    with Receiver() as receiver, ListingMarketplace() as marketplace:
        create_webhook(client, headers, receiver.url, events=["ai_job.completed"])
        make_products(client, headers, "MUG-1")
        warehouse = make_own_warehouse(tenant)
        stock_up(tenant, warehouse, {"MUG-1": 10})
        connect(tenant, "mirakl", "http", base_url=marketplace.url)
        yield {"receiver": receiver, "marketplace": marketplace, "warehouse": warehouse}


def dispatch(client, headers):
    response = client.post(
        "/api/ai-jobs", json={"type": "test_task", "params": {}}, headers=headers
    )
    assert response.status_code == 201, response.get_json()
    return response.get_json()["data"]["id"]


def set_stock(client, headers, warehouse, quantity):
    response = client.put(
        "/api/inventory/MUG-1",
        json={"warehouse_id": warehouse, "quantity": quantity, "reason": "cycle_count"},
        headers=headers,
    )
    assert response.status_code == 200, response.get_json()


def job_status(client, headers, job_id):
    return client.get(f"/api/ai-jobs/{job_id}", headers=headers).get_json()["data"]["status"]


def delivered(receiver, job_id):
    return any(body["data"].get("id") == job_id for body in receiver.bodies())


def work_after(client, headers, shop, quantity):
    """A job, a webhook (its ``ai_job.completed``) and a listing push made now; returns a
    check that all three are done."""
    job_id = dispatch(client, headers)
    set_stock(client, headers, shop["warehouse"], quantity)

    def done():
        return (
            job_status(client, headers, job_id) == "completed",
            delivered(shop["receiver"], job_id),
            shop["marketplace"].last_quantity("MUG-1") == quantity,
        ) == (True, True, True)

    done.parts = lambda: (
        job_status(client, headers, job_id),
        delivered(shop["receiver"], job_id),
        shop["marketplace"].last_quantity("MUG-1"),
    )
    return done


def assert_done_within(done, started, what):
    assert wait_for(done, timeout=DONE_WITHIN + 5, interval=0.1), (what, done.parts())
    assert time.monotonic() - started <= DONE_WITHIN, (what, time.monotonic() - started)


def warm_up(client, headers, shop):
    """The listing made on the marketplace (a sync), then a job, a webhook and a push."""
    price_listing(client, headers, "MUG-1", "mirakl")  # nothing goes out without a price
    response = client.post("/api/products/MUG-1/sync", headers=headers)
    assert response.status_code == 202, response.get_json()
    assert wait_for(lambda: shop["marketplace"].pushes_of("MUG-1"), timeout=30)
    done = work_after(client, headers, shop, 7)
    assert wait_for(done, timeout=60), done.parts()


def workers_check(client):
    return client.get("/api/health/ready").get_json()["checks"]["workers"]


def stalled_loops(client):
    check = workers_check(client)
    return {item["loop"] for item in check["stalled"]} if check["status"] == "stalled" else set()


@contextlib.contextmanager
def running_worker(database_url, client, headers):
    worker = start_command(["worker"], database_url, **WORKER)
    try:
        # every loop has reported a pass: the worker is up
        assert wait_for(
            lambda: (
                workers_check(client)["status"] == "ok"
                and not stalled_loops(client)
                and _reported_loops(client) >= LOOPS
            ),
            timeout=30,
        ), workers_check(client)
        yield worker
        assert worker.poll() is None, "the worker exited"
    finally:
        stop_process(worker)


def _reported_loops(client):
    from commerce_api.jobs.models import WorkerProcess

    loops = set()
    for row in WorkerProcess.select():
        loops |= set(row.loops or {})
    return loops


def terminate_worker_backends(database_url):
    """``pg_terminate_backend`` on every backend of the worker's application name."""
    parsed = psycopg2.extensions.parse_dsn(database_url.split("?")[0])
    conn = psycopg2.connect(**parsed)
    conn.autocommit = True
    try:
        with conn.cursor() as cursor:
            cursor.execute(
                "SELECT COUNT(pg_terminate_backend(pid)) FROM pg_stat_activity"
                " WHERE datname = current_database() AND application_name = %s",
                (APP_NAME,),
            )
            return cursor.fetchone()[0]
    finally:
        conn.close()


@pytest.mark.skipif(not dbutil.is_postgres_url(dbutil.BASE_URL), reason="PostgreSQL only")
def test_worker_survives_terminated_connections_and_an_outage(client, headers, shop, database_url):
    with DatabaseProxy(database_url) as proxy:
        worker_url = f"{proxy.url}?application_name={APP_NAME}"
        with running_worker(worker_url, client, headers):
            warm_up(client, headers, shop)

            # a failover, twice: every connection of the worker terminated
            for quantity in (6, 5):
                assert terminate_worker_backends(database_url) > 0
                started = time.monotonic()
                done = work_after(client, headers, shop, quantity)
                assert_done_within(done, started, f"after terminating, quantity {quantity}")

            # cut off: connections dropped and refused; readiness names the stalled loops
            proxy.block()
            proxy.cut()
            terminate_worker_backends(database_url)
            stalled = wait_for(lambda: stalled_loops(client) >= LOOPS, timeout=30)
            assert stalled, workers_check(client)
            during = work_after(client, headers, shop, 4)  # made while it is cut off
            time.sleep(1.0)
            assert not during()
            proxy.unblock()
            started = time.monotonic()
            assert_done_within(during, started, "after the outage")
            assert wait_for(lambda: workers_check(client)["status"] == "ok", timeout=15)
            started = time.monotonic()
            assert_done_within(work_after(client, headers, shop, 3), started, "afterwards")
            # the fake records a push when it arrives; the worker writes the outcome after
            # the answer comes back, so the status follows a moment later
            assert wait_for(lambda: _listing_status() == "in_sync", timeout=10), _listing_status()


def _listing_status():
    return Listing.get(Listing.marketplace == "mirakl").sync_status


@pytest.mark.skipif(dbutil.is_postgres_url(dbutil.BASE_URL), reason="SQLite only")
def test_worker_survives_a_locked_sqlite_file(client, headers, shop, database_url, app):
    with running_worker(database_url, client, headers):
        warm_up(client, headers, shop)
        path = sqlite_file(app.extensions["commerce"]["database"])
        # another process holds the write lock past the busy time-out (15 s): every write
        # of the worker fails with "database is locked" meanwhile
        holder = sqlite3.connect(path, timeout=30, isolation_level=None)
        try:
            holder.execute("BEGIN EXCLUSIVE")
            assert wait_for(lambda: "heartbeat" in stalled_loops(client), timeout=30), (
                workers_check(client)
            )
            time.sleep(17)  # past the worker's busy time-out: its passes fail, not wait
        finally:
            holder.execute("ROLLBACK")
            holder.close()
        started = time.monotonic()
        assert_done_within(work_after(client, headers, shop, 6), started, "after the lock")
        assert wait_for(lambda: workers_check(client)["status"] == "ok", timeout=15)


def quiet():
    """No listing push and no webhook delivery in flight or waiting."""
    from commerce_api.webhooks.models import WebhookDelivery

    pushing = Listing.select().where(
        (Listing.sync_status != "in_sync") | Listing.lease_until.is_null(False)
    )
    sending = WebhookDelivery.select().where(
        (WebhookDelivery.status == "pending") | WebhookDelivery.lease_until.is_null(False)
    )
    return not pushing.exists() and not sending.exists()


def _ghost_state(holder):
    """What the worker writes all the time (its heartbeat, its loops, jobs, pushes), read
    through ``holder``, a connection that keeps the deleted file open."""
    return holder.execute(
        "SELECT (SELECT MAX(last_seen_at) FROM worker_process),"
        " (SELECT COUNT(*) FROM job), (SELECT COUNT(*) FROM sync_attempt),"
        " (SELECT MAX(updated_at) FROM listing)"
    ).fetchone()


@pytest.mark.skipif(dbutil.is_postgres_url(dbutil.BASE_URL), reason="SQLite only")
def test_worker_follows_a_vanished_then_restored_sqlite_file(
    client, headers, shop, database_url, app, tmp_path
):
    """The database file deleted under a running worker (and this API process): nothing is
    written into the deleted file, nothing creates an empty one, readiness says the file is
    missing; a backup moved into place is used without a restart (job, webhook, push)."""
    with running_worker(database_url, client, headers):
        warm_up(client, headers, shop)
        path = sqlite_file(app.extensions["commerce"]["database"])
        # the backup is taken with nothing in flight: a listing or a delivery leased in a
        # backup is sent again only when its lease runs out (up to 40 s for a push)
        assert wait_for(lambda: quiet(), timeout=30)
        backup = str(tmp_path / "backup.db")
        source = sqlite3.connect(path)
        copy = sqlite3.connect(backup)
        source.backup(copy)
        copy.close()
        source.close()
        # a connection that keeps the file about to be deleted, to read what reaches it
        holder = sqlite3.connect(path, isolation_level=None)
        holder.execute("SELECT 1 FROM worker_process").fetchall()
        try:
            for suffix in ("", "-wal", "-shm"):  # the database, as an operator removes it
                with contextlib.suppress(FileNotFoundError):
                    os.remove(path + suffix)
            time.sleep(2.0)  # a transaction begun before the deletion may still commit
            before = _ghost_state(holder)
            ready = client.get("/api/health/ready")
            assert ready.status_code == 503, ready.get_json()
            database = ready.get_json()["checks"]["database"]
            assert database["status"] == "unavailable" and "missing" in database["error"]
            time.sleep(6.0)  # three heartbeats, pushes and webhook passes of the worker
            assert _ghost_state(holder) == before  # nothing written into the deleted file
            assert not os.path.exists(path)  # and no empty database made in its place
            assert client.get("/api/ai-jobs", headers=headers).status_code == 503
        finally:
            holder.close()
        os.rename(backup, path)  # the backup moved into place
        started = time.monotonic()
        assert_done_within(work_after(client, headers, shop, 2), started, "after the restore")
        assert wait_for(lambda: workers_check(client)["status"] == "ok", timeout=15)
