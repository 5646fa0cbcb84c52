"""Recommendations (list, apply, dismiss), competitor prices and competitor_scan jobs."""

import json

import pytest

from commerce_api.events.models import Event
from commerce_api.marketplaces.models import SyncAttempt
from commerce_api.pricing.models import CompetitorLatest, CompetitorOffer
from commerce_api.products.models import Listing
from tests.support import pricing_support
from tests.support.factories import headers_for, make_tenant
from tests.support.jobs_support import run_worker
from tests.support.orders_support import run_job
from tests.support.pricing_support import (
    connect_http,
    connect_sandbox,
    create_rule,
    list_product,
    make_product,
    offer,
    pricing_snapshot,
    recalculate,
    seed_offers,
)

market = pricing_support.market  # the fixture

RECS = "/api/pricing/recommendations"


@pytest.fixture
def recs(client, headers, app, tenant, market):
    """Three pending recommendations on "shop" (MUG-1, MUG-2, MUG-3), one job."""
    connect_http(tenant, market.url)
    for index, sku in enumerate(("MUG-1", "MUG-2", "MUG-3"), start=1):
        make_product(client, headers, sku, cost="10.00")
        list_product(tenant, sku, "shop", f"{20 + index}.00")
        seed_offers(tenant, "shop", [offer(sku, "A", f"{15 + index}.00")])
    create_rule(client, headers, type="competitor_match", value=0)
    job = recalculate(client, headers, app, marketplace="shop")
    return {item["sku"]: item for item in job["result"]["recommendations"]}


def listing_price(sku):
    return float(next(lst.price for lst in Listing.select() if lst.product.sku == sku))


def test_list_newest_first_with_filters(client, headers, app, tenant, recs):
    data = client.get(RECS, headers=headers).get_json()
    assert data["meta"]["total"] == 3
    assert sorted(r["sku"] for r in data["data"]) == ["MUG-1", "MUG-2", "MUG-3"]
    created = [r["created_at"] for r in data["data"]]
    assert created == sorted(created, reverse=True)
    dismissed = client.post(f"{RECS}/{recs['MUG-2']['id']}/dismiss", headers=headers)
    assert dismissed.status_code == 200

    def skus(query):
        response = client.get(f"{RECS}?{query}", headers=headers)
        assert response.status_code == 200, response.get_json()
        return sorted(r["sku"] for r in response.get_json()["data"])

    assert skus("status=pending") == ["MUG-1", "MUG-3"]
    assert skus("status=dismissed") == ["MUG-2"]
    assert skus("sku=MUG-3") == ["MUG-3"]
    assert skus("marketplace=shop") == ["MUG-1", "MUG-2", "MUG-3"]
    assert skus("marketplace=amazon") == []
    assert skus("min_confidence=0") == ["MUG-1", "MUG-2", "MUG-3"]
    confidence = recs["MUG-1"]["confidence"]
    above = [s for s, r in recs.items() if r["confidence"] >= confidence]
    assert skus(f"min_confidence={confidence}") == sorted(above)
    page = client.get(f"{RECS}?limit=2", headers=headers).get_json()
    rest = client.get(f"{RECS}?limit=2&cursor={page['meta']['nextCursor']}", headers=headers)
    assert len(page["data"]) == 2 and len(rest.get_json()["data"]) == 1
    only = client.get(f"{RECS}?fields=sku,status", headers=headers).get_json()["data"][0]
    assert set(only) == {"id", "sku", "status"}


@pytest.mark.parametrize(
    "query", ["min_confidence=1.5", "min_confidence=-0.1", "min_confidence=abc",
              "min_confidence=nan", "status=open", "limit=500", "fields=colour", "colour=red"]
)  # fmt: skip
def test_bad_list_queries(client, headers, recs, query):
    response = client.get(f"{RECS}?{query}", headers=headers)
    assert response.status_code == 422, response.get_json()
    assert response.get_json()["error"]["code"] == "VALIDATION_ERROR"


