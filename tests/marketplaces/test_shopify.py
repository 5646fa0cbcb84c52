"""The ``shopify`` connector against the Admin GraphQL contract fake on 127.0.0.1 (DESIGN 13).

Through HTTP with a running worker: stock, price and archive reach Shopify at the mapped
location, a quantity changed in Shopify meanwhile is noticed (compare quantity) and ends
as we want it, a SKU two variants share is refused for that listing only, orders are
pulled with their lines, a shipment creates one fulfillment under racing requests, a
cancellation is pushed, a THROTTLED answer waits instead of failing. Every test asserts
the fake refused no document (``refused``) and answered in the schema's shapes.
"""

import base64
import contextlib
import hashlib
import hmac
import json
import threading
import time

import pytest

from commerce_api.marketplaces.base import MarketplaceRejection, Notification
from commerce_api.marketplaces.models import MarketplaceConnection, SyncAttempt
from commerce_api.marketplaces.registry import get_connector
from commerce_api.products.models import Listing
from tests.support.orders_support import connect, make_own_warehouse, make_products, stock_up
from tests.support.products_support import price_listing
from tests.support.servers import start_command, stop_process
from tests.support.shopify_fake import SECRET, SHOP, ShopifyFake
from tests.support.waiting import wait_for

pytestmark = pytest.mark.slow

MARKETPLACE = "shopify"
WORKER = {
    "LOG_LEVEL": "WARNING",
    "WORKER_POLL_INTERVAL": 0.05,
    "MARKETPLACE_PUSH_POLL_INTERVAL": 0.05,
    "ORDER_PULL_INTERVAL_SECONDS": 3600,
}


def assert_contract_kept(fake):
    assert fake.refused == [], fake.refused
    assert fake.answer_problems == [], fake.answer_problems


@pytest.fixture
def fake():
    with ShopifyFake() as running:
        yield running
        assert_contract_kept(running)


@contextlib.contextmanager
def running_worker(database_url, **config):
    worker = start_command(["worker"], database_url, **{**WORKER, **config})
    try:
        yield worker
    finally:
        stop_process(worker)


def listing_of(client, headers, sku):
    response = client.get(f"/api/products/{sku}", headers=headers)
    assert response.status_code == 200
    (listing,) = [
        x for x in response.get_json()["data"]["listings"] if x["marketplace"] == MARKETPLACE
    ]
    return listing


def connect_shopify(tenant, fake, warehouse):
    return connect(
        tenant,
        MARKETPLACE,
        "shopify",
        settings=fake.settings(warehouse),
        credentials=fake.credentials(),
    )


# connecting --------------------------------------------------------------------------------


