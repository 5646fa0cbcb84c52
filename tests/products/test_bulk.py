"""POST /api/products/bulk: up to 100 items, each applied atomically on its own."""

import pytest

from commerce_api.events.models import Event
from commerce_api.products.models import Product
from tests.support.factories import create_product, snapshot
from tests.support.http_support import assert_refused, error_code
from tests.support.products_support import add_order


def bulk(client, headers, updates):
    return client.post("/api/products/bulk", json={"updates": updates}, headers=headers)


def test_bulk_updates_each_item(client, headers):
    for sku in ("B-1", "B-2", "B-3"):
        create_product(client, headers, sku=sku, status="draft")
    response = bulk(
        client,
        headers,
        [
            {"sku": "B-1", "status": "active"},
            {"sku": "B-2", "title": "Renamed", "cost_price": 9.99},
            {"sku": "B-3", "status": "inactive", "images": []},
        ],
    )
    assert response.status_code == 200
    assert response.get_json() == {"data": {"updated": 3, "failed": 0, "errors": []}}
    rows = {p.sku: p for p in Product.select()}
    assert rows["B-1"].status == "active"
    assert rows["B-2"].title == "Renamed" and str(rows["B-2"].cost_price) == "9.99"
    assert rows["B-3"].status == "inactive" and rows["B-3"].images == []
    updated = Event.select().where(Event.type == "product.updated").order_by(Event.created_at)
    assert sorted(e.data["sku"] for e in updated) == ["B-1", "B-2", "B-3"]
    by_sku = {e.data["sku"]: e.data["changed_fields"] for e in updated}
    assert by_sku == {
        "B-1": ["status"],
        "B-2": ["cost_price", "title"],
        "B-3": ["images", "status"],
    }


def test_bulk_reports_failures_per_item_and_applies_the_rest(client, headers, tenant):
    for sku in ("OK-1", "OK-2", "OPEN"):
        create_product(client, headers, sku=sku)
    add_order(tenant.id, "OPEN", "processing")
    before_open = snapshot()["product"]
    response = bulk(
        client,
        headers,
        [
            {"sku": "OK-1", "title": "Changed 1"},
            {"sku": "MISSING", "title": "x"},
            {"sku": "OK-2", "title": "half", "gtin": "4006381333932"},  # whole item refused
            "not an object",
            {"title": "no sku"},
            {"sku": "OK-2", "cost_price": "12"},
            {"sku": "OK-2", "colour": "red"},
            {"sku": "OPEN", "status": "archived"},
            {"sku": "OK-2", "title": "Changed 2"},
        ],
    )
    assert response.status_code == 200
    data = response.get_json()["data"]
    assert (data["updated"], data["failed"]) == (2, 7)
    summary = [(e["index"], e["sku"], e["code"]) for e in data["errors"]]
    assert summary == [
        (1, "MISSING", "PRODUCT_NOT_FOUND"),
        (2, "OK-2", "INVALID_GTIN"),
        (3, None, "VALIDATION_ERROR"),
        (4, None, "VALIDATION_ERROR"),
        (5, "OK-2", "VALIDATION_ERROR"),
        (6, "OK-2", "VALIDATION_ERROR"),
        (7, "OPEN", "OPEN_ORDERS_EXIST"),
    ]
    for entry in data["errors"]:
        assert entry["message"] and isinstance(entry["details"], dict)
    assert data["errors"][3]["details"]["fields"] == {"sku": ["Missing data for required field."]}
    assert list(data["errors"][4]["details"]["fields"]) == ["cost_price"]
    assert data["errors"][5]["details"]["fields"] == {"colour": ["Unknown field."]}
    rows = {p.sku: p for p in Product.select()}
    assert rows["OK-1"].title == "Changed 1"
    assert rows["OK-2"].title == "Changed 2" and rows["OK-2"].gtin == "4006381333931"
    assert rows["OPEN"].status == "active"
    assert [r for r in snapshot()["product"] if '"OPEN"' in r] == [
        r for r in before_open if '"OPEN"' in r
    ]
    types = [e.type for e in Event.select().where(Event.type != "product.created")]
    assert sorted(types) == ["product.updated", "product.updated"]


def test_bulk_can_archive_and_writes_archived_events(client, headers):
    create_product(client, headers, sku="AR-1")
    response = bulk(client, headers, [{"sku": "AR-1", "status": "archived"}])
    assert response.get_json()["data"]["updated"] == 1
    assert Product.get(Product.sku == "AR-1").status == "archived"
    assert Event.select().where(Event.type == "product.archived").count() == 1


def test_bulk_of_100_items_is_accepted(client, headers):
    create_product(client, headers, sku="HUNDRED")
    updates = [{"sku": "HUNDRED", "title": f"title {i}"} for i in range(100)]
    data = bulk(client, headers, updates).get_json()["data"]
    assert (data["updated"], data["failed"]) == (100, 0)
    assert Product.get(Product.sku == "HUNDRED").title == "title 99"


@pytest.mark.parametrize(
    "body",
    [
        {"updates": [{"sku": "LIM", "title": "x"}] * 101},
        {"updates": []},
        {"updates": None},
        {"updates": {"sku": "LIM"}},
        {"updates": "LIM"},
        {},
        {"updates": [{"sku": "LIM", "title": "x"}], "dry_run": True},
        [{"sku": "LIM", "title": "x"}],
    ],
)
def test_bulk_refuses_a_bad_envelope_whole(client, headers, body):
    create_product(client, headers, sku="LIM")
    assert_refused(
        client, "POST", "/api/products/bulk", headers, 422, "VALIDATION_ERROR", json=body
    )


def test_bulk_over_100_names_the_limit(client, headers):
    response = bulk(client, headers, [{"sku": "X"}] * 101)
    assert error_code(response) == "VALIDATION_ERROR"
    assert "100" in response.get_json()["error"]["details"]["fields"]["updates"][0]


def test_bulk_item_without_changes_counts_as_updated_and_writes_nothing(client, headers):
    create_product(client, headers, sku="SAME", title="Same")
    before = snapshot()
    data = bulk(client, headers, [{"sku": "SAME"}, {"sku": "SAME", "title": "Same"}])
    assert data.get_json()["data"] == {"updated": 2, "failed": 0, "errors": []}
    assert snapshot() == before
