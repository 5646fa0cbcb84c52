"""Transfers through HTTP: every step keeps the stock whole (on_hand + incoming over the
warehouses unchanged, each stock row the sum of its ledger), refused requests change
nothing, listings of the SKUs go pending with the quantities."""

import pytest

from commerce_api.events.catalogue import CATALOGUE
from commerce_api.events.models import Event
from commerce_api.inventory.models import Stock
from commerce_api.inventory.reservations import reserve_stock
from commerce_api.products.models import Listing, Product
from commerce_api.transfers.models import Transfer, TransferLine
from tests.support.factories import create_product, headers_for
from tests.support.inventory_helpers import (
    make_marketplace_warehouse,
    make_warehouse,
    snapshot,
)
from tests.support.products_support import add_listing
from tests.support.transfer_helpers import (
    TRANSFERS,
    act,
    check_conserved,
    make_transfer,
    setup_two_warehouses,
)

STOCK = {"MUG-1": 100, "LAMP-1": 30}


@pytest.fixture
def two(client, headers):
    source, destination = setup_two_warehouses(client, headers, STOCK)
    return {"source": source, "destination": destination}


def _state():
    """Everything a transfer step writes, to prove a refused one wrote nothing."""
    return {
        **snapshot(),
        "transfers": sorted(
            Transfer.select(Transfer.id, Transfer.status, Transfer.updated_at).tuples()
        ),
        "lines": sorted(
            TransferLine.select(
                TransferLine.id, TransferLine.received_quantity, TransferLine.returned_quantity
            ).tuples()
        ),
        "all_events": Event.select().count(),
        "incoming": sorted(Stock.select(Stock.id, Stock.incoming).tuples()),
    }


def _incoming(view, sku, warehouse_id):
    return view[sku].get(warehouse_id, (0, 0, 0))


def test_a_transfer_never_counts_stock_twice_or_loses_it(client, headers, two):
    source, destination = two["source"], two["destination"]
    lines = [{"sku": "MUG-1", "quantity": 40}, {"sku": "LAMP-1", "quantity": 10}]
    transfer = make_transfer(client, headers, source, destination, lines, reference="DN-1")
    assert transfer["id"].startswith("trf_")
    assert transfer["status"] == "draft"
    assert transfer["reference"] == "DN-1"
    assert [line["in_transit_quantity"] for line in transfer["lines"]] == [0, 0]
    view = check_conserved(client, headers, STOCK)
    assert view["MUG-1"][source] == (100, 0, 0)
    assert destination not in view["MUG-1"]  # a draft moves nothing

    shipped = act(client, headers, transfer["id"], "ship")
    assert shipped.status_code == 200, shipped.get_json()
    body = shipped.get_json()["data"]
    assert body["status"] == "in_transit" and body["shipped_at"]
    assert [line["in_transit_quantity"] for line in body["lines"]] == [40, 10]
    view = check_conserved(client, headers, STOCK)
    assert view["MUG-1"][source] == (60, 0, 0)
    assert view["MUG-1"][destination] == (0, 0, 40)
    assert view["LAMP-1"][destination] == (0, 0, 10)
    record = client.get("/api/inventory/MUG-1", headers=headers).get_json()["data"]
    assert record["total_on_hand"] == 60 and record["total_incoming"] == 40
    out = client.get(
        "/api/inventory/MUG-1/adjustments",
        query_string={"reason": "transfer_out"},
        headers=headers,
    ).get_json()["data"]
    assert [(a["delta"], a["reference"], a["warehouse_id"]) for a in out] == [
        (-40, transfer["id"], source)
    ]

    partly = act(
        client, headers, transfer["id"], "receive", {"lines": [{"sku": "MUG-1", "quantity": 25}]}
    )
    assert partly.status_code == 200, partly.get_json()
    body = partly.get_json()["data"]
    assert body["status"] == "in_transit"
    assert [(line["received_quantity"], line["in_transit_quantity"]) for line in body["lines"]] == [
        (25, 15),
        (0, 10),
    ]
    view = check_conserved(client, headers, STOCK)
    assert view["MUG-1"][destination] == (25, 0, 15)

    rest = act(client, headers, transfer["id"], "receive", {})
    assert rest.status_code == 200, rest.get_json()
    body = rest.get_json()["data"]
    assert body["status"] == "received" and body["received_at"]
    assert [line["received_quantity"] for line in body["lines"]] == [40, 10]
    view = check_conserved(client, headers, STOCK)
    assert view["MUG-1"][source] == (60, 0, 0)
    assert view["MUG-1"][destination] == (40, 0, 0)
    assert view["LAMP-1"][destination] == (10, 0, 0)

    got = client.get(f"{TRANSFERS}/{transfer['id']}", headers=headers)
    assert got.status_code == 200 and got.get_json()["data"] == body
    types = [
        e.type
        for e in Event.select().where(Event.type.startswith("transfer.")).order_by(Event.created_at)
    ]
    assert types == [
        "transfer.created",
        "transfer.shipped",
        "transfer.received",
        "transfer.received",
    ]
    for event in Event.select().where(Event.type.startswith("transfer.")):
        assert set(event.data) == set(CATALOGUE[event.type][1]), event.type
        assert event.resource_id == transfer["id"]
    receipts = [
        e.data["receipt"]
        for e in Event.select().where(Event.type == "transfer.received").order_by(Event.created_at)
    ]
    assert receipts == [
        [{"sku": "MUG-1", "quantity": 25}],
        [{"sku": "MUG-1", "quantity": 15}, {"sku": "LAMP-1", "quantity": 10}],
    ]


