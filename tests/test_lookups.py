"""The look-ups people do every day: orders by marketplace order number, SKU and change
time; products by category; the tenant's whole stock ledger."""

import re

import pytest

from commerce_api.orders.models import Order
from commerce_api.timeutil import format_ms, now_ms
from tests.support.factories import create_product, headers_for, make_tenant, walk_pages
from tests.support.inventory_helpers import make_warehouse, set_stock
from tests.support.orders_support import import_orders, make_products, order_body


def ids(response, key="id"):
    assert response.status_code == 200, response.get_json()
    return [item[key] for item in response.get_json()["data"]]


def line(external_order_id, sku, n=1):
    return {
        "external_line_item_id": f"{external_order_id}-L{n}",
        "sku": sku,
        "title": sku,
        "quantity": 1,
        "unit_price": 5.0,
        "line_total": 5.0,
    }


# orders ----------------------------------------------------------------------------------


@pytest.fixture
def orders(client, headers, runner, tenant, tmp_path):
    make_products(client, headers, "MUG-1", "TOWEL-1", "SOAP-1")
    import_orders(
        runner,
        tenant,
        tmp_path,
        [
            order_body("A-1", created_at="2026-03-01T00:00:00Z"),  # MUG-1 and TOWEL-1
            order_body(
                "A-2", created_at="2026-03-02T00:00:00Z", line_items=[line("A-2", "SOAP-1")]
            ),
            order_body(
                "A-1",
                marketplace="ebay",
                created_at="2026-03-03T00:00:00Z",
                line_items=[line("A-1", "TOWEL-1")],
            ),
        ],
    )
    found = {(o.marketplace, o.external_order_id): o.id for o in Order.select()}
    assert len(found) == 3
    return found


def test_orders_by_external_order_id(client, headers, orders):
    listed = client.get("/api/orders", query_string={"external_order_id": "A-1"}, headers=headers)
    assert ids(listed) == [orders[("ebay", "A-1")], orders[("amazon", "A-1")]]
    assert listed.get_json()["meta"]["total"] == 2
    one = client.get(
        "/api/orders",
        query_string={"external_order_id": "A-1", "marketplace": "ebay"},
        headers=headers,
    )
    assert ids(one) == [orders[("ebay", "A-1")]]
    none = client.get("/api/orders", query_string={"external_order_id": "a-1"}, headers=headers)
    assert ids(none) == []  # exact, as the marketplace wrote it


def test_orders_by_sku(client, headers, orders):
    towel = client.get("/api/orders", query_string={"sku": "TOWEL-1"}, headers=headers)
    assert ids(towel) == [orders[("ebay", "A-1")], orders[("amazon", "A-1")]]
    soap = client.get("/api/orders", query_string={"sku": "SOAP-1"}, headers=headers)
    assert ids(soap) == [orders[("amazon", "A-2")]]
    assert ids(client.get("/api/orders", query_string={"sku": "NOPE"}, headers=headers)) == []
    # each order once, however many of its lines match; with its whole lines
    body = towel.get_json()["data"]
    assert {item["sku"] for item in body[1]["line_items"]} == {"MUG-1", "TOWEL-1"}


def test_orders_updated_after(client, headers, orders):
    now = now_ms()
    stamps = {
        orders[("amazon", "A-1")]: now - 3000,
        orders[("amazon", "A-2")]: now - 2000,
        orders[("ebay", "A-1")]: now - 1000,
    }
    for order_id, stamp in stamps.items():
        Order.update(updated_at=stamp).where(Order.id == order_id).execute()
    query = {"updated_after": format_ms(now - 2000), "sort": "updated_at", "order": "asc"}
    assert ids(client.get("/api/orders", query_string=query, headers=headers)) == [
        orders[("amazon", "A-2")],  # at the very millisecond: included
        orders[("ebay", "A-1")],
    ]
    later = {"updated_after": format_ms(now + 1)}
    assert ids(client.get("/api/orders", query_string=later, headers=headers)) == []


def test_the_order_lookups_combine_with_cursors(client, headers, orders):
    query = {"sku": "TOWEL-1", "limit": 1}
    first = client.get("/api/orders", query_string=query, headers=headers).get_json()
    assert first["meta"]["nextCursor"]
    second = client.get(
        "/api/orders",
        query_string={**query, "cursor": first["meta"]["nextCursor"]},
        headers=headers,
    ).get_json()
    assert [first["data"][0]["id"], second["data"][0]["id"]] == [
        orders[("ebay", "A-1")],
        orders[("amazon", "A-1")],
    ]
    assert second["meta"]["nextCursor"] is None
    # a cursor continues only the query that issued it
    moved = {"sku": "SOAP-1", "limit": 1, "cursor": first["meta"]["nextCursor"]}
    assert client.get("/api/orders", query_string=moved, headers=headers).status_code == 400


