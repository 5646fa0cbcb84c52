"""The commerce-api command: init-db, tenants, keys, demo."""

import json
import os
import stat
import uuid

import pytest

from commerce_api.auth.models import SCOPES, ApiKey, Tenant
from commerce_api.cli import cli
from commerce_api.events.models import Event
from commerce_api.products.models import Product
from commerce_api.timeutil import format_ms, now_ms
from tests.support import dbutil
from tests.support.dbutil import BASE_URL
from tests.support.factories import auth_headers, make_key, make_tenant, snapshot


def run(runner, *args):
    return runner.invoke(cli, list(args))


def one_json_object(result):
    """stdout is exactly one JSON object and nothing else."""
    assert result.exit_code == 0, result.output
    lines = result.stdout.strip().splitlines()
    assert len(lines) == 1, result.stdout
    payload = json.loads(lines[0])
    assert isinstance(payload, dict)
    return payload


def refused(runner, *args, exit_code=1, message=None):
    before = snapshot()
    result = run(runner, *args)
    assert result.exit_code == exit_code, result.output
    assert result.stdout == ""
    if message:
        assert message in result.stderr, result.stderr
    assert snapshot() == before
    return result


# init-db ----------------------------------------------------------------------------------


def test_init_db_creates_the_schema_and_is_idempotent(make_app, tmp_path):
    url = dbutil.create_database(BASE_URL, str(tmp_path))
    app = make_app(DATABASE_URL=url)
    try:
        runner = app.test_cli_runner()
        first = run(runner, "init-db")
        assert first.exit_code == 0, first.output
        assert first.stdout == ""
        applied = int(first.stderr.split("(")[1].split()[0])
        assert applied >= 2
        database = app.extensions["commerce"]["database"]
        with database.connection_context():
            tables = set(database.get_tables())
        assert {"tenant", "api_key", "product", "listing", "event", "schema_migration"} <= tables
        second = run(runner, "init-db")
        assert second.exit_code == 0
        assert "(0 migration(s) applied)" in second.stderr
        with database.connection_context():
            assert set(database.get_tables()) == tables
    finally:
        dbutil.drop_app_database(app, BASE_URL, url)


def test_init_db_on_the_current_schema_applies_nothing(runner):
    result = run(runner, "init-db")
    assert result.exit_code == 0
    assert "(0 migration(s) applied)" in result.stderr


# tenants ----------------------------------------------------------------------------------


def test_tenants_create_json(runner):
    payload = one_json_object(run(runner, "tenants", "create", "--name", "Acme", "--json"))
    assert set(payload) == {"id", "name", "plan"}
    assert str(uuid.UUID(payload["id"])) == payload["id"]
    assert (payload["name"], payload["plan"]) == ("Acme", "starter")
    tenant = Tenant.get_by_id(payload["id"])
    assert (tenant.name, tenant.plan) == ("Acme", "starter")


@pytest.mark.parametrize("plan", ["starter", "growth", "enterprise"])
def test_tenants_create_with_a_plan(runner, plan):
    payload = one_json_object(
        run(runner, "tenants", "create", "--name", "P", "--plan", plan, "--json")
    )
    assert payload["plan"] == plan == Tenant.get_by_id(payload["id"]).plan


def test_tenants_create_plain_output_names_the_id(runner):
    result = run(runner, "tenants", "create", "--name", "Plain")
    assert result.exit_code == 0
    tenant = Tenant.get(Tenant.name == "Plain")
    assert tenant.id in result.stdout


@pytest.mark.parametrize(
    "args,exit_code",
    [
        (["--name", "X", "--plan", "platinum"], 2),
        (["--plan", "growth"], 2),  # no name
        (["--name", ""], 1),
        (["--name", "   "], 1),
        (["--name", "x" * 201], 1),
    ],
)
def test_tenants_create_refuses_bad_input(runner, args, exit_code):
    refused(runner, "tenants", "create", *args, exit_code=exit_code)