def test_connect_checks_the_domain_the_locations_and_the_credentials(client, headers, tenant, fake):
    warehouse = make_own_warehouse(tenant)
    from commerce_api.inventory.services import create_warehouse

    fba = create_warehouse(
        tenant.id, {"name": "FBA", "type": "FBA", "marketplace": "amazon_us", "address": "x"}
    )["id"]
    good = {
        "marketplace": MARKETPLACE,
        "connector": "shopify",
        "settings": {"shop_domain": SHOP, "locations": {warehouse: fake.location}},
        "credentials": fake.credentials(),
    }
    bad = [
        ({**good, "settings": {**good["settings"], "shop_domain": "shop.example.com"}}, None),
        ({**good, "settings": {**good["settings"], "shop_domain": "x.myshopify.com.evil"}}, None),
        ({**good, "settings": {**good["settings"], "api_version": "latest"}}, None),
        ({**good, "settings": {**good["settings"], "locations": {}}}, None),
        ({**good, "settings": {**good["settings"], "locations": {warehouse: "Main"}}}, None),
        ({**good, "settings": {**good["settings"], "colour": "blue"}}, None),
        ({key: value for key, value in good.items() if key != "credentials"}, None),
        ({**good, "credentials": {"access_token": "x"}}, None),
        ({**good, "credentials": {**fake.credentials(), "extra": "x"}}, None),
    ]
    for body, _ in bad:
        response = client.post("/api/marketplaces", json=body, headers=headers)
        assert response.status_code in (400, 422), (body, response.get_json())
        assert response.get_json()["error"]["code"] == "VALIDATION_ERROR"
    assert MarketplaceConnection.select().count() == 0
    assert fake.count("locations") == 0  # nothing malformed reached the shop

    # through the operator's path (loopback endpoint): what only the shop can say
    from commerce_api.errors import ApiError

    def refused(settings, credentials=None):
        with pytest.raises(ApiError) as error:
            connect(
                tenant,
                MARKETPLACE,
                "shopify",
                settings=settings,
                credentials=credentials or fake.credentials(),
            )
        assert error.value.code == "VALIDATION_ERROR"
        return error.value.details

    details = refused(fake.settings(warehouse, location="gid://shopify/Location/999999"))
    message = details["fields"]["settings"]["locations"][warehouse][0]
    assert "Not a location of the shop" in message and fake.location in message
    details = refused(fake.settings("warehouse_not_ours"))
    assert "warehouse_not_ours" in details["fields"]["settings"]["locations"]
    details = refused(fake.settings(fba))
    assert "own warehouses" in details["fields"]["settings"]["locations"][fba][0]
    details = refused(fake.settings(warehouse), {**fake.credentials(), "access_token": "wrong"})
    assert "access_token" in details["fields"]["credentials"]
    assert MarketplaceConnection.select().count() == 0

    connection = connect_shopify(tenant, fake, warehouse)
    response = client.get(f"/api/marketplaces/{connection.id}", headers=headers)
    data = response.get_json()["data"]
    assert data["has_credentials"] is True and "credentials" not in data
    assert data["settings"]["api_version"] == "2025-01"
    from commerce_api.db import db

    (stored,) = db.execute_sql("SELECT credentials FROM marketplace_connection").fetchone()
    assert stored.startswith("fernet:") and "shpat_" not in stored and SECRET not in stored
    response = client.get(f"/api/marketplaces/{connection.id}/check", headers=headers)
    check = response.get_json()["data"]
    assert check["ok"] is True and fake.location in check["detail"]


# listings ----------------------------------------------------------------------------------


def test_stock_price_and_archive_reach_shopify_at_the_mapped_location(
    client, headers, tenant, database_url, fake
):
    make_products(client, headers, "MUG-1", "TOWEL-1")
    other = fake.add_location("Second shop")
    fake.add_variant("MUG-1", price="9.99", quantity=0)
    fake.add_variant("TOWEL-1", price="5.00", quantity=0)
    warehouse = make_own_warehouse(tenant)
    stock_up(tenant, warehouse, {"MUG-1": 10, "TOWEL-1": 5})
    connect_shopify(tenant, fake, warehouse)
    for sku in ("MUG-1", "TOWEL-1"):
        price_listing(client, headers, sku, MARKETPLACE, 9.99)
    with running_worker(database_url):
        assert wait_for(lambda: fake.quantity("MUG-1") == 10, 20)
        assert wait_for(lambda: listing_of(client, headers, "MUG-1")["sync_status"] == "in_sync"), (
            json.dumps(listing_of(client, headers, "MUG-1"))
        )
        listing = listing_of(client, headers, "MUG-1")
        assert listing["external_id"] == fake.variant_of("MUG-1")["id"]
        assert fake.quantity("TOWEL-1") == 5
        assert fake.quantity("MUG-1", location=other) == 0  # only the mapped location
        assert fake.variant_of("TOWEL-1")["price"] == "9.99"

        # a stock change
        response = client.put(
            "/api/inventory/MUG-1",
            json={"warehouse_id": warehouse, "quantity": 42, "reason": "supplier_receipt"},
            headers=headers,
        )
        assert response.status_code == 200
        assert wait_for(lambda: fake.quantity("MUG-1") == 42, 20)
        assert wait_for(lambda: listing_of(client, headers, "MUG-1")["quantity"] == 42)

        # a price change
        response = client.patch(
            f"/api/products/TOWEL-1/listings/{MARKETPLACE}", json={"price": 12.5}, headers=headers
        )
        assert response.status_code == 200, response.get_json()
        assert wait_for(lambda: fake.variant_of("TOWEL-1")["price"] == "12.50", 20)
        assert wait_for(lambda: listing_of(client, headers, "TOWEL-1")["sync_status"] == "in_sync")

        # an archive takes the listing off sale
        response = client.delete("/api/products/MUG-1", headers=headers)
        assert response.status_code in (200, 204), response.get_json()
        assert wait_for(lambda: fake.variant_of("MUG-1")["product"]["status"] == "ARCHIVED", 20)
        assert wait_for(lambda: fake.quantity("MUG-1") == 0, 20)
        assert wait_for(lambda: listing_of(client, headers, "MUG-1")["sync_status"] == "in_sync")
    # linked once: one productVariants query per new SKU batch, none for later pushes
    assert fake.count("productVariants") <= 2
    assert fake.count("inventorySetQuantities") >= 3
    assert fake.throttled == 0, "\n".join(map(str, fake.journal))
    assert_contract_kept(fake)


