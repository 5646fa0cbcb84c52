"""API-key authentication: 401 reasons, tenant header, tenant access, IP allowlists, expiry,
revocation, scopes. Every refused request changes nothing."""

import json
import uuid

import pytest

from commerce_api.auth import middleware
from commerce_api.auth.services import revoke_key, update_key
from commerce_api.cli import cli
from commerce_api.timeutil import format_ms, now_ms
from tests.support.factories import auth_headers, make_key, make_tenant, product_body, snapshot
from tests.support.http_support import assert_refused, error_code

LIST = "/api/products"


def create(client, headers, sku="AUTH-1"):
    return client.post(LIST, json=product_body(sku), headers=headers)


def assert_unauthenticated(client, headers, reason, method="POST", **kwargs):
    if method == "POST" and "json" not in kwargs:
        kwargs["json"] = product_body("AUTH-X")
    error = assert_refused(client, method, LIST, headers, 401, "UNAUTHENTICATED", **kwargs)
    assert error["details"]["reason"] == reason, error
    response = client.open(LIST, method=method, headers=headers, **kwargs)
    assert response.headers["WWW-Authenticate"].startswith("Bearer")
    return error


# 401 ----------------------------------------------------------------------------------


def test_missing_token(client, tenant):
    assert_unauthenticated(client, {"X-Tenant-ID": tenant.id}, "missing")
    assert_unauthenticated(client, {}, "missing", method="GET")


@pytest.mark.parametrize(
    "authorization",
    [
        "Basic dXNlcjpwYXNz",
        "Bearer",
        "Bearer ",
        "Token ck_abcdef",
        "ck_abcdef",
        "Bearer not-a-key-or-jwt",
        "Bearer one.dot",
        "Bearer a.b.c.d",
    ],
)
def test_malformed_token(client, tenant, authorization):
    headers = {"Authorization": authorization, "X-Tenant-ID": tenant.id}
    assert_unauthenticated(client, headers, "malformed")


def test_malformed_jwt(client, tenant):
    headers = {"Authorization": "Bearer a.b.c", "X-Tenant-ID": tenant.id}
    assert_unauthenticated(client, headers, "malformed")


@pytest.mark.parametrize("token", ["ck_" + "x" * 40, "ck_", "ck_short"])
def test_unknown_key(client, tenant, token):
    headers = {"Authorization": f"Bearer {token}", "X-Tenant-ID": tenant.id}
    assert_unauthenticated(client, headers, "invalid")


def test_scheme_is_case_insensitive(client, tenant):
    _, secret = make_key(tenant)
    response = client.get(
        LIST, headers={"Authorization": f"bearer {secret}", "X-Tenant-ID": tenant.id}
    )
    assert response.status_code == 200


def test_a_bad_token_is_401_before_the_tenant_header_is_looked_at(client, tenant):
    """401 first: a caller without a valid token learns nothing about the tenant header."""
    for authorization in (None, "Bearer ck_" + "x" * 40, "Bearer junk", "Bearer a.b.c"):
        for tenant_header in (None, "not-a-uuid", str(uuid.uuid4())):
            headers = {}
            if authorization:
                headers["Authorization"] = authorization
            if tenant_header:
                headers["X-Tenant-ID"] = tenant_header
            response = client.get(LIST, headers=headers)
            assert response.status_code == 401, (authorization, tenant_header)
            assert error_code(response) == "UNAUTHENTICATED"


def test_revoked_key_is_refused(client, tenant):
    key, secret = make_key(tenant)
    headers = auth_headers(tenant, secret)
    assert client.get(LIST, headers=headers).status_code == 200
    revoke_key(key.id)  # no cache clearing: the cached row is dropped at once
    assert_unauthenticated(client, headers, "revoked")
    assert_unauthenticated(client, headers, "revoked", method="GET")


def test_revocation_is_immediate_with_a_long_cache(make_app):
    app = make_app(AUTH_CACHE_SECONDS=3600)
    client = app.test_client()
    tenant = make_tenant()
    key, secret = make_key(tenant)
    headers = auth_headers(tenant, secret)
    assert client.get(LIST, headers=headers).status_code == 200
    revoke_key(key.id)
    response = client.get(LIST, headers=headers)
    assert response.status_code == 401
    assert response.get_json()["error"]["details"]["reason"] == "revoked"


def test_a_change_to_another_tenants_key_keeps_this_cache(make_app):
    app = make_app(AUTH_CACHE_SECONDS=3600)
    client = app.test_client()
    tenant, other = make_tenant(), make_tenant()
    _, secret = make_key(tenant)
    other_key, _ = make_key(other)
    headers = auth_headers(tenant, secret)
    assert client.get(LIST, headers=headers).status_code == 200
    cached = dict(middleware.key_cache._items)
    revoke_key(other_key.id)
    assert client.get(LIST, headers=headers).status_code == 200
    assert middleware.key_cache._items.keys() == cached.keys()


