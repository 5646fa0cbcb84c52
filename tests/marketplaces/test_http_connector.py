"""The ``http`` connector against a real HTTP server on 127.0.0.1 that plays the marketplace.

Each case (accepting, rejecting, answering too slowly, failing, refusing connections) ends
in the documented status, with nothing written but the attempt in the sync history.
"""

import email.utils
import json
import time
from http.server import BaseHTTPRequestHandler
from urllib.parse import parse_qs, urlparse

import pytest

from commerce_api.marketplaces.models import MarketplaceConnection, SyncAttempt
from commerce_api.orders.models import Order
from commerce_api.orders.pulls import pull_connection
from commerce_api.products.models import Listing
from tests.support.orders_support import (
    attempts,
    connect,
    levels,
    make_own_warehouse,
    make_products,
    order_body,
    run_job,
    snapshot,
    stock_up,
)
from tests.support.products_support import price_listing
from tests.support.servers import LocalHTTPServer, free_port

READ_TIMEOUT = 0.4
SLOW = 2.0  # how long the "slow" marketplace takes: well past the read time-out


class FakeMarketplace(LocalHTTPServer):
    """A marketplace adapter on 127.0.0.1; ``modes[key]`` picks how it answers."""

    def __init__(self):
        self.modes = {}
        self.requests = []
        self.pages = {}  # cursor (None for the first) -> {"orders", "next_cursor", "has_more"}
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):  # keep the test output quiet
                pass

            def _answer(self, status, payload=None, headers=None, raw=None):
                body = raw if raw is not None else json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                for name, value in (headers or {}).items():
                    self.send_header(name, value)
                self.end_headers()
                try:
                    self.wfile.write(body)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (its read time-out): expected

            def _handle(self):
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                parsed = urlparse(self.path)
                outer.requests.append(
                    {
                        "method": self.command,
                        "path": parsed.path,
                        "query": parse_qs(parsed.query),
                        "headers": dict(self.headers),
                        "body": json.loads(raw) if raw else None,
                    }
                )
                key = parsed.path.rstrip("/").split("/")[-1] or "root"
                if parsed.path.startswith("/products/"):
                    key = "products"
                mode = outer.modes.get(key, "accept")
                if mode == "slow":
                    time.sleep(SLOW)
                    return self._answer(200, {})
                if mode == "reject":
                    return self._answer(
                        422,
                        {
                            "error": {
                                "code": "BAD_REQUEST_DATA",
                                "message": "Tracking number unknown.",
                            }
                        },
                    )
                if mode == "error":
                    return self._answer(500, {"error": {"code": "OOPS", "message": "Internal."}})
                if mode == "busy":
                    return self._answer(429, {}, headers={"Retry-After": "7"})
                if mode == "busy_until":  # Retry-After as an HTTP date, two minutes on
                    until = email.utils.formatdate(time.time() + 120, usegmt=True)
                    return self._answer(429, {}, headers={"Retry-After": until})
                if mode == "garbage":
                    return self._answer(200, raw=b"<html>maintenance</html>")
                if key == "shipment":
                    return self._answer(200, {"confirmation_id": "CONF-1"})
                if key == "cancellation":
                    return self._answer(200, {"status": mode if mode != "accept" else "approved"})
                if key == "products":
                    sku = parsed.path.split("/")[-1]
                    return self._answer(
                        200, {"external_id": f"EXT-{sku}", "status": "active", "price": 12.5}
                    )
                if key == "inventory":
                    return self._answer(
                        200, {"items": [{"sku": "MUG-1", "on_hand": 7, "warehouse_type": "FBA"}]}
                    )
                if key == "orders":
                    cursor = parse_qs(parsed.query).get("cursor", [None])[0]
                    page = outer.pages.get(
                        cursor, {"orders": [], "next_cursor": cursor, "has_more": False}
                    )
                    return self._answer(200, page)
                return self._answer(404, {"error": {"code": "NOT_FOUND", "message": "No route."}})

            do_GET = do_POST = do_PUT = _handle

        self.serve(Handler)


@pytest.fixture
def marketplace():
    with FakeMarketplace() as fake:
        yield fake


@pytest.fixture
def short_timeouts(app, monkeypatch):
    monkeypatch.setitem(app.config, "MARKETPLACE_CONNECT_TIMEOUT", 0.5)
    monkeypatch.setitem(app.config, "MARKETPLACE_READ_TIMEOUT", READ_TIMEOUT)


