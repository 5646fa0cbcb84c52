"""The endpoints API: create (secret shown once), read, list, update, delete, rotate;
bad input refused with a 422 naming the field and nothing stored; scopes; isolation."""

import base64
import importlib

import pytest

from commerce_api.auth.models import SCOPES, ApiKey
from commerce_api.auth.services import create_key, parse_scopes
from commerce_api.db import db
from commerce_api.webhooks.models import WebhookDelivery, WebhookEndpoint
from tests.support import webhooks_support
from tests.support.factories import auth_headers, headers_for
from tests.support.webhooks_support import create_webhook, deliver, emit_events

hooks_app = webhooks_support.hooks_app
receiver = webhooks_support.receiver

PUBLIC_URL = "https://93.184.216.34/hooks"  # an IP literal: no DNS needed in the sandbox


def snapshot():
    return sorted(
        (e.id, e.url, tuple(e.events), e.description, e.is_active, e.secret)
        for e in WebhookEndpoint.select()
    )


def test_create_shows_the_secret_once(client, headers):
    response = client.post(
        "/api/webhooks",
        json={
            "url": PUBLIC_URL,
            "events": ["order.created", "order.shipped"],
            "description": "ERP",
        },
        headers=headers,
    )
    assert response.status_code == 201
    data = response.get_json()["data"]
    assert data["id"].startswith("whk_")
    assert response.headers["Location"] == f"/api/webhooks/{data['id']}"
    assert data["url"] == PUBLIC_URL
    assert data["events"] == ["order.created", "order.shipped"]
    assert data["description"] == "ERP"
    assert data["is_active"] is True and data["disabled_reason"] is None
    secret = data["secret"]
    assert secret.startswith("whsec_")
    assert len(base64.b64decode(secret[6:], validate=True)) == 32
    shown = client.get(f"/api/webhooks/{data['id']}", headers=headers).get_json()["data"]
    assert "secret" not in shown
    assert shown == {k: v for k, v in data.items() if k != "secret"}
    listed = client.get("/api/webhooks", headers=headers).get_json()
    assert listed["data"] == [shown]
    assert listed["meta"] == {"total": 1, "page": 1, "limit": 50, "nextCursor": None}
    assert "secret" not in str(listed)


def test_list_pages_and_filters(client, headers):
    ids = [create_webhook(client, headers, PUBLIC_URL)["id"] for _ in range(3)]
    client.patch(f"/api/webhooks/{ids[0]}", json={"is_active": False}, headers=headers)
    first = client.get("/api/webhooks?limit=2", headers=headers).get_json()
    assert [d["id"] for d in first["data"]] == ids[::-1][:2]
    second = client.get(
        f"/api/webhooks?limit=2&cursor={first['meta']['nextCursor']}", headers=headers
    ).get_json()
    assert [d["id"] for d in second["data"]] == [ids[0]]
    inactive = client.get("/api/webhooks?is_active=false", headers=headers).get_json()
    assert [d["id"] for d in inactive["data"]] == [ids[0]]
    only = client.get("/api/webhooks?fields=url", headers=headers).get_json()["data"][0]
    assert set(only) == {"id", "url"}


def test_patch_changes_only_what_is_given(client, headers):
    hook = create_webhook(client, headers, PUBLIC_URL, events=["order.created"])
    response = client.patch(
        f"/api/webhooks/{hook['id']}",
        json={"events": ["*"], "description": None, "url": "https://93.184.216.34/other"},
        headers=headers,
    )
    assert response.status_code == 200
    data = response.get_json()["data"]
    assert data["events"] == ["*"] and data["description"] is None
    assert data["url"] == "https://93.184.216.34/other" and data["is_active"] is True
    assert "secret" not in data
    assert WebhookEndpoint.get_by_id(hook["id"]).secret == hook["secret"]


