"""The marketplace gateway: the per-tenant cap waits for background work and refuses API
requests, one keep-alive pool per connection, and a job never fails on the service's own cap.
"""

import threading
import time

import pytest

from commerce_api.jobs.models import Job
from commerce_api.marketplaces import gateway
from commerce_api.marketplaces.base import MarketplaceUnavailable
from commerce_api.marketplaces.limits import (
    TenantBusy,
    in_flight,
    start_serving,
    stop_serving,
    tenant_slot,
)
from commerce_api.marketplaces.models import MarketplaceConnection
from commerce_api.products.models import Listing
from tests.support.listing_marketplace import ListingMarketplace
from tests.support.orders_support import connect, make_own_warehouse, make_products, stock_up
from tests.support.products_support import price_listing
from tests.support.servers import run_worker_once


def test_a_waiting_caller_gets_the_next_free_slot_in_turn():
    order = []

    def waiter(name):
        with tenant_slot("t-wait", 1, wait=5):
            order.append(name)
            time.sleep(0.05)

    with tenant_slot("t-wait", 1):
        threads = []
        for name in ("first", "second", "third"):
            thread = threading.Thread(target=waiter, args=(name,))
            thread.start()
            threads.append(thread)
            time.sleep(0.05)  # they line up in this order
        assert order == []  # all three wait while the slot is held
        # a caller that may not wait is refused at once
        with pytest.raises(TenantBusy), tenant_slot("t-wait", 1):
            pass
    for thread in threads:
        thread.join(5)
    assert order == ["first", "second", "third"]
    assert in_flight("t-wait") == 0


def test_a_wait_has_an_end():
    with tenant_slot("t-end", 1):
        started = time.monotonic()
        with pytest.raises(TenantBusy), tenant_slot("t-end", 1, wait=0.2):
            pass
        assert 0.15 <= time.monotonic() - started < 2
    with tenant_slot("t-end", 1, wait=0):  # free again, and nobody left in line
        pass


def test_the_gateway_waits_in_background_work_and_refuses_while_serving(app, tenant, monkeypatch):
    monkeypatch.setitem(app.config, "MARKETPLACE_TENANT_CONCURRENCY", 1)
    with app.app_context(), ListingMarketplace() as marketplace:
        connection = connect(tenant, "mirakl", "http", base_url=marketplace.url)

        def fetch():
            return gateway.call(connection, "fetch_orders", lambda c: c.fetch_orders(None))

        held = threading.Event()
        release = threading.Event()

        def holder():
            with tenant_slot(tenant.id, 1):
                held.set()
                release.wait(5)

        thread = threading.Thread(target=holder)
        thread.start()
        held.wait(5)
        start_serving()
        try:
            with pytest.raises(MarketplaceUnavailable) as refused:
                fetch()
            assert refused.value.code == "TENANT_CONCURRENCY" and refused.value.retry_after == 2
        finally:
            stop_serving()
        assert marketplace.other == []  # refused: nothing went out
        threading.Timer(0.3, release.set).start()
        started = time.monotonic()
        assert fetch().result.orders == []  # background work waited for the slot
        assert time.monotonic() - started >= 0.2
        thread.join(5)
        assert marketplace.other == [("GET", "/orders")]


def test_one_keep_alive_pool_per_connection_until_it_changes(app, tenant):
    with ListingMarketplace() as marketplace:
        connection = connect(tenant, "mirakl", "http", base_url=marketplace.url, api_token="a")
        first = gateway.session_for(connection)
        assert gateway.session_for(MarketplaceConnection.get_by_id(connection.id)) is first
        for _ in range(3):
            gateway.call(connection, "fetch_orders", lambda c: c.fetch_orders(None))
        (pool,) = first.get_adapter(marketplace.url).poolmanager.pools._container.values()
        assert pool.num_connections == 1  # three calls, one TCP connection
        connection.api_token = "b"  # a changed token (or base URL) gets a new pool
        second = gateway.session_for(connection)
        assert second is not first
        gateway.forget_session(connection.id)
        assert gateway.session_for(connection) is not second


def test_a_disabled_connection_is_not_called(app, tenant):
    with ListingMarketplace() as marketplace:
        connection = connect(tenant, "mirakl", "http", base_url=marketplace.url)
        connection.status = "disabled"
        with pytest.raises(MarketplaceUnavailable) as refused:
            gateway.call(connection, "fetch_orders", lambda c: c.fetch_orders(None))
        assert refused.value.code == "CONNECTION_DISABLED"
        assert marketplace.other == []


def test_gateway_refuses_to_run_inside_a_transaction(app, tenant):
    from commerce_api.db import write_transaction

    connection = connect(tenant)
    with write_transaction(), pytest.raises(RuntimeError):
        gateway.call(connection, "fetch_orders", lambda c: c.fetch_orders(None))


@pytest.mark.slow
def test_fifty_product_syncs_of_one_tenant_all_complete_without_a_retry(
    client, headers, tenant, database_url
):
    skus = [f"SKU-{n:02d}" for n in range(50)]
    make_products(client, headers, *skus)
    stock_up(tenant, make_own_warehouse(tenant), dict.fromkeys(skus, 3))
    with ListingMarketplace(delay=0.05) as marketplace:
        connect(tenant, "mirakl", "http", base_url=marketplace.url)
        jobs = []
        for sku in skus:
            price_listing(client, headers, sku, "mirakl")
            response = client.post(f"/api/products/{sku}/sync", headers=headers)
            assert response.status_code == 202, response.get_json()
            jobs.append(response.get_json()["data"]["job_id"])
        # the worker's default concurrency (4) against the tenant's cap of 2
        done = run_worker_once(database_url, timeout=120)
        assert done.returncode == 0, done.stderr
    rows = list(Job.select().where(Job.id.in_(jobs)))
    assert [row.status for row in rows] == ["completed"] * 50
    assert {row.attempts for row in rows} == {1}  # none retried
    assert {row.error for row in rows} == {None}
    assert Listing.select().count() == 50
    assert len({push["sku"] for push in marketplace.pushes}) == 50
