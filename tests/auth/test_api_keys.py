"""API keys over HTTP (/api/api-keys): the secret once, last use, narrowing, revocation,
no escalation, the Enterprise-only override, user JWTs, tenant isolation."""

import pytest

from commerce_api.auth.models import ApiKey
from commerce_api.auth.services import update_key
from commerce_api.db import db
from commerce_api.http.idempotency import IdempotencyRecord
from commerce_api.timeutil import format_ms, now_ms
from tests.support.auth_support import bearer, token
from tests.support.factories import (
    auth_headers,
    headers_for,
    make_key,
    make_tenant,
    snapshot,
    walk_pages,
)

LIST = "/api/api-keys"


def create(client, headers, status=201, **body):
    body.setdefault("name", "ERP sync")
    body.setdefault("scopes", ["orders:read"])
    response = client.post(LIST, json=body, headers=headers)
    assert response.status_code == status, response.get_json()
    return response.get_json()


def error_of(response):
    return response.get_json()["error"]


def refused(client, method, path, headers, status, code, **kwargs):
    """The request gets ``status``/``code`` and changes nothing."""
    before = snapshot()
    response = client.open(path, method=method, headers=headers, **kwargs)
    assert response.status_code == status, response.get_json()
    assert error_of(response)["code"] == code
    assert snapshot() == before
    return error_of(response)


def refused_create(client, headers, status, code, **body):
    """A POST /api/api-keys with ``body`` gets ``status``/``code`` and creates nothing."""
    return refused(client, "POST", LIST, headers, status, code, json=body)


def test_create_shows_the_key_once_and_it_works_at_once(client, tenant, headers):
    response = client.post(
        LIST, json={"name": "ERP sync", "scopes": ["orders:read", "products:read"]}, headers=headers
    )
    assert response.status_code == 201
    created = response.get_json()["data"]
    assert created["key"].startswith("ck_") and len(created["key"]) >= 35
    assert created["id"].startswith("key_")
    assert response.headers["Location"] == f"{LIST}/{created['id']}"
    assert created["scopes"] == ["products:read", "orders:read"]
    assert created["last_used_at"] is None and created["revoked_at"] is None
    assert created["prefix"] == created["key"][:10]
    new_headers = auth_headers(tenant, created["key"])
    assert client.get("/api/orders", headers=new_headers).status_code == 200
    assert client.get("/api/products", headers=new_headers).status_code == 200
    assert error_of(client.get("/api/inventory", headers=new_headers))["code"] == (
        "INSUFFICIENT_SCOPE"
    )

    listed = client.get(LIST, headers=headers).get_json()
    assert listed["meta"]["total"] == 2  # the caller's key and the new one
    one = client.get(f"{LIST}/{created['id']}", headers=headers).get_json()["data"]
    for item in [*listed["data"], one]:
        assert "key" not in item
        assert created["key"] not in str(item)
    assert {item["id"] for item in listed["data"]} >= {created["id"]}


def test_last_used_at_is_set_on_use_and_written_at_most_once_a_minute(client, tenant, headers):
    created = create(client, headers)["data"]
    before = now_ms()
    new_headers = auth_headers(tenant, created["key"])
    assert client.get("/api/orders", headers=new_headers).status_code == 200
    shown = client.get(f"{LIST}/{created['id']}", headers=headers).get_json()["data"]
    assert shown["last_used_at"] is not None
    assert format_ms(before - 1000) <= shown["last_used_at"] <= format_ms(now_ms())
    stored = ApiKey.get_by_id(created["id"]).last_used_at
    for _ in range(3):
        assert client.get("/api/orders", headers=new_headers).status_code == 200
    assert ApiKey.get_by_id(created["id"]).last_used_at == stored  # within the minute
    listed = client.get(LIST, headers=headers).get_json()["data"]
    assert {item["id"]: item["last_used_at"] for item in listed}[created["id"]] == format_ms(stored)


def test_patch_narrows_scopes_and_the_next_request_feels_it(client, tenant, headers):
    created = create(client, headers, scopes=["orders:read", "products:read"])["data"]
    key_headers = auth_headers(tenant, created["key"])
    assert client.get("/api/products", headers=key_headers).status_code == 200  # now cached
    response = client.patch(
        f"{LIST}/{created['id']}", json={"scopes": ["orders:read"]}, headers=headers
    )
    assert response.status_code == 200, response.get_json()
    assert response.get_json()["data"]["scopes"] == ["orders:read"]
    denied = client.get("/api/products", headers=key_headers)
    assert denied.status_code == 403
    assert error_of(denied)["details"]["required_scope"] == "products:read"
    assert client.get("/api/orders", headers=key_headers).status_code == 200


