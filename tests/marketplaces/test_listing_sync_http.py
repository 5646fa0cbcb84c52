"""Listings kept in sync by a running worker, against a marketplace on 127.0.0.1.

Nobody calls ``POST /sync`` after the listing exists: every change that alters what a
listing offers reaches the marketplace by itself (DESIGN 9).
"""

import contextlib
import threading
import time
import warnings

import pytest

from commerce_api.events.models import Event
from commerce_api.orders.ingest import upsert_order
from commerce_api.products.models import Listing
from tests.support.listing_marketplace import ListingMarketplace
from tests.support.orders_support import (
    connect,
    make_own_warehouse,
    make_products,
    order_body,
    stock_up,
)
from tests.support.products_support import price_listing
from tests.support.servers import start_command, stop_process
from tests.support.waiting import wait_for

pytestmark = pytest.mark.slow

SPACING = 0.6  # MARKETPLACE_LISTING_PUSH_SPACING_SECONDS (the default)
WORKER = {
    "LOG_LEVEL": "WARNING",
    "WORKER_POLL_INTERVAL": 0.05,
    "MARKETPLACE_PUSH_POLL_INTERVAL": 0.05,
    "ORDER_PULL_INTERVAL_SECONDS": 3600,
}


def available(client, headers, sku):
    response = client.get(f"/api/inventory/{sku}", headers=headers)
    assert response.status_code == 200
    return response.get_json()["data"]["total_available"]


def listing_of(client, headers, sku, marketplace="mirakl"):
    response = client.get(f"/api/products/{sku}", headers=headers)
    assert response.status_code == 200
    listings = response.get_json()["data"]["listings"]
    (listing,) = [x for x in listings if x["marketplace"] == marketplace]
    return listing


@pytest.fixture
def shop(client, headers, tenant, database_url):
    """Two listed products on an http marketplace, and a worker process running."""
    with running_shop(client, headers, tenant, database_url, **WORKER) as running:
        yield running


@contextlib.contextmanager
def running_shop(client, headers, tenant, database_url, **worker_config):
    with ListingMarketplace() as marketplace:
        make_products(client, headers, "MUG-1", "TOWEL-1")
        warehouse = make_own_warehouse(tenant)
        stock_up(tenant, warehouse, {"MUG-1": 10, "TOWEL-1": 5})
        connection = connect(tenant, "mirakl", "http", base_url=marketplace.url)
        worker = start_command(["worker"], database_url, **worker_config)
        try:
            for sku in ("MUG-1", "TOWEL-1"):
                price_listing(client, headers, sku, "mirakl")
                response = client.post(f"/api/products/{sku}/sync", headers=headers)
                assert response.status_code == 202, response.get_json()
            # both listed and settled: the price's push and the sync's are behind us
            assert wait_for(
                lambda: (
                    Listing.select()
                    .where(
                        Listing.external_id.is_null(False)
                        & (Listing.sync_status == "in_sync")
                        & Listing.pushing_version.is_null()
                    )
                    .count()
                    == 2
                )
            )
            yield {"marketplace": marketplace, "warehouse": warehouse, "connection": connection}
        finally:
            stop_process(worker)


def _settles(client, headers, marketplace, sku, timeout=20):
    """The marketplace's last quantity of ``sku`` reaches the available stock, and the
    listing shows in_sync."""
    return wait_for(
        lambda: (
            marketplace.last_quantity(sku) == available(client, headers, sku)
            and listing_of(client, headers, sku)["sync_status"] == "in_sync"
        ),
        timeout,
    )


