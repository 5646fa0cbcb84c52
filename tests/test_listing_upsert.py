"""Concurrent saves of the same listing (two sync jobs of one product at once, on two
threads with their own database connections) never collide on the unique index of
(product, marketplace): the save is one upsert, on SQLite and on PostgreSQL alike."""

import threading

from commerce_api.db import db
from commerce_api.marketplaces.listings import sync_product
from commerce_api.products.models import Listing
from commerce_api.products.services import create_product

from .orders_support import connect

THREADS = 4
ROUNDS = 8


def race(tenant):
    start = threading.Barrier(THREADS)
    results, errors = [], []

    def save():
        try:
            start.wait(timeout=30)
            with db.connection_context():
                results.append(sync_product(tenant.id, "MUG-1", ["amazon"], "test"))
        except Exception as error:  # noqa: BLE001 - reported by the assertion
            errors.append(repr(error))

    threads = [threading.Thread(target=save) for _ in range(THREADS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    return results, errors


def test_concurrent_saves_of_one_listing_make_one_row(app, tenant):
    create_product(
        tenant.id, {"sku": "MUG-1", "title": "Mug", "gtin": "4006381333931", "status": "active"}
    )
    connect(tenant, "amazon", "sandbox")
    for round_number in range(ROUNDS):
        # a fresh race each round: every thread finds no listing and saves one
        Listing.delete().execute()
        results, errors = race(tenant)
        assert errors == [], (round_number, errors)
        assert [r["succeeded"] for r in results] == [1] * THREADS, (round_number, results)
        (listing,) = Listing.select()
        assert listing.external_id.startswith("SBX-") and listing.status == "active"
        assert listing.price is not None and listing.currency


def test_a_later_save_updates_the_row_in_place(app, tenant):
    create_product(
        tenant.id, {"sku": "MUG-1", "title": "Mug", "gtin": "4006381333931", "status": "active"}
    )
    connect(tenant, "amazon", "sandbox")
    sync_product(tenant.id, "MUG-1", ["amazon"], "test")
    (first,) = Listing.select()
    Listing.update(quantity=99, status="stale").execute()
    sync_product(tenant.id, "MUG-1", ["amazon"], "test")
    (second,) = Listing.select()
    assert second.id == first.id and second.created_at == first.created_at
    assert (second.quantity, second.status) == (0, "active")
    assert second.last_synced_at >= first.last_synced_at
