"""Concurrent requests with one Idempotency-Key against a real server do the work once."""

import threading

import pytest
import requests

from commerce_api.events.models import Event
from commerce_api.http.idempotency import IdempotencyRecord
from commerce_api.products.models import Product
from tests.support.factories import auth_headers, make_key, make_tenant, product_body
from tests.support.servers import gunicorn_server


def race(url, headers, body, threads=6):
    """POST from ``threads`` threads released at once; returns (status, headers, json)."""
    barrier = threading.Barrier(threads)
    outcome = []

    def post():
        barrier.wait(timeout=10)
        response = requests.post(url, json=body, headers=headers, timeout=20)
        outcome.append((response.status_code, response.headers, response.json()))

    workers = [threading.Thread(target=post) for _ in range(threads)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(timeout=30)
    return outcome


@pytest.mark.slow
def test_concurrent_requests_with_one_key_create_one_product(app, database_url):
    tenant = make_tenant()
    _, secret = make_key(tenant)
    headers = {**auth_headers(tenant, secret), "Idempotency-Key": "create-once"}
    body = product_body(sku="RACE-LAST")
    results = []
    with gunicorn_server(database_url, workers=2) as base:
        # several rounds of 6 threads released together: the claim is raced for every time
        for round_number in range(3):
            round_headers = {**headers, "Idempotency-Key": f"create-once-{round_number}"}
            round_body = product_body(sku=f"RACE-{round_number}")
            results.append(race(base + "/api/products", round_headers, round_body))
        # afterwards every retry replays the one result
        final = requests.post(base + "/api/products", json=body, headers=headers, timeout=20)
        replay = requests.post(base + "/api/products", json=body, headers=headers, timeout=20)
    assert final.status_code == 201 and "Idempotent-Replayed" not in final.headers
    assert replay.status_code == 201 and replay.headers["Idempotent-Replayed"] == "true"
    assert replay.json() == final.json()
    for round_number, outcome in enumerate(results):
        assert len(outcome) == 6
        executed = [r for r in outcome if r[0] == 201 and "Idempotent-Replayed" not in r[1]]
        assert len(executed) == 1, [r[0] for r in outcome]
        created_id = executed[0][2]["data"]["id"]
        for status, response_headers, payload in outcome:
            if status == 409:
                assert payload["error"]["code"] == "IDEMPOTENCY_KEY_IN_USE"
                assert response_headers["Retry-After"] == "1"
            else:
                assert status == 201, payload
                assert payload["data"]["id"] == created_id
        skus = [p.sku for p in Product.select().where(Product.sku == f"RACE-{round_number}")]
        assert skus == [f"RACE-{round_number}"]
    # one product per round and the last one, each created (and announced) once
    assert Product.select().count() == 4
    assert Event.select().where(Event.type == "product.created").count() == 4
    assert IdempotencyRecord.select().where(IdempotencyRecord.state != "done").count() == 0
