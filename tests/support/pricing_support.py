"""Helpers of the pricing tests: a marketplace adapter on 127.0.0.1, listings, offers, jobs."""

import json
import threading
import time
from decimal import Decimal
from http.server import BaseHTTPRequestHandler
from urllib.parse import parse_qs, urlparse

import pytest

from commerce_api.events.models import Event
from commerce_api.ids import new_id
from commerce_api.jobs.models import Job
from commerce_api.marketplaces.models import SyncAttempt
from commerce_api.marketplaces.services import connect_marketplace
from commerce_api.pricing.competitors import store_offers
from commerce_api.pricing.models import (
    CompetitorLatest,
    CompetitorOffer,
    PricingRule,
    Recommendation,
)
from commerce_api.products.models import Listing, Product
from commerce_api.timeutil import format_ms, now_ms

from .factories import product_body
from .jobs_support import run_worker
from .servers import LocalHTTPServer

HOUR_MS = 3_600_000


class FakeMarketplace(LocalHTTPServer):
    """A marketplace adapter: ``offers[sku]`` answers GET /competitor-prices, ``modes[key]``
    (``products``, ``competitor-prices``, ``shipment``) picks accept, reject, busy, error or
    garbage; ``busy_times[key]`` answers that many 429s first. Every answer waits ``delay``
    seconds (cut short by ``close``); ``accepted[sku]`` is the last price it accepted."""

    def __init__(self):
        self.modes = {}
        self.offers = {}
        self.requests = []
        self.delay = 0.0
        self.busy_times = {}
        self.retry_after = "7"  # the Retry-After of a busy answer
        self.before_answer = None  # called with each request's record before it is answered
        self.accepted = {}
        self.closing = threading.Event()
        self.raw_prices = None  # a raw "prices" value to answer instead of ``offers``
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
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
                    pass

            def _handle(self):
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                parsed = urlparse(self.path)
                query = parse_qs(parsed.query)
                outer.requests.append(
                    {
                        "method": self.command,
                        "path": parsed.path,
                        "query": query,
                        "headers": dict(self.headers),
                        "body": json.loads(raw) if raw else None,
                        "received_at": time.time(),
                    }
                )
                if outer.before_answer is not None:
                    outer.before_answer(outer.requests[-1])
                key = "products" if parsed.path.startswith("/products/") else parsed.path[1:]
                if parsed.path.startswith("/orders/"):
                    key = parsed.path.rsplit("/", 1)[-1]  # shipment, cancellation
                if outer.delay:
                    outer.closing.wait(outer.delay)
                mode = outer.modes.get(key, "accept")
                if outer.busy_times.get(key):
                    outer.busy_times[key] -= 1
                    mode = "busy"
                if mode == "reject":
                    error = {"code": "PRICE_TOO_LOW", "message": "Below the allowed minimum."}
                    return self._answer(422, {"error": error})
                if mode == "busy":
                    return self._answer(429, {}, headers={"Retry-After": outer.retry_after})
                if mode == "error":
                    return self._answer(500, {"error": {"code": "OOPS", "message": "Down."}})
                if mode == "garbage":
                    return self._answer(200, raw=b"<html>maintenance</html>")
                if key == "shipment":
                    return self._answer(200, {"confirmation_id": f"CONF-{len(outer.requests)}"})
                if key == "cancellation":
                    return self._answer(200, {"status": "approved"})
                if key == "products":
                    body = json.loads(raw)
                    if body["price"] is not None:
                        outer.accepted[body["sku"]] = body["price"]
                    return self._answer(
                        200,
                        {
                            "external_id": f"EXT-{body['sku']}",
                            "status": "active",
                            # a first push has no price: the marketplace sets its own
                            "price": body["price"] if body["price"] is not None else 20.0,
                            "currency": body.get("currency") or "USD",
                            "quantity": body.get("quantity") or 0,
                        },
                    )
                if key == "competitor-prices":
                    if outer.raw_prices is not None:
                        return self._answer(200, raw=outer.raw_prices)
                    prices = [
                        record
                        for sku in query.get("sku", [])
                        for record in outer.offers.get(sku, [])
                    ]
                    return self._answer(200, {"prices": prices})
                return self._answer(404, {"error": {"code": "NOT_FOUND", "message": "No route."}})

            do_GET = do_PUT = do_POST = _handle

        self.serve(Handler)

    def pushes(self):
        return [r for r in self.requests if r["method"] == "PUT"]

    def shipments(self):
        return [r for r in self.requests if r["path"].endswith("/shipment")]

    def close(self):
        self.closing.set()
        super().close()


