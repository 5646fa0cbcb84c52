"""Marketplace connections (CLI and API), the sandbox marketplace, order pulls, product sync."""

import json

import pytest

from commerce_api.cli import cli
from commerce_api.inventory.models import Adjustment
from commerce_api.jobs.models import Job
from commerce_api.marketplaces.models import MarketplaceConnection, SandboxOrder, SyncAttempt
from commerce_api.marketplaces.registry import get_connector
from commerce_api.orders.models import Order
from commerce_api.orders.pulls import pull_connection
from commerce_api.products.models import Listing
from tests.support.factories import headers_for, product_body
from tests.support.inventory_helpers import make_marketplace_warehouse
from tests.support.orders_support import (
    connect,
    events_of,
    levels,
    make_own_warehouse,
    make_products,
    run_job,
    stock_up,
)
from tests.support.products_support import price_listing

SKUS = ("BOTTLE-1", "CANDLE-1", "MUG-1", "TOWEL-1")


@pytest.fixture
def stocked(client, headers, tenant):
    make_products(client, headers, *SKUS)
    warehouse = make_own_warehouse(tenant)
    stock_up(tenant, warehouse, {sku: 500 for sku in SKUS})
    return warehouse


def fix_connection_id(monkeypatch, connection_id="mkc_01JD3Q9Z7G0000000000000000"):
    """Give the next connection a known id, which fixes the sandbox's random streams."""
    from commerce_api.marketplaces import services

    real = services.new_id
    monkeypatch.setattr(
        services, "new_id", lambda kind: connection_id if kind == "connection" else real(kind)
    )


def _pull(connection):
    return pull_connection(MarketplaceConnection.get_by_id(connection.id))


# Connections ------------------------------------------------------------------------------


def test_cli_connect_list_and_refusals(runner, tenant):
    result = runner.invoke(
        cli,
        [
            "marketplaces",
            "connect",
            "--tenant",
            tenant.id,
            "--marketplace",
            "amazon",
            "--connector",
            "sandbox",
            "--json",
        ],
    )
    assert result.exit_code == 0, result.output
    payload = json.loads(result.output)
    assert payload["id"].startswith("mkc_")
    assert payload["marketplace"] == "amazon" and payload["connector"] == "sandbox"
    assert payload["settings"] == {"initial_orders": 8, "orders_per_pull": 2, "max_orders": 500}
    result = runner.invoke(
        cli,
        [
            "marketplaces",
            "connect",
            "--tenant",
            tenant.id,
            "--marketplace",
            "local",
            "--connector",
            "http",
            "--base-url",
            "http://127.0.0.1:9/",
            "--api-token",
            "s3cret",
            "--json",
        ],
    )
    assert result.exit_code == 0, result.output
    http = json.loads(result.output)
    assert http["base_url"] == "http://127.0.0.1:9" and http["has_api_token"] is True
    assert "s3cret" not in result.output
    for args, text in (
        (["--marketplace", "amazon", "--connector", "sandbox"], "MARKETPLACE_ALREADY_CONNECTED"),
        (["--marketplace", "ebay", "--connector", "http"], "base_url"),
        (["--marketplace", "ebay", "--connector", "http", "--base-url", "ftp://x"], "base_url"),
        (["--marketplace", "ebay", "--connector", "sandbox", "--base-url", "http://x"], "base_url"),
        (["--marketplace", "bad name", "--connector", "sandbox"], "marketplace"),
        (
            ["--marketplace", "ebay", "--connector", "sandbox", "--setting", "max_orders=-1"],
            "settings",
        ),
    ):
        result = runner.invoke(cli, ["marketplaces", "connect", "--tenant", tenant.id, *args])
        assert result.exit_code != 0 and text in result.output, (args, result.output)
    result = runner.invoke(
        cli,
        [
            "marketplaces",
            "connect",
            "--tenant",
            "00000000-0000-0000-0000-000000000000",
            "--marketplace",
            "x",
            "--connector",
            "sandbox",
        ],
    )
    assert result.exit_code != 0 and "tenant does not exist" in result.output
    result = runner.invoke(cli, ["marketplaces", "list", "--tenant", tenant.id, "--json"])
    assert [row["marketplace"] for row in json.loads(result.output)] == ["amazon", "local"]
    assert MarketplaceConnection.select().count() == 2


