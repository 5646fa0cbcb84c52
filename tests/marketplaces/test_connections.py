"""A connection's lifecycle: PATCH and DELETE /api/marketplaces/:id, and the CLI's
``marketplaces update`` / ``marketplaces disconnect``."""

import json
import os
import re

import pytest

from commerce_api.auth.models import SCOPES
from commerce_api.cli import cli
from commerce_api.inventory.models import Stock
from commerce_api.marketplaces import gateway
from commerce_api.marketplaces.models import MarketplaceConnection, SyncAttempt
from commerce_api.orders.pulls import pull_one
from commerce_api.products.models import Listing
from tests.support.factories import headers_for
from tests.support.orders_support import connect, make_own_warehouse, make_products, stock_up
from tests.support.products_support import price_listing
from tests.support.servers import ROOT

PUBLIC_URL = "https://93.184.216.34/adapter"  # a public address literal: no DNS needed


@pytest.fixture
def http_connection(tenant):
    return connect(tenant, "mirakl", "http", base_url=PUBLIC_URL, allow_private=False)


def row(connection):
    return MarketplaceConnection.get_by_id(connection.id).__data__.copy()


def test_patch_changes_url_token_and_status(client, headers, http_connection):
    url = f"/api/marketplaces/{http_connection.id}"
    response = client.patch(
        url,
        json={
            "base_url": "https://93.184.216.35/v2/",
            "api_token": "new-token",
            "status": "disabled",
        },
        headers=headers,
    )
    assert response.status_code == 200, response.get_json()
    data = response.get_json()["data"]
    assert data["base_url"] == "https://93.184.216.35/v2"
    assert (data["status"], data["has_api_token"]) == ("disabled", True)
    assert "new-token" not in response.get_data(as_text=True)
    stored = MarketplaceConnection.get_by_id(http_connection.id)
    assert stored.api_token == "new-token" and stored.allow_private is False
    response = client.patch(url, json={"api_token": None, "status": "active"}, headers=headers)
    assert response.get_json()["data"]["has_api_token"] is False
    assert client.get(url, headers=headers).get_json()["data"]["status"] == "active"


def test_patch_sandbox_settings_merge(client, headers, tenant):
    connection = connect(tenant, "amazon")
    response = client.patch(
        f"/api/marketplaces/{connection.id}",
        json={"settings": {"orders_per_pull": 7}},
        headers=headers,
    )
    assert response.status_code == 200, response.get_json()
    settings = response.get_json()["data"]["settings"]
    assert settings["orders_per_pull"] == 7 and settings["initial_orders"] == 8


@pytest.mark.parametrize(
    "body",
    [
        {"base_url": "http://127.0.0.1:8080"},  # private: 422 as on create
        {"base_url": "http://10.1.2.3"},
        {"base_url": "ftp://93.184.216.34"},
        {"base_url": "https://user:pw@93.184.216.34"},
        {"base_url": ""},
        {"status": "paused"},
        {"status": "deleted"},
        {"settings": {"initial_orders": 3}},  # the http connector takes no settings
        {"api_token": ""},
        {"connector": "sandbox"},
        {"marketplace": "ebay"},
    ],
)
def test_bad_patch_is_refused_and_changes_nothing(client, headers, http_connection, body):
    before = row(http_connection)
    response = client.patch(f"/api/marketplaces/{http_connection.id}", json=body, headers=headers)
    assert response.status_code == 422, response.get_json()
    assert response.get_json()["error"]["code"] == "VALIDATION_ERROR"
    assert row(http_connection) == before


def test_sandbox_takes_no_url_or_token(client, headers, tenant):
    connection = connect(tenant, "amazon")
    for body in ({"base_url": PUBLIC_URL}, {"api_token": "x"}):
        response = client.patch(f"/api/marketplaces/{connection.id}", json=body, headers=headers)
        assert response.status_code == 422


def test_unknown_connection_scope_and_tenant(client, headers, tenant, http_connection):
    url = f"/api/marketplaces/{http_connection.id}"
    assert client.patch("/api/marketplaces/mkc_nope", json={"status": "disabled"},
                        headers=headers).status_code == 404  # fmt: skip
    assert client.delete("/api/marketplaces/mkc_nope", headers=headers).status_code == 404
    reader = headers_for(tenant, scopes=["marketplaces:read"])
    assert client.patch(url, json={"status": "disabled"}, headers=reader).status_code == 403
    assert client.delete(url, headers=reader).status_code == 403
    other = headers_for(scopes=["marketplaces:read", "marketplaces:write"])
    assert client.patch(url, json={"status": "disabled"}, headers=other).status_code == 404
    assert client.delete(url, headers=other).status_code == 404
    assert row(http_connection)["status"] == "active"


def test_delete_stops_pulls_and_keeps_listings_and_history(app, client, headers, tenant):
    make_products(client, headers, "MUG-1")
    stock_up(tenant, make_own_warehouse(tenant), {"MUG-1": 4})
    connection = connect(tenant, "amazon")
    price_listing(client, headers, "MUG-1", "amazon")
    response = client.post("/api/products/MUG-1/sync", headers=headers)
    from tests.support.orders_support import run_job

    run_job(response.get_json()["data"]["job_id"])
    assert Listing.select().count() == 1 and SyncAttempt.select().count() == 1
    response = client.delete(f"/api/marketplaces/{connection.id}", headers=headers)
    assert response.status_code == 204 and response.get_data() == b""
    assert client.get(f"/api/marketplaces/{connection.id}", headers=headers).status_code == 404
    assert Listing.select().count() == 1 and SyncAttempt.select().count() == 1
    with app.app_context():
        assert pull_one(tenant.id, connection.id) is None  # a queued pull finds nothing
    # the marketplace can be connected again
    assert connect(tenant, "amazon").id != connection.id


