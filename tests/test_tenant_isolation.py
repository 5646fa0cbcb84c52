"""Two tenants with overlapping SKUs: tenant A's credentials never read, change or learn of
tenant B's rows, whatever the endpoint."""

import json

import pytest

from commerce_api.events.models import Event
from commerce_api.jobs.models import Job
from commerce_api.products.models import Listing, Product
from tests.support.factories import create_product, headers_for, make_key, product_body
from tests.support.http_support import api_rules, assert_refused, concrete_path, error_code
from tests.support.products_support import add_listing, add_order, connect


def rows_of(tenant_id):
    """Every row tenant B owns, as text, to prove A's requests left them alone."""
    dump = lambda query: sorted(json.dumps(r, sort_keys=True, default=str) for r in query)  # noqa: E731
    return {
        "product": dump(Product.select().where(Product.tenant == tenant_id).dicts()),
        "listing": dump(Listing.select().where(Listing.tenant == tenant_id).dicts()),
        "job": dump(Job.select().where(Job.tenant_id == tenant_id).dicts()),
        "event": dump(Event.select().where(Event.tenant_id == tenant_id).dicts()),
    }


@pytest.fixture
def two_tenants(client):
    a, b = headers_for(), headers_for()
    a_id, b_id = a["X-Tenant-ID"], b["X-Tenant-ID"]
    connect(a_id, "amazon_us")
    connect(b_id, "amazon_us", "walmart")
    shared_a = create_product(client, a, sku="SHARED", title="A's mug", gtin="96385074")
    shared_b = create_product(client, b, sku="SHARED", title="B's secret lamp")
    only_b = create_product(
        client, b, sku="B-ONLY", title="B's unreleased product", gtin="4006381333931"
    )
    create_product(client, a, sku="A-ONLY", title="A's teapot", gtin="036000291452")
    for index in range(5):
        create_product(client, b, sku=f"B-{index}", title=f"B bulk {index}")
    add_listing(b_id, shared_b["id"], "walmart")
    add_listing(b_id, only_b["id"], "walmart")
    add_listing(a_id, shared_a["id"], "amazon_us")
    add_order(b_id, "A-ONLY", "pending")  # B's open order for a SKU only A has
    return {"a": a, "b": b, "a_id": a_id, "b_id": b_id, "shared_a": shared_a}


def test_list_search_filters_and_total_see_only_own_rows(client, two_tenants):
    a, b_id = two_tenants["a"], two_tenants["b_id"]
    before = rows_of(b_id)
    body = client.get("/api/products?limit=200", headers=a).get_json()
    assert sorted(p["sku"] for p in body["data"]) == ["A-ONLY", "SHARED"]
    assert body["meta"]["total"] == 2
    assert all("B" not in p["title"] for p in body["data"])
    for query in (
        {"search": "secret"},
        {"search": "B-ONLY"},
        {"search": "333931"},
        {"search": "lamp"},
        {"marketplace": "walmart"},
        {"status": "archived"},
        {"search": "B bulk"},
    ):
        body = client.get("/api/products", query_string=query, headers=a).get_json()
        assert body["data"] == [] and body["meta"]["total"] == 0, query
    shared = client.get("/api/products?search=SHARED", headers=a).get_json()["data"]
    assert [p["title"] for p in shared] == ["A's mug"]
    assert rows_of(b_id) == before


def test_get_of_another_tenants_sku_is_the_same_404_as_a_missing_one(client, two_tenants):
    a = two_tenants["a"]
    theirs = client.get("/api/products/B-ONLY", headers=a)
    missing = client.get("/api/products/NEVER-EXISTED", headers=a)
    assert theirs.status_code == missing.status_code == 404
    assert error_code(theirs) == error_code(missing) == "PRODUCT_NOT_FOUND"
    assert theirs.get_json()["error"]["details"] == {"sku": "B-ONLY"}
    assert theirs.get_json()["error"]["message"] == missing.get_json()["error"]["message"]
    shared = client.get("/api/products/SHARED", headers=a).get_json()["data"]
    assert shared["title"] == "A's mug"
    assert [item["marketplace"] for item in shared["listings"]] == ["amazon_us"]