def test_apply_pushes_then_sets_the_listing_price(client, headers, recs, market):
    rec = recs["MUG-1"]
    response = client.post(f"{RECS}/{rec['id']}/apply", headers=headers)
    assert response.status_code == 200, response.get_json()
    data = response.get_json()["data"]
    assert data["status"] == "applied" and data["applied_at"] and data["dismissed_at"] is None
    (push,) = market.pushes()
    assert push["path"] == "/products/MUG-1"
    assert push["body"]["price"] == rec["recommended_price"] == 16.0
    assert push["body"]["sku"] == "MUG-1"
    assert "quantity" not in push["body"]  # a stale quantity would undo a listing push
    assert listing_price("MUG-1") == 16.0
    (event,) = Event.select().where(
        (Event.resource_id == rec["id"]) & (Event.type == "pricing.recommendation.applied")
    )
    assert event.data["status"] == "applied"
    (attempt,) = SyncAttempt.select().where(SyncAttempt.operation == "push_price")
    assert attempt.status == "succeeded" and attempt.sku == "MUG-1"
    # the second time: 409, nothing pushed
    again = client.post(f"{RECS}/{rec['id']}/apply", headers=headers)
    assert again.status_code == 409
    assert again.get_json()["error"]["code"] == "RECOMMENDATION_ALREADY_APPLIED"
    assert len(market.pushes()) == 1
    dismiss = client.post(f"{RECS}/{rec['id']}/dismiss", headers=headers)
    assert dismiss.status_code == 409
    assert dismiss.get_json()["error"]["code"] == "RECOMMENDATION_NOT_PENDING"


def test_dismiss_then_neither_apply_nor_dismiss(client, headers, recs, market):
    rec = recs["MUG-2"]
    response = client.post(f"{RECS}/{rec['id']}/dismiss", headers=headers)
    assert response.status_code == 200
    assert response.get_json()["data"]["status"] == "dismissed"
    before = pricing_snapshot()
    for action in ("apply", "dismiss"):
        refused = client.post(f"{RECS}/{rec['id']}/{action}", headers=headers)
        assert refused.status_code == 409
        assert refused.get_json()["error"]["code"] == "RECOMMENDATION_NOT_PENDING"
        assert refused.get_json()["error"]["details"]["status"] == "dismissed"
    assert pricing_snapshot() == before and market.pushes() == []


def test_a_listing_that_is_gone_is_a_404(client, headers, recs, market):
    rec = recs["MUG-3"]
    Listing.delete().where(Listing.id.in_([lst.id for lst in Listing.select()
                                           if lst.product.sku == "MUG-3"])).execute()  # fmt: skip
    before = pricing_snapshot()
    response = client.post(f"{RECS}/{rec['id']}/apply", headers=headers)
    assert response.status_code == 404
    error = response.get_json()["error"]
    assert error["code"] == "LISTING_NOT_FOUND"
    assert error["details"] == {"recommendation_id": rec["id"], "sku": "MUG-3",
                                "marketplace": "shop"}  # fmt: skip
    assert pricing_snapshot() == before and market.pushes() == []


def test_unknown_recommendations(client, headers, recs):
    for method, path in (("get", ""), ("post", "/apply"), ("post", "/dismiss")):
        response = getattr(client, method)(f"{RECS}/rec_missing{path}", headers=headers)
        assert response.status_code == 404
        assert response.get_json()["error"]["code"] == "RECOMMENDATION_NOT_FOUND"


def test_recommendations_are_tenant_isolated(client, headers, recs, market):
    other = headers_for(make_tenant())
    rec = recs["MUG-1"]
    assert client.get(RECS, headers=other).get_json()["data"] == []
    for method, path in (("get", ""), ("post", "/apply"), ("post", "/dismiss")):
        response = getattr(client, method)(f"{RECS}/{rec['id']}{path}", headers=other)
        assert response.status_code == 404
        assert response.get_json()["error"]["code"] == "RECOMMENDATION_NOT_FOUND"
    mine = client.get(f"{RECS}/{rec['id']}", headers=headers).get_json()["data"]
    assert mine["status"] == "pending" and market.pushes() == []