@pytest.fixture
def shop(client, headers, tenant, marketplace, short_timeouts):
    make_products(client, headers, "MUG-1", "TOWEL-1")
    warehouse = make_own_warehouse(tenant)
    stock_up(tenant, warehouse, {"MUG-1": 10, "TOWEL-1": 5})
    connection = connect(tenant, "mirakl", "http", base_url=marketplace.url, api_token="tok-123")
    from commerce_api.orders.ingest import upsert_order

    _, order_id = upsert_order(tenant.id, order_body("M-1", marketplace="mirakl"), source="import")
    return {"connection": connection, "order_id": order_id}


SHIPMENT = {"carrier": "UPS", "tracking_number": "1Z999", "shipped_date": "2026-03-11T09:00:00Z"}


def test_accepted_shipment(client, headers, tenant, shop, marketplace):
    response = client.post(
        f"/api/orders/{shop['order_id']}/shipment", json=SHIPMENT, headers=headers
    )
    assert response.status_code == 200, response.get_json()
    order = response.get_json()["data"]
    assert order["status"] == "shipped" and order["shipment"]["confirmation_id"] == "CONF-1"
    (sent,) = marketplace.requests
    assert (sent["method"], sent["path"]) == ("POST", "/orders/M-1/shipment")
    assert sent["body"] == {
        "carrier": "UPS",
        "tracking_number": "1Z999",
        "shipped_date": "2026-03-11T09:00:00.000Z",
        "line_items": [
            {"external_line_item_id": "M-1-L1", "quantity": 2},
            {"external_line_item_id": "M-1-L2", "quantity": 1},
        ],
    }
    assert sent["headers"]["Authorization"] == "Bearer tok-123"
    assert sent["headers"]["X-Commerce-Connection"] == shop["connection"].id
    assert sent["headers"]["Idempotency-Key"].startswith(shop["order_id"] + ":shipment:")
    assert sent["headers"]["Content-Type"] == "application/json"
    assert levels(tenant.id, "MUG-1") == (8, 0)
    assert attempts(shop["order_id"])[-1].status == "succeeded"


def test_retry_after_as_an_http_date_is_passed_on(client, headers, shop, marketplace):
    marketplace.modes["shipment"] = "busy_until"
    response = client.post(
        f"/api/orders/{shop['order_id']}/shipment", json=SHIPMENT, headers=headers
    )
    assert response.status_code == 503, response.get_json()
    assert response.get_json()["error"]["details"]["reason"] == "HTTP_429"
    # the date is two minutes on (whole seconds, rounded up); not the 30 s default
    assert 110 <= int(response.headers["Retry-After"]) <= 120


@pytest.mark.parametrize(
    ("mode", "status", "code", "reason"),
    [
        ("reject", 422, "MARKETPLACE_REJECTION", "BAD_REQUEST_DATA"),
        ("slow", 503, "MARKETPLACE_UNAVAILABLE", "TIMEOUT"),
        ("error", 503, "MARKETPLACE_UNAVAILABLE", "OOPS"),
        ("busy", 503, "MARKETPLACE_UNAVAILABLE", "HTTP_429"),
        ("garbage", 503, "MARKETPLACE_UNAVAILABLE", "INVALID_RESPONSE"),
    ],
)
def test_failed_shipment_changes_nothing(
    client, headers, tenant, shop, marketplace, mode, status, code, reason
):
    marketplace.modes["shipment"] = mode
    before = snapshot()
    started = time.monotonic()
    response = client.post(
        f"/api/orders/{shop['order_id']}/shipment", json=SHIPMENT, headers=headers
    )
    elapsed = time.monotonic() - started
    assert response.status_code == status, response.get_json()
    error = response.get_json()["error"]
    assert error["code"] == code
    if code == "MARKETPLACE_REJECTION":
        assert error["details"]["marketplace_code"] == reason
        assert "Tracking number unknown." in error["message"]
        assert "Retry-After" not in response.headers
    else:
        assert error["details"]["reason"] == reason
        assert int(response.headers["Retry-After"]) == (7 if mode == "busy" else 30)
    if mode == "slow":
        assert elapsed < SLOW  # the read time-out cut it short
    assert snapshot() == before
    (attempt,) = [a for a in attempts(shop["order_id"]) if a.operation == "confirm_shipment"]
    assert attempt.status == ("rejected" if status == 422 else "unavailable")
    assert attempt.error_code == reason
    assert Order.get_by_id(shop["order_id"]).status == "pending"
    # the marketplace recovers: the same shipment goes through
    marketplace.modes.clear()
    response = client.post(
        f"/api/orders/{shop['order_id']}/shipment", json=SHIPMENT, headers=headers
    )
    assert response.status_code == 200


