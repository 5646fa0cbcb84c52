"""Listings: the listing API, the desired state a push carries, and the push's record.

The push service runs in-process here (one pass, as ``worker --once`` runs it) against a
marketplace on 127.0.0.1; tests/marketplaces/test_listing_sync_http.py runs it in a worker process.
"""

import threading
from decimal import Decimal

import pytest

from commerce_api.db import write_transaction
from commerce_api.events.models import Event
from commerce_api.inventory.services import create_warehouse
from commerce_api.marketplaces import listing_push
from commerce_api.marketplaces.listing_push_loop import in_turn, run_loop
from commerce_api.marketplaces.product_sync import sync_product
from commerce_api.products.models import Listing
from tests.support.factories import headers_for
from tests.support.listing_marketplace import ListingMarketplace
from tests.support.orders_support import connect, make_own_warehouse, make_products, stock_up
from tests.support.products_support import price_listing_now


@pytest.fixture
def marketplace():
    with ListingMarketplace() as fake:
        yield fake


@pytest.fixture
def listed(app, client, headers, tenant, marketplace):
    """MUG-1 with 10 in an own warehouse, listed on the http marketplace ``mirakl``."""
    make_products(client, headers, "MUG-1")
    warehouse = make_own_warehouse(tenant)
    stock_up(tenant, warehouse, {"MUG-1": 10})
    connect(tenant, "mirakl", "http", base_url=marketplace.url)
    with app.app_context():
        price_listing_now(tenant.id, "MUG-1", "mirakl")
        result = sync_product(tenant.id, "MUG-1", ["mirakl"], created_by="test")
    assert result["succeeded"] == 1
    return {"warehouse": warehouse, "listing": Listing.get()}


def push_pending(app):
    """One pass of the push service (what ``worker --once`` runs)."""
    stop = threading.Event()
    stop.set()
    with app.app_context():
        return run_loop(app.config, stop)


def set_stock(client, headers, warehouse, quantity, sku="MUG-1"):
    response = client.put(
        f"/api/inventory/{sku}",
        json={"warehouse_id": warehouse, "quantity": quantity, "reason": "cycle_count"},
        headers=headers,
    )
    assert response.status_code == 200, response.get_json()


def listing_json(client, headers, sku="MUG-1"):
    response = client.get(f"/api/products/{sku}", headers=headers)
    assert response.status_code == 200
    (listing,) = response.get_json()["data"]["listings"]
    return listing


def test_get_product_shows_the_listing_fields(client, headers, listed):
    listing = listing_json(client, headers)
    assert listing == {
        "marketplace": "mirakl",
        "external_id": "EXT-MUG-1",
        "price": 12.5,  # as set before the push (the marketplace's answer names none)
        "currency": None,
        "quantity": 10,
        "fulfilled_by": "merchant",
        "stock_buffer": 0,
        "max_quantity": None,
        "allocation_pct": 100,
        "fixed_quantity": None,
        "warehouse_ids": None,
        "status": "active",
        "sync_status": "in_sync",
        "hold_reason": None,
        "last_synced_at": listing["last_synced_at"],
        "last_sync_error": None,
        "submission": None,
    }
    assert listing["last_synced_at"].endswith("Z")


def test_patch_a_listing_and_the_worker_pushes_it(app, client, headers, listed, marketplace):
    response = client.patch(
        "/api/products/MUG-1/listings/mirakl",
        json={"price": 24.99, "stock_buffer": 3},
        headers=headers,
    )
    assert response.status_code == 200, response.get_json()
    body = response.get_json()["data"]
    assert (body["price"], body["stock_buffer"], body["sync_status"]) == (24.99, 3, "pending")
    pushes = len(marketplace.pushes)
    push_pending(app)
    (push,) = marketplace.pushes[pushes:]
    assert push["body"]["price"] == 24.99 and push["body"]["quantity"] == 7
    listing = Listing.get()
    assert push["idempotency_key"] == f"{listing.id}:{listing.version}"
    assert listing_json(client, headers)["sync_status"] == "in_sync"
    assert listing_json(client, headers)["quantity"] == 7

    # a buffer above the stock offers 0, never less
    client.patch("/api/products/MUG-1/listings/mirakl", json={"stock_buffer": 50}, headers=headers)
    push_pending(app)
    assert marketplace.last_quantity("MUG-1") == 0

    # inactive: the marketplace is told to take it off sale
    response = client.patch(
        "/api/products/MUG-1/listings/mirakl", json={"status": "inactive"}, headers=headers
    )
    assert response.get_json()["data"]["status"] == "inactive"
    push_pending(app)
    assert marketplace.pushes[-1]["body"]["status"] == "inactive"


def test_a_patch_to_the_same_values_changes_nothing(client, headers, listed):
    before = Listing.get()
    response = client.patch(
        "/api/products/MUG-1/listings/mirakl",
        json={"stock_buffer": 0, "status": "active"},
        headers=headers,
    )
    assert response.status_code == 200
    assert response.get_json()["data"]["sync_status"] == "in_sync"
    assert Listing.get().version == before.version


