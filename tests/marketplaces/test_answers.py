"""Marketplace answers are checked before anything stores them (issue 13, defect 5).

An ``http`` adapter on 127.0.0.1 answers a table of bad listings, order pages and stock
records (NaN, Infinity, 1e20, a 50-character currency, an object where a number belongs, a
huge or negative quantity...). Each whole answer counts as the marketplace being
unavailable: 503 ``MARKETPLACE_UNAVAILABLE`` for a synchronous call, a retryable job
failure or an ``unavailable`` pull otherwise, and nothing of it is stored.
"""

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import urlparse

import pytest

from commerce_api.inventory.services import create_warehouse
from commerce_api.marketplaces.answers import check_inventory, check_listing
from commerce_api.marketplaces.base import MarketplaceUnavailable
from commerce_api.marketplaces.models import MarketplaceConnection, SyncAttempt
from commerce_api.orders.pulls import pull_connection
from commerce_api.products.models import Listing
from tests.support.orders_support import (
    connect,
    make_products,
    order_body,
    run_job,
    snapshot,
)
from tests.support.pricing_support import (
    create_rule,
    list_product,
    make_product,
    pricing_snapshot,
    recalculate,
)
from tests.support.products_support import price_listing


class Adapter:
    """A marketplace adapter: ``answers[key]`` is the raw 200 body for products, orders or
    inventory (``None``: a valid answer)."""

    def __init__(self):
        self.answers = {}
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def _handle(self):
                length = int(self.headers.get("Content-Length") or 0)
                sent = json.loads(self.rfile.read(length)) if length else None
                path = urlparse(self.path).path
                key = "products" if path.startswith("/products/") else path.strip("/")
                raw = outer.answers.get(key)
                if raw is None:
                    raw = json.dumps(outer.valid(key, sent)).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(raw)))
                self.end_headers()
                self.wfile.write(raw)

            do_GET = do_PUT = do_POST = _handle

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @staticmethod
    def valid(key, sent):
        if key == "products":
            price = sent["price"] if sent["price"] is not None else 20.0
            return {"external_id": "EXT-1", "status": "active", "price": price,
                    "currency": "EUR", "quantity": 3}  # fmt: skip
        if key == "inventory":
            return {"items": [{"sku": "MUG-1", "on_hand": 7, "warehouse_type": "FBA"}]}
        return {"orders": [], "next_cursor": None, "has_more": False}

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(timeout=5)


@pytest.fixture
def adapter(app, monkeypatch):
    monkeypatch.setitem(app.config, "MARKETPLACE_CONNECT_TIMEOUT", 1.0)
    monkeypatch.setitem(app.config, "MARKETPLACE_READ_TIMEOUT", 2.0)
    with Adapter() as fake:
        yield fake


def raw_listing(**fields):
    """A listing answer with ``fields`` written into the JSON text as they are."""
    body = {"external_id": '"EXT-1"', "status": '"active"', "price": "12.5",
            "currency": '"EUR"', "quantity": "3"}  # fmt: skip
    body.update(fields)
    return ("{" + ",".join(f'"{k}":{v}' for k, v in body.items()) + "}").encode()


BAD_LISTINGS = {
    "price NaN": raw_listing(price="NaN"),
    "price Infinity": raw_listing(price="Infinity"),
    "price -Infinity": raw_listing(price="-Infinity"),
    "price 1e400": raw_listing(price="1e400"),
    "price 1e20": raw_listing(price="1e20"),
    "price negative": raw_listing(price="-1"),
    "price object": raw_listing(price='{"amount": 12.5}'),
    "price string": raw_listing(price='"12.50"'),
    "price three decimals": raw_listing(price="12.505"),
    "currency 50 characters": raw_listing(currency=json.dumps("E" * 50)),
    "currency lowercase": raw_listing(currency='"eur"'),
    "currency object": raw_listing(currency='{"code": "EUR"}'),
    "quantity huge": raw_listing(quantity=str(10**30)),
    "quantity 64-bit": raw_listing(quantity=str(2**63)),
    "quantity negative": raw_listing(quantity="-1"),
    "quantity float": raw_listing(quantity="2.5"),
    "quantity boolean": raw_listing(quantity="true"),
    "quantity object": raw_listing(quantity="{}"),
    "external_id object": raw_listing(external_id='{"id": 1}'),
    "external_id too long": raw_listing(external_id=json.dumps("X" * 201)),
    "external_id NUL": raw_listing(external_id='"EXT\\u0000"'),
    "status too long": raw_listing(status=json.dumps("s" * 33)),
    "status number": raw_listing(status="7"),
}


@pytest.fixture
def shop(client, headers, tenant, adapter):
    make_products(client, headers, "MUG-1", "TOWEL-1")
    return connect(tenant, "shop", "http", base_url=adapter.url)