def test_stock_orders_and_shipments_reach_the_marketplace_without_a_sync_call(
    client, headers, tenant, shop
):
    marketplace, warehouse = shop["marketplace"], shop["warehouse"]
    assert marketplace.last_quantity("MUG-1") == 10
    syncs = len(marketplace.pushes)

    # a stock PUT
    response = client.put(
        "/api/inventory/MUG-1",
        json={"warehouse_id": warehouse, "quantity": 120, "reason": "supplier_receipt"},
        headers=headers,
    )
    assert response.status_code == 200
    assert _settles(client, headers, marketplace, "MUG-1")
    assert marketplace.last_quantity("MUG-1") == 120
    pushed = marketplace.pushes_of("MUG-1")[-1]
    assert pushed["body"]["status"] == "active"
    listing = listing_of(client, headers, "MUG-1")
    assert listing["quantity"] == 120 and listing["last_sync_error"] is None
    assert pushed["idempotency_key"].startswith(Listing.get(Listing.external_id == "EXT-MUG-1").id)

    # a bulk stock update
    response = client.post(
        "/api/inventory/bulk",
        json={
            "updates": [
                {"sku": sku, "warehouse_id": warehouse, "quantity": n, "reason": "cycle_count"}
                for sku, n in (("MUG-1", 90), ("TOWEL-1", 7))
            ]
        },
        headers=headers,
    )
    assert response.status_code == 200, response.get_json()
    assert _settles(client, headers, marketplace, "MUG-1")
    assert _settles(client, headers, marketplace, "TOWEL-1")
    assert (marketplace.last_quantity("MUG-1"), marketplace.last_quantity("TOWEL-1")) == (90, 7)

    # an order's reservation (order_body: 2 x MUG-1, 1 x TOWEL-1)
    _, order_id = upsert_order(tenant.id, order_body("M-1", marketplace="mirakl"), source="import")
    assert _settles(client, headers, marketplace, "MUG-1")
    assert (marketplace.last_quantity("MUG-1"), marketplace.last_quantity("TOWEL-1")) == (88, 6)

    # a shipment: the reserved units leave on_hand; the marketplace is told again
    before = len(marketplace.pushes_of("MUG-1"))
    response = client.post(
        f"/api/orders/{order_id}/shipment",
        json={"carrier": "UPS", "tracking_number": "1Z9", "shipped_date": "2026-03-11T09:00:00Z"},
        headers=headers,
    )
    assert response.status_code == 200, response.get_json()
    assert wait_for(lambda: len(marketplace.pushes_of("MUG-1")) > before)
    assert _settles(client, headers, marketplace, "MUG-1")
    assert marketplace.last_quantity("MUG-1") == 88
    # nobody asked for a sync: every push after the first two came from the push service
    assert all(p["idempotency_key"] for p in marketplace.pushes[syncs:])
    assert ("POST", "/orders/M-1/shipment") in marketplace.other


