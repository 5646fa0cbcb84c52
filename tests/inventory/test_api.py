"""Inventory records, setting stock, bulk updates and the adjustments ledger, over HTTP."""

import datetime as dt

import pytest

from commerce_api.inventory.models import Adjustment
from commerce_api.inventory.reservations import reserve_stock
from commerce_api.products.services import create_product as create_product_row
from commerce_api.timeutil import date_start_ms
from tests.support.factories import create_product, headers_for, make_tenant
from tests.support.inventory_helpers import (
    check_ledger,
    inventory_events,
    make_marketplace_warehouse,
    make_warehouse,
    put_stock,
    set_stock,
    snapshot,
)


@pytest.fixture
def stocked(client, headers, tenant):
    """A product MUG-1 and an own warehouse."""
    create_product(client, headers, sku="MUG-1", title="Enamel mug")
    warehouse = make_warehouse(client, headers)
    return {"sku": "MUG-1", "warehouse_id": warehouse["id"], "tenant": tenant}


def error_of(response):
    body = response.get_json()
    assert set(body) == {"error"}, body
    assert set(body["error"]) == {"code", "message", "details"}
    return body["error"]


# -- PUT /api/inventory/:sku -------------------------------------------------------------


def test_put_creates_stock_record_and_adjustment(client, headers, stocked):
    wh = stocked["warehouse_id"]
    response = put_stock(client, headers, "MUG-1", wh, 40, "supplier_receipt", note="PO 17")
    assert response.status_code == 200
    record = response.get_json()["data"]
    assert record == {
        "sku": "MUG-1",
        "title": "Enamel mug",
        "product_id": record["product_id"],
        "total_on_hand": 40,
        "total_reserved": 0,
        "total_available": 40,
        "total_incoming": 0,
        "safety_stock": 0,
        "status": "normal",
        "warehouses": [
            {
                "warehouse_id": wh,
                "name": "Main warehouse",
                "type": "own",
                "on_hand": 40,
                "reserved": 0,
                "available": 40,
                "incoming": 0,
            }
        ],
        "updated_at": record["updated_at"],
    }
    assert record["product_id"].startswith("prod_")
    adjustments = client.get("/api/inventory/MUG-1/adjustments", headers=headers).get_json()
    assert adjustments["meta"]["total"] == 1
    (adjustment,) = adjustments["data"]
    assert adjustment["id"].startswith("adj_")
    assert adjustment["created_by"].startswith("key:key_")
    assert {k: adjustment[k] for k in ("sku", "warehouse_id", "quantity_type", "reason")} == {
        "sku": "MUG-1",
        "warehouse_id": wh,
        "quantity_type": "on_hand",
        "reason": "supplier_receipt",
    }
    assert (adjustment["before_quantity"], adjustment["after_quantity"], adjustment["delta"]) == (
        0,
        40,
        40,
    )
    assert adjustment["note"] == "PO 17" and adjustment["sequence"] == 1
    events = inventory_events()
    assert [e["type"] for e in events] == ["inventory.adjusted", "inventory.status_changed"]
    assert events[0]["data"]["id"] == adjustment["id"]
    assert events[1]["data"]["previous_status"] == "out_of_stock"
    assert events[1]["data"]["status"] == "normal"
    assert check_ledger() == 1


def test_put_again_chains_the_ledger_and_records_a_confirming_count(client, headers, stocked):
    wh = stocked["warehouse_id"]
    set_stock(client, headers, "MUG-1", wh, 40)
    set_stock(client, headers, "MUG-1", wh, 25, "damage", note="dropped a box")
    record = set_stock(client, headers, "MUG-1", wh, 25, "cycle_count")
    assert record["total_on_hand"] == 25
    body = client.get("/api/inventory/MUG-1/adjustments?order=asc", headers=headers).get_json()
    chain = [(a["before_quantity"], a["after_quantity"], a["delta"]) for a in body["data"]]
    assert chain == [(0, 40, 40), (40, 25, -15), (25, 25, 0)]
    assert [a["reason"] for a in body["data"]] == ["supplier_receipt", "damage", "cycle_count"]
    assert [a["sequence"] for a in body["data"]] == [1, 2, 3]
    assert check_ledger() == 3


