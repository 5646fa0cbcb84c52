"""Products API: every endpoint, every query parameter, every product error code."""

import base64
import json
import re
import threading
import time
from decimal import Decimal
from urllib.parse import urlencode

import pytest

from commerce_api.auth.models import SCOPES
from commerce_api.events.models import Event
from commerce_api.jobs.models import Job
from commerce_api.products import services
from commerce_api.products.models import Product
from tests.support.factories import (
    auth_headers,
    create_product,
    headers_for,
    make_key,
    product_body,
    snapshot,
)
from tests.support.http_support import assert_refused, error_code
from tests.support.products_support import add_listing, add_order, connect

TIMESTAMP = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$")
PRODUCT_KEYS = {
    "id",
    "sku",
    "title",
    "description",
    "status",
    "gtin",
    "category",
    "cost_price",
    "weight_kg",
    "images",
    "created_at",
    "updated_at",
}


def events(type_=None):
    query = Event.select().order_by(Event.created_at, Event.id)
    if type_:
        query = query.where(Event.type == type_)
    return list(query)


def skus(response):
    assert response.status_code == 200, response.get_json()
    return [item["sku"] for item in response.get_json()["data"]]


# Create -------------------------------------------------------------------------------


def test_create_returns_the_product_and_writes_one_event(client, headers, tenant):
    body = product_body(sku="MUG-1", category="kitchen")
    response = client.post("/api/products", json=body, headers=headers)
    assert response.status_code == 201
    assert response.headers["Content-Type"] == "application/json"
    data = response.get_json()["data"]
    assert set(data) == PRODUCT_KEYS | {"components"}
    assert data["components"] == []
    assert data["id"].startswith("prod_") and len(data["id"]) == 31
    for name in ("sku", "title", "description", "status", "gtin", "category", "images"):
        assert data[name] == body[name]
    assert data["cost_price"] == 3.5 and data["weight_kg"] == 0.35
    assert TIMESTAMP.match(data["created_at"]) and data["created_at"] == data["updated_at"]

    row = Product.get(Product.sku == "MUG-1")
    assert row.tenant_id == tenant.id and row.cost_price == Decimal("3.50")
    created = events()
    assert [(e.type, e.resource_type, e.resource_id, e.tenant_id) for e in created] == [
        ("product.created", "product", data["id"], tenant.id)
    ]
    assert created[0].data == data


def test_create_with_only_sku_and_title_uses_defaults(client, headers):
    response = client.post("/api/products", json={"sku": "A", "title": "T"}, headers=headers)
    assert response.status_code == 201
    data = response.get_json()["data"]
    assert data["status"] == "draft"
    assert data["images"] == []
    for name in ("description", "gtin", "category", "cost_price", "weight_kg"):
        assert data[name] is None


def test_create_is_readable_with_get(client, headers):
    created = create_product(client, headers, sku="READ-1")
    response = client.get("/api/products/READ-1", headers=headers)
    assert response.status_code == 200
    assert response.get_json()["data"] == {**created, "listings": []}


@pytest.mark.parametrize(
    "value,places",
    [(12.5, 12.5), (0, 0), (12, 12), (9999999999.99, 9999999999.99), (0.1, 0.1)],
)
def test_create_keeps_money_exact(client, headers, value, places):
    data = create_product(client, headers, cost_price=value)
    assert data["cost_price"] == places
    assert Product.get_by_id(data["id"]).cost_price == Decimal(str(value)).quantize(Decimal("0.01"))


def test_create_duplicate_sku_is_refused(client, headers):
    create_product(client, headers, sku="DUP")
    error = assert_refused(
        client, "POST", "/api/products", headers, 409, "DUPLICATE_SKU", json=product_body("DUP")
    )
    assert error["details"] == {"sku": "DUP"}


def test_sku_is_case_sensitive(client, headers):
    create_product(client, headers, sku="case")
    create_product(client, headers, sku="CASE")
    assert client.get("/api/products/case", headers=headers).get_json()["data"]["sku"] == "case"


def test_sku_of_an_archived_product_stays_taken(client, headers):
    create_product(client, headers, sku="GONE")
    assert client.delete("/api/products/GONE", headers=headers).status_code == 204
    assert_refused(
        client, "POST", "/api/products", headers, 409, "DUPLICATE_SKU", json=product_body("GONE")
    )


@pytest.mark.parametrize(
    "gtin",
    [
        "4006381333932",  # EAN-13, wrong check digit
        "400638133393",  # 12 digits, wrong check digit
        "1234567",  # 7 digits
        "123456789",  # 9 digits
        "40063813339311",  # 14 digits, wrong check digit
        "400638133393100",  # 15 digits
        "",
        "4006381333931 ",
        "4006-381333931",
        "ABCDEFGHIJKLM",
        "\u0664\u0660\u0660\u0666\u0663\u0668\u0661\u0663\u0663\u0663\u0669\u0663\u0661",
        "\u00b2\u00b3\u00b9\u00b2\u00b3\u00b9\u00b2\u00b3",  # superscript digits
    ],
)
def test_invalid_gtin_is_refused(client, headers, gtin):
    error = assert_refused(
        client,
        "POST",
        "/api/products",
        headers,
        422,
        "INVALID_GTIN",
        json=product_body("G-1", gtin=gtin),
    )
    assert error["details"]["field"] == "gtin"