def test_cancelling_in_transit_returns_what_was_not_received(client, headers, two):
    source, destination = two["source"], two["destination"]
    transfer = make_transfer(
        client, headers, source, destination, [{"sku": "MUG-1", "quantity": 40}]
    )
    assert act(client, headers, transfer["id"], "ship").status_code == 200
    received = act(
        client, headers, transfer["id"], "receive", {"lines": [{"sku": "MUG-1", "quantity": 10}]}
    )
    assert received.status_code == 200
    cancelled = act(client, headers, transfer["id"], "cancel")
    assert cancelled.status_code == 200, cancelled.get_json()
    body = cancelled.get_json()["data"]
    assert body["status"] == "cancelled" and body["cancelled_at"]
    assert body["lines"][0] | {} == {
        "sku": "MUG-1",
        "quantity": 40,
        "received_quantity": 10,
        "returned_quantity": 30,
        "in_transit_quantity": 0,
    }
    view = check_conserved(client, headers, STOCK)
    assert view["MUG-1"][source] == (90, 0, 0)
    assert view["MUG-1"][destination] == (10, 0, 0)
    returned = client.get(
        "/api/inventory/MUG-1/adjustments",
        query_string={"warehouse_id": source, "reason": "transfer_in"},
        headers=headers,
    ).get_json()["data"]
    assert [(a["delta"], a["reference"]) for a in returned] == [(30, transfer["id"])]
    # a cancelled transfer can be neither shipped, received nor cancelled again
    before = _state()
    for action in ("ship", "receive", "cancel"):
        response = act(client, headers, transfer["id"], action)
        assert response.status_code == 409, action
        error = response.get_json()["error"]
        assert error["code"] == "INVALID_TRANSFER_STATUS"
        assert error["details"]["status"] == "cancelled"
    assert _state() == before


def test_cancelling_a_draft_moves_nothing(client, headers, two):
    transfer = make_transfer(
        client, headers, two["source"], two["destination"], [{"sku": "MUG-1", "quantity": 5}]
    )
    response = act(client, headers, transfer["id"], "cancel")
    assert response.status_code == 200
    assert response.get_json()["data"]["status"] == "cancelled"
    view = check_conserved(client, headers, STOCK)
    assert view["MUG-1"] == {two["source"]: (100, 0, 0)}
    shipped = act(client, headers, transfer["id"], "ship")
    assert shipped.get_json()["error"]["code"] == "INVALID_TRANSFER_STATUS"


