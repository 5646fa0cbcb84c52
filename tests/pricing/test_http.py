"""The whole pricing flow against marketplaces: sync, scan, recalculate, apply.

Through the ``http`` connector to an adapter on 127.0.0.1 (including an apply refused
with 422 and 503 that leaves the listing and the recommendation as they were), and
through the in-process ``sandbox``.
"""

import json

from commerce_api.cli import cli
from commerce_api.marketplaces.models import SyncAttempt
from commerce_api.timeutil import format_ms, now_ms
from tests.support import pricing_support
from tests.support.jobs_support import run_worker
from tests.support.pricing_support import (
    connect_http,
    connect_sandbox,
    create_rule,
    make_product,
    pricing_snapshot,
    recalculate,
)
from tests.support.products_support import price_listing

market = pricing_support.market  # the fixture


def job_of(client, headers, job_id):
    return client.get(f"/api/ai-jobs/{job_id}", headers=headers).get_json()["data"]


def listing_of(client, headers, sku, marketplace):
    product = client.get(f"/api/products/{sku}", headers=headers).get_json()["data"]
    return next(item for item in product["listings"] if item["marketplace"] == marketplace)


def sync(client, headers, app, sku, marketplace, price):
    """List ``sku`` on ``marketplace`` at ``price`` (set before the push) and push it."""
    price_listing(client, headers, sku, marketplace, price)
    response = client.post(
        f"/api/products/{sku}/sync", json={"marketplaces": [marketplace]}, headers=headers
    )
    assert response.status_code == 202, response.get_json()
    run_worker(app, concurrency=1)
    job = job_of(client, headers, response.get_json()["data"]["job_id"])
    assert job["status"] == "completed", job


def test_sync_scan_recalculate_apply_over_http(client, headers, app, tenant, market):
    connect_http(tenant, market.url)
    make_product(client, headers, "MUG-1", cost="10.00", category="kitchen")
    sync(client, headers, app, "MUG-1", "shop", 20.0)
    assert listing_of(client, headers, "MUG-1", "shop")["price"] == 20.0

    # scan: the adapter's offers become the competitor records
    market.offers["MUG-1"] = [
        {"sku": "MUG-1", "competitor": "BestDeals", "price": 16.5, "shipping": 1.5,
         "landed_price": 18.0, "currency": "USD", "is_buy_box_winner": True,
         "condition": "new", "observed_at": "2026-11-23T10:00:00Z"},
        {"sku": "MUG-1", "competitor": "ValueMart", "price": 17.0, "shipping": 0,
         "currency": "USD", "is_buy_box_winner": False, "condition": "new",
         "observed_at": "2026-11-23T10:00:00Z"},
    ]  # fmt: skip
    for record in market.offers["MUG-1"]:  # observed just now (the job's clock is real)
        record["observed_at"] = format_ms(now_ms() - 1000)
    response = client.post(
        "/api/ai-jobs",
        json={"type": "competitor_scan", "params": {"marketplace": "shop"}},
        headers=headers,
    )
    run_worker(app, concurrency=1)
    scan = job_of(client, headers, response.get_json()["data"]["id"])
    assert scan["result"] == {
        "marketplace": "shop",
        "sku_count": 1,
        "offer_count": 2,
        "skus_without_offers": [],
    }
    (asked,) = [r for r in market.requests if r["path"] == "/competitor-prices"]
    assert asked["query"] == {"sku": ["MUG-1"]}
    competitors = client.get("/api/pricing/competitors?sku=MUG-1", headers=headers).get_json()
    assert sorted((r["competitor"], r["landed_price"]) for r in competitors["data"]) == [
        ("BestDeals", 18.0),
        ("ValueMart", 17.0),
    ]

    # recalculate: buy-box target W - 0.01 = 17.99, within a 12.00 floor
    create_rule(client, headers, name="Win the box", type="buy_box_target", value=-0.01)
    create_rule(client, headers, name="Never below cost + 20 %", type="floor", value=20,
                value_type="percent")  # fmt: skip
    job = recalculate(client, headers, app, marketplace="shop")
    (item,) = job["result"]["recommendations"]
    assert item["recommended_price"] == 17.99 and item["current_price"] == 20.0
    assert [r for r in market.requests if r["path"] == "/competitor-prices"] == [asked]
    rec_id = item["id"]

    # apply refused (422), then unreachable (503): nothing changes
    before = pricing_snapshot()
    attempts_before = SyncAttempt.select().count()
    market.modes["products"] = "reject"
    refused = client.post(f"/api/pricing/recommendations/{rec_id}/apply", headers=headers)
    assert refused.status_code == 422
    error = refused.get_json()["error"]
    assert error["code"] == "MARKETPLACE_REJECTION"
    assert error["details"]["marketplace_code"] == "PRICE_TOO_LOW"
    for mode, retry_after in (("busy", "7"), ("error", "30"), ("garbage", "30")):
        market.modes["products"] = mode
        down = client.post(f"/api/pricing/recommendations/{rec_id}/apply", headers=headers)
        assert down.status_code == 503, mode
        assert down.get_json()["error"]["code"] == "MARKETPLACE_UNAVAILABLE"
        assert down.headers["Retry-After"] == retry_after
    after = pricing_snapshot()
    # the only trace: one sync-history row per attempt
    assert after.pop("sync_attempt") == attempts_before + 4
    before.pop("sync_attempt")
    assert after == before
    assert listing_of(client, headers, "MUG-1", "shop")["price"] == 20.0
    rec = client.get(f"/api/pricing/recommendations/{rec_id}", headers=headers).get_json()
    assert rec["data"]["status"] == "pending"

    # accepted
    market.modes["products"] = "accept"
    applied = client.post(f"/api/pricing/recommendations/{rec_id}/apply", headers=headers)
    assert applied.status_code == 200
    assert applied.get_json()["data"]["status"] == "applied"
    assert listing_of(client, headers, "MUG-1", "shop")["price"] == 17.99
    push = market.pushes()[-1]
    assert push["path"] == "/products/MUG-1" and push["body"]["price"] == 17.99
    assert push["body"]["title"] and push["body"]["gtin"]  # the listing shape, new price
    statuses = [
        a.status
        for a in SyncAttempt.select()
        .where(SyncAttempt.operation == "push_price")
        .order_by(SyncAttempt.created_at, SyncAttempt.id)
    ]
    assert statuses == ["rejected", "unavailable", "unavailable", "unavailable", "succeeded"]
    history = client.get(
        "/api/marketplaces/sync-history?operation=push_price&sku=MUG-1", headers=headers
    )
    assert history.status_code == 200 and history.get_json()["meta"]["total"] == 5


