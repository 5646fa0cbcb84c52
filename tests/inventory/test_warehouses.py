"""Warehouses: the API (list, create, get, update) and ``commerce-api warehouses``."""

import json

import pytest

from commerce_api.cli import cli
from commerce_api.inventory.models import Warehouse
from tests.support.factories import create_product, headers_for, make_tenant
from tests.support.inventory_helpers import (
    make_marketplace_warehouse,
    make_warehouse,
    put_stock,
    set_stock,
    snapshot,
)


def error_code(response):
    return response.get_json()["error"]["code"]


def test_create_and_list_warehouses(client, headers, tenant):
    main = make_warehouse(client, headers, name="Main warehouse", address="1 Road")
    assert main["id"].startswith("wh_")
    assert {k: main[k] for k in ("name", "address", "type", "marketplace")} == {
        "name": "Main warehouse",
        "address": "1 Road",
        "type": "own",
        "marketplace": None,
    }
    assert main["is_active"] is True and main["is_readonly"] is False
    fba = make_marketplace_warehouse(tenant.id, kind="FBA", marketplace="amazon")
    fbs = make_marketplace_warehouse(tenant.id, kind="FBS", marketplace="ozon")
    make_marketplace_warehouse(make_tenant().id, kind="FBA")  # another tenant's
    response = client.get("/api/inventory/warehouses", headers=headers)
    assert response.status_code == 200
    body = response.get_json()
    assert [w["id"] for w in body["data"]] == [main["id"], fba["id"], fbs["id"]]
    assert body["meta"]["total"] == 3 and body["meta"]["nextCursor"] is None
    listed_fba = body["data"][1]
    assert (listed_fba["type"], listed_fba["marketplace"], listed_fba["is_readonly"]) == (
        "FBA",
        "amazon",
        True,
    )
    body = client.get("/api/inventory/warehouses?type=FBS", headers=headers).get_json()
    assert [w["id"] for w in body["data"]] == [fbs["id"]]
    body = client.get("/api/inventory/warehouses?limit=2&fields=name", headers=headers).get_json()
    assert body["data"] == [
        {"id": main["id"], "name": "Main warehouse"},
        {"id": fba["id"], "name": fba["name"]},
    ]
    cursor = body["meta"]["nextCursor"]
    body = client.get(
        f"/api/inventory/warehouses?limit=2&cursor={cursor}", headers=headers
    ).get_json()
    assert [w["id"] for w in body["data"]] == [fbs["id"]]
    response = client.get(f"/api/inventory/warehouses/{fba['id']}", headers=headers)
    assert response.get_json()["data"] == listed_fba


@pytest.mark.parametrize(
    "body",
    [
        {},
        {"name": ""},
        {"name": "x" * 201},
        {"name": "FBA", "type": "FBA"},
        {"name": "FBA", "type": "FBA", "marketplace": "amazon"},
        {"name": "Main", "colour": "red"},
        {"name": "Main", "is_active": "yes"},
        {"name": "Main", "is_active": 1},
        {"name": "Main", "is_readonly": False},
        {"name": "Main", "address": 12},
    ],
)
def test_create_refuses_bad_bodies(client, headers, body):
    before = snapshot()
    response = client.post("/api/inventory/warehouses", json=body, headers=headers)
    assert response.status_code == 422, response.get_json()
    assert error_code(response) == "VALIDATION_ERROR"
    assert snapshot() == before


def test_warehouse_scopes_and_isolation(client, headers, tenant):
    main = make_warehouse(client, headers)
    reader = headers_for(tenant, scopes=("inventory:read",))
    response = client.post("/api/inventory/warehouses", json={"name": "X"}, headers=reader)
    assert response.status_code == 403 and error_code(response) == "INSUFFICIENT_SCOPE"
    response = client.patch(
        f"/api/inventory/warehouses/{main['id']}", json={"name": "Y"}, headers=reader
    )
    assert response.status_code == 403
    other = headers_for()
    assert client.get("/api/inventory/warehouses", headers=other).get_json()["data"] == []
    for method in ("get", "patch"):
        response = getattr(client, method)(
            f"/api/inventory/warehouses/{main['id']}", json={"name": "Mine"}, headers=other
        )
        assert response.status_code == 404 and error_code(response) == "WAREHOUSE_NOT_FOUND"
    assert Warehouse.get_by_id(main["id"]).name == "Main warehouse"


