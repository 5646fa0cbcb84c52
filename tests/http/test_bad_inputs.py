"""Bad inputs an audit of the running service found getting through (issue 20, the low
items): each is refused with a clear 4xx and changes nothing, or is normalised."""

import contextlib
import http.client
import io
import json
import socket
import time
from urllib.parse import urlsplit

import pytest

from commerce_api import netguard
from commerce_api.products.models import Product
from tests.support.auth_support import bearer, token, unauthenticated
from tests.support.factories import headers_for, product_body, snapshot
from tests.support.orders_support import (
    connect,
    import_orders,
    make_own_warehouse,
    make_products,
    stock_up,
)
from tests.support.servers import gunicorn_server


def error_of(response):
    return response.get_json()["error"]


# 1. A chunked body over COMMERCE_MAX_BODY_BYTES ------------------------------------------


def _garbage_after_json(limit):
    """Valid JSON, then spaces up to the limit, then more than the limit of garbage."""
    head = json.dumps({"sku": "TRUNC-1", "title": "t"}).encode()
    return head + b" " * (limit - len(head)) + b"garbage" * (limit // 7 + 10)


def _post_chunked(base, headers, body):
    """POST ``body`` chunked over a plain socket. A server that answers before it read the
    whole body may close the connection while the rest is still being sent (a reset on
    send): the answer it gave first is still read from the socket."""
    parts = urlsplit(base)
    head = f"POST /api/products HTTP/1.1\r\nHost: {parts.hostname}:{parts.port}\r\n"
    for name, value in {**headers, "Content-Type": "application/json"}.items():
        head += f"{name}: {value}\r\n"
    head += "Transfer-Encoding: chunked\r\nConnection: close\r\n\r\n"
    with socket.create_connection((parts.hostname, parts.port), timeout=30) as sock:
        try:
            sock.sendall(head.encode())
            for i in range(0, len(body), 65536):
                chunk = body[i : i + 65536]
                sock.sendall(b"%x\r\n%s\r\n" % (len(chunk), chunk))
            sock.sendall(b"0\r\n\r\n")
        except (BrokenPipeError, ConnectionResetError):
            pass  # the server answered early and closed: its answer is read below
        received = b""
        with contextlib.suppress(ConnectionResetError):
            while data := sock.recv(65536):
                received += data
    response = http.client.HTTPResponse(_Received(received))
    response.begin()
    return response.status, json.loads(response.read())


class _Received:
    """What ``http.client.HTTPResponse`` reads from: bytes already received."""

    def __init__(self, data):
        self.data = data

    def makefile(self, mode):
        return io.BytesIO(self.data)


def test_a_chunked_body_over_the_limit_is_refused_not_cut(database_url, tenant):
    """Through gunicorn (which sets ``wsgi.input_terminated`` for chunked bodies): the
    JSON fits in the limit, the rest of the body does not."""
    headers = headers_for(tenant)
    limit = 1024 * 1024
    exact = json.dumps({"sku": "EXACT-1", "title": "t"}).encode()
    exact += b" " * (limit - len(exact))
    with gunicorn_server(database_url, workers=1) as base:
        status, answer = _post_chunked(base, headers, _garbage_after_json(limit))
        assert status == 413, answer
        assert answer["error"]["code"] == "PAYLOAD_TOO_LARGE"
        assert answer["error"]["details"] == {"max_bytes": limit}
        status, answer = _post_chunked(base, headers, exact)  # exactly the limit: read
        assert status == 201, answer
    assert Product.select().where(Product.sku == "TRUNC-1").count() == 0


# 2. JWT iat/exp as numeric strings -----------------------------------------------------


@pytest.mark.parametrize("claim", ["iat", "exp", "nbf"])
def test_a_jwt_time_claim_given_as_a_numeric_string_is_401(client, jwt_keys, tenant, claim):
    now = int(time.time())
    values = {"iat": now, "exp": now + 3600, "nbf": now - 10}
    values[claim] = str(values[claim])
    value = token(jwt_keys, tenant.id, **values)
    unauthenticated(client, bearer(value, tenant.id), "invalid_claim")


# 3. `$` in validation patterns: a trailing newline ---------------------------------------


def test_a_sku_with_a_trailing_newline_is_refused(client, headers):
    before = snapshot()
    response = client.post("/api/products", json=product_body("MUG-ENAMEL-CAMP\n"), headers=headers)
    assert response.status_code == 422
    assert "sku" in error_of(response)["details"]["fields"]
    assert snapshot() == before


def test_a_marketplace_with_a_trailing_newline_is_refused(client, headers):
    response = client.post(
        "/api/marketplaces",
        json={"marketplace": "amazon\n", "connector": "sandbox"},
        headers=headers,
    )
    assert response.status_code == 422
    assert "marketplace" in error_of(response)["details"]["fields"]
    assert client.get("/api/marketplaces", headers=headers).get_json()["data"] == []


def test_pricing_skus_with_a_trailing_newline_are_refused(client, headers):
    body = {"name": "r", "type": "markup", "value": 1, "applies_to": "sku", "skus": ["MUG-1\n"]}
    response = client.post("/api/pricing/rules", json=body, headers=headers)
    assert response.status_code == 422, response.get_json()
    assert "skus" in error_of(response)["details"]["fields"]


@pytest.mark.parametrize("field", ["marketplace", "currency"])
def test_imported_orders_with_a_trailing_newline_are_refused(runner, tenant, tmp_path, field):
    from tests.support.orders_support import order_body

    value = {"marketplace": "amazon\n", "currency": "USD\n"}[field]
    result = import_orders(
        runner, tenant, tmp_path, [order_body("NL-1", **{field: value})], expect_ok=False
    )
    assert "NL-1" not in json.dumps(_created(result))
    assert field in result.output


def _created(result):
    try:
        return json.loads(result.output).get("orders", [])
    except ValueError:
        return []


# 4. Shipment dates the emitter cannot print ------------------------------------------------


@pytest.fixture
def order_id(client, headers, tenant, runner, tmp_path):
    from tests.support.orders_support import order_body

    make_products(client, headers, "MUG-1", "TOWEL-1")
    stock_up(tenant, make_own_warehouse(tenant), {"MUG-1": 10, "TOWEL-1": 5})
    connect(tenant, "amazon", settings={"initial_orders": 0, "orders_per_pull": 0})
    summary = import_orders(runner, tenant, tmp_path, [order_body("SHIP-1")])
    return summary["orders"][0]["id"]


@pytest.mark.parametrize("shipped", ["0001-01-01T00:00:00+14:00", "9999-12-31T23:59:59-14:00"])
def test_a_shipment_date_outside_years_1_to_9999_in_utc_is_422(client, headers, order_id, shipped):
    before = snapshot()
    body = {"carrier": "UPS", "tracking_number": "1Z", "shipped_date": shipped}
    response = client.post(f"/api/orders/{order_id}/shipment", json=body, headers=headers)
    assert response.status_code == 422, response.get_json()
    assert "shipped_date" in error_of(response)["details"]["fields"]
    assert snapshot() == before


def test_the_first_and_last_printable_shipment_dates_round_trip(client, headers, order_id):
    body = {"carrier": "UPS", "tracking_number": "1Z", "shipped_date": "9999-12-31T23:59:59Z"}
    response = client.post(f"/api/orders/{order_id}/shipment", json=body, headers=headers)
    assert response.status_code == 200, response.get_json()
    assert response.get_json()["data"]["shipment"]["shipped_date"] == "9999-12-31T23:59:59.000Z"


def test_year_one_is_printed_with_four_digits():
    from commerce_api.timeutil import format_ms, parse_timestamp

    assert format_ms(parse_timestamp("0001-01-01T00:00:00Z")) == "0001-01-01T00:00:00.000Z"


# 5. Site-local IPv6 and the other special ranges ---------------------------------------------


@pytest.mark.parametrize(
    "address",
    ["fec0::1", "fed0::1", "feff::ffff", "3fff::1", "192.88.99.1", "::ffff:192.88.99.1"],
)
def test_special_ranges_are_not_public(address):
    assert not netguard.is_public_address(address)


def test_fec0_is_refused_for_webhooks_and_connector_base_urls(client, headers):
    before = snapshot()
    response = client.post(
        "/api/webhooks", json={"url": "http://[fec0::1]/hook", "events": ["*"]}, headers=headers
    )
    assert response.status_code == 422, response.get_json()
    assert error_of(response)["code"] == "WEBHOOK_URL_NOT_ALLOWED"
    response = client.post(
        "/api/marketplaces",
        json={"marketplace": "shop", "connector": "http", "base_url": "http://[fec0::1]/"},
        headers=headers,
    )
    assert response.status_code == 422, response.get_json()
    assert snapshot() == before
    assert client.get("/api/marketplaces", headers=headers).get_json()["data"] == []


# 6. cost_price -0.0 ----------------------------------------------------------------------


def test_a_negative_zero_cost_price_is_stored_and_shown_as_zero(client, headers):
    response = client.post(
        "/api/products", json=product_body("ZERO-1", cost_price=-0.0), headers=headers
    )
    assert response.status_code == 201, response.get_json()
    assert '"cost_price":0.0' in response.get_data(as_text=True).replace(" ", "")
    shown = client.get("/api/products/ZERO-1", headers=headers).get_data(as_text=True)
    assert "-0" not in shown.replace(" ", "").split('"cost_price":')[1][:4]
    response = client.patch("/api/products/ZERO-1", json={"cost_price": -0.0}, headers=headers)
    assert '"cost_price":0.0' in response.get_data(as_text=True).replace(" ", "")
