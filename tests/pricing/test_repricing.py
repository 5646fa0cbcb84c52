"""Repricing through HTTP: rules in, a pricing_recalculate job, recommendations out.

The marketplace is an ``http`` adapter on 127.0.0.1 (tests/support/pricing_support.py) so that
the competitor offers are exactly the ones each test sets.
"""

import pytest

from commerce_api.claims import OperationClaim
from commerce_api.events.models import Event
from commerce_api.jobs.models import Job
from commerce_api.pricing import applying
from commerce_api.pricing.models import CompetitorLatest, CompetitorOffer, Recommendation
from commerce_api.pricing.recalculate import JobProblem, run_recalculation
from commerce_api.pricing.tasks import PricingRecalculateResult
from commerce_api.products.models import Listing
from tests.support import pricing_support
from tests.support.pricing_support import (
    HOUR_MS,
    connect_http,
    connect_sandbox,
    create_rule,
    list_product,
    make_product,
    offer,
    pricing_snapshot,
    recalculate,
    recommendation_for,
    seed_offers,
)

market = pricing_support.market  # the fixture

DAY_MS = 24 * HOUR_MS


@pytest.fixture
def shop(client, headers, tenant, market):
    """MUG-1 (kitchen, cost 10) listed on "shop" at 20.00, with three fresh offers:
    L = 18.00 (A), W = 19.00 (B, the buy-box winner)."""
    connect_http(tenant, market.url)
    make_product(client, headers, "MUG-1", cost="10.00", category="kitchen")
    list_product(tenant, "MUG-1", "shop", "20.00")
    seed_offers(
        tenant,
        "shop",
        [
            offer("MUG-1", "A", "18.00"),
            offer("MUG-1", "B", "17.00", shipping="2.00", winner=True),
            offer("MUG-1", "C", "21.00", shipping="1.00"),
        ],
    )
    return market


def reprice(client, headers, app, sku="MUG-1", **body):
    job = recalculate(client, headers, app, marketplace="shop", skus=[sku], **body)
    return job, recommendation_for(job, sku)


@pytest.mark.parametrize(
    "rule, expected",
    [
        ({"type": "competitor_match", "value": -0.5}, 17.50),  # L - 0.50
        ({"type": "competitor_match", "value": -10, "value_type": "percent"}, 16.20),  # L x 0.9
        ({"type": "buy_box_target", "value": -0.01}, 18.99),  # W - 0.01
        ({"type": "buy_box_target", "value": 10, "value_type": "percent"}, 20.90),  # W x 1.1
        ({"type": "margin_target", "value": 5}, 15.00),  # C + 5
        ({"type": "margin_target", "value": 20, "value_type": "percent"}, 12.50),  # C / 0.8
    ],
)
def test_each_target_rule_and_value_type(client, headers, app, shop, rule, expected):
    created = create_rule(client, headers, name="Target", **rule)
    job, item = reprice(client, headers, app)
    assert job["result"]["processed_count"] == 1 and job["result"]["updated_count"] == 1
    assert item["recommended_price"] == expected and item["current_price"] == 20.0
    assert item["applied"] is False
    assert created["id"] in item["reasoning"] and "Target" in item["reasoning"]
    stored = client.get("/api/pricing/recommendations", headers=headers).get_json()["data"]
    (rec,) = stored
    assert rec["id"] == item["id"] and rec["status"] == "pending"
    assert rec["recommended_price"] == expected
    assert rec["delta"] == round(expected - 20.0, 2)
    assert rec["delta_pct"] == round(100 * (expected - 20.0) / 20.0, 2)
    assert rec["estimated_margin"] == round((expected - 10.0) / expected, 4)
    assert rec["rule_ids"] == [created["id"]]
    assert rec["job_id"] == job["id"] and rec["marketplace"] == "shop"
    assert 0.0 <= rec["confidence"] <= 1.0 and 0.0 <= rec["buy_box_win_probability"] <= 1.0
    if rule["type"] == "competitor_match":
        assert rec["reference_price"] == 18.0
    if rule["type"] == "buy_box_target":
        assert rec["reference_price"] == 19.0


