"""Bundles (DESIGN 14) over HTTP: components on create and PATCH, the derived inventory
record, and orders for a bundle reserving, shipping and releasing its components."""

from decimal import Decimal

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from commerce_api.inventory.reservations import set_marketplace_stock
from commerce_api.inventory.services import create_warehouse, get_record, set_stock
from commerce_api.orders.ingest import upsert_order
from commerce_api.products.models import BundleComponent, Listing
from commerce_api.products.services import create_product as create_product_row
from tests.support.factories import create_product, make_tenant
from tests.support.inventory_helpers import check_ledger
from tests.support.orders_support import order_body


@pytest.fixture
def parts(client, headers, tenant):
    """Two components with stock in an own warehouse: MUG-1 (10) and TOWEL-1 (7)."""
    warehouse = create_warehouse(tenant.id, {"name": "Main"})["id"]
    for sku, quantity in (("MUG-1", 10), ("TOWEL-1", 7)):
        create_product(client, headers, sku=sku)
        put(tenant, sku, warehouse, quantity)
    return {"warehouse": warehouse, "tenant": tenant}


def put(tenant, sku, warehouse, quantity):
    body = {"warehouse_id": warehouse, "quantity": quantity, "reason": "cycle_count"}
    set_stock(tenant.id, sku, body, "test")


def make_bundle(client, headers, sku="GIFT-1", components=None):
    components = components or [{"sku": "MUG-1", "quantity": 2}, {"sku": "TOWEL-1", "quantity": 1}]
    body = {"sku": sku, "title": "Gift set", "components": components}
    response = client.post("/api/products", json=body, headers=headers)
    assert response.status_code == 201, response.get_json()
    return response.get_json()["data"]


def record(client, headers, sku):
    response = client.get(f"/api/inventory/{sku}", headers=headers)
    assert response.status_code == 200, response.get_json()
    return response.get_json()["data"]


def product_state():
    return sorted(
        BundleComponent.select(
            BundleComponent.bundle, BundleComponent.sku, BundleComponent.quantity
        ).tuples()
    )


def test_a_bundle_shows_its_components_and_a_derived_record(client, headers, parts):
    created = make_bundle(client, headers)
    assert created["components"] == [
        {"sku": "MUG-1", "quantity": 2},
        {"sku": "TOWEL-1", "quantity": 1},
    ]
    shown = client.get("/api/products/GIFT-1", headers=headers).get_json()["data"]
    assert shown["components"] == created["components"]
    derived = record(client, headers, "GIFT-1")
    assert derived["total_available"] == 5  # min(10 // 2, 7 // 1)
    assert derived["total_reserved"] == 0 and derived["warehouses"] == []
    assert derived["status"] == "normal"
    put(parts["tenant"], "MUG-1", parts["warehouse"], 3)
    assert record(client, headers, "GIFT-1")["total_available"] == 1
    put(parts["tenant"], "MUG-1", parts["warehouse"], 1)
    assert record(client, headers, "GIFT-1")["status"] == "out_of_stock"


def test_components_change_by_patch_and_can_be_removed(client, headers, parts):
    make_bundle(client, headers)
    response = client.patch(
        "/api/products/GIFT-1",
        json={"components": [{"sku": "TOWEL-1", "quantity": 3}]},
        headers=headers,
    )
    assert response.status_code == 200, response.get_json()
    assert response.get_json()["data"]["components"] == [{"sku": "TOWEL-1", "quantity": 3}]
    assert record(client, headers, "GIFT-1")["total_available"] == 2
    response = client.patch("/api/products/GIFT-1", json={"components": []}, headers=headers)
    assert response.get_json()["data"]["components"] == []
    assert client.get("/api/inventory/GIFT-1", headers=headers).status_code == 404


