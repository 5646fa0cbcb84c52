"""Pricing rules through HTTP: create, read, list, update, delete, validation, RULE_CONFLICT."""

import pytest

from tests.support.factories import headers_for, make_tenant
from tests.support.pricing_support import connect_sandbox, create_rule, pricing_snapshot

RULES = "/api/pricing/rules"


def test_create_fills_defaults_and_reads_back(client, headers):
    rule = create_rule(
        client, headers, name="Match the cheapest", type="competitor_match", value=-0.5
    )
    assert rule["id"].startswith("rule_")
    assert {k: v for k, v in rule.items() if k not in ("id", "created_at", "updated_at")} == {
        "name": "Match the cheapest",
        "type": "competitor_match",
        "value": -0.5,
        "value_type": "fixed",
        "applies_to": "all",
        "category": None,
        "skus": None,
        "marketplace": "all",
        "priority": 100,
        "is_active": True,
    }
    assert rule["created_at"].endswith("Z")
    fetched = client.get(f"{RULES}/{rule['id']}", headers=headers)
    assert fetched.status_code == 200 and fetched.get_json()["data"] == rule
    only = client.get(f"{RULES}/{rule['id']}?fields=type", headers=headers).get_json()["data"]
    assert only == {"id": rule["id"], "type": "competitor_match"}


def test_every_type_value_type_and_scope_is_accepted(client, headers, tenant):
    connect_sandbox(tenant, "amazon")
    priority = 0
    for rule_type in ("floor", "ceiling", "competitor_match", "buy_box_target", "margin_target"):
        for value_type in ("fixed", "percent"):
            for scope in ({"applies_to": "all"}, {"applies_to": "category", "category": "kitchen"},
                          {"applies_to": "sku", "skus": ["B-2", "A-1", "A-1"]}):  # fmt: skip
                priority += 1
                rule = create_rule(
                    client,
                    headers,
                    type=rule_type,
                    value=12.5,
                    value_type=value_type,
                    priority=priority,
                    marketplace="amazon" if priority % 2 else "all",
                    **scope,
                )
                assert rule["type"] == rule_type and rule["value_type"] == value_type
                assert rule["applies_to"] == scope["applies_to"]
                if scope["applies_to"] == "sku":
                    assert rule["skus"] == ["A-1", "B-2"]  # unique, sorted
    listed = client.get(f"{RULES}?limit=200", headers=headers).get_json()
    assert listed["meta"]["total"] == 30


@pytest.mark.parametrize(
    "body, field",
    [
        ({"type": "discount", "value": 1}, "type"),
        ({"type": "floor", "value": 1, "value_type": "ratio"}, "value_type"),
        ({"type": "floor", "value": 1, "applies_to": "brand"}, "applies_to"),
        ({"type": "floor", "value": 1, "applies_to": "category"}, "category"),
        ({"type": "floor", "value": 1, "applies_to": "category", "category": None}, "category"),
        ({"type": "floor", "value": 1, "category": "kitchen"}, "category"),
        ({"type": "floor", "value": 1, "applies_to": "sku"}, "skus"),
        ({"type": "floor", "value": 1, "applies_to": "sku", "skus": []}, "skus"),
        ({"type": "floor", "value": 1, "applies_to": "sku", "skus": ["A"] * 1001}, "skus"),
        ({"type": "floor", "value": 1, "applies_to": "sku", "skus": ["bad sku"]}, "skus"),
        ({"type": "floor", "value": 1, "skus": ["A"]}, "skus"),
        ({"type": "margin_target", "value": 100, "value_type": "percent"}, "value"),
        ({"type": "margin_target", "value": 150, "value_type": "percent"}, "value"),
        ({"type": "competitor_match", "value": -100, "value_type": "percent"}, "value"),
        ({"type": "floor", "value": -1}, "value"),
        ({"type": "floor", "value": "5"}, "value"),
        ({"type": "floor", "value": 1.234}, "value"),
        ({"type": "floor"}, "value"),
        ({"type": "floor", "value": 1, "priority": -1}, "priority"),
        ({"type": "floor", "value": 1, "priority": 1001}, "priority"),
        ({"type": "floor", "value": 1, "priority": "5"}, "priority"),
        ({"type": "floor", "value": 1, "priority": 5.5}, "priority"),
        ({"type": "floor", "value": 1, "marketplace": "ebay"}, "marketplace"),
        ({"type": "floor", "value": 1, "marketplace": ""}, "marketplace"),
        ({"type": "floor", "value": 1, "is_active": "yes"}, "is_active"),
        ({"type": "floor", "value": 1, "colour": "red"}, "colour"),
        ({"value": 1}, "type"),
    ],
)
def test_bad_rules_are_refused_and_write_nothing(client, headers, tenant, body, field):
    connect_sandbox(tenant, "amazon")
    before = pricing_snapshot()
    response = client.post(RULES, json={"name": "r", **body}, headers=headers)
    assert response.status_code == 422, response.get_json()
    error = response.get_json()["error"]
    assert error["code"] == "VALIDATION_ERROR"
    assert field in error["details"]["fields"], error
    assert pricing_snapshot() == before