def test_a_sku_on_two_variants_is_refused_for_that_listing_only(
    client, headers, tenant, database_url, fake
):
    make_products(client, headers, "TWICE-1", "ONCE-1")
    fake.add_variant("TWICE-1", quantity=3)
    fake.add_variant("TWICE-1", quantity=3)
    fake.add_variant("ONCE-1", quantity=0)
    warehouse = make_own_warehouse(tenant)
    stock_up(tenant, warehouse, {"TWICE-1": 7, "ONCE-1": 4})
    connect_shopify(tenant, fake, warehouse)
    for sku in ("TWICE-1", "ONCE-1"):
        price_listing(client, headers, sku, MARKETPLACE, 9.99)
    with running_worker(database_url):
        assert wait_for(lambda: listing_of(client, headers, "TWICE-1")["sync_status"] == "error")
        assert wait_for(lambda: listing_of(client, headers, "ONCE-1")["sync_status"] == "in_sync")
    listing = listing_of(client, headers, "TWICE-1")
    assert listing["last_sync_error"].startswith("DUPLICATE_SKU")
    assert listing["external_id"] is None
    assert [fake.levels[key] for key in fake.levels if key[1] == fake.location].count(3) == 2
    assert fake.quantity("ONCE-1") == 4
    twice_items = {
        v["inventoryItem"]["id"] for v in fake.variants.values() if v["sku"] == "TWICE-1"
    }
    assert not [s for s in fake.sets if s[0] in twice_items]  # nothing pushed for it
    assert_contract_kept(fake)


def test_a_quantity_changed_in_shopify_meanwhile_ends_as_our_state_says(
    client, headers, tenant, database_url, fake
):
    make_products(client, headers, "MUG-1")
    fake.add_variant("MUG-1", quantity=0)
    warehouse = make_own_warehouse(tenant)
    stock_up(tenant, warehouse, {"MUG-1": 10})
    connect_shopify(tenant, fake, warehouse)
    price_listing(client, headers, "MUG-1", MARKETPLACE, 9.99)
    with running_worker(database_url):
        assert wait_for(lambda: fake.quantity("MUG-1") == 10, 20)
        assert wait_for(lambda: listing_of(client, headers, "MUG-1")["sync_status"] == "in_sync")
        mismatches_before = fake_mismatches(fake)
        fake.set_quantity("MUG-1", 6)  # someone changed it in the Shopify admin
        response = client.put(
            "/api/inventory/MUG-1",
            json={"warehouse_id": warehouse, "quantity": 8, "reason": "cycle_count"},
            headers=headers,
        )
        assert response.status_code == 200
        assert wait_for(lambda: fake.quantity("MUG-1") == 8, 20)
        assert wait_for(lambda: listing_of(client, headers, "MUG-1")["sync_status"] == "in_sync")
    assert fake_mismatches(fake) == mismatches_before + 1
    # never overwritten blindly: the push that won compared with what Shopify showed
    item = fake.variant_of("MUG-1")["inventoryItem"]["id"]
    assert [(q, compare) for i, _, q, compare, _ in fake.sets if i == item][-1] == (8, 6)
    (row,) = SyncAttempt.select().where(SyncAttempt.operation == "compare_mismatch")
    assert row.sku == "MUG-1" and row.error_code == "COMPARE_MISMATCH"
    assert row.details["expected"] == 10 and row.details["found"] == 6
    response = client.get(
        "/api/marketplaces/sync-history", query_string={"sku": "MUG-1"}, headers=headers
    )
    assert any(h["operation"] == "compare_mismatch" for h in response.get_json()["data"])
    assert_contract_kept(fake)