def test_put_in_two_warehouses_totals_both(client, headers, stocked):
    second = make_warehouse(client, headers, name="Overflow")
    set_stock(client, headers, "MUG-1", stocked["warehouse_id"], 10)
    record = set_stock(client, headers, "MUG-1", second["id"], 7)
    assert record["total_on_hand"] == 17 and record["total_available"] == 17
    assert [(w["name"], w["on_hand"]) for w in record["warehouses"]] == [
        ("Main warehouse", 10),
        ("Overflow", 7),
    ]


def _other_tenant_warehouse():
    other = make_tenant()
    return make_marketplace_warehouse(other.id, kind="FBA")["id"], other


@pytest.mark.parametrize(
    "case, body, status, code",
    [
        ("unknown product", {"quantity": 5}, 404, "PRODUCT_NOT_FOUND"),
        (
            "unknown warehouse",
            {"warehouse_id": "wh_nope", "quantity": 5},
            404,
            "WAREHOUSE_NOT_FOUND",
        ),
        ("other tenant's warehouse", {"quantity": 5}, 404, "WAREHOUSE_NOT_FOUND"),
        ("read-only warehouse", {"quantity": 5}, 403, "READONLY_WAREHOUSE"),
        ("inactive warehouse", {"quantity": 5}, 409, "WAREHOUSE_INACTIVE"),
        ("negative", {"quantity": -1}, 422, "NEGATIVE_QUANTITY"),
        ("below reserved", {"quantity": 2}, 422, "NEGATIVE_QUANTITY"),
        ("missing reason", {"quantity": 5, "reason": None}, 422, "VALIDATION_ERROR"),
        ("unknown reason", {"quantity": 5, "reason": "theft"}, 422, "VALIDATION_ERROR"),
        ("system reason", {"quantity": 5, "reason": "sale"}, 422, "VALIDATION_ERROR"),
        ("string quantity", {"quantity": "5"}, 422, "VALIDATION_ERROR"),
        ("float quantity", {"quantity": 5.5}, 422, "VALIDATION_ERROR"),
        ("boolean quantity", {"quantity": True}, 422, "VALIDATION_ERROR"),
        ("huge quantity", {"quantity": 10**12}, 422, "VALIDATION_ERROR"),
        ("missing quantity", {"quantity": None}, 422, "VALIDATION_ERROR"),
        ("missing warehouse", {"warehouse_id": None, "quantity": 5}, 422, "VALIDATION_ERROR"),
        ("unknown field", {"quantity": 5, "colour": "red"}, 422, "VALIDATION_ERROR"),
        ("read-only field", {"quantity": 5, "reserved": 0}, 422, "VALIDATION_ERROR"),
        ("long note", {"quantity": 5, "note": "x" * 1001}, 422, "VALIDATION_ERROR"),
    ],
)
def test_refused_put_writes_nothing(client, headers, stocked, case, body, status, code):
    tenant = stocked["tenant"]
    wh = stocked["warehouse_id"]
    set_stock(client, headers, "MUG-1", wh, 10)
    reserve_stock(tenant.id, "MUG-1", 3, reference="ord_1", created_by="test")
    create_product(client, headers, sku="MUG-2")
    sku = "MUG-2"
    payload = {"warehouse_id": wh, "reason": "cycle_count"}
    if case == "unknown product":
        sku = "NOPE"
    elif case == "other tenant's warehouse":
        payload["warehouse_id"], _ = _other_tenant_warehouse()
    elif case == "read-only warehouse":
        payload["warehouse_id"] = make_marketplace_warehouse(tenant.id, kind="FBS")["id"]
    elif case == "inactive warehouse":
        payload["warehouse_id"] = make_warehouse(client, headers, name="Old", is_active=False)["id"]
    elif case == "below reserved":
        sku = "MUG-1"
    payload.update(body)
    payload = {k: v for k, v in payload.items() if v is not None}
    before = snapshot()
    response = client.put(f"/api/inventory/{sku}", json=payload, headers=headers)
    assert response.status_code == status, response.get_json()
    assert error_of(response)["code"] == code
    assert snapshot() == before
    check_ledger()