@pytest.mark.parametrize(
    "bound, expected",
    [
        ({"type": "floor", "value": 15}, 15.00),
        ({"type": "floor", "value": 60, "value_type": "percent"}, 16.00),  # C x 1.6
        ({"type": "ceiling", "value": 12}, 12.00),
        ({"type": "ceiling", "value": 20, "value_type": "percent"}, 12.00),  # C x 1.2
    ],
)
def test_floor_and_ceiling_of_each_value_type(client, headers, app, shop, bound, expected):
    # the target alone: C + 3 = 13.00
    create_rule(client, headers, type="margin_target", value=3)
    created = create_rule(client, headers, name="Bound", **bound)
    _, item = reprice(client, headers, app)
    assert item["recommended_price"] == expected
    assert created["id"] in item["reasoning"]


def test_floor_beats_ceiling(client, headers, app, shop):
    create_rule(client, headers, type="competitor_match", value=0)  # T = 18.00
    floor = create_rule(client, headers, type="floor", value=30)
    create_rule(client, headers, type="ceiling", value=25)
    _, item = reprice(client, headers, app)
    assert item["recommended_price"] == 30.0
    assert floor["id"] in item["reasoning"] and "floor wins" in item["reasoning"]


def test_a_price_never_rises_more_than_half_without_a_ceiling(client, headers, app, shop):
    create_rule(client, headers, type="margin_target", value=50)  # T = 60.00 against P = 20
    _, item = reprice(client, headers, app)
    assert item["recommended_price"] == 30.0
    assert "50 %" in item["reasoning"]
    # a ceiling replaces the cap
    create_rule(client, headers, type="ceiling", value=45)
    _, item = reprice(client, headers, app)
    assert item["recommended_price"] == 45.0


def test_scope_and_marketplace_decide_which_rules_match(client, headers, app, shop, tenant):
    connect_sandbox(tenant, "amazon")
    make_product(client, headers, "LAMP-1", cost="10.00", category="home")
    list_product(tenant, "LAMP-1", "shop", "20.00")
    seed_offers(tenant, "shop", [offer("LAMP-1", "A", "18.00")])
    create_rule(client, headers, type="margin_target", value=1, priority=1)  # everything
    create_rule(client, headers, type="margin_target", value=2, priority=5,
                applies_to="category", category="kitchen")  # fmt: skip
    create_rule(client, headers, type="margin_target", value=3, priority=5,
                applies_to="sku", skus=["LAMP-1"])  # fmt: skip
    create_rule(client, headers, type="margin_target", value=4, priority=9,
                marketplace="amazon")  # another marketplace: never here  # fmt: skip
    job = recalculate(client, headers, app, marketplace="shop", skus=["MUG-1", "LAMP-1"])
    assert recommendation_for(job, "MUG-1")["recommended_price"] == 12.0  # category rule
    assert recommendation_for(job, "LAMP-1")["recommended_price"] == 13.0  # sku rule


def test_priority_then_narrower_scope(client, headers, app, shop):
    create_rule(client, headers, type="margin_target", value=2, priority=5)
    sku_rule = create_rule(client, headers, type="competitor_match", value=-1, priority=5,
                           applies_to="sku", skus=["MUG-1"])  # fmt: skip
    _, item = reprice(client, headers, app)
    assert item["recommended_price"] == 17.0  # same priority: the sku rule is narrower
    assert item["reasoning"].count(sku_rule["id"]) >= 1
    high = create_rule(client, headers, type="buy_box_target", value=0, priority=6)
    _, item = reprice(client, headers, app)
    assert item["recommended_price"] == 19.0  # a higher priority wins over any scope
    assert high["id"] in item["reasoning"]


