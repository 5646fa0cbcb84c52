"""One lock order (issue 19, DESIGN 9): no request takes the tenant row while it holds a
domain row. On PostgreSQL a product sync request used to hold the product row, then wait
for the tenant row ``FOR UPDATE`` behind an order pull that held ``FOR KEY SHARE`` on the
tenant (its insert's foreign key) and waited for the product: a deadlock."""

import threading

import psycopg2
import pytest

from commerce_api.db import is_postgres, write_transaction
from commerce_api.jobs.services import enqueue_job, tenant_first
from commerce_api.products.models import Product
from tests.support.orders_support import connect
from tests.support.pricing_support import make_product
from tests.support.waiting import wait_for


def test_capacity_checked_jobs_are_queued_with_the_tenant_locked_first(app, tenant):
    with (
        pytest.raises(RuntimeError, match="tenant row must be locked first"),
        write_transaction(),
    ):
        enqueue_job(tenant.id, "marketplace_sync", {}, internal=True, check_capacity=True)
    with tenant_first(tenant.id):
        job = enqueue_job(tenant.id, "marketplace_sync", {}, internal=True, check_capacity=True)
    assert job.status == "queued"


def _waiting_on_a_lock(cursor, pid_other_than):
    cursor.execute(
        "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
        "AND wait_event_type = 'Lock' AND pid <> %s",
        (pid_other_than,),
    )
    return cursor.fetchone()[0] > 0


def test_a_product_sync_and_an_order_pull_do_not_deadlock(
    app, client, headers, tenant, database_url
):
    if not is_postgres():
        pytest.skip("row locks: PostgreSQL only (SQLite serializes every writer)")
    make_product(client, headers, "MUG-1")
    connect(tenant, "amazon", "sandbox")
    product_id = Product.get(Product.sku == "MUG-1").id
    pull = psycopg2.connect(database_url)
    try:
        cursor = pull.cursor()
        # an order pull mid-insert: its foreign key holds FOR KEY SHARE on the tenant row
        cursor.execute("SELECT 1 FROM tenant WHERE id = %s FOR KEY SHARE", (tenant.id,))
        cursor.execute("SELECT pg_backend_pid()")
        pull_pid = cursor.fetchone()[0]
        responses = []
        request = threading.Thread(
            target=lambda: responses.append(
                client.post("/api/products/MUG-1/sync", json={}, headers=headers)
            )
        )
        request.start()
        watcher = psycopg2.connect(database_url)
        watcher.autocommit = True
        try:
            # the request either finishes or waits for a lock (the old order: the tenant row)
            assert wait_for(
                lambda: not request.is_alive() or _waiting_on_a_lock(watcher.cursor(), pull_pid),
                10,
            )
        finally:
            watcher.close()
        # the pull now wants the product row: with the request holding it and waiting for
        # the tenant, PostgreSQL would detect a deadlock here
        cursor.execute("SET lock_timeout = '5s'")
        cursor.execute("SELECT 1 FROM product WHERE id = %s FOR UPDATE", (product_id,))
        pull.commit()
        request.join(15)
    finally:
        pull.close()
    (response,) = responses
    assert response.status_code == 202, response.get_json()