def test_patch_cannot_widen_scopes(client, headers):
    created = create(client, headers, scopes=["orders:read"])["data"]
    error = refused(
        client,
        "PATCH",
        f"{LIST}/{created['id']}",
        headers,
        422,
        "VALIDATION_ERROR",
        json={"scopes": ["orders:read", "orders:write"]},
    )
    assert "orders:write" in str(error["details"]["fields"]["scopes"])
    refused(
        client,
        "PATCH",
        f"{LIST}/{created['id']}",
        headers,
        422,
        "VALIDATION_ERROR",
        json={"scopes": ["all"]},
    )


def test_patch_name_expiry_and_allowlist(client, tenant, headers):
    created = create(client, headers)["data"]
    key_headers = auth_headers(tenant, created["key"])
    expires = format_ms(now_ms() + 86_400_000)
    response = client.patch(
        f"{LIST}/{created['id']}",
        json={"name": "Renamed", "expires_at": expires, "allowed_ips": ["192.0.2.0/24"]},
        headers=headers,
    )
    assert response.status_code == 200, response.get_json()
    data = response.get_json()["data"]
    assert (data["name"], data["expires_at"], data["allowed_ips"]) == (
        "Renamed",
        expires,
        ["192.0.2.0/24"],
    )
    assert error_of(client.get("/api/orders", headers=key_headers))["code"] == "IP_NOT_ALLOWED"
    response = client.patch(
        f"{LIST}/{created['id']}", json={"allowed_ips": None, "expires_at": None}, headers=headers
    )
    assert response.get_json()["data"]["allowed_ips"] == []
    assert response.get_json()["data"]["expires_at"] is None
    assert client.get("/api/orders", headers=key_headers).status_code == 200
    for body in (
        {"expires_at": "2020-01-01T00:00:00Z"},
        {"expires_at": "tomorrow"},
        {"allowed_ips": ["10.0.0.0/33"]},
        {"name": ""},
        {"rate_limit_per_minute": 10},  # not changeable
        {"key": "ck_x"},
    ):
        refused(
            client, "PATCH", f"{LIST}/{created['id']}", headers, 422, "VALIDATION_ERROR", json=body
        )


def test_delete_revokes_at_once(client, tenant, headers):
    created = create(client, headers)["data"]
    key_headers = auth_headers(tenant, created["key"])
    assert client.get("/api/orders", headers=key_headers).status_code == 200
    response = client.delete(f"{LIST}/{created['id']}", headers=headers)
    assert response.status_code == 204 and response.data == b""
    denied = client.get("/api/orders", headers=key_headers)
    assert denied.status_code == 401
    assert error_of(denied)["details"]["reason"] == "revoked"
    shown = client.get(f"{LIST}/{created['id']}", headers=headers).get_json()["data"]
    assert shown["revoked_at"] is not None
    # revoking again changes nothing; a revoked key cannot be changed
    assert client.delete(f"{LIST}/{created['id']}", headers=headers).status_code == 204
    assert client.get(f"{LIST}/{created['id']}", headers=headers).get_json()["data"] == shown
    refused(
        client,
        "PATCH",
        f"{LIST}/{created['id']}",
        headers,
        409,
        "API_KEY_REVOKED",
        json={"name": "back"},
    )
    live = client.get(LIST, query_string={"revoked": "false"}, headers=headers).get_json()
    assert created["id"] not in {item["id"] for item in live["data"]}
    gone = client.get(LIST, query_string={"revoked": "true"}, headers=headers).get_json()
    assert [item["id"] for item in gone["data"]] == [created["id"]]


def test_the_calling_key_is_revoked_only_with_confirm_self(client, tenant):
    key, secret = make_key(tenant, ["api-keys:write", "api-keys:read"])
    headers = auth_headers(tenant, secret)
    error = refused(client, "DELETE", f"{LIST}/{key.id}", headers, 409, "CONFIRMATION_REQUIRED")
    assert error["details"] == {"id": key.id, "confirm": "self"}
    assert client.get(LIST, headers=headers).status_code == 200  # still works
    response = client.delete(f"{LIST}/{key.id}", query_string={"confirm": "self"}, headers=headers)
    assert response.status_code == 204
    assert client.get(LIST, headers=headers).status_code == 401
    other = headers_for(tenant)
    bad = client.delete(f"{LIST}/{key.id}", query_string={"confirm": "yes"}, headers=other)
    assert bad.status_code == 422