def fake_mismatches(fake):
    return sum(1 for _ in SyncAttempt.select().where(SyncAttempt.operation == "compare_mismatch"))


def test_a_throttled_query_waits_and_the_push_goes_through(app, client, headers, tenant, fake):
    make_products(client, headers, "MUG-1")
    fake.add_variant("MUG-1", quantity=0)
    warehouse = make_own_warehouse(tenant)
    stock_up(tenant, warehouse, {"MUG-1": 3})
    connection = connect_shopify(tenant, fake, warehouse)
    price_listing(client, headers, "MUG-1", MARKETPLACE, 9.99)
    with app.app_context():
        connector = get_connector(MarketplaceConnection.get_by_id(connection.id))
        listing = Listing.get()
        fake.empty_bucket()
        (result,) = connector.push_listings(
            [
                {
                    "payload": {"sku": "MUG-1", "status": "active", "price": 9.99,
                                "currency": "USD", "quantity": 3},
                    "idempotency_key": f"{listing.id}:1",
                    "last_quantity": 0,
                }
            ]
        )  # fmt: skip
    assert result.status == "accepted", result
    assert fake.quantity("MUG-1") == 3
    assert fake.throttled >= 1  # Shopify said THROTTLED; the query waited and went again
    assert_contract_kept(fake)


# orders ------------------------------------------------------------------------------------


def test_orders_are_pulled_with_their_lines_and_address(client, headers, tenant, fake):
    make_products(client, headers, "MUG-1", "TOWEL-1")
    warehouse = make_own_warehouse(tenant)
    connection = connect_shopify(tenant, fake, warehouse)
    first = fake.add_order([("MUG-1", 2, "9.99"), ("TOWEL-1", 1, "5.05")])
    lines = [("MUG-1", 1, "1.10")] * 12  # more lines than a page
    second = fake.add_order([("TOWEL-1", 3, "5.05"), *lines])
    third = fake.add_order([("MUG-1", 1, "1.00")])
    from commerce_api.orders.pulls import pull_connection

    summary = pull_connection(MarketplaceConnection.get_by_id(connection.id))
    assert summary["status"] in ("ok", "partial"), summary
    response = client.get("/api/orders", headers=headers)
    orders = {o["external_order_id"]: o for o in response.get_json()["data"]}
    assert set(orders) == {first, second, third}
    order = orders[first]
    assert order["currency"] == "USD" and order["total_amount"] == 25.03
    detail = client.get(f"/api/orders/{order['id']}", headers=headers).get_json()["data"]
    by_sku = {line["sku"]: line for line in detail["line_items"]}
    assert by_sku["MUG-1"]["quantity"] == 2 and by_sku["MUG-1"]["line_total"] == 19.98
    assert detail["shipping_address"]["country"] == "GB"
    detail = client.get(f"/api/orders/{orders[second]['id']}", headers=headers).get_json()["data"]
    assert len(detail["line_items"]) == 13
    with client.application.app_context():
        connector = get_connector(MarketplaceConnection.get_by_id(connection.id))
        one = connector.fetch_order(third)
        assert one["external_order_id"] == third and one["line_items"][0]["sku"] == "MUG-1"
        assert connector.fetch_order("gid://shopify/Order/1") is None
    assert_contract_kept(fake)