def test_put_refusal_details_name_the_problem(client, headers, stocked):
    wh = stocked["warehouse_id"]
    response = put_stock(client, headers, "MUG-1", wh, 5, "theft")
    assert error_of(response)["details"]["fields"]["reason"]
    response = put_stock(client, headers, "MUG-1", wh, -3)
    assert error_of(response)["details"] == {"sku": "MUG-1", "quantity": -3}
    response = put_stock(client, headers, "MUG-1", "wh_missing", 3)
    assert error_of(response)["details"] == {"warehouse_id": "wh_missing"}


def test_put_body_problems(client, headers, stocked):
    response = client.put(
        "/api/inventory/MUG-1",
        data="{nope",
        headers={**headers, "Content-Type": "application/json"},
    )
    assert response.status_code == 400 and error_of(response)["code"] == "INVALID_JSON"
    response = client.put("/api/inventory/MUG-1", data="x=1", headers=headers)
    assert response.status_code == 415
    assert snapshot()["adjustments"] == 0


def test_scopes(client, headers, stocked, tenant):
    wh = stocked["warehouse_id"]
    reader = headers_for(tenant, scopes=("inventory:read",))
    response = put_stock(client, reader, "MUG-1", wh, 5)
    assert response.status_code == 403
    assert error_of(response)["code"] == "INSUFFICIENT_SCOPE"
    assert error_of(response)["details"] == {"required_scope": "inventory:write"}
    for path in ("/api/inventory", "/api/inventory/MUG-1", "/api/inventory/warehouses"):
        assert (
            client.get(path, headers=headers_for(tenant, scopes=("products:read",))).status_code
            == 403
        )
    response = client.post(
        "/api/inventory/bulk",
        json={"updates": [{"sku": "MUG-1", "warehouse_id": wh, "quantity": 1, "reason": "loss"}]},
        headers=reader,
    )
    assert response.status_code == 403
    assert client.get("/api/inventory").status_code == 401
    assert snapshot()["adjustments"] == 0


# -- GET /api/inventory/:sku and PATCH -----------------------------------------------


def test_get_record_errors_and_fields(client, headers, stocked):
    response = client.get("/api/inventory/NOPE", headers=headers)
    assert response.status_code == 404 and error_of(response)["code"] == "PRODUCT_NOT_FOUND"
    # the product exists but has never had stock or a safety stock: no inventory record
    response = client.get("/api/inventory/MUG-1", headers=headers)
    assert response.status_code == 404 and error_of(response)["code"] == "INVENTORY_NOT_FOUND"
    assert error_of(response)["details"] == {"sku": "MUG-1"}
    set_stock(client, headers, "MUG-1", stocked["warehouse_id"], 3)
    response = client.get("/api/inventory/MUG-1?fields=total_on_hand,status", headers=headers)
    assert response.get_json()["data"] == {"sku": "MUG-1", "total_on_hand": 3, "status": "normal"}
    response = client.get("/api/inventory/MUG-1?fields=colour", headers=headers)
    assert response.status_code == 422
    response = client.get("/api/inventory/MUG-1?page=2", headers=headers)
    assert response.status_code == 422


def test_tenant_isolation(client, headers, stocked):
    set_stock(client, headers, "MUG-1", stocked["warehouse_id"], 3)
    other = headers_for()
    response = client.get("/api/inventory/MUG-1", headers=other)
    assert error_of(response)["code"] == "PRODUCT_NOT_FOUND"
    response = client.get("/api/inventory/MUG-1/adjustments", headers=other)
    assert error_of(response)["code"] == "PRODUCT_NOT_FOUND"
    assert client.get("/api/inventory", headers=other).get_json()["data"] == []
    response = client.get(f"/api/inventory?warehouse_id={stocked['warehouse_id']}", headers=other)
    assert error_of(response)["code"] == "WAREHOUSE_NOT_FOUND"
    # the other tenant's product of the same SKU cannot use this tenant's warehouse
    create_product(client, other, sku="MUG-1")
    before = snapshot()
    response = put_stock(client, other, "MUG-1", stocked["warehouse_id"], 9)
    assert response.status_code == 404 and error_of(response)["code"] == "WAREHOUSE_NOT_FOUND"
    assert snapshot() == before