def test_marketplace_must_be_all_or_connected(client, headers, tenant):
    error = create_rule(client, headers, status=422, type="floor", value=1, marketplace="amazon")
    assert error["code"] == "VALIDATION_ERROR"
    assert "connected marketplace" in error["details"]["fields"]["marketplace"][0]
    connect_sandbox(tenant, "amazon")
    rule = create_rule(client, headers, type="floor", value=1, marketplace="amazon")
    assert rule["marketplace"] == "amazon"


@pytest.mark.parametrize(
    "existing, candidate, conflicts",
    [
        # same type and priority, scopes overlapping
        ({}, {}, True),
        ({"marketplace": "amazon"}, {}, True),
        ({}, {"marketplace": "amazon"}, True),
        ({"marketplace": "amazon"}, {"marketplace": "amazon"}, True),
        ({"applies_to": "category", "category": "kitchen"}, {}, True),
        (
            {"applies_to": "category", "category": "kitchen"},
            {"applies_to": "category", "category": "kitchen"},
            True,
        ),  # fmt: skip
        (
            {"applies_to": "sku", "skus": ["A", "B"]},
            {"applies_to": "sku", "skus": ["B", "C"]},
            True,
        ),
        ({"applies_to": "sku", "skus": ["A"]}, {}, True),
        # no overlap, or not the same type/priority, or the other is inactive
        ({"marketplace": "amazon"}, {"marketplace": "ebay"}, False),
        (
            {"applies_to": "category", "category": "kitchen"},
            {"applies_to": "category", "category": "home"},
            False,
        ),  # fmt: skip
        ({"applies_to": "sku", "skus": ["A"]}, {"applies_to": "sku", "skus": ["B"]}, False),
        ({"priority": 50}, {}, False),
        ({"type": "ceiling"}, {}, False),
        ({"is_active": False}, {}, False),
    ],
)
def test_rule_conflict_on_create(client, headers, tenant, existing, candidate, conflicts):
    connect_sandbox(tenant, "amazon")
    connect_sandbox(tenant, "ebay")
    first = create_rule(client, headers, **{"type": "floor", "value": 5, **existing})
    before = pricing_snapshot()
    response = client.post(
        RULES, json={"name": "second", "type": "floor", "value": 6, **candidate}, headers=headers
    )
    if conflicts:
        assert response.status_code == 409, response.get_json()
        error = response.get_json()["error"]
        assert error["code"] == "RULE_CONFLICT"
        assert error["details"]["rule_id"] == first["id"]
        assert first["id"] in error["message"]
        assert pricing_snapshot() == before
    else:
        assert response.status_code == 201, response.get_json()


def test_an_inactive_rule_may_overlap_until_it_is_reactivated(client, headers):
    active = create_rule(client, headers, type="ceiling", value=50, priority=7)
    dormant = create_rule(client, headers, type="ceiling", value=40, priority=7, is_active=False)
    before = pricing_snapshot()
    response = client.patch(f"{RULES}/{dormant['id']}", json={"is_active": True}, headers=headers)
    assert response.status_code == 409
    error = response.get_json()["error"]
    assert error["code"] == "RULE_CONFLICT" and error["details"]["rule_id"] == active["id"]
    assert pricing_snapshot() == before
    # once the active one steps aside, the dormant one may come back
    assert client.delete(f"{RULES}/{active['id']}", headers=headers).status_code == 204
    response = client.patch(f"{RULES}/{dormant['id']}", json={"is_active": True}, headers=headers)
    assert response.status_code == 200 and response.get_json()["data"]["is_active"] is True


def test_rule_conflict_on_patch(client, headers):
    a = create_rule(client, headers, type="margin_target", value=20, value_type="percent",
                    applies_to="category", category="kitchen", priority=10)  # fmt: skip
    b = create_rule(client, headers, type="margin_target", value=30, value_type="percent",
                    applies_to="category", category="home", priority=10)  # fmt: skip
    before = pricing_snapshot()
    for change in ({"category": "kitchen"}, {"applies_to": "all"}):
        response = client.patch(f"{RULES}/{b['id']}", json=change, headers=headers)
        assert response.status_code == 409, response.get_json()
        assert response.get_json()["error"]["details"]["rule_id"] == a["id"]
    assert pricing_snapshot() == before
    moved = client.patch(f"{RULES}/{b['id']}", json={"category": "kitchen", "priority": 11},
                         headers=headers)  # fmt: skip
    assert moved.status_code == 200
    assert moved.get_json()["data"]["category"] == "kitchen"
    assert moved.get_json()["data"]["priority"] == 11