def test_a_shipment_creates_one_fulfillment_under_racing_requests(
    app, client, headers, tenant, fake
):
    make_products(client, headers, "MUG-1")
    warehouse = make_own_warehouse(tenant)
    stock_up(tenant, warehouse, {"MUG-1": 10})
    connection = connect_shopify(tenant, fake, warehouse)
    gid = fake.add_order([("MUG-1", 2, "9.99")])
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
    assert len(fake.fulfillments) == 1, statuses
    assert fake.fulfillments[0]["tracking"] == {"company": "UPS", "number": "1Z999AA10123456784"}
    assert fake.orders[gid]["displayFulfillmentStatus"] == "FULFILLED"
    assert sum(1 for s in statuses if s in (200, 201)) == 1, statuses
    assert all(s in (200, 201, 409) for s in statuses), statuses
    assert fake.count("fulfillmentCreate") == 1
    detail = client.get(f"/api/orders/{order['id']}", headers=headers).get_json()["data"]
    assert detail["status"] == "shipped"
    assert_contract_kept(fake)


def test_a_cancellation_is_pushed(app, client, headers, tenant, database_url, fake):
    make_products(client, headers, "MUG-1")
    warehouse = make_own_warehouse(tenant)
    stock_up(tenant, warehouse, {"MUG-1": 10})
    connection = connect_shopify(tenant, fake, warehouse)
    gid = fake.add_order([("MUG-1", 1, "9.99")])
    from commerce_api.orders.pulls import pull_connection

    pull_connection(MarketplaceConnection.get_by_id(connection.id), inventory=False)
    (order,) = client.get("/api/orders", headers=headers).get_json()["data"]
    with running_worker(database_url):
        response = client.post(
            f"/api/orders/{order['id']}/cancel",
            json={"reason": "out_of_stock"},
            headers=headers,
        )
        assert response.status_code in (200, 202), response.get_json()
        assert wait_for(
            lambda: (
                client.get(f"/api/orders/{order['id']}", headers=headers).get_json()["data"][
                    "status"
                ]
                == "cancelled"
            ),
            20,
        )
    assert fake.cancellations == [(gid, "INVENTORY", True, True)]
    assert fake.orders[gid]["cancelledAt"] is not None
    assert_contract_kept(fake)


# notifications -----------------------------------------------------------------------------


def test_notifications_are_verified_over_the_raw_body(app, client, headers, tenant, fake):
    warehouse = make_own_warehouse(tenant)
    connection = connect_shopify(tenant, fake, warehouse)
    gid = fake.add_order([("MUG-1", 1, "9.99")])
    with app.app_context():
        connector = get_connector(MarketplaceConnection.get_by_id(connection.id))
        sent, body = fake.notification(gid, webhook_id="wh-1")
        assert connector.verify_notification(sent, body) == Notification(
            "wh-1", "orders/create", [gid]
        )
        # the numeric id alone is enough
        raw = json.dumps({"id": 42}).encode()
        signed = {**sent, "X-Shopify-Hmac-Sha256": _sign(raw)}
        assert connector.verify_notification(signed, raw).order_ids == ["gid://shopify/Order/42"]
        other = {**signed, "X-Shopify-Topic": "products/update"}
        assert connector.verify_notification(other, raw).order_ids == []

        def refused(headers, raw):
            with pytest.raises(MarketplaceRejection) as error:
                connector.verify_notification(headers, raw)
            return error.value.code

        assert refused(sent, body + b" ") == "NOTIFICATION_SIGNATURE_INVALID"
        assert refused({**sent, "X-Shopify-Hmac-Sha256": ""}, body) == (
            "NOTIFICATION_SIGNATURE_INVALID"
        )
        unsigned = {k: v for k, v in sent.items() if k != "X-Shopify-Hmac-Sha256"}
        assert refused(unsigned, body) == "NOTIFICATION_SIGNATURE_INVALID"
        wrong, _ = fake.notification(gid, secret="another-secret")
        assert refused(wrong, body) == "NOTIFICATION_SIGNATURE_INVALID"
        assert refused({**sent, "X-Shopify-Shop-Domain": "other.myshopify.com"}, body) == (
            "NOTIFICATION_SIGNATURE_INVALID"
        )
        not_json = b"<xml/>"
        assert refused({**sent, "X-Shopify-Hmac-Sha256": _sign(not_json)}, not_json) == (
            "NOTIFICATION_BODY_INVALID"
        )
    assert_contract_kept(fake)