@pytest.mark.parametrize(
    "components,status,code",
    [
        ([{"sku": "GIFT-1", "quantity": 1}], 422, "INVALID_BUNDLE_COMPONENT"),
        ([{"sku": "MUG-1", "quantity": 0}], 422, "VALIDATION_ERROR"),
        ([{"sku": "MUG-1", "quantity": -1}], 422, "VALIDATION_ERROR"),
        ([{"sku": "MUG-1", "quantity": 1.5}], 422, "VALIDATION_ERROR"),
        ([{"sku": "MUG-1"}], 422, "VALIDATION_ERROR"),
        ([{"sku": "NOPE", "quantity": 1}], 404, "PRODUCT_NOT_FOUND"),
        (
            [{"sku": "MUG-1", "quantity": 1}, {"sku": "MUG-1", "quantity": 2}],
            422,
            "INVALID_BUNDLE_COMPONENT",
        ),
        ([{"sku": "OTHER-SET", "quantity": 1}], 422, "INVALID_BUNDLE_COMPONENT"),
        ([{"sku": "FBA-ONLY", "quantity": 1}], 422, "INVALID_BUNDLE_COMPONENT"),
    ],
)
def test_bad_components_are_refused_and_change_nothing(
    client, headers, parts, components, status, code
):
    make_bundle(client, headers, sku="OTHER-SET", components=[{"sku": "TOWEL-1", "quantity": 1}])
    create_product(client, headers, sku="FBA-ONLY")
    fba = create_warehouse(
        parts["tenant"].id, {"name": "FBA", "type": "FBA", "marketplace": "amazon"}
    )["id"]
    set_marketplace_stock(parts["tenant"].id, fba, "FBA-ONLY", 4, created_by="test")
    before = product_state()
    body = {"sku": "GIFT-1", "title": "Gift", "components": components}
    response = client.post("/api/products", json=body, headers=headers)
    assert response.status_code == status, response.get_json()
    assert response.get_json()["error"]["code"] == code
    assert client.get("/api/products/GIFT-1", headers=headers).status_code == 404
    # the same on PATCH of an existing product
    create_product(client, headers, sku="GIFT-1")
    response = client.patch(
        "/api/products/GIFT-1", json={"components": components}, headers=headers
    )
    assert response.status_code == status, response.get_json()
    assert response.get_json()["error"]["code"] == code
    assert product_state() == before


def test_a_component_cannot_become_a_bundle_nor_a_stocked_product(client, headers, parts):
    make_bundle(client, headers)
    response = client.patch(
        "/api/products/MUG-1",
        json={"components": [{"sku": "TOWEL-1", "quantity": 1}]},
        headers=headers,
    )
    assert response.status_code == 422
    assert response.get_json()["error"]["code"] == "INVALID_BUNDLE_COMPONENT"
    create_product(client, headers, sku="STOCKED")
    put(parts["tenant"], "STOCKED", parts["warehouse"], 2)
    response = client.patch(
        "/api/products/STOCKED",
        json={"components": [{"sku": "TOWEL-1", "quantity": 1}]},
        headers=headers,
    )
    assert response.status_code == 409
    assert response.get_json()["error"]["code"] == "BUNDLE_STOCK_IS_DERIVED"


def test_an_archived_component_makes_the_bundle_unavailable(client, headers, parts):
    make_bundle(client, headers)
    assert record(client, headers, "GIFT-1")["total_available"] == 5
    assert client.delete("/api/products/TOWEL-1", headers=headers).status_code == 204
    assert record(client, headers, "GIFT-1")["total_available"] == 0


# -- orders for a bundle ------------------------------------------------------------------------


def bundle_order(external_id, quantity=2, status="pending"):
    line = {
        "external_line_item_id": f"{external_id}-L1",
        "sku": "GIFT-1",
        "title": "Gift set",
        "quantity": quantity,
        "unit_price": 10.0,
        "line_total": 10.0 * quantity,
    }
    return order_body(external_id, line_items=[line], status=status, total_amount=10.0 * quantity)


def levels(client, headers):
    return {
        sku: (r["total_on_hand"], r["total_reserved"])
        for sku in ("MUG-1", "TOWEL-1")
        for r in [record(client, headers, sku)]
    }