def test_update_own_warehouse(client, headers):
    main = make_warehouse(client, headers)
    url = f"/api/inventory/warehouses/{main['id']}"
    response = client.patch(url, json={"name": "Central", "address": None}, headers=headers)
    assert response.status_code == 200
    updated = response.get_json()["data"]
    assert (updated["name"], updated["address"]) == ("Central", None)
    empty = client.patch(url, json={}, headers=headers)  # nothing to change: 400
    assert empty.status_code == 400 and empty.get_json()["error"]["code"] == "EMPTY_PATCH"
    assert client.get(url, headers=headers).get_json()["data"]["name"] == "Central"
    for bad in ({"name": ""}, {"type": "FBA"}, {"is_active": "no"}, {"id": "wh_x"}):
        before = snapshot()
        response = client.patch(url, json=bad, headers=headers)
        assert response.status_code == 422 and error_code(response) == "VALIDATION_ERROR"
        assert snapshot() == before
    response = client.patch(
        "/api/inventory/warehouses/wh_nope", json={"name": "A"}, headers=headers
    )
    assert response.status_code == 404 and error_code(response) == "WAREHOUSE_NOT_FOUND"


def test_marketplace_warehouses_are_read_only(client, headers, tenant):
    fba = make_marketplace_warehouse(tenant.id)
    before = snapshot()
    response = client.patch(
        f"/api/inventory/warehouses/{fba['id']}", json={"name": "Mine now"}, headers=headers
    )
    assert response.status_code == 403 and error_code(response) == "READONLY_WAREHOUSE"
    assert snapshot() == before


def test_deactivation_needs_an_empty_warehouse(client, headers, tenant):
    create_product(client, headers, sku="MUG-1")
    main = make_warehouse(client, headers)
    url = f"/api/inventory/warehouses/{main['id']}"
    set_stock(client, headers, "MUG-1", main["id"], 4)
    before = snapshot()
    response = client.patch(url, json={"is_active": False}, headers=headers)
    assert response.status_code == 409 and error_code(response) == "WAREHOUSE_NOT_EMPTY"
    assert snapshot() == before
    set_stock(client, headers, "MUG-1", main["id"], 0, "transfer_out")
    response = client.patch(url, json={"is_active": False}, headers=headers)
    assert response.status_code == 200 and response.get_json()["data"]["is_active"] is False
    body = client.get("/api/inventory/warehouses?is_active=false", headers=headers).get_json()
    assert [w["id"] for w in body["data"]] == [main["id"]]
    before = snapshot()
    response = put_stock(client, headers, "MUG-1", main["id"], 3)
    assert response.status_code == 409 and error_code(response) == "WAREHOUSE_INACTIVE"
    assert snapshot() == before
    response = client.patch(url, json={"is_active": True}, headers=headers)
    assert response.get_json()["data"]["is_active"] is True
    assert set_stock(client, headers, "MUG-1", main["id"], 3)["total_on_hand"] == 3


# -- the CLI -----------------------------------------------------------------------------


def test_cli_creates_warehouses(runner, tenant, client, headers):
    result = runner.invoke(
        cli,
        args=[
            "warehouses",
            "create",
            "--tenant",
            tenant.id,
            "--name",
            "Amazon FBA EU",
            "--type",
            "FBA",
            "--marketplace",
            "amazon",
            "--json",
        ],
    )
    assert result.exit_code == 0, result.output
    created = json.loads(result.output)
    assert created["id"].startswith("wh_")
    assert (created["type"], created["marketplace"], created["is_readonly"]) == (
        "FBA",
        "amazon",
        True,
    )
    result = runner.invoke(
        cli,
        args=["warehouses", "create", "--tenant", tenant.id, "--name", "Main", "--address", "1 Rd"],
    )
    assert result.exit_code == 0 and "wh_" in result.output
    listed = client.get("/api/inventory/warehouses", headers=headers).get_json()["data"]
    assert [(w["name"], w["type"], w["address"]) for w in listed] == [
        ("Amazon FBA EU", "FBA", None),
        ("Main", "own", "1 Rd"),
    ]
    result = runner.invoke(cli, args=["warehouses", "list", "--tenant", tenant.id, "--json"])
    assert [w["name"] for w in json.loads(result.output)] == ["Amazon FBA EU", "Main"]


@pytest.mark.parametrize(
    "extra, message",
    [
        (["--type", "FBS"], "marketplace"),
        (["--type", "own", "--marketplace", "amazon"], "marketplace"),
        (["--type", "warehouse"], "Invalid value"),
    ],
)
def test_cli_refuses_bad_warehouses(runner, tenant, extra, message):
    before = snapshot()
    result = runner.invoke(
        cli, args=["warehouses", "create", "--tenant", tenant.id, "--name", "W", *extra]
    )
    assert result.exit_code != 0
    assert message in result.output
    assert snapshot() == before


def test_cli_refuses_unknown_tenant(runner, app):
    result = runner.invoke(
        cli,
        args=["warehouses", "create", "--tenant", "6b0f7c0e-0000-4000-8000-000000000000"]
        + ["--name", "W"],
    )
    assert result.exit_code != 0 and "RESOURCE_NOT_FOUND" in result.output
    assert Warehouse.select().count() == 0
