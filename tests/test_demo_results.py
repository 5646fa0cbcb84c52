"""The demo tenant as a new user meets it after ``make run`` (``commerce-api init-db`` and
``commerce-api demo``) and one recalculation: recommendations whose confidence separates
good data from poor, orders with real amounts, returns spread over weeks with a spike that
``return_classify`` finds, and listing proposals fed by the return and review signals."""

import json
from decimal import Decimal as D

import marshmallow as ma
import pytest

from commerce_api.analysis.demo import BATCH_SKU
from commerce_api.cli import cli
from commerce_api.demo import DEMO_PRODUCTS
from commerce_api.jobs import registry
from commerce_api.pricing.engine import MinChange
from tests.support.jobs_support import dispatch, jobs_app, run_worker  # noqa: F401

__all__ = ["jobs_app"]
CATEGORIES = {category for _, _, category, _ in DEMO_PRODUCTS}


@pytest.fixture
def demo(jobs_app, runner, tmp_path, monkeypatch):  # noqa: F811
    monkeypatch.setattr(jobs_app, "instance_path", str(tmp_path))
    result = runner.invoke(cli, ["demo", "--json"])
    assert result.exit_code == 0, result.output
    saved = json.loads(result.output)
    headers = {"Authorization": f"Bearer {saved['api_key']}", "X-Tenant-ID": saved["tenant_id"]}
    return jobs_app.test_client(), headers


def _run(client, app, headers, job_type, params):
    """Run one job; its result must load through the schema the OpenAPI document shows."""
    job = dispatch(client, headers, job_type, params)
    run_worker(app)
    body = client.get(f"/api/ai-jobs/{job['id']}", headers=headers).get_json()["data"]
    assert body["status"] == "completed", body
    documented = registry.get(job_type).result
    if documented is not None:
        documented().load(body["result"], unknown=ma.RAISE)
    return body["result"]


def _all(client, headers, path, query=""):
    rows, cursor = [], None
    while True:
        url = f"{path}?limit=100&{query}" + (f"&cursor={cursor}" if cursor else "")
        body = client.get(url, headers=headers).get_json()
        rows += body["data"]
        cursor = body["meta"].get("nextCursor")
        if not cursor:
            return rows


def test_one_recalculation_gives_recommendations_a_merchant_can_sort(demo, jobs_app):  # noqa: F811
    client, headers = demo
    answer = client.post(
        "/api/pricing/recalculate", headers=headers, json={"marketplace": "amazon"}
    )
    assert answer.status_code == 200, answer.get_json()
    run_worker(jobs_app)
    recs = _all(client, headers, "/api/pricing/recommendations")
    confidences = sorted(r["confidence"] for r in recs)
    print(f"\ndemo recommendations: {len(recs)}, confidence {confidences}")
    assert len(recs) >= 5
    assert not all(c > 0.95 for c in confidences)
    assert confidences[-1] - confidences[0] >= 0.05 or confidences[-1] < 0.95
    minimum = MinChange.parse("0.5%")
    for rec in recs:
        current, recommended = (D(str(rec[k])) for k in ("current_price", "recommended_price"))
        assert minimum.allows(current, recommended), rec
        assert "Confidence" in rec["reasoning"]
    strict = client.get("/api/pricing/recommendations?min_confidence=0.99", headers=headers)
    assert len(strict.get_json()["data"]) < len(recs)


def test_demo_orders_carry_real_amounts(demo):
    client, headers = demo
    orders = _all(client, headers, "/api/orders")
    assert len(orders) >= 240
    for order in orders:
        lines = order["line_items"]
        assert all(line["unit_price"] > 0 for line in lines), order
        assert all(
            abs(line["line_total"] - line["unit_price"] * line["quantity"]) < 0.005
            for line in lines
        )
        assert abs(order["total_amount"] - sum(line["line_total"] for line in lines)) < 0.005


def test_demo_returns_are_spread_out_with_a_spike_return_classify_finds(demo, jobs_app):  # noqa: F811
    client, headers = demo
    returned = _all(client, headers, "/api/orders", "has_returns=true")
    dates = set()
    for order in returned:
        body = client.get(f"/api/orders/{order['id']}", headers=headers).get_json()["data"]
        dates |= {item["created_at"][:10] for item in body["returns"]}
    assert len(dates) >= 20  # returns on many days, not one
    result = _run(client, jobs_app, headers, "return_classify", {})
    kinds = {(a["sku"], a["kind"]) for a in result["anomalies"]}
    print(f"\ndemo anomalies: {sorted(kinds)}; return days: {len(dates)}")
    assert ("MUG-ENAMEL-BLU", "high_return_rate") in kinds
    assert (BATCH_SKU, "return_spike") in kinds
    assert {sku for sku, _ in kinds} == {"MUG-ENAMEL-BLU", BATCH_SKU}  # no false alarm


def test_demo_listings_get_issues_from_returns_and_reviews(demo, jobs_app):  # noqa: F811
    client, headers = demo
    _run(client, jobs_app, headers, "review_sentiment", {})  # keeps the reviews
    skus = [sku for sku, *_ in DEMO_PRODUCTS]
    result = _run(
        client, jobs_app, headers, "listing_optimize", {"skus": skus, "marketplace": "amazon"}
    )
    proposals = {p["sku"]: p for p in result["proposals"]}
    codes = {sku: {i["code"] for i in p["issues"]} for sku, p in proposals.items()}
    assert "RETURNS_HIGH_DEFECT" in codes["MUG-ENAMEL-BLU"]
    assert "RETURNS_HIGH_DEFECT" not in codes["MUG-ENAMEL-WHT"]
    assert "REVIEWS_NEGATIVE" in codes["BLANKET-WOOL"]
    keywords = {
        sku: [k["term"] for s in p["suggestions"] if s["kind"] == "keywords" for k in s["keywords"]]
        for sku, p in proposals.items()
    }
    assert not {"candle", "soy"} & set(keywords["BLANKET-WOOL"])
    for sku, proposal in proposals.items():
        title = proposal["proposed_title"]
        if title is not None:  # never the category word tacked on
            assert title.split()[-1].lower().strip(",.") not in CATEGORIES, (sku, title)


def test_the_document_shows_each_analysis_result(client):
    spec = client.get("/api/openapi.json").get_json()
    schemas = spec["components"]["schemas"]
    for name in ("review_sentiment", "return_classify", "listing_optimize", "llm_visibility_score"):
        assert "JobResult_" + name in schemas
        # a job as read is one schema per type, with that type's result
        variant = schemas["Job"]["discriminator"]["mapping"][name].rsplit("/", 1)[1]
        assert schemas[variant]["properties"]["result"] == {
            "$ref": f"#/components/schemas/JobResult_{name}"
        }
    reviews = schemas[
        schemas["JobResult_review_sentiment"]["properties"]["reviews"]["items"]["$ref"].rsplit(
            "/", 1
        )[1]
    ]["properties"]
    assert {"text", "rating", "rating_mismatch"} <= set(reviews)
    assistants = schemas["JobResult_llm_visibility_score"]["properties"]["by_assistant"]
    assert assistants["type"] == "array"
