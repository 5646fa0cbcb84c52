"""SIGKILL of a real ``commerce-api worker`` during a burst of deliveries: no delivery is
lost, and none is sent again once its success was recorded (at-least-once: a delivery
sent but not yet recorded when the worker died is sent again)."""

import collections
import json
import os
import signal
import time

from commerce_api.webhooks.models import WebhookDelivery
from tests.support import webhooks_support
from tests.support.servers import start_command, stop_process
from tests.support.waiting import wait_for
from tests.support.webhooks_support import Receiver, create_webhook, emit_events

hooks_app = webhooks_support.hooks_app

EVENTS = 300
RESOURCES = 12
WORKER_CONFIG = {
    "WEBHOOK_ALLOW_PRIVATE_TARGETS": 1,
    "WEBHOOK_LEASE_SECONDS": 2,
    "WEBHOOK_TIMEOUT_SECONDS": 1,
    "WEBHOOK_RETRY_SCHEDULE": "0.2,0.2,0.2,0.2,0.2,0.2",
    "WEBHOOK_POLL_INTERVAL": 0.05,
    "WEBHOOK_SEND_CONCURRENCY": 4,
    "WORKER_POLL_INTERVAL": 0.1,
    "LOG_LEVEL": "WARNING",
}


def succeeded():
    return WebhookDelivery.select().where(WebhookDelivery.status == "succeeded").count()


def test_sigkill_during_a_burst_loses_nothing(hooks_app, client, headers, database_url):
    def slow_ok(record):
        time.sleep(0.003)  # a receiver doing some work: the burst lasts long enough
        return 200, {}

    with Receiver(slow_ok) as receiver:
        create_webhook(client, headers, receiver.url)
        resources = [f"ord_{n % RESOURCES}" for n in range(EVENTS)]
        ids = emit_events(
            headers["X-Tenant-ID"],
            [("order.updated", r, {"resource": r, "n": n}) for n, r in enumerate(resources)],
        )
        first = start_command(["worker", "--concurrency", "1"], database_url, **WORKER_CONFIG)
        second = None
        try:
            assert wait_for(lambda: len(receiver.requests) >= EVENTS // 4, timeout=90)
            os.killpg(first.pid, signal.SIGKILL)
            first.wait(10)
            killed_at = len(receiver.requests)
            assert killed_at < EVENTS, "the burst ended before the kill"
            second = start_command(["worker", "--concurrency", "1"], database_url, **WORKER_CONFIG)
            assert wait_for(lambda: succeeded() == EVENTS, timeout=120), succeeded()
        finally:
            stop_process(first)
            if second is not None:
                stop_process(second)
        requests = list(receiver.requests)

    rows = list(WebhookDelivery.select())
    assert sorted(d.event_id for d in rows) == sorted(ids)  # one delivery per event
    assert {d.status for d in rows} == {"succeeded"}
    delivered_at = {d.id: d.delivered_at for d in rows}
    received = collections.Counter(r["headers"]["X-Service-Delivery"] for r in requests)
    assert set(received) == set(delivered_at)  # nothing lost
    # nothing arrived after its success was recorded
    late = [
        r
        for r in requests
        if r["received_at"] * 1000 > delivered_at[r["headers"]["X-Service-Delivery"]]
    ]
    assert late == []
    # per resource, events first arrived in event order, even across the crash; a request
    # the kill cut before its body arrived was no delivery (the next worker sent it again)
    first_seen = []
    for request in requests:
        if not request["body"]:
            continue
        event_id = json.loads(request["body"])["id"]
        if event_id not in first_seen:
            first_seen.append(event_id)
    for resource in set(resources):
        expected = [i for i, r in zip(ids, resources, strict=True) if r == resource]
        assert [i for i in first_seen if i in expected] == expected
    duplicates = sum(count - 1 for count in received.values())
    print(f"killed after {killed_at} receipts; {duplicates} resent after the crash")
    assert duplicates <= 4 * 2  # at most what one worker had in flight