def test_patch_safety_stock(client, headers, stocked):
    response = client.patch("/api/inventory/NOPE", json={"safety_stock": 5}, headers=headers)
    assert response.status_code == 404 and error_of(response)["code"] == "PRODUCT_NOT_FOUND"
    for bad in ({"safety_stock": -1}, {"safety_stock": "5"}, {"safety_stock": 2, "x": 1}):
        before = snapshot()
        response = client.patch("/api/inventory/MUG-1", json=bad, headers=headers)
        assert response.status_code == 422 and error_of(response)["code"] == "VALIDATION_ERROR"
        assert snapshot() == before
    response = client.patch("/api/inventory/MUG-1", json={}, headers=headers)
    assert response.status_code == 400 and error_of(response)["code"] == "EMPTY_PATCH"
    assert snapshot() == before
    # a safety stock may be set before any stock: it creates the (empty) record
    response = client.patch("/api/inventory/MUG-1", json={"safety_stock": 8}, headers=headers)
    assert response.status_code == 200
    record = response.get_json()["data"]
    assert (record["safety_stock"], record["status"], record["warehouses"]) == (
        8,
        "out_of_stock",
        [],
    )
    assert snapshot()["adjustments"] == 0
    record = set_stock(client, headers, "MUG-1", stocked["warehouse_id"], 8)
    assert record["status"] == "low"
    response = client.patch("/api/inventory/MUG-1", json={"safety_stock": 3}, headers=headers)
    assert response.get_json()["data"]["status"] == "normal"
    statuses = [
        (e["data"]["previous_status"], e["data"]["status"])
        for e in inventory_events("inventory.status_changed")
    ]
    assert statuses == [("out_of_stock", "low"), ("low", "normal")]


@pytest.mark.parametrize(
    "safety_stock, available, status",
    [
        (10, 11, "normal"),
        (10, 10, "low"),
        (10, 6, "low"),
        (10, 5, "critical"),
        (10, 1, "critical"),
        (10, 0, "out_of_stock"),
        (5, 3, "low"),
        (5, 2, "critical"),
        (0, 1, "normal"),
        (0, 0, "out_of_stock"),
        (1, 1, "low"),
        (2, 1, "critical"),
    ],
)
def test_status_thresholds(client, headers, stocked, safety_stock, available, status):
    wh = stocked["warehouse_id"]
    client.patch("/api/inventory/MUG-1", json={"safety_stock": safety_stock}, headers=headers)
    record = set_stock(client, headers, "MUG-1", wh, available)
    assert (record["total_available"], record["status"]) == (available, status)
    listed = client.get(f"/api/inventory?status={status}", headers=headers).get_json()
    assert [r["sku"] for r in listed["data"]] == ["MUG-1"]


def test_status_follows_available_not_on_hand(client, headers, stocked):
    wh = stocked["warehouse_id"]
    client.patch("/api/inventory/MUG-1", json={"safety_stock": 10}, headers=headers)
    set_stock(client, headers, "MUG-1", wh, 12)
    reserve_stock(stocked["tenant"].id, "MUG-1", 7, reference="ord_9", created_by="test")
    record = client.get("/api/inventory/MUG-1", headers=headers).get_json()["data"]
    assert (record["total_on_hand"], record["total_reserved"], record["total_available"]) == (
        12,
        7,
        5,
    )
    assert record["status"] == "critical"


# -- GET /api/inventory ------------------------------------------------------------------


