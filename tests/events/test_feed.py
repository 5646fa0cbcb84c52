"""The events feed (/api/events): the tenant's events within retention, newest first, with
filters and cursors, each listed only to a caller holding its domain's read scope."""

import json

import pytest

from commerce_api.db import write_transaction
from commerce_api.events import event_params, write_events
from commerce_api.events.feed import DOMAIN_SCOPES, scope_of
from commerce_api.events.models import EVENT_TYPES
from commerce_api.timeutil import format_ms, now_ms
from tests.support import webhooks_support
from tests.support.factories import create_product, headers_for, make_tenant, walk_pages
from tests.support.webhooks_support import create_webhook, deliver, emit_events

hooks_app = webhooks_support.hooks_app  # the fixtures
receiver = webhooks_support.receiver

LIST = "/api/events"
DAY = 86_400_000


def ids(response):
    assert response.status_code == 200, response.get_json()
    return [item["id"] for item in response.get_json()["data"]]


def emit_at(tenant_id, event_type, created_at, resource_id="r1", data=None):
    with write_transaction():
        row = event_params(
            tenant_id, event_type, event_type.split(".")[0], resource_id, data or {}, created_at
        )
        write_events([row])
    return row[0]


def test_every_event_type_has_a_reading_scope():
    assert {scope_of(t) for t in EVENT_TYPES} <= set(DOMAIN_SCOPES.values())
    assert None not in {scope_of(t) for t in EVENT_TYPES}


def test_the_feed_lists_the_tenants_events_newest_first(client, tenant, headers):
    product = create_product(client, headers, sku="FEED-1")
    client.patch("/api/products/FEED-1", json={"title": "Mug"}, headers=headers)
    other = make_tenant()
    emit_events(other.id, [("order.created", "ord_x", {"id": "ord_x"})])
    response = client.get(LIST, headers=headers)
    body = response.get_json()
    assert [e["type"] for e in body["data"]] == ["product.updated", "product.created"]
    assert body["meta"]["total"] == 2 and body["meta"]["nextCursor"] is None
    created = body["data"][1]
    assert created["tenant_id"] == tenant.id and created["id"].startswith("evt_")
    assert created["data"]["sku"] == "FEED-1" and created["data"]["id"] == product["id"]
    one = client.get(f"{LIST}/{created['id']}", headers=headers)
    assert one.status_code == 200 and one.get_json()["data"] == created


def test_filters_and_cursors(client, tenant, headers):
    base = now_ms() - 10_000
    made = [
        emit_at(tenant.id, event_type, base + i * 1000, resource_id=f"r{i}")
        for i, event_type in enumerate(
            [
                "order.created",
                "order.updated",
                "inventory.adjusted",
                "order.created",
                "product.created",
            ]
        )
    ]
    assert ids(client.get(LIST, headers=headers)) == made[::-1]
    assert ids(client.get(LIST, query_string={"order": "asc"}, headers=headers)) == made
    assert ids(client.get(LIST, query_string={"type": "order.created"}, headers=headers)) == [
        made[3],
        made[0],
    ]
    assert ids(client.get(LIST, query_string={"type": "order.*"}, headers=headers)) == [
        made[3],
        made[1],
        made[0],
    ]
    window = {"created_after": format_ms(base + 1000), "created_before": format_ms(base + 3000)}
    assert ids(client.get(LIST, query_string=window, headers=headers)) == made[3:0:-1]  # inclusive
    # a walk with cursors sees every event once, in order
    assert walk_pages(client, LIST, headers, limit=2) == made[::-1]
    first = client.get(LIST, query_string={"limit": 2}, headers=headers).get_json()
    other_filter = {"limit": 2, "cursor": first["meta"]["nextCursor"], "type": "order.created"}
    assert client.get(LIST, query_string=other_filter, headers=headers).status_code == 400
    narrow = client.get(LIST, query_string={"fields": "type"}, headers=headers).get_json()
    assert set(narrow["data"][0]) == {"id", "type"}