def test_stale_and_used_offers_are_ignored(client, headers, app, shop, tenant):
    seed_offers(
        tenant,
        "shop",
        [
            offer("MUG-1", "Used Ltd", "5.00", condition="used"),
            offer("MUG-1", "Old Co", "4.00", age_ms=2 * DAY_MS),
        ],
    )
    create_rule(client, headers, type="competitor_match", value=0)
    _, item = reprice(client, headers, app)
    assert item["recommended_price"] == 18.0  # A's 18.00, not 5.00 (used) or 4.00 (stale)
    # fresh offers exist: nothing fetched
    assert [r for r in shop.requests if r["path"] == "/competitor-prices"] == []


def test_a_rule_without_fresh_offers_is_passed_over(client, headers, app, shop, tenant):
    make_product(client, headers, "OLD-1", cost="10.00")
    list_product(tenant, "OLD-1", "shop", "20.00")
    seed_offers(tenant, "shop", [offer("OLD-1", "Old Co", "4.00", age_ms=2 * DAY_MS)])
    match = create_rule(client, headers, type="competitor_match", value=0, priority=9)
    create_rule(client, headers, type="margin_target", value=4, priority=1)
    _, item = reprice(client, headers, app, sku="OLD-1")
    # the stale offer made the job ask the marketplace, which had nothing new
    (asked,) = [r for r in shop.requests if r["path"] == "/competitor-prices"]
    assert asked["query"]["sku"] == ["OLD-1"]
    assert item["recommended_price"] == 14.0
    assert f"({match['id']}) passed over" in item["reasoning"]


def test_missing_offers_are_fetched_through_the_connector(client, headers, app, shop, tenant):
    make_product(client, headers, "NEW-1", cost="10.00")
    list_product(tenant, "NEW-1", "shop", "20.00")
    shop.offers["NEW-1"] = [offer("NEW-1", "X", "16.00", winner=True), offer("NEW-1", "Y", "17")]
    create_rule(client, headers, type="buy_box_target", value=0)
    job, item = reprice(client, headers, app, sku="NEW-1")
    assert item["recommended_price"] == 16.0
    assert job["result"]["competitor_fetch"] == {
        "skus_requested": 1,
        "offers_stored": 2,
        "error": None,
    }
    assert CompetitorOffer.select().where(CompetitorOffer.sku == "NEW-1").count() == 2
    listed = client.get("/api/pricing/competitors?sku=NEW-1", headers=headers).get_json()
    assert sorted(r["competitor"] for r in listed["data"]) == ["X", "Y"]


def test_an_unavailable_marketplace_reprices_with_what_is_stored(
    client, headers, app, shop, tenant
):
    make_product(client, headers, "NEW-1", cost="10.00")
    list_product(tenant, "NEW-1", "shop", "20.00")  # no offers stored: the job asks
    shop.modes["competitor-prices"] = "error"
    create_rule(client, headers, type="competitor_match", value=-1, priority=9)
    create_rule(client, headers, type="margin_target", value=4, priority=1)
    job = recalculate(client, headers, app, marketplace="shop", skus=["MUG-1", "NEW-1", "GONE-1"])
    assert job["result"]["competitor_fetch"]["error"]["code"] == "OOPS"
    assert job["result"]["competitor_fetch"]["offers_stored"] == 0
    assert recommendation_for(job, "MUG-1")["recommended_price"] == 17.0  # stored offers
    assert recommendation_for(job, "NEW-1")["recommended_price"] == 14.0  # margin fallback
    assert job["result"]["skipped"] == [{"sku": "GONE-1", "reason": "not_listed"}]
    assert CompetitorOffer.select().where(CompetitorOffer.sku == "NEW-1").count() == 0