@pytest.mark.parametrize("gtin", ["96385074", "036000291452", "4006381333931", "10614141000415"])
def test_valid_gtin_lengths_are_accepted(client, headers, gtin):
    assert create_product(client, headers, gtin=gtin)["gtin"] == gtin


def test_unicode_digit_gtin_message_says_digits(client, headers):
    # Arabic-Indic digits are str.isdigit(), but a GTIN is ASCII digits only.
    response = client.post(
        "/api/products",
        json=product_body(gtin="\u0664\u0660\u0660\u0666\u0663\u0668\u0661\u0663"),
        headers=headers,
    )
    assert error_code(response) == "INVALID_GTIN"
    assert "digits" in response.get_json()["error"]["message"]


# Get ----------------------------------------------------------------------------------


def test_get_returns_listings_sorted_by_marketplace(client, headers, tenant):
    product = create_product(client, headers, sku="LIST-1")
    add_listing(tenant.id, product["id"], "walmart", price=Decimal("21.00"), quantity=0)
    add_listing(tenant.id, product["id"], "amazon_us")
    data = client.get("/api/products/LIST-1", headers=headers).get_json()["data"]
    assert set(data) == PRODUCT_KEYS | {"components", "listings"}
    assert data["listings"] == [
        {
            "marketplace": "amazon_us",
            "external_id": "EXT-amazon_us",
            "price": 19.99,
            "currency": "USD",
            "quantity": 4,
            "fulfilled_by": "merchant",
            "stock_buffer": 0,
            "max_quantity": None,
            "allocation_pct": 100,
            "fixed_quantity": None,
            "warehouse_ids": None,
            "status": "active",
            "sync_status": "in_sync",
            "hold_reason": None,
            "last_synced_at": "2026-11-18T11:06:40.123Z",
            "last_sync_error": None,
            "submission": None,
        },
        {
            "marketplace": "walmart",
            "external_id": "EXT-walmart",
            "price": 21.0,
            "currency": "USD",
            "quantity": 0,
            "fulfilled_by": "merchant",
            "stock_buffer": 0,
            "max_quantity": None,
            "allocation_pct": 100,
            "fixed_quantity": None,
            "warehouse_ids": None,
            "status": "active",
            "sync_status": "in_sync",
            "hold_reason": None,
            "last_synced_at": "2026-11-18T11:06:40.123Z",
            "last_sync_error": None,
            "submission": None,
        },
    ]


def test_get_unknown_sku(client, headers):
    error = assert_refused(client, "GET", "/api/products/NOPE", headers, 404, "PRODUCT_NOT_FOUND")
    assert error["details"] == {"sku": "NOPE"}


def test_get_archived_product_is_still_readable(client, headers):
    create_product(client, headers, sku="ARCH")
    client.delete("/api/products/ARCH", headers=headers)
    data = client.get("/api/products/ARCH", headers=headers).get_json()["data"]
    assert data["status"] == "archived"


def test_get_with_fields(client, headers, tenant):
    product = create_product(client, headers, sku="F-1")
    add_listing(tenant.id, product["id"], "amazon_us")
    data = client.get("/api/products/F-1?fields=title,listings", headers=headers).get_json()
    assert set(data["data"]) == {"id", "title", "listings"}
    assert len(data["data"]["listings"]) == 1
    error = assert_refused(
        client, "GET", "/api/products/F-1?fields=title,price", headers, 422, "VALIDATION_ERROR"
    )
    assert "fields" in error["details"]["fields"]


def test_get_refuses_unknown_query_parameter(client, headers):
    create_product(client, headers, sku="Q-1")
    error = assert_refused(
        client, "GET", "/api/products/Q-1?limit=5", headers, 422, "VALIDATION_ERROR"
    )
    assert error["details"]["fields"] == {"limit": ["Unknown field."]}


# Update -------------------------------------------------------------------------------


def test_patch_changes_only_the_given_fields(client, headers):
    created = create_product(client, headers, sku="P-1", category="kitchen")
    response = client.patch(
        "/api/products/P-1", json={"title": "New title", "cost_price": 4}, headers=headers
    )
    assert response.status_code == 200
    data = response.get_json()["data"]
    assert data["title"] == "New title" and data["cost_price"] == 4
    for name in PRODUCT_KEYS - {"title", "cost_price", "updated_at"}:
        assert data[name] == created[name], name
    assert data["updated_at"] >= created["updated_at"]
    assert client.get("/api/products/P-1", headers=headers).get_json()["data"] == {
        **data,
        "listings": [],
    }
    updated = events("product.updated")
    assert len(updated) == 1
    assert updated[0].data["changed_fields"] == ["cost_price", "title"]
    assert updated[0].data["title"] == "New title"
    assert updated[0].resource_id == created["id"]