def test_listings_of_the_moved_skus_go_pending_at_each_step(client, headers, tenant, two):
    product = Product.get(Product.sku == "MUG-1")
    listing = add_listing(tenant.id, product.id, "amazon_us", sync_status="in_sync")
    other = add_listing(
        tenant.id, Product.get(Product.sku == "LAMP-1").id, "amazon_us", sync_status="in_sync"
    )
    transfer = make_transfer(
        client, headers, two["source"], two["destination"], [{"sku": "MUG-1", "quantity": 5}]
    )

    def status(row):
        return Listing.get_by_id(row.id).sync_status

    assert status(listing) == "in_sync"  # a draft changes no quantity
    assert act(client, headers, transfer["id"], "ship").status_code == 200
    assert status(listing) == "pending"
    assert status(other) == "in_sync"
    Listing.update(sync_status="in_sync").execute()
    assert act(client, headers, transfer["id"], "receive").status_code == 200
    assert status(listing) == "pending"
    assert status(other) == "in_sync"


def test_refused_requests_change_nothing(client, headers, tenant, two):
    source, destination = two["source"], two["destination"]
    fba = make_marketplace_warehouse(tenant.id)["id"]
    inactive = make_warehouse(client, headers, name="Closed", is_active=False)["id"]
    other_tenant = headers_for()
    foreign = make_warehouse(client, other_tenant, name="Theirs")["id"]
    create_product(client, other_tenant, sku="THEIRS-1", gtin=None)
    before = _state()

    def refused(body, status, code):
        full = {"from_warehouse_id": source, "to_warehouse_id": destination, **body}
        full.setdefault("lines", [{"sku": "MUG-1", "quantity": 1}])
        response = client.post(TRANSFERS, json=full, headers=headers)
        assert response.status_code == status, (body, response.get_json())
        assert response.get_json()["error"]["code"] == code
        return response.get_json()["error"]

    refused({"to_warehouse_id": source}, 422, "SAME_WAREHOUSE_TRANSFER")
    refused({"to_warehouse_id": "wh_missing"}, 404, "WAREHOUSE_NOT_FOUND")
    refused({"from_warehouse_id": foreign}, 404, "WAREHOUSE_NOT_FOUND")
    refused({"to_warehouse_id": fba}, 403, "READONLY_WAREHOUSE")
    refused({"from_warehouse_id": fba}, 403, "READONLY_WAREHOUSE")
    refused({"to_warehouse_id": inactive}, 409, "WAREHOUSE_INACTIVE")
    error = refused({"lines": [{"sku": "NOPE", "quantity": 1}]}, 404, "PRODUCT_NOT_FOUND")
    assert error["details"] == {"sku": "NOPE"}
    refused({"lines": [{"sku": "THEIRS-1", "quantity": 1}]}, 404, "PRODUCT_NOT_FOUND")
    error = refused(
        {"lines": [{"sku": "MUG-1", "quantity": 1}, {"sku": "MUG-1", "quantity": 2}]},
        422,
        "VALIDATION_ERROR",
    )
    assert "lines" in error["details"]["fields"]
    for quantity in (0, -3, 1.5, "2", True):
        refused({"lines": [{"sku": "MUG-1", "quantity": quantity}]}, 422, "VALIDATION_ERROR")
    refused({"lines": []}, 422, "VALIDATION_ERROR")
    refused({"lines": [{"sku": "MUG-1", "quantity": 1, "extra": 1}]}, 422, "VALIDATION_ERROR")
    refused({"status": "in_transit"}, 422, "VALIDATION_ERROR")
    assert _state() == before

    # another tenant's transfer is not found, whatever the action
    theirs_source = foreign
    theirs_destination = make_warehouse(client, other_tenant, name="Theirs 2")["id"]
    theirs = make_transfer(
        client,
        other_tenant,
        theirs_source,
        theirs_destination,
        [{"sku": "THEIRS-1", "quantity": 1}],
    )
    before = _state()
    assert client.get(f"{TRANSFERS}/{theirs['id']}", headers=headers).status_code == 404
    for action in ("ship", "receive", "cancel"):
        response = act(client, headers, theirs["id"], action)
        assert response.status_code == 404
        assert response.get_json()["error"]["code"] == "TRANSFER_NOT_FOUND"
    assert _state() == before


