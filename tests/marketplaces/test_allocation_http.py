"""Allocation rules and bundles reach the marketplaces by themselves (DESIGN 14): a running
worker pushes to three marketplaces on 127.0.0.1 (the http connector's contract fake).

Each rule changes what one marketplace holds for one listing and nothing else; selling
the last unit of a component drops every bundle that uses it on every channel.
"""

import contextlib
import time

import pytest

from commerce_api.inventory.services import create_warehouse
from commerce_api.orders.ingest import upsert_order
from commerce_api.products.models import Listing
from tests.support.listing_marketplace import ListingMarketplace
from tests.support.orders_support import connect, order_body, stock_up
from tests.support.products_support import price_listing
from tests.support.servers import start_command, stop_process
from tests.support.waiting import wait_for

pytestmark = pytest.mark.slow

WORKER = {
    "LOG_LEVEL": "WARNING",
    "WORKER_POLL_INTERVAL": 0.05,
    "MARKETPLACE_PUSH_POLL_INTERVAL": 0.05,
    "ORDER_PULL_INTERVAL_SECONDS": 3600,
}
CHANNELS = ("ebay", "amazon_de", "shopify")
SKUS = ("MUG-1", "TOWEL-1", "GIFT-1")


def listings(client, headers, sku):
    response = client.get(f"/api/products/{sku}", headers=headers)
    assert response.status_code == 200
    return {x["marketplace"]: x for x in response.get_json()["data"]["listings"]}


def settled(client, headers, fakes, expected):
    """Every (channel, sku) in ``expected`` holds that quantity and is in sync."""

    def check():
        for (channel, sku), quantity in expected.items():
            if fakes[channel].last_quantity(sku) != quantity:
                return False
            if listings(client, headers, sku)[channel]["sync_status"] != "in_sync":
                return False
        return True

    return wait_for(check, 20)


@contextlib.contextmanager
def three_channels(client, headers, tenant, database_url):
    with contextlib.ExitStack() as stack:
        fakes = {c: stack.enter_context(ListingMarketplace()) for c in CHANNELS}
        eu = create_warehouse(tenant.id, {"name": "EU"})["id"]
        us = create_warehouse(tenant.id, {"name": "US"})["id"]
        for sku in ("MUG-1", "TOWEL-1"):
            response = client.post(
                "/api/products",
                json={"sku": sku, "title": sku, "status": "active"},
                headers=headers,
            )
            assert response.status_code == 201
        body = {
            "sku": "GIFT-1",
            "title": "Gift set",
            "status": "active",
            "components": [{"sku": "MUG-1", "quantity": 2}, {"sku": "TOWEL-1", "quantity": 1}],
        }
        assert client.post("/api/products", json=body, headers=headers).status_code == 201
        stock_up(tenant, eu, {"MUG-1": 30, "TOWEL-1": 4})
        stock_up(tenant, us, {"MUG-1": 10, "TOWEL-1": 2})
        for channel, fake in fakes.items():
            connect(tenant, channel, "http", base_url=fake.url)
        for sku in SKUS:  # nothing is pushed without a price someone chose
            for channel in fakes:
                price_listing(client, headers, sku, channel)
        worker = start_command(["worker"], database_url, **WORKER)
        stack.callback(stop_process, worker)
        for sku in SKUS:
            response = client.post(f"/api/products/{sku}/sync", headers=headers)
            assert response.status_code == 202, response.get_json()
        assert wait_for(
            lambda: Listing.select().where(Listing.external_id.is_null(False)).count() == 9, 30
        )

        # the prices set first are pushed too: settled (every listing in sync and no push
        # for a while) before any push is counted
        def pushes():
            return sum(len(fakes[c].pushes_of(s)) for c in fakes for s in SKUS)

        def quiet():
            before = pushes()
            time.sleep(1.5)
            in_sync = not Listing.select().where(Listing.sync_status != "in_sync").exists()
            return in_sync and pushes() == before

        assert wait_for(quiet, 60)
        yield {"fakes": fakes, "eu": eu, "us": us}