def test_patch_can_clear_nullable_fields(client, headers):
    create_product(client, headers, sku="P-2")
    response = client.patch(
        "/api/products/P-2",
        json={"description": None, "gtin": None, "cost_price": None, "weight_kg": None},
        headers=headers,
    )
    data = response.get_json()["data"]
    assert (data["description"], data["gtin"], data["cost_price"], data["weight_kg"]) == (
        None,
        None,
        None,
        None,
    )
    assert sorted(events("product.updated")[0].data["changed_fields"]) == [
        "cost_price",
        "description",
        "gtin",
        "weight_kg",
    ]


def test_patch_without_a_change_writes_no_event(client, headers):
    created = create_product(client, headers, sku="P-3")
    before = snapshot()
    # an empty PATCH is refused (400 EMPTY_PATCH); one that repeats the values is a no-op
    response = client.patch("/api/products/P-3", json={}, headers=headers)
    assert response.status_code == 400
    assert response.get_json()["error"]["code"] == "EMPTY_PATCH"
    body = {"title": created["title"], "cost_price": 3.50, "weight_kg": 0.350}
    response = client.patch("/api/products/P-3", json=body, headers=headers)
    assert response.status_code == 200
    assert response.get_json()["data"] == created
    assert snapshot() == before


@pytest.mark.parametrize(
    "body,field",
    [
        ({"sku": "OTHER"}, "sku"),
        ({"id": "prod_x"}, "id"),
        ({"created_at": "2026-01-01T00:00:00.000Z"}, "created_at"),
        ({"title": None}, "title"),
        ({"title": ""}, "title"),
        ({"status": None}, "status"),
        ({"status": "deleted"}, "status"),
        ({"images": None}, "images"),
        ({"cost_price": "12"}, "cost_price"),
        ({"cost_price": -1}, "cost_price"),
        ({"listings": []}, "listings"),
    ],
)
def test_patch_refuses_bad_fields(client, headers, body, field):
    create_product(client, headers, sku="P-4")
    error = assert_refused(
        client, "PATCH", "/api/products/P-4", headers, 422, "VALIDATION_ERROR", json=body
    )
    assert list(error["details"]["fields"]) == [field]


def test_patch_invalid_gtin_changes_nothing(client, headers):
    create_product(client, headers, sku="P-5")
    assert_refused(
        client,
        "PATCH",
        "/api/products/P-5",
        headers,
        422,
        "INVALID_GTIN",
        json={"title": "changed", "gtin": "4006381333932"},
    )


def test_patch_unknown_sku(client, headers):
    assert_refused(
        client,
        "PATCH",
        "/api/products/NOPE",
        headers,
        404,
        "PRODUCT_NOT_FOUND",
        json={"title": "x"},
    )


def test_patch_status_archived_with_open_orders_is_refused(client, headers, tenant):
    create_product(client, headers, sku="P-6")
    add_order(tenant.id, "P-6", "confirmed")
    error = assert_refused(
        client,
        "PATCH",
        "/api/products/P-6",
        headers,
        409,
        "OPEN_ORDERS_EXIST",
        json={"status": "archived", "title": "x"},
    )
    assert error["details"] == {"sku": "P-6"}


def test_patch_status_archived_archives_and_writes_both_events(client, headers):
    created = create_product(client, headers, sku="P-7")
    response = client.patch("/api/products/P-7", json={"status": "archived"}, headers=headers)
    assert response.get_json()["data"]["status"] == "archived"
    assert [e.type for e in events()] == ["product.created", "product.updated", "product.archived"]
    assert events("product.archived")[0].resource_id == created["id"]
    # and it can come back
    response = client.patch("/api/products/P-7", json={"status": "active"}, headers=headers)
    assert response.get_json()["data"]["status"] == "active"
    assert skus(client.get("/api/products", headers=headers)) == ["P-7"]


# Delete -------------------------------------------------------------------------------


def test_delete_archives_with_an_empty_204(client, headers):
    created = create_product(client, headers, sku="D-1")
    response = client.delete("/api/products/D-1", headers=headers)
    assert response.status_code == 204
    assert response.get_data() == b""
    assert "Content-Type" not in response.headers
    assert response.headers["X-Request-ID"]
    assert Product.get_by_id(created["id"]).status == "archived"
    archived = events("product.archived")
    assert len(archived) == 1 and archived[0].data["status"] == "archived"
    assert skus(client.get("/api/products", headers=headers)) == []
    assert skus(client.get("/api/products?status=archived", headers=headers)) == ["D-1"]


def test_delete_twice_is_a_no_op(client, headers):
    create_product(client, headers, sku="D-2")
    client.delete("/api/products/D-2", headers=headers)
    before = snapshot()
    assert client.delete("/api/products/D-2", headers=headers).status_code == 204
    assert snapshot() == before


def test_delete_unknown_sku(client, headers):
    assert_refused(client, "DELETE", "/api/products/NOPE", headers, 404, "PRODUCT_NOT_FOUND")


@pytest.mark.parametrize("status", ["pending", "confirmed", "processing"])
def test_delete_with_open_orders_is_refused(client, headers, tenant, status):
    create_product(client, headers, sku="D-3")
    add_order(tenant.id, "D-3", status)
    error = assert_refused(client, "DELETE", "/api/products/D-3", headers, 409, "OPEN_ORDERS_EXIST")
    assert error["details"] == {"sku": "D-3"}