def test_api_connections(client, headers, tenant):
    response = client.post(
        "/api/marketplaces",
        json={"marketplace": "amazon", "connector": "sandbox", "settings": {"initial_orders": 3}},
        headers=headers,
    )
    assert response.status_code == 201, response.get_json()
    created = response.get_json()["data"]
    assert created["id"].startswith("mkc_") and created["status"] == "active"
    assert created["settings"]["initial_orders"] == 3
    assert created["last_pull_at"] is None
    # an http connection to a public address (an IP literal: no DNS needed)
    response = client.post(
        "/api/marketplaces",
        json={
            "marketplace": "otto",
            "connector": "http",
            "base_url": "https://93.184.216.34/api",
            "api_token": "t",
        },
        headers=headers,
    )
    assert response.status_code == 201, response.get_json()
    assert "api_token" not in response.get_json()["data"]
    listed = client.get("/api/marketplaces", headers=headers).get_json()
    assert [c["marketplace"] for c in listed["data"]] == ["otto", "amazon"]
    assert listed["meta"]["total"] == 2
    selected = client.get("/api/marketplaces?fields=marketplace", headers=headers).get_json()
    assert selected["data"][0] == {"id": listed["data"][0]["id"], "marketplace": "otto"}
    response = client.get("/api/marketplaces?fields=api_token", headers=headers)
    assert response.status_code == 422
    one = client.get(f"/api/marketplaces/{created['id']}", headers=headers)
    assert one.status_code == 200 and one.get_json()["data"] == created
    # connections have scopes of their own: marketplaces:read and marketplaces:write
    read = headers_for(tenant, scopes=["marketplaces:read"])
    assert client.get("/api/marketplaces", headers=read).status_code == 200
    for scopes in (["orders:read"], ["products:read"], ["inventory:read"]):
        response = client.get("/api/marketplaces", headers=headers_for(tenant, scopes=scopes))
        assert response.status_code == 403
        assert response.get_json()["error"]["details"]["required_scope"] == "marketplaces:read"
    for scopes in (["products:write"], ["orders:write"], ["marketplaces:read"]):
        response = client.post(
            "/api/marketplaces",
            json={"marketplace": "ebay", "connector": "sandbox"},
            headers=headers_for(tenant, scopes=scopes),
        )
        assert response.status_code == 403
        assert response.get_json()["error"]["details"]["required_scope"] == "marketplaces:write"
    assert client.get("/api/marketplaces", headers=headers).get_json()["meta"]["total"] == 2
    response = client.post(
        "/api/marketplaces",
        json={"marketplace": "ebay", "connector": "sandbox"},
        headers=headers_for(tenant, scopes=["marketplaces:write"]),
    )
    assert response.status_code == 201
    # another tenant sees none of it
    other = headers_for()
    assert client.get("/api/marketplaces", headers=other).get_json()["data"] == []
    assert client.get("/api/marketplaces", headers=headers).get_json()["meta"]["total"] == 3
    response = client.get(f"/api/marketplaces/{created['id']}", headers=other)
    assert (
        response.status_code == 404
        and response.get_json()["error"]["code"] == "CONNECTION_NOT_FOUND"
    )


