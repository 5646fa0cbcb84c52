"""The reservation service that orders and connectors call: reserve, release, consume,
marketplace stock and available quantity."""

import threading

import pytest

from commerce_api.db import db, write_transaction
from commerce_api.errors import ApiError
from commerce_api.inventory import reservations as svc
from commerce_api.inventory.models import Adjustment, Reservation, Stock
from commerce_api.products.services import create_product
from tests.support.factories import make_tenant
from tests.support.inventory_helpers import (
    check_ledger,
    inventory_events,
    make_marketplace_warehouse,
    snapshot,
)

BY = "orders@test"


@pytest.fixture
def shop(app, tenant):
    """Products MUG-1 and MUG-2; own warehouses A (older) and B; an FBA warehouse."""
    from commerce_api.inventory.services import bulk_set_stock, create_warehouse

    for sku in ("MUG-1", "MUG-2"):
        create_product(tenant.id, {"sku": sku, "title": sku})
    a = create_warehouse(tenant.id, {"name": "A"})["id"]
    b = create_warehouse(tenant.id, {"name": "B"})["id"]
    fba = make_marketplace_warehouse(tenant.id)["id"]

    def stock(sku, warehouse_id, quantity):
        item = {"index": 0, "sku": sku, "warehouse_id": warehouse_id, "quantity": quantity}
        result = bulk_set_stock(tenant.id, [{**item, "reason": "supplier_receipt"}], "setup")
        assert result["updated"] == 1, result

    return {"tenant": tenant.id, "a": a, "b": b, "fba": fba, "stock": stock}


def levels(sku, warehouse_id):
    row = Stock.get_or_none((Stock.sku == sku) & (Stock.warehouse == warehouse_id))
    return (row.on_hand, row.reserved) if row else None


def test_reserve_prefers_the_first_own_warehouse_with_all_of_it(shop):
    t = shop["tenant"]
    shop["stock"]("MUG-1", shop["a"], 3)
    shop["stock"]("MUG-1", shop["b"], 10)
    svc.set_marketplace_stock(t, shop["fba"], "MUG-1", 50, created_by="connector")
    allocation = svc.reserve_stock(t, "MUG-1", 2, reference="ord_1", created_by=BY)
    assert allocation == [{"warehouse_id": shop["a"], "quantity": 2}]
    # A has 1 left: the next 5 come whole from B, never from the marketplace's stock
    allocation = svc.reserve_stock(t, "MUG-1", 5, reference="ord_2", created_by=BY)
    assert allocation == [{"warehouse_id": shop["b"], "quantity": 5}]
    assert levels("MUG-1", shop["a"]) == (3, 2)
    assert levels("MUG-1", shop["b"]) == (10, 5)
    assert levels("MUG-1", shop["fba"]) == (50, 0)
    reserved = Adjustment.select().where(Adjustment.quantity_type == "reserved")
    assert sorted((a.reason, a.delta, a.reference, a.created_by) for a in reserved) == [
        ("reservation", 2, "ord_1", BY),
        ("reservation", 5, "ord_2", BY),
    ]
    check_ledger()


def test_reserve_splits_when_no_warehouse_has_all(shop):
    t = shop["tenant"]
    shop["stock"]("MUG-1", shop["a"], 3)
    shop["stock"]("MUG-1", shop["b"], 4)
    allocation = svc.reserve_stock(t, "MUG-1", 6, reference="ord_1", created_by=BY)
    assert allocation == [
        {"warehouse_id": shop["a"], "quantity": 3},
        {"warehouse_id": shop["b"], "quantity": 3},
    ]
    assert svc.available_quantity(t, "MUG-1") == 1
    check_ledger()


def test_insufficient_stock_reserves_nothing(shop):
    t = shop["tenant"]
    shop["stock"]("MUG-1", shop["a"], 2)
    shop["stock"]("MUG-1", shop["b"], 1)
    svc.set_marketplace_stock(t, shop["fba"], "MUG-1", 40, created_by="connector")
    before = snapshot()
    with pytest.raises(ApiError) as caught:
        svc.reserve_stock(t, "MUG-1", 4, reference="ord_1", created_by=BY)
    assert caught.value.code == "INSUFFICIENT_STOCK" and caught.value.status == 409
    assert caught.value.details == {"sku": "MUG-1", "requested": 4, "available": 3}
    with pytest.raises(ApiError) as caught:
        svc.reserve_stock(t, "MUG-2", 1, reference="ord_1", created_by=BY)  # never stocked
    assert caught.value.code == "INSUFFICIENT_STOCK"
    with pytest.raises(ApiError) as caught:
        svc.reserve_stock(t, "NOPE", 1, reference="ord_1", created_by=BY)
    assert caught.value.code == "PRODUCT_NOT_FOUND"
    for bad in (0, -1, 1.5, True, "2"):
        with pytest.raises(ApiError) as caught:
            svc.reserve_stock(t, "MUG-1", bad, reference="ord_1", created_by=BY)
        assert caught.value.code == "VALIDATION_ERROR"
    with pytest.raises(ApiError):
        svc.reserve_stock(t, "MUG-1", 1, reference="", created_by=BY)
    assert snapshot() == before
    # another tenant's SKU of the same name is unknown here
    other = make_tenant()
    with pytest.raises(ApiError) as caught:
        svc.reserve_stock(other.id, "MUG-1", 1, reference="ord_1", created_by=BY)
    assert caught.value.code == "PRODUCT_NOT_FOUND"