def test_patch_changes_only_what_it_names_and_checks_the_result(client, headers):
    rule = create_rule(client, headers, type="floor", value=5, applies_to="sku", skus=["A"])
    response = client.patch(f"{RULES}/{rule['id']}", json={"name": "Renamed"}, headers=headers)
    assert response.status_code == 200
    renamed = response.get_json()["data"]
    assert renamed["name"] == "Renamed" and renamed["skus"] == ["A"]
    assert renamed["updated_at"] >= rule["updated_at"]
    # a new scope clears the old scope's fields
    response = client.patch(
        f"{RULES}/{rule['id']}",
        json={"applies_to": "category", "category": "home"},
        headers=headers,
    )
    assert response.status_code == 200
    assert response.get_json()["data"]["skus"] is None
    before = pricing_snapshot()
    for change, field in [
        ({"category": None}, "category"),
        ({"applies_to": "all", "category": "home"}, "category"),
        ({"skus": ["A"]}, "skus"),
        ({"type": "margin_target", "value_type": "percent", "value": 100}, "value"),
        ({"priority": 2000}, "priority"),
        ({"type": "markup"}, "type"),
        ({"marketplace": "ebay"}, "marketplace"),
        ({"id": "rule_x"}, "id"),
    ]:
        response = client.patch(f"{RULES}/{rule['id']}", json=change, headers=headers)
        assert response.status_code == 422, (change, response.get_json())
        assert field in response.get_json()["error"]["details"]["fields"], change
    assert pricing_snapshot() == before


def test_unknown_rules_are_not_found(client, headers):
    for method, body in (("get", None), ("patch", {"name": "x"}), ("delete", None)):
        response = getattr(client, method)(f"{RULES}/rule_missing", json=body, headers=headers)
        assert response.status_code == 404
        assert response.get_json()["error"]["code"] == "RULE_NOT_FOUND"


def test_delete(client, headers):
    rule = create_rule(client, headers, type="floor", value=5)
    response = client.delete(f"{RULES}/{rule['id']}", headers=headers)
    assert response.status_code == 204 and response.data == b""
    assert client.get(f"{RULES}/{rule['id']}", headers=headers).status_code == 404
    assert client.delete(f"{RULES}/{rule['id']}", headers=headers).status_code == 404


def test_list_filters_and_pages(client, headers, tenant):
    connect_sandbox(tenant, "amazon")
    a = create_rule(client, headers, type="floor", value=5, priority=1)
    b = create_rule(client, headers, type="floor", value=5, priority=2, marketplace="amazon")
    c = create_rule(client, headers, type="ceiling", value=90, priority=3, is_active=False)
    d = create_rule(client, headers, type="competitor_match", value=0, priority=4)

    def ids(query=""):
        response = client.get(f"{RULES}?{query}", headers=headers)
        assert response.status_code == 200, response.get_json()
        return [rule["id"] for rule in response.get_json()["data"]]

    assert ids() == [d["id"], c["id"], b["id"], a["id"]]  # newest first
    assert ids("order=asc") == [a["id"], b["id"], c["id"], d["id"]]
    assert ids("type=floor") == [b["id"], a["id"]]
    assert ids("marketplace=amazon") == [b["id"]]
    assert ids("marketplace=all") == [d["id"], c["id"], a["id"]]
    assert ids("is_active=false") == [c["id"]]
    assert ids("is_active=true&type=floor") == [b["id"], a["id"]]
    assert ids("sort=priority&order=asc") == [a["id"], b["id"], c["id"], d["id"]]
    first = client.get(f"{RULES}?limit=3", headers=headers).get_json()
    assert first["meta"]["total"] == 4 and first["meta"]["page"] == 1
    rest = client.get(f"{RULES}?limit=3&cursor={first['meta']['nextCursor']}", headers=headers)
    assert [r["id"] for r in rest.get_json()["data"]] == [a["id"]]
    assert rest.get_json()["meta"]["nextCursor"] is None
    for bad in ("type=discount", "is_active=maybe", "limit=0", "sort=name", "colour=red"):
        response = client.get(f"{RULES}?{bad}", headers=headers)
        assert response.status_code == 422, bad
    assert client.get(f"{RULES}?cursor=zzz", headers=headers).status_code == 400


def test_rules_are_tenant_isolated(client, headers):
    mine = create_rule(client, headers, type="floor", value=5)
    other = headers_for(make_tenant())
    for method, body in (("get", None), ("patch", {"name": "x"}), ("delete", None)):
        response = getattr(client, method)(f"{RULES}/{mine['id']}", json=body, headers=other)
        assert response.status_code == 404
        assert response.get_json()["error"]["code"] == "RULE_NOT_FOUND"
    assert client.get(RULES, headers=other).get_json()["data"] == []
    # the other tenant's rules never conflict with mine
    theirs = create_rule(client, other, type="floor", value=5)
    assert theirs["id"] != mine["id"]
    assert client.get(f"{RULES}/{mine['id']}", headers=headers).get_json()["data"] == mine


def test_scopes(client, tenant):
    reader = headers_for(tenant, scopes=["pricing:read"])
    response = client.post(RULES, json={"name": "r", "type": "floor", "value": 1}, headers=reader)
    assert response.status_code == 403
    assert response.get_json()["error"]["details"]["required_scope"] == "pricing:write"
    assert client.get(RULES, headers=reader).status_code == 200
    outsider = headers_for(tenant, scopes=["products:read"])
    assert client.get(RULES, headers=outsider).status_code == 403