@pytest.mark.parametrize(
    "query",
    [
        {"external_order_id": ""},
        {"external_order_id": "x" * 201},
        {"sku": ""},
        {"updated_after": "last week"},
        {"updated_before": "2026-01-01T00:00:00Z"},
    ],
)
def test_bad_order_lookups_are_422(client, headers, query):
    response = client.get("/api/orders", query_string=query, headers=headers)
    assert response.status_code == 422, response.get_json()


def test_another_tenants_orders_are_never_found(client, orders):
    other = headers_for(make_tenant())
    for query in (
        {"external_order_id": "A-1"},
        {"sku": "TOWEL-1"},
        {"updated_after": "2020-01-01T00:00:00Z"},
    ):
        assert ids(client.get("/api/orders", query_string=query, headers=other)) == []


# products --------------------------------------------------------------------------------


def test_products_by_category(client, headers):
    mugs = [
        create_product(client, headers, sku=f"MUG-{i}", category="Mugs")["id"] for i in range(3)
    ]
    create_product(client, headers, sku="TOWEL-1", category="Kitchen textiles")
    create_product(client, headers, sku="BARE-1")
    listed = client.get("/api/products", query_string={"category": "Mugs"}, headers=headers)
    assert ids(listed) == mugs[::-1]
    assert listed.get_json()["meta"]["total"] == 3
    page = client.get(
        "/api/products", query_string={"category": "Mugs", "limit": 2}, headers=headers
    ).get_json()
    rest = client.get(
        "/api/products",
        query_string={"category": "Mugs", "limit": 2, "cursor": page["meta"]["nextCursor"]},
        headers=headers,
    )
    assert [p["id"] for p in page["data"]] + ids(rest) == mugs[::-1]
    assert (
        ids(client.get("/api/products", query_string={"category": "mugs"}, headers=headers)) == []
    )
    combined = {"category": "Mugs", "search": "MUG-1"}
    assert ids(client.get("/api/products", query_string=combined, headers=headers)) == [mugs[1]]
    archived = client.delete("/api/products/MUG-0", headers=headers)
    assert archived.status_code == 204
    assert (
        ids(client.get("/api/products", query_string={"category": "Mugs"}, headers=headers))
        == (mugs[:0:-1])
    )
    query = {"category": "Mugs", "status": "archived"}
    assert ids(client.get("/api/products", query_string=query, headers=headers)) == [mugs[0]]
    bad = client.get("/api/products", query_string={"category": ""}, headers=headers)
    assert bad.status_code == 422


def test_adjustments_is_a_reserved_sku(client, headers):
    response = client.post(
        "/api/products", json={"sku": "adjustments", "title": "t"}, headers=headers
    )
    assert response.status_code == 422
    assert "sku" in response.get_json()["error"]["details"]["fields"]


# the tenant's ledger ---------------------------------------------------------------------


LEDGER = "/api/inventory/adjustments"


@pytest.fixture
def ledger(client, headers):
    """Three SKUs in two warehouses; returns the adjustment ids in the order written."""
    make_products(client, headers, "MUG-1", "TOWEL-1", "SOAP-1")
    first = make_warehouse(client, headers, name="First")["id"]
    second = make_warehouse(client, headers, name="Second")["id"]
    steps = [
        ("MUG-1", first, 10, "supplier_receipt"),
        ("TOWEL-1", first, 5, "supplier_receipt"),
        ("MUG-1", second, 4, "transfer_in"),
        ("SOAP-1", first, 7, "cycle_count"),
        ("MUG-1", first, 8, "damage"),
    ]
    for sku, warehouse, quantity, reason in steps:
        set_stock(client, headers, sku, warehouse, quantity, reason)
    written = ids(client.get(LEDGER, query_string={"order": "asc"}, headers=headers))
    assert len(written) == len(steps)
    return {"ids": written, "first": first, "second": second, "steps": steps}


def test_the_whole_ledger_newest_first(client, headers, ledger):
    response = client.get(LEDGER, headers=headers)
    data = response.get_json()["data"]
    assert [a["id"] for a in data] == ledger["ids"][::-1]
    assert [(a["sku"], a["after_quantity"], a["reason"]) for a in data] == [
        (sku, quantity, reason) for sku, _, quantity, reason in ledger["steps"][::-1]
    ]
    assert response.get_json()["meta"]["total"] == 5
    assert data[0]["before_quantity"] == 10 and data[0]["delta"] == -2


