"""The order and marketplace jobs through the real worker: ``commerce-api worker --once``."""

import pytest

from commerce_api.jobs.models import Job
from commerce_api.marketplaces.models import MarketplaceConnection
from commerce_api.orders.models import Order
from commerce_api.products.models import Listing
from tests.support.orders_support import (
    connect,
    levels,
    make_own_warehouse,
    make_products,
    order_body,
    stock_up,
)
from tests.support.products_support import price_listing
from tests.support.servers import run_worker_once


@pytest.mark.slow
def test_worker_runs_cancellation_sync_and_the_periodic_pull(client, headers, tenant, database_url):
    from commerce_api.orders.ingest import upsert_order

    make_products(client, headers, "MUG-1", "TOWEL-1")
    stock_up(tenant, make_own_warehouse(tenant), {"MUG-1": 10, "TOWEL-1": 5})
    connect(tenant, "amazon", settings={"initial_orders": 3, "orders_per_pull": 0})
    _, order_id = upsert_order(tenant.id, order_body("W-1"), source="import")
    response = client.post(
        f"/api/orders/{order_id}/cancel", json={"reason": "other"}, headers=headers
    )
    assert response.status_code == 202
    cancel_job = response.get_json()["data"]["cancellation"]["job_id"]
    price_listing(client, headers, "MUG-1", "amazon")
    response = client.post("/api/products/MUG-1/sync", headers=headers)
    sync_job = response.get_json()["data"]["job_id"]

    done = run_worker_once(database_url)
    assert done.returncode == 0, done.stderr

    assert Job.get_by_id(cancel_job).status == "completed"
    assert Job.get_by_id(sync_job).status == "completed"
    order = Order.get_by_id(order_id)
    assert order.status == "cancelled" and order.cancellation["status"] == "approved"
    assert Listing.get().external_id.startswith("SBX-")
    # the periodic pull ran too: the sandbox's first three orders are here
    connection = MarketplaceConnection.get()
    assert connection.last_pull_status == "ok"
    assert Order.select().where(Order.external_order_id.startswith("SBX-")).count() == 3
    pulled = Order.select().where(Order.external_order_id.startswith("SBX-"))
    held = sum(
        line.quantity
        for o in pulled
        if o.fulfillment_method != "FBA"
        for line in o.lines
        if line.sku == "MUG-1"
    )
    assert levels(tenant.id, "MUG-1")[1] == held