def test_a_caller_cannot_grant_a_scope_it_lacks(client, tenant):
    headers = headers_for(tenant, ["api-keys:write", "api-keys:read", "orders:read"])
    error = refused_create(
        client,
        headers,
        403,
        "SCOPE_ESCALATION",
        **{"name": "k", "scopes": ["orders:read", "products:write"]},
    )
    assert error["details"]["scopes"] == ["products:write"]
    # every scope there is, but not `all` (which covers scopes added later)
    refused_create(client, headers, 403, "SCOPE_ESCALATION", **{"name": "k", "scopes": ["all"]})
    assert create(client, headers, scopes=["orders:read"])["data"]["scopes"] == ["orders:read"]
    # nor loosen a key that can do more than the caller
    strong, _ = make_key(tenant, ["orders:read", "products:write"])
    refused(
        client,
        "PATCH",
        f"{LIST}/{strong.id}",
        headers,
        403,
        "SCOPE_ESCALATION",
        json={"expires_at": None, "name": "mine now"},
    )
    # narrowing it to what the caller holds is allowed, and so is revoking it
    response = client.patch(
        f"{LIST}/{strong.id}", json={"scopes": ["orders:read"]}, headers=headers
    )
    assert response.status_code == 200, response.get_json()
    assert client.delete(f"{LIST}/{strong.id}", headers=headers).status_code == 204


def test_only_all_can_grant_all(client, tenant, headers):
    # every scope there is, one by one, is not `all`
    refused_create(client, headers, 403, "SCOPE_ESCALATION", **{"name": "k", "scopes": ["all"]})
    created = create(client, headers_for(tenant, ["all"]), scopes=["all"])["data"]
    assert "api-keys:write" in created["scopes"] and "webhooks:read" in created["scopes"]
    assert ApiKey.get_by_id(created["id"]).scopes == "all"


def test_rate_limit_override_is_enterprise_only(client):
    for plan in ("starter", "growth"):
        headers = headers_for(plan=plan)
        for field in ("rate_limit_per_minute", "rate_limit_per_hour"):
            error = refused_create(
                client,
                headers,
                422,
                "PLAN_REQUIRED",
                **{"name": "k", "scopes": ["orders:read"], field: 100},
            )
            assert error["details"] == {"plan": plan, "required_plan": "enterprise"}
    headers = headers_for(plan="enterprise")
    data = create(client, headers, rate_limit_per_minute=500, rate_limit_per_hour=20_000)["data"]
    assert (data["rate_limit_per_minute"], data["rate_limit_per_hour"]) == (500, 20_000)


@pytest.mark.parametrize(
    "body",
    [
        {"name": "k"},
        {"scopes": ["orders:read"]},
        {"name": "k", "scopes": []},
        {"name": "k", "scopes": ["orders:admin"]},
        {"name": "k", "scopes": "orders:read"},
        {"name": "k", "scopes": ["all", "orders:read"]},
        {"name": "", "scopes": ["orders:read"]},
        {"name": "k", "scopes": ["orders:read"], "allowed_ips": ["not-a-cidr"]},
        {"name": "k", "scopes": ["orders:read"], "expires_at": "2020-01-01T00:00:00Z"},
        {"name": "k", "scopes": ["orders:read"], "rate_limit_per_minute": 0},
        {"name": "k", "scopes": ["orders:read"], "tenant_id": "x"},
        {"name": "k", "scopes": ["orders:read"], "key": "ck_mine"},
    ],
)
def test_bad_bodies_are_422_and_create_nothing(client, body):
    headers = headers_for(plan="enterprise")
    refused_create(client, headers, 422, "VALIDATION_ERROR", **body)


def test_scopes_of_the_keys_api(client, tenant):
    reader = headers_for(tenant, ["api-keys:read"])
    assert client.get(LIST, headers=reader).status_code == 200
    error = refused_create(
        client, reader, 403, "INSUFFICIENT_SCOPE", **{"name": "k", "scopes": ["orders:read"]}
    )
    assert error["details"]["required_scope"] == "api-keys:write"
    nobody = headers_for(tenant, ["orders:read"])
    assert error_of(client.get(LIST, headers=nobody))["details"]["required_scope"] == (
        "api-keys:read"
    )