@pytest.mark.parametrize(
    "body",
    [
        {"price": -1},
        {"price": 0},
        {"price": 1.234},
        {"price": "12.00"},
        {"price": None},
        {"price": 1e20},
        {"stock_buffer": -1},
        {"stock_buffer": 1.5},
        {"stock_buffer": "2"},
        {"stock_buffer": True},
        {"status": "paused"},
        {"status": "archived"},
        {"quantity": 5},
        {"marketplace": "ebay"},
        {"price": 10, "stock_buffer": -1},  # one bad field refuses the whole change
    ],
)
def test_bad_listing_input_is_refused_and_changes_nothing(
    app, client, headers, listed, marketplace, body
):
    before = Listing.get().__data__.copy()
    response = client.patch("/api/products/MUG-1/listings/mirakl", json=body, headers=headers)
    assert response.status_code in (400, 422), response.get_json()
    assert response.get_json()["error"]["code"] in ("VALIDATION_ERROR", "INVALID_JSON")
    assert Listing.get().__data__ == before
    pushes = len(marketplace.pushes)
    push_pending(app)
    assert len(marketplace.pushes) == pushes


def test_unknown_listing_sku_or_scope(app, client, headers, tenant, listed):
    response = client.patch(
        "/api/products/MUG-1/listings/ebay", json={"price": 10}, headers=headers
    )
    assert response.status_code == 404
    assert response.get_json()["error"]["code"] == "LISTING_NOT_FOUND"
    response = client.patch(
        "/api/products/NOPE/listings/mirakl", json={"price": 10}, headers=headers
    )
    assert response.status_code == 404
    assert response.get_json()["error"]["code"] == "PRODUCT_NOT_FOUND"
    response = client.patch("/api/products/MUG-1/listings/mirakl", json={}, headers=headers)
    assert response.status_code == 400
    reader = headers_for(tenant, scopes=["products:read"])
    response = client.patch(
        "/api/products/MUG-1/listings/mirakl", json={"price": 9}, headers=reader
    )
    assert response.status_code == 403
    other = headers_for()  # another tenant does not see this listing at all
    response = client.patch("/api/products/MUG-1/listings/mirakl", json={"price": 9}, headers=other)
    assert response.status_code == 404
    assert Listing.get().price == Decimal("12.50") and Listing.get().sync_status == "in_sync"


def test_a_listing_fulfilled_by_the_marketplace_never_pushes_a_quantity(
    app, client, headers, tenant, listed, marketplace
):
    fba = create_warehouse(tenant.id, {"name": "FBA", "type": "FBA", "marketplace": "mirakl"})
    from commerce_api.inventory.reservations import set_marketplace_stock

    set_marketplace_stock(tenant.id, fba["id"], "MUG-1", 40, created_by="test")
    push_pending(app)
    assert "quantity" not in marketplace.pushes[-1]["body"]
    set_stock(client, headers, listed["warehouse"], 3)
    push_pending(app)
    assert "quantity" not in marketplace.pushes[-1]["body"]
    assert listing_json(client, headers)["sync_status"] == "in_sync"


def test_archiving_a_product_pushes_its_listings_inactive(
    app, client, headers, listed, marketplace
):
    assert client.delete("/api/products/MUG-1", headers=headers).status_code == 204
    assert listing_json(client, headers)["status"] == "inactive"
    push_pending(app)
    pushed = marketplace.pushes[-1]["body"]
    assert pushed["status"] == "inactive" and pushed["sku"] == "MUG-1"


def test_product_edits_are_pushed(app, client, headers, listed, marketplace):
    response = client.patch("/api/products/MUG-1", json={"title": "Blue mug"}, headers=headers)
    assert response.status_code == 200
    push_pending(app)
    assert marketplace.pushes[-1]["body"]["title"] == "Blue mug"


def test_a_push_killed_halfway_is_finished_later_with_the_same_key(
    app, client, headers, listed, marketplace
):
    set_stock(client, headers, listed["warehouse"], 6)
    listing = Listing.get()
    with app.app_context():
        # a worker claims the listing (the intent) and dies before recording anything
        (claimed,) = listing_push.claim(
            listing.tenant_id, "mirakl", 5, 1, "dead-worker:1", listing_push.now_ms()
        )
        listing_push.push(listing_sync_connection(listing), claimed)
    assert Listing.get().sync_status == "pending"
    assert Listing.get().pushing_version == claimed.version
    first = marketplace.pushes[-1]
    # its lease has run out (1 ms): the next pass pushes the same version again
    push_pending(app)
    again = marketplace.pushes[-1]
    assert again["idempotency_key"] == first["idempotency_key"] == f"{listing.id}:{claimed.version}"
    assert again["body"] == first["body"]
    final = Listing.get()
    assert (final.sync_status, final.quantity, final.synced_version) == (
        "in_sync",
        6,
        final.version,
    )
    # the dead worker's outcome, arriving late, writes nothing: its lease is gone
    late = listing_push.PushOutcome(claimed, 0, "rejected", None, "LATE", "late")
    with write_transaction():
        assert listing_push.record([late], 0) == 0
    assert Listing.get().sync_status == "in_sync"
    assert Event.select().where(Event.type == "listing.sync_failed").count() == 0