def queue_sync(client, headers):
    price_listing(client, headers, "MUG-1", "shop", 20.0)
    response = client.post("/api/products/MUG-1/sync", json={"marketplaces": ["shop"]},
                           headers=headers)  # fmt: skip
    assert response.status_code == 202, response.get_json()
    return response.get_json()["data"]["job_id"]


@pytest.mark.parametrize("case", sorted(BAD_LISTINGS))
def test_bad_listing_answer_fails_the_sync_retryably_and_stores_nothing(
    client, headers, shop, adapter, case
):
    adapter.answers["products"] = BAD_LISTINGS[case]
    job_id = queue_sync(client, headers)
    result, failure = run_job(job_id)
    assert result is None
    assert failure.code == "MARKETPLACE_UNAVAILABLE" and failure.retryable
    (kept,) = Listing.select()  # as the price made it: nothing of the answer stored
    assert (kept.external_id, kept.last_synced_at, kept.price) == (None, None, 20)
    product = client.get("/api/products/MUG-1", headers=headers)
    assert product.status_code == 200
    assert [x["external_id"] for x in product.get_json()["data"]["listings"]] == [None]
    (attempt,) = SyncAttempt.select().where(SyncAttempt.operation == "push_product")
    assert (attempt.status, attempt.error_code) == ("unavailable", "INVALID_RESPONSE")
    # the marketplace mends its ways: the retry stores the listing
    adapter.answers.clear()
    result, failure = run_job(job_id)
    assert failure is None and result["succeeded"] == 1
    listing = client.get("/api/products/MUG-1", headers=headers).get_json()["data"]["listings"]
    assert [(x["price"], x["currency"], x["quantity"], x["external_id"]) for x in listing] == [
        (20.0, "EUR", 3, "EXT-1")
    ]


def test_a_bad_price_answer_is_a_503_and_changes_nothing(client, headers, app, tenant, adapter):
    connect(tenant, "shop", "http", base_url=adapter.url)
    make_product(client, headers, "MUG-1", cost="10.00")
    list_product(tenant, "MUG-1", "shop", "20.00")
    create_rule(client, headers, type="margin_target", value=40, value_type="percent")
    job = recalculate(client, headers, app, marketplace="shop")
    (recommendation,) = job["result"]["recommendations"]
    before = pricing_snapshot()
    before.pop("sync_attempt")
    for case in ("price NaN", "price 1e20", "currency 50 characters", "quantity huge",
                 "price object"):  # fmt: skip
        adapter.answers["products"] = BAD_LISTINGS[case]
        response = client.post(
            f"/api/pricing/recommendations/{recommendation['id']}/apply", headers=headers
        )
        assert response.status_code == 503, case
        error = response.get_json()["error"]
        assert error["code"] == "MARKETPLACE_UNAVAILABLE", case
        assert error["details"]["reason"] == "INVALID_RESPONSE", case
        assert response.headers["Retry-After"] == "30"
        after = pricing_snapshot()
        after.pop("sync_attempt")
        assert after == before, case
    adapter.answers.clear()
    response = client.post(
        f"/api/pricing/recommendations/{recommendation['id']}/apply", headers=headers
    )
    assert response.status_code == 200, response.get_json()


def raw_order(**line_fields):
    """An order page whose first line has ``line_fields`` written into the JSON as they are;
    ``currency`` goes to the order."""
    order = order_body("BAD-1", marketplace="shop")
    order["line_items"][0].update({k: f"@{k}@" for k in line_fields if k != "currency"})
    if "currency" in line_fields:
        order["currency"] = "@currency@"
    page = {"orders": [order_body("GOOD-1", marketplace="shop"), order], "next_cursor": "c2",
            "has_more": False}  # fmt: skip
    text = json.dumps(page)
    for name, value in line_fields.items():
        text = text.replace(f'"@{name}@"', value)
    return text.encode()


BAD_ORDER_PAGES = {
    "unit_price NaN": raw_order(unit_price="NaN"),
    "unit_price Infinity": raw_order(unit_price="Infinity"),
    "line_total 1e20": raw_order(line_total="1e20"),
    "unit_price object": raw_order(unit_price='{"amount": 7.5}'),
    "currency 50 characters": raw_order(currency=json.dumps("U" * 50)),
    "quantity huge": raw_order(quantity=str(10**30)),
    "quantity negative": raw_order(quantity="-1"),
    "quantity object": raw_order(quantity="{}"),
    "sku object": raw_order(sku='{"sku": "MUG-1"}'),
    "sku NUL": raw_order(sku='"MUG\\u0000"'),
    "title too long": raw_order(title=json.dumps("t" * 501)),
    "order not an object": b'{"orders": [7], "next_cursor": "c2", "has_more": false}',
    "cursor object": b'{"orders": [], "next_cursor": {"a": 1}, "has_more": false}',
    "cursor too long": json.dumps({"orders": [], "next_cursor": "c" * 1001}).encode(),
}