def test_revocation_is_immediate_without_a_cache(make_app):
    client = make_app(AUTH_CACHE_SECONDS=0).test_client()
    tenant = make_tenant()
    key, secret = make_key(tenant)
    headers = auth_headers(tenant, secret)
    assert client.get(LIST, headers=headers).status_code == 200
    revoke_key(key.id)
    assert client.get(LIST, headers=headers).status_code == 401


def test_key_with_a_future_expiry_works_until_it_expires(client, tenant):
    key, secret = make_key(tenant, expires_at=now_ms() + 3_600_000)
    headers = auth_headers(tenant, secret)
    assert create(client, headers).status_code == 201
    update_key(key.id, expires_at=now_ms() - 1)
    assert_unauthenticated(client, headers, "expired")
    assert_unauthenticated(client, headers, "expired", method="GET")


def test_key_expiry_from_the_cli(client, runner, tenant):
    soon = format_ms(now_ms() + 3_600_000)
    result = runner.invoke(
        cli,
        [
            "keys",
            "create",
            "--tenant",
            tenant.id,
            "--name",
            "exp",
            "--scopes",
            "all",
            "--expires-at",
            soon,
            "--json",
        ],
    )
    assert result.exit_code == 0, result.output
    payload = json.loads(result.stdout)
    assert payload["expires_at"] == soon
    headers = auth_headers(tenant, payload["key"])
    assert client.get(LIST, headers=headers).status_code == 200
    update_key(payload["id"], expires_at=now_ms() - 1000)
    assert_unauthenticated(client, headers, "expired", method="GET")


# Tenant header and tenant access ------------------------------------------------------


@pytest.mark.parametrize("value", [None, "", "not-a-uuid", "1234", "g" * 32, "' OR 1=1 --"])
def test_tenant_header_must_be_a_uuid(client, tenant, value):
    _, secret = make_key(tenant)
    headers = {"Authorization": f"Bearer {secret}"}
    if value is not None:
        headers["X-Tenant-ID"] = value
    assert_refused(
        client, "POST", LIST, headers, 400, "INVALID_TENANT_HEADER", json=product_body("H-1")
    )


def test_tenant_header_in_upper_case_is_the_same_tenant(client, tenant):
    _, secret = make_key(tenant)
    headers = {"Authorization": f"Bearer {secret}", "X-Tenant-ID": tenant.id.upper()}
    assert client.get(LIST, headers=headers).status_code == 200


def test_key_of_another_tenant_is_403(client, tenant):
    other = make_tenant()
    _, secret = make_key(tenant)
    headers = {"Authorization": f"Bearer {secret}", "X-Tenant-ID": other.id}
    assert_refused(
        client, "POST", LIST, headers, 403, "TENANT_ACCESS_DENIED", json=product_body("T-1")
    )
    assert_refused(client, "GET", LIST, headers, 403, "TENANT_ACCESS_DENIED")


def test_unknown_tenant_is_403_not_404(client, tenant):
    _, secret = make_key(tenant)
    headers = {"Authorization": f"Bearer {secret}", "X-Tenant-ID": str(uuid.uuid4())}
    assert_refused(client, "GET", LIST, headers, 403, "TENANT_ACCESS_DENIED")


# IP allowlists ------------------------------------------------------------------------


@pytest.mark.parametrize(
    "cidrs,remote,allowed",
    [
        (["10.0.0.0/8"], "127.0.0.1", False),
        (["127.0.0.0/8"], "127.0.0.1", True),
        (["127.0.0.1/32"], "127.0.0.1", True),
        (["127.0.0.2/32"], "127.0.0.1", False),
        (["10.0.0.0/8", "127.0.0.1"], "127.0.0.1", True),
        (["10.0.0.0/8"], "10.200.3.4", True),
        (["2001:db8::/32"], "2001:db8::7", True),
        (["2001:db8::/32"], "127.0.0.1", False),
        (["127.0.0.0/8"], "::ffff:127.0.0.1", True),  # an IPv4 peer on a dual-stack socket
        (["127.0.0.0/8"], "::1", False),
    ],
)
def test_ip_allowlist(client, tenant, cidrs, remote, allowed):
    _, secret = make_key(tenant, allowed_ips=cidrs)
    headers = auth_headers(tenant, secret)
    environ = {"REMOTE_ADDR": remote}
    if allowed:
        response = client.get(LIST, headers=headers, environ_base=environ)
        assert response.status_code == 200
    else:
        error = assert_refused(
            client,
            "POST",
            LIST,
            headers,
            403,
            "IP_NOT_ALLOWED",
            json=product_body("IP-1"),
            environ_base=environ,
        )
        assert error["details"] == {"ip": remote}


