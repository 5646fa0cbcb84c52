"""A key cannot lend another key more than it has (issue 31): its expiry, its IP ranges,
its rate limit; the tenant's `all` keys are changed only by a holder of `all`; two
changes of one key at once never lose one."""

import threading

from commerce_api.auth import services
from commerce_api.auth.models import ApiKey
from commerce_api.timeutil import format_ms, now_ms
from tests.support.factories import auth_headers, make_key, make_tenant, snapshot

LIST = "/api/api-keys"
MANAGE = ["api-keys:read", "api-keys:write", "orders:read"]


def refused(client, method, path, headers, status, code, **kwargs):
    """The request gets ``status``/``code`` and changes nothing."""
    before = snapshot()
    response = client.open(path, method=method, headers=headers, **kwargs)
    assert response.status_code == status, response.get_json()
    error = response.get_json()["error"]
    assert error["code"] == code
    assert snapshot() == before
    return error


def test_a_key_with_an_expiry_mints_and_patches_keys_only_within_it(client, tenant):
    own_expiry = now_ms() + 3_600_000
    key, secret = make_key(tenant, MANAGE, expires_at=own_expiry)
    headers = auth_headers(tenant, secret)
    later = format_ms(own_expiry + 60_000)
    for extra in ({}, {"expires_at": None}, {"expires_at": later}):
        body = {"name": "k", "scopes": ["orders:read"], **extra}
        error = refused(client, "POST", LIST, headers, 403, "RESTRICTION_ESCALATION", json=body)
        assert error["details"]["field"] == "expires_at"
    for body in ({"expires_at": None}, {"expires_at": later}):
        refused(
            client, "PATCH", f"{LIST}/{key.id}", headers, 403, "RESTRICTION_ESCALATION", json=body
        )
    assert ApiKey.get_by_id(key.id).expires_at == own_expiry
    sooner = format_ms(own_expiry - 60_000)
    body = {"name": "k", "scopes": ["orders:read"], "expires_at": sooner}
    response = client.post(LIST, json=body, headers=headers)
    assert response.status_code == 201, response.get_json()
    assert response.get_json()["data"]["expires_at"] == sooner
    response = client.patch(f"{LIST}/{key.id}", json={"expires_at": sooner}, headers=headers)
    assert response.status_code == 200, response.get_json()


def test_a_key_limited_to_ip_ranges_mints_and_patches_keys_only_within_them(client, tenant):
    # the test client calls from 127.0.0.1
    key, secret = make_key(tenant, MANAGE, allowed_ips=["127.0.0.0/8"])
    headers = auth_headers(tenant, secret)
    for extra in ({}, {"allowed_ips": None}, {"allowed_ips": []}, {"allowed_ips": ["10.0.0.0/8"]}):
        body = {"name": "k", "scopes": ["orders:read"], **extra}
        error = refused(client, "POST", LIST, headers, 403, "RESTRICTION_ESCALATION", json=body)
        assert error["details"]["field"] == "allowed_ips"
    wider = ["127.0.0.0/8", "0.0.0.0/0"]
    for ips in (None, [], wider, ["::1/128"]):
        refused(
            client,
            "PATCH",
            f"{LIST}/{key.id}",
            headers,
            403,
            "RESTRICTION_ESCALATION",
            json={"allowed_ips": ips},
        )
    assert ApiKey.get_by_id(key.id).allowed_ips == ["127.0.0.0/8"]
    body = {"name": "k", "scopes": ["orders:read"], "allowed_ips": ["127.0.0.1/32"]}
    response = client.post(LIST, json=body, headers=headers)
    assert response.status_code == 201, response.get_json()
    response = client.patch(
        f"{LIST}/{key.id}", json={"allowed_ips": ["127.0.0.0/16"]}, headers=headers
    )
    assert response.status_code == 200, response.get_json()


