"""GET /api/listings: every product's listings by sync status, with cursors (issue 36: the
console's Overview lists the pending and failed ones with the marketplace's error)."""

import pytest

from commerce_api.db import write_transaction
from commerce_api.products.models import Listing
from tests.support.factories import auth_headers, make_key, make_tenant
from tests.support.orders_support import connect, make_products
from tests.support.pricing_support import list_product


@pytest.fixture
def listed(client, headers, tenant):
    """30 products listed on amazon: 12 pending, 7 in error, the rest in sync; 2 on ebay."""
    skus = [f"SKU-{n:02d}" for n in range(30)]
    make_products(client, headers, *skus)
    connect(tenant, "amazon", settings={"initial_orders": 0, "orders_per_pull": 0})
    listings = {sku: list_product(tenant, sku, "amazon", "10.00") for sku in skus}
    list_product(tenant, "SKU-00", "ebay", "11.00")
    ebay = list_product(tenant, "SKU-01", "ebay", "11.00")
    with write_transaction():
        for sku in skus[:12]:
            Listing.update(sync_status="pending").where(Listing.id == listings[sku].id).execute()
        for n, sku in enumerate(skus[12:19]):
            Listing.update(sync_status="error", last_sync_error=f"Rejected {n}").where(
                Listing.id == listings[sku].id
            ).execute()
        Listing.update(sync_status="error", last_sync_error="ebay said no").where(
            Listing.id == ebay.id
        ).execute()
    return skus


def _get(client, headers, **query):
    answer = client.get("/api/listings", headers=headers, query_string=query)
    return answer.status_code, answer.get_json()


def test_listings_by_sync_status_page_by_cursor(client, headers, listed):
    status, body = _get(client, headers, sync_status="pending", limit=5)
    assert status == 200, body
    assert body["meta"]["total"] == 12
    seen = [row["sku"] for row in body["data"]]
    cursor = body["meta"]["nextCursor"]
    while cursor:
        status, body = _get(client, headers, sync_status="pending", limit=5, cursor=cursor)
        assert status == 200, body
        seen += [row["sku"] for row in body["data"]]
        cursor = body["meta"]["nextCursor"]
    assert sorted(seen) == listed[:12]
    assert all(row["sync_status"] == "pending" for row in body["data"])


def test_failed_listings_carry_the_marketplaces_error(client, headers, listed):
    status, body = _get(client, headers, sync_status="error")
    assert status == 200 and body["meta"]["total"] == 8
    row = next(r for r in body["data"] if r["sku"] == "SKU-12")
    assert row["last_sync_error"] == "Rejected 0" and row["marketplace"] == "amazon"
    assert row["title"] and row["product_id"].startswith("prod_")
    assert row["fulfilled_by"] == "merchant" and row["allocation_pct"] == 100
    status, body = _get(client, headers, sync_status="error", marketplace="ebay")
    assert [(r["sku"], r["last_sync_error"]) for r in body["data"]] == [("SKU-01", "ebay said no")]
    status, body = _get(client, headers, marketplace="ebay", fields="last_sync_error")
    assert {tuple(sorted(r)) for r in body["data"]} == {("last_sync_error", "marketplace", "sku")}


def test_no_filter_lists_every_listing(client, headers, listed):
    status, body = _get(client, headers, limit=200)
    assert status == 200 and body["meta"]["total"] == 32 and len(body["data"]) == 32


@pytest.mark.parametrize(
    "query, code",
    [
        ({"sync_status": "failed"}, "VALIDATION_ERROR"),
        ({"limit": 0}, "VALIDATION_ERROR"),
        ({"colour": "red"}, "VALIDATION_ERROR"),
        ({"cursor": "garbage"}, "INVALID_CURSOR"),
    ],
)
def test_bad_filters_are_refused(client, headers, listed, query, code):
    status, body = _get(client, headers, **query)
    assert 400 <= status < 500 and body["error"]["code"] == code


def test_a_cursor_belongs_to_its_filter(client, headers, listed):
    _, body = _get(client, headers, sync_status="pending", limit=5)
    status, body = _get(client, headers, sync_status="error", cursor=body["meta"]["nextCursor"])
    assert status == 400 and body["error"]["code"] == "INVALID_CURSOR"


def test_another_tenants_listings_are_not_listed(client, listed):
    other = make_tenant()
    _, secret = make_key(other)
    status, body = _get(client, auth_headers(other, secret), sync_status="error")
    assert status == 200 and body["data"] == [] and body["meta"]["total"] == 0


def test_the_list_needs_products_read(client, tenant, listed):
    _, secret = make_key(tenant, scopes=["orders:read"])
    status, body = _get(client, auth_headers(tenant, secret))
    assert status == 403 and body["error"]["code"] == "INSUFFICIENT_SCOPE"
