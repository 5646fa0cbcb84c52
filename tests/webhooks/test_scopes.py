"""Webhooks follow the data's scopes (issue 31): subscribing an endpoint to events, pointing
it elsewhere and recovering its events need the read scope of each event's domain, as
``GET /api/events`` does; ``"*"`` needs all of them."""

from commerce_api.webhooks.models import WebhookDelivery, WebhookEndpoint
from tests.support import webhooks_support
from tests.support.factories import headers_for, snapshot
from tests.support.webhooks_support import create_webhook, deliver, emit_events

hooks_app = webhooks_support.hooks_app  # the fixture

URL = "http://127.0.0.1:9/hooks"
WEBHOOKS_ONLY = ["webhooks:read", "webhooks:write"]


def refused(client, method, path, headers, required_scope, **kwargs):
    """403 ``INSUFFICIENT_SCOPE`` naming ``required_scope``; nothing changed."""
    before = snapshot()
    response = client.open(path, method=method, headers=headers, **kwargs)
    assert response.status_code == 403, response.get_json()
    error = response.get_json()["error"]
    assert error["code"] == "INSUFFICIENT_SCOPE"
    assert error["details"]["required_scope"] == required_scope
    assert snapshot() == before
    return error


def test_subscribing_needs_the_read_scope_of_each_events_domain(hooks_app, client, tenant):
    webhooks_only = headers_for(tenant, WEBHOOKS_ONLY)
    # the events feed refuses this key; so does an endpoint that would carry the same bodies
    assert client.get("/api/events", headers=webhooks_only).status_code == 200  # none shown
    for events, scope in (
        (["*"], "ai-jobs:read"),
        (["order.created"], "orders:read"),
        (["inventory.adjusted"], "inventory:read"),
    ):
        body = {"url": URL, "events": events}
        error = refused(client, "POST", "/api/webhooks", webhooks_only, scope, json=body)
        assert scope in error["details"]["required_scopes"]
    orders = headers_for(tenant, [*WEBHOOKS_ONLY, "orders:read"])
    create_webhook(client, orders, URL, events=["order.created", "order.updated"])
    error = refused(
        client, "POST", "/api/webhooks", orders, "ai-jobs:read", json={"url": URL, "events": ["*"]}
    )
    assert "orders:read" not in error["details"]["required_scopes"]


def test_another_endpoint_cannot_be_pointed_elsewhere_or_widened(hooks_app, client, tenant):
    everything = create_webhook(client, headers_for(tenant), URL)  # "*", by a full key
    mine = create_webhook(
        client, headers_for(tenant, [*WEBHOOKS_ONLY, "orders:read"]), URL, events=["order.created"]
    )
    orders = headers_for(tenant, [*WEBHOOKS_ONLY, "orders:read"])
    path = f"/api/webhooks/{everything['id']}"
    for body in ({"url": "http://127.0.0.1:8/mine"}, {"is_active": False}, {"description": "x"}):
        refused(client, "PATCH", path, orders, "ai-jobs:read", json=body)
    body = {"events": ["order.created", "product.updated"]}
    refused(client, "PATCH", f"/api/webhooks/{mine['id']}", orders, "products:read", json=body)
    response = client.patch(
        f"/api/webhooks/{mine['id']}", json={"url": "http://127.0.0.1:8/mine"}, headers=orders
    )
    assert response.status_code == 200, response.get_json()
    assert WebhookEndpoint.get_by_id(everything["id"]).url == URL


def test_recovering_needs_the_read_scope_of_what_the_endpoint_receives(hooks_app, client, tenant):
    everything = create_webhook(client, headers_for(tenant), URL)
    emit_events(tenant.id, [("order.created", "ord_1", {"n": 1})])
    deliver(hooks_app)  # fails for good: nothing listens on port 9
    path = f"/api/webhooks/{everything['id']}/recover"
    body = {"since": "2000-01-01T00:00:00Z"}
    for scopes in (WEBHOOKS_ONLY, [*WEBHOOKS_ONLY, "orders:read"]):
        refused(client, "POST", path, headers_for(tenant, scopes), "ai-jobs:read", json=body)
    pending = WebhookDelivery.select().where(WebhookDelivery.status == "pending").count()
    response = client.post(path, json=body, headers=headers_for(tenant))
    assert response.status_code == 202, response.get_json()
    assert response.get_json()["data"]["queued"] == 1
    assert WebhookDelivery.select().where(WebhookDelivery.status == "pending").count() == (
        pending + 1
    )