def test_the_sandbox_reprices_deterministically(client, headers, app, tenant):
    connect_sandbox(tenant, "amazon")
    for sku, cost in (("MUG-1", "5.00"), ("LAMP-1", "20.00")):
        make_product(client, headers, sku, cost=cost)
        sync(client, headers, app, sku, "amazon", 2 * float(cost))
        assert listing_of(client, headers, sku, "amazon")["price"] == 2 * float(cost)
    create_rule(client, headers, type="competitor_match", value=-0.25)
    create_rule(client, headers, type="floor", value=25, value_type="percent")
    first = recalculate(client, headers, app, marketplace="amazon")
    assert first["result"]["competitor_fetch"]["skus_requested"] == 2
    assert first["result"]["competitor_fetch"]["offers_stored"] == 6
    second = recalculate(client, headers, app, marketplace="amazon")
    assert second["result"]["competitor_fetch"]["skus_requested"] == 0  # fresh: not asked

    def prices(job):
        return {i["sku"]: i["recommended_price"] for i in job["result"]["recommendations"]}

    assert prices(first) == prices(second)
    competitors = client.get("/api/pricing/competitors?marketplace=amazon", headers=headers)
    lowest = {}
    for record in competitors.get_json()["data"]:
        sku = record["sku"]
        lowest[sku] = min(lowest.get(sku, 1e9), record["landed_price"])
    for sku, cost in (("MUG-1", 5.0), ("LAMP-1", 20.0)):
        # L - 0.25, at most 1.5 x P (no ceiling), at least the floor C x 1.25
        expected = max(min(round(lowest[sku] - 0.25, 2), 3 * cost), cost * 1.25)
        if sku in prices(first):
            assert prices(first)[sku] == expected
        else:  # a change under COMMERCE_PRICING_MIN_CHANGE (0.5 %) is not recommended
            assert abs(expected - 2 * cost) < 0.005 * 2 * cost
    rec = second["result"]["recommendations"][0]
    applied = client.post(f"/api/pricing/recommendations/{rec['id']}/apply", headers=headers)
    assert applied.status_code == 200
    assert listing_of(client, headers, rec["sku"], "amazon")["price"] == rec["recommended_price"]


def test_the_demo_tenant_gets_real_recommendations(app, make_app, tmp_path):
    demo = make_app()
    demo.instance_path = str(tmp_path / "instance")
    result = demo.test_cli_runner().invoke(cli, ["demo", "--json"])
    assert result.exit_code == 0, result.output
    saved = json.loads(result.stdout)
    client = demo.test_client()
    headers = {"Authorization": f"Bearer {saved['api_key']}", "X-Tenant-ID": saved["tenant_id"]}
    rules = client.get("/api/pricing/rules", headers=headers).get_json()
    assert rules["meta"]["total"] == 3
    listed = client.get("/api/products?marketplace=amazon", headers=headers).get_json()
    listed_count = listed["meta"]["total"]
    assert listed_count >= 10
    offers = client.get("/api/pricing/competitors?marketplace=amazon", headers=headers)
    assert offers.get_json()["meta"]["total"] == 3 * listed_count  # 3 per listed product
    job = recalculate(client, headers, demo, marketplace="amazon")
    result = job["result"]
    assert result["processed_count"] == listed_count and result["updated_count"] >= 5
    for item in result["recommendations"]:
        assert "Undercut" in item["reasoning"] or "margin" in item["reasoning"]
    assert result["competitor_fetch"]["skus_requested"] == 0  # the demo's offers are fresh
