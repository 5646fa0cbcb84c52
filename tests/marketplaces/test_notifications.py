"""POST /api/marketplaces/:id/notifications through HTTP (DESIGN 13), with the sandbox's
signed notifications; the queued pull is run by the worker's loop (once)."""

import threading

import pytest

from commerce_api.marketplaces.sandbox_notifications import sign
from commerce_api.marketplaces.services import connect_marketplace
from commerce_api.orders.models import MarketplaceNotification, Order, OrderPullRequest
from commerce_api.orders.notified import NotifiedPullLoop
from tests.support.factories import make_tenant
from tests.support.notifications import (
    SECRET,
    cancel_order,
    connect_notified,
    notification_path,
    place_order,
    signed,
)
from tests.support.orders_support import (
    events_of,
    levels,
    make_own_warehouse,
    make_products,
    stock_up,
)


@pytest.fixture
def shop(client, headers, tenant):
    """MUG-1 (10 on hand) and a quiet sandbox connection that takes notifications."""
    make_products(client, headers, "MUG-1", "TOWEL-1")
    stock_up(tenant, make_own_warehouse(tenant), {"MUG-1": 10, "TOWEL-1": 5})
    return connect_notified(tenant.id)


def pull_now(app):
    """One pass of the worker's ``order_notified_pull`` loop, until nothing is due."""
    done = threading.Event()
    done.set()
    return NotifiedPullLoop(app.config, "test-worker").run(done)


def post(client, connection_id, headers, body):
    return client.post(notification_path(connection_id), data=body, headers=headers)


def nothing_queued():
    return OrderPullRequest.select().count() == 0 and MarketplaceNotification.select().count() == 0


def test_a_notified_order_is_pulled_and_reserves_stock(app, client, headers, tenant, shop):
    order = place_order(shop.id, [{"sku": "MUG-1", "quantity": 3}])
    response = post(client, shop.id, *signed(order["external_order_id"]))
    assert response.status_code == 200, response.get_json()
    data = response.get_json()["data"]
    assert data["order_ids"] == [order["external_order_id"]]
    assert (data["duplicate"], data["queued"], data["topic"]) == (False, 1, "orders/create")
    assert Order.select().count() == 0  # only recorded and queued: the worker pulls it
    assert pull_now(app)["pulled"] == 1
    listed = client.get("/api/orders", headers=headers).get_json()["data"]
    assert [o["external_order_id"] for o in listed] == [order["external_order_id"]]
    assert levels(tenant.id, "MUG-1") == (10, 3)
    assert OrderPullRequest.select().count() == 0


def test_a_wrong_or_missing_signature_is_401_and_queues_nothing(client, shop):
    order = place_order(shop.id, [{"sku": "MUG-1", "quantity": 1}])
    external_id = order["external_order_id"]
    cases = [
        signed(external_id, signature=""),  # none
        signed(external_id, signature="bm90IHRoZSBzaWduYXR1cmU="),
        signed(external_id, secret="another-secret-of-enough-length"),
    ]
    headers, body = signed(external_id)
    cases.append((headers, body.replace(b"}", b" }")))  # the body changed after signing
    for headers, body in cases:
        response = post(client, shop.id, headers, body)
        assert response.status_code == 401, response.get_json()
        assert response.get_json()["error"]["code"] == "NOTIFICATION_SIGNATURE_INVALID"
    assert nothing_queued()


def test_a_replayed_notification_is_harmless(app, client, headers, tenant, shop):
    order = place_order(shop.id, [{"sku": "MUG-1", "quantity": 2}])
    request = signed(order["external_order_id"], event_id="evt-1")
    first = post(client, shop.id, *request)
    again = post(client, shop.id, *request)
    assert first.status_code == again.status_code == 200
    assert again.get_json()["data"]["duplicate"] is True
    assert again.get_json()["data"]["queued"] == 0
    assert OrderPullRequest.select().count() == 1
    assert MarketplaceNotification.select().count() == 1
    pull_now(app)
    assert post(client, shop.id, *request).get_json()["data"]["duplicate"] is True
    assert pull_now(app)["pulled"] == 0  # nothing queued by the replay after the pull
    orders = list(Order.select())
    assert len(orders) == 1
    assert events_of(orders[0].id).count("order.created") == 1
    assert levels(tenant.id, "MUG-1") == (10, 2)