def test_ledger_filters(client, headers, ledger):
    by = ledger["ids"]

    def listed(**query):
        return ids(client.get(LEDGER, query_string={"order": "asc", **query}, headers=headers))

    assert listed(sku="MUG-1") == [by[0], by[2], by[4]]
    assert listed(warehouse_id=ledger["second"]) == [by[2]]
    assert listed(reason="supplier_receipt") == [by[0], by[1]]
    assert listed(sku="MUG-1", warehouse_id=ledger["first"], reason="damage") == [by[4]]
    assert listed(sku="NOPE") == []
    today = format_ms(now_ms())[:10]
    assert listed(start_date=today, end_date=today) == by
    assert listed(end_date="2020-01-01") == []
    assert listed(quantity_type="reserved") == []
    # the per-SKU ledger lists the same adjustments
    per_sku = ids(client.get("/api/inventory/MUG-1/adjustments", headers=headers))
    assert per_sku == ids(client.get(LEDGER, query_string={"sku": "MUG-1"}, headers=headers))


def test_ledger_pages_with_cursors(client, headers, ledger):
    assert walk_pages(client, LEDGER, headers, limit=2) == ledger["ids"][::-1]
    first = client.get(LEDGER, query_string={"limit": 2}, headers=headers).get_json()
    moved = {"limit": 2, "sku": "MUG-1", "cursor": first["meta"]["nextCursor"]}
    assert client.get(LEDGER, query_string=moved, headers=headers).status_code == 400


def test_ledger_refusals(client, headers, tenant, ledger):
    unknown = client.get(LEDGER, query_string={"warehouse_id": "wh_nope"}, headers=headers)
    assert unknown.status_code == 404
    assert unknown.get_json()["error"]["code"] == "WAREHOUSE_NOT_FOUND"
    for query in ({"reason": "theft"}, {"sku": ""}, {"start_date": "2026-02-30"}, {"x": 1}):
        assert client.get(LEDGER, query_string=query, headers=headers).status_code == 422
    reader = headers_for(tenant, ["orders:read"])
    denied = client.get(LEDGER, headers=reader)
    assert denied.status_code == 403
    assert denied.get_json()["error"]["details"]["required_scope"] == "inventory:read"
    other = headers_for(make_tenant())
    assert ids(client.get(LEDGER, headers=other)) == []
    theirs = client.get(LEDGER, query_string={"warehouse_id": ledger["first"]}, headers=other)
    assert theirs.status_code == 404


# the plans ---------------------------------------------------------------------------------


@pytest.fixture
def plans(app, monkeypatch):
    """The SQLite query plans of the pages read (SELECT ... ORDER BY ... LIMIT)."""
    from commerce_api.db import db, is_postgres

    if is_postgres():
        pytest.skip("SQLite's planner has no statistics here; PostgreSQL's has")
    database = db.obj
    seen = []
    execute = database.execute_sql

    def recording(sql, params=None, *args, **kwargs):
        if sql.lstrip().upper().startswith("SELECT") and "ORDER BY" in sql and "LIMIT" in sql:
            steps = execute("EXPLAIN QUERY PLAN " + sql, params).fetchall()
            seen.append(" | ".join(step[-1] for step in steps))
        return execute(sql, params, *args, **kwargs)

    monkeypatch.setattr(database, "execute_sql", recording)
    return seen


@pytest.mark.parametrize(
    "path,query,index",
    [
        ("/api/orders", {"external_order_id": "A-1"}, "order_external_tenant"),
        (
            "/api/orders",
            {"external_order_id": "A-1", "sort": "updated_at"},
            "order_external_tenant",
        ),
        ("/api/orders", {"sku": "SOAP-1"}, "sqlite_autoindex_order_1 (id=?)"),  # line first
        (
            "/api/orders",
            {"updated_after": "2026-01-01T00:00:00Z", "sort": "updated_at"},
            "updated_at",
        ),
        ("/api/products", {"category": "Mugs"}, "product_tenant_category"),
        ("/api/inventory/adjustments", {}, "adjustment_tenant_created"),
        ("/api/inventory/adjustments", {"sku": "MUG-1"}, "adjustment_tenant_id_product_id"),
        ("/api/events", {"type": "order.created"}, "event_tenant_type_created"),
    ],
)
def test_the_lookups_read_their_index(client, headers, orders, plans, path, query, index):
    response = client.get(path, query_string=query, headers=headers)
    assert response.status_code == 200, response.get_json()
    assert len(plans) == 1, plans
    assert index in plans[0], plans
    assert not re.search(r"\bSCAN\b", plans[0]), plans  # no table read whole
