"""Claim before push (issue 19, DESIGN 9) through real gunicorn processes: however many
requests race for one order or recommendation, one marketplace call is made; the others get
409 CONCURRENT_UPDATE with Retry-After at once; a holder killed with SIGKILL frees the
order when its lease runs out."""

import os
import signal
import threading
import time

import requests

from commerce_api.claims import OperationClaim
from commerce_api.orders.ingest import upsert_order
from commerce_api.orders.models import Order
from commerce_api.pricing.models import Recommendation
from tests.support import pricing_support
from tests.support.orders_support import make_own_warehouse, make_products, order_body, stock_up
from tests.support.pricing_support import (
    connect_http,
    create_rule,
    list_product,
    make_product,
    offer,
    recalculate,
    seed_offers,
)
from tests.support.servers import gunicorn_server
from tests.support.waiting import wait_for

market = pricing_support.market  # the fixture

LEASE = 3  # seconds (CLAIM_LEASE_SECONDS in the servers); the deadline is 2 s
SERVER_CONFIG = {"MARKETPLACE_DEADLINE_SECONDS": 2, "CLAIM_LEASE_SECONDS": LEASE}


def race(count, send):
    """Run ``send(n)`` in ``count`` threads released at once; returns the responses."""
    barrier = threading.Barrier(count)
    responses = [None] * count

    def run(n):
        barrier.wait(10)
        responses[n] = send(n)

    threads = [threading.Thread(target=run, args=(n,)) for n in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    return responses


def assert_one_winner(responses):
    codes = sorted(r.status_code for r in responses)
    assert codes == [200] + [409] * (len(responses) - 1), [r.text for r in responses]
    for response in responses:
        if response.status_code == 409:
            assert response.json()["error"]["code"] == "CONCURRENT_UPDATE", response.text
            assert response.headers["Retry-After"] == "1"


def shop_with_an_order(client, headers, tenant, market):
    make_products(client, headers, "MUG-1", "TOWEL-1")
    stock_up(tenant, make_own_warehouse(tenant), {"MUG-1": 10, "TOWEL-1": 5})
    connect_http(tenant, market.url, marketplace="amazon")
    _, order_id = upsert_order(tenant.id, order_body("M-1"), source="import")
    return order_id


def test_four_concurrent_shipments_make_one_marketplace_call(
    client, headers, tenant, market, database_url
):
    order_id = shop_with_an_order(client, headers, tenant, market)
    market.delay = 1.5
    with gunicorn_server(database_url, workers=2, threads=4, **SERVER_CONFIG) as base:
        responses = race(
            4,
            lambda n: requests.post(
                f"{base}/api/orders/{order_id}/shipment",
                json={"carrier": "UPS", "tracking_number": f"1Z-{n}"},
                headers=headers,
                timeout=30,
            ),
        )
    assert_one_winner(responses)
    assert len(market.shipments()) == 1
    (winner,) = [r.json()["data"] for r in responses if r.status_code == 200]
    shipped = Order.get_by_id(order_id)
    assert shipped.status == "shipped"
    assert shipped.shipment["tracking_number"] == winner["shipment"]["tracking_number"]
    key = market.shipments()[0]["headers"]["Idempotency-Key"]
    assert key.startswith(f"{order_id}:shipment:")
    assert OperationClaim.select().count() == 0


def test_twenty_concurrent_applies_make_one_price_push(
    client, headers, app, tenant, market, database_url
):
    connect_http(tenant, market.url)
    make_product(client, headers, "MUG-1", cost="10.00")
    list_product(tenant, "MUG-1", "shop", "21.00")
    seed_offers(tenant, "shop", [offer("MUG-1", "A", "16.00")])
    create_rule(client, headers, type="competitor_match", value=0)
    job = recalculate(client, headers, app, marketplace="shop")
    (rec,) = job["result"]["recommendations"]
    market.delay = 1.0
    pushes_before = len(market.pushes())
    with gunicorn_server(database_url, workers=2, threads=10, **SERVER_CONFIG) as base:
        responses = race(
            20,
            lambda n: requests.post(
                f"{base}/api/pricing/recommendations/{rec['id']}/apply",
                headers=headers,
                timeout=30,
            ),
        )
    assert_one_winner(responses)
    pushes = market.pushes()[pushes_before:]
    assert len(pushes) == 1
    assert pushes[0]["headers"]["Idempotency-Key"] == rec["id"]
    assert pushes[0]["body"]["price"] == 16.0
    applied = Recommendation.get_by_id(rec["id"])
    assert applied.status == "applied"
    assert OperationClaim.select().count() == 0


def test_a_killed_holder_frees_the_order_when_its_lease_runs_out(
    client, headers, tenant, market, database_url
):
    order_id = shop_with_an_order(client, headers, tenant, market)
    body = {"carrier": "UPS", "tracking_number": "1Z-KILLED"}
    market.delay = 60  # the first confirmation hangs in the marketplace
    started = []
    with gunicorn_server(database_url, workers=1, processes=started, **SERVER_CONFIG) as doomed:
        thread = threading.Thread(
            target=_post_quietly,
            args=(f"{doomed}/api/orders/{order_id}/shipment", body, headers),
            daemon=True,
        )
        thread.start()
        assert wait_for(market.shipments, 20), "the shipment never reached the marketplace"
        # the process holding the claim dies before it records anything
        os.killpg(started[0].pid, signal.SIGKILL)
        started[0].wait(10)
    killed_at = time.monotonic()
    market.delay = 0
    with gunicorn_server(database_url, workers=1, **SERVER_CONFIG) as base:
        url = f"{base}/api/orders/{order_id}/shipment"
        first = requests.post(url, json=body, headers=headers, timeout=30)
        if time.monotonic() - killed_at < LEASE - 0.5:  # still within the lease
            assert first.status_code == 409, first.text
            assert first.json()["error"]["code"] == "CONCURRENT_UPDATE"
        response = first
        deadline = time.monotonic() + LEASE + 15
        while response.status_code == 409:
            assert time.monotonic() < deadline, response.text
            time.sleep(float(response.headers["Retry-After"]))
            response = requests.post(url, json=body, headers=headers, timeout=30)
    assert response.status_code == 200, response.text
    assert time.monotonic() - killed_at >= LEASE - 1  # not before the lease ran out
    assert Order.get_by_id(order_id).status == "shipped"
    first_call, second_call = market.shipments()
    # the retried push carries the same key: the marketplace can recognise it
    assert first_call["headers"]["Idempotency-Key"] == second_call["headers"]["Idempotency-Key"]


def _post_quietly(url, body, headers):
    try:
        requests.post(url, json=body, headers=headers, timeout=90)
    except requests.RequestException:
        pass  # the server was killed under it: expected