def test_reserve_is_idempotent_per_reference_and_sku(shop):
    t = shop["tenant"]
    shop["stock"]("MUG-1", shop["a"], 10)
    shop["stock"]("MUG-2", shop["a"], 10)
    first = svc.reserve_stock(t, "MUG-1", 4, reference="ord_1", created_by=BY)
    before = snapshot()
    again = svc.reserve_stock(t, "MUG-1", 4, reference="ord_1", created_by=BY)
    bigger = svc.reserve_stock(t, "MUG-1", 9, reference="ord_1", created_by=BY)
    assert first == again == bigger == [{"warehouse_id": shop["a"], "quantity": 4}]
    assert snapshot() == before
    # the same reference may reserve another SKU, and another reference the same SKU
    svc.reserve_stock(t, "MUG-2", 1, reference="ord_1", created_by=BY)
    svc.reserve_stock(t, "MUG-1", 1, reference="ord_2", created_by=BY)
    assert levels("MUG-1", shop["a"]) == (10, 5)
    assert levels("MUG-2", shop["a"]) == (10, 1)
    check_ledger()


def test_release_gives_back_and_is_idempotent(shop):
    t = shop["tenant"]
    shop["stock"]("MUG-1", shop["a"], 2)
    shop["stock"]("MUG-1", shop["b"], 3)
    shop["stock"]("MUG-2", shop["b"], 5)
    svc.reserve_stock(t, "MUG-1", 4, reference="ord_1", created_by=BY)  # split 2 + 2
    svc.reserve_stock(t, "MUG-2", 3, reference="ord_1", created_by=BY)
    released = svc.release_stock(t, "ord_1", created_by=BY, sku="MUG-2")
    assert released == [{"sku": "MUG-2", "warehouse_id": shop["b"], "quantity": 3}]
    assert levels("MUG-2", shop["b"]) == (5, 0)
    released = svc.release_stock(t, "ord_1", created_by=BY)
    assert sorted((r["warehouse_id"], r["quantity"]) for r in released) == sorted(
        [(shop["a"], 2), (shop["b"], 2)]
    )
    assert levels("MUG-1", shop["a"]) == (2, 0) and levels("MUG-1", shop["b"]) == (3, 0)
    before = snapshot()
    assert svc.release_stock(t, "ord_1", created_by=BY) == []
    assert svc.release_stock(t, "ord_unknown", created_by=BY) == []
    assert svc.release_stock(t, "ord_1", created_by=BY, sku="NOPE") == []
    # a released reference stays released: reserving it again returns the old allocation
    assert svc.reserve_stock(t, "MUG-2", 3, reference="ord_1", created_by=BY) == [
        {"warehouse_id": shop["b"], "quantity": 3}
    ]
    assert snapshot() == before
    reasons = [
        (a.reason, a.delta)
        for a in Adjustment.select()
        .where(Adjustment.reason == "release")
        .order_by(Adjustment.created_at)
    ]
    assert sorted(reasons) == [("release", -3), ("release", -2), ("release", -2)]
    assert svc.get_reservations(t, "ord_1")[0]["remaining"] == 0
    check_ledger()


def test_consume_turns_the_reservation_into_a_sale(shop):
    t = shop["tenant"]
    shop["stock"]("MUG-1", shop["a"], 10)
    svc.reserve_stock(t, "MUG-1", 4, reference="ord_1", created_by=BY)
    consumed = svc.consume_stock(t, "ord_1", created_by=BY)
    assert consumed == [{"sku": "MUG-1", "warehouse_id": shop["a"], "quantity": 4}]
    assert levels("MUG-1", shop["a"]) == (6, 0)
    sales = Adjustment.select().where(Adjustment.reason == "sale").order_by(Adjustment.sequence)
    assert [(a.quantity_type, a.before_quantity, a.after_quantity) for a in sales] == [
        ("reserved", 4, 0),
        ("on_hand", 10, 6),
    ]
    before = snapshot()
    assert svc.consume_stock(t, "ord_1", created_by=BY) == []
    assert svc.release_stock(t, "ord_1", created_by=BY) == []  # nothing left to release
    assert snapshot() == before
    assert svc.available_quantity(t, "MUG-1") == 6
    check_ledger()


