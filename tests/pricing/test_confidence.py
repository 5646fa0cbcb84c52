"""Recommendations a merchant can act on (DESIGN 6): confidence separates good data from
poor, and no recommendation is written for a change below COMMERCE_PRICING_MIN_CHANGE."""

from decimal import Decimal as D

import pytest

from commerce_api.pricing.engine import MinChange
from tests.support import pricing_support
from tests.support.jobs_support import run_worker
from tests.support.pricing_support import (
    connect_http,
    create_rule,
    list_product,
    make_product,
    offer,
    recalculate,
    seed_offers,
)

market = pricing_support.market  # the fixture

HOUR_MS = 3_600_000
FRESH = ("18.00", "18.40", "18.90", "19.20", "19.60")  # five competitors, a usual spread


def _prices(job):
    return {item["sku"]: item for item in job["result"]["recommendations"]}


def test_five_fresh_offers_score_at_least_0_3_above_one_offer_20_hours_old(
    client, headers, tenant, market
):
    connect_http(tenant, market.url)
    create_rule(client, headers, type="competitor_match", value=-0.25)
    good, poor = [f"GOOD-{n}" for n in range(3)], [f"POOR-{n}" for n in range(3)]
    records = []
    for n, sku in enumerate(good):
        make_product(client, headers, sku, cost="8.00")
        list_product(tenant, sku, "shop", "22.00")
        records += [
            offer(sku, f"C{i}", price, age_ms=(5 + 10 * i + n) * 60_000)  # 5-50 min old
            for i, price in enumerate(FRESH)
        ]
    for n, sku in enumerate(poor):
        make_product(client, headers, sku, cost="8.00")
        list_product(tenant, sku, "shop", "22.00")
        records.append(offer(sku, "C0", FRESH[n], age_ms=20 * HOUR_MS))
    seed_offers(tenant, "shop", records)
    job = recalculate(client, headers, client.application, marketplace="shop")
    recs = _prices(job)
    assert set(recs) == set(good + poor)
    worst_good = min(recs[sku]["confidence"] for sku in good)
    best_poor = max(recs[sku]["confidence"] for sku in poor)
    print(f"\nconfidence: five fresh offers >= {worst_good}, one offer 20 h old <= {best_poor}")
    assert worst_good - best_poor >= 0.3
    # the reasoning says what lowered it
    for sku in poor:
        reasoning = recs[sku]["reasoning"]
        assert "only 1 competitor offer" in reasoning and "20 h old" in reasoning
    # and min_confidence now separates them
    listed = client.get(
        f"/api/pricing/recommendations?min_confidence={round(best_poor + 0.01, 2)}",
        headers=headers,
    ).get_json()["data"]
    assert sorted(r["sku"] for r in listed) == good


def test_a_target_rule_that_falls_back_lowers_confidence_and_says_so(
    client, headers, tenant, market
):
    connect_http(tenant, market.url)
    # the competitor rule has no offers for LONE-1: the margin rule decides instead
    create_rule(client, headers, type="competitor_match", value=-0.25, priority=300)
    create_rule(client, headers, type="margin_target", value=40, value_type="percent")
    for sku in ("LONE-1", "BUSY-1"):
        make_product(client, headers, sku, cost="8.00")
        list_product(tenant, sku, "shop", "30.00")
    seed_offers(tenant, "shop", [offer("BUSY-1", f"C{i}", p) for i, p in enumerate(FRESH)])
    market.offers = {}  # the fetch for LONE-1 finds nothing
    recs = _prices(recalculate(client, headers, client.application, marketplace="shop"))
    assert recs["LONE-1"]["recommended_price"] == 13.33  # 8 / 0.6
    assert "1 rule passed over" in recs["LONE-1"]["reasoning"]
    assert recs["LONE-1"]["confidence"] <= recs["BUSY-1"]["confidence"] - 0.3


@pytest.mark.parametrize(
    ("setting", "written"),
    [
        # current 20.00; targets 19.99 (0.05 %), 19.91 (0.45 %), 19.90 (0.5 %), 19.00 (5 %)
        ("0.5%", {"S-050", "S-500"}),
        ("0.05", {"S-045", "S-050", "S-500"}),
        ("1%", {"S-500"}),
        ("0", {"S-005", "S-045", "S-050", "S-500"}),
    ],
)
def test_no_recommendation_is_below_the_minimum_change(
    client, headers, tenant, market, app, monkeypatch, setting, written
):
    monkeypatch.setitem(app.config, "PRICING_MIN_CHANGE", setting)
    connect_http(tenant, market.url)
    targets = {"S-005": "19.99", "S-045": "19.91", "S-050": "19.90", "S-500": "19.00"}
    create_rule(client, headers, type="competitor_match", value=0)
    for sku, target in targets.items():
        make_product(client, headers, sku, cost="5.00")
        list_product(tenant, sku, "shop", "20.00")
        seed_offers(tenant, "shop", [offer(sku, f"C{i}", target) for i in range(5)])
    job = recalculate(client, headers, app, marketplace="shop")
    assert job["result"]["processed_count"] == 4
    assert set(_prices(job)) == written
    assert job["result"]["updated_count"] == len(written)
    listed = client.get("/api/pricing/recommendations", headers=headers).get_json()["data"]
    assert {r["sku"] for r in listed} == written
    minimum = MinChange.parse(setting)
    for rec in listed:
        assert minimum.allows(D(str(rec["current_price"])), D(str(rec["recommended_price"])))


def test_min_change_parses_percent_and_amount():
    assert MinChange.parse("0.5%") == MinChange(percent=D("0.5"))
    assert MinChange.parse(" 0.05 ") == MinChange(amount=D("0.05"))
    half = MinChange.parse("0.5%")
    assert not half.allows(D("18.80"), D("18.79"))  # the 1-cent change of the issue
    assert half.allows(D("18.80"), D("18.70")) and half.allows(D("0.00"), D("0.01"))
    assert not MinChange.parse("0").allows(D("5.00"), D("5.00"))
    for bad in ("", "abc", "-1", "-0.5%", "%", "nan", "inf"):
        with pytest.raises(ValueError, match="PRICING_MIN_CHANGE"):
            MinChange.parse(bad)


def test_a_malformed_minimum_fails_the_job_naming_the_setting(
    client, headers, tenant, market, app, monkeypatch
):
    monkeypatch.setitem(app.config, "PRICING_MIN_CHANGE", "half a percent")
    connect_http(tenant, market.url)
    make_product(client, headers, "S-1", cost="5.00")
    list_product(tenant, "S-1", "shop", "20.00")
    response = client.post(
        "/api/pricing/recalculate", json={"marketplace": "shop"}, headers=headers
    )
    job_id = response.get_json()["data"]["job_id"]
    run_worker(app, concurrency=1)
    job = client.get(f"/api/ai-jobs/{job_id}", headers=headers).get_json()["data"]
    assert job["status"] == "failed" and job["error"]["code"] == "INVALID_CONFIGURATION"
    assert "COMMERCE_PRICING_MIN_CHANGE" in job["error"]["message"]
    assert job["error"]["retry_count"] == 0
