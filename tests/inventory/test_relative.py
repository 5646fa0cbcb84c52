"""Relative adjustments (DESIGN 14): ``POST /api/inventory/:sku/adjustments`` and ``delta``
in the bulk form, over HTTP; and 50 concurrent ``+1`` against a real server."""

import threading

import pytest
import requests

from commerce_api.inventory.reservations import reserve_stock
from commerce_api.inventory.services import create_warehouse
from commerce_api.products.services import create_product as create_product_row
from tests.support.factories import auth_headers, create_product, make_key, make_tenant
from tests.support.inventory_helpers import (
    check_ledger,
    inventory_events,
    make_marketplace_warehouse,
    make_warehouse,
    set_stock,
    snapshot,
)
from tests.support.servers import gunicorn_server


@pytest.fixture
def stocked(client, headers, tenant):
    create_product(client, headers, sku="MUG-1", title="Enamel mug")
    warehouse = make_warehouse(client, headers)
    return {"sku": "MUG-1", "warehouse_id": warehouse["id"], "tenant": tenant}


def adjust(client, headers, sku, warehouse_id, delta, reason="supplier_receipt", **extra):
    body = {"warehouse_id": warehouse_id, "delta": delta, "reason": reason, **extra}
    return client.post(f"/api/inventory/{sku}/adjustments", json=body, headers=headers)


def test_a_delta_adds_to_the_current_level_and_writes_one_adjustment(client, headers, stocked):
    wh = stocked["warehouse_id"]
    set_stock(client, headers, "MUG-1", wh, 10)
    response = adjust(client, headers, "MUG-1", wh, 5, note="PO 18")
    assert response.status_code == 201, response.get_json()
    adjustment = response.get_json()["data"]
    assert adjustment["before_quantity"] == 10
    assert adjustment["after_quantity"] == 15
    assert adjustment["delta"] == 5
    assert adjustment["reason"] == "supplier_receipt" and adjustment["note"] == "PO 18"
    assert adjustment["sequence"] == 2 and adjustment["warehouse_id"] == wh
    assert adjustment["id"].startswith("adj_")
    response = adjust(client, headers, "MUG-1", wh, -3, "damage")
    assert response.get_json()["data"]["after_quantity"] == 12
    record = client.get("/api/inventory/MUG-1", headers=headers).get_json()["data"]
    assert record["total_on_hand"] == 12
    ledger = client.get("/api/inventory/MUG-1/adjustments", headers=headers).get_json()["data"]
    assert sorted(a["delta"] for a in ledger) == [-3, 5, 10]
    assert [e["data"]["delta"] for e in inventory_events("inventory.adjusted")] == [10, 5, -3]
    assert check_ledger() == 3


def test_a_first_delta_creates_the_stock_row(client, headers, stocked):
    response = adjust(client, headers, "MUG-1", stocked["warehouse_id"], 7)
    assert response.status_code == 201
    assert response.get_json()["data"]["before_quantity"] == 0
    record = client.get("/api/inventory/MUG-1", headers=headers).get_json()["data"]
    assert record["total_on_hand"] == 7


def test_a_delta_below_reserved_is_refused_and_changes_nothing(client, headers, stocked):
    wh, tenant = stocked["warehouse_id"], stocked["tenant"]
    set_stock(client, headers, "MUG-1", wh, 10)
    reserve_stock(tenant.id, "MUG-1", 4, reference="ord_1", created_by="test")
    before = snapshot()
    response = adjust(client, headers, "MUG-1", wh, -7, "loss")
    assert response.status_code == 422
    error = response.get_json()["error"]
    assert error["code"] == "NEGATIVE_QUANTITY"
    assert error["details"] == {
        "sku": "MUG-1",
        "warehouse_id": wh,
        "on_hand": 10,
        "reserved": 4,
        "delta": -7,
    }
    assert snapshot() == before
    assert adjust(client, headers, "MUG-1", wh, -6, "loss").status_code == 201