@pytest.mark.parametrize(
    "query",
    [
        {"type": "order.exploded"},
        {"type": "*"},
        {"created_after": "yesterday"},
        {"created_after": "2026-01-02T00:00:00Z", "created_before": "2026-01-01T00:00:00Z"},
        {"limit": 0},
        {"status": "x"},
        {"fields": "secret"},
    ],
)
def test_bad_queries_are_422(client, headers, query):
    response = client.get(LIST, query_string=query, headers=headers)
    assert response.status_code == 422, response.get_json()
    assert response.get_json()["error"]["code"] == "VALIDATION_ERROR"


def test_an_event_is_listed_only_with_its_domains_read_scope(client, tenant):
    now = now_ms()
    made = {
        event_type: emit_at(tenant.id, event_type, now - 1000 + i)
        for i, event_type in enumerate(EVENT_TYPES)
    }
    for scope in sorted(set(DOMAIN_SCOPES.values())):
        headers = headers_for(tenant, [scope])
        expected = {made[t] for t in EVENT_TYPES if scope_of(t) == scope}
        listed = set(ids(client.get(LIST, query_string={"limit": 200}, headers=headers)))
        assert listed == expected, scope
        for event_type, event_id in made.items():
            response = client.get(f"{LIST}/{event_id}", headers=headers)
            if scope_of(event_type) == scope:
                assert response.status_code == 200
            else:
                assert response.status_code == 403, (scope, event_type)
                error = response.get_json()["error"]
                assert error["code"] == "INSUFFICIENT_SCOPE"
                assert error["details"]["required_scope"] == scope_of(event_type)
    two = headers_for(tenant, ["orders:read", "pricing:read"])
    listed = set(ids(client.get(LIST, query_string={"limit": 200}, headers=two)))
    assert listed == {made[t] for t in EVENT_TYPES if t.startswith(("order.", "pricing."))}
    refused = client.get(LIST, query_string={"type": "product.created"}, headers=two)
    assert refused.status_code == 403
    assert refused.get_json()["error"]["details"]["required_scope"] == "products:read"
    nothing = client.get(LIST, headers=headers_for(tenant, ["marketplaces:read"]))
    assert nothing.status_code == 403
    everything = headers_for(tenant, ["all"])
    assert set(ids(client.get(LIST, query_string={"limit": 200}, headers=everything))) == set(
        made.values()
    )


def test_only_events_within_retention_are_shown(client, tenant, headers, monkeypatch, app):
    old = emit_at(tenant.id, "order.created", now_ms() - 31 * DAY)
    recent = emit_at(tenant.id, "order.created", now_ms() - 29 * DAY)
    assert ids(client.get(LIST, headers=headers)) == [recent]
    assert client.get(f"{LIST}/{old}", headers=headers).get_json()["error"]["code"] == (
        "EVENT_NOT_FOUND"
    )
    monkeypatch.setitem(app.config, "WEBHOOK_RETENTION_DAYS", 60)
    assert ids(client.get(LIST, headers=headers)) == [recent, old]


def test_another_tenants_event_is_404(client, headers):
    other = make_tenant()
    (theirs,) = emit_events(other.id, [("order.created", "ord_x", {"id": "ord_x"})])
    response = client.get(f"{LIST}/{theirs}", headers=headers)
    assert response.status_code == 404
    assert response.get_json()["error"] == {
        "code": "EVENT_NOT_FOUND",
        "message": "The event does not exist.",
        "details": {"id": theirs},
    }


def test_the_feed_carries_the_bodies_webhooks_carry(hooks_app, client, headers, receiver):
    create_webhook(client, headers, receiver.url)
    create_product(client, headers, sku="SAME-1")
    client.put(
        "/api/inventory/SAME-1",
        json={"warehouse_id": "x", "quantity": 1, "reason": "cycle_count"},
        headers=headers,
    )
    deliver(hooks_app)
    delivered = {body["id"]: body for body in receiver.bodies()}
    listed = client.get(LIST, headers=headers).get_json()["data"]
    assert listed and {e["id"] for e in listed} == set(delivered)
    for event in listed:
        assert event == delivered[event["id"]]
        raw = [r["body"] for r in receiver.requests if json.loads(r["body"])["id"] == event["id"]]
        assert json.loads(raw[0]) == event