def test_tenants_set_plan(runner, tenant):
    payload = one_json_object(
        run(runner, "tenants", "set-plan", "--tenant", tenant.id, "--plan", "growth", "--json")
    )
    assert payload == {"id": tenant.id, "name": tenant.name, "plan": "growth"}
    assert Tenant.get_by_id(tenant.id).plan == "growth"


def test_tenants_set_plan_refuses_bad_input(runner, tenant):
    refused(
        runner,
        "tenants",
        "set-plan",
        "--tenant",
        str(uuid.uuid4()),
        "--plan",
        "growth",
        message="RESOURCE_NOT_FOUND",
    )
    refused(runner, "tenants", "set-plan", "--tenant", tenant.id, "--plan", "gold", exit_code=2)


# keys create ------------------------------------------------------------------------------


def test_keys_create_json_and_the_key_works(client, runner, tenant):
    payload = one_json_object(
        run(
            runner,
            "keys",
            "create",
            "--tenant",
            tenant.id,
            "--name",
            "ci",
            "--scopes",
            "all",
            "--json",
        )
    )
    assert payload["id"].startswith("key_")
    assert payload["key"].startswith("ck_") and len(payload["key"]) >= 35
    assert payload["name"] == "ci" and payload["tenant_id"] == tenant.id
    assert payload["scopes"] == list(SCOPES)
    assert payload["expires_at"] is None and payload["revoked_at"] is None
    assert payload["allowed_ips"] == []
    assert payload["key"].startswith(payload["prefix"])
    row = ApiKey.get_by_id(payload["id"])
    assert payload["key"] not in json.dumps(row.__data__)  # only a hash is stored
    response = client.get("/api/products", headers=auth_headers(tenant, payload["key"]))
    assert response.status_code == 200


@pytest.mark.parametrize(
    "scopes,expected",
    [
        ("products:read", ["products:read"]),
        ("products:write,products:read", ["products:read", "products:write"]),
        ("products:read, orders:read", ["products:read", "orders:read"]),
        ("products:read,products:read", ["products:read"]),
    ],
)
def test_keys_create_scope_lists(client, runner, tenant, scopes, expected):
    payload = one_json_object(
        run(
            runner,
            "keys",
            "create",
            "--tenant",
            tenant.id,
            "--name",
            "k",
            "--scopes",
            scopes,
            "--json",
        )
    )
    assert payload["scopes"] == expected
    headers = auth_headers(tenant, payload["key"])
    status = client.post("/api/products", json={"sku": "K", "title": "t"}, headers=headers)
    assert status.status_code == (201 if "products:write" in expected else 403)


@pytest.mark.parametrize(
    "extra,message",
    [
        (["--scopes", "products:read,bogus"], "bogus"),
        (["--scopes", ""], "scopes"),
        (["--scopes", ","], "scopes"),
        (["--scopes", "PRODUCTS:READ"], "PRODUCTS:READ"),
        (["--scopes", "all", "--allow-ip", "not-a-cidr"], "not-a-cidr"),
        (["--scopes", "all", "--allow-ip", "10.0.0.0/33"], "10.0.0.0/33"),
        (["--scopes", "all", "--expires-at", "tomorrow"], "expires-at"),
        (["--scopes", "all", "--expires-at", "2020-01-01T00:00:00Z"], "future"),
        (["--scopes", "all", "--rate-limit-per-minute", "100"], "enterprise"),
        (["--scopes", "all", "--rate-limit-per-hour", "100"], "enterprise"),
        (["--scopes", "all", "--name", ""], "name"),
    ],
)
def test_keys_create_refuses_bad_input(runner, tenant, extra, message):
    args = ["keys", "create", "--tenant", tenant.id, "--name", "k", *extra]
    refused(runner, *args, message=message)