def test_partial_consume_is_cumulative_and_idempotent(shop):
    t = shop["tenant"]
    shop["stock"]("MUG-1", shop["a"], 3)
    shop["stock"]("MUG-1", shop["b"], 5)
    svc.reserve_stock(t, "MUG-1", 6, reference="ord_1", created_by=BY)  # 3 from A, 3 from B
    assert svc.consume_stock(t, "ord_1", created_by=BY, sku="MUG-1", quantity=2) == [
        {"sku": "MUG-1", "warehouse_id": shop["a"], "quantity": 2}
    ]
    before = snapshot()
    assert svc.consume_stock(t, "ord_1", created_by=BY, sku="MUG-1", quantity=2) == []
    assert snapshot() == before
    # shipped 4 in all: 2 more, the rest of A then B
    assert svc.consume_stock(t, "ord_1", created_by=BY, sku="MUG-1", quantity=4) == [
        {"sku": "MUG-1", "warehouse_id": shop["a"], "quantity": 1},
        {"sku": "MUG-1", "warehouse_id": shop["b"], "quantity": 1},
    ]
    assert levels("MUG-1", shop["a"]) == (0, 0) and levels("MUG-1", shop["b"]) == (4, 2)
    # more than was reserved: capped at the reservation
    consumed = svc.consume_stock(t, "ord_1", created_by=BY, sku="MUG-1", quantity=50)
    assert consumed == [{"sku": "MUG-1", "warehouse_id": shop["b"], "quantity": 2}]
    assert levels("MUG-1", shop["b"]) == (2, 0)
    (reservation_a, reservation_b) = svc.get_reservations(t, "ord_1")
    assert (reservation_a["consumed"], reservation_b["consumed"]) == (3, 3)
    with pytest.raises(ApiError) as caught:
        svc.consume_stock(t, "ord_1", created_by=BY, quantity=1)  # quantity without sku
    assert caught.value.code == "VALIDATION_ERROR"
    check_ledger()


def test_release_after_partial_shipment_releases_the_rest(shop):
    t = shop["tenant"]
    shop["stock"]("MUG-1", shop["a"], 10)
    svc.reserve_stock(t, "MUG-1", 5, reference="ord_1", created_by=BY)
    svc.consume_stock(t, "ord_1", created_by=BY, sku="MUG-1", quantity=2)
    assert svc.release_stock(t, "ord_1", created_by=BY) == [
        {"sku": "MUG-1", "warehouse_id": shop["a"], "quantity": 3}
    ]
    assert levels("MUG-1", shop["a"]) == (8, 0)
    assert svc.consume_stock(t, "ord_1", created_by=BY) == []
    check_ledger()


def test_reserved_stock_cannot_be_counted_away(shop, client, headers):
    t = shop["tenant"]
    shop["stock"]("MUG-1", shop["a"], 10)
    svc.reserve_stock(t, "MUG-1", 6, reference="ord_1", created_by=BY)
    body = {"warehouse_id": shop["a"], "quantity": 5, "reason": "cycle_count"}
    response = client.put("/api/inventory/MUG-1", json=body, headers=headers)
    assert response.status_code == 422
    assert response.get_json()["error"]["code"] == "NEGATIVE_QUANTITY"
    body["quantity"] = 6
    record = client.put("/api/inventory/MUG-1", json=body, headers=headers).get_json()["data"]
    assert (record["total_on_hand"], record["total_reserved"], record["total_available"]) == (
        6,
        6,
        0,
    )
    assert record["status"] == "out_of_stock"
    check_ledger()


