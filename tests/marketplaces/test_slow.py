"""A slow marketplace must not block the service (issue 13, defect 1).

The adapter trickles its answer one byte a second: every call ends at its wall-clock
deadline with 503 MARKETPLACE_UNAVAILABLE, a bulk shipment ends at the bulk deadline, a
tenant's outbound calls are capped, and other tenants are served meanwhile.
"""

import threading
import time

import pytest
import requests

from commerce_api.marketplaces.base import MarketplaceUnavailable
from commerce_api.marketplaces.limits import TenantBusy, deadline_scope, remaining, tenant_slot
from commerce_api.marketplaces.models import SyncAttempt
from commerce_api.orders.ingest import upsert_order
from commerce_api.orders.models import Order
from tests.support.factories import auth_headers, make_key, make_tenant, product_body
from tests.support.orders_support import (
    connect,
    make_own_warehouse,
    make_products,
    order_body,
    snapshot,
    stock_up,
)
from tests.support.servers import gunicorn_server
from tests.support.slow_marketplace import TricklingMarketplace

DEADLINE = 1.0
BULK_DEADLINE = 2.0
SLACK = 8.0  # generous: the trickled answer alone would take minutes
SHIPMENT = {"carrier": "UPS", "tracking_number": "1Z999"}


@pytest.fixture
def trickle():
    with TricklingMarketplace() as adapter:
        yield adapter


@pytest.fixture
def deadlines(app, monkeypatch):
    monkeypatch.setitem(app.config, "MARKETPLACE_DEADLINE_SECONDS", DEADLINE)
    monkeypatch.setitem(app.config, "MARKETPLACE_BULK_DEADLINE_SECONDS", BULK_DEADLINE)


def slow_shop(client, headers, tenant, url, orders=1):
    """Products, stock, an ``http`` connection to ``url`` and ``orders`` orders."""
    make_products(client, headers, "MUG-1", "TOWEL-1")
    warehouse = make_own_warehouse(tenant)
    stock_up(tenant, warehouse, {"MUG-1": 1000, "TOWEL-1": 1000})
    connect(tenant, "mirakl", "http", base_url=url)
    return [
        upsert_order(tenant.id, order_body(f"M-{n}", marketplace="mirakl"), source="import")[1]
        for n in range(orders)
    ]


def test_a_trickling_marketplace_ends_at_the_deadline(client, headers, tenant, trickle, deadlines):
    (order_id,) = slow_shop(client, headers, tenant, trickle.url)
    before = snapshot()
    started = time.monotonic()
    response = client.post(f"/api/orders/{order_id}/shipment", json=SHIPMENT, headers=headers)
    elapsed = time.monotonic() - started
    assert response.status_code == 503, response.get_json()
    error = response.get_json()["error"]
    assert error["code"] == "MARKETPLACE_UNAVAILABLE"
    assert error["details"]["reason"] == "TIMEOUT"
    assert int(response.headers["Retry-After"]) >= 1
    assert trickle.requests == 1
    assert elapsed < DEADLINE + SLACK
    assert snapshot() == before  # the order is not shipped
    (attempt,) = SyncAttempt.select().where(
        (SyncAttempt.resource_id == order_id) & (SyncAttempt.operation == "confirm_shipment")
    )
    assert (attempt.status, attempt.error_code) == ("unavailable", "TIMEOUT")


def test_a_bulk_shipment_ends_at_the_bulk_deadline(client, headers, tenant, trickle, deadlines):
    order_ids = slow_shop(client, headers, tenant, trickle.url, orders=100)
    shipments = [
        {"order_id": order_id, "carrier": "UPS", "tracking_number": f"1Z{n}"}
        for n, order_id in enumerate(order_ids)
    ]
    started = time.monotonic()
    response = client.post(
        "/api/orders/bulk-shipment", json={"shipments": shipments}, headers=headers
    )
    elapsed = time.monotonic() - started
    assert response.status_code == 200, response.get_json()
    data = response.get_json()["data"]
    assert (data["succeeded"], data["failed"]) == (0, 100)
    assert {e["code"] for e in data["errors"]} == {"MARKETPLACE_UNAVAILABLE"}
    reasons = [e["details"]["reason"] for e in data["errors"]]
    # the calls made were cut at their deadline; the items not reached never called
    assert set(reasons) <= {"TIMEOUT", "DEADLINE_EXCEEDED", "BULK_DEADLINE"}
    assert reasons.count("BULK_DEADLINE") >= 90
    assert trickle.requests <= 3
    assert elapsed < BULK_DEADLINE + SLACK
    assert Order.select().where(Order.status == "shipped").count() == 0