def test_a_bundle_order_reserves_ships_and_releases_its_components(client, headers, parts):
    tenant = parts["tenant"]
    make_bundle(client, headers)
    upsert_order(tenant.id, bundle_order("B-1", 2), source="import")
    assert levels(client, headers) == {"MUG-1": (10, 4), "TOWEL-1": (7, 2)}
    assert record(client, headers, "GIFT-1")["total_available"] == 3  # min(6 // 2, 5)
    # an open order holds the components: they cannot change
    response = client.patch(
        "/api/products/GIFT-1",
        json={"components": [{"sku": "MUG-1", "quantity": 1}]},
        headers=headers,
    )
    assert response.status_code == 409
    assert response.get_json()["error"]["code"] == "OPEN_ORDERS_EXIST"
    upsert_order(tenant.id, bundle_order("B-1", 2, status="shipped"), source="import")
    assert levels(client, headers) == {"MUG-1": (6, 0), "TOWEL-1": (5, 0)}
    upsert_order(tenant.id, bundle_order("B-2", 1), source="import")
    assert levels(client, headers) == {"MUG-1": (6, 2), "TOWEL-1": (5, 1)}
    upsert_order(tenant.id, bundle_order("B-2", 1, status="cancelled"), source="import")
    assert levels(client, headers) == {"MUG-1": (6, 0), "TOWEL-1": (5, 0)}
    ledger = client.get(
        "/api/inventory/MUG-1/adjustments?quantity_type=all&limit=200", headers=headers
    ).get_json()["data"]
    assert sorted(a["reason"] for a in ledger) == [
        "cycle_count",
        "release",
        "reservation",
        "reservation",
        "sale",
        "sale",
    ]
    check_ledger()
    # no order open any more: the components may change
    response = client.patch(
        "/api/products/GIFT-1",
        json={"components": [{"sku": "MUG-1", "quantity": 1}]},
        headers=headers,
    )
    assert response.status_code == 200


def test_a_component_change_marks_the_bundle_listings_pending(client, headers, parts):
    tenant = parts["tenant"]
    bundle = make_bundle(client, headers)
    for marketplace in ("ebay", "amazon_de"):
        Listing.create(
            id=f"listing_{marketplace}",
            tenant=tenant.id,
            product=bundle["id"],
            marketplace=marketplace,
            price=Decimal("20.00"),  # a listing without a price is held, not pending
            quantity=5,
        )
    assert {x.sync_status for x in Listing.select()} == {"in_sync"}
    body = {"warehouse_id": parts["warehouse"], "delta": -1, "reason": "damage"}
    response = client.post("/api/inventory/TOWEL-1/adjustments", json=body, headers=headers)
    assert response.status_code == 201
    assert {x.sync_status for x in Listing.select()} == {"pending"}
    assert {x.version for x in Listing.select()} == {1}


# -- availability against a reference model ------------------------------------------------------