def test_an_enterprise_key_cannot_mint_a_higher_rate_limit_than_its_own(client):
    tenant = make_tenant("enterprise")
    _, secret = make_key(tenant, MANAGE)  # the plan's 1,000/min and 100,000/h
    headers = auth_headers(tenant, secret)
    for field in ("rate_limit_per_minute", "rate_limit_per_hour"):
        body = {"name": "k", "scopes": ["orders:read"], field: 2_147_483_647}
        error = refused(client, "POST", LIST, headers, 403, "RESTRICTION_ESCALATION", json=body)
        assert error["details"]["field"] == field
    body = {"name": "k", "scopes": ["orders:read"], "rate_limit_per_minute": 10}
    response = client.post(LIST, json=body, headers=headers)
    assert response.status_code == 201, response.get_json()
    # a key held to 10/min cannot make one that gets the plan's 1,000/min
    slow = auth_headers(tenant, make_key(tenant, MANAGE, rate_limit_per_minute=10)[1])
    body = {"name": "k", "scopes": ["orders:read"]}
    error = refused(client, "POST", LIST, slow, 403, "RESTRICTION_ESCALATION", json=body)
    assert error["details"] == {"field": "rate_limit_per_minute", "limit": 10}
    response = client.post(LIST, json={**body, "rate_limit_per_minute": 10}, headers=slow)
    assert response.status_code == 201, response.get_json()


def test_only_a_holder_of_all_changes_or_revokes_an_all_key(client, tenant):
    strongest, _ = make_key(tenant, ["all"])
    manager = auth_headers(tenant, make_key(tenant, ["api-keys:write", "api-keys:read"])[1])
    path = f"{LIST}/{strongest.id}"
    for method, kwargs in (
        ("DELETE", {}),
        ("PATCH", {"json": {"scopes": ["api-keys:read"]}}),
        ("PATCH", {"json": {"name": "mine"}}),
        ("PATCH", {"json": {"expires_at": format_ms(now_ms() + 60_000)}}),
    ):
        error = refused(client, method, path, manager, 403, "SCOPE_ESCALATION", **kwargs)
        assert error["details"]["scopes"] == ["all"]
    assert ApiKey.get_by_id(strongest.id).revoked_at is None
    holder = auth_headers(tenant, make_key(tenant, ["all"])[1])
    response = client.patch(path, json={"scopes": ["orders:read"]}, headers=holder)
    assert response.status_code == 200, response.get_json()
    assert client.delete(path, headers=holder).status_code == 204


def test_two_narrowing_patches_at_once_never_lose_a_removal(app, tenant, monkeypatch):
    key, _ = make_key(tenant, ["orders:read", "orders:write", "products:read"])
    headers = auth_headers(tenant, make_key(tenant)[1])
    # hold each PATCH between reading the key and writing it until the other has read it
    # too (the interleaving that lost a removal); with the key's row held by the first,
    # the second cannot read before the first is done, and the wait gives up
    barrier = threading.Barrier(2, timeout=3)
    check = services._check_change

    def paused(*args, **kwargs):
        try:
            barrier.wait()
        except threading.BrokenBarrierError:
            pass
        return check(*args, **kwargs)

    monkeypatch.setattr(services, "_check_change", paused)
    bodies = {
        "orders:write": ["orders:read", "products:read"],
        "products:read": ["orders:read", "orders:write"],
    }
    statuses = {}

    def patch(removed, scopes):
        response = app.test_client().patch(
            f"{LIST}/{key.id}", json={"scopes": scopes}, headers=headers
        )
        statuses[removed] = response.status_code

    threads = [threading.Thread(target=patch, args=item) for item in bodies.items()]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    final = set(ApiKey.get_by_id(key.id).scopes.split())
    assert sorted(statuses.values()) == [200, 422]  # the second would widen the first's
    for removed, status in statuses.items():
        if status == 200:
            assert removed not in final
    assert final in ({"orders:read", "products:read"}, {"orders:read", "orders:write"})