def test_a_user_jwt_with_api_keys_write_manages_the_tenants_keys(client, jwt_keys, tenant):
    user = bearer(
        token(jwt_keys, tenant.id, scope="api-keys:read api-keys:write orders:read"), tenant.id
    )
    created = create(client, user, scopes=["orders:read"])["data"]
    key_headers = auth_headers(tenant, created["key"])
    assert client.get("/api/orders", headers=key_headers).status_code == 200
    made_by_cli, _ = make_key(tenant, ["orders:read"])
    listed = {item["id"] for item in client.get(LIST, headers=user).get_json()["data"]}
    assert listed == {created["id"], made_by_cli.id}
    response = client.patch(f"{LIST}/{created['id']}", json={"name": "Renamed"}, headers=user)
    assert response.get_json()["data"]["name"] == "Renamed"
    assert client.delete(f"{LIST}/{made_by_cli.id}", headers=user).status_code == 204
    # a user never holds `all`, and cannot grant what it lacks
    refused_create(client, user, 403, "SCOPE_ESCALATION", **{"name": "k", "scopes": ["all"]})
    refused_create(
        client, user, 403, "SCOPE_ESCALATION", **{"name": "k", "scopes": ["orders:write"]}
    )
    reader = bearer(token(jwt_keys, tenant.id, scope="orders:read"), tenant.id)
    assert error_of(client.get(LIST, headers=reader))["code"] == "INSUFFICIENT_SCOPE"


def test_keys_of_another_tenant_are_404(client, headers):
    other = make_tenant()
    theirs, secret = make_key(other, ["orders:read"])
    for method, kwargs in (
        ("GET", {}),
        ("PATCH", {"json": {"name": "mine"}}),
        ("DELETE", {}),
    ):
        error = refused(
            client, method, f"{LIST}/{theirs.id}", headers, 404, "API_KEY_NOT_FOUND", **kwargs
        )
        assert error["details"] == {"id": theirs.id}
    assert theirs.id not in {
        item["id"] for item in client.get(LIST, headers=headers).get_json()["data"]
    }
    assert client.get("/api/orders", headers=auth_headers(other, secret)).status_code == 200
    refused(client, "GET", f"{LIST}/key_nope", headers, 404, "API_KEY_NOT_FOUND")


def test_list_pages_with_cursors_and_fields(client, tenant, headers):
    ids = [create(client, headers, name=f"k{i}")["data"]["id"] for i in range(4)]
    first = client.get(LIST, query_string={"limit": 2}, headers=headers).get_json()
    assert first["meta"]["total"] == 5 and first["meta"]["nextCursor"]
    assert [item["id"] for item in first["data"]] == ids[::-1][:2]  # newest first
    seen = walk_pages(client, LIST, headers, limit=2)
    assert len(seen) == len(set(seen)) == 5
    narrow = client.get(LIST, query_string={"fields": "name"}, headers=headers).get_json()
    assert set(narrow["data"][0]) == {"id", "name"}
    assert client.get(LIST, query_string={"cursor": "nope"}, headers=headers).status_code == 400
    assert client.get(LIST, query_string={"limit": 500}, headers=headers).status_code == 422


def test_an_idempotent_create_replays_the_same_key_without_its_secret(client, headers):
    body = {"name": "once", "scopes": ["orders:read"]}
    first = client.post(LIST, json=body, headers={**headers, "Idempotency-Key": "k-1"})
    again = client.post(LIST, json=body, headers={**headers, "Idempotency-Key": "k-1"})
    assert first.status_code == again.status_code == 201
    assert again.headers["Idempotent-Replayed"] == "true"
    # the same key, but its secret is shown once: the replay has it null (issue 31)
    assert again.get_json()["data"] == {**first.get_json()["data"], "key": None}
    assert ApiKey.select().where(ApiKey.name == "once").count() == 1
    # the column as stored (the model field decrypts what it reads)
    (stored,) = db.execute_sql(
        f"SELECT response_body FROM {IdempotencyRecord._meta.table_name}"
    ).fetchone()
    assert stored.startswith("fernet:") and first.get_json()["data"]["key"] not in stored


def test_a_change_by_the_cli_shows_over_http(client, tenant, headers):
    created = create(client, headers, scopes=["orders:read", "orders:write"])["data"]
    update_key(created["id"], scopes=["orders:read"])
    shown = client.get(f"{LIST}/{created['id']}", headers=headers).get_json()["data"]
    assert shown["scopes"] == ["orders:read"]