@pytest.mark.slow
@settings(
    max_examples=20,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
    phases=(Phase.explicit, Phase.generate),
)
@given(
    stock=st.lists(st.integers(0, 30), min_size=4, max_size=4),
    recipe=st.lists(st.tuples(st.integers(0, 3), st.integers(1, 5)), min_size=1, max_size=4),
    orders=st.lists(st.integers(1, 4), max_size=4),
)
def test_bundle_availability_follows_orders_like_the_reference(app, stock, recipe, orders):
    """Random stock, recipe and bundle orders: the derived record is always the minimum over
    components of floor(available / quantity), no component is ever reserved below 0 or
    above its stock, and the ledger adds up."""
    tenant = make_tenant()
    warehouse = create_warehouse(tenant.id, {"name": "Main"})["id"]
    for n, quantity in enumerate(stock):
        create_product_row(tenant.id, {"sku": f"C{n}", "title": "c"})
        if quantity:
            put(tenant, f"C{n}", warehouse, quantity)
    wanted = {}
    for index, quantity in recipe:
        wanted[f"C{index}"] = quantity
    components = [{"sku": s, "quantity": q} for s, q in wanted.items()]
    create_product_row(tenant.id, {"sku": "GIFT-1", "title": "g", "components": components})
    on_hand = {f"C{n}": q for n, q in enumerate(stock)}
    reserved = dict.fromkeys(on_hand, 0)

    for n, quantity in enumerate(orders):
        upsert_order(tenant.id, bundle_order(f"O-{n}", quantity), source="import")
        # the reference: what each component can give, in full or in part (a shortage)
        for sku, per in wanted.items():
            reserved[sku] += min(per * quantity, on_hand[sku] - reserved[sku])
        expected = min((on_hand[s] - reserved[s]) // q for s, q in wanted.items())
        assert get_record(tenant.id, "GIFT-1")["total_available"] == expected
        for sku in on_hand:
            if sku in wanted or on_hand[sku]:
                actual = get_record(tenant.id, sku) if on_hand[sku] else None
                if actual is not None:
                    assert 0 <= actual["total_reserved"] <= actual["total_on_hand"]
                    assert actual["total_reserved"] == reserved[sku]
    check_ledger()


def inventory_list(client, headers, query=""):
    response = client.get(f"/api/inventory?limit=200{query}", headers=headers)
    assert response.status_code == 200, response.get_json()
    return response.get_json()


def test_the_inventory_list_shows_stock_held_never_a_bundle(client, headers, parts):
    """DESIGN 14, docs/decisions.md: the list is of SKUs that hold stock; a bundle's derived
    record is at GET /api/inventory/:sku only. A product that had an (empty) record before
    it became a bundle loses it: no list, filter or total shows the bundle."""
    tenant, warehouse = parts["tenant"], parts["warehouse"]
    create_product(client, headers, sku="WAS-STOCKED")
    put(tenant, "WAS-STOCKED", warehouse, 2)
    put(tenant, "WAS-STOCKED", warehouse, 0)  # an empty record, out_of_stock
    before = inventory_list(client, headers)
    assert "WAS-STOCKED" in [r["sku"] for r in before["data"]]
    out_before = inventory_list(client, headers, "&status=out_of_stock")["meta"]["total"]
    response = client.patch(
        "/api/products/WAS-STOCKED",
        json={"components": [{"sku": "MUG-1", "quantity": 2}]},
        headers=headers,
    )
    assert response.status_code == 200, response.get_json()
    make_bundle(client, headers)
    listed = inventory_list(client, headers)
    assert [r["sku"] for r in listed["data"]] == ["MUG-1", "TOWEL-1"]
    assert listed["meta"]["total"] == 2 == before["meta"]["total"] - 1
    out = inventory_list(client, headers, "&status=out_of_stock")["meta"]["total"]
    assert out == out_before - 1
    for query in ("&sku=GIFT-1", "&sku=WAS-STOCKED", f"&warehouse_id={warehouse}"):
        assert all(r["sku"] not in ("GIFT-1", "WAS-STOCKED") for r in
                   inventory_list(client, headers, query)["data"])  # fmt: skip
    # the single GET derives both; the former product keeps its ledger history
    assert record(client, headers, "WAS-STOCKED")["total_available"] == 5
    assert record(client, headers, "GIFT-1")["total_available"] == 5
    history = client.get("/api/inventory/WAS-STOCKED/adjustments", headers=headers)
    assert history.status_code == 200
    assert len(history.get_json()["data"]) == 2
    history = client.get("/api/inventory/GIFT-1/adjustments", headers=headers)
    assert history.status_code == 200 and history.get_json()["data"] == []
    # no longer a bundle: a stock level makes it a listed SKU again
    client.patch("/api/products/WAS-STOCKED", json={"components": []}, headers=headers)
    assert client.get("/api/inventory/WAS-STOCKED", headers=headers).status_code == 404
    put(tenant, "WAS-STOCKED", warehouse, 4)
    assert record(client, headers, "WAS-STOCKED")["total_available"] == 4
    assert "WAS-STOCKED" in [r["sku"] for r in inventory_list(client, headers)["data"]]
    assert inventory_list(client, headers)["meta"]["total"] == 3


def test_a_product_with_stock_in_transit_cannot_become_a_bundle(client, headers, parts):
    tenant, source = parts["tenant"], parts["warehouse"]
    target = create_warehouse(tenant.id, {"name": "Second"})["id"]
    create_product(client, headers, sku="MOVING")
    put(tenant, "MOVING", source, 3)
    body = {
        "from_warehouse_id": source,
        "to_warehouse_id": target,
        "lines": [{"sku": "MOVING", "quantity": 3}],
    }
    transfer = client.post("/api/inventory/transfers", json=body, headers=headers).get_json()
    shipped = client.post(f"/api/inventory/transfers/{transfer['data']['id']}/ship",
                          headers=headers)  # fmt: skip
    assert shipped.status_code == 200, shipped.get_json()
    response = client.patch(
        "/api/products/MOVING",
        json={"components": [{"sku": "TOWEL-1", "quantity": 1}]},
        headers=headers,
    )
    assert response.status_code == 409
    assert response.get_json()["error"]["code"] == "BUNDLE_STOCK_IS_DERIVED"
    shown = client.get("/api/products/MOVING", headers=headers).get_json()["data"]
    assert shown["components"] == []


def test_the_migration_drops_the_record_a_bundle_kept(client, headers, parts):
    """0110: a bundle made before ``drop_own_record`` kept its empty record; the migration
    removes it (and the list's totals follow), leaving the components' records alone."""
    import importlib

    from commerce_api.db import db
    from commerce_api.inventory.models import InventorySummary

    make_bundle(client, headers)
    bundle = client.get("/api/products/GIFT-1", headers=headers).get_json()["data"]["id"]
    InventorySummary.insert(product=bundle, tenant=parts["tenant"].id, sku="GIFT-1").execute()
    assert inventory_list(client, headers)["meta"]["total"] == 3
    migration = importlib.import_module("commerce_api.migrations.0110_bundle_records")
    migration.up(None, db)
    listed = inventory_list(client, headers)
    assert [r["sku"] for r in listed["data"]] == ["MUG-1", "TOWEL-1"]
    assert listed["meta"]["total"] == 2
    assert record(client, headers, "GIFT-1")["total_available"] == 5


def test_a_product_get_reads_the_product_and_its_components_in_one_statement(client, headers):
    """GET /api/products/:sku costs what it cost before bundles existed (issue 34: the
    product GET may not get slower): besides authentication, two statements for a product
    without listings (the product with its components, its listings)."""
    import logging

    for sku in ("PLAIN-1", "PART-1", "PART-2"):
        body = {"sku": sku, "title": sku, "status": "active"}
        assert client.post("/api/products", json=body, headers=headers).status_code == 201
    components = [{"sku": "PART-2", "quantity": 1}, {"sku": "PART-1", "quantity": 3}]
    body = {"sku": "SET-1", "title": "Set", "status": "active", "components": components}
    assert client.post("/api/products", json=body, headers=headers).status_code == 201

    class Statements(logging.Handler):
        def __init__(self):
            super().__init__()
            self.count = 0

        def emit(self, record):
            message = record.getMessage()
            statement = message.startswith("(")  # not the pool's own messages
            if statement and '"tenant"' not in message and '"api_key"' not in message:
                self.count += 1

    logger = logging.getLogger("peewee")
    seen = {}
    for sku in ("PLAIN-1", "SET-1"):
        client.get(f"/api/products/{sku}", headers=headers)  # warm (first-use caches)
        handler, level = Statements(), logger.level
        logger.addHandler(handler)
        logger.setLevel(logging.DEBUG)
        try:
            response = client.get(f"/api/products/{sku}", headers=headers)
        finally:
            logger.removeHandler(handler)
            logger.setLevel(level)
        assert response.status_code == 200
        seen[sku] = (handler.count, response.get_json()["data"])
    assert seen["PLAIN-1"][0] == 2 and seen["SET-1"][0] == 2, seen
    assert seen["PLAIN-1"][1]["components"] == []
    assert seen["SET-1"][1]["components"] == [
        {"sku": "PART-1", "quantity": 3},
        {"sku": "PART-2", "quantity": 1},
    ]
    response = client.get("/api/products/NOPE-1", headers=headers)
    assert response.status_code == 404
    assert response.get_json()["error"]["code"] == "PRODUCT_NOT_FOUND"