def test_a_retried_shipment_carries_the_same_idempotency_key(client, headers, shop, marketplace):
    body = {"carrier": "UPS", "tracking_number": "1Z5"}  # shipped_date: now, at each try
    marketplace.modes["shipment"] = "error"
    response = client.post(f"/api/orders/{shop['order_id']}/shipment", json=body, headers=headers)
    assert response.status_code == 503
    marketplace.modes.clear()
    time.sleep(0.01)
    response = client.post(f"/api/orders/{shop['order_id']}/shipment", json=body, headers=headers)
    assert response.status_code == 200
    first, second = marketplace.requests
    assert first["body"]["shipped_date"] != second["body"]["shipped_date"]
    assert first["headers"]["Idempotency-Key"] == second["headers"]["Idempotency-Key"]


def test_refused_connection_is_unavailable(client, headers, tenant, shop):
    MarketplaceConnection.update(base_url=f"http://127.0.0.1:{free_port()}").execute()
    before = snapshot()
    response = client.post(
        f"/api/orders/{shop['order_id']}/shipment", json=SHIPMENT, headers=headers
    )
    assert response.status_code == 503
    error = response.get_json()["error"]
    assert (
        error["code"] == "MARKETPLACE_UNAVAILABLE"
        and error["details"]["reason"] == "CONNECTION_FAILED"
    )
    assert response.headers["Retry-After"]
    assert snapshot() == before
    assert attempts(shop["order_id"])[-1].status == "unavailable"


def test_connection_made_through_the_api_may_not_reach_private_addresses(
    client, headers, tenant, shop
):
    # a connection whose host was public when it was made but now points inside
    MarketplaceConnection.update(allow_private=False).execute()
    before = snapshot()
    response = client.post(
        f"/api/orders/{shop['order_id']}/shipment", json=SHIPMENT, headers=headers
    )
    assert response.status_code == 503
    assert response.get_json()["error"]["details"]["reason"] == "TARGET_NOT_ALLOWED"
    assert snapshot() == before


@pytest.mark.parametrize(
    ("mode", "outcome", "order_status"),
    [
        ("accept", "approved", "cancelled"),
        ("rejected", "rejected", "pending"),
        ("reject", "rejected", "pending"),  # a 4xx refusal of the request is a rejection too
        ("pending", "pending", "pending"),
    ],
)
def test_cancellation_answers(
    app, client, headers, tenant, shop, marketplace, mode, outcome, order_status
):
    marketplace.modes["cancellation"] = mode
    response = client.post(
        f"/api/orders/{shop['order_id']}/cancel",
        json={"reason": "customer_request"},
        headers=headers,
    )
    assert response.status_code == 202
    with app.app_context():
        result, failure = run_job(response.get_json()["data"]["cancellation"]["job_id"])
    assert failure is None and result["outcome"] == outcome
    order = Order.get_by_id(shop["order_id"])
    assert order.status == order_status
    assert order.cancellation["status"] == ("requested" if outcome == "pending" else outcome)
    (sent,) = marketplace.requests
    assert (sent["path"], sent["body"]) == (
        "/orders/M-1/cancellation",
        {"reason": "customer_request"},
    )
    assert levels(tenant.id, "MUG-1") == ((10, 0) if order_status == "cancelled" else (10, 2))


def test_cancellation_with_slow_marketplace_is_retried(
    app, client, headers, tenant, shop, marketplace
):
    marketplace.modes["cancellation"] = "slow"
    response = client.post(
        f"/api/orders/{shop['order_id']}/cancel", json={"reason": "other"}, headers=headers
    )
    before = snapshot()
    with app.app_context():
        result, failure = run_job(response.get_json()["data"]["cancellation"]["job_id"])
    assert result is None and failure.code == "MARKETPLACE_UNAVAILABLE" and failure.retryable
    assert snapshot() == before
    assert Order.get_by_id(shop["order_id"]).cancellation["status"] == "requested"


def _wire(external_id, **overrides):
    body = order_body(external_id, marketplace="mirakl", **overrides)
    return body