def make_bundle(client, headers, sku, components):
    body = {"sku": sku, "title": "Gift set", "components": components}
    response = client.post("/api/products", json=body, headers=headers)
    assert response.status_code == 201, response.get_json()


def test_a_bundle_sku_is_refused_as_a_line(client, headers, two):
    """A bundle holds no stock of its own (DESIGN 14): a line of one is a 409, at creation
    and at shipping (a product became a bundle after its draft was made); nothing moves."""
    source, destination = two["source"], two["destination"]
    make_bundle(client, headers, "GIFT-1", [{"sku": "MUG-1", "quantity": 2}])
    before = _state()
    for lines in (
        [{"sku": "GIFT-1", "quantity": 1}],
        [{"sku": "MUG-1", "quantity": 1}, {"sku": "GIFT-1", "quantity": 1}],
    ):
        body = {"from_warehouse_id": source, "to_warehouse_id": destination, "lines": lines}
        response = client.post(TRANSFERS, json=body, headers=headers)
        assert response.status_code == 409, response.get_json()
        error = response.get_json()["error"]
        assert error["code"] == "BUNDLE_STOCK_IS_DERIVED"
        assert error["details"] == {"sku": "GIFT-1", "field": "lines"}
    assert _state() == before
    create_product(client, headers, sku="LATER-SET", gtin=None)
    draft = make_transfer(
        client,
        headers,
        source,
        destination,
        [{"sku": "MUG-1", "quantity": 5}, {"sku": "LATER-SET", "quantity": 1}],
    )
    response = client.patch(
        "/api/products/LATER-SET",
        json={"components": [{"sku": "LAMP-1", "quantity": 1}]},
        headers=headers,
    )
    assert response.status_code == 200, response.get_json()
    before = _state()
    response = act(client, headers, draft["id"], "ship")
    assert response.status_code == 409, response.get_json()
    assert response.get_json()["error"]["code"] == "BUNDLE_STOCK_IS_DERIVED"
    assert _state() == before
    response = act(client, headers, draft["id"], "cancel")
    assert response.status_code == 200, response.get_json()


def test_shipping_without_enough_available_stock_is_refused_whole(client, headers, two):
    source, destination = two["source"], two["destination"]
    create_product(client, headers, sku="EMPTY-1", gtin=None)
    transfer = make_transfer(
        client,
        headers,
        source,
        destination,
        [
            {"sku": "MUG-1", "quantity": 100},
            {"sku": "LAMP-1", "quantity": 31},
            {"sku": "EMPTY-1", "quantity": 1},
        ],
    )
    before = _state()
    response = act(client, headers, transfer["id"], "ship")
    assert response.status_code == 422
    error = response.get_json()["error"]
    assert error["code"] == "NEGATIVE_QUANTITY"
    assert error["details"]["lines"] == [
        {"sku": "LAMP-1", "quantity": 31, "available": 30},
        {"sku": "EMPTY-1", "quantity": 1, "available": 0},
    ]
    assert "LAMP-1 (31 to ship, 30 available)" in error["message"]
    assert _state() == before
    check_conserved(client, headers, STOCK)


def test_shipping_never_takes_reserved_stock(client, headers, tenant, two):
    reserve_stock(tenant.id, "MUG-1", 95, reference="ord_1", created_by="test")
    transfer = make_transfer(
        client, headers, two["source"], two["destination"], [{"sku": "MUG-1", "quantity": 6}]
    )
    before = _state()
    response = act(client, headers, transfer["id"], "ship")
    assert response.status_code == 422
    assert response.get_json()["error"]["details"]["lines"] == [
        {"sku": "MUG-1", "quantity": 6, "available": 5}
    ]
    assert _state() == before