def _seed_records(client, headers, tenant, warehouse_id):
    """Eight SKUs with known statuses (safety stock 10)."""
    levels = {
        "A-1": 50,
        "A-2": 10,
        "A-3": 4,
        "A-4": 0,
        "A-5": 9,
        "A-6": 30,
        "A-7": 5,
        "A-8": 8,
    }
    for sku, level in levels.items():
        create_product_row(tenant.id, {"sku": sku, "title": f"Item {sku}"})
        client.patch(f"/api/inventory/{sku}", json={"safety_stock": 10}, headers=headers)
        set_stock(client, headers, sku, warehouse_id, level)
    return levels


def _walk(client, headers, url):
    items, cursor, pages = [], None, 0
    while True:
        page = client.get(url + (f"&cursor={cursor}" if cursor else ""), headers=headers)
        assert page.status_code == 200, page.get_json()
        body = page.get_json()
        items += body["data"]
        pages += 1
        assert body["meta"]["page"] == pages
        cursor = body["meta"]["nextCursor"]
        if cursor is None:
            return items, body["meta"]
        assert pages < 50


def test_list_paginates_and_filters_status_exactly(client, headers, stocked):
    levels = _seed_records(client, headers, stocked["tenant"], stocked["warehouse_id"])
    items, meta = _walk(client, headers, "/api/inventory?limit=3")
    assert [r["sku"] for r in items] == sorted(levels)
    assert meta["total"] == 8 and meta["limit"] == 3
    expected = {
        "normal": ["A-1", "A-6"],
        "low": ["A-2", "A-5", "A-8"],
        "critical": ["A-3", "A-7"],
        "out_of_stock": ["A-4"],
    }
    for status, skus in expected.items():
        items, meta = _walk(client, headers, f"/api/inventory?status={status}&limit=1")
        assert [r["sku"] for r in items] == skus
        assert all(r["status"] == status for r in items)
        assert meta["total"] == len(skus)
    items, _ = _walk(client, headers, "/api/inventory?sort=total_available&order=desc&limit=2")
    assert [r["total_available"] for r in items] == sorted(levels.values(), reverse=True)
    items, _ = _walk(client, headers, "/api/inventory?order=desc&limit=5")
    assert [r["sku"] for r in items] == sorted(levels, reverse=True)


def test_list_filters_sku_and_warehouse(client, headers, stocked):
    _seed_records(client, headers, stocked["tenant"], stocked["warehouse_id"])
    second = make_warehouse(client, headers, name="Second")
    set_stock(client, headers, "A-3", second["id"], 2)
    set_stock(client, headers, "A-7", second["id"], 0)
    body = client.get(f"/api/inventory?warehouse_id={second['id']}", headers=headers).get_json()
    assert [r["sku"] for r in body["data"]] == ["A-3", "A-7"]
    # the record keeps all its warehouses and totals
    assert body["data"][0]["total_on_hand"] == 6 and len(body["data"][0]["warehouses"]) == 2
    body = client.get("/api/inventory?sku=A-5", headers=headers).get_json()
    assert [r["sku"] for r in body["data"]] == ["A-5"]
    assert client.get("/api/inventory?sku=ZZZ", headers=headers).get_json()["data"] == []
    body = client.get("/api/inventory?fields=status&limit=1", headers=headers).get_json()
    assert body["data"] == [{"sku": "A-1", "status": "normal"}]


@pytest.mark.parametrize(
    "query, status, code",
    [
        ("status=empty", 422, "VALIDATION_ERROR"),
        ("limit=0", 422, "VALIDATION_ERROR"),
        ("limit=201", 422, "VALIDATION_ERROR"),
        ("sort=title", 422, "VALIDATION_ERROR"),
        ("colour=red", 422, "VALIDATION_ERROR"),
        ("cursor=garbage", 400, "INVALID_CURSOR"),
        ("warehouse_id=wh_nope", 404, "WAREHOUSE_NOT_FOUND"),
    ],
)
def test_list_refuses_bad_queries(client, headers, stocked, query, status, code):
    response = client.get(f"/api/inventory?{query}", headers=headers)
    assert response.status_code == status
    assert error_of(response)["code"] == code