def test_ip_allowlist_keys_from_the_cli(client, runner, tenant):
    keys = {}
    for name, cidr in (("outside", "10.0.0.0/8"), ("inside", "127.0.0.0/8")):
        result = runner.invoke(
            cli,
            [
                "keys",
                "create",
                "--tenant",
                tenant.id,
                "--name",
                name,
                "--scopes",
                "products:read,products:write",
                "--allow-ip",
                cidr,
                "--json",
            ],
        )
        assert result.exit_code == 0, result.output
        keys[name] = json.loads(result.stdout)
        assert keys[name]["allowed_ips"] == [cidr]
    assert_refused(
        client,
        "POST",
        LIST,
        auth_headers(tenant, keys["outside"]["key"]),
        403,
        "IP_NOT_ALLOWED",
        json=product_body("CLI-IP"),
    )
    response = create(client, auth_headers(tenant, keys["inside"]["key"]), "CLI-IP")
    assert response.status_code == 201


def test_x_forwarded_for_is_ignored_without_trusted_proxies(client, tenant):
    _, secret = make_key(tenant, allowed_ips=["203.0.113.0/24"])
    headers = {**auth_headers(tenant, secret), "X-Forwarded-For": "203.0.113.7"}
    assert_refused(client, "POST", LIST, headers, 403, "IP_NOT_ALLOWED", json=product_body("XFF-1"))


@pytest.mark.parametrize(
    "trusted,forwarded,allowed",
    [
        ("127.0.0.1/32", "203.0.113.7", True),
        ("127.0.0.1/32", None, False),  # the proxy itself is not the client
        ("127.0.0.1/32", "198.51.100.1", False),
        ("127.0.0.1/32", "203.0.113.7, 198.51.100.9", False),  # a spoofed left-most hop
        ("127.0.0.1/32,10.0.0.0/8", "203.0.113.7, 10.0.0.5", True),  # two proxies
        ("127.0.0.1/32", "203.0.113.7, 10.0.0.5", False),  # 10.0.0.5 is not our proxy
        ("127.0.0.1/32", "not-an-address", False),  # fail closed
        ("127.0.0.1/32", "203.0.113.7, garbage", False),
        ("10.0.0.0/8", "203.0.113.7", False),  # the peer is not a trusted proxy
    ],
)
def test_trusted_proxies_x_forwarded_for(make_app, trusted, forwarded, allowed):
    client = make_app(TRUSTED_PROXIES=trusted).test_client()
    tenant = make_tenant()
    _, secret = make_key(tenant, allowed_ips=["203.0.113.0/24"])
    headers = auth_headers(tenant, secret)
    if forwarded:
        headers["X-Forwarded-For"] = forwarded
    if allowed:
        assert create(client, headers, "XFF-OK").status_code == 201
    else:
        assert_refused(
            client, "POST", LIST, headers, 403, "IP_NOT_ALLOWED", json=product_body("XFF-2")
        )


def test_tenant_is_checked_before_the_ip(client, tenant):
    other = make_tenant()
    _, secret = make_key(tenant, allowed_ips=["10.0.0.0/8"])
    headers = {"Authorization": f"Bearer {secret}", "X-Tenant-ID": other.id}
    assert_refused(client, "GET", LIST, headers, 403, "TENANT_ACCESS_DENIED")


# Scopes -------------------------------------------------------------------------------


def test_insufficient_scope_names_the_scope(client, tenant):
    _, secret = make_key(tenant, ["orders:read"])
    headers = auth_headers(tenant, secret)
    error = assert_refused(client, "GET", LIST, headers, 403, "INSUFFICIENT_SCOPE")
    assert error["details"] == {"required_scope": "products:read"}
    assert "products:read" in error["message"]


def test_a_refused_request_changes_nothing_whatever_its_body(client, tenant):
    _, secret = make_key(tenant, ["products:read"])
    headers = auth_headers(tenant, secret)
    before = snapshot()
    for body in (product_body("S-1"), {"sku": 5}, []):
        response = client.post(LIST, json=body, headers=headers)
        assert response.status_code == 403
    assert snapshot() == before


@pytest.mark.parametrize("forwarded", ["not-an-address", "203.0.113.7, garbage", "999.1.1.1"])
def test_an_unparsable_x_forwarded_for_is_denied_not_taken_for_the_proxy(make_app, forwarded):
    # the allowlist holds the proxy's own address: falling back to it would let anyone in
    client = make_app(TRUSTED_PROXIES="127.0.0.1/32").test_client()
    tenant = make_tenant()
    _, secret = make_key(tenant, allowed_ips=["127.0.0.0/8"])
    headers = {**auth_headers(tenant, secret), "X-Forwarded-For": forwarded}
    assert_refused(client, "POST", LIST, headers, 403, "IP_NOT_ALLOWED", json=product_body("X"))
    assert create(client, auth_headers(tenant, secret), "XFF-OK").status_code == 201