def test_receiving_more_than_in_transit_or_a_draft_is_refused(client, headers, two):
    source, destination = two["source"], two["destination"]
    transfer = make_transfer(
        client, headers, source, destination, [{"sku": "MUG-1", "quantity": 10}]
    )
    before = _state()
    draft = act(client, headers, transfer["id"], "receive")
    assert draft.status_code == 409
    assert draft.get_json()["error"]["code"] == "INVALID_TRANSFER_STATUS"
    assert draft.get_json()["error"]["details"]["status"] == "draft"
    assert _state() == before

    assert act(client, headers, transfer["id"], "ship").status_code == 200
    assert (
        act(
            client, headers, transfer["id"], "receive", {"lines": [{"sku": "MUG-1", "quantity": 4}]}
        ).status_code
        == 200
    )
    before = _state()
    cases = [
        ({"lines": [{"sku": "MUG-1", "quantity": 7}]}, 422, "RECEIPT_EXCEEDS_SHIPPED"),
        ({"lines": [{"sku": "LAMP-1", "quantity": 1}]}, 422, "TRANSFER_LINE_NOT_FOUND"),
        ({"lines": [{"sku": "MUG-1", "quantity": 0}]}, 422, "VALIDATION_ERROR"),
        ({"lines": []}, 422, "VALIDATION_ERROR"),
        (
            {"lines": [{"sku": "MUG-1", "quantity": 1}, {"sku": "MUG-1", "quantity": 1}]},
            422,
            "VALIDATION_ERROR",
        ),
        ({"everything": True}, 422, "VALIDATION_ERROR"),
    ]
    for body, status, code in cases:
        response = act(client, headers, transfer["id"], "receive", body)
        assert response.status_code == status, (body, response.get_json())
        assert response.get_json()["error"]["code"] == code
    error = act(client, headers, transfer["id"], "receive", cases[0][0]).get_json()["error"]
    assert error["details"]["in_transit"] == 6
    assert _state() == before
    shipped_again = act(client, headers, transfer["id"], "ship")
    assert shipped_again.status_code == 409
    assert _state() == before
    check_conserved(client, headers, STOCK)


def test_a_warehouse_with_stock_in_transit_cannot_be_deactivated(client, headers, two):
    source, destination = two["source"], two["destination"]
    transfer = make_transfer(
        client,
        headers,
        source,
        destination,
        [{"sku": "MUG-1", "quantity": 100}, {"sku": "LAMP-1", "quantity": 30}],
    )
    assert act(client, headers, transfer["id"], "ship").status_code == 200
    response = client.patch(
        f"/api/inventory/warehouses/{destination}", json={"is_active": False}, headers=headers
    )
    assert response.status_code == 409
    assert response.get_json()["error"]["code"] == "WAREHOUSE_NOT_EMPTY"
    # the emptied source can be deactivated; the stock then cannot go back to it
    response = client.patch(
        f"/api/inventory/warehouses/{source}", json={"is_active": False}, headers=headers
    )
    assert response.status_code == 200
    before = _state()
    cancelled = act(client, headers, transfer["id"], "cancel")
    assert cancelled.status_code == 409
    assert cancelled.get_json()["error"]["code"] == "WAREHOUSE_INACTIVE"
    assert _state() == before
    assert act(client, headers, transfer["id"], "receive").status_code == 200
    check_conserved(client, headers, STOCK)