def test_a_burst_of_changes_is_coalesced(app, headers, shop):
    marketplace, warehouse = shop["marketplace"], shop["warehouse"]
    before = len(marketplace.pushes_of("MUG-1"))
    failures = []

    def changes(first):  # four clients at once, as integrations hammering one SKU would
        client = app.test_client()
        for quantity in range(first, 1001, 4):
            response = client.put(
                "/api/inventory/MUG-1",
                json={"warehouse_id": warehouse, "quantity": quantity, "reason": "cycle_count"},
                headers=headers,
            )
            if response.status_code != 200:
                failures.append(response.get_json())

    started = time.monotonic()
    threads = [threading.Thread(target=changes, args=(first,)) for first in (1, 2, 3, 4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(300)
    burst = time.monotonic() - started
    # a thread still writing would make the "final" level read below a mid-burst one (on a
    # loaded machine 60 s was not always enough for 250 PUTs)
    assert not any(thread.is_alive() for thread in threads), "the burst did not end"
    assert failures == []
    client = app.test_client()
    final = available(client, headers, "MUG-1")
    assert _settles(client, headers, marketplace, "MUG-1")
    settled = time.monotonic() - started
    assert marketplace.last_quantity("MUG-1") == final
    pushes = len(marketplace.pushes_of("MUG-1")) - before
    print(f"1,000 changes in {burst:.1f} s, settled at {settled:.1f} s: {pushes} pushes")
    # a listing that stays pending is pushed once per spacing (0.6 s) at most; one whose push
    # landed in sync is due at once on its next change (products.desired_state), so a spacing
    # may hold two pushes: pushes are counted until the listing settled (the push of the
    # final state comes after the burst, later than one spacing on a loaded machine), so the
    # bound is over that whole time (CI once counted 20 in 9.8 s and 47 in 26.8 s under load)
    assert 1 <= pushes <= 2 * settled / SPACING + 2
    if burst <= 10.0:
        assert pushes <= 20
    else:  # a loaded machine: the bar's premise (10 s) did not hold, the spacing did
        warnings.warn(f"the burst took {burst:.1f} s, beyond the bar's 10 s", stacklevel=1)
    keys = [p["idempotency_key"] for p in marketplace.pushes_of("MUG-1")[before:]]
    assert len(set(keys)) == len(keys)  # one key per listing version


def test_a_rejected_push_shows_error_and_the_next_change_pushes_again(
    client, headers, tenant, shop
):
    marketplace, warehouse = shop["marketplace"], shop["warehouse"]
    marketplace.reject.add("TOWEL-1")
    client.put(
        "/api/inventory/TOWEL-1",
        json={"warehouse_id": warehouse, "quantity": 3, "reason": "cycle_count"},
        headers=headers,
    )
    assert wait_for(lambda: listing_of(client, headers, "TOWEL-1")["sync_status"] == "error")
    listing = listing_of(client, headers, "TOWEL-1")
    assert listing["last_sync_error"] == "BAD_LISTING: Refused."
    assert listing["quantity"] == 5  # what the marketplace last accepted
    (event,) = Event.select().where(Event.type == "listing.sync_failed")
    assert event.data["sku"] == "TOWEL-1" and event.data["error"]["code"] == "BAD_LISTING"
    rejected = len(marketplace.pushes_of("TOWEL-1"))
    time.sleep(1.0)  # an error is not retried by itself
    assert len(marketplace.pushes_of("TOWEL-1")) == rejected

    marketplace.reject.discard("TOWEL-1")
    client.put(
        "/api/inventory/TOWEL-1",
        json={"warehouse_id": warehouse, "quantity": 4, "reason": "cycle_count"},
        headers=headers,
    )
    assert _settles(client, headers, marketplace, "TOWEL-1")
    assert marketplace.last_quantity("TOWEL-1") == 4
    assert listing_of(client, headers, "TOWEL-1")["last_sync_error"] is None


def test_a_disabled_or_deleted_connection_is_neither_pulled_nor_pushed(
    client, headers, tenant, database_url
):
    config = {**WORKER, "ORDER_PULL_INTERVAL_SECONDS": 1}
    with running_shop(client, headers, tenant, database_url, **config) as shop:
        marketplace, warehouse = shop["marketplace"], shop["warehouse"]
        url = f"/api/marketplaces/{shop['connection'].id}"
        pulls = lambda: marketplace.other.count(("GET", "/orders"))  # noqa: E731
        assert wait_for(lambda: pulls() >= 1)  # pulled while active

        response = client.patch(url, json={"status": "disabled"}, headers=headers)
        assert response.status_code == 200 and response.get_json()["data"]["status"] == "disabled"
        time.sleep(1.5)  # a pull or push under way when it was disabled ends meanwhile
        pulled, pushed = pulls(), len(marketplace.pushes)
        client.put(
            "/api/inventory/MUG-1",
            json={"warehouse_id": warehouse, "quantity": 33, "reason": "cycle_count"},
            headers=headers,
        )
        time.sleep(3)  # three pull intervals
        assert (pulls(), len(marketplace.pushes)) == (pulled, pushed)
        assert listing_of(client, headers, "MUG-1")["sync_status"] == "pending"

        # active again: the listing that waited is pushed, and pulls resume
        response = client.patch(url, json={"status": "active"}, headers=headers)
        assert response.status_code == 200
        assert _settles(client, headers, marketplace, "MUG-1")
        assert marketplace.last_quantity("MUG-1") == 33
        assert wait_for(lambda: pulls() > pulled)

        # deleted: the same, and the listing and its history stay
        assert client.delete(url, headers=headers).status_code == 204
        time.sleep(1.5)
        pulled, pushed = pulls(), len(marketplace.pushes)
        client.put(
            "/api/inventory/MUG-1",
            json={"warehouse_id": warehouse, "quantity": 44, "reason": "cycle_count"},
            headers=headers,
        )
        time.sleep(3)
        assert (pulls(), len(marketplace.pushes)) == (pulled, pushed)
        listing = listing_of(client, headers, "MUG-1")
        assert (listing["sync_status"], listing["quantity"]) == ("pending", 33)
        response = client.get("/api/marketplaces/sync-history?sku=MUG-1", headers=headers)
        assert response.get_json()["data"]  # the history stays