def test_delete_then_404(client, headers):
    hook = create_webhook(client, headers, PUBLIC_URL)
    response = client.delete(f"/api/webhooks/{hook['id']}", headers=headers)
    assert response.status_code == 204 and response.data == b""
    for method, path in [
        ("get", ""),
        ("delete", ""),
        ("patch", ""),
        ("post", "/rotate-secret"),
        ("get", "/deliveries"),
    ]:
        kwargs = {"json": {"description": "x"}} if method == "patch" else {}
        response = getattr(client, method)(
            f"/api/webhooks/{hook['id']}{path}", headers=headers, **kwargs
        )
        assert response.status_code == 404
        assert response.get_json()["error"]["code"] == "WEBHOOK_NOT_FOUND"


@pytest.mark.parametrize(
    ("body", "field", "code"),
    [
        ({"url": "ftp://93.184.216.34/x", "events": ["*"]}, "url", "VALIDATION_ERROR"),
        ({"url": "javascript:alert(1)", "events": ["*"]}, "url", "VALIDATION_ERROR"),
        ({"url": "https:///nohost", "events": ["*"]}, "url", "VALIDATION_ERROR"),
        ({"url": "https://u:p@93.184.216.34/", "events": ["*"]}, "url", "VALIDATION_ERROR"),
        ({"url": "https://93.184.216.34:99999/", "events": ["*"]}, "url", "VALIDATION_ERROR"),
        ({"url": 42, "events": ["*"]}, "url", "VALIDATION_ERROR"),
        ({"events": ["*"]}, "url", "VALIDATION_ERROR"),
        ({"url": PUBLIC_URL, "events": []}, "events", "VALIDATION_ERROR"),
        ({"url": PUBLIC_URL}, "events", "VALIDATION_ERROR"),
        ({"url": PUBLIC_URL, "events": "*"}, "events", "VALIDATION_ERROR"),
        ({"url": PUBLIC_URL, "events": ["order.exploded"]}, "events", "VALIDATION_ERROR"),
        ({"url": PUBLIC_URL, "events": ["*", "order.created"]}, "events", "VALIDATION_ERROR"),
        ({"url": PUBLIC_URL, "events": ["order.created"] * 2}, "events", "VALIDATION_ERROR"),
        ({"url": PUBLIC_URL, "events": ["*"], "secret": "x"}, "secret", "VALIDATION_ERROR"),
        ({"url": "http://127.0.0.1/hooks", "events": ["*"]}, "url", "WEBHOOK_URL_NOT_ALLOWED"),
        ({"url": "http://localhost:8000/", "events": ["*"]}, "url", "WEBHOOK_URL_NOT_ALLOWED"),
        ({"url": "http://[::1]/", "events": ["*"]}, "url", "WEBHOOK_URL_NOT_ALLOWED"),
        (
            {"url": "http://169.254.169.254/latest", "events": ["*"]},
            "url",
            "WEBHOOK_URL_NOT_ALLOWED",
        ),
        ({"url": "https://10.1.2.3/", "events": ["*"]}, "url", "WEBHOOK_URL_NOT_ALLOWED"),
        ({"url": "https://100.64.0.7/", "events": ["*"]}, "url", "WEBHOOK_URL_NOT_ALLOWED"),
        (
            {"url": "https://[::ffff:192.168.0.1]/", "events": ["*"]},
            "url",
            "WEBHOOK_URL_NOT_ALLOWED",
        ),
        ({"url": "https://[64:ff9b::7f00:1]/", "events": ["*"]}, "url", "WEBHOOK_URL_NOT_ALLOWED"),
        ({"url": "https://0.0.0.0/", "events": ["*"]}, "url", "WEBHOOK_URL_NOT_ALLOWED"),
        ({"url": "https://host.invalid/", "events": ["*"]}, "url", "WEBHOOK_URL_NOT_ALLOWED"),
    ],
)
def test_bad_input_is_refused_and_nothing_is_stored(client, headers, body, field, code):
    response = client.post("/api/webhooks", json=body, headers=headers)
    assert response.status_code == 422, response.get_json()
    error = response.get_json()["error"]
    assert error["code"] == code
    assert field in error["details"]["fields"]
    assert WebhookEndpoint.select().count() == 0


