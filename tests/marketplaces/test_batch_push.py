"""Batch pushes through the ``http`` connector's ``POST /products/batch`` (DESIGN 13)."""

import threading

from commerce_api.db import write_transaction
from commerce_api.events.models import Event
from commerce_api.marketplaces.listing_push_loop import run_loop
from commerce_api.products.desired_state import mark_listings_pending
from commerce_api.products.models import Listing, Product
from tests.support.listing_marketplace import ListingMarketplace
from tests.support.orders_support import connect, make_own_warehouse, make_products, stock_up


def push_pending(app):
    stop = threading.Event()
    stop.set()
    with app.app_context():
        return run_loop(app.config, stop)


def test_a_batch_connection_pushes_many_listings_per_call_one_outcome_each(
    app, client, headers, tenant
):
    skus = [f"B-{n:02d}" for n in range(30)]
    make_products(client, headers, *skus)
    stock_up(tenant, make_own_warehouse(tenant), {sku: n + 1 for n, sku in enumerate(skus)})
    with ListingMarketplace() as marketplace:
        marketplace.reject.add("B-07")
        connect(tenant, "mirakl", "http", base_url=marketplace.url, settings={"batch_size": 25})
        with write_transaction():
            for product in Product.select():
                Listing.create(
                    id=f"lst_{product.sku}", tenant=tenant.id, product=product.id,
                    marketplace="mirakl", price="9.99", currency="EUR",
                )  # fmt: skip
            mark_listings_pending(listing_ids=[row.id for row in Listing.select(Listing.id)])
        stats = push_pending(app)
    assert sorted(marketplace.batches) == [5, 25]
    assert stats["accepted"] == 29 and stats["rejected"] == 1
    assert Listing.select().where(Listing.sync_status == "in_sync").count() == 29
    rejected = Listing.get(Listing.sync_status == "error")
    assert rejected.id == "lst_B-07" and rejected.last_sync_error.startswith("BAD_LISTING:")
    assert Event.select().where(Event.type == "listing.sync_failed").count() == 1
    assert Listing.get_by_id("lst_B-12").quantity == 13
    keys = {push["idempotency_key"] for push in marketplace.pushes}
    assert "lst_B-12:1" in keys or any(k.startswith("lst_B-12:") for k in keys)


def test_http_batch_size_is_checked(client, headers):
    for settings in ({"batch_size": 0}, {"batch_size": 5000}, {"batch_size": "10"}, {"x": 1}):
        response = client.post(
            "/api/marketplaces",
            json={"marketplace": "m", "connector": "http", "base_url": "https://example.com",
                  "settings": settings},
            headers=headers,
        )  # fmt: skip
        assert response.status_code == 422, response.get_json()