def listing_sync_connection(listing):
    from commerce_api.marketplaces.services import connection_for

    return connection_for(listing.tenant_id, listing.marketplace)


def test_a_change_during_a_push_is_pushed_after_it(app, client, headers, listed, marketplace):
    set_stock(client, headers, listed["warehouse"], 6)
    listing = Listing.get()
    with app.app_context():
        (claimed,) = listing_push.claim(
            listing.tenant_id, "mirakl", 5, 60_000, "w:1", listing_push.now_ms()
        )
        outcome = listing_push.push(listing_sync_connection(listing), claimed)
        set_stock(client, headers, listed["warehouse"], 4)  # came while the push was out
        with write_transaction():
            assert listing_push.record([outcome], spacing_ms=0) == 1
    assert Listing.get().sync_status == "pending"  # the push carried 6, not 4
    push_pending(app)
    assert marketplace.last_quantity("MUG-1") == 4
    assert Listing.get().sync_status == "in_sync"


def test_unavailable_backs_off_honouring_retry_after():
    assert listing_push.backoff_ms(0) == 1000
    assert listing_push.backoff_ms(3) == 8000
    assert listing_push.backoff_ms(30) == 300_000
    assert listing_push.backoff_ms(0, retry_after=7) == 7000


def test_tenants_then_connections_take_turns():
    due = [("t1", "amazon"), ("t1", "ebay"), ("t1", "etsy"), ("t2", "amazon")]
    assert in_turn(due, 0) == [("t1", "amazon"), ("t2", "amazon"), ("t1", "ebay"), ("t1", "etsy")]
    assert in_turn(due, 1) == [("t2", "amazon"), ("t1", "amazon"), ("t1", "ebay"), ("t1", "etsy")]
    assert in_turn([], 3) == []


def test_desired_quantity_never_goes_below_zero():
    assert listing_push.desired_quantity(10, 3) == 7
    assert listing_push.desired_quantity(2, 3) == 0
    assert listing_push.desired_quantity(-4, 0) == 0


def test_unavailable_keeps_the_listing_pending_and_honours_retry_after(
    app, client, headers, listed, marketplace
):
    marketplace.busy.add("MUG-1")
    set_stock(client, headers, listed["warehouse"], 2)
    started = listing_push.now_ms()
    push_pending(app)
    listing = Listing.get()
    assert listing.sync_status == "pending" and listing.push_failures == 1
    assert listing.last_sync_error.startswith("HTTP_429")
    assert started + 6_000 <= listing.next_push_at <= listing_push.now_ms() + 7_000
    assert listing.lease_token is None
    pushes = len(marketplace.pushes)
    push_pending(app)  # not due before Retry-After has passed
    assert len(marketplace.pushes) == pushes
    assert listing_json(client, headers)["sync_status"] == "pending"


def test_a_cancelled_order_gives_its_stock_back_to_the_listing(
    app, client, headers, tenant, listed, marketplace
):
    from commerce_api.orders.ingest import upsert_order
    from tests.support.orders_support import order_body, run_job

    order = order_body("C-1", marketplace="mirakl")
    order["line_items"] = [order["line_items"][0]]  # 2 x MUG-1
    _, order_id = upsert_order(tenant.id, order, source="import")
    push_pending(app)
    assert marketplace.last_quantity("MUG-1") == 8
    response = client.post(f"/api/orders/{order_id}/cancel", json={"reason": "other"},
                           headers=headers)  # fmt: skip
    assert response.status_code == 202
    with app.app_context():
        result, error = run_job(response.get_json()["data"]["cancellation"]["job_id"])
    assert error is None, error
    push_pending(app)
    assert marketplace.last_quantity("MUG-1") == 10
    assert listing_json(client, headers)["sync_status"] == "in_sync"


def test_the_push_loop_survives_a_failed_claim(
    app, client, headers, listed, marketplace, monkeypatch
):
    set_stock(client, headers, listed["warehouse"], 5)
    real_claim, calls = listing_push.claim, []

    def flaky_claim(*args):
        calls.append(args)
        if len(calls) == 1:
            raise RuntimeError("database is busy")
        return real_claim(*args)

    monkeypatch.setattr(listing_push, "claim", flaky_claim)
    push_pending(app)
    assert len(calls) >= 2 and marketplace.last_quantity("MUG-1") == 5
    assert Listing.get().sync_status == "in_sync"
