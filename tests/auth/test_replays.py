"""Idempotent replays (issue 31): the caller's scope is checked again, and a secret is
never shown a second time (an API key's, a webhook's)."""

from commerce_api.auth.services import revoke_key, update_key
from tests.support import webhooks_support
from tests.support.factories import auth_headers, headers_for, make_key

hooks_app = webhooks_support.hooks_app  # the fixture

LIST = "/api/api-keys"


def post(client, path, headers, key, body=None):
    return client.post(path, json=body, headers={**headers, "Idempotency-Key": key})


def test_a_replay_needs_the_scope_the_request_needs_now(client, tenant):
    caller, secret = make_key(tenant, ["api-keys:write", "api-keys:read", "orders:read"])
    headers = auth_headers(tenant, secret)
    body = {"name": "integration", "scopes": ["orders:read"]}
    first = post(client, LIST, headers, "k-1", body)
    assert first.status_code == 201
    update_key(caller.id, scopes=["orders:read"])  # the caller loses api-keys:write
    replay = post(client, LIST, headers, "k-1", body)
    assert replay.status_code == 403, replay.get_json()
    assert replay.get_json()["error"]["details"]["required_scope"] == "api-keys:write"
    assert "Idempotent-Replayed" not in replay.headers


def test_a_replay_never_shows_a_created_keys_secret_again(client, tenant):
    headers = headers_for(tenant)
    body = {"name": "integration", "scopes": ["orders:read"]}
    first = post(client, LIST, headers, "k-2", body)
    created = first.get_json()["data"]
    assert created["key"].startswith("ck_")
    for _ in range(2):
        replay = post(client, LIST, headers, "k-2", body)
        assert replay.status_code == 201 and replay.headers["Idempotent-Replayed"] == "true"
        assert replay.get_json()["data"] == {**created, "key": None}
        assert created["key"] not in replay.get_data(as_text=True)
        revoke_key(created["id"])
    # the secret itself still works until revoked: it is only never shown again
    assert client.get("/api/orders", headers=auth_headers(tenant, created["key"])).status_code == (
        401
    )


def test_a_replay_never_shows_a_webhook_secret_again(hooks_app, client, tenant):
    headers = headers_for(tenant)
    body = {"url": "http://127.0.0.1:9/hooks", "events": ["order.created"]}
    created = post(client, "/api/webhooks", headers, "w-1", body).get_json()["data"]
    assert created["secret"].startswith("whsec_")
    replay = post(client, "/api/webhooks", headers, "w-1", body)
    assert replay.status_code == 201 and replay.get_json()["data"]["secret"] is None
    path = f"/api/webhooks/{created['id']}/rotate-secret"
    rotated = post(client, path, headers, "w-2").get_json()["data"]
    assert rotated["secret"].startswith("whsec_")
    replay = post(client, path, headers, "w-2")
    assert replay.status_code == 200 and replay.get_json()["data"] == {**rotated, "secret": None}