def test_list_cursor_is_bound_to_its_sort(client, headers, stocked):
    _seed_records(client, headers, stocked["tenant"], stocked["warehouse_id"])
    cursor = client.get("/api/inventory?limit=2", headers=headers).get_json()["meta"]["nextCursor"]
    response = client.get(
        f"/api/inventory?limit=2&sort=updated_at&cursor={cursor}", headers=headers
    )
    assert response.status_code == 400 and error_of(response)["code"] == "INVALID_CURSOR"


# -- POST /api/inventory/bulk ------------------------------------------------------------


def test_bulk_reports_per_item_and_applies_each_alone(client, headers, stocked):
    tenant = stocked["tenant"]
    wh = stocked["warehouse_id"]
    fba = make_marketplace_warehouse(tenant.id)["id"]
    create_product(client, headers, sku="MUG-2")
    set_stock(client, headers, "MUG-2", wh, 10)
    reserve_stock(tenant.id, "MUG-2", 4, reference="ord_1", created_by="test")
    other_wh, _ = _other_tenant_warehouse()
    updates = [
        {"sku": "MUG-1", "warehouse_id": wh, "quantity": 30, "reason": "supplier_receipt"},
        {"sku": "NOPE", "warehouse_id": wh, "quantity": 1, "reason": "cycle_count"},
        {"sku": "MUG-1", "warehouse_id": fba, "quantity": 1, "reason": "cycle_count"},
        {"sku": "MUG-1", "warehouse_id": other_wh, "quantity": 1, "reason": "cycle_count"},
        {"sku": "MUG-2", "warehouse_id": wh, "quantity": 3, "reason": "loss"},
        {"sku": "MUG-2", "warehouse_id": wh, "quantity": -2, "reason": "loss"},
        {"sku": "MUG-2", "warehouse_id": wh, "quantity": 6, "reason": "damage", "note": "n"},
        {"sku": "MUG-1", "warehouse_id": wh, "quantity": 28, "reason": "sale"},
        "not an object",
        {"sku": "MUG-1", "warehouse_id": wh, "quantity": 26, "reason": "cycle_count"},
    ]
    response = client.post("/api/inventory/bulk", json={"updates": updates}, headers=headers)
    assert response.status_code == 200
    result = response.get_json()["data"]
    assert (result["updated"], result["failed"]) == (3, 7)
    assert [(e["index"], e["sku"], e["code"]) for e in result["errors"]] == [
        (1, "NOPE", "PRODUCT_NOT_FOUND"),
        (2, "MUG-1", "READONLY_WAREHOUSE"),
        (3, "MUG-1", "WAREHOUSE_NOT_FOUND"),
        (4, "MUG-2", "NEGATIVE_QUANTITY"),
        (5, "MUG-2", "NEGATIVE_QUANTITY"),
        (7, "MUG-1", "VALIDATION_ERROR"),
        (8, None, "VALIDATION_ERROR"),
    ]
    assert all(e["message"] for e in result["errors"])
    assert result["errors"][5]["details"]["fields"]["reason"]
    assert result["errors"][3]["details"]["reserved"] == 4
    mug1 = client.get("/api/inventory/MUG-1", headers=headers).get_json()["data"]
    mug2 = client.get("/api/inventory/MUG-2", headers=headers).get_json()["data"]
    assert [(w["warehouse_id"], w["on_hand"]) for w in mug1["warehouses"]] == [(wh, 26)]
    assert (mug2["total_on_hand"], mug2["total_reserved"]) == (6, 4)
    ledger = client.get("/api/inventory/MUG-1/adjustments?order=asc", headers=headers).get_json()
    assert [(a["before_quantity"], a["after_quantity"]) for a in ledger["data"]] == [
        (0, 30),
        (30, 26),
    ]
    check_ledger()


def test_bulk_limit_and_body_validation(client, headers, stocked):
    wh = stocked["warehouse_id"]
    item = {"sku": "MUG-1", "warehouse_id": wh, "quantity": 1, "reason": "cycle_count"}
    before = snapshot()
    for body in (
        {"updates": [item] * 501},
        {"updates": []},
        {},
        {"updates": item},
        {"updates": [item], "extra": 1},
    ):
        response = client.post("/api/inventory/bulk", json=body, headers=headers)
        assert response.status_code == 422, body
        assert error_of(response)["code"] == "VALIDATION_ERROR"
    assert snapshot() == before