@pytest.mark.parametrize(
    "body,field",
    [
        ({"delta": 0}, "delta"),
        ({"delta": 1.5}, "delta"),
        ({"delta": "3"}, "delta"),
        ({"delta": True}, "delta"),
        ({"delta": 2_000_000_000}, "delta"),
        ({"delta": 1, "reason": "sale"}, "reason"),
        ({"quantity": 4}, "delta"),
    ],
)
def test_bad_deltas_are_refused(client, headers, stocked, body, field):
    full = {"warehouse_id": stocked["warehouse_id"], "delta": 1, "reason": "correction"}
    full.update(body)
    if "quantity" in body:
        full.pop("delta")
    before = snapshot()
    response = client.post("/api/inventory/MUG-1/adjustments", json=full, headers=headers)
    assert response.status_code == 422, response.get_json()
    error = response.get_json()["error"]
    assert error["code"] == "VALIDATION_ERROR"
    assert field in str(error["details"])
    assert snapshot() == before


def test_unknown_sku_warehouse_readonly_and_inactive(client, headers, stocked, tenant):
    wh = stocked["warehouse_id"]
    fba = make_marketplace_warehouse(tenant.id)["id"]
    inactive = make_warehouse(client, headers, name="Closed", is_active=False)["id"]
    before = snapshot()
    cases = [
        ("NOPE", wh, 404, "PRODUCT_NOT_FOUND"),
        ("MUG-1", "wh_unknown", 404, "WAREHOUSE_NOT_FOUND"),
        ("MUG-1", fba, 403, "READONLY_WAREHOUSE"),
        ("MUG-1", inactive, 409, "WAREHOUSE_INACTIVE"),
    ]
    for sku, warehouse_id, status, code in cases:
        response = adjust(client, headers, sku, warehouse_id, 3)
        assert response.status_code == status, (sku, response.get_json())
        assert response.get_json()["error"]["code"] == code
    assert snapshot() == before


def test_a_warehouse_of_another_tenant_is_not_found(client, headers, stocked):
    theirs = create_warehouse(make_tenant().id, {"name": "Theirs"})["id"]
    before = snapshot()
    response = adjust(client, headers, "MUG-1", theirs, 3)
    assert response.status_code == 404
    assert response.get_json()["error"]["code"] == "WAREHOUSE_NOT_FOUND"
    assert snapshot() == before


def test_the_same_idempotency_key_applies_a_delta_once(client, headers, stocked):
    wh = stocked["warehouse_id"]
    keyed = {**headers, "Idempotency-Key": "receipt-77"}
    first = adjust(client, keyed, "MUG-1", wh, 5)
    second = adjust(client, keyed, "MUG-1", wh, 5)
    assert first.status_code == second.status_code == 201
    assert second.headers.get("Idempotent-Replayed") == "true"
    assert second.get_json() == first.get_json()
    record = client.get("/api/inventory/MUG-1", headers=headers).get_json()["data"]
    assert record["total_on_hand"] == 5
    assert check_ledger() == 1
    # the same key with another body is refused
    third = adjust(client, keyed, "MUG-1", wh, 6)
    assert third.status_code == 422
    assert third.get_json()["error"]["code"] == "IDEMPOTENCY_KEY_REUSED"


def test_a_delta_on_a_bundle_is_refused(client, headers, stocked):
    create_product(client, headers, sku="GIFT-1", components=[{"sku": "MUG-1", "quantity": 2}])
    before = snapshot()
    response = adjust(client, headers, "GIFT-1", stocked["warehouse_id"], 3)
    assert response.status_code == 409
    assert response.get_json()["error"]["code"] == "BUNDLE_STOCK_IS_DERIVED"
    body = {"warehouse_id": stocked["warehouse_id"], "quantity": 3, "reason": "cycle_count"}
    response = client.put("/api/inventory/GIFT-1", json=body, headers=headers)
    assert response.get_json()["error"]["code"] == "BUNDLE_STOCK_IS_DERIVED"
    response = client.patch("/api/inventory/GIFT-1", json={"safety_stock": 2}, headers=headers)
    assert response.get_json()["error"]["code"] == "BUNDLE_STOCK_IS_DERIVED"
    assert snapshot() == before