def test_a_changed_url_gets_a_new_keep_alive_pool(client, headers, http_connection):
    first = gateway.session_for(http_connection)
    client.patch(
        f"/api/marketplaces/{http_connection.id}",
        json={"base_url": "https://93.184.216.35"},
        headers=headers,
    )
    assert gateway.session_for(MarketplaceConnection.get_by_id(http_connection.id)) is not first


def cli_run(runner, *args):
    result = runner.invoke(cli, ["marketplaces", *args])
    return result


def test_cli_update_and_disconnect(runner, tenant):
    connect(tenant, "local", "http", base_url="http://127.0.0.1:9")
    result = cli_run(
        runner, "update", "--tenant", tenant.id, "--marketplace", "local",
        "--base-url", "http://127.0.0.1:10", "--status", "disabled", "--json",
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert (data["base_url"], data["status"]) == ("http://127.0.0.1:10", "disabled")
    assert MarketplaceConnection.get().allow_private is True  # the operator may
    result = cli_run(runner, "update", "--tenant", tenant.id, "--marketplace", "local")
    assert result.exit_code != 0 and "nothing to change" in result.output
    result = cli_run(
        runner, "update", "--tenant", tenant.id, "--marketplace", "local", "--status", "gone"
    )
    assert result.exit_code != 0
    result = cli_run(runner, "disconnect", "--tenant", tenant.id, "--marketplace", "local")
    assert result.exit_code == 0, result.output
    assert MarketplaceConnection.select().count() == 0
    result = cli_run(runner, "disconnect", "--tenant", tenant.id, "--marketplace", "local")
    assert result.exit_code != 0 and "CONNECTION_NOT_FOUND" in result.output


def test_the_connector_doc_names_the_scope_the_server_asks(client):
    """docs/connector-http.md tells an integrator which scope connects a marketplace."""
    path = os.path.join(ROOT, "docs", "connector-http.md")
    with open(path) as handle:
        text = " ".join(handle.read().split())
    found = re.search(r"`POST /api/marketplaces` with .*?\(scope `([a-z:-]+)`\)", text)
    assert found, "the doc no longer says which scope POST /api/marketplaces needs"
    named = found.group(1)
    body = {"marketplace": "amazon", "connector": "sandbox"}
    others = [scope for scope in SCOPES if scope != named]
    refused = client.post("/api/marketplaces", json=body, headers=headers_for(scopes=others))
    assert refused.status_code == 403
    assert refused.get_json()["error"]["details"]["required_scope"] == named
    done = client.post("/api/marketplaces", json=body, headers=headers_for(scopes=[named]))
    assert done.status_code == 201, done.get_json()


@pytest.mark.parametrize(
    "fba_skus",
    ["MUG-1", [1], [""], ["A" * 65], ["MUG-1", "MUG-1"], [f"S-{n}" for n in range(201)]],
)
def test_sandbox_fba_skus_must_be_a_list_of_skus(client, headers, fba_skus):
    body = {"marketplace": "amazon", "connector": "sandbox", "settings": {"fba_skus": fba_skus}}
    response = client.post("/api/marketplaces", json=body, headers=headers)
    assert response.status_code == 422, response.get_json()
    assert "fba_skus" in json.dumps(response.get_json()["error"]["details"])
    assert MarketplaceConnection.select().count() == 0


def test_a_sandbox_with_fba_skus_holds_and_ships_only_those(client, headers, tenant):
    from commerce_api.inventory.services import create_warehouse

    make_products(client, headers, "MUG-1", "TOWEL-1", "PEN-1")
    stock_up(tenant, make_own_warehouse(tenant), {"TOWEL-1": 50, "PEN-1": 50})
    fba = create_warehouse(tenant.id, {"name": "FBA", "type": "FBA", "marketplace": "amazon"})
    settings = {"initial_orders": 30, "fba_skus": ["MUG-1"]}
    connection = connect(tenant, "amazon", settings=settings)
    assert connection.settings["fba_skus"] == ["MUG-1"]
    pull_one(tenant.id, connection.id)
    orders = client.get("/api/orders?limit=200", headers=headers).get_json()["data"]
    assert orders
    for order in orders:
        skus = {line["sku"] for line in order["line_items"]}
        assert (skus == {"MUG-1"}) == (order["fulfillment_method"] == "FBA"), order
    # the sandbox's FBA stock of MUG-1 (10 to 60, seeded by the connection's id) less what
    # its FBA orders sold: 30 orders may sell it out, and a SKU the marketplace no longer
    # holds is the merchant's to fulfil
    held = Stock.get_or_none((Stock.warehouse == fba["id"]) & (Stock.sku == "MUG-1"))
    mug = "marketplace" if held is not None and held.on_hand > 0 else "merchant"
    for sku, fulfilled_by in (("MUG-1", mug), ("TOWEL-1", "merchant")):
        price_listing(client, headers, sku, "amazon")
        listing = client.get(f"/api/products/{sku}", headers=headers).get_json()["data"]
        assert listing["listings"][0]["fulfilled_by"] == fulfilled_by, sku
    record = client.get("/api/inventory/TOWEL-1", headers=headers).get_json()["data"]
    assert all(w.get("type", "own") == "own" for w in record["warehouses"])
