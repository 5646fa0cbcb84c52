"""Notified orders with real processes: gunicorn takes the notification, a running worker
pulls the order (DESIGN 13). PostgreSQL: the worker's connections are terminated under
its loop, and a notification afterwards is still pulled."""

import contextlib
from concurrent.futures import ThreadPoolExecutor

import psycopg2
import pytest
import requests

from commerce_api.orders.models import Order
from tests.support import dbutil
from tests.support.listing_marketplace import ListingMarketplace
from tests.support.notifications import (
    connect_notified,
    notification_path,
    place_and_notify,
    place_order,
    signed,
)
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
from tests.support.waiting import wait_for

pytestmark = pytest.mark.slow

APP_NAME = "commerce-notified-worker"
WORKER = {
    "LOG_LEVEL": "WARNING",
    "WORKER_POLL_INTERVAL": 0.1,
    "WORKER_LEASE_SECONDS": 6,
    "MARKETPLACE_PUSH_POLL_INTERVAL": 0.1,
    "ORDER_NOTIFIED_POLL_INTERVAL": 0.1,
    "ORDER_PULL_INTERVAL_SECONDS": 3600,  # no cursor pull: the notification brings it
}


@contextlib.contextmanager
def running(database_url, worker_url=None, workers=1):
    started = [
        start_command(["worker"], worker_url or database_url, **WORKER) for _ in range(workers)
    ]
    try:
        with gunicorn_server(database_url, workers=2) as base:
            yield base
        assert all(worker.poll() is None for worker in started), "a worker exited"
    finally:
        for worker in started:
            stop_process(worker)


@pytest.fixture
def shop(client, headers, tenant):
    """MUG-1 (10 on hand) listed on an http marketplace; a sandbox shop that notifies."""
    with ListingMarketplace() as marketplace:
        make_products(client, headers, "MUG-1")
        stock_up(tenant, make_own_warehouse(tenant), {"MUG-1": 10})
        connect(tenant, "mirakl", "http", base_url=marketplace.url)
        price_listing(client, headers, "MUG-1", "mirakl")
        yield {"marketplace": marketplace, "connection": connect_notified(tenant.id)}


def listed_orders(client, headers):
    return {
        o["external_order_id"]
        for o in client.get("/api/orders", headers=headers).get_json()["data"]
    }


def test_a_notified_order_is_in_the_api_and_the_other_channel_follows(
    client, headers, tenant, shop, database_url
):
    with running(database_url) as base:
        assert wait_for(lambda: shop["marketplace"].last_quantity("MUG-1") == 10, timeout=30)
        order, response = place_and_notify(
            base, shop["connection"].id, [{"sku": "MUG-1", "quantity": 3}]
        )
        assert response.status_code == 200, response.text
        external_id = order["external_order_id"]
        assert wait_for(lambda: external_id in listed_orders(client, headers), timeout=30)
        assert levels(tenant.id, "MUG-1") == (10, 3)
        # the other channel's listing drops to what is still available
        assert wait_for(lambda: shop["marketplace"].last_quantity("MUG-1") == 7, timeout=30)
    assert Order.select().count() == 1


def test_two_workers_pull_each_notified_order_once(client, headers, tenant, shop, database_url):
    """8 orders notified at once, each notification sent twice, two workers pulling."""
    connection_id = shop["connection"].id
    orders = [place_order(connection_id, [{"sku": "MUG-1", "quantity": 1}]) for _ in range(8)]
    external_ids = {order["external_order_id"] for order in orders}
    requests_ = [signed(external_id) for external_id in sorted(external_ids)]
    with running(database_url, workers=2) as base:
        url = base + notification_path(connection_id)

        def send(request):
            return requests.post(url, data=request[1], headers=request[0], timeout=10).status_code

        with ThreadPoolExecutor(4) as pool:
            assert set(pool.map(send, requests_ + requests_)) == {200}
        assert wait_for(lambda: external_ids <= listed_orders(client, headers), timeout=30)
    pulled = list(Order.select())
    assert len(pulled) == len(external_ids)
    for order in pulled:
        assert events_of(order.id).count("order.created") == 1
    assert levels(tenant.id, "MUG-1") == (10, 8)


def terminate(database_url):
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
def test_the_loop_survives_terminated_connections(client, headers, tenant, shop, database_url):
    separator = "&" if "?" in database_url else "?"
    worker_url = f"{database_url}{separator}application_name={APP_NAME}"
    with running(database_url, worker_url) as base:
        connection_id = shop["connection"].id
        order, _ = place_and_notify(base, connection_id, [{"sku": "MUG-1", "quantity": 1}])
        assert wait_for(
            lambda: order["external_order_id"] in listed_orders(client, headers), timeout=30
        )
        for quantity in (2, 1):
            assert terminate(database_url) > 0
            order, response = place_and_notify(
                base, connection_id, [{"sku": "MUG-1", "quantity": quantity}]
            )
            assert response.status_code == 200
            external_id = order["external_order_id"]
            assert wait_for(
                lambda e=external_id: e in listed_orders(client, headers), timeout=30
            ), "not pulled after the worker's connections were terminated"
        assert levels(tenant.id, "MUG-1") == (10, 4)