def test_no_recommendation_when_the_price_is_right(client, headers, app, shop):
    create_rule(client, headers, type="margin_target", value=10)  # T = 20.00 = P
    job, item = reprice(client, headers, app)
    assert item is None
    assert job["result"]["processed_count"] == 1 and job["result"]["updated_count"] == 0
    assert Recommendation.select().count() == 0


def test_a_new_recommendation_dismisses_the_pending_one(client, headers, app, shop):
    rule = create_rule(client, headers, type="margin_target", value=4)
    _, first = reprice(client, headers, app)
    client.patch(f"/api/pricing/rules/{rule['id']}", json={"value": 5}, headers=headers)
    _, second = reprice(client, headers, app)
    recs = {r["id"]: r for r in client.get("/api/pricing/recommendations", headers=headers)
            .get_json()["data"]}  # fmt: skip
    assert recs[first["id"]]["status"] == "dismissed" and recs[first["id"]]["dismissed_at"]
    assert recs[second["id"]]["status"] == "pending"
    assert second["recommended_price"] == 15.0
    events = [e.type for e in Event.select().where(Event.resource_type == "recommendation")]
    assert events == ["pricing.recommendation.created"] * 2


def test_every_listed_sku_when_skus_are_omitted(client, headers, app, shop, tenant):
    make_product(client, headers, "MUG-2", cost="10.00")
    list_product(tenant, "MUG-2", "shop", "11.00")
    make_product(client, headers, "NOLIST-1", cost="10.00")  # not listed on shop
    make_product(client, headers, "NOPRICE-1", cost="10.00")
    list_product(tenant, "NOPRICE-1", "shop", None)
    shop.offers["MUG-2"] = [offer("MUG-2", "A", "12.00")]
    create_rule(client, headers, type="competitor_match", value=0)
    response = client.post("/api/pricing/recalculate", json={"marketplace": "shop"},
                           headers=headers)  # fmt: skip
    assert response.status_code == 200
    assert response.get_json()["data"]["sku_count"] == 3
    job = recalculate(client, headers, app, marketplace="shop")
    result = job["result"]
    assert result["processed_count"] == 3 and result["updated_count"] == 2
    assert sorted(r["sku"] for r in result["recommendations"]) == ["MUG-1", "MUG-2"]
    assert result["skipped"] == [{"sku": "NOPRICE-1", "reason": "no_listing_price"}]
    for item in result["recommendations"]:
        assert set(item) >= {"sku", "current_price", "recommended_price", "confidence",
                             "applied", "reasoning"}  # fmt: skip


def test_recalculate_answer(client, headers, app, shop):
    response = client.post(
        "/api/pricing/recalculate", json={"marketplace": "shop", "skus": ["MUG-1", "MUG-1", "B"]},
        headers=headers,
    )  # fmt: skip
    assert response.status_code == 200
    data = response.get_json()["data"]
    assert set(data) == {"job_id", "status", "sku_count", "estimated_completion_seconds"}
    assert data["status"] == "queued" and data["sku_count"] == 2
    assert data["estimated_completion_seconds"] >= 1
    job = client.get(f"/api/ai-jobs/{data['job_id']}", headers=headers).get_json()["data"]
    assert job["type"] == "pricing_recalculate"
    assert job["params"] == {"marketplace": "shop", "skus": ["MUG-1", "B"], "apply": False}


@pytest.mark.parametrize(
    "body, status, code, field",
    [
        ({"marketplace": "ebay"}, 422, "MARKETPLACE_NOT_CONNECTED", None),
        ({"skus": ["MUG-1"]}, 422, "VALIDATION_ERROR", "marketplace"),
        ({"marketplace": "shop", "skus": []}, 422, "VALIDATION_ERROR", "skus"),
        ({"marketplace": "shop", "skus": ["A"] * 10_001}, 422, "VALIDATION_ERROR", "skus"),
        ({"marketplace": "shop", "skus": "MUG-1"}, 422, "VALIDATION_ERROR", "skus"),
        ({"marketplace": "shop", "apply": "yes"}, 422, "VALIDATION_ERROR", "apply"),
        ({"marketplace": "shop", "dry_run": True}, 422, "VALIDATION_ERROR", "dry_run"),
    ],
)
def test_bad_recalculate_requests_write_nothing(client, headers, shop, body, status, code, field):
    before = pricing_snapshot()
    response = client.post("/api/pricing/recalculate", json=body, headers=headers)
    assert response.status_code == status, response.get_json()
    error = response.get_json()["error"]
    assert error["code"] == code
    if field:
        assert field in error["details"]["fields"]
    else:
        assert error["details"]["marketplace"] == "ebay"
    assert pricing_snapshot() == before


