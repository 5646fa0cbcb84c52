"""The ``amazon`` connector against the SP-API contract fake on 127.0.0.1 (DESIGN 13).

Through HTTP with a running worker: stock, price and archive changes reach Amazon
(``patchListingsItem``), many pending listings go as one ``JSON_LISTINGS_FEED`` whose
processing report decides each listing, orders are pulled with their items, a shipment is
confirmed once under racing requests, FBA stock lands in the read-only warehouse and a
competitor scan stores offers. Every test asserts the fake refused nothing.
"""

import contextlib
import json
import re
import threading
import time

import pytest

from commerce_api.inventory.models import Stock, Warehouse
from commerce_api.marketplaces import amazon
from commerce_api.marketplaces.models import MarketplaceConnection, SyncAttempt
from commerce_api.products.models import Listing, Product
from tests.support.amazon_fake import CONTRACTS, MODELS, AmazonFake
from tests.support.orders_support import connect, make_own_warehouse, make_products, stock_up
from tests.support.products_support import price_listing
from tests.support.servers import start_command, stop_process
from tests.support.waiting import wait_for

pytestmark = pytest.mark.slow

MARKETPLACE = "amazon_us"
WORKER = {
    "LOG_LEVEL": "WARNING",
    "WORKER_POLL_INTERVAL": 0.05,
    "MARKETPLACE_PUSH_POLL_INTERVAL": 0.05,
    "ORDER_PULL_INTERVAL_SECONDS": 3600,
}


def listing_of(client, headers, sku):
    response = client.get(f"/api/products/{sku}", headers=headers)
    assert response.status_code == 200
    (listing,) = [
        x for x in response.get_json()["data"]["listings"] if x["marketplace"] == MARKETPLACE
    ]
    return listing


def assert_contract_kept(fake):
    assert fake.refused == [], fake.refused
    assert fake.answer_problems == [], fake.answer_problems


@contextlib.contextmanager
def running_worker(database_url, **config):
    worker = start_command(["worker"], database_url, **{**WORKER, **config})
    try:
        yield worker
    finally:
        stop_process(worker)


@pytest.fixture
def fake():
    with AmazonFake(feed_seconds=0.3) as running:
        yield running
        assert_contract_kept(running)


def connect_amazon(tenant, fake):
    return connect(
        tenant,
        MARKETPLACE,
        "amazon",
        settings=fake.settings(),
        credentials=fake.credentials(),
    )


# the usage plans are the models' ---------------------------------------------------------


def test_the_usage_plans_are_those_of_the_published_models():
    found = {}
    for name in MODELS:
        model = json.loads((CONTRACTS / "models" / name).read_text())
        for item in model["paths"].values():
            for spec in item.values():
                if isinstance(spec, dict) and "operationId" in spec:
                    plan = re.search(r"\|\s*([\d.]+)\s*\|\s*(\d+)\s*\|", spec["description"])
                    if plan:
                        found[spec["operationId"]] = (float(plan.group(1)), int(plan.group(2)))
    for operation, plan in amazon.USAGE_PLANS.items():
        assert found[operation] == plan, operation


# connecting --------------------------------------------------------------------------------