@pytest.mark.parametrize("status", ["shipped", "delivered", "completed", "cancelled"])
def test_delete_with_closed_orders_only_is_allowed(client, headers, tenant, status):
    create_product(client, headers, sku="D-4")
    add_order(tenant.id, "D-4", status)
    assert client.delete("/api/products/D-4", headers=headers).status_code == 204


def test_open_orders_of_another_tenant_do_not_block(client, headers):
    other = headers_for()
    create_product(client, headers, sku="D-5")
    add_order(other["X-Tenant-ID"], "D-5", "pending")
    assert client.delete("/api/products/D-5", headers=headers).status_code == 204


def test_delete_refuses_a_query_parameter(client, headers):
    create_product(client, headers, sku="D-6")
    assert_refused(
        client, "DELETE", "/api/products/D-6?force=true", headers, 422, "VALIDATION_ERROR"
    )


# List ---------------------------------------------------------------------------------


def _make_catalogue(client, headers):
    specs = [
        ("B-200", "Blue mug", "active", "4006381333931"),
        ("A-100", "red mug", "draft", "96385074"),
        ("C-300", "Green Teapot", "inactive", None),
        ("D-400", "Tea towel", "active", "036000291452"),
    ]
    created = [
        create_product(client, headers, sku=sku, title=title, status=status, gtin=gtin)
        for sku, title, status, gtin in specs
    ]
    # distinct, known timestamps so that every sort has one right answer
    for offset, item in enumerate(created):
        Product.update(
            created_at=1_700_000_000_000 + offset * 1000,
            updated_at=1_700_000_000_000 + (10 - offset) * 1000,
        ).where(Product.id == item["id"]).execute()
    return created


def test_list_defaults(client, headers):
    _make_catalogue(client, headers)
    response = client.get("/api/products", headers=headers)
    body = response.get_json()
    assert set(body) == {"data", "meta"}
    assert body["meta"] == {"total": 4, "page": 1, "limit": 50, "nextCursor": None}
    # default: newest first
    assert [p["sku"] for p in body["data"]] == ["D-400", "C-300", "A-100", "B-200"]
    assert all(set(item) == PRODUCT_KEYS for item in body["data"])


@pytest.mark.parametrize(
    "query,expected",
    [
        ("sort=sku&order=asc", ["A-100", "B-200", "C-300", "D-400"]),
        ("sort=sku&order=desc", ["D-400", "C-300", "B-200", "A-100"]),
        ("sort=sku", ["D-400", "C-300", "B-200", "A-100"]),
        # byte order: upper case before lower case, on both engines
        ("sort=title&order=asc", ["B-200", "C-300", "D-400", "A-100"]),
        ("sort=title&order=desc", ["A-100", "D-400", "C-300", "B-200"]),
        ("sort=created_at&order=asc", ["B-200", "A-100", "C-300", "D-400"]),
        ("sort=created_at&order=desc", ["D-400", "C-300", "A-100", "B-200"]),
        ("sort=updated_at&order=asc", ["D-400", "C-300", "A-100", "B-200"]),
        ("sort=updated_at&order=desc", ["B-200", "A-100", "C-300", "D-400"]),
        ("order=asc", ["B-200", "A-100", "C-300", "D-400"]),
    ],
)
def test_list_sorts(client, headers, query, expected):
    _make_catalogue(client, headers)
    assert skus(client.get(f"/api/products?{query}", headers=headers)) == expected


@pytest.mark.parametrize(
    "status,expected",
    [("active", ["D-400", "B-200"]), ("draft", ["A-100"]), ("inactive", ["C-300"])],
)
def test_list_status_filter(client, headers, status, expected):
    _make_catalogue(client, headers)
    response = client.get(f"/api/products?status={status}", headers=headers)
    assert skus(response) == expected
    assert response.get_json()["meta"]["total"] == len(expected)


def test_list_excludes_archived_unless_asked(client, headers):
    _make_catalogue(client, headers)
    client.delete("/api/products/A-100", headers=headers)
    response = client.get("/api/products", headers=headers)
    assert "A-100" not in skus(response)
    assert response.get_json()["meta"]["total"] == 3
    response = client.get("/api/products?status=archived", headers=headers)
    assert skus(response) == ["A-100"]
    assert response.get_json()["meta"]["total"] == 1


def test_list_marketplace_filter(client, headers, tenant):
    created = {p["sku"]: p for p in _make_catalogue(client, headers)}
    add_listing(tenant.id, created["A-100"]["id"], "amazon_us")
    add_listing(tenant.id, created["C-300"]["id"], "amazon_us")
    add_listing(tenant.id, created["C-300"]["id"], "walmart")
    response = client.get("/api/products?marketplace=amazon_us&order=asc", headers=headers)
    assert skus(response) == ["A-100", "C-300"]
    assert response.get_json()["meta"]["total"] == 2
    assert skus(client.get("/api/products?marketplace=walmart", headers=headers)) == ["C-300"]
    assert skus(client.get("/api/products?marketplace=ebay", headers=headers)) == []
    combined = client.get("/api/products?marketplace=amazon_us&status=draft", headers=headers)
    assert skus(combined) == ["A-100"]