@pytest.mark.parametrize(
    ("body", "field", "code"),
    [
        ({"url": "http://127.0.0.1:9/"}, "url", "WEBHOOK_URL_NOT_ALLOWED"),
        ({"url": "gopher://93.184.216.34/"}, "url", "VALIDATION_ERROR"),
        ({"events": []}, "events", "VALIDATION_ERROR"),
        ({"events": ["nope"]}, "events", "VALIDATION_ERROR"),
        ({"is_active": "yes"}, "is_active", "VALIDATION_ERROR"),
        ({"secret": "whsec_x"}, "secret", "VALIDATION_ERROR"),
    ],
)
def test_bad_patch_changes_nothing(client, headers, body, field, code):
    hook = create_webhook(client, headers, PUBLIC_URL, events=["order.created"])
    before = snapshot()
    response = client.patch(f"/api/webhooks/{hook['id']}", json=body, headers=headers)
    assert response.status_code == 422
    error = response.get_json()["error"]
    assert error["code"] == code and field in error["details"]["fields"]
    assert snapshot() == before


def test_private_targets_allowed_by_the_operator(hooks_app, client, headers):
    hook = create_webhook(client, headers, "http://127.0.0.1:9/hooks")
    assert hook["url"] == "http://127.0.0.1:9/hooks"


def test_endpoint_limit(client, headers, app, monkeypatch):
    monkeypatch.setitem(app.config, "WEBHOOK_MAX_ENDPOINTS", 2)
    create_webhook(client, headers, PUBLIC_URL)
    create_webhook(client, headers, PUBLIC_URL)
    response = client.post(
        "/api/webhooks", json={"url": PUBLIC_URL, "events": ["*"]}, headers=headers
    )
    assert response.status_code == 409
    assert response.get_json()["error"]["code"] == "WEBHOOK_LIMIT_REACHED"
    assert WebhookEndpoint.select().count() == 2


def test_scopes(client, tenant):
    reader = headers_for(tenant, scopes=["webhooks:read"])
    writer = headers_for(tenant, scopes=["webhooks:write"])
    other = headers_for(tenant, scopes=["products:read", "products:write"])
    body = {"url": PUBLIC_URL, "events": ["*"]}
    response = client.post("/api/webhooks", json=body, headers=reader)
    assert response.status_code == 403
    assert response.get_json()["error"]["details"]["required_scope"] == "webhooks:write"
    assert client.get("/api/webhooks", headers=other).status_code == 403
    assert client.post("/api/webhooks", json=body, headers=other).status_code == 403
    # "*" carries every domain's events: it needs each domain's read scope (issue 31)
    refused = client.post("/api/webhooks", json=body, headers=writer)
    assert refused.get_json()["error"]["code"] == "INSUFFICIENT_SCOPE"
    readers = [s for s in SCOPES if s.endswith(":read")]
    full_writer = headers_for(tenant, scopes=["webhooks:write", *readers])
    assert client.post("/api/webhooks", json=body, headers=full_writer).status_code == 201
    assert client.get("/api/webhooks", headers=reader).status_code == 200


def test_all_means_every_scope_present_and_future(client, tenant, monkeypatch):
    key, secret = create_key(tenant.id, "everything", parse_scopes("all"))
    assert ApiKey.get_by_id(key.id).scopes == "all"
    headers = auth_headers(tenant, secret)
    assert client.get("/api/webhooks", headers=headers).status_code == 200
    assert client.get("/api/products", headers=headers).status_code == 200
    # a scope the code gains later is granted without touching the key
    from commerce_api.auth import middleware

    assert middleware.AuthContext(
        "t", "starter", "api_key", "k", frozenset({"all"}), "x"
    ).has_scope("reports:read")


def test_keys_made_with_all_before_become_all(client, tenant):
    old_list = (
        "products:read products:write orders:read orders:write inventory:read inventory:write"
        " pricing:read pricing:write ai-jobs:read ai-jobs:write webhooks:read webhooks:write"
    )
    key, _ = create_key(tenant.id, "old all", old_list.split())
    narrow, _ = create_key(tenant.id, "narrow", ["products:read"])
    migration = importlib.import_module("commerce_api.migrations.0009_webhooks")
    migration.up(None, db.obj)  # idempotent: tables and columns exist, keys are converted
    assert ApiKey.get_by_id(key.id).scopes == "all"
    assert ApiKey.get_by_id(narrow.id).scopes == "products:read"