def test_bulk_of_500_items(client, headers, stocked):
    tenant = stocked["tenant"]
    wh = stocked["warehouse_id"]
    skus = [f"BULK-{n:03d}" for n in range(500)]
    for sku in skus:
        create_product_row(tenant.id, {"sku": sku, "title": sku})
    updates = [
        {"sku": sku, "warehouse_id": wh, "quantity": n, "reason": "supplier_receipt"}
        for n, sku in enumerate(skus)
    ]
    response = client.post("/api/inventory/bulk", json={"updates": updates}, headers=headers)
    assert response.get_json()["data"] == {"updated": 500, "failed": 0, "errors": []}
    assert check_ledger() == 500
    assert len(inventory_events("inventory.adjusted")) == 500
    body = client.get("/api/inventory?status=out_of_stock", headers=headers).get_json()
    assert [r["sku"] for r in body["data"]] == ["BULK-000"]
    assert client.get("/api/inventory?limit=1", headers=headers).get_json()["meta"]["total"] == 500


# -- GET /api/inventory/:sku/adjustments ---------------------------------------------------


def _stamp(adjustment_id, day):
    """Move an adjustment to noon of ``day`` (the ledger's dates are otherwise 'now')."""
    moment = date_start_ms(day) + 12 * 3_600_000
    Adjustment.update(created_at=moment).where(Adjustment.id == adjustment_id).execute()


def test_adjustments_filters_and_pagination(client, headers, stocked):
    wh = stocked["warehouse_id"]
    second = make_warehouse(client, headers, name="Second")["id"]
    set_stock(client, headers, "MUG-1", wh, 10, "supplier_receipt")
    set_stock(client, headers, "MUG-1", wh, 8, "damage")
    set_stock(client, headers, "MUG-1", second, 5, "transfer_in")
    set_stock(client, headers, "MUG-1", wh, 3, "transfer_out")
    reserve_stock(stocked["tenant"].id, "MUG-1", 2, reference="ord_5", created_by="test")
    ids = [
        a["id"]
        for a in client.get(
            "/api/inventory/MUG-1/adjustments?order=asc", headers=headers
        ).get_json()["data"]
    ]
    assert len(ids) == 4  # on_hand only by default
    days = [dt.date(2026, 3, 1), dt.date(2026, 3, 2), dt.date(2026, 3, 2), dt.date(2026, 3, 4)]
    for adjustment_id, day in zip(ids, days, strict=True):
        _stamp(adjustment_id, day)

    def listed(query):
        response = client.get(f"/api/inventory/MUG-1/adjustments?{query}", headers=headers)
        assert response.status_code == 200, response.get_json()
        return [a["id"] for a in response.get_json()["data"]]

    assert listed("start_date=2026-03-02&end_date=2026-03-02&order=asc") == ids[1:3]
    assert listed("start_date=2026-03-02&order=asc") == ids[1:]
    assert listed("end_date=2026-03-01") == ids[:1]
    assert listed("start_date=2026-03-05") == []
    assert listed(f"warehouse_id={second}") == [ids[2]]
    assert listed("reason=damage") == [ids[1]]
    assert listed("reason=transfer_out&warehouse_id=" + wh) == [ids[3]]
    reserved = client.get(
        "/api/inventory/MUG-1/adjustments?quantity_type=reserved", headers=headers
    ).get_json()["data"]
    assert [(a["reason"], a["delta"], a["reference"]) for a in reserved] == [
        ("reservation", 2, "ord_5")
    ]
    assert len(listed("quantity_type=all")) == 5
    assert listed("reason=reservation&quantity_type=all") == [reserved[0]["id"]]
    # pagination: newest first by default, two per page
    first = client.get("/api/inventory/MUG-1/adjustments?limit=2", headers=headers).get_json()
    assert [a["id"] for a in first["data"]] == [ids[3], ids[2]]
    assert first["meta"]["total"] == 4
    cursor = first["meta"]["nextCursor"]
    second_page = client.get(
        f"/api/inventory/MUG-1/adjustments?limit=2&cursor={cursor}", headers=headers
    ).get_json()
    assert [a["id"] for a in second_page["data"]] == [ids[1], ids[0]]
    assert second_page["meta"]["nextCursor"] is None
    assert listed("fields=delta&limit=1") == [ids[3]]