def test_scopes(client, tenant, recs):
    reader = headers_for(tenant, scopes=["pricing:read"])
    rec = recs["MUG-1"]
    assert client.get(RECS, headers=reader).status_code == 200
    for path in (f"{RECS}/{rec['id']}/apply", f"{RECS}/{rec['id']}/dismiss"):
        assert client.post(path, headers=reader).status_code == 403
    response = client.post("/api/pricing/recalculate", json={"marketplace": "shop"},
                           headers=reader)  # fmt: skip
    assert response.status_code == 403


# Competitor prices ----------------------------------------------------------------------


def test_competitor_list_shows_the_latest_record_per_competitor(client, headers, tenant):
    connect_sandbox(tenant, "amazon")
    seed_offers(tenant, "amazon", [offer("MUG-1", "A", "10.00", age_ms=7_200_000)])
    seed_offers(tenant, "amazon", [offer("MUG-1", "A", "11.00"), offer("MUG-1", "B", "12")])
    seed_offers(tenant, "ebay", [offer("MUG-1", "A", "13.00"), offer("TOWEL", "C", "4.5")])
    data = client.get("/api/pricing/competitors", headers=headers).get_json()
    assert data["meta"]["total"] == 4
    record = next(
        r for r in data["data"] if r["competitor"] == "A" and r["marketplace"] == "amazon"
    )
    assert record["price"] == 11.0 and record["landed_price"] == 11.0
    assert record["id"].startswith("cpr_") and record["observed_at"].endswith("Z")
    assert set(record) == {"id", "sku", "marketplace", "competitor", "price", "shipping",
                           "landed_price", "currency", "is_buy_box_winner", "condition",
                           "observed_at"}  # fmt: skip

    def pairs(query):
        response = client.get(f"/api/pricing/competitors?{query}", headers=headers)
        assert response.status_code == 200, response.get_json()
        return sorted(
            (r["sku"], r["marketplace"], r["competitor"]) for r in response.get_json()["data"]
        )

    assert pairs("sku=MUG-1&marketplace=amazon") == [
        ("MUG-1", "amazon", "A"),
        ("MUG-1", "amazon", "B"),
    ]
    assert pairs("marketplace=ebay") == [("MUG-1", "ebay", "A"), ("TOWEL", "ebay", "C")]
    assert pairs("sku=NONE") == []
    page = client.get("/api/pricing/competitors?limit=3", headers=headers).get_json()
    assert len(page["data"]) == 3 and page["meta"]["nextCursor"]
    for bad in ("limit=0", "colour=red", "fields=nothing"):
        assert client.get(f"/api/pricing/competitors?{bad}", headers=headers).status_code == 422
    # another tenant sees none of them
    other = headers_for(make_tenant())
    assert client.get("/api/pricing/competitors", headers=other).get_json()["data"] == []


def scan(client, headers, app, params):
    response = client.post("/api/ai-jobs", json={"type": "competitor_scan", "params": params},
                           headers=headers)  # fmt: skip
    assert response.status_code == 201, response.get_json()
    run_worker(app, concurrency=1)
    return client.get(f"/api/ai-jobs/{response.get_json()['data']['id']}",
                      headers=headers).get_json()["data"]  # fmt: skip


def test_competitor_scan_on_the_sandbox(client, headers, app, tenant):
    connect_sandbox(tenant, "amazon")
    for sku in ("MUG-1", "MUG-2"):
        make_product(client, headers, sku, cost="10.00")
        list_product(tenant, sku, "amazon", "20.00")
    job = scan(client, headers, app, {"marketplace": "amazon", "skus": ["MUG-1", "MUG-2", "X"]})
    assert job["status"] == "completed", job
    assert job["result"] == {
        "marketplace": "amazon",
        "sku_count": 3,
        "offer_count": 6,
        "skus_without_offers": ["X"],
    }
    assert job["progress"] == {"done": 3, "total": 3}
    # skus omitted: every SKU listed there
    job = scan(client, headers, app, {"marketplace": "amazon"})
    assert job["result"]["sku_count"] == 2 and job["result"]["skus_without_offers"] == []
    assert CompetitorOffer.select().count() == 12 and CompetitorLatest.select().count() == 6
    listed = client.get("/api/pricing/competitors?sku=MUG-1", headers=headers).get_json()
    assert len(listed["data"]) == 3
    assert sum(r["is_buy_box_winner"] for r in listed["data"]) == 1