def test_tenant_isolation(hooks_app, client, headers, receiver):
    other = headers_for()
    mine = create_webhook(client, headers, receiver.url)
    theirs_receiver = webhooks_support.Receiver()
    with theirs_receiver:
        theirs = create_webhook(client, other, theirs_receiver.url)
        emit_events(headers["X-Tenant-ID"], [("order.created", "ord_1", {"mine": True})])
        emit_events(other["X-Tenant-ID"], [("order.created", "ord_1", {"mine": False})])
        deliver(hooks_app)
        assert [b["data"] for b in theirs_receiver.bodies()] == [{"mine": False}]
    assert [b["data"] for b in receiver.bodies()] == [{"mine": True}]
    their_delivery = WebhookDelivery.get(WebhookDelivery.endpoint_id == theirs["id"])
    my_delivery = WebhookDelivery.get(WebhookDelivery.endpoint_id == mine["id"])
    before = snapshot(), WebhookDelivery.select().count()
    refused = [
        client.get(f"/api/webhooks/{theirs['id']}", headers=headers),
        client.patch(f"/api/webhooks/{theirs['id']}", json={"is_active": False}, headers=headers),
        client.delete(f"/api/webhooks/{theirs['id']}", headers=headers),
        client.post(f"/api/webhooks/{theirs['id']}/rotate-secret", headers=headers),
        client.get(f"/api/webhooks/{theirs['id']}/deliveries", headers=headers),
        client.get(f"/api/webhooks/{theirs['id']}/deliveries/{their_delivery.id}", headers=headers),
        client.post(
            f"/api/webhooks/{theirs['id']}/deliveries/{their_delivery.id}/redeliver",
            headers=headers,
        ),
    ]
    assert [r.status_code for r in refused] == [404] * 7
    assert {r.get_json()["error"]["code"] for r in refused} == {"WEBHOOK_NOT_FOUND"}
    # their delivery under my endpoint's path: not found either
    crossed = client.post(
        f"/api/webhooks/{mine['id']}/deliveries/{their_delivery.id}/redeliver", headers=headers
    )
    assert crossed.status_code == 404
    assert crossed.get_json()["error"]["code"] == "DELIVERY_NOT_FOUND"
    assert (snapshot(), WebhookDelivery.select().count()) == before
    listed = client.get("/api/webhooks", headers=headers).get_json()["data"]
    assert [d["id"] for d in listed] == [mine["id"]]
    assert my_delivery.tenant_id == headers["X-Tenant-ID"]


def test_delivery_log_filters_and_unknown_ids(hooks_app, client, headers, receiver):
    hook = create_webhook(client, headers, receiver.url)
    first, _ = emit_events(
        headers["X-Tenant-ID"], [("order.created", "ord_1", {}), ("order.created", "ord_2", {})]
    )
    receiver.script[first] = [500] * 10
    deliver(hooks_app)
    base = f"/api/webhooks/{hook['id']}/deliveries"
    failed = client.get(base + "?status=failed", headers=headers).get_json()["data"]
    succeeded = client.get(base + "?status=succeeded", headers=headers).get_json()["data"]
    assert [d["event_id"] for d in failed] == [first] and len(succeeded) == 1
    assert client.get(base + "?status=bogus", headers=headers).status_code == 422
    assert client.get(base + "?colour=red", headers=headers).status_code == 422
    response = client.get(base + "/dlv_nope", headers=headers)
    assert response.status_code == 404
    assert response.get_json()["error"]["code"] == "DELIVERY_NOT_FOUND"
    response = client.post(base + "/dlv_nope/redeliver", headers=headers)
    assert response.get_json()["error"]["code"] == "DELIVERY_NOT_FOUND"
    # a disabled endpoint does not redeliver
    client.patch(f"/api/webhooks/{hook['id']}", json={"is_active": False}, headers=headers)
    count = WebhookDelivery.select().count()
    response = client.post(f"{base}/{failed[0]['id']}/redeliver", headers=headers)
    assert response.status_code == 409
    assert response.get_json()["error"]["code"] == "WEBHOOK_DISABLED"
    assert WebhookDelivery.select().count() == count