def test_connect_checks_settings_and_credentials(client, headers, fake):
    good = {
        "marketplace": MARKETPLACE,
        "connector": "amazon",
        "settings": {"region": "na", "marketplace_id": "ATVPDKIKX0DER", "seller_id": "A2SELLER01"},
        "credentials": fake.credentials(),
    }
    bad = [
        {**good, "settings": {**good["settings"], "region": "mars"}},
        {**good, "settings": {**good["settings"], "marketplace_id": "amazon.com"}},
        {**good, "settings": {**good["settings"], "seller_id": ""}},
        {**good, "settings": {**good["settings"], "endpoint": "http://127.0.0.1:9"}},
        {**good, "settings": {**good["settings"], "colour": "blue"}},
        {key: value for key, value in good.items() if key != "credentials"},
        {**good, "credentials": {"lwa_client_id": "x"}},
        {**good, "credentials": {**fake.credentials(), "extra": "x"}},
        {**good, "credentials": "secret"},
    ]
    for body in bad:
        response = client.post("/api/marketplaces", json=body, headers=headers)
        assert response.status_code in (400, 422), (body, response.get_json())
        assert response.get_json()["error"]["code"] == "VALIDATION_ERROR"
    assert MarketplaceConnection.select().count() == 0
    response = client.post("/api/marketplaces", json=good, headers=headers)
    assert response.status_code == 201, response.get_json()
    data = response.get_json()["data"]
    assert data["has_credentials"] is True and "credentials" not in data
    assert data["settings"] == good["settings"]
    from commerce_api.db import db

    (stored,) = db.execute_sql("SELECT credentials FROM marketplace_connection").fetchone()
    assert stored.startswith("fernet:") and "fake-refresh-token" not in stored


def test_check_says_plainly_when_the_token_is_refused(client, headers, tenant, fake):
    connection = connect_amazon(tenant, fake)
    response = client.get(f"/api/marketplaces/{connection.id}/check", headers=headers)
    assert response.status_code == 200
    assert response.get_json()["data"]["ok"] is True
    amazon.TOKENS.clear()
    fake.token_fails = True
    requests_before = fake.token_requests
    response = client.get(f"/api/marketplaces/{connection.id}/check", headers=headers)
    result = response.get_json()["data"]
    assert result["ok"] is False and result["code"] == "AUTH"
    assert "refused the refresh token" in result["detail"]
    shown = client.get(f"/api/marketplaces/{connection.id}", headers=headers).get_json()["data"]
    assert shown["status_reason"].startswith("AUTH:")
    # a failed refresh is remembered: no stampede on the token endpoint
    for _ in range(5):
        client.get(f"/api/marketplaces/{connection.id}/check", headers=headers)
    assert fake.token_requests == requests_before + 1
    assert_contract_kept(fake)