def test_the_tenant_cap_refuses_at_once_and_writes_nothing(
    client, headers, tenant, trickle, deadlines, monkeypatch, app
):
    monkeypatch.setitem(app.config, "MARKETPLACE_TENANT_CONCURRENCY", 2)
    (order_id,) = slow_shop(client, headers, tenant, trickle.url)
    before = snapshot()
    with tenant_slot(tenant.id, 2), tenant_slot(tenant.id, 2):  # two calls in flight
        response = client.post(f"/api/orders/{order_id}/shipment", json=SHIPMENT, headers=headers)
    assert response.status_code == 503
    error = response.get_json()["error"]
    assert error["code"] == "MARKETPLACE_UNAVAILABLE"
    assert error["details"]["reason"] == "TENANT_CONCURRENCY" and error["details"]["limit"] == 2
    assert response.headers["Retry-After"] == "2"
    assert trickle.requests == 0  # refused, not queued
    assert snapshot() == before
    shipments = SyncAttempt.select().where(SyncAttempt.operation == "confirm_shipment")
    assert shipments.count() == 0
    # another tenant's slots are its own
    with (
        tenant_slot("another-tenant", 2),
        tenant_slot("another-tenant", 2),
        tenant_slot(tenant.id, 2),
    ):
        pass


def test_tenant_slots_are_released():
    with tenant_slot("t", 1), pytest.raises(TenantBusy), tenant_slot("t", 1):
        pass
    with tenant_slot("t", 1):  # free again
        pass
    with pytest.raises(RuntimeError), tenant_slot("t", 1):
        raise RuntimeError("the call failed")
    with tenant_slot("t", 1):
        pass


def test_an_outer_deadline_shortens_each_call():
    assert remaining(10) == 10
    with deadline_scope(0.5):
        assert 0 < remaining(10) <= 0.5
        with deadline_scope(5):  # an inner scope never extends the outer one
            assert remaining(10) <= 0.5
    with deadline_scope(0), pytest.raises(MarketplaceUnavailable) as caught:
        remaining(10)
    assert caught.value.code == "DEADLINE_EXCEEDED"


@pytest.mark.slow
def test_two_slow_shipments_do_not_stall_another_tenant(app, database_url, trickle):
    slow_tenant = make_tenant("starter")
    _, secret = make_key(slow_tenant)
    slow_headers = auth_headers(slow_tenant, secret)
    other = make_tenant("starter")
    _, other_secret = make_key(other)
    other_headers = auth_headers(other, other_secret)
    connect(slow_tenant, "mirakl", "http", base_url=trickle.url)
    order_ids = [
        upsert_order(slow_tenant.id, order_body(f"S-{n}", marketplace="mirakl"), source="import")[1]
        for n in range(2)
    ]
    config = {"MARKETPLACE_DEADLINE_SECONDS": 20, "MARKETPLACE_READ_TIMEOUT": 20}
    with gunicorn_server(database_url, workers=2, threads=4, **config) as base:
        created = requests.post(
            base + "/api/products",
            json=product_body(sku="OTHER-1"),
            headers=other_headers,
            timeout=10,
        )
        assert created.status_code == 201, created.text
        answers = []

        def ship(order_id):
            answers.append(
                requests.post(
                    f"{base}/api/orders/{order_id}/shipment",
                    json=SHIPMENT,
                    headers=slow_headers,
                    timeout=60,
                )
            )

        threads = [threading.Thread(target=ship, args=(order_id,)) for order_id in order_ids]
        for thread in threads:
            thread.start()
        waited = time.monotonic() + 15
        while trickle.in_flight < 2 and time.monotonic() < waited:
            time.sleep(0.05)
        assert trickle.in_flight == 2  # both shipments wait on the marketplace
        for _ in range(4):  # on both processes, whichever takes it
            response = requests.get(
                base + "/api/products/OTHER-1", headers=other_headers, timeout=5
            )
            assert response.status_code == 200
            assert response.json()["data"]["sku"] == "OTHER-1"
        assert trickle.in_flight == 2  # still in flight meanwhile
        for thread in threads:
            thread.join(60)
        assert [a.status_code for a in answers] == [503, 503]
        assert {a.json()["error"]["details"]["reason"] for a in answers} == {"TIMEOUT"}