@pytest.mark.parametrize(
    "search,expected",
    [
        ("mug", ["A-100", "B-200"]),  # title, case-insensitive
        ("MUG", ["A-100", "B-200"]),
        ("tea", ["C-300", "D-400"]),
        ("c-3", ["C-300"]),  # SKU, case-insensitive
        ("B-200", ["B-200"]),
        ("333931", ["B-200"]),  # GTIN substring
        ("96385074", ["A-100"]),
        ("tea towel", ["D-400"]),  # every word must match
        ("towel tea", ["D-400"]),
        ("blue red", []),
        ("%", []),  # LIKE wildcards are literal
        ("_", []),
        ("!", []),
        ("nothing", []),
    ],
)
def test_list_search(client, headers, search, expected):
    _make_catalogue(client, headers)
    response = client.get("/api/products", query_string={"search": search}, headers=headers)
    assert sorted(skus(response)) == expected
    assert response.get_json()["meta"]["total"] == len(expected)


def test_list_search_literal_wildcards(client, headers):
    create_product(client, headers, sku="PCT", title="100% wool")
    create_product(client, headers, sku="UND", title="snake_case")
    create_product(client, headers, sku="OTH", title="1000 wool snakeXcase")
    assert skus(client.get("/api/products", query_string={"search": "0%"}, headers=headers)) == [
        "PCT"
    ]
    assert skus(client.get("/api/products", query_string={"search": "e_c"}, headers=headers)) == [
        "UND"
    ]


def test_list_fields(client, headers):
    _make_catalogue(client, headers)
    data = client.get("/api/products?fields=sku,cost_price", headers=headers).get_json()["data"]
    assert all(set(item) == {"id", "sku", "cost_price"} for item in data)
    data = client.get("/api/products?fields=id", headers=headers).get_json()["data"]
    assert all(set(item) == {"id"} for item in data)
    for bad in ("listings", "sku,nope", "SKU"):
        assert_refused(
            client, "GET", f"/api/products?fields={bad}", headers, 422, "VALIDATION_ERROR"
        )


def test_list_limit_and_cursor(client, headers):
    _make_catalogue(client, headers)
    first = client.get("/api/products?limit=3", headers=headers).get_json()
    assert [p["sku"] for p in first["data"]] == ["D-400", "C-300", "A-100"]
    assert first["meta"]["total"] == 4 and first["meta"]["page"] == 1
    assert first["meta"]["limit"] == 3
    cursor = first["meta"]["nextCursor"]
    assert isinstance(cursor, str) and cursor
    second = client.get(
        "/api/products", query_string={"limit": 3, "cursor": cursor}, headers=headers
    ).get_json()
    assert [p["sku"] for p in second["data"]] == ["B-200"]
    assert second["meta"] == {"total": 4, "page": 2, "limit": 3, "nextCursor": None}


def test_list_limit_bounds(client, headers):
    _make_catalogue(client, headers)
    assert client.get("/api/products?limit=1", headers=headers).status_code == 200
    assert client.get("/api/products?limit=200", headers=headers).status_code == 200
    for limit in ("0", "201", "-1", "abc", "1.5", ""):
        error = assert_refused(
            client, "GET", f"/api/products?limit={limit}", headers, 422, "VALIDATION_ERROR"
        )
        assert "limit" in error["details"]["fields"]


@pytest.mark.parametrize(
    "query,field",
    [
        ("sort=price", "sort"),
        ("sort=SKU", "sort"),
        ("order=ASC", "order"),
        ("order=up", "order"),
        ("status=deleted", "status"),
        ("status=", "status"),
        ("search=", "search"),
        ("marketplace=", "marketplace"),
        ("page=2", "page"),
        ("offset=10", "offset"),
        ("title=mug", "title"),
    ],
)
def test_list_refuses_bad_query_parameters(client, headers, query, field):
    error = assert_refused(
        client, "GET", f"/api/products?{query}", headers, 422, "VALIDATION_ERROR"
    )
    assert field in error["details"]["fields"]


# Sync ---------------------------------------------------------------------------------


def test_sync_queues_a_marketplace_sync_job(client, tenant):
    key, secret = make_key(tenant)
    headers = auth_headers(tenant, secret)
    connect(tenant.id, "walmart", "amazon_us")
    product = create_product(client, headers, sku="S-1")
    before_events = len(events())
    response = client.post("/api/products/S-1/sync", headers=headers)
    assert response.status_code == 202
    data = response.get_json()["data"]
    # none named: every connected marketplace
    assert data["status"] == "queued" and data["marketplaces"] == ["amazon_us", "walmart"]
    job = Job.get_by_id(data["job_id"])
    assert data["job_id"].startswith("job_")
    assert (job.type, job.status, job.internal, job.tenant_id) == (
        "marketplace_sync",
        "queued",
        True,
        tenant.id,
    )
    assert job.params["sku"] == "S-1" and job.params["product_id"] == product["id"]
    assert job.params["marketplaces"] == ["amazon_us", "walmart"]
    assert job.created_by == f"key:{key.id}"
    assert len(events()) == before_events


