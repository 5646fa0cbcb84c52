"""Concurrent saves of the same listing (two sync jobs of one product at once, on two
threads with their own database connections) never collide on the unique index of
(product, marketplace): the save is one upsert, on SQLite and on PostgreSQL alike."""

import threading
from decimal import Decimal

from commerce_api.db import db
from commerce_api.marketplaces.product_sync import sync_product
from commerce_api.products.models import Listing
from commerce_api.products.services import create_product
from tests.support.orders_support import connect
from tests.support.products_support import price_listing_now

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
        # no price yet: each finds no listing and keeps one held, none pushes
        statuses = [r["marketplaces"][0]["status"] for r in results]
        assert statuses == ["held"] * THREADS, (round_number, results)
        (listing,) = Listing.select()
        assert (listing.sync_status, listing.price, listing.external_id) == ("held", None, None)
        # priced, every one pushes and saves onto the same row
        price_listing_now(tenant.id, "MUG-1", "amazon")
        results, errors = race(tenant)
        assert errors == [], (round_number, errors)
        assert [r["succeeded"] for r in results] == [1] * THREADS, (round_number, results)
        (saved,) = Listing.select()
        assert saved.id == listing.id and saved.external_id.startswith("SBX-")
        assert saved.status == "active" and saved.price == Decimal("12.50") and saved.currency


def test_a_later_save_updates_the_row_in_place(app, tenant):
    create_product(
        tenant.id, {"sku": "MUG-1", "title": "Mug", "gtin": "4006381333931", "status": "active"}
    )
    connect(tenant, "amazon", "sandbox")
    price_listing_now(tenant.id, "MUG-1", "amazon")
    sync_product(tenant.id, "MUG-1", ["amazon"], "test")
    (first,) = Listing.select()
    Listing.update(quantity=99, status="stale").execute()
    sync_product(tenant.id, "MUG-1", ["amazon"], "test")
    (second,) = Listing.select()
    assert second.id == first.id and second.created_at == first.created_at
    assert (second.quantity, second.status) == (0, "active")
    assert second.last_synced_at >= first.last_synced_at


def test_a_price_recorded_while_a_sync_pushes_is_kept_and_pushed_again(app, tenant, monkeypatch):
    """The sync pushed the body it read; a price recorded meanwhile (a recommendation
    applied) is newer: the listing keeps it and becomes pending (bench/soak.py found the
    sync's answer overwriting it, the marketplace holding the other price)."""
    from decimal import Decimal

    from commerce_api.db import write_transaction
    from commerce_api.marketplaces.prices import AcceptedPrice, record_pushed_prices
    from commerce_api.marketplaces.sandbox import SandboxConnector

    create_product(
        tenant.id, {"sku": "MUG-1", "title": "Mug", "gtin": "4006381333931", "status": "active"}
    )
    connect(tenant, "amazon", "sandbox")
    price_listing_now(tenant.id, "MUG-1", "amazon")
    sync_product(tenant.id, "MUG-1", ["amazon"], "test")
    (listing,) = Listing.select()
    original = SandboxConnector.push_product

    def push_while_a_price_is_recorded(self, product, idempotency_key=None):
        answer = original(self, product)
        with write_transaction():
            record_pushed_prices([AcceptedPrice(listing.id, Decimal("17.25"), 1)])
        return answer

    monkeypatch.setattr(SandboxConnector, "push_product", push_while_a_price_is_recorded)
    sync_product(tenant.id, "MUG-1", ["amazon"], "test")
    (after,) = Listing.select()
    assert after.price == Decimal("17.25")
    assert after.sync_status == "pending"  # the marketplace may hold the sync's body


def test_a_listing_push_recorded_while_a_price_was_pushed_makes_the_listing_pending(app, tenant):
    """A listing push that reached the marketplace after the price did carried the old
    price; recorded before the price, it left the listing in_sync while the marketplace
    held the old price (bench/soak.py on PostgreSQL). A push recorded since the price's
    first push began makes the listing pending; an older one does not."""
    from decimal import Decimal

    from commerce_api.db import write_transaction
    from commerce_api.marketplaces.prices import AcceptedPrice, record_pushed_prices

    create_product(
        tenant.id, {"sku": "MUG-1", "title": "Mug", "gtin": "4006381333931", "status": "active"}
    )
    connect(tenant, "amazon", "sandbox")
    price_listing_now(tenant.id, "MUG-1", "amazon")
    sync_product(tenant.id, "MUG-1", ["amazon"], "test")
    (listing,) = Listing.select()
    Listing.update(sync_status="in_sync", last_synced_at=1_000).execute()

    def record(price, pushed_at):
        with write_transaction():
            record_pushed_prices([AcceptedPrice(listing.id, Decimal(price), 2_000, pushed_at)])
        return Listing.get_by_id(listing.id)

    # the listing push was recorded (1,000) before this price's push began (1,500)
    kept = record("17.25", 1_500)
    assert (kept.price, kept.sync_status, kept.last_synced_at) == (
        Decimal("17.25"),
        "in_sync",
        2_000,
    )
    # recorded (2,000) after the next price's push began (1,900): pushed again
    again = record("18.50", 1_900)
    assert (again.price, again.sync_status) == (Decimal("18.50"), "pending")
    assert again.next_push_at is not None
    # a resumed push (when it began is not known): always pushed again
    Listing.update(sync_status="in_sync").where(Listing.id == listing.id).execute()
    assert record("19.00", None).sync_status == "pending"