@pytest.mark.parametrize(
    ("body", "code", "field"),
    [
        ({"marketplace": "amazon", "connector": "sandbox"}, "MARKETPLACE_ALREADY_CONNECTED", None),
        ({"marketplace": "ebay", "connector": "carrier-pigeon"}, "VALIDATION_ERROR", "connector"),
        ({"connector": "sandbox"}, "VALIDATION_ERROR", "marketplace"),
        ({"marketplace": "-x", "connector": "sandbox"}, "VALIDATION_ERROR", "marketplace"),
        ({"marketplace": "ebay", "connector": "http"}, "VALIDATION_ERROR", "base_url"),
        (
            {"marketplace": "ebay", "connector": "http", "base_url": "http://127.0.0.1:8080"},
            "VALIDATION_ERROR",
            "base_url",
        ),
        (
            {"marketplace": "ebay", "connector": "http", "base_url": "http://10.1.2.3"},
            "VALIDATION_ERROR",
            "base_url",
        ),
        (
            {"marketplace": "ebay", "connector": "http", "base_url": "http://localhost:80"},
            "VALIDATION_ERROR",
            "base_url",
        ),
        (
            {"marketplace": "ebay", "connector": "http", "base_url": "http://[::1]/"},
            "VALIDATION_ERROR",
            "base_url",
        ),
        (
            {"marketplace": "ebay", "connector": "http", "base_url": "http://[::1"},
            "VALIDATION_ERROR",
            "base_url",
        ),
        (
            {"marketplace": "ebay", "connector": "http", "base_url": "http://93.184.216.34:99999"},
            "VALIDATION_ERROR",
            "base_url",
        ),
        (
            {"marketplace": "ebay", "connector": "http", "base_url": "https://u:p@93.184.216.34"},
            "VALIDATION_ERROR",
            "base_url",
        ),
        (
            {"marketplace": "ebay", "connector": "http", "base_url": "file:///etc/passwd"},
            "VALIDATION_ERROR",
            "base_url",
        ),
        (
            {"marketplace": "ebay", "connector": "sandbox", "settings": {"colour": 1}},
            "VALIDATION_ERROR",
            "settings",
        ),
        (
            {"marketplace": "ebay", "connector": "sandbox", "settings": {"max_orders": "9"}},
            "VALIDATION_ERROR",
            "settings",
        ),
        (
            {"marketplace": "ebay", "connector": "sandbox", "base_url": "https://93.184.216.34"},
            "VALIDATION_ERROR",
            "base_url",
        ),
        (
            {"marketplace": "ebay", "connector": "sandbox", "region": "eu"},
            "VALIDATION_ERROR",
            "region",
        ),
    ],
)
def test_api_connection_refusals(client, headers, tenant, body, code, field):
    connect(tenant, "amazon")
    before = MarketplaceConnection.select().count()
    response = client.post("/api/marketplaces", json=body, headers=headers)
    error = response.get_json()["error"]
    assert error["code"] == code, error
    assert response.status_code == (409 if code == "MARKETPLACE_ALREADY_CONNECTED" else 422)
    if field:
        assert field in error["details"]["fields"]
    assert MarketplaceConnection.select().count() == before


# The sandbox ------------------------------------------------------------------------------


def test_sandbox_orders_are_deterministic_per_connection(tenant, stocked):
    connection = connect(tenant, "amazon", settings={"initial_orders": 6})
    first = get_connector(connection).fetch_orders(None).orders
    assert len(first) == 6
    # forget what the sandbox emitted: the same connection produces the same orders again
    SandboxOrder.delete().execute()
    MarketplaceConnection.update(state={}).where(
        MarketplaceConnection.id == connection.id
    ).execute()
    again = get_connector(MarketplaceConnection.get_by_id(connection.id)).fetch_orders(None).orders

    def strip(orders):
        return [{k: v for k, v in o.items() if k != "created_at"} for o in orders]

    assert strip(again) == strip(first)
    assert [o["external_order_id"] for o in first] == [f"SBX-{n:06d}" for n in range(1, 7)]
    skus = {line["sku"] for o in first for line in o["line_items"]}
    assert skus <= set(SKUS)
    # another connection gets other orders
    other = connect(tenant, "ebay", settings={"initial_orders": 6})
    assert strip(get_connector(other).fetch_orders(None).orders) != strip(first)


def test_pulls_are_incremental_and_never_duplicate(client, headers, tenant, stocked):
    connection = connect(tenant, "amazon", settings={"initial_orders": 5, "orders_per_pull": 2})
    summary = _pull(connection)
    assert (summary["status"], summary["created"], summary["updated"]) == ("ok", 5, 0)
    assert Order.select().count() == 5
    stored = MarketplaceConnection.get_by_id(connection.id)
    assert stored.last_pull_status == "ok" and stored.pull_cursor == "5"
    # the next tick: every pending order moves on, two new ones arrive
    summary = _pull(connection)
    assert (summary["created"], summary["updated"], summary["failed"]) == (2, 5, 0)
    assert Order.select().count() == 7
    by_id = {o.external_order_id: o for o in Order.select()}
    for sandbox in SandboxOrder.select():
        assert by_id[sandbox.external_order_id].status == sandbox.status
        expected = "shipped" if sandbox.fulfillment_method == "FBA" else "confirmed"
        if sandbox.sequence <= 5:
            assert sandbox.status == expected
    # the API lists what was pulled, with the marketplace's details
    listed = client.get("/api/orders?marketplace=amazon&limit=200", headers=headers).get_json()
    assert listed["meta"]["total"] == 7
    detail = client.get(f"/api/orders/{listed['data'][0]['id']}", headers=headers).get_json()[
        "data"
    ]
    assert detail["shipping_address"]["country"]
    assert detail["sync_history"][-1]["operation"] == "order_pull"