@pytest.fixture
def market(app, monkeypatch):
    monkeypatch.setitem(app.config, "MARKETPLACE_CONNECT_TIMEOUT", 1.0)
    monkeypatch.setitem(app.config, "MARKETPLACE_READ_TIMEOUT", 2.0)
    with FakeMarketplace() as fake:
        yield fake


def connect_http(tenant, url, marketplace="shop"):
    return connect_marketplace(
        tenant.id, marketplace, "http", base_url=url, created_by="test", allow_private=True
    )


def connect_sandbox(tenant, marketplace="amazon"):
    return connect_marketplace(tenant.id, marketplace, "sandbox", created_by="test")


def make_product(client, headers, sku, cost="10.00", category="kitchen", **overrides):
    body = product_body(sku=sku, category=category, **overrides)
    body["cost_price"] = None if cost is None else float(cost)
    response = client.post("/api/products", json=body, headers=headers)
    assert response.status_code == 201, response.get_json()
    return response.get_json()["data"]


def list_product(tenant, sku, marketplace, price, currency="USD", quantity=5):
    """A listing of the product on ``marketplace`` at ``price`` (as a product sync writes)."""
    product = Product.get((Product.tenant == tenant.id) & (Product.sku == sku))
    now = now_ms()
    return Listing.create(
        id=new_id("listing"),
        tenant=tenant.id,
        product=product.id,
        marketplace=marketplace,
        external_id=f"EXT-{sku}",
        price=None if price is None else Decimal(str(price)),
        currency=currency,
        quantity=quantity,
        status="active",
        last_synced_at=now,
        created_at=now,
        updated_at=now,
    )


def offer(sku, competitor, price, shipping="0", winner=False, condition="new", age_ms=60_000):
    """A competitor record in the connector's shape (``observed_at`` ``age_ms`` ago)."""
    price, shipping = Decimal(str(price)), Decimal(str(shipping))
    return {
        "sku": sku,
        "competitor": competitor,
        "price": float(price),
        "shipping": float(shipping),
        "landed_price": float(price + shipping),
        "currency": "USD",
        "is_buy_box_winner": winner,
        "condition": condition,
        "observed_at": format_ms(now_ms() - age_ms),
    }


def seed_offers(tenant, marketplace, records):
    """Store records as a competitor fetch would (typed as the connector checks them)."""
    from commerce_api.marketplaces.offers import normalize_offers

    typed = normalize_offers(records, {r["sku"] for r in records}, marketplace)
    store_offers(tenant.id, typed)


def create_rule(client, headers, status=201, **body):
    body.setdefault("name", f"{body.get('type', 'rule')} rule")
    response = client.post("/api/pricing/rules", json=body, headers=headers)
    assert response.status_code == status, response.get_json()
    return response.get_json()["data"] if status == 201 else response.get_json()["error"]


def recalculate(client, headers, app, status=200, **body):
    """POST /api/pricing/recalculate, run the worker, return the completed job."""
    response = client.post("/api/pricing/recalculate", json=body, headers=headers)
    assert response.status_code == status, response.get_json()
    if status != 200:
        return response.get_json()["error"]
    queued = response.get_json()["data"]
    run_worker(app, concurrency=1)
    job = client.get(f"/api/ai-jobs/{queued['job_id']}", headers=headers).get_json()["data"]
    assert job["status"] == "completed", job
    return job


def recommendation_for(job, sku):
    matches = [r for r in job["result"]["recommendations"] if r["sku"] == sku]
    return matches[0] if matches else None


def pricing_snapshot():
    """Every row pricing can write, to show that a refused request wrote nothing."""

    def rows(model):
        return sorted(
            json.dumps(row, sort_keys=True, default=str) for row in model.select().dicts()
        )

    return {
        model._meta.table_name: rows(model)
        for model in (
            PricingRule,
            Recommendation,
            CompetitorOffer,
            CompetitorLatest,
            Listing,
            Event,
            Job,
        )
    } | {"sync_attempt": SyncAttempt.select().count()}