def test_more_than_ten_thousand_listed_skus_must_be_named(client, headers, tenant, shop):
    from commerce_api.pricing import recalculate as module

    module_limit = module.MAX_RECALCULATE_SKUS
    try:
        module.MAX_RECALCULATE_SKUS = 0  # one listed SKU is already too many
        before = pricing_snapshot()
        response = client.post("/api/pricing/recalculate", json={"marketplace": "shop"},
                               headers=headers)  # fmt: skip
        assert response.status_code == 422
        assert "skus" in response.get_json()["error"]["details"]["fields"]
        assert pricing_snapshot() == before
    finally:
        module.MAX_RECALCULATE_SKUS = module_limit


def test_apply_true_applies_and_pushes_every_recommendation(client, headers, app, shop, tenant):
    make_product(client, headers, "MUG-2", cost="10.00")
    list_product(tenant, "MUG-2", "shop", "30.00")
    seed_offers(tenant, "shop", [offer("MUG-2", "A", "25.00")])
    create_rule(client, headers, type="competitor_match", value=-1)
    job = recalculate(client, headers, app, marketplace="shop", apply=True)
    result = job["result"]
    assert result["updated_count"] == 2 and result["applied_count"] == 2
    assert all(item["applied"] for item in result["recommendations"])
    prices = {r["body"]["sku"]: r["body"]["price"] for r in shop.pushes()}
    assert prices == {"MUG-1": 17.0, "MUG-2": 24.0}
    assert {r["path"] for r in shop.pushes()} == {"/products/MUG-1", "/products/MUG-2"}
    listings = {lst.product.sku: float(lst.price) for lst in Listing.select()}
    assert listings == {"MUG-1": 17.0, "MUG-2": 24.0}
    recs = client.get("/api/pricing/recommendations?status=applied", headers=headers).get_json()
    assert recs["meta"]["total"] == 2 and all(r["applied_at"] for r in recs["data"])
    types = sorted(e.type for e in Event.select().where(Event.resource_type == "recommendation"))
    assert types == ["pricing.recommendation.applied"] * 2 + ["pricing.recommendation.created"] * 2


def test_apply_true_keeps_refused_pushes_pending(client, headers, app, shop):
    shop.modes["products"] = "reject"
    create_rule(client, headers, type="competitor_match", value=-1)
    job = recalculate(client, headers, app, marketplace="shop", apply=True)
    (item,) = job["result"]["recommendations"]
    assert item["applied"] is False
    assert item["error"]["code"] == "MARKETPLACE_REJECTION"
    assert item["error"]["marketplace_code"] == "PRICE_TOO_LOW"
    assert job["result"]["applied_count"] == 0
    rec = client.get(f"/api/pricing/recommendations/{item['id']}", headers=headers).get_json()
    assert rec["data"]["status"] == "pending"
    assert float(Listing.get().price) == 20.0