def _sign(raw):
    return base64.b64encode(hmac.new(SECRET.encode(), raw, hashlib.sha256).digest()).decode()


# many listings -----------------------------------------------------------------------------


def _linked(tenant, fake, count, warehouse, prefix="BULK"):
    """``count`` products listed on Shopify, linked and in sync at quantity 0."""
    from commerce_api.db import db
    from commerce_api.ids import new_id
    from commerce_api.products.models import Product

    now = int(time.time() * 1000)
    products, listings = [], []
    for n in range(count):
        sku = f"{prefix}-{n:05d}"
        variant = fake.variants[fake.add_variant(sku, price="19.99", quantity=0)]
        product_id = new_id("product")
        products.append(
            {"id": product_id, "tenant": tenant.id, "sku": sku, "title": sku, "status": "active",
             "images": [], "created_at": now, "updated_at": now}
        )  # fmt: skip
        refs = {
            "product": variant["product"]["id"],
            "variant": variant["id"],
            "inventory_item": variant["inventoryItem"]["id"],
            "price": "19.99",
            "status": "active",
            "location": fake.location,
        }
        listings.append(
            {"id": new_id("listing"), "tenant": tenant.id, "product": product_id,
             "marketplace": MARKETPLACE, "external_id": variant["id"], "price": "19.99",
             "currency": "USD", "quantity": 0, "external_refs": refs,
             "created_at": now, "updated_at": now}
        )  # fmt: skip
    with db.atomic():
        for start in range(0, count, 500):
            Product.insert_many(products[start : start + 500]).execute()
            Listing.insert_many(listings[start : start + 500]).execute()
    return [p["sku"] for p in products]


def test_500_pending_listings_drain_within_the_cost_bucket(
    client, headers, tenant, database_url, fake
):
    warehouse = make_own_warehouse(tenant)
    skus = _linked(tenant, fake, 500, warehouse)
    connect_shopify(tenant, fake, warehouse)
    response = client.post(
        "/api/inventory/bulk",
        json={
            "updates": [
                {"sku": sku, "warehouse_id": warehouse, "quantity": 5, "reason": "supplier_receipt"}
                for sku in skus
            ]
        },
        headers=headers,
    )
    assert response.status_code == 200, response.get_json()
    assert response.get_json()["data"]["failed"] == 0
    assert Listing.select().where(Listing.sync_status == "pending").count() == 500
    with running_worker(database_url):
        assert wait_for(
            lambda: Listing.select().where(Listing.sync_status == "in_sync").count() == 500, 60
        )
    on_shop = {v["sku"]: fake.quantity(v["sku"]) for v in fake.variants.values()}
    assert set(on_shop.values()) == {5}
    assert fake.throttled == 0, "\n".join(map(str, fake.journal))
    assert fake.count("inventorySetQuantities") <= 10
    assert fake.count("productVariants") == 0  # linked already: nothing looked up again
    assert_contract_kept(fake)


