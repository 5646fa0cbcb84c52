"""``commerce-api orders import`` and order collection: upserts, stock effects, shortages."""

import json

import pytest

from commerce_api.cli import cli
from commerce_api.events.models import Event
from commerce_api.inventory.models import Adjustment, Reservation
from commerce_api.orders.models import Order, OrderLine, OrderReturn
from tests.support.orders_support import (
    assert_ledger_matches_stock,
    events_of,
    find_order,
    import_orders,
    ledger_totals,
    levels,
    open_reserved,
    order_body,
    snapshot,
    stock_up,
    write_orders,
)


def _file(n=5):
    orders = []
    for i in range(n):
        body = order_body(
            f"F-{i}",
            fulfillment_method=("FBM", "FBA", "FBS")[i % 3],
            created_at=f"2026-04-0{i + 1}T10:00:00Z",
        )
        if i == 1:
            body["returns"] = [
                {
                    "sku": "MUG-1",
                    "quantity": 1,
                    "reason": "damaged",
                    "reason_text": "Broken handle.",
                    "created_at": "2026-04-20T08:00:00Z",
                }
            ]
        orders.append(body)
    return orders


def _state(tenant_id):
    orders = {
        o.external_order_id: (o.id, o.status, o.reserved, o.stock_shortage, o.has_returns)
        for o in Order.select()
    }
    return {
        "orders": orders,
        "lines": OrderLine.select().count(),
        "returns": OrderReturn.select().count(),
        "levels": (levels(tenant_id, "MUG-1"), levels(tenant_id, "TOWEL-1")),
        "adjustments": Adjustment.select().count(),
        "reservations": sorted(
            Reservation.select(
                Reservation.reference, Reservation.sku, Reservation.quantity
            ).tuples()
        ),
        "events": Event.select().count(),
    }


def test_importing_twice_equals_importing_once(runner, tenant, shop, tmp_path):
    first = import_orders(runner, tenant, tmp_path, _file())
    assert (first["created"], first["updated"], first["unchanged"]) == (5, 0, 0)
    once = _state(tenant.id)
    # FBM and FBS orders (F-0, F-2, F-3) reserve; FBA ones (F-1, F-4) do not
    assert once["levels"] == ((10, 6), (5, 3))
    second = import_orders(runner, tenant, tmp_path, _file())
    assert (second["created"], second["updated"], second["unchanged"]) == (0, 0, 5)
    assert [o["id"] for o in second["orders"]] == [o["id"] for o in first["orders"]]
    assert _state(tenant.id) == once
    for sku in ("MUG-1", "TOWEL-1"):
        assert_ledger_matches_stock(tenant.id, sku)
        assert open_reserved(tenant.id, sku) == levels(tenant.id, sku)[1]


def test_import_reads_every_field(client, headers, runner, tenant, shop, tmp_path):
    body = order_body("FULL-1", total_amount=30.0, currency="EUR")
    body["line_items"] = [
        {"sku": "MUG-1", "quantity": 2, "unit_price": 7.5},  # no id: position 1; total computed
        {"sku": "TOWEL-1", "quantity": 1, "line_total": 15.0},  # unit price from the total
    ]
    import_orders(runner, tenant, tmp_path, [body])
    order = find_order(client, headers, "FULL-1")
    assert order["currency"] == "EUR" and order["total_amount"] == 30.0
    assert order["created_at"] == "2026-03-10T12:00:00.000Z"
    assert [
        (line["external_line_item_id"], line["line_total"], line["unit_price"])
        for line in order["line_items"]
    ] == [
        ("1", 15.0, 7.5),
        ("2", 15.0, 15.0),
    ]
    detail = client.get(f"/api/orders/{order['id']}", headers=headers).get_json()["data"]
    assert detail["shipping_address"] == body["shipping_address"]
    # a shipment names the lines by those ids
    response = client.post(
        f"/api/orders/{order['id']}/shipment",
        json={
            "carrier": "UPS",
            "tracking_number": "1Z",
            "line_items": [{"external_line_item_id": "2", "quantity": 1}],
        },
        headers=headers,
    )
    assert response.status_code == 200
    assert levels(tenant.id, "TOWEL-1") == (4, 0) and levels(tenant.id, "MUG-1") == (10, 0)