def test_sandbox_lifecycle_through_pulls_and_shipment(
    client, headers, tenant, stocked, monkeypatch
):
    fix_connection_id(monkeypatch)  # its stream has FBM and FBA orders among the first 12
    connection = connect(tenant, "amazon", settings={"initial_orders": 12, "orders_per_pull": 0})
    _pull(connection)
    fbm = (
        Order.select()
        .where(Order.fulfillment_method == "FBM")
        .order_by(Order.external_order_id)
        .first()
    )
    fba = (
        Order.select()
        .where(Order.fulfillment_method == "FBA")
        .order_by(Order.external_order_id)
        .first()
    )
    assert fbm is not None and fba is not None
    reserved_before = {sku: levels(tenant.id, sku)[1] for sku in SKUS}
    assert sum(reserved_before.values()) > 0
    _pull(connection)  # FBM: confirmed; FBA: shipped by the marketplace
    assert Order.get_by_id(fbm.id).status == "confirmed"
    assert Order.get_by_id(fba.id).status == "shipped"
    assert events_of(fba.id)[-1] == "order.shipped"
    response = client.post(
        f"/api/orders/{fbm.id}/shipment",
        json={"carrier": "UPS", "tracking_number": "1Z"},
        headers=headers,
    )
    assert response.status_code == 200
    assert (
        SandboxOrder.get(SandboxOrder.external_order_id == fbm.external_order_id).status
        == "shipped"
    )
    _pull(connection)
    assert Order.get_by_id(fbm.id).status == "delivered"
    assert Order.get_by_id(fba.id).status == "delivered"
    _pull(connection)
    assert Order.get_by_id(fbm.id).status == "completed"
    assert Order.get_by_id(fba.id).status == "completed"
    # FBA orders never touched our stock; the FBM shipment consumed exactly its lines
    sold = {}
    for line in fbm.lines:
        sold[line.sku] = sold.get(line.sku, 0) + line.quantity
    for sku in SKUS:
        assert levels(tenant.id, sku)[0] == 500 - sold.get(sku, 0)


def test_sandbox_returns_arrive_with_their_orders(client, headers, tenant, stocked, monkeypatch):
    # a fixed connection id fixes the sandbox's random streams: this one yields returns
    fix_connection_id(monkeypatch)
    connection = connect(tenant, "amazon", settings={"initial_orders": 40, "orders_per_pull": 0})
    for _ in range(4):
        _pull(connection)
    returned = client.get("/api/orders?has_returns=true&limit=200", headers=headers).get_json()
    assert returned["meta"]["total"] >= 1
    expected = SandboxOrder.select().count() and sum(
        1 for s in SandboxOrder.select() if s.payload.get("returns")
    )
    assert returned["meta"]["total"] == expected
    detail = client.get(f"/api/orders/{returned['data'][0]['id']}", headers=headers).get_json()[
        "data"
    ]
    assert detail["returns"][0]["id"].startswith("ret_") and detail["returns"][0]["reason"]


def test_pull_fills_the_marketplace_warehouse(tenant, stocked):
    fba = make_marketplace_warehouse(tenant.id, "FBA", "amazon")
    connection = connect(tenant, "amazon", settings={"initial_orders": 0, "orders_per_pull": 0})
    summary = _pull(connection)
    assert summary["inventory_updated"] == len(SKUS)
    adjustments = list(Adjustment.select().where(Adjustment.warehouse == fba["id"]))
    assert {a.reason for a in adjustments} == {"marketplace_sync"}
    assert {a.created_by for a in adjustments} == {"marketplace:amazon"}
    # unchanged stock writes nothing the next time
    assert _pull(connection)["inventory_updated"] == 0


def test_periodic_task_pulls_every_active_connection(tenant, stocked):
    from commerce_api.jobs.registry import PERIODIC_TASKS as TASKS
    from commerce_api.orders import tasks

    assert TASKS["pull_orders"] == (tasks.ORDER_PULL_INTERVAL_SECONDS, tasks.pull_orders)
    connect(tenant, "amazon", settings={"initial_orders": 2})
    connect(tenant, "ebay", settings={"initial_orders": 3})
    queued = tasks.pull_orders()
    assert len(queued) == 2  # one order_pull job per connection
    # a connection whose pull is still queued gets no second one
    assert tasks.pull_orders() == []
    results = [run_job(item["job_id"])[0] for item in queued]
    assert sorted((r["marketplace"], r["created"]) for r in results) == [("amazon", 2), ("ebay", 3)]
    assert Order.select().count() == 5