# -- bulk ------------------------------------------------------------------------------------


def test_bulk_mixes_quantities_and_deltas_each_on_its_own(client, headers, stocked):
    wh = stocked["warehouse_id"]
    create_product(client, headers, sku="CUP-1")
    set_stock(client, headers, "MUG-1", wh, 10)
    updates = [
        {"sku": "MUG-1", "warehouse_id": wh, "delta": 4, "reason": "supplier_receipt"},
        {"sku": "CUP-1", "warehouse_id": wh, "quantity": 6, "reason": "cycle_count"},
        {"sku": "MUG-1", "warehouse_id": wh, "delta": -20, "reason": "loss"},
        {"sku": "MUG-1", "warehouse_id": wh, "delta": 2, "quantity": 3, "reason": "loss"},
        {"sku": "MUG-1", "warehouse_id": wh, "reason": "loss"},
        {"sku": "MUG-1", "warehouse_id": wh, "delta": -1, "reason": "damage"},
    ]
    response = client.post("/api/inventory/bulk", json={"updates": updates}, headers=headers)
    assert response.status_code == 200
    result = response.get_json()["data"]
    assert result["updated"] == 3 and result["failed"] == 3
    assert [(e["index"], e["code"]) for e in result["errors"]] == [
        (2, "NEGATIVE_QUANTITY"),
        (3, "VALIDATION_ERROR"),
        (4, "VALIDATION_ERROR"),
    ]
    mug = client.get("/api/inventory/MUG-1", headers=headers).get_json()["data"]
    cup = client.get("/api/inventory/CUP-1", headers=headers).get_json()["data"]
    assert mug["total_on_hand"] == 13 and cup["total_on_hand"] == 6
    assert check_ledger() == 4


# -- concurrency against a real server ---------------------------------------------------------

CLIENTS = 50


@pytest.mark.slow
def test_fifty_concurrent_plus_ones_end_at_plus_fifty(app, tenant, database_url):
    create_product_row(tenant.id, {"sku": "HOT-2", "title": "Hot item"})
    main = create_warehouse(tenant.id, {"name": "Main"})["id"]
    _, secret = make_key(tenant)
    headers = auth_headers(tenant, secret)
    statuses, lock = [], threading.Lock()

    with gunicorn_server(database_url, workers=2, RATE_LIMIT_ENABLED=0) as base:
        start = threading.Barrier(CLIENTS)

        def client(n):
            body = {"warehouse_id": main, "delta": 1, "reason": "supplier_receipt"}
            try:
                start.wait(timeout=30)
                response = requests.post(
                    f"{base}/api/inventory/HOT-2/adjustments",
                    json=body,
                    headers={**headers, "Idempotency-Key": f"plus-one-{n}"},
                    timeout=60,
                )
                outcome = (response.status_code, response.text[:200])
            except Exception as error:  # noqa: BLE001 - reported by the assertions
                outcome = ("exception", repr(error))
            with lock:
                statuses.append(outcome)

        threads = [threading.Thread(target=client, args=(n,)) for n in range(CLIENTS)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=120)
        assert not any(thread.is_alive() for thread in threads)
        record = requests.get(f"{base}/api/inventory/HOT-2", headers=headers, timeout=30).json()
        ledger = requests.get(
            f"{base}/api/inventory/HOT-2/adjustments?limit=200", headers=headers, timeout=30
        ).json()

    assert [s for s, _ in statuses if s != 201] == [], statuses[:5]
    assert record["data"]["total_on_hand"] == CLIENTS
    assert len(ledger["data"]) == CLIENTS
    assert sorted(a["after_quantity"] for a in ledger["data"]) == list(range(1, CLIENTS + 1))
    assert all(a["delta"] == 1 for a in ledger["data"])
    assert check_ledger() == CLIENTS