@pytest.mark.parametrize(
    "sku, query, status, code",
    [
        ("NOPE", "", 404, "PRODUCT_NOT_FOUND"),
        ("MUG-2", "", 404, "INVENTORY_NOT_FOUND"),
        ("MUG-1", "start_date=2026-13-01", 422, "VALIDATION_ERROR"),
        ("MUG-1", "start_date=2026-03-05&end_date=2026-03-04", 422, "VALIDATION_ERROR"),
        ("MUG-1", "reason=theft", 422, "VALIDATION_ERROR"),
        ("MUG-1", "quantity_type=both", 422, "VALIDATION_ERROR"),
        ("MUG-1", "warehouse_id=wh_nope", 404, "WAREHOUSE_NOT_FOUND"),
        ("MUG-1", "cursor=%%%", 400, "INVALID_CURSOR"),
        ("MUG-1", "status=low", 422, "VALIDATION_ERROR"),
    ],
)
def test_adjustments_refusals(client, headers, stocked, sku, query, status, code):
    create_product(client, headers, sku="MUG-2")
    set_stock(client, headers, "MUG-1", stocked["warehouse_id"], 1)
    response = client.get(f"/api/inventory/{sku}/adjustments?{query}", headers=headers)
    assert response.status_code == status, response.get_json()
    assert error_of(response)["code"] == code


# -- demo data and retries ---------------------------------------------------------------


def test_demo_seeding(client, headers, tenant):
    from commerce_api.demo import DEMO_PRODUCTS
    from commerce_api.inventory.demo import DEMO_STOCK, seed_demo_inventory

    for sku, title, _, _ in DEMO_PRODUCTS:
        create_product_row(tenant.id, {"sku": sku, "title": title, "status": "active"})
    seeded = seed_demo_inventory(tenant.id)
    assert seeded["skus"] == sorted(DEMO_STOCK)
    warehouses = client.get("/api/inventory/warehouses", headers=headers).get_json()["data"]
    assert [(w["name"], w["type"], w["is_readonly"]) for w in warehouses] == [
        ("Main warehouse", "own", False),
        ("Amazon FBA", "FBA", True),
    ]
    records = client.get("/api/inventory?limit=200", headers=headers).get_json()["data"]
    assert len(records) == len(DEMO_STOCK)
    by_sku = {r["sku"]: r for r in records}
    assert by_sku["MUG-ENAMEL-WHT"]["total_on_hand"] == 140  # own stock only
    assert by_sku["NOTEBOOK-A5"]["total_on_hand"] == 100  # at the marketplace only
    assert {r["status"] for r in records} == {"normal", "low", "critical", "out_of_stock"}
    assert check_ledger() >= len(DEMO_STOCK)  # a stock row per SKU, NOTEBOOK-A5 at FBA


def test_deadlocks_are_retried_only_for_our_own_transaction(monkeypatch):
    import peewee

    from commerce_api.inventory import services

    class Deadlock(Exception):
        pgcode = "40P01"

    calls = []

    def flaky():
        calls.append(1)
        if len(calls) < 3:
            raise peewee.OperationalError(Deadlock("deadlock detected"))
        return "done"

    assert services.run_with_retry(flaky) == "done" and len(calls) == 3
    calls.clear()

    def always():
        calls.append(1)
        raise peewee.OperationalError(Deadlock("deadlock detected"))

    with pytest.raises(peewee.OperationalError):
        services.run_with_retry(always)
    assert len(calls) == 3
    calls.clear()

    def other_error():
        calls.append(1)
        raise peewee.OperationalError(ValueError("disk I/O error"))

    with pytest.raises(peewee.OperationalError):
        services.run_with_retry(other_error)
    assert len(calls) == 1