def test_cli_pull(runner, tenant, stocked):
    result = runner.invoke(cli, ["marketplaces", "pull", "--tenant", tenant.id])
    assert result.exit_code != 0 and "MARKETPLACE_NOT_CONNECTED" in result.output
    connect(tenant, "amazon", settings={"initial_orders": 3})
    result = runner.invoke(cli, ["marketplaces", "pull", "--tenant", tenant.id, "--json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.output)[0]["created"] == 3


def test_demo_seeds_a_sandbox_with_orders(app, runner, tmp_path, monkeypatch):
    monkeypatch.setattr(app, "instance_path", str(tmp_path))
    result = runner.invoke(cli, ["demo", "--json"])
    assert result.exit_code == 0, result.output
    tenant_id = json.loads(result.output)["tenant_id"]
    connection = MarketplaceConnection.get(MarketplaceConnection.tenant == tenant_id)
    assert (connection.marketplace, connection.connector) == ("amazon", "sandbox")
    # the sandbox's orders (the demo also imports ten weeks of delivered orders with returns)
    orders = Order.select().where((Order.tenant == tenant_id) & (Order.source == "pull"))
    assert orders.count() >= 8
    assert {o.status for o in orders} <= {"pending", "confirmed", "shipped"}


# Product sync -----------------------------------------------------------------------------


def test_sync_resolves_and_checks_marketplaces(client, headers, tenant, stocked):
    response = client.post("/api/products/MUG-1/sync", headers=headers)
    assert response.status_code == 422
    assert response.get_json()["error"]["code"] == "MARKETPLACE_NOT_CONNECTED"
    connect(tenant, "amazon", settings={"initial_orders": 0})
    connect(tenant, "ebay", settings={"initial_orders": 0})
    response = client.post(
        "/api/products/MUG-1/sync", json={"marketplaces": ["ebay", "otto"]}, headers=headers
    )
    assert response.status_code == 422
    error = response.get_json()["error"]
    assert error["code"] == "MARKETPLACE_NOT_CONNECTED" and error["details"]["marketplaces"] == [
        "otto"
    ]
    assert Job.select().count() == 0
    response = client.post("/api/products/MUG-1/sync", headers=headers)
    assert response.status_code == 202
    data = response.get_json()["data"]
    assert data["marketplaces"] == ["amazon", "ebay"] and data["status"] == "queued"
    response = client.post(
        "/api/products/MUG-1/sync", json={"marketplaces": ["ebay"]}, headers=headers
    )
    assert response.get_json()["data"]["marketplaces"] == ["ebay"]


def test_sync_job_creates_listings_and_history(client, headers, tenant, stocked):
    connect(tenant, "amazon", settings={"initial_orders": 0})
    connect(tenant, "ebay", settings={"initial_orders": 0})
    # no price set: nothing is pushed (the sandbox would pick one), each listing says why
    job_id = client.post("/api/products/MUG-1/sync", headers=headers).get_json()["data"]["job_id"]
    result, failure = run_job(job_id)
    assert result is None and failure.code == "LISTING_PRICE_MISSING"
    assert not failure.retryable
    assert {m["status"] for m in failure.details["marketplaces"]} == {"held"}
    assert SyncAttempt.select().count() == 0
    product = client.get("/api/products/MUG-1", headers=headers).get_json()["data"]
    assert [
        (x["marketplace"], x["price"], x["sync_status"], x["hold_reason"], x["external_id"])
        for x in product["listings"]
    ] == [
        ("amazon", None, "held", "price_missing", None),
        ("ebay", None, "held", "price_missing", None),
    ]
    price_listing(client, headers, "MUG-1", "amazon", 7.25)
    price_listing(client, headers, "MUG-1", "ebay", 7.5)
    job_id = client.post("/api/products/MUG-1/sync", headers=headers).get_json()["data"]["job_id"]
    result, failure = run_job(job_id)
    assert failure is None, failure and failure.message
    assert (result["succeeded"], result["failed"]) == (2, 0)
    product = client.get("/api/products/MUG-1", headers=headers).get_json()["data"]
    listings = {item["marketplace"]: item for item in product["listings"]}
    assert set(listings) == {"amazon", "ebay"}
    amazon = listings["amazon"]
    assert amazon["external_id"].startswith("SBX-") and amazon["status"] == "active"
    assert amazon["price"] == 7.25 and listings["ebay"]["price"] == 7.5  # the prices set
    assert amazon["hold_reason"] is None and amazon["fulfilled_by"] == "merchant"
    assert amazon["quantity"] == 500  # available stock
    assert amazon["last_synced_at"].endswith("Z")
    history = client.get("/api/marketplaces/sync-history?sku=MUG-1", headers=headers).get_json()
    assert history["meta"]["total"] == 2
    assert {h["resource_type"] for h in history["data"]} == {"product"}
    page = client.get(
        "/api/marketplaces/sync-history?sku=MUG-1&limit=1&fields=status", headers=headers
    ).get_json()
    assert page["data"][0] == {"id": page["data"][0]["id"], "status": "succeeded"}
    assert page["meta"]["nextCursor"]
    assert {h["operation"] for h in history["data"]} == {"push_product"}
    assert {h["status"] for h in history["data"]} == {"succeeded"}
    # a second sync updates the listings in place and keeps the price
    Listing.update(price=9.99).where(Listing.marketplace == "amazon").execute()
    job_id = client.post(
        "/api/products/MUG-1/sync", json={"marketplaces": ["amazon"]}, headers=headers
    ).get_json()["data"]["job_id"]
    run_job(job_id)
    assert Listing.select().count() == 2
    assert float(Listing.get(Listing.marketplace == "amazon").price) == 9.99
    assert (
        client.get("/api/products?marketplace=ebay", headers=headers).get_json()["meta"]["total"]
        == 1
    )


def test_sync_job_rejected_push_is_recorded(client, headers, tenant, stocked):
    connect(tenant, "amazon", settings={"initial_orders": 0})
    response = client.post(
        "/api/products", json=product_body(sku="NO-GTIN", gtin=None), headers=headers
    )
    assert response.status_code == 201
    price_listing(client, headers, "NO-GTIN", "amazon")
    job_id = client.post("/api/products/NO-GTIN/sync", headers=headers).get_json()["data"]["job_id"]
    result, failure = run_job(job_id)
    assert result is None
    assert failure.code == "MARKETPLACE_REJECTION" and failure.retryable is False
    assert failure.details["marketplaces"][0]["error"]["code"] == "MARKETPLACE_REJECTION"
    assert Listing.get().external_id is None  # the listing as its price made it
    (attempt,) = SyncAttempt.select().where(SyncAttempt.sku == "NO-GTIN")
    assert (attempt.status, attempt.error_code) == ("rejected", "MISSING_GTIN")
    history = client.get(
        "/api/marketplaces/sync-history?resource_type=product&status=rejected", headers=headers
    ).get_json()
    assert [h["sku"] for h in history["data"]] == ["NO-GTIN"]


def test_sync_history_list_filters_and_errors(client, headers, tenant, stocked):
    response = client.get("/api/marketplaces/sync-history?status=great", headers=headers)
    assert response.status_code == 422
    response = client.get("/api/marketplaces/sync-history?cursor=zzz", headers=headers)
    assert response.status_code == 400
    response = client.get(
        "/api/marketplaces/sync-history", headers=headers_for(tenant, scopes=["pricing:read"])
    )
    assert response.status_code == 403


def test_sync_history_of_orders_needs_orders_read(client, headers, tenant, stocked):
    connection = connect(tenant, "amazon", settings={"initial_orders": 2})
    _pull(connection)
    price_listing(client, headers, "MUG-1", "amazon")
    job_id = client.post("/api/products/MUG-1/sync", headers=headers).get_json()["data"]["job_id"]
    run_job(job_id)
    everything = client.get("/api/marketplaces/sync-history", headers=headers).get_json()
    assert {h["resource_type"] for h in everything["data"]} == {"order", "product"}

    def kinds(scopes, query=""):
        response = client.get(
            "/api/marketplaces/sync-history" + query, headers=headers_for(tenant, scopes=scopes)
        )
        return response.status_code, response.get_json()

    status, body = kinds(["marketplaces:read", "products:read"])
    assert status == 200 and {h["resource_type"] for h in body["data"]} == {"product"}
    assert body["meta"]["total"] == 1
    status, body = kinds(["marketplaces:read", "orders:read"])
    assert status == 200 and {h["resource_type"] for h in body["data"]} == {"order"}
    status, body = kinds(["marketplaces:read"])
    assert status == 200 and body["data"] == [] and body["meta"]["total"] == 0
    for query in ("?resource_type=order", "?order_id=ord_x"):
        status, body = kinds(["marketplaces:read", "products:read"], query)
        assert status == 403 and body["error"]["details"]["required_scope"] == "orders:read"
    status, body = kinds(["products:read", "orders:read"])
    assert status == 403 and body["error"]["details"]["required_scope"] == "marketplaces:read"
