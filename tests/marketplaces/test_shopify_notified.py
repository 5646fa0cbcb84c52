"""Shopify notifications end to end with real processes (DESIGN 13, issue 33).

gunicorn takes the notification the Shopify contract fake signs and sends, a running
worker pulls that one order through the fake's Admin GraphQL endpoint: the order is in
``GET /api/orders``, reserves stock, and another channel (an ``http`` marketplace adapter)
follows; an ``orders/cancelled`` notification about an order cancelled in Shopify releases
the reservation; a replayed webhook id changes nothing. The fake refuses no document.
"""

import pytest

from commerce_api.orders.models import Order
from tests.support.listing_marketplace import ListingMarketplace
from tests.support.notifications import notification_path
from tests.support.orders_support import (
    connect,
    events_of,
    levels,
    make_own_warehouse,
    make_products,
    stock_up,
)
from tests.support.products_support import price_listing
from tests.support.servers import gunicorn_server, start_command, stop_process
from tests.support.shopify_fake import ShopifyFake, now_iso
from tests.support.waiting import wait_for

pytestmark = pytest.mark.slow

WORKER = {
    "LOG_LEVEL": "WARNING",
    "WORKER_POLL_INTERVAL": 0.1,
    "MARKETPLACE_PUSH_POLL_INTERVAL": 0.1,
    "ORDER_NOTIFIED_POLL_INTERVAL": 0.1,
    "ORDER_PULL_INTERVAL_SECONDS": 3600,  # no cursor pull: the notification brings it
}


def orders_by_external_id(client, headers):
    response = client.get("/api/orders", headers=headers)
    assert response.status_code == 200
    return {o["external_order_id"]: o for o in response.get_json()["data"]}


def cancel_in_shopify(fake, gid):
    """The merchant cancels the order in the Shopify admin."""
    with fake.lock:
        stamp = now_iso()
        fake.orders[gid]["cancelledAt"] = stamp
        fake.orders[gid]["updatedAt"] = stamp


def test_a_notified_shopify_order_reserves_and_its_cancellation_releases(
    client, headers, tenant, database_url
):
    with ShopifyFake() as fake, ListingMarketplace() as other:
        make_products(client, headers, "MUG-1")
        fake.add_variant("MUG-1", price="9.99", quantity=0)
        warehouse = make_own_warehouse(tenant)
        stock_up(tenant, warehouse, {"MUG-1": 10})
        shop = connect(
            tenant,
            "shopify",
            "shopify",
            settings=fake.settings(warehouse),
            credentials=fake.credentials(),
        )
        connect(tenant, "mirakl", "http", base_url=other.url)
        price_listing(client, headers, "MUG-1", "shopify", 9.99)
        price_listing(client, headers, "MUG-1", "mirakl")
        worker = start_command(["worker"], database_url, **WORKER)
        try:
            with gunicorn_server(database_url, workers=2) as base:
                url = base + notification_path(shop.id)
                assert wait_for(lambda: other.last_quantity("MUG-1") == 10, timeout=30)
                assert wait_for(lambda: fake.quantity("MUG-1") == 10, timeout=30)

                # an order placed in Shopify, notified by the shop
                gid = fake.add_order([("MUG-1", 3, "9.99")])
                response = fake.notify(url, gid, webhook_id="wh-create-1")
                assert response.status_code == 200, response.text
                assert wait_for(lambda: gid in orders_by_external_id(client, headers), 30)
                order = orders_by_external_id(client, headers)[gid]
                assert order["marketplace"] == "shopify"
                assert levels(tenant.id, "MUG-1") == (10, 3)
                # both channels drop to what is still available
                assert wait_for(lambda: other.last_quantity("MUG-1") == 7, timeout=30)
                assert wait_for(lambda: fake.quantity("MUG-1") == 7, timeout=30)

                # the same webhook again (Shopify retries): harmless
                response = fake.notify(url, gid, webhook_id="wh-create-1")
                assert response.status_code == 200, response.text
                # and a fresh delivery about the same, unchanged order: harmless too
                response = fake.notify(url, gid, topic="orders/updated")
                assert response.status_code == 200, response.text

                # cancelled in Shopify: the notification brings the cancellation
                cancel_in_shopify(fake, gid)
                response = fake.notify(url, gid, topic="orders/cancelled")
                assert response.status_code == 200, response.text
                assert wait_for(
                    lambda: orders_by_external_id(client, headers)[gid]["status"] == "cancelled",
                    30,
                )
                assert levels(tenant.id, "MUG-1") == (10, 0)
                assert wait_for(lambda: other.last_quantity("MUG-1") == 10, timeout=30)
                assert wait_for(lambda: fake.quantity("MUG-1") == 10, timeout=30)

                # a replayed create after the cancellation does not bring it back
                response = fake.notify(url, gid, webhook_id="wh-create-1")
                assert response.status_code == 200, response.text
                response = fake.notify(url, gid, webhook_id="wh-create-late")
                assert response.status_code == 200, response.text
                marker = fake.add_order([("MUG-1", 1, "9.99")])
                assert fake.notify(url, marker).status_code == 200
                assert wait_for(lambda: marker in orders_by_external_id(client, headers), 30)
            assert worker.poll() is None, "the worker exited"
        finally:
            stop_process(worker)
        assert orders_by_external_id(client, headers)[gid]["status"] == "cancelled"
        assert levels(tenant.id, "MUG-1") == (10, 1)
        assert Order.select().count() == 2
        (pulled,) = Order.select().where(Order.external_order_id == gid)
        assert events_of(pulled.id).count("order.created") == 1
        assert fake.refused == [], fake.refused
        assert fake.refused_count() == 0
        assert fake.answer_problems == [], fake.answer_problems
        assert fake.throttled == 0