def test_competitor_offers_keep_history_and_latest(client, headers, app, shop, tenant):
    seed_offers(tenant, "shop", [offer("MUG-1", "A", "17.50")])
    assert CompetitorOffer.select().where(CompetitorOffer.competitor == "A").count() == 2
    latest = CompetitorLatest.get(CompetitorLatest.competitor == "A")
    assert float(latest.price) == 17.5
    # an older observation arriving late goes to the history only
    seed_offers(tenant, "shop", [offer("MUG-1", "A", "9.00", age_ms=HOUR_MS)])
    assert float(CompetitorLatest.get(CompetitorLatest.competitor == "A").price) == 17.5
    assert CompetitorOffer.select().where(CompetitorOffer.competitor == "A").count() == 3


def test_apply_true_waits_out_a_busy_marketplace_and_goes_on(client, headers, app, shop, tenant):
    make_product(client, headers, "MUG-2", cost="10.00")
    list_product(tenant, "MUG-2", "shop", "30.00")
    seed_offers(tenant, "shop", [offer("MUG-2", "A", "25.00")])
    shop.retry_after = "1"
    shop.busy_times["products"] = 2  # two 429s, then it accepts
    create_rule(client, headers, type="competitor_match", value=-1)
    job = recalculate(client, headers, app, marketplace="shop", apply=True)
    result = job["result"]
    assert job["attempts"] == 1
    assert result["applied_count"] == 2 and result["updated_count"] == 2
    assert all(item["applied"] for item in result["recommendations"])
    assert len(shop.pushes()) == 4
    first, again = shop.pushes()[:2], shop.pushes()[2]
    # the same push asked again: the same key
    assert {r["headers"]["Idempotency-Key"] for r in first} == {again["headers"]["Idempotency-Key"]}
    assert shop.accepted == {"MUG-1": 17.0, "MUG-2": 24.0}
    assert sorted(float(lst.price) for lst in Listing.select()) == [17.0, 24.0]
    assert OperationClaim.select().count() == 0


def test_apply_true_keeps_its_claim_when_the_marketplace_stays_unavailable(
    client, headers, app, shop, tenant, monkeypatch
):
    make_product(client, headers, "MUG-2", cost="10.00")
    list_product(tenant, "MUG-2", "shop", "30.00")
    seed_offers(tenant, "shop", [offer("MUG-2", "A", "25.00")])
    monkeypatch.setattr(applying, "MAX_WAIT_SECONDS", 0.2)
    shop.modes["products"] = "busy"
    create_rule(client, headers, type="competitor_match", value=-1)
    queued = client.post(
        "/api/pricing/recalculate", json={"marketplace": "shop", "apply": True}, headers=headers
    ).get_json()["data"]
    job = Job.get_by_id(queued["job_id"])
    with pytest.raises(JobProblem) as stuck:
        run_recalculation(job)
    assert (stuck.value.code, stuck.value.retryable) == ("MARKETPLACE_UNAVAILABLE", True)
    assert len(shop.pushes()) == applying.PUSH_ATTEMPTS  # the first SKU, asked again
    (intent,) = OperationClaim.select()  # the push may have landed: the intent stays
    assert {r.status for r in Recommendation.select()} == {"pending"}
    assert sorted(float(lst.price) for lst in Listing.select()) == [20.0, 30.0]
    # the retried attempt pushes the claimed one first (same key), then goes on
    shop.modes["products"] = "accept"
    result = run_recalculation(job)
    assert result["resumed_count"] == 1
    # every key of the result is a documented one (the job type's result schema)
    documented = PricingRecalculateResult().fields
    assert set(result) <= set(documented)
    assert {n for n, f in documented.items() if f.required} <= set(result)
    resumed = shop.pushes()[applying.PUSH_ATTEMPTS]
    assert resumed["headers"]["Idempotency-Key"] == intent.resource_id
    assert OperationClaim.select().count() == 0
    assert shop.accepted == {"MUG-1": 17.0, "MUG-2": 24.0}
    assert sorted(float(lst.price) for lst in Listing.select()) == [17.0, 24.0]
    applied = Recommendation.select().where(Recommendation.status == "applied")
    assert sorted(r.sku for r in applied) == ["MUG-1", "MUG-2"]