def test_competitor_scan_of_an_unconnected_marketplace_fails(client, headers, app):
    job = scan(client, headers, app, {"marketplace": "ebay", "skus": ["A"]})
    assert job["status"] == "failed"
    assert job["error"]["code"] == "MARKETPLACE_NOT_CONNECTED"
    assert job["error"]["retry_count"] == 0


@pytest.mark.parametrize(
    "raw",
    [
        b'{"prices": [{"sku": "MUG-1", "competitor": "A", "price": NaN, "currency": "USD",'
        b' "observed_at": "2030-01-01T00:00:00Z"}]}',
        b'{"prices": [{"sku": "MUG-1", "competitor": "A", "price": Infinity}]}',
        b'{"prices": [{"sku": "MUG-1", "competitor": "A", "price": "12.00"}]}',
        b'{"prices": [{"sku": "MUG-1", "competitor": "A", "price": -3}]}',
        b'{"prices": [{"sku": "MUG-1", "competitor": "A", "price": 1e12}]}',
        b'{"prices": [{"sku": "MUG-1", "competitor": "A", "price": 12, "landed_price": 99,'
        b' "observed_at": "NOW"}]}',
        b'{"prices": [{"sku": "MUG-1", "competitor": "A", "price": 12, "observed_at": "soon"}]}',
        b'{"prices": [{"sku": "MUG-1", "competitor": "A", "price": 12,'
        b' "observed_at": "2999-01-01T00:00:00Z"}]}',
        b'{"prices": [{"sku": "MUG-1", "competitor": 7, "price": 12}]}',
        b'{"prices": [{"sku": "MUG-1", "competitor": "A", "price": 12, "is_buy_box_winner": "y"}]}',
        b'{"prices": [{"sku": "MUG-1", "competitor": "A\\u0000", "price": 12}]}',
        b'{"prices": ["MUG-1"]}',
        b'{"prices": {"MUG-1": 12}}',
        b'{"offers": []}',
        b"[]",
    ],
)
def test_unusable_competitor_answers_are_unavailable_and_stored_nowhere(
    client, headers, app, tenant, market, raw
):
    connect_http(tenant, market.url)
    good = offer("MUG-1", "B", "11.00")
    # a valid record next to the bad one: the whole answer is refused
    market.raw_prices = raw.replace(
        b'"prices": [', b'"prices": [' + json.dumps(good).encode() + b", ", 1
    )
    response = client.post("/api/ai-jobs", json={"type": "competitor_scan",
                           "params": {"marketplace": "shop", "skus": ["MUG-1"]}},
                           headers=headers)  # fmt: skip
    result, failure = run_job(response.get_json()["data"]["id"])
    assert result is None
    assert failure.code == "MARKETPLACE_UNAVAILABLE" and failure.retryable
    assert CompetitorOffer.select().count() == 0 and CompetitorLatest.select().count() == 0


def test_a_refusing_marketplace_fails_the_scan_for_good(client, headers, tenant, market):
    connect_http(tenant, market.url)
    market.modes["competitor-prices"] = "reject"
    response = client.post("/api/ai-jobs", json={"type": "competitor_scan",
                           "params": {"marketplace": "shop"}}, headers=headers)  # fmt: skip
    make_product(client, headers, "MUG-1")
    list_product(tenant, "MUG-1", "shop", "20.00")
    result, failure = run_job(response.get_json()["data"]["id"])
    assert failure.code == "MARKETPLACE_REJECTION" and not failure.retryable
    assert failure.details["marketplace_code"] == "PRICE_TOO_LOW"