def test_reimport_applies_marketplace_changes(client, headers, runner, tenant, shop, tmp_path):
    import_orders(runner, tenant, tmp_path, [order_body("C-1")])
    order_id = Order.get(Order.external_order_id == "C-1").id
    changed = order_body("C-1", status="confirmed")
    changed["line_items"][0]["quantity"] = 4
    changed["line_items"][0]["line_total"] = 30.0
    changed["returns"] = [
        {
            "sku": "MUG-1",
            "quantity": 1,
            "reason": "damaged",
            "reason_text": None,
            "created_at": "2026-03-12T00:00:00Z",
        }
    ]
    result = import_orders(runner, tenant, tmp_path, [changed])
    assert result["updated"] == 1
    order = client.get(f"/api/orders/{order_id}", headers=headers).get_json()["data"]
    assert order["status"] == "confirmed" and order["has_returns"] is True
    assert order["line_items"][0]["quantity"] == 4
    assert len(order["returns"]) == 1
    assert levels(tenant.id, "MUG-1") == (10, 4)
    assert events_of(order_id) == ["order.created", "order.updated"]
    event = Event.select().where(Event.type == "order.updated").get()
    assert set(event.data["changed_fields"]) >= {"status", "line_items", "returns", "has_returns"}
    # the same file again: nothing more
    assert import_orders(runner, tenant, tmp_path, [changed])["unchanged"] == 1
    assert OrderReturn.select().count() == 1
    assert levels(tenant.id, "MUG-1") == (10, 4)
    assert_ledger_matches_stock(tenant.id, "MUG-1")
    # a stale, backward status is ignored
    result = import_orders(runner, tenant, tmp_path, [{**changed, "status": "pending"}])
    assert result["unchanged"] == 1
    assert Order.get_by_id(order_id).status == "confirmed"


def test_marketplace_reported_cancellation_and_shipment_move_stock(runner, tenant, shop, tmp_path):
    import_orders(runner, tenant, tmp_path, [order_body("X-1"), order_body("X-2")])
    assert levels(tenant.id, "MUG-1") == (10, 4)
    result = import_orders(
        runner,
        tenant,
        tmp_path,
        [order_body("X-1", status="cancelled"), order_body("X-2", status="shipped")],
    )
    assert result["updated"] == 2
    assert levels(tenant.id, "MUG-1") == (8, 0)
    assert levels(tenant.id, "TOWEL-1") == (4, 0)
    totals = ledger_totals(tenant.id, "MUG-1")
    assert totals[("reserved", "release")] == -2
    assert totals[("on_hand", "sale")] == -2
    x1, x2 = (
        Order.get(Order.external_order_id == "X-1"),
        Order.get(Order.external_order_id == "X-2"),
    )
    assert events_of(x1.id)[-1] == "order.cancelled"
    assert events_of(x2.id)[-1] == "order.shipped"
    assert [line.shipped_quantity for line in x2.lines.order_by(OrderLine.position)] == [2, 1]
    assert_ledger_matches_stock(tenant.id, "MUG-1")


def test_orders_arriving_closed_hold_no_stock(runner, tenant, shop, tmp_path):
    orders = [
        order_body(f"H-{s}", status=s) for s in ("shipped", "delivered", "completed", "cancelled")
    ]
    orders.append(order_body("H-FBA", fulfillment_method="FBA"))
    import_orders(runner, tenant, tmp_path, orders)
    assert levels(tenant.id, "MUG-1") == (10, 0)
    assert Adjustment.select().where(Adjustment.reason != "supplier_receipt").count() == 0


def test_shortage_records_the_order_and_reserves_what_exists(
    client, headers, runner, tenant, shop, tmp_path
):
    big = order_body("S-1")
    big["line_items"][0]["quantity"] = 12  # 10 mugs on hand
    big["line_items"].append({"sku": "UNKNOWN-SKU", "quantity": 1, "unit_price": 1.0})
    result = import_orders(runner, tenant, tmp_path, [big])
    assert result["created"] == 1
    order = find_order(client, headers, "S-1")
    assert order["stock_shortage"] is True
    assert levels(tenant.id, "MUG-1") == (10, 10)
    assert levels(tenant.id, "TOWEL-1") == (5, 1)
    # the same file again changes nothing while stock is short
    before = _state(tenant.id)
    assert import_orders(runner, tenant, tmp_path, [big])["unchanged"] == 1
    assert _state(tenant.id) == before
    # stock arrives; the next time the order comes, its reservation is topped up
    stock_up(tenant, shop, {"MUG-1": 15})
    assert import_orders(runner, tenant, tmp_path, [big])["updated"] == 1
    assert levels(tenant.id, "MUG-1") == (15, 12)
    assert Order.get(Order.external_order_id == "S-1").stock_shortage is True  # UNKNOWN-SKU
    # shipping consumes what is held
    response = client.post(
        f"/api/orders/{order['id']}/shipment",
        json={"carrier": "UPS", "tracking_number": "1Z"},
        headers=headers,
    )
    assert response.status_code == 200
    assert levels(tenant.id, "MUG-1") == (3, 0)
    assert_ledger_matches_stock(tenant.id, "MUG-1")