def test_marketplace_stock(shop, client, headers):
    t = shop["tenant"]
    shop["stock"]("MUG-1", shop["a"], 10)
    adjustment = svc.set_marketplace_stock(t, shop["fba"], "MUG-1", 25, created_by="amazon")
    assert (adjustment["reason"], adjustment["before_quantity"], adjustment["after_quantity"]) == (
        "marketplace_sync",
        0,
        25,
    )
    assert adjustment["created_by"] == "amazon"
    before = snapshot()
    assert svc.set_marketplace_stock(t, shop["fba"], "MUG-1", 25, created_by="amazon") is None
    assert svc.set_marketplace_stock(t, shop["fba"], "MUG-2", 0, created_by="amazon") is None
    assert snapshot() == before
    svc.set_marketplace_stock(t, shop["fba"], "MUG-1", 20, created_by="amazon")
    record = client.get("/api/inventory/MUG-1", headers=headers).get_json()["data"]
    assert record["total_on_hand"] == 30
    fba_entry = [w for w in record["warehouses"] if w["warehouse_id"] == shop["fba"]][0]
    assert (fba_entry["type"], fba_entry["on_hand"], fba_entry["available"]) == ("FBA", 20, 20)
    assert svc.available_quantity(t, "MUG-1") == 30
    assert svc.available_quantity(t, "MUG-2") == 0
    assert svc.available_quantity(t, "NOPE") == 0
    before = snapshot()
    for warehouse_id, sku, on_hand, code in (
        (shop["a"], "MUG-1", 5, "VALIDATION_ERROR"),  # own stock is the tenant's to set
        ("wh_nope", "MUG-1", 5, "WAREHOUSE_NOT_FOUND"),
        (shop["fba"], "NOPE", 5, "PRODUCT_NOT_FOUND"),
        (shop["fba"], "MUG-1", -1, "NEGATIVE_QUANTITY"),
        (shop["fba"], "MUG-1", "5", "VALIDATION_ERROR"),
    ):
        with pytest.raises(ApiError) as caught:
            svc.set_marketplace_stock(t, warehouse_id, sku, on_hand, created_by="amazon")
        assert caught.value.code == code
    other_fba = make_marketplace_warehouse(make_tenant().id)["id"]
    with pytest.raises(ApiError) as caught:
        svc.set_marketplace_stock(t, other_fba, "MUG-1", 5, created_by="amazon")
    assert caught.value.code == "WAREHOUSE_NOT_FOUND"
    assert snapshot() == {**before, "warehouses": snapshot()["warehouses"]}
    check_ledger()


def test_runs_inside_the_callers_transaction(shop):
    t = shop["tenant"]
    shop["stock"]("MUG-1", shop["a"], 5)
    before = snapshot()

    class Abort(Exception):
        pass

    # the caller's transaction fails after reserving: the reservation goes with it
    with pytest.raises(Abort), write_transaction():
        svc.reserve_stock(t, "MUG-1", 2, reference="ord_1", created_by=BY)
        assert levels("MUG-1", shop["a"]) == (5, 2)
        raise Abort()
    assert snapshot() == before
    # a refusal inside the caller's transaction undoes only that call
    with write_transaction():
        svc.reserve_stock(t, "MUG-1", 2, reference="ord_1", created_by=BY)
        with pytest.raises(ApiError):
            svc.reserve_stock(t, "MUG-1", 9, reference="ord_2", created_by=BY)
        svc.consume_stock(t, "ord_1", created_by=BY)
    assert levels("MUG-1", shop["a"]) == (3, 0)
    assert [r["reference"] for r in Reservation.select().dicts()] == ["ord_1"]
    check_ledger()


def test_events_for_reservations(shop):
    t = shop["tenant"]
    shop["stock"]("MUG-1", shop["a"], 4)
    count = len(inventory_events("inventory.adjusted"))
    svc.reserve_stock(t, "MUG-1", 4, reference="ord_1", created_by=BY)
    events = inventory_events()[count + 1 :]  # after the setup's status change
    assert [e["type"] for e in events] == ["inventory.adjusted", "inventory.status_changed"]
    assert events[0]["data"]["quantity_type"] == "reserved"
    assert events[0]["data"]["reference"] == "ord_1"
    assert (events[1]["data"]["previous_status"], events[1]["data"]["status"]) == (
        "normal",
        "out_of_stock",
    )


def test_concurrent_reservations_never_oversell(shop):
    """Twelve threads, each with its own connection, race for 5 units."""
    t = shop["tenant"]
    shop["stock"]("MUG-1", shop["a"], 3)
    shop["stock"]("MUG-1", shop["b"], 2)
    results, errors = [], []
    start = threading.Barrier(12)

    def worker(n):
        try:
            start.wait(timeout=10)
            with db.connection_context():
                results.append(
                    svc.reserve_stock(t, "MUG-1", 1, reference=f"ord_{n}", created_by=BY)
                )
        except ApiError as error:
            errors.append(error.code)
        except Exception as error:  # noqa: BLE001 - reported below
            errors.append(repr(error))

    threads = [threading.Thread(target=worker, args=(n,)) for n in range(12)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert len(results) == 5
    assert sorted(errors) == ["INSUFFICIENT_STOCK"] * 7
    assert levels("MUG-1", shop["a"]) == (3, 3) and levels("MUG-1", shop["b"]) == (2, 2)
    assert Reservation.select().count() == 5
    assert check_ledger() == 2 + 5