def test_keys_create_refuses_bad_numbers(runner):
    tenant = make_tenant("enterprise")
    for flag in ("--rate-limit-per-minute", "--rate-limit-per-hour"):
        for value in ("0", "-1", "many"):
            refused(
                runner,
                "keys",
                "create",
                "--tenant",
                tenant.id,
                "--name",
                "k",
                "--scopes",
                "all",
                flag,
                value,
                exit_code=2,
            )


def test_keys_create_unknown_tenant(runner):
    refused(
        runner,
        "keys",
        "create",
        "--tenant",
        str(uuid.uuid4()),
        "--name",
        "k",
        "--scopes",
        "all",
        message="RESOURCE_NOT_FOUND",
    )


def test_keys_create_expiry(runner, tenant):
    when = format_ms(now_ms() + 86_400_000)
    payload = one_json_object(
        run(
            runner,
            "keys",
            "create",
            "--tenant",
            tenant.id,
            "--name",
            "k",
            "--scopes",
            "all",
            "--expires-at",
            when,
            "--json",
        )
    )
    assert payload["expires_at"] == when
    # a date alone, or an offset, is ISO 8601 too
    payload = one_json_object(
        run(
            runner,
            "keys",
            "create",
            "--tenant",
            tenant.id,
            "--name",
            "k",
            "--scopes",
            "all",
            "--expires-at",
            "2099-01-01",
            "--json",
        )
    )
    assert payload["expires_at"] == "2099-01-01T00:00:00.000Z"
    payload = one_json_object(
        run(
            runner,
            "keys",
            "create",
            "--tenant",
            tenant.id,
            "--name",
            "k",
            "--scopes",
            "all",
            "--expires-at",
            "2099-01-01T02:00:00+02:00",
            "--json",
        )
    )
    assert payload["expires_at"] == "2099-01-01T00:00:00.000Z"


def test_keys_create_allow_ip(runner, tenant):
    payload = one_json_object(
        run(
            runner,
            "keys",
            "create",
            "--tenant",
            tenant.id,
            "--name",
            "k",
            "--scopes",
            "all",
            "--allow-ip",
            "10.1.2.3/8",
            "--allow-ip",
            "192.168.1.7",
            "--allow-ip",
            "2001:db8::/32",
            "--json",
        )
    )
    assert payload["allowed_ips"] == ["10.0.0.0/8", "192.168.1.7/32", "2001:db8::/32"]


def test_keys_create_rate_limits_for_enterprise_only(runner):
    enterprise = make_tenant("enterprise")
    payload = one_json_object(
        run(
            runner,
            "keys",
            "create",
            "--tenant",
            enterprise.id,
            "--name",
            "k",
            "--scopes",
            "all",
            "--rate-limit-per-minute",
            "5000",
            "--rate-limit-per-hour",
            "200000",
            "--json",
        )
    )
    assert (payload["rate_limit_per_minute"], payload["rate_limit_per_hour"]) == (5000, 200000)
    growth = make_tenant("growth")
    refused(
        runner,
        "keys",
        "create",
        "--tenant",
        growth.id,
        "--name",
        "k",
        "--scopes",
        "all",
        "--rate-limit-per-minute",
        "10",
        message="enterprise",
    )


# keys list and revoke ---------------------------------------------------------------------


def _new_key(runner, tenant, name="k"):
    return one_json_object(
        run(
            runner,
            "keys",
            "create",
            "--tenant",
            tenant.id,
            "--name",
            name,
            "--scopes",
            "all",
            "--json",
        )
    )


def test_keys_list_never_shows_secrets(runner, tenant):
    first, second = _new_key(runner, tenant, "first"), _new_key(runner, tenant, "second")
    other = _new_key(runner, make_tenant(), "other tenant")
    plain = run(runner, "keys", "list", "--tenant", tenant.id)
    assert plain.exit_code == 0
    as_json = run(runner, "keys", "list", "--tenant", tenant.id, "--json")
    assert as_json.exit_code == 0
    for output in (plain.stdout, as_json.stdout):
        assert first["key"] not in output and second["key"] not in output
        assert first["id"] in output and second["id"] in output
        assert other["id"] not in output
    rows = json.loads(as_json.stdout)
    assert [r["name"] for r in rows] == ["first", "second"]
    assert all("key" not in r and "key_hash" not in r for r in rows)
    assert "active" in plain.stdout