def test_one_token_exchange_serves_many_threads(app, tenant, fake):
    connection = connect_amazon(tenant, fake)
    connector = amazon.AmazonConnector(connection, connection.settings)
    tokens = []

    def take():
        with app.app_context():
            tokens.append(connector.access_token())

    threads = [threading.Thread(target=take) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(10)
    assert len(tokens) == 8 and len(set(tokens)) == 1
    assert fake.token_requests == 1


# listings kept in sync ---------------------------------------------------------------------


def test_stock_price_and_archive_reach_amazon(client, headers, tenant, database_url, fake):
    make_products(client, headers, "MUG-1", "TOWEL-1")
    fake.add_listing("MUG-1", asin="B0MUG00001")
    fake.add_listing("TOWEL-1", asin="B0TOWEL001")
    warehouse = make_own_warehouse(tenant)
    stock_up(tenant, warehouse, {"MUG-1": 10, "TOWEL-1": 5})
    connect_amazon(tenant, fake)
    for sku in ("MUG-1", "TOWEL-1"):  # nothing is pushed without a price someone chose
        price_listing(client, headers, sku, MARKETPLACE, 9.99)
    with running_worker(database_url):
        for sku in ("MUG-1", "TOWEL-1"):
            response = client.post(f"/api/products/{sku}/sync", headers=headers)
            assert response.status_code == 202, response.get_json()
        assert wait_for(
            lambda: Listing.select().where(Listing.external_id.is_null(False)).count() == 2
        )
        assert listing_of(client, headers, "MUG-1")["external_id"] == "B0MUG00001"
        assert fake.listings["MUG-1"]["quantity"] == 10

        # a stock change
        response = client.put(
            "/api/inventory/MUG-1",
            json={"warehouse_id": warehouse, "quantity": 42, "reason": "supplier_receipt"},
            headers=headers,
        )
        assert response.status_code == 200
        assert wait_for(lambda: fake.listings["MUG-1"]["quantity"] == 42, 20)
        assert wait_for(lambda: listing_of(client, headers, "MUG-1")["sync_status"] == "in_sync")
        assert listing_of(client, headers, "MUG-1")["quantity"] == 42

        # a price change
        response = client.patch(
            f"/api/products/TOWEL-1/listings/{MARKETPLACE}", json={"price": 12.5}, headers=headers
        )
        assert response.status_code == 200, response.get_json()
        assert wait_for(lambda: fake.listings["TOWEL-1"]["price"] == "12.5", 20)
        assert wait_for(lambda: listing_of(client, headers, "TOWEL-1")["sync_status"] == "in_sync")

        # an archive takes the listing off sale
        response = client.delete("/api/products/MUG-1", headers=headers)
        assert response.status_code in (200, 204), response.get_json()
        assert wait_for(lambda: fake.listings["MUG-1"]["quantity"] == 0, 20)
        assert wait_for(lambda: listing_of(client, headers, "MUG-1")["sync_status"] == "in_sync")
    assert fake.count("patchListingsItem") >= 3
    assert_contract_kept(fake)


def _listed(tenant, fake, count, prefix="FEED"):
    """``count`` products listed on Amazon (and in the fake), in sync, own stock 0."""
    from commerce_api.db import db
    from commerce_api.ids import new_id

    now = int(time.time() * 1000)
    products, listings = [], []
    for n in range(count):
        sku = f"{prefix}-{n:04d}"
        fake.add_listing(sku)
        product_id = new_id("product")
        products.append(
            {"id": product_id, "tenant": tenant.id, "sku": sku, "title": sku, "status": "active",
             "images": [], "created_at": now, "updated_at": now}
        )  # fmt: skip
        listings.append(
            {"id": new_id("listing"), "tenant": tenant.id, "product": product_id,
             "marketplace": MARKETPLACE, "external_id": f"ASIN{n}", "price": "19.99",
             "currency": "USD", "quantity": 0, "created_at": now, "updated_at": now}
        )  # fmt: skip
    with db.atomic():
        Product.insert_many(products).execute()
        Listing.insert_many(listings).execute()
    return [p["sku"] for p in products]


def test_a_feed_report_marks_exactly_the_invalid_messages(
    client, headers, tenant, database_url, fake
):
    from commerce_api.db import write_transaction
    from commerce_api.products.desired_state import mark_listings_pending

    skus = _listed(tenant, fake, 100)
    bad = {skus[7]: ("90220", "'[batteries_required]' is required."), skus[50]: ("99022", "x"),
           skus[99]: ("8541", "The SKU is suppressed.")}  # fmt: skip
    fake.invalid_skus.update(bad)
    fake.extra_report_sku = "NEVER-SENT-1"
    connect_amazon(tenant, fake)
    with write_transaction():
        mark_listings_pending(listing_ids=[row.id for row in Listing.select(Listing.id)])
    with running_worker(database_url):
        assert wait_for(
            lambda: (
                Listing.select().where(Listing.sync_status.in_(("pending", "submitted"))).count()
                == 0
            ),
            60,
        )
    assert fake.count("createFeed") == 1 and fake.count("patchListingsItem") == 0
    errors = {
        row.product.sku: row.last_sync_error
        for row in Listing.select().join(Product).where(Listing.sync_status == "error")
    }
    assert set(errors) == set(bad)
    for sku, (code, _) in bad.items():
        assert errors[sku].startswith(code + ":")
    assert Listing.select().where(Listing.sync_status == "in_sync").count() == 97
    assert Listing.select().where(Listing.submission.is_null(False)).count() == 0
    # the report's line about a SKU never sent is a visible error, not a silent drop
    note = SyncAttempt.get(SyncAttempt.operation == "submission_report")
    assert note.sku == "NEVER-SENT-1" and note.status == "rejected"
    assert_contract_kept(fake)


def test_a_listing_is_submitted_until_amazon_shows_the_value(app, tenant, fake):
    """Never in_sync for a value Amazon has not confirmed."""
    from commerce_api.db import write_transaction
    from commerce_api.marketplaces import batches, listing_push
    from commerce_api.products.desired_state import mark_listings_pending

    (sku,) = _listed(tenant, fake, 1, prefix="SLOW")
    fake.listings[sku]["quantity"] = 5  # Amazon shows 5; we hold none
    connection = connect_amazon(tenant, fake)
    with write_transaction():
        mark_listings_pending(listing_ids=[row.id for row in Listing.select(Listing.id)])
    now = int(time.time() * 1000)
    claimed = listing_push.claim(tenant.id, MARKETPLACE, 5, 60_000, "t1", now)
    # Amazon takes the patch but has not applied it yet
    real_apply = fake._apply
    fake._apply = lambda *args: None
    outcome = batches.push_batch(connection, claimed, slot_wait=None)
    with write_transaction():
        batches.record([outcome], 0)
    listing = Listing.get()
    assert listing.sync_status == "submitted" and listing.submission["kind"] == "patch"
    checks = batches.claim_checks(tenant.id, MARKETPLACE, 5, 60_000, "t2", now + 10_000)
    assert [c.id for c in checks] == [listing.id]
    checked = batches.check_batch(connection, checks, slot_wait=None)
    with write_transaction():
        batches.record([checked], 0)
    assert Listing.get().sync_status == "submitted"  # not shown by Amazon yet
    fake._apply = real_apply
    fake._apply(sku, {"fulfillment_availability": [{"quantity": 0}]})
    checks = batches.claim_checks(tenant.id, MARKETPLACE, 5, 60_000, "t3", now + 600_000)
    checked = batches.check_batch(connection, checks, slot_wait=None)
    with write_transaction():
        batches.record([checked], 0)
    listing = Listing.get()
    assert listing.sync_status == "in_sync" and listing.submission is None
    assert_contract_kept(fake)


# rate budgets ------------------------------------------------------------------------------


@pytest.mark.parametrize("budgets_on", [True, False])
def test_two_workers_with_a_shared_budget_stay_within_the_usage_plan(
    tenant, database_url, fake, budgets_on
):
    """Two worker processes push a feed per change of 16 listings, a change every 0.5 s,
    against createFeed's plan (burst 15, then one every 2 minutes).

    16, not 6: the two workers may each claim part of a change's listings (one claims those
    due while the other's feed is recorded), and a part of at most ``PATCH_AT_MOST`` goes as
    patches, which never draw on createFeed's plan. 16 listings make a feed even when split
    in two or three."""
    from commerce_api.db import write_transaction
    from commerce_api.products.desired_state import mark_listings_pending

    _listed(tenant, fake, 16, prefix="RATE")
    connect_amazon(tenant, fake)
    config = {
        "MARKETPLACE_RATE_BUDGETS": int(budgets_on),
        # past the budget a push waits 2 s at most, then is due again later (never failed)
        "MARKETPLACE_BUDGET_WAIT_SECONDS": 2,
    }
    throttled_by_budget = Listing.select().where(Listing.last_sync_error.contains("THROTTLED"))

    held = []  # feeds sent, each time the budget was seen holding pushes back

    def plan_reached():
        # on: the budget held a push back past its wait (a THROTTLED error, which the next
        # feed check may clear again: sampled every 0.5 s, and the feeds sent then are kept);
        # off: Amazon answered 429
        if not budgets_on:
            return fake.throttled > 0
        if throttled_by_budget.exists():
            held.append(fake.count("createFeed"))
        return len(held) >= 3

    with running_worker(database_url, **config), running_worker(database_url, **config):
        for _ in range(120):  # a change every 0.5 s until the plan is reached (60 s at most)
            with write_transaction():
                mark_listings_pending(listing_ids=[row.id for row in Listing.select(Listing.id)])
            time.sleep(0.5)
            if plan_reached():
                break
    assert plan_reached()
    if budgets_on:
        assert fake.throttled == 0
        assert fake.count("createFeed") <= 15
    assert Listing.select().where(Listing.sync_status == "error").count() == 0
    assert_contract_kept(fake)


# orders, shipments, FBA stock, competitor offers -------------------------------------------


def test_orders_are_pulled_with_their_items(client, headers, tenant, fake):
    make_products(client, headers, "MUG-1", "TOWEL-1")
    connection = connect_amazon(tenant, fake)
    fake.add_order("111-0000001-0000001", [("MUG-1", 2, "9.99"), ("TOWEL-1", 1, "5.05")])
    fake.add_order("111-0000001-0000002", [("TOWEL-1", 3, "5.05")], channel="AFN", status="Shipped")
    fake.add_order("111-0000001-0000003", [("GHOST-1", 1, "1.00")])
    from commerce_api.orders.pulls import pull_connection

    summary = pull_connection(MarketplaceConnection.get_by_id(connection.id))
    assert summary["status"] in ("ok", "partial"), summary
    response = client.get("/api/orders", headers=headers)
    orders = {o["external_order_id"]: o for o in response.get_json()["data"]}
    first = orders["111-0000001-0000001"]
    assert first["fulfillment_method"] == "FBM" and first["currency"] == "USD"
    assert first["total_amount"] == 25.03
    assert orders["111-0000001-0000002"]["fulfillment_method"] == "FBA"
    detail = client.get(f"/api/orders/{first['id']}", headers=headers).get_json()["data"]
    lines = {line["sku"]: line for line in detail["line_items"]}
    assert lines["MUG-1"]["quantity"] == 2 and lines["MUG-1"]["line_total"] == 19.98
    # an unknown SKU is never a silent drop: the order is imported and the sync history
    # says which SKUs are unknown
    ghost = orders["111-0000001-0000003"]
    history = client.get(
        "/api/marketplaces/sync-history", query_string={"order_id": ghost["id"]}, headers=headers
    ).get_json()["data"]
    (note,) = [h for h in history if h["operation"] == "order_import"]
    assert note["error"]["code"] == "UNKNOWN_SKU" and "GHOST-1" in note["error"]["message"]
    assert_contract_kept(fake)


def test_a_shipment_is_confirmed_once_under_racing_requests(app, client, headers, tenant, fake):
    make_products(client, headers, "MUG-1")
    warehouse = make_own_warehouse(tenant)
    stock_up(tenant, warehouse, {"MUG-1": 10})
    connection = connect_amazon(tenant, fake)
    fake.add_order("112-0000001-0000001", [("MUG-1", 1, "9.99")])
    from commerce_api.orders.pulls import pull_connection

    pull_connection(MarketplaceConnection.get_by_id(connection.id), inventory=False)
    (order,) = client.get("/api/orders", headers=headers).get_json()["data"]
    body = {"carrier": "UPS", "tracking_number": "1Z999AA10123456784"}
    statuses = []

    def ship():
        with app.test_client() as other:
            response = other.post(f"/api/orders/{order['id']}/shipment", json=body, headers=headers)
            statuses.append(response.status_code)

    threads = [threading.Thread(target=ship) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    assert len(fake.shipments) == 1, statuses
    assert sum(1 for s in statuses if s in (200, 201)) >= 1
    assert all(s in (200, 201, 409) for s in statuses), statuses
    assert fake.count("confirmShipment") == 1
    assert_contract_kept(fake)


def test_fba_stock_lands_in_the_read_only_warehouse(client, headers, tenant, fake):
    from commerce_api.inventory.services import create_warehouse
    from commerce_api.orders.pulls import sync_marketplace_stock

    make_products(client, headers, "MUG-1", "TOWEL-1")
    create_warehouse(tenant.id, {"name": "FBA US", "type": "FBA", "marketplace": MARKETPLACE})
    connection = connect_amazon(tenant, fake)
    fake.fba.update({"MUG-1": 7, "TOWEL-1": 0, "UNKNOWN-9": 3})
    assert sync_marketplace_stock(MarketplaceConnection.get_by_id(connection.id)) >= 1
    fba = Warehouse.get(Warehouse.type == "FBA")
    stock = {row.sku: row.on_hand for row in Stock.select().where(Stock.warehouse == fba.id)}
    assert stock.get("MUG-1") == 7
    assert_contract_kept(fake)


def test_a_competitor_scan_stores_offers(app, tenant, fake):
    connection = connect_amazon(tenant, fake)
    fake.add_offer("MUG-1", "SELLER-A", "11.50", shipping="1.00", buy_box=True)
    fake.add_offer("MUG-1", "SELLER-B", "12.00")
    from commerce_api.marketplaces.gateway import call

    offers = call(
        connection, "fetch_competitor_prices", lambda c: c.fetch_competitor_prices(["MUG-1"])
    ).result
    assert {o["competitor"] for o in offers} == {"SELLER-A", "SELLER-B"}
    assert_contract_kept(fake)


def test_cancellation_is_refused_plainly(app, tenant, fake):
    from commerce_api.marketplaces.base import MarketplaceRejection
    from commerce_api.marketplaces.gateway import call

    connection = connect_amazon(tenant, fake)
    with pytest.raises(MarketplaceRejection) as caught:
        call(connection, "request_cancellation", lambda c: c.request_cancellation({}, "other"))
    assert caught.value.code == "CANCELLATION_NOT_SUPPORTED"


def test_orders_fba_stock_shipments_and_offers_through_a_running_worker(
    app, client, headers, tenant, database_url, fake
):
    """The order pull, the FBA stock and a competitor scan run in the worker; the shipment
    is confirmed through HTTP, once under 4 racing requests."""
    from commerce_api.inventory.services import create_warehouse

    make_products(client, headers, "MUG-1", "TOWEL-1")
    fake.add_listing("MUG-1", asin="B0MUG00001")
    fake.add_listing("TOWEL-1", asin="B0TOWEL001")
    warehouse = make_own_warehouse(tenant)
    stock_up(tenant, warehouse, {"MUG-1": 10, "TOWEL-1": 5})
    create_warehouse(tenant.id, {"name": "FBA US", "type": "FBA", "marketplace": MARKETPLACE})
    connect_amazon(tenant, fake)
    fake.add_order("113-0000001-0000001", [("MUG-1", 2, "9.99"), ("TOWEL-1", 1, "5.05")])
    fake.fba.update({"TOWEL-1": 6})
    fake.add_offer("MUG-1", "SELLER-A", "11.50", shipping="1.00", buy_box=True)
    with running_worker(database_url, ORDER_PULL_INTERVAL_SECONDS=1):
        for sku in ("MUG-1", "TOWEL-1"):
            assert client.post(f"/api/products/{sku}/sync", headers=headers).status_code == 202

        def pulled():
            return client.get("/api/orders", headers=headers).get_json()["data"]

        assert wait_for(lambda: len(pulled()) == 1, 30)
        (order,) = pulled()
        assert order["external_order_id"] == "113-0000001-0000001"
        detail = client.get(f"/api/orders/{order['id']}", headers=headers).get_json()["data"]
        assert {(line["sku"], line["quantity"]) for line in detail["line_items"]} == {
            ("MUG-1", 2),
            ("TOWEL-1", 1),
        }
        # FBA stock in the read-only warehouse
        fba = Warehouse.get(Warehouse.type == "FBA")
        assert wait_for(
            lambda: (
                Stock.select().where((Stock.warehouse == fba.id) & (Stock.on_hand == 6)).exists()
            ),
            30,
        )
        # a shipment, 4 requests racing
        statuses = []

        def ship():
            with app.test_client() as other:
                response = other.post(
                    f"/api/orders/{order['id']}/shipment",
                    json={"carrier": "UPS", "tracking_number": "1Z999AA10123456784"},
                    headers=headers,
                )
                statuses.append(response.status_code)

        threads = [threading.Thread(target=ship) for _ in range(4)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(30)
        assert len(fake.shipments) == 1 and fake.count("confirmShipment") == 1, statuses
        assert statuses.count(200) + statuses.count(201) == 1
        # a competitor scan job
        response = client.post(
            "/api/ai-jobs",
            json={"type": "competitor_scan", "params": {"marketplace": MARKETPLACE}},
            headers=headers,
        )
        assert response.status_code == 201, response.get_json()
        job_id = response.get_json()["data"]["id"]

        def scanned():
            job = client.get(f"/api/ai-jobs/{job_id}", headers=headers).get_json()["data"]
            return job["status"] == "completed"

        assert wait_for(scanned, 30)
        offers = client.get("/api/pricing/competitors", headers=headers).get_json()["data"]
        assert any(o["competitor"] == "SELLER-A" and o["sku"] == "MUG-1" for o in offers), offers
    assert_contract_kept(fake)


def test_an_expired_token_is_exchanged_again_once(app, tenant, fake):
    connection = connect_amazon(tenant, fake)
    connector = amazon.AmazonConnector(connection, connection.settings)
    assert connector.check()["ok"] is True
    fake.expire_tokens()
    assert connector.check()["ok"] is True
    assert fake.token_requests == 2
    assert_contract_kept(fake)


def test_a_429_waits_and_a_5xx_leaves_the_listing_to_try_again(app, tenant, fake):
    from commerce_api.db import write_transaction
    from commerce_api.marketplaces import batches, listing_push
    from commerce_api.products.desired_state import mark_listings_pending

    (sku,) = _listed(tenant, fake, 1, prefix="FAULT")
    fake.listings[sku]["quantity"] = 3
    connection = connect_amazon(tenant, fake)
    with write_transaction():
        mark_listings_pending(listing_ids=[row.id for row in Listing.select(Listing.id)])
    now = int(time.time() * 1000)
    fake.fail_next(1, 503)
    claimed = listing_push.claim(tenant.id, MARKETPLACE, 5, 60_000, "t1", now)
    outcome = batches.push_batch(connection, claimed, slot_wait=None)
    assert [o.status for o in outcome.outcomes] == ["unavailable"]
    with write_transaction():
        batches.record([outcome], 0)
    listing = Listing.get()
    assert listing.sync_status == "pending" and listing.last_sync_error.startswith("InternalF")
    # a 429 beyond the plan: the call waits and goes again, the push is not failed
    fake.throttle_next(1)
    claimed = listing_push.claim(tenant.id, MARKETPLACE, 5, 60_000, "t2", now + 600_000)
    outcome = batches.push_batch(connection, claimed, slot_wait=None)
    assert [o.status for o in outcome.outcomes] == ["submitted"]
    assert fake.listings[sku]["quantity"] == 0
    assert_contract_kept(fake)


def test_new_credentials_through_patch_clear_the_status_reason(client, headers, tenant, fake):
    connection = connect_amazon(tenant, fake)
    amazon.TOKENS.clear()
    fake.token_fails = True
    path = f"/api/marketplaces/{connection.id}"
    assert client.get(path + "/check", headers=headers).get_json()["data"]["ok"] is False
    assert client.get(path, headers=headers).get_json()["data"]["status_reason"].startswith("AUTH")
    response = client.patch(path, json={"credentials": {"lwa_client_id": "x"}}, headers=headers)
    assert response.status_code == 422
    fake.token_fails = False
    response = client.patch(path, json={"credentials": fake.credentials()}, headers=headers)
    assert response.status_code == 200, response.get_json()
    assert response.get_json()["data"]["status_reason"] is None
    assert client.get(path + "/check", headers=headers).get_json()["data"]["ok"] is True
    assert_contract_kept(fake)