def test_each_rule_changes_only_its_listing_and_bundles_follow_components(
    client, headers, tenant, database_url
):
    with three_channels(client, headers, tenant, database_url) as shop:
        fakes, eu = shop["fakes"], shop["eu"]
        # MUG 40, TOWEL 6, GIFT min(40 // 2, 6) = 6 on every channel
        everything = {(c, s): q for c in CHANNELS for s, q in zip(SKUS, (40, 6, 6), strict=True)}
        assert settled(client, headers, fakes, everything)

        rules = [
            ("ebay", "MUG-1", {"max_quantity": 25}, 25),
            ("amazon_de", "MUG-1", {"warehouse_ids": [eu]}, 30),
            ("shopify", "MUG-1", {"allocation_pct": 60, "stock_buffer": 4}, 20),  # 24 - 4
            ("ebay", "TOWEL-1", {"fixed_quantity": 50}, 50),
            ("amazon_de", "GIFT-1", {"warehouse_ids": [eu]}, 4),  # min(30 // 2, 4)
            ("shopify", "GIFT-1", {"max_quantity": 2}, 2),
        ]
        expected = dict(everything)
        for channel, sku, body, quantity in rules:
            counts = {c: {s: len(fakes[c].pushes_of(s)) for s in SKUS} for c in CHANNELS}
            response = client.patch(
                f"/api/products/{sku}/listings/{channel}", json=body, headers=headers
            )
            assert response.status_code == 200, response.get_json()
            expected[(channel, sku)] = quantity
            assert settled(client, headers, fakes, expected), (channel, sku, body)
            # only the listing whose rule changed was pushed
            for c in CHANNELS:
                for s in SKUS:
                    pushed = len(fakes[c].pushes_of(s)) - counts[c][s]
                    assert pushed == (1 if (c, s) == (channel, sku) else 0), (c, s, pushed)

        # a relative receipt of towels in the US: every towel and gift listing follows
        response = client.post(
            "/api/inventory/TOWEL-1/adjustments",
            json={"warehouse_id": shop["us"], "delta": 3, "reason": "supplier_receipt"},
            headers=headers,
        )
        assert response.status_code == 201
        expected.update(
            {
                ("amazon_de", "TOWEL-1"): 9,
                ("shopify", "TOWEL-1"): 9,
                ("ebay", "GIFT-1"): 9,  # min(40 // 2, 9)
                ("amazon_de", "GIFT-1"): 4,  # EU only: min(15, 4)
                ("shopify", "GIFT-1"): 2,  # capped
            }
        )
        assert settled(client, headers, fakes, expected)


def test_selling_the_last_towel_drops_the_gift_set_everywhere(
    client, headers, tenant, database_url
):
    with three_channels(client, headers, tenant, database_url) as shop:
        fakes = shop["fakes"]
        everything = {(c, s): q for c in CHANNELS for s, q in zip(SKUS, (40, 6, 6), strict=True)}
        assert settled(client, headers, fakes, everything)
        # five towels leave by adjustment, the last one is sold on eBay
        response = client.post(
            "/api/inventory/bulk",
            json={
                "updates": [
                    {"sku": "TOWEL-1", "warehouse_id": shop["eu"], "delta": -4, "reason": "damage"},
                    {"sku": "TOWEL-1", "warehouse_id": shop["us"], "delta": -1, "reason": "loss"},
                ]
            },
            headers=headers,
        )
        assert response.get_json()["data"]["updated"] == 2
        expected = {**everything, **{(c, s): 1 for c in CHANNELS for s in ("TOWEL-1", "GIFT-1")}}
        assert settled(client, headers, fakes, expected)
        line = {
            "external_line_item_id": "L1",
            "sku": "TOWEL-1",
            "title": "Towel",
            "quantity": 1,
            "unit_price": 5.0,
            "line_total": 5.0,
        }
        upsert_order(
            tenant.id,
            order_body("SOLD-1", marketplace="ebay", line_items=[line], total_amount=5.0),
            source="import",
        )
        expected.update({(c, s): 0 for c in CHANNELS for s in ("TOWEL-1", "GIFT-1")})
        assert settled(client, headers, fakes, expected)
        for channel in CHANNELS:
            assert fakes[channel].pushes_of("GIFT-1")[-1]["body"]["quantity"] == 0