def test_keys_list_shows_an_expired_key_as_expired(client, runner, tenant):
    live, lapsed, revoked = (_new_key(runner, tenant, name) for name in ("live", "lapsed", "gone"))
    past = now_ms() - 60_000
    ApiKey.update(expires_at=past).where(ApiKey.id == lapsed["id"]).execute()
    assert run(runner, "keys", "revoke", revoked["id"]).exit_code == 0
    plain = run(runner, "keys", "list", "--tenant", tenant.id)
    assert plain.exit_code == 0, plain.output
    lines = {line.split()[0]: line for line in plain.stdout.splitlines()}
    assert lines[live["id"]].split()[2] == "active"
    assert lines[lapsed["id"]].split()[2:4] == ["expired", format_ms(past)]
    assert lines[revoked["id"]].split()[2] == "revoked"
    rows = json.loads(run(runner, "keys", "list", "--tenant", tenant.id, "--json").stdout)
    assert {r["name"]: r["state"] for r in rows} == {
        "live": "active",
        "lapsed": "expired",
        "gone": "revoked",
    }
    # what the list says is what the API does with the key
    for key, status in ((live, 200), (lapsed, 401), (revoked, 401)):
        response = client.get("/api/products", headers=auth_headers(tenant, key["key"]))
        assert response.status_code == status, key["name"]


def test_tenants_list(runner):
    first, second = make_tenant("growth", "First shop"), make_tenant("starter", "Second shop")
    make_key(first)
    lapsed, _ = make_key(first)
    ApiKey.update(expires_at=now_ms() - 1).where(ApiKey.id == lapsed.id).execute()
    rows = json.loads(run(runner, "tenants", "list", "--json").stdout)
    by_id = {row["id"]: row for row in rows}
    assert by_id[first.id] == {
        "id": first.id,
        "name": "First shop",
        "plan": "growth",
        "created_at": format_ms(first.created_at),
        "active_keys": 1,  # the expired one does not count
    }
    assert by_id[second.id]["active_keys"] == 0 and by_id[second.id]["plan"] == "starter"
    assert len(rows) == Tenant.select().count()
    plain = run(runner, "tenants", "list")
    assert plain.exit_code == 0
    line = next(line for line in plain.stdout.splitlines() if line.startswith(first.id))
    assert "growth" in line and "First shop" in line and "1 active key" in line


def test_keys_list_unknown_tenant(runner):
    refused(runner, "keys", "list", "--tenant", str(uuid.uuid4()), message="RESOURCE_NOT_FOUND")


def test_keys_revoke_then_the_key_is_refused(client, runner, tenant):
    payload = _new_key(runner, tenant)
    headers = auth_headers(tenant, payload["key"])
    assert client.get("/api/products", headers=headers).status_code == 200
    revoked = one_json_object(run(runner, "keys", "revoke", payload["id"], "--json"))
    assert revoked["id"] == payload["id"] and revoked["revoked_at"]
    response = client.get("/api/products", headers=headers)
    assert response.status_code == 401
    assert response.get_json()["error"]["details"]["reason"] == "revoked"
    listed = run(runner, "keys", "list", "--tenant", tenant.id)
    assert "revoked" in listed.stdout
    # revoking again is harmless and keeps the first revocation time
    again = one_json_object(run(runner, "keys", "revoke", payload["id"], "--json"))
    assert again["revoked_at"] == revoked["revoked_at"]