def test_writes_never_touch_the_other_tenant(client, two_tenants):
    a, a_id, b_id = two_tenants["a"], two_tenants["a_id"], two_tenants["b_id"]
    before = rows_of(b_id)
    for method, path, kwargs in (
        ("PATCH", "/api/products/B-ONLY", {"json": {"title": "pwned"}}),
        ("DELETE", "/api/products/B-ONLY", {}),
        ("POST", "/api/products/B-ONLY/sync", {}),
        ("POST", "/api/products/B-3/sync", {"json": {"marketplaces": ["amazon_us"]}}),
    ):
        assert_refused(client, method, path, a, 404, "PRODUCT_NOT_FOUND", **kwargs)
    # the shared SKU is A's own product
    response = client.patch("/api/products/SHARED", json={"title": "A renamed"}, headers=a)
    assert response.get_json()["data"]["id"] == two_tenants["shared_a"]["id"]
    sync = client.post("/api/products/SHARED/sync", headers=a)
    assert sync.status_code == 202
    job = Job.get_by_id(sync.get_json()["data"]["job_id"])
    assert job.tenant_id == a_id and job.params["product_id"] == two_tenants["shared_a"]["id"]
    assert sync.get_json()["data"]["marketplaces"] == ["amazon_us"]  # not B's walmart
    # B's open order for A-ONLY does not block A
    assert client.delete("/api/products/A-ONLY", headers=a).status_code == 204
    assert client.delete("/api/products/SHARED", headers=a).status_code == 204
    assert rows_of(b_id) == before
    assert {e.tenant_id for e in Event.select().where(Event.tenant_id != b_id)} == {a_id}


def test_creating_an_sku_another_tenant_has_is_fine(client, two_tenants):
    a = two_tenants["a"]
    before = rows_of(two_tenants["b_id"])
    assert client.post("/api/products", json=product_body("B-ONLY"), headers=a).status_code == 201
    assert rows_of(two_tenants["b_id"]) == before


def test_bulk_reports_the_other_tenants_skus_as_not_found(client, two_tenants):
    a, b_id = two_tenants["a"], two_tenants["b_id"]
    before = rows_of(b_id)
    response = client.post(
        "/api/products/bulk",
        json={
            "updates": [
                {"sku": "B-ONLY", "title": "pwned"},
                {"sku": "B-1", "status": "archived"},
                {"sku": "SHARED", "title": "A bulk"},
            ]
        },
        headers=a,
    )
    data = response.get_json()["data"]
    assert (data["updated"], data["failed"]) == (1, 2)
    assert [(e["sku"], e["code"]) for e in data["errors"]] == [
        ("B-ONLY", "PRODUCT_NOT_FOUND"),
        ("B-1", "PRODUCT_NOT_FOUND"),
    ]
    assert rows_of(b_id) == before
    assert Product.get_by_id(two_tenants["shared_a"]["id"]).title == "A bulk"


def test_cursors_do_not_cross_tenants(client, two_tenants):
    a, b = two_tenants["a"], two_tenants["b"]
    walked, cursor = [], None
    while True:
        query = {"limit": 1, **({"cursor": cursor} if cursor else {})}
        body = client.get("/api/products", query_string=query, headers=a).get_json()
        walked.extend(p["sku"] for p in body["data"])
        assert body["meta"]["total"] == 2
        cursor = body["meta"]["nextCursor"]
        if not cursor:
            break
    assert sorted(walked) == ["A-ONLY", "SHARED"]
    b_cursor = client.get("/api/products?limit=1", headers=b).get_json()["meta"]["nextCursor"]
    assert b_cursor
    assert_refused(
        client, "GET", f"/api/products?limit=1&cursor={b_cursor}", a, 400, "INVALID_CURSOR"
    )


def test_a_key_of_a_with_the_tenant_header_of_b_is_403_everywhere(app, client, two_tenants):
    a_key = two_tenants["a"]["Authorization"]
    crossed = {"Authorization": a_key, "X-Tenant-ID": two_tenants["b_id"]}
    before = rows_of(two_tenants["b_id"])
    checked = 0
    for rule, method in api_rules(app):
        if getattr(app.view_functions[rule.endpoint], "view_class", None) and getattr(
            app.view_functions[rule.endpoint].view_class, "is_public", False
        ):
            continue
        path = concrete_path(rule).replace("X-1", "SHARED")
        kwargs = {"json": {}} if method in ("POST", "PATCH", "PUT") else {}
        response = client.open(path, method=method, headers=crossed, **kwargs)
        assert response.status_code == 403, (method, path, response.get_json())
        assert error_code(response) == "TENANT_ACCESS_DENIED"
        checked += 1
    assert checked >= 7
    assert rows_of(two_tenants["b_id"]) == before


def test_read_only_key_of_a_cannot_write_to_b_either(client, two_tenants):
    from commerce_api.auth.services import get_tenant

    _, secret = make_key(get_tenant(two_tenants["a_id"]), ["products:read"])
    crossed = {"Authorization": f"Bearer {secret}", "X-Tenant-ID": two_tenants["b_id"]}
    assert_refused(
        client, "PATCH", "/api/products/SHARED", crossed, 403, "TENANT_ACCESS_DENIED", json={}
    )