def test_pull_pages_through_orders_with_the_cursor(tenant, shop, marketplace):
    bad = _wire("BAD-1")
    # valid in shape but for another marketplace: this order alone fails (an order that
    # breaks the import shape makes the whole page unusable: test_marketplace_answers.py)
    bad["marketplace"] = "amazon"
    marketplace.pages = {
        None: {
            "orders": [_wire("P-1"), _wire("P-2", status="confirmed")],
            "next_cursor": "c2",
            "has_more": True,
        },
        "c2": {
            "orders": [_wire("P-3", fulfillment_method="FBA"), bad],
            "next_cursor": "c3",
            "has_more": False,
        },
        "c3": {"orders": [], "next_cursor": "c3", "has_more": False},
    }
    connection = MarketplaceConnection.get_by_id(shop["connection"].id)
    summary = pull_connection(connection)
    assert (summary["created"], summary["failed"], summary["status"]) == (3, 1, "partial")
    assert summary["errors"][0]["external_order_id"] == "BAD-1"
    assert summary["errors"][0]["code"] == "VALIDATION_ERROR"
    stored = MarketplaceConnection.get_by_id(connection.id)
    assert stored.pull_cursor == "c3" and stored.last_pull_status == "partial"
    assert "BAD-1" in stored.last_pull_error
    orders_requests = [r for r in marketplace.requests if r["path"] == "/orders"]
    assert [r["query"].get("cursor") for r in orders_requests] == [None, ["c2"]]
    assert Order.select().where(Order.marketplace == "mirakl").count() == 4  # M-1 and three pulled
    # the next pull continues after c3: nothing new
    summary = pull_connection(stored)
    assert (summary["created"], summary["updated"], summary["status"]) == (0, 0, "ok")
    # the same page again (e.g. after a crash before the cursor moved) duplicates nothing
    MarketplaceConnection.update(pull_cursor=None).execute()
    marketplace.pages[None]["has_more"] = False
    summary = pull_connection(MarketplaceConnection.get_by_id(connection.id))
    assert (summary["created"], summary["unchanged"]) == (0, 2)
    assert levels(tenant.id, "MUG-1") == (10, 6)  # M-1, P-1 and P-2 hold 2 each; P-3 is FBA


def test_pull_from_an_unreachable_marketplace_keeps_the_cursor(app, tenant, shop, marketplace):
    marketplace.modes["orders"] = "slow"
    MarketplaceConnection.update(pull_cursor="c9").execute()
    before = snapshot()
    with app.app_context():  # as in the worker: the app's (short) time-outs apply
        summary = pull_connection(MarketplaceConnection.get_by_id(shop["connection"].id))
    assert summary["status"] == "unavailable" and summary["error"]["code"] == "TIMEOUT"
    stored = MarketplaceConnection.get_by_id(shop["connection"].id)
    assert stored.pull_cursor == "c9" and stored.last_pull_status == "unavailable"
    assert snapshot() == before


def test_product_push_and_inventory(app, client, headers, tenant, shop, marketplace):
    from commerce_api.inventory.services import create_warehouse

    fba = create_warehouse(
        tenant.id, {"name": "Mirakl FBA", "type": "FBA", "marketplace": "mirakl"}
    )
    price_listing(client, headers, "MUG-1", "mirakl", 12.5)
    job_id = client.post("/api/products/MUG-1/sync", headers=headers).get_json()["data"]["job_id"]
    with app.app_context():
        result, failure = run_job(job_id)
    assert failure is None and result["succeeded"] == 1
    put = [r for r in marketplace.requests if r["method"] == "PUT"][0]
    assert put["path"] == "/products/MUG-1"
    assert put["body"]["sku"] == "MUG-1" and put["body"]["quantity"] == 8  # 10 on hand, 2 reserved
    listing = Listing.get()
    assert (listing.external_id, float(listing.price), listing.quantity) == ("EXT-MUG-1", 12.5, 8)
    # a marketplace that is down: the job is retried, the attempt is kept
    marketplace.modes["products"] = "error"
    job_id = client.post("/api/products/MUG-1/sync", headers=headers).get_json()["data"]["job_id"]
    with app.app_context():
        result, failure = run_job(job_id)
    assert failure.code == "MARKETPLACE_UNAVAILABLE" and failure.retryable
    assert SyncAttempt.select().where(SyncAttempt.sku == "MUG-1").count() == 2
    # the pull also fills the marketplace's FBA warehouse
    summary = pull_connection(MarketplaceConnection.get_by_id(shop["connection"].id))
    assert summary["inventory_updated"] == 1
    assert levels(tenant.id, "MUG-1") == (17, 2)
    del fba
