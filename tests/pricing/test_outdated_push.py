"""A resumed or retried price push is dropped when its listing took a newer price since
(issue 31: a ``pricing_recalculate`` with ``apply`` whose worker was killed resumed 77 s
later and pushed 8.93 over the 9.10 a newer price had set meanwhile; the marketplace kept
8.93 while the listing showed 9.10)."""

from decimal import Decimal

from commerce_api.claims import OperationClaim, claim
from commerce_api.marketplaces.product_sync import update_listing
from commerce_api.marketplaces.services import connection_for
from commerce_api.pricing.applying import PriceApplier
from commerce_api.pricing.models import Recommendation
from commerce_api.pricing.recommendations import APPLY
from commerce_api.products.models import Listing
from tests.support import pricing_support
from tests.support.jobs_support import run_worker
from tests.support.pricing_support import (
    connect_http,
    create_rule,
    list_product,
    make_product,
    offer,
    recalculate,
    recommendation_for,
    seed_offers,
)

market = pricing_support.market  # the fixture

SKU = "MUG-1"
NEWER = Decimal("9.10")


def _priced(client, headers, tenant, market):
    connect_http(tenant, market.url)
    make_product(client, headers, SKU, cost="5.00")
    list_product(tenant, SKU, "shop", "10.00")
    seed_offers(tenant, "shop", [offer(SKU, "A", "9.00")])
    create_rule(client, headers, type="competitor_match", value=-1)


def _listing():
    return Listing.get(Listing.marketplace == "shop")


def _pushes_of(market, key):
    return [p for p in market.pushes() if p["headers"].get("Idempotency-Key") == key]


def test_a_resumed_push_is_dropped_after_a_newer_price(app, client, headers, tenant, market):
    _priced(client, headers, tenant, market)
    job = recalculate(client, headers, app, marketplace="shop")  # no apply: R is pending
    rec = recommendation_for(job, SKU)
    assert Decimal(str(rec["recommended_price"])) != NEWER
    with app.app_context():
        # a worker of an apply job had recorded its intent for R, then was killed
        claim(tenant.id, rec["id"], APPLY, token=f"job:{job['id']}")
        # meanwhile a newer price: set on the listing and pushed
        update_listing(tenant.id, SKU, "shop", {"price": NEWER})
    run_worker(app, concurrency=1)
    assert market.accepted[SKU] == float(NEWER)
    with app.app_context():
        connection = connection_for(tenant.id, "shop")
        retried = PriceApplier(tenant.id, "shop", connection, job["id"], f"job:{job['id']}")
        retried.resume()
    assert _pushes_of(market, rec["id"]) == []  # never sent again
    assert retried.resumed_count == 0
    assert Recommendation.get_by_id(rec["id"]).status == "dismissed"
    assert OperationClaim.select().count() == 0
    # the killed try may have landed: the listing goes out again with its current price
    assert _listing().sync_status == "pending"
    run_worker(app, concurrency=1)
    assert market.accepted[SKU] == float(NEWER)
    assert _listing().price == NEWER and _listing().sync_status == "in_sync"


def test_a_push_that_meets_a_newer_price_does_not_overwrite_it(
    app, client, headers, tenant, market
):
    _priced(client, headers, tenant, market)
    changed = []

    def newer_price_meanwhile(record):
        # while the job's price push is on its way, the listing takes a newer price
        if record["method"] == "PUT" and not changed:
            changed.append(record)
            update_listing(tenant.id, SKU, "shop", {"price": NEWER})

    market.before_answer = newer_price_meanwhile
    job = recalculate(client, headers, app, marketplace="shop", apply=True)
    market.before_answer = None
    item = recommendation_for(job, SKU)
    assert item["applied"] is False
    assert item["error"]["code"] == "RECOMMENDATION_OUTDATED"
    assert Recommendation.get_by_id(item["id"]).status == "dismissed"
    assert _listing().price == NEWER  # the listing keeps the newer price
    assert OperationClaim.select().count() == 0
    run_worker(app, concurrency=1)  # and pushes it over the older one
    assert market.accepted[SKU] == float(NEWER)
    assert _listing().sync_status == "in_sync"


def test_a_push_with_no_newer_price_is_applied(app, client, headers, tenant, market):
    _priced(client, headers, tenant, market)
    job = recalculate(client, headers, app, marketplace="shop", apply=True)
    item = recommendation_for(job, SKU)
    assert item["applied"] is True, item
    assert market.accepted[SKU] == item["recommended_price"]
    assert _listing().price == Decimal(str(item["recommended_price"]))


def test_a_retried_try_after_a_newer_price_is_not_sent(app, client, headers, tenant, market):
    _priced(client, headers, tenant, market)
    market.retry_after = "0.2"
    market.busy_times["products"] = 1  # the first try is answered 429: it is tried again
    seen = []

    def newer_price_meanwhile(record):
        if record["method"] == "PUT" and not seen:
            seen.append(record)
            update_listing(tenant.id, SKU, "shop", {"price": NEWER})

    market.before_answer = newer_price_meanwhile
    job = recalculate(client, headers, app, marketplace="shop", apply=True)
    market.before_answer = None
    item = recommendation_for(job, SKU)
    assert item["error"]["code"] == "RECOMMENDATION_OUTDATED"
    assert len(_pushes_of(market, item["id"])) == 1  # the retry was never sent
    assert _listing().price == NEWER
    run_worker(app, concurrency=1)
    assert market.accepted[SKU] == float(NEWER)