def test_a_body_that_is_not_json_is_400(client, shop):
    headers, _ = signed("SBX-000001")
    for body in (b"not json", b'{"order_id": ', b"[1, 2]", b'{"order_id": 5}', b""):
        headers["X-Sandbox-Hmac-Sha256"] = sign(SECRET, body)
        response = post(client, shop.id, headers, body)
        assert response.status_code == 400, (body, response.get_json())
        assert response.get_json()["error"]["code"] == "NOTIFICATION_BODY_INVALID"
    headers, body = signed("SBX-000001", topic="products/update")
    response = post(client, shop.id, headers, body)
    assert response.status_code == 400, response.get_json()
    assert nothing_queued()


def test_an_unknown_or_inactive_connection_is_404(client, headers, shop):
    request = signed("SBX-000001")
    response = post(client, "conn_01J0000000000000000000000", *request)
    assert response.status_code == 404
    assert response.get_json()["error"]["code"] == "CONNECTION_NOT_FOUND"
    disabled = client.patch(
        f"/api/marketplaces/{shop.id}", json={"status": "disabled"}, headers=headers
    )
    assert disabled.status_code == 200, disabled.get_json()
    response = post(client, shop.id, *request)
    assert response.status_code == 404
    assert response.get_json()["error"]["code"] == "CONNECTION_NOT_FOUND"
    assert nothing_queued()


def test_another_tenants_connection_takes_only_its_own_signature(client, headers, shop):
    other = make_tenant()
    theirs = connect_notified(other.id, secret="the-other-tenants-secret-0123")
    order = place_order(shop.id, [{"sku": "MUG-1", "quantity": 1}])
    # our order, signed with our secret, sent to their connection (with our API key too)
    request_headers, body = signed(order["external_order_id"])
    request_headers.update(headers)
    response = post(client, theirs.id, request_headers, body)
    assert response.status_code == 401
    assert response.get_json()["error"]["code"] == "NOTIFICATION_SIGNATURE_INVALID"
    # and a missing connection looks the same whichever tenant asks
    missing = post(client, "conn_01J0000000000000000000000", request_headers, body)
    assert missing.status_code == 404
    assert missing.get_json()["error"]["details"] == {"id": "conn_01J0000000000000000000000"}
    assert nothing_queued()


def test_a_connector_without_notifications_is_refused(client, tenant, shop):
    plain = connect_marketplace(
        tenant.id, "quiet", "sandbox", settings={"initial_orders": 0}, created_by="test"
    )
    http = connect_marketplace(
        tenant.id, "mirakl", "http", base_url="http://127.0.0.1:9", created_by="test",
        allow_private=True,
    )  # fmt: skip
    for connection in (plain, http):
        response = post(client, connection.id, *signed("SBX-000001"))
        assert response.status_code == 422, response.get_json()
        assert response.get_json()["error"]["code"] == "NOTIFICATIONS_UNSUPPORTED"
    assert nothing_queued()


def test_an_oversized_notification_is_413(client, shop):
    body = b'{"order_id": "' + b"x" * (1024 * 1024) + b'"}'
    headers, _ = signed("x")
    response = post(client, shop.id, headers, body)
    assert response.status_code == 413
    assert nothing_queued()


def test_a_cancellation_notified_cancels_the_order_and_frees_its_stock(
    app, client, headers, tenant, shop
):
    order = place_order(shop.id, [{"sku": "MUG-1", "quantity": 4}])
    external_id = order["external_order_id"]
    assert post(client, shop.id, *signed(external_id)).status_code == 200
    pull_now(app)
    assert levels(tenant.id, "MUG-1") == (10, 4)
    cancel_order(shop.id, external_id)
    response = post(client, shop.id, *signed(external_id, topic="orders/cancelled"))
    assert response.status_code == 200
    pull_now(app)
    ours = Order.get(Order.external_order_id == external_id)
    assert ours.status == "cancelled"
    assert levels(tenant.id, "MUG-1") == (10, 0)


def test_the_endpoint_is_documented_without_security(client):
    spec = client.get("/api/openapi.json").get_json()
    operation = spec["paths"]["/api/marketplaces/{connection_id}/notifications"]["post"]
    assert operation["security"] == []
    assert {"200", "400", "401", "404", "413", "422"} <= set(operation["responses"])
