"""The OpenAPI document covers the settings endpoints: keys, events, recover, look-ups."""

from tests.support.openapi_support import resolve


def query_names(operation):
    return {p["name"] for p in operation.get("parameters", []) if p["in"] == "query"}


def test_the_keys_api_is_documented(spec):
    paths = spec["paths"]
    create = paths["/api/api-keys"]["post"]
    body = resolve(spec, create["requestBody"]["content"]["application/json"]["schema"])
    assert set(body["required"]) == {"name", "scopes"}
    assert set(body["properties"]) == {
        "name",
        "scopes",
        "expires_at",
        "allowed_ips",
        "rate_limit_per_minute",
        "rate_limit_per_hour",
    }
    assert "all" in body["properties"]["scopes"]["items"]["enum"]
    assert "SCOPE_ESCALATION" in create["responses"]["403"]["description"]
    assert "PLAN_REQUIRED" in create["responses"]["422"]["description"]
    created = resolve(spec, create["responses"]["201"]["content"]["application/json"]["schema"])
    item = resolve(spec, created["properties"]["data"])
    assert {"key", "last_used_at"} <= set(item["properties"])
    listed = paths["/api/api-keys/{key_id}"]["get"]["responses"]["200"]
    shown = resolve(spec, listed["content"]["application/json"]["schema"])
    assert "key" not in resolve(spec, shown["properties"]["data"])["properties"]
    delete = paths["/api/api-keys/{key_id}"]["delete"]
    assert query_names(delete) == {"confirm"}
    assert "CONFIRMATION_REQUIRED" in delete["responses"]["409"]["description"]
    assert set(paths["/api/api-keys/{key_id}"]) >= {"get", "patch", "delete"}


def test_the_events_feed_recover_and_lookups_are_documented(spec):
    paths = spec["paths"]
    events = paths["/api/events"]["get"]
    assert {"type", "created_after", "created_before", "limit", "cursor"} <= query_names(events)
    type_param = next(p for p in events["parameters"] if p["name"] == "type")
    assert "order.created" in type_param["schema"]["enum"]
    assert "order.*" in type_param["schema"]["enum"]
    assert (
        "EVENT_NOT_FOUND"
        in paths["/api/events/{event_id}"]["get"]["responses"]["404"]["description"]
    )
    recover = paths["/api/webhooks/{webhook_id}/recover"]["post"]
    assert "202" in recover["responses"]
    body = resolve(spec, recover["requestBody"]["content"]["application/json"]["schema"])
    assert body["required"] == ["since"]
    assert {"external_order_id", "sku", "updated_after"} <= query_names(paths["/api/orders"]["get"])
    ledger = paths["/api/inventory/adjustments"]["get"]
    assert {"sku", "warehouse_id", "reason", "start_date", "end_date"} <= query_names(ledger)