def test_sync_named_marketplaces(client, headers, tenant):
    connect(tenant.id, "walmart", "amazon_us")
    create_product(client, headers, sku="S-2")
    response = client.post(
        "/api/products/S-2/sync", json={"marketplaces": ["walmart"]}, headers=headers
    )
    assert response.status_code == 202
    data = response.get_json()["data"]
    assert data["marketplaces"] == ["walmart"]
    assert Job.get_by_id(data["job_id"]).params["marketplaces"] == ["walmart"]


def test_sync_to_a_marketplace_not_connected_queues_nothing(client, headers, tenant):
    create_product(client, headers, sku="S-4")
    error = assert_refused(
        client, "POST", "/api/products/S-4/sync", headers, 422, "MARKETPLACE_NOT_CONNECTED"
    )
    assert error["details"]["marketplaces"] == []
    connect(tenant.id, "amazon_us")
    error = assert_refused(
        client,
        "POST",
        "/api/products/S-4/sync",
        headers,
        422,
        "MARKETPLACE_NOT_CONNECTED",
        json={"marketplaces": ["amazon_us", "ebay"]},
    )
    assert error["details"]["marketplaces"] == ["ebay"]


def test_sync_unknown_sku_queues_nothing(client, headers, tenant):
    connect(tenant.id, "amazon_us")
    assert_refused(client, "POST", "/api/products/NOPE/sync", headers, 404, "PRODUCT_NOT_FOUND")


@pytest.mark.parametrize(
    "body",
    [
        {"marketplaces": []},
        {"marketplaces": "amazon_us"},
        {"marketplaces": [""]},
        {"marketplaces": [1]},
        {"marketplaces": None},
        {"marketplace": ["amazon_us"]},
        [],
        "amazon_us",
    ],
)
def test_sync_bad_body_queues_nothing(client, headers, body):
    create_product(client, headers, sku="S-3")
    assert_refused(
        client, "POST", "/api/products/S-3/sync", headers, 422, "VALIDATION_ERROR", json=body
    )


# Scopes -------------------------------------------------------------------------------

WRITE_REQUESTS = [
    ("POST", "/api/products", {"json": {"sku": "NEW", "title": "x"}}),
    ("PATCH", "/api/products/SC-1", {"json": {"title": "x"}}),
    ("DELETE", "/api/products/SC-1", {}),
    ("POST", "/api/products/bulk", {"json": {"updates": [{"sku": "SC-1", "title": "x"}]}}),
    ("POST", "/api/products/SC-1/sync", {}),
]
READ_REQUESTS = [
    ("GET", "/api/products", {}),
    ("GET", "/api/products/SC-1", {}),
]


@pytest.mark.parametrize("method,path,kwargs", WRITE_REQUESTS)
def test_writes_need_products_write(client, headers, tenant, method, path, kwargs):
    create_product(client, headers, sku="SC-1")
    others = [s for s in SCOPES if s != "products:write"]
    _, secret = make_key(tenant, others)
    error = assert_refused(
        client, method, path, auth_headers(tenant, secret), 403, "INSUFFICIENT_SCOPE", **kwargs
    )
    assert error["details"] == {"required_scope": "products:write"}


@pytest.mark.parametrize("method,path,kwargs", READ_REQUESTS)
def test_reads_need_products_read(client, headers, tenant, method, path, kwargs):
    create_product(client, headers, sku="SC-1")
    _, secret = make_key(tenant, ["products:write", "orders:read"])
    error = assert_refused(
        client, method, path, auth_headers(tenant, secret), 403, "INSUFFICIENT_SCOPE", **kwargs
    )
    assert error["details"] == {"required_scope": "products:read"}


def test_read_scope_alone_reads(client, headers, tenant):
    create_product(client, headers, sku="SC-2")
    _, secret = make_key(tenant, ["products:read"])
    read = auth_headers(tenant, secret)
    assert client.get("/api/products", headers=read).status_code == 200
    assert client.get("/api/products/SC-2", headers=read).status_code == 200


# Pagination and cursors ----------------------------------------------------------------


def _cursor(payload):
    raw = json.dumps(payload).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def _seed_ties(client, headers, count=21):
    """Products in groups of three sharing title, created_at and updated_at."""
    created = []
    for index in range(count):
        group = index // 3
        item = create_product(client, headers, sku=f"T-{index:03d}", title=f"Title {group % 4}")
        Product.update(
            created_at=1_700_000_000_000 + group * 1000,
            updated_at=1_700_000_900_000 - group * 1000,
        ).where(Product.id == item["id"]).execute()
        created.append(item)
    return created


def _sort_key(row, sort):
    return (getattr(row, sort), row.id)


@pytest.mark.parametrize("sort", ["sku", "title", "created_at", "updated_at"])
@pytest.mark.parametrize("order", ["asc", "desc"])
def test_walking_every_page_returns_every_row_once_in_order(client, headers, sort, order):
    _seed_ties(client, headers)
    original = {p.id for p in Product.select()}
    seen, pages, cursor, added = [], [], None, 0
    while True:
        query = {"sort": sort, "order": order, "limit": 4}
        if cursor:
            query["cursor"] = cursor
        body = client.get("/api/products", query_string=query, headers=headers).get_json()
        pages.append(body["meta"]["page"])
        assert body["meta"]["limit"] == 4
        assert body["meta"]["total"] == Product.select().count()
        seen.extend(item["id"] for item in body["data"])
        cursor = body["meta"]["nextCursor"]
        if cursor is None:
            break
        assert len(body["data"]) == 4
        # rows added between page fetches, some sorting before and some after the cursor
        added += 1
        create_product(client, headers, sku=f"NEW-{added:02d}", title=f"Title {added % 5}")
        assert len(pages) < 50
    assert pages == list(range(1, len(pages) + 1))
    assert len(seen) == len(set(seen)), "a row was returned twice"
    assert original <= set(seen), "a row that existed before the walk was skipped"
    rows = {p.id: p for p in Product.select()}
    keys = [_sort_key(rows[i], sort) for i in seen]
    assert keys == sorted(keys, reverse=order == "desc")