@pytest.mark.parametrize("case", sorted(BAD_ORDER_PAGES))
def test_bad_order_page_is_unavailable_and_nothing_of_it_is_applied(shop, adapter, case):
    adapter.answers["orders"] = BAD_ORDER_PAGES[case]
    before = snapshot()
    summary = pull_connection(MarketplaceConnection.get_by_id(shop.id))
    assert summary["status"] == "unavailable", summary
    assert summary["error"]["code"] == "INVALID_RESPONSE"
    assert (summary["created"], summary["updated"], summary["failed"]) == (0, 0, 0)
    assert snapshot() == before  # no order (not even GOOD-1), no stock, the cursor unmoved
    stored = MarketplaceConnection.get_by_id(shop.id)
    assert stored.last_pull_status == "unavailable"
    assert stored.last_pull_error == summary["error"]["message"]


def test_order_page_error_names_the_order_and_the_field(shop, adapter):
    adapter.answers["orders"] = BAD_ORDER_PAGES["quantity negative"]
    summary = pull_connection(MarketplaceConnection.get_by_id(shop.id))
    assert "BAD-1" in summary["error"]["message"]
    assert "line_items.0.quantity" in summary["error"]["message"]
    # the marketplace mends its ways: the same page is asked for again and applied
    adapter.answers["orders"] = json.dumps(
        {"orders": [order_body("GOOD-1", marketplace="shop")], "next_cursor": "c2"}
    ).encode()
    summary = pull_connection(MarketplaceConnection.get_by_id(shop.id))
    assert (summary["status"], summary["created"]) == ("ok", 1)
    assert MarketplaceConnection.get_by_id(shop.id).pull_cursor == "c2"


def stock_answer(on_hand):
    return (
        '{"items": [{"sku": "TOWEL-1", "on_hand": 4, "warehouse_type": "FBA"},'
        f' {{"sku": "MUG-1", "on_hand": {on_hand}, "warehouse_type": "FBA"}}]}}'
    ).encode()


BAD_STOCK = {
    "NaN": stock_answer("NaN"),
    "Infinity": stock_answer("Infinity"),
    "1e20": stock_answer("1e20"),
    "huge": stock_answer(str(10**30)),
    "negative": stock_answer("-1"),
    "float": stock_answer("7.5"),
    "string": stock_answer('"7"'),
    "object": stock_answer('{"units": 7}'),
    "null": stock_answer("null"),
    "warehouse type unknown": b'{"items": [{"sku": "MUG-1", "on_hand": 1, "warehouse_type": "X"}]}',
    "sku too long": json.dumps({"items": [{"sku": "M" * 65, "on_hand": 1}]}).encode(),
    "items not a list": b'{"items": {"sku": "MUG-1"}}',
}


@pytest.mark.parametrize("case", sorted(BAD_STOCK))
def test_bad_stock_answer_is_unavailable_and_changes_no_stock(client, headers, shop, adapter,
                                                                case):  # fmt: skip
    create_warehouse(shop.tenant_id, {"name": "Shop FBA", "type": "FBA", "marketplace": "shop"})
    adapter.answers["inventory"] = BAD_STOCK[case]
    before = snapshot()
    summary = pull_connection(MarketplaceConnection.get_by_id(shop.id))
    assert summary["status"] == "unavailable", summary
    assert summary["error"]["code"] == "INVALID_RESPONSE"
    assert summary["inventory_updated"] == 0
    assert snapshot() == before  # not even TOWEL-1's valid record
    adapter.answers.clear()
    summary = pull_connection(MarketplaceConnection.get_by_id(shop.id))
    assert (summary["status"], summary["inventory_updated"]) == ("ok", 1)


# the checks themselves, on answers a connector might build in-process


@pytest.mark.parametrize(
    "answer",
    [
        None,
        [],
        {"status": "active"},
        {"external_id": "E", "price": float("nan")},
        {"external_id": "E", "price": float("inf")},
        {"external_id": "E", "price": 1e20},
        {"external_id": "E", "quantity": 10**30},
        {"external_id": "E", "currency": "EURO"},
    ],
)
def test_check_listing_refuses(answer):
    with pytest.raises(MarketplaceUnavailable) as raised:
        check_listing(answer)
    assert raised.value.code == "INVALID_RESPONSE"


def test_check_listing_and_inventory_accept_and_type_good_answers():
    listing = check_listing(
        {"external_id": "E", "price": 12.5, "currency": "EUR", "quantity": 2, "extra": 1}
    )
    assert str(listing["price"]) == "12.5" and listing["quantity"] == 2
    assert listing["status"] == "active" and "extra" not in listing
    assert check_inventory([{"sku": "A", "on_hand": 0}, {"sku": "B", "on_hand": 3,
                                                        "warehouse_type": None}]) == [
        {"sku": "A", "on_hand": 0, "warehouse_type": "FBA"},
        {"sku": "B", "on_hand": 3, "warehouse_type": "FBA"},
    ]  # fmt: skip
