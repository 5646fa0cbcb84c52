"""Recorded as it happens (issue 19, DESIGN 9): a worker killed with SIGKILL while a
``pricing_recalculate`` with ``apply: true`` is pushing prices leaves no price on the
marketplace that the service does not know: the retried job pushes the interrupted one
again (same Idempotency-Key), goes on, and ``applied_at`` is when each push was accepted."""

import os
import signal
import threading
import time

from commerce_api.claims import OperationClaim
from commerce_api.jobs.models import Job
from commerce_api.pricing.models import Recommendation
from commerce_api.products.models import Listing, Product
from tests.support import pricing_support
from tests.support.pricing_support import (
    connect_http,
    create_rule,
    list_product,
    make_product,
    offer,
    seed_offers,
)
from tests.support.servers import start_command, stop_process
from tests.support.waiting import wait_for

market = pricing_support.market  # the fixture

SKUS = [f"MUG-{n:02d}" for n in range(12)]
KILL_AT = 5  # the push during which the worker dies
WORKER_CONFIG = {
    "WORKER_LEASE_SECONDS": 2,
    "WORKER_POLL_INTERVAL": 0.1,
    "WORKER_RETRY_BACKOFF_SECONDS": 0.5,
    "MARKETPLACE_DEADLINE_SECONDS": 5,
    "CLAIM_LEASE_SECONDS": 6,
    "LOG_LEVEL": "WARNING",
}


def test_a_worker_killed_mid_push_leaves_no_unknown_price(
    client, headers, tenant, market, database_url
):
    connect_http(tenant, market.url)
    for n, sku in enumerate(SKUS):
        make_product(client, headers, sku, cost="10.00")
        list_product(tenant, sku, "shop", f"{30 + n}.00")
        seed_offers(tenant, "shop", [offer(sku, "A", f"{25 + n}.00")])
    create_rule(client, headers, type="competitor_match", value=-1)
    pushes_before = len(market.pushes())
    hanging = threading.Event()

    def hang_on_the_kill_push(record):
        if record["method"] == "PUT" and len(market.pushes()) - pushes_before == KILL_AT:
            hanging.set()
            time.sleep(1.0)  # the marketplace takes the price; its answer comes too late

    market.before_answer = hang_on_the_kill_push
    job_id = client.post(
        "/api/pricing/recalculate", json={"marketplace": "shop", "apply": True}, headers=headers
    ).get_json()["data"]["job_id"]
    first = start_command(["worker", "--concurrency", "1"], database_url, **WORKER_CONFIG)
    second = None
    try:
        assert hanging.wait(60), "the pushes never reached the marketplace"
        os.killpg(first.pid, signal.SIGKILL)
        first.wait(10)
        killed = list(OperationClaim.select())
        assert len(killed) == 1  # the intent of the interrupted push was written down
        second = start_command(["worker", "--concurrency", "1"], database_url, **WORKER_CONFIG)
        assert wait_for(lambda: Job.get_by_id(job_id).status == "completed", 90), Job.get_by_id(
            job_id
        ).status
    finally:
        stop_process(first)
        if second is not None:
            stop_process(second)

    job = Job.get_by_id(job_id)
    assert job.attempts == 2
    assert job.result["resumed_count"] == 1
    pushes = market.pushes()[pushes_before:]
    interrupted = killed[0].resource_id
    assert [p["headers"]["Idempotency-Key"] for p in pushes].count(interrupted) == 2
    # every listing shows what the marketplace last accepted
    listed = {
        sku: float(price)
        for sku, price in Listing.select(Product.sku, Listing.price)
        .join(Product, on=(Listing.product == Product.id))
        .tuples()
    }
    assert listed == {sku: market.accepted[sku] for sku in SKUS}
    # applied when the marketplace accepted the push, not when the chunk started
    received = {}
    for push in pushes:
        received[push["headers"]["Idempotency-Key"]] = push["received_at"]
    applied = list(Recommendation.select().where(Recommendation.status == "applied"))
    assert {r.sku for r in applied} == set(SKUS)
    for rec in applied:
        assert rec.applied_at >= int(received[rec.id] * 1000), rec.sku
    assert OperationClaim.select().count() == 0