def test_keys_revoke_with_no_auth_cache(make_app, tenant):
    app = make_app(AUTH_CACHE_SECONDS=0)
    client, runner = app.test_client(), app.test_cli_runner()
    payload = _new_key(runner, tenant)
    headers = auth_headers(tenant, payload["key"])
    assert client.get("/api/products", headers=headers).status_code == 200
    assert run(runner, "keys", "revoke", payload["id"]).exit_code == 0
    assert client.get("/api/products", headers=headers).status_code == 401


def test_keys_revoke_unknown_key(runner):
    refused(runner, "keys", "revoke", "key_nope", message="API_KEY_NOT_FOUND")


# demo -------------------------------------------------------------------------------------


@pytest.fixture
def demo_app(make_app, tmp_path):
    app = make_app()
    app.instance_path = str(tmp_path / "instance")
    return app


def test_demo_seeds_once_and_prints_the_same_key(demo_app):
    runner, client = demo_app.test_cli_runner(), demo_app.test_client()
    first = run(runner, "demo")
    assert first.exit_code == 0, first.output
    path = os.path.join(demo_app.instance_path, "demo-credentials.json")
    with open(path) as handle:
        saved = json.load(handle)
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    assert saved["api_key"] in first.stdout and saved["tenant_id"] in first.stdout
    headers = auth_headers(Tenant.get_by_id(saved["tenant_id"]), saved["api_key"])
    listed = client.get("/api/products?limit=200", headers=headers).get_json()
    assert listed["meta"]["total"] >= 10
    counts = (Tenant.select().count(), Product.select().count(), Event.select().count())

    second = run(runner, "demo")
    assert second.exit_code == 0
    assert saved["api_key"] in second.stdout and saved["tenant_id"] in second.stdout
    assert "already" in second.stdout
    assert (Tenant.select().count(), Product.select().count(), Event.select().count()) == counts
    payload = one_json_object(run(runner, "demo", "--json"))
    assert payload["tenant_id"] == saved["tenant_id"] and payload["api_key"] == saved["api_key"]
    assert (Tenant.select().count(), Product.select().count()) == counts[:2]


def test_demo_products_are_like_api_products(demo_app):
    """Demo data goes through the same rules: numbers are numbers in the events too."""
    runner = demo_app.test_cli_runner()
    assert run(runner, "demo").exit_code == 0
    created = Event.select().where(Event.type == "product.created")
    assert created.count() >= 10
    for event in created:
        assert isinstance(event.data["cost_price"], float | int), event.data
    for product in Product.select():
        assert product.status == "active" and product.gtin and product.images


def test_demo_reseeds_when_its_tenant_is_gone(demo_app):
    runner = demo_app.test_cli_runner()
    first = one_json_object(run(runner, "demo", "--json"))
    Tenant.delete().where(Tenant.id == first["tenant_id"]).execute()
    second = one_json_object(run(runner, "demo", "--json"))
    assert second["tenant_id"] != first["tenant_id"]
    assert Tenant.get_or_none(Tenant.id == second["tenant_id"]) is not None


def test_keys_create_refuses_rate_limits_beyond_what_is_stored(runner):
    tenant = make_tenant("enterprise")
    for flag in ("--rate-limit-per-minute", "--rate-limit-per-hour"):
        refused(
            runner,
            "keys",
            "create",
            "--tenant",
            tenant.id,
            "--name",
            "k",
            "--scopes",
            "all",
            flag,
            "3000000000",
            exit_code=2,
        )


def test_demo_recovers_from_an_unreadable_credentials_file(demo_app):
    runner = demo_app.test_cli_runner()
    os.makedirs(demo_app.instance_path, exist_ok=True)
    path = os.path.join(demo_app.instance_path, "demo-credentials.json")
    for garbage in ("not json", "[]", '{"api_key": "ck_x"}'):
        with open(path, "w") as handle:
            handle.write(garbage)
        payload = one_json_object(run(runner, "demo", "--json"))
        assert Tenant.get_or_none(Tenant.id == payload["tenant_id"]) is not None
