"""A listing sold from several Shopify locations (issue 33: "a listing's quantity is pushed
to its location(s)"): through HTTP with a running worker against the contract fake, two of
our warehouses mapped to two Shopify locations, a third location we do not map.

Each location gets the part of the listing's quantity its warehouses hold (the allocation
rules decide the total: ``allocation.available_by_place`` and ``spread``), in one batched
``inventorySetQuantities`` with a compare quantity per location; a stock change in one
warehouse moves that location only; a change made in Shopify at one location (compare
mismatch) redoes the listing from the current state; the unmapped location is never
written.
"""

import pytest

from commerce_api.marketplaces.allocation import spread
from commerce_api.marketplaces.models import SyncAttempt
from tests.marketplaces.test_shopify import (
    MARKETPLACE,
    assert_contract_kept,
    fake,  # noqa: F401 (the fixture)
    listing_of,
    running_worker,
)
from tests.support.orders_support import connect, make_own_warehouse, make_products, stock_up
from tests.support.products_support import price_listing
from tests.support.waiting import wait_for

pytestmark = pytest.mark.slow


def test_spread_gives_each_place_its_part_and_the_rest_to_the_largest_fractions():
    assert spread(10, {"a": 6, "b": 4}) == {"a": 6, "b": 4}
    assert spread(5, {"a": 6, "b": 4}) == {"a": 3, "b": 2}
    assert spread(3, {"a": 1, "b": 1, "c": 1}) == {"a": 1, "b": 1, "c": 1}
    assert spread(2, {"a": 1, "b": 1, "c": 1}) == {"a": 1, "b": 1, "c": 0}
    assert spread(7, {"a": 0, "b": 0}) == {"a": 7, "b": 0}  # a fixed quantity, no stock
    assert spread(0, {"a": 5, "b": 5}) == {"a": 0, "b": 0}
    assert spread(4, {}) == {}


def put_stock(client, headers, sku, warehouse, quantity):
    response = client.put(
        f"/api/inventory/{sku}",
        json={"warehouse_id": warehouse, "quantity": quantity, "reason": "cycle_count"},
        headers=headers,
    )
    assert response.status_code == 200, response.get_json()


def test_each_mapped_location_gets_what_its_warehouses_hold(  # noqa: PLR0915
    client,
    headers,
    tenant,
    database_url,
    fake,  # noqa: F811
):
    make_products(client, headers, "MUG-1", "TOWEL-1")
    east = fake.location
    west = fake.add_location("West shop")
    unmapped = fake.add_location("Pop-up (not ours)")
    fake.add_variant("MUG-1", quantity=0)
    fake.add_variant("TOWEL-1", quantity=0)
    first = make_own_warehouse(tenant, "East warehouse")
    second = make_own_warehouse(tenant, "West warehouse")
    stock_up(tenant, first, {"MUG-1": 6, "TOWEL-1": 5})
    stock_up(tenant, second, {"MUG-1": 4})
    settings = fake.settings(first, locations={first: east, second: west})
    connect(tenant, MARKETPLACE, "shopify", settings=settings, credentials=fake.credentials())
    price_listing(client, headers, "MUG-1", MARKETPLACE, 9.99)
    # the allocation rules decide the total: half of what the warehouses hold
    response = client.patch(
        f"/api/products/TOWEL-1/listings/{MARKETPLACE}",
        json={"price": 5.0, "allocation_pct": 50},
        headers=headers,
    )
    assert response.status_code == 200, response.get_json()
    with running_worker(database_url):
        assert wait_for(lambda: listing_of(client, headers, "MUG-1")["sync_status"] == "in_sync")
        assert wait_for(lambda: listing_of(client, headers, "TOWEL-1")["sync_status"] == "in_sync")
        assert (fake.quantity("MUG-1", east), fake.quantity("MUG-1", west)) == (6, 4)
        assert listing_of(client, headers, "MUG-1")["quantity"] == 10
        assert (fake.quantity("TOWEL-1", east), fake.quantity("TOWEL-1", west)) == (2, 0)
        assert listing_of(client, headers, "TOWEL-1")["quantity"] == 2

        # a stock change in one warehouse moves its location only
        sets_before = len(fake.sets)
        put_stock(client, headers, "MUG-1", second, 9)
        assert wait_for(lambda: fake.quantity("MUG-1", west) == 9, 20)
        assert wait_for(lambda: listing_of(client, headers, "MUG-1")["quantity"] == 15)
        assert fake.quantity("MUG-1", east) == 6
        item = fake.variant_of("MUG-1")["inventoryItem"]["id"]
        later = [s[:4] for s in fake.sets[sets_before:] if s[0] == item]
        assert (item, west, 9, 4) in later  # compared with what we last set there

        # someone changes the west location in the Shopify admin, then our east stock moves
        mismatches = SyncAttempt.select().where(SyncAttempt.operation == "compare_mismatch")
        before = mismatches.count()
        fake.set_quantity("MUG-1", 2, location=west)
        put_stock(client, headers, "MUG-1", first, 1)
        assert wait_for(lambda: fake.quantity("MUG-1", east) == 1, 20)
        assert wait_for(lambda: fake.quantity("MUG-1", west) == 9, 20)
        assert wait_for(lambda: listing_of(client, headers, "MUG-1")["sync_status"] == "in_sync")
        assert listing_of(client, headers, "MUG-1")["quantity"] == 10
    assert mismatches.count() == before + 1
    (row,) = mismatches.where(SyncAttempt.sku == "MUG-1")
    assert row.error_code == "COMPARE_MISMATCH" and west in row.error_message
    # never overwritten blindly: the west push that won compared with what Shopify showed
    assert [s[2:4] for s in fake.sets if s[0] == item and s[1] == west][-1] == (9, 2)
    # a location we do not map is never written
    assert not [s for s in fake.sets if s[1] == unmapped]
    assert fake.throttled == 0, "\n".join(map(str, fake.journal))
    assert_contract_kept(fake)