def test_walk_without_changes_equals_one_big_page(client, headers):
    _seed_ties(client, headers)
    for sort in ("sku", "title", "created_at", "updated_at"):
        for order in ("asc", "desc"):
            query = {"sort": sort, "order": order}
            whole = client.get(
                "/api/products", query_string={**query, "limit": 200}, headers=headers
            ).get_json()["data"]
            walked, cursor = [], None
            while True:
                page_query = {**query, "limit": 2, **({"cursor": cursor} if cursor else {})}
                body = client.get(
                    "/api/products", query_string=page_query, headers=headers
                ).get_json()
                walked.extend(body["data"])
                cursor = body["meta"]["nextCursor"]
                if not cursor:
                    break
            assert walked == whole, (sort, order)
            assert len(whole) == 21


def test_last_page_of_an_exact_multiple_has_no_cursor(client, headers):
    for index in range(4):
        create_product(client, headers, sku=f"EX-{index}")
    first = client.get("/api/products?limit=2", headers=headers).get_json()
    second = client.get(
        "/api/products",
        query_string={"limit": 2, "cursor": first["meta"]["nextCursor"]},
        headers=headers,
    ).get_json()
    assert len(second["data"]) == 2 and second["meta"]["nextCursor"] is None
    assert second["meta"]["page"] == 2


def test_the_limit_may_change_between_pages(client, headers):
    for index in range(6):
        create_product(client, headers, sku=f"LM-{index}")
    first = client.get("/api/products?limit=2&sort=sku&order=asc", headers=headers).get_json()
    rest = client.get(
        "/api/products",
        query_string={
            "limit": 10,
            "sort": "sku",
            "order": "asc",
            "cursor": first["meta"]["nextCursor"],
        },
        headers=headers,
    ).get_json()
    assert [p["sku"] for p in first["data"] + rest["data"]] == [f"LM-{i}" for i in range(6)]


def _first_cursor(client, headers, **query):
    for index in range(3):
        if client.get(f"/api/products/CUR-{index}", headers=headers).status_code == 404:
            create_product(client, headers, sku=f"CUR-{index}", status="active")
    body = client.get(
        "/api/products", query_string={"limit": 1, **query}, headers=headers
    ).get_json()
    return body["meta"]["nextCursor"]


@pytest.mark.parametrize(
    "issued,used",
    [
        ({"sort": "sku"}, {"sort": "title"}),
        ({"sort": "created_at"}, {"sort": "updated_at"}),
        ({"order": "asc"}, {"order": "desc"}),
        ({}, {"order": "asc"}),
        ({"status": "active"}, {"status": "draft"}),
        ({"status": "active"}, {}),
        ({"search": "cur"}, {"search": "cur-1"}),
        ({}, {"marketplace": "amazon_us"}),
    ],
)
def test_a_cursor_only_works_for_its_own_query(client, headers, issued, used):
    cursor = _first_cursor(client, headers, **issued)
    assert cursor
    assert_refused(
        client,
        "GET",
        "/api/products?" + urlencode({**used, "cursor": cursor}),
        headers,
        400,
        "INVALID_CURSOR",
    )
    # and the same query takes it
    response = client.get(
        "/api/products", query_string={**issued, "cursor": cursor}, headers=headers
    )
    assert response.status_code == 200


@pytest.mark.parametrize(
    "cursor",
    [
        "!!!",
        "not-base64-at-all",
        "e30",  # {}
        _cursor([1, 2]),
        _cursor("text"),
        _cursor({"l": "orders", "s": "created_at", "o": "desc", "p": 2, "k": [1, "prod_x"]}),
        _cursor({"l": "products", "s": "created_at", "o": "desc", "p": 1, "k": [1, "prod_x"]}),
        _cursor({"l": "products", "s": "created_at", "o": "desc", "p": "2", "k": [1, "prod_x"]}),
        _cursor({"l": "products", "s": "created_at", "o": "desc", "p": 2, "k": [1]}),
        _cursor({"l": "products", "s": "created_at", "o": "desc", "p": 2, "k": ["1", "prod_x"]}),
        _cursor({"l": "products", "s": "created_at", "o": "desc", "p": 2, "k": [1, 5]}),
        _cursor({"l": "products", "s": "created_at", "o": "desc", "p": 2, "k": [True, "x"]}),
        _cursor({"l": "products", "s": "created_at", "o": "desc", "p": 2, "k": [1.5, "x"]}),
        _cursor({"l": "products", "s": "created_at", "o": "desc", "p": 2, "k": [10**30, "x"]}),
        _cursor({"l": "products", "s": "created_at", "o": "desc", "p": 2, "k": [None, "x"]}),
        _cursor({"l": "products", "s": "created_at", "o": "desc", "p": 2, "k": [1, "a\u0000"]}),
        base64.urlsafe_b64encode(b"[" * 700).decode(),
        base64.urlsafe_b64encode(b"\xff\xfe\xfd").decode(),
        "A" * 1001,
    ],
)
def test_a_cursor_we_did_not_issue_is_400(client, headers, cursor):
    _first_cursor(client, headers)
    assert_refused(
        client,
        "GET",
        "/api/products?" + urlencode({"cursor": cursor}),
        headers,
        400,
        "INVALID_CURSOR",
    )