def test_the_cli_connects_a_shop_with_its_location_mapping(runner, tenant, fake):
    from commerce_api.cli import cli

    warehouse = make_own_warehouse(tenant)
    result = runner.invoke(
        cli,
        ["marketplaces", "connect", "--tenant", tenant.id, "--marketplace", MARKETPLACE,
         "--connector", "shopify", "--setting", f"shop_domain={SHOP}",
         "--setting", f"endpoint={fake.url}",
         "--setting", f"locations.{warehouse}={fake.location}",
         "--credential", f"access_token={fake.credentials()['access_token']}",
         "--credential", f"webhook_secret={SECRET}", "--json"],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert data["connector"] == "shopify"
    assert data["settings"]["locations"] == {warehouse: fake.location}
    connection = MarketplaceConnection.get_by_id(data["id"])
    assert json.loads(connection.credentials)["webhook_secret"] == SECRET
    assert_contract_kept(fake)


def test_a_manual_sync_links_the_listing_and_compares_with_what_shopify_shows(
    app, client, headers, tenant, fake
):
    make_products(client, headers, "MUG-1")
    fake.add_variant("MUG-1", price="9.99", quantity=4)  # set in the Shopify admin
    warehouse = make_own_warehouse(tenant)
    stock_up(tenant, warehouse, {"MUG-1": 6})
    connect_shopify(tenant, fake, warehouse)
    price_listing(client, headers, "MUG-1", MARKETPLACE, 11.0)
    from commerce_api.marketplaces.product_sync import sync_product

    with app.app_context():
        result = sync_product(tenant.id, "MUG-1", [MARKETPLACE], "test")
    assert result["succeeded"] == 1, result
    assert fake.quantity("MUG-1") == 6 and fake.variant_of("MUG-1")["price"] == "11.00"
    item = fake.variant_of("MUG-1")["inventoryItem"]["id"]
    assert [(q, compare) for i, _, q, compare, _ in fake.sets if i == item] == [(6, 4)]
    listing = Listing.get()
    assert listing.external_id == fake.variant_of("MUG-1")["id"]
    assert listing.external_refs["inventory_item"] == item
    assert_contract_kept(fake)


def test_a_manual_sync_raced_by_a_change_in_shopify_is_tried_again_not_refused(
    app, client, headers, tenant, fake
):
    """The level changes between the sync's read and its write (a sale in Shopify, or our
    own listing push meanwhile): Shopify writes nothing, and the sync is unavailable (its
    job retries) rather than refused; the next sync sets our quantity."""
    make_products(client, headers, "MUG-1")
    fake.add_variant("MUG-1", price="9.99", quantity=4)
    warehouse = make_own_warehouse(tenant)
    stock_up(tenant, warehouse, {"MUG-1": 6})
    connect_shopify(tenant, fake, warehouse)
    price_listing(client, headers, "MUG-1", MARKETPLACE, 11.0)
    from commerce_api.marketplaces.product_sync import sync_product

    answer, raced = fake.handle, []

    def racing(path, request_headers, raw):
        result = answer(path, request_headers, raw)
        if b"query Levels" in raw and not raced:  # just after the sync read the level
            raced.append(fake.set_quantity("MUG-1", 3))
        return result

    fake.handle = racing
    with app.app_context():
        result = sync_product(tenant.id, "MUG-1", [MARKETPLACE], "test")
        (entry,) = result["marketplaces"]
        assert entry["status"] == "unavailable", result
        assert entry["error"]["code"] == "MARKETPLACE_UNAVAILABLE"
        assert fake.quantity("MUG-1") == 3  # nothing overwritten
        result = sync_product(tenant.id, "MUG-1", [MARKETPLACE], "test")
    assert result["succeeded"] == 1, result
    assert fake.quantity("MUG-1") == 6
    (row,) = SyncAttempt.select().where(SyncAttempt.error_code == "COMPARE_MISMATCH")
    assert row.status == "unavailable" and "3 at" in row.error_message
    assert_contract_kept(fake)


def test_a_changed_location_mapping_is_checked_with_the_shop(tenant, fake):
    from commerce_api.errors import ApiError
    from commerce_api.marketplaces.connections import update_connection

    warehouse = make_own_warehouse(tenant)
    second = make_own_warehouse(tenant, "Second")
    connection = connect_shopify(tenant, fake, warehouse)
    change = {"settings": {"locations": {second: "gid://shopify/Location/999999"}}}
    with pytest.raises(ApiError) as error:
        update_connection(tenant.id, connection.id, change, allow_private=True)
    assert error.value.code == "VALIDATION_ERROR"
    assert second in error.value.details["fields"]["settings"]["locations"]
    assert MarketplaceConnection.get_by_id(connection.id).settings["locations"] == {
        warehouse: fake.location
    }
    other = fake.add_location("Second shop")
    change = {"settings": {"locations": {second: other}}}
    updated = update_connection(tenant.id, connection.id, change, allow_private=True)
    assert updated.settings["locations"] == {second: other}
    assert_contract_kept(fake)