def test_shortage_with_nothing_available_reserves_nothing(
    client, headers, runner, tenant, shop, tmp_path
):
    stock_up(tenant, shop, {"TOWEL-1": 0})
    import_orders(runner, tenant, tmp_path, [order_body("Z-1")])
    order = Order.get(Order.external_order_id == "Z-1")
    assert order.stock_shortage is True
    assert levels(tenant.id, "MUG-1") == (10, 2)
    assert levels(tenant.id, "TOWEL-1") == (0, 0)


@pytest.mark.parametrize(
    ("mutate", "field"),
    [
        (lambda o: o.pop("external_order_id"), "external_order_id"),
        (lambda o: o.pop("created_at"), "created_at"),
        (lambda o: o.update(created_at="last tuesday"), "created_at"),
        (lambda o: o.update(status="lost"), "status"),
        (lambda o: o.update(fulfillment_method="DHL"), "fulfillment_method"),
        (lambda o: o.update(line_items=[]), "line_items"),
        (lambda o: o["line_items"][0].update(quantity=0), "line_items"),
        (lambda o: o["line_items"][0].update(unit_price="7.50"), "line_items"),
        (lambda o: o.update(total_amount=-1), "total_amount"),
        (lambda o: o.update(currency="euro"), "currency"),
        (lambda o: o.update(colour="red"), "colour"),
        (lambda o: o["shipping_address"].update(planet="Mars"), "shipping_address"),
        (lambda o: o.update(returns=[{"sku": "MUG-1", "quantity": 1}]), "returns"),
        (
            lambda o: o["line_items"][1].update(
                external_line_item_id=o["line_items"][0]["external_line_item_id"]
            ),
            "line_items",
        ),
    ],
)
def test_an_invalid_order_imports_nothing(runner, tenant, shop, tmp_path, mutate, field):
    bad = order_body("BAD-1")
    mutate(bad)
    before = snapshot()
    result = import_orders(runner, tenant, tmp_path, [order_body("GOOD-1"), bad], expect_ok=False)
    assert result.exit_code != 0
    assert "VALIDATION_ERROR" in result.output
    assert '"1"' in result.output and field in result.output
    assert snapshot() == before


def test_import_file_errors(runner, tenant, shop, tmp_path):
    bad_json = tmp_path / "bad.json"
    bad_json.write_text("[{")
    for args, text in (
        (["--file", str(bad_json)], "INVALID_JSON"),
        (["--file", str(tmp_path / "missing.json")], "cannot read"),
        (["--file", write_orders(tmp_path, {"orders": []}, "obj.json")], "VALIDATION_ERROR"),
    ):
        result = runner.invoke(cli, ["orders", "import", "--tenant", tenant.id, *args])
        assert result.exit_code != 0 and text in result.output
    result = runner.invoke(
        cli,
        [
            "orders",
            "import",
            "--tenant",
            "00000000-0000-0000-0000-000000000000",
            "--file",
            write_orders(tmp_path, []),
        ],
    )
    assert result.exit_code != 0 and "tenant does not exist" in result.output
    assert Order.select().count() == 0


def test_import_of_unconnected_marketplace_warns(runner, tenant, shop, tmp_path):
    path = write_orders(tmp_path, [order_body("W-1", marketplace="otto")])
    result = runner.invoke(cli, ["orders", "import", "--tenant", tenant.id, "--file", path])
    assert result.exit_code == 0
    assert "1 created" in result.output and "otto is not connected" in result.output
    result = runner.invoke(
        cli, ["orders", "import", "--tenant", tenant.id, "--file", path, "--json"]
    )
    assert json.loads(result.output)["unconnected_marketplaces"] == ["otto"]


def test_same_external_id_on_two_marketplaces_is_two_orders(runner, tenant, shop, tmp_path):
    import_orders(
        runner, tenant, tmp_path, [order_body("SAME"), order_body("SAME", marketplace="ebay")]
    )
    assert Order.select().where(Order.external_order_id == "SAME").count() == 2