@pytest.mark.parametrize(
    "key",
    [[5, "prod_x"], ["t", ["x"]], ["t", 5], ["t" * 2000, "prod_x"], ["t\u0000", "prod_x"]],
)
def test_a_text_sort_cursor_with_wrong_values_is_400(client, headers, key):
    _first_cursor(client, headers)
    cursor = _cursor({"l": "products", "s": "title", "o": "desc", "p": 2, "k": key})
    assert_refused(
        client,
        "GET",
        "/api/products?" + urlencode({"cursor": cursor, "sort": "title"}),
        headers,
        400,
        "INVALID_CURSOR",
    )


def test_search_is_case_insensitive_beyond_ascii(client, headers):
    create_product(client, headers, sku="CAFE-1", title="CAFÉ ÉMAILLÉ")
    create_product(client, headers, sku="CAFE-2", title="café émaillé")
    create_product(client, headers, sku="OTHER", title="cafe emaille")
    for term in ("café", "CAFÉ", "Émaillé", "éMAILLÉ"):
        response = client.get("/api/products", query_string={"search": term}, headers=headers)
        assert sorted(skus(response)) == ["CAFE-1", "CAFE-2"], term


def test_concurrent_archives_write_one_archived_event(app, headers, monkeypatch):
    """Two archives of one product at once: the second sees the first (a row lock)."""
    client = app.test_client()
    create_product(client, headers, sku="RACE")
    real = services.sku_has_open_orders

    def slow_check(*args):
        result = real(*args)
        time.sleep(0.4)  # hold the first transaction open while the second reads
        return result

    monkeypatch.setattr(services, "sku_has_open_orders", slow_check)
    statuses = []

    def archive(method):
        kwargs = {"json": {"status": "archived"}} if method == "PATCH" else {}
        response = app.test_client().open(
            "/api/products/RACE", method=method, headers=headers, **kwargs
        )
        statuses.append(response.status_code)

    threads = [threading.Thread(target=archive, args=(m,)) for m in ("PATCH", "DELETE")]
    for thread in threads:
        thread.start()
        time.sleep(0.1)
    for thread in threads:
        thread.join(timeout=30)
    assert sorted(statuses) == [200, 204]
    assert len(events("product.archived")) == 1
    assert Product.get(Product.sku == "RACE").status == "archived"


def test_a_search_of_many_words_is_refused_not_a_500(client, headers):
    many = " ".join("abcdefghijklmnopqrstuvwxyz"[i % 26] + str(i) for i in range(75))[:200]
    for search in (" ".join(["a"] * 75), " ".join("abcdefghijk"), many):
        response = client.get("/api/products", query_string={"search": search}, headers=headers)
        if len(set(search.split())) <= 10:
            assert response.status_code == 200, search
        else:
            assert response.status_code == 422, search
            assert "search" in response.get_json()["error"]["details"]["fields"]
    letters = " ".join("abcdefghijklmnopqrstuvwxyz" * 3)  # 78 one-letter words
    response = client.get("/api/products", query_string={"search": letters}, headers=headers)
    assert response.status_code == 422


def test_repeated_search_words_count_once(client, headers):
    client.post("/api/products", json={"sku": "MUG-1", "title": "Blue mug"}, headers=headers)
    response = client.get("/api/products", query_string={"search": "mug " * 45}, headers=headers)
    assert response.status_code == 200
    assert [p["sku"] for p in response.get_json()["data"]] == ["MUG-1"]


@pytest.mark.parametrize("sku", ["bulk", "warehouses", ".", ".."])
def test_skus_that_are_fixed_path_segments_are_refused(client, headers, sku):
    response = client.post("/api/products", json={"sku": sku, "title": "X"}, headers=headers)
    assert response.status_code == 422
    assert "sku" in response.get_json()["error"]["details"]["fields"]
    assert client.get("/api/products", headers=headers).get_json()["meta"]["total"] == 0


@pytest.mark.parametrize("sku", ["Bulk", "bulk-1", "warehouses.2", "...", "a.b"])
def test_skus_near_the_reserved_ones_are_fine(client, headers, sku):
    response = client.post("/api/products", json={"sku": sku, "title": "X"}, headers=headers)
    assert response.status_code == 201, response.get_json()
    assert client.get(f"/api/products/{sku}", headers=headers).status_code == 200
    assert client.get(f"/api/inventory/{sku}", headers=headers).status_code in (200, 404)
