"""``confirm_shipment`` checks the shipped quantities again once it has re-locked the order
(issue 13, item 8): whatever changed while the marketplace was answering (a concurrent
shipment of the same lines once the claim's lease ran out, an order pull that lowered a
line) cannot over-ship. While the claim holds, a concurrent shipment is refused (issue 19).
"""

import pytest

from commerce_api.claims import OperationClaim
from commerce_api.errors import ApiError
from commerce_api.marketplaces.sandbox import SandboxConnector
from commerce_api.orders.ingest import upsert_order
from commerce_api.orders.models import Order, OrderLine
from commerce_api.orders.shipping import confirm_shipment
from tests.support.orders_support import (
    connect,
    events_of,
    levels,
    make_own_warehouse,
    make_products,
    order_body,
    snapshot,
    stock_up,
)

SHIPMENT = {"carrier": "UPS", "tracking_number": "1Z999", "shipped_date": "2026-03-11T09:00:00Z"}


@pytest.fixture
def order_id(client, headers, tenant):
    make_products(client, headers, "MUG-1", "TOWEL-1")
    stock_up(tenant, make_own_warehouse(tenant), {"MUG-1": 10, "TOWEL-1": 5})
    connect(tenant, "amazon", "sandbox")
    _, order_id = upsert_order(tenant.id, order_body("M-1"), source="import")
    assert levels(tenant.id, "MUG-1") == (10, 2)
    return order_id


def while_the_marketplace_answers(monkeypatch, action):
    """Run ``action`` once, inside the first shipment's call to the marketplace (after its
    checks, before its transaction): what a concurrent request would do at that moment."""
    original = SandboxConnector.confirm_shipment
    done = []

    def confirm(self, order, shipment):
        if not done:
            done.append(True)
            action()
        return original(self, order, shipment)

    monkeypatch.setattr(SandboxConnector, "confirm_shipment", confirm)


def shipped_quantities(order_id):
    return sorted(
        OrderLine.select(OrderLine.external_line_item_id, OrderLine.shipped_quantity)
        .where(OrderLine.order == order_id)
        .tuples()
    )


def test_a_concurrent_shipment_is_refused_while_the_claim_holds(
    client, headers, tenant, order_id, monkeypatch
):
    refused, calls = [], []
    original = SandboxConnector.confirm_shipment

    def counting(self, order, shipment):
        calls.append(shipment["tracking_number"])
        return original(self, order, shipment)

    monkeypatch.setattr(SandboxConnector, "confirm_shipment", counting)

    def concurrent_shipment():
        body = {"carrier": "UPS", "tracking_number": "1Z-OTHER"}
        with pytest.raises(ApiError) as caught:
            confirm_shipment(tenant.id, order_id, body, "other-request")
        refused.append(caught.value)

    while_the_marketplace_answers(monkeypatch, concurrent_shipment)
    response = client.post(f"/api/orders/{order_id}/shipment", json=SHIPMENT, headers=headers)
    assert response.status_code == 200, response.get_json()
    (error,) = refused
    assert (error.code, error.status, error.headers) == (
        "CONCURRENT_UPDATE",
        409,
        {"Retry-After": "1"},
    )
    assert error.details["operation"] == "confirm_shipment"
    assert calls == ["1Z999"]  # the refused one never reached the marketplace
    assert Order.get_by_id(order_id).shipment["tracking_number"] == "1Z999"
    assert OperationClaim.select().count() == 0  # released with the outcome


def test_a_concurrent_shipment_of_the_same_lines_does_not_over_ship(
    client, headers, tenant, order_id, monkeypatch
):
    lines = [{"external_line_item_id": "M-1-L1", "quantity": 2}]
    winner = {}

    def concurrent_shipment():
        # the first one's lease ran out (a stalled process): the claim is free again
        OperationClaim.delete().execute()
        body = {"carrier": "UPS", "tracking_number": "1Z-OTHER", "line_items": lines}
        winner.update(confirm_shipment(tenant.id, order_id, body, "other-request"))

    while_the_marketplace_answers(monkeypatch, concurrent_shipment)
    response = client.post(
        f"/api/orders/{order_id}/shipment", json={**SHIPMENT, "line_items": lines}, headers=headers
    )
    assert response.status_code == 409, response.get_json()
    assert response.get_json()["error"]["code"] == "ALREADY_SHIPPED"
    assert winner["status"] == "shipped"
    order = Order.get_by_id(order_id)
    assert order.shipment["tracking_number"] == "1Z-OTHER"  # the first one kept
    assert shipped_quantities(order_id) == [("M-1-L1", 2), ("M-1-L2", 0)]
    assert levels(tenant.id, "MUG-1") == (8, 0)  # consumed once
    assert levels(tenant.id, "TOWEL-1") == (5, 0)  # not shipped: released
    assert events_of(order_id).count("order.shipped") == 1


def test_a_line_lowered_meanwhile_is_not_over_shipped(
    client, headers, tenant, order_id, monkeypatch
):
    lowered = order_body("M-1")
    lowered["line_items"][0].update(quantity=1, line_total=7.5)
    lowered["total_amount"] = 17.5
    state = {}

    def pull_lowers_the_line():
        assert upsert_order(tenant.id, lowered, source="import")[0] == "updated"
        state["before"] = snapshot()

    while_the_marketplace_answers(monkeypatch, pull_lowers_the_line)
    response = client.post(
        f"/api/orders/{order_id}/shipment",
        json={**SHIPMENT, "line_items": [{"external_line_item_id": "M-1-L1", "quantity": 2}]},
        headers=headers,
    )
    assert response.status_code == 422, response.get_json()
    error = response.get_json()["error"]
    assert error["code"] == "INVALID_STATUS_TRANSITION"
    assert error["details"]["external_line_item_id"] == "M-1-L1"
    assert (error["details"]["quantity"], error["details"]["line_quantity"]) == (2, 1)
    assert snapshot() == state["before"]  # nothing shipped, consumed or released
    assert Order.get_by_id(order_id).status == "pending"
    assert shipped_quantities(order_id) == [("M-1-L1", 0), ("M-1-L2", 0)]
    assert levels(tenant.id, "MUG-1") == (10, 1)
    # the shipment of what the line now holds goes through
    response = client.post(
        f"/api/orders/{order_id}/shipment",
        json={**SHIPMENT, "line_items": [{"external_line_item_id": "M-1-L1", "quantity": 1}]},
        headers=headers,
    )
    assert response.status_code == 200, response.get_json()
    assert shipped_quantities(order_id) == [("M-1-L1", 1), ("M-1-L2", 0)]
    assert levels(tenant.id, "MUG-1") == (9, 0)