def test_the_list_filters_and_pages(client, headers, two):
    source, destination = two["source"], two["destination"]
    third = make_warehouse(client, headers, name="Third")["id"]
    made = []
    for index in range(5):
        lines = [{"sku": "MUG-1" if index % 2 else "LAMP-1", "quantity": 1}]
        made.append(
            make_transfer(client, headers, source, destination if index < 3 else third, lines)
        )
    assert act(client, headers, made[0]["id"], "ship").status_code == 200
    assert act(client, headers, made[1]["id"], "cancel").status_code == 200

    def ids(**query):
        response = client.get(TRANSFERS, query_string=query, headers=headers)
        assert response.status_code == 200, response.get_json()
        return [t["id"] for t in response.get_json()["data"]]

    newest_first = [t["id"] for t in reversed(made)]
    assert ids() == newest_first
    assert ids(order="asc") == [t["id"] for t in made]
    assert ids(status="in_transit") == [made[0]["id"]]
    assert ids(status="cancelled") == [made[1]["id"]]
    assert ids(to_warehouse_id=third) == [made[4]["id"], made[3]["id"]]
    assert ids(from_warehouse_id=destination) == []
    assert ids(sku="MUG-1") == [made[3]["id"], made[1]["id"]]
    assert ids(sku="NOPE") == []
    page = client.get(TRANSFERS, query_string={"limit": 2}, headers=headers).get_json()
    assert page["meta"]["total"] == 5 and page["meta"]["nextCursor"]
    seen = [t["id"] for t in page["data"]]
    for _ in range(5):
        cursor = page["meta"]["nextCursor"]
        if not cursor:
            break
        page = client.get(
            TRANSFERS, query_string={"limit": 2, "cursor": cursor}, headers=headers
        ).get_json()
        seen += [t["id"] for t in page["data"]]
    assert seen == newest_first
    only = client.get(TRANSFERS, query_string={"fields": "status"}, headers=headers).get_json()
    assert set(only["data"][0]) == {"id", "status"}
    for query, code in (
        ({"to_warehouse_id": "wh_missing"}, "WAREHOUSE_NOT_FOUND"),
        ({"status": "shipped"}, "VALIDATION_ERROR"),
        ({"cursor": "nonsense"}, "INVALID_CURSOR"),
        ({"fields": "nope"}, "VALIDATION_ERROR"),
    ):
        response = client.get(TRANSFERS, query_string=query, headers=headers)
        assert response.get_json()["error"]["code"] == code, query
    cursor = client.get(TRANSFERS, query_string={"limit": 1, "status": "draft"}, headers=headers)
    next_cursor = cursor.get_json()["meta"]["nextCursor"]
    other = client.get(TRANSFERS, query_string={"limit": 1, "cursor": next_cursor}, headers=headers)
    assert other.get_json()["error"]["code"] == "INVALID_CURSOR"  # bound to its filters


@pytest.mark.parametrize("step", ["ship", "receive", "cancel"])
def test_a_step_that_dies_at_its_last_write_leaves_the_previous_state_whole(
    client, headers, tenant, two, monkeypatch, step
):
    """Each step is one transaction: a process dying inside it (here: its event write, the
    last statement, fails) leaves the state of the step before, consistent."""
    from commerce_api.transfers import services

    transfer = make_transfer(
        client, headers, two["source"], two["destination"], [{"sku": "MUG-1", "quantity": 40}]
    )
    if step != "ship":
        assert act(client, headers, transfer["id"], "ship").status_code == 200
    if step == "cancel":
        body = {"lines": [{"sku": "MUG-1", "quantity": 15}]}
        assert act(client, headers, transfer["id"], "receive", body).status_code == 200
    before = _state()

    def die(*args, **kwargs):
        raise SystemExit("killed")

    monkeypatch.setattr(services, "emit", die)
    calls = {
        "ship": lambda: services.ship_transfer(tenant.id, transfer["id"], "test"),
        "receive": lambda: services.receive_transfer(tenant.id, transfer["id"], None, "test"),
        "cancel": lambda: services.cancel_transfer(tenant.id, transfer["id"], "test"),
    }
    with pytest.raises(SystemExit):
        calls[step]()
    assert _state() == before
    check_conserved(client, headers, STOCK)
    monkeypatch.undo()
    # and the step can then be done
    assert act(client, headers, transfer["id"], step).status_code == 200
    check_conserved(client, headers, STOCK)
