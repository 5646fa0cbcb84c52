"""Fair sharing on a running ``commerce-api worker``: one tenant's hanging receivers and
backlog do not hold back another tenant's deliveries, and no endpoint ever has more than
``WEBHOOK_ENDPOINT_CONCURRENCY`` sends in flight (counted by the receiver)."""

import datetime
import json
import time

from commerce_api.webhooks.models import WebhookDelivery

from . import webhooks_support
from .factories import headers_for
from .servers import start_command, stop_process
from .webhooks_support import HANG, Receiver, create_webhook, emit_events, wait_for

hooks_app = webhooks_support.hooks_app

TIMEOUT = 3  # one attempt's time-out (s): B's receivers hang past it
CONCURRENCY = 2  # per endpoint
WORKER_CONFIG = {
    "WEBHOOK_ALLOW_PRIVATE_TARGETS": 1,
    "WEBHOOK_TIMEOUT_SECONDS": TIMEOUT,
    "WEBHOOK_LEASE_SECONDS": 2 * TIMEOUT,
    "WEBHOOK_RETRY_SCHEDULE": "0.5,0.5,0.5,0.5,0.5,0.5,0.5,0.5,0.5,0.5",
    "WEBHOOK_SEND_CONCURRENCY": 8,
    "WEBHOOK_ENDPOINT_CONCURRENCY": CONCURRENCY,
    "WEBHOOK_POLL_INTERVAL": 0.05,
    "WORKER_POLL_INTERVAL": 0.1,
    "LOG_LEVEL": "WARNING",
}


def event_time(body):
    return datetime.datetime.fromisoformat(body["created_at"]).timestamp()


def test_a_tenant_whose_receivers_hang_does_not_hold_back_another(
    hooks_app, client, headers, database_url
):
    def respond(record):
        return HANG if record["path"].startswith("/hooks/b") else (200, {})

    tenant_b = headers_for()
    with Receiver(respond) as receiver:
        create_webhook(client, headers, receiver.url + "/a")
        for n in range(20):
            create_webhook(client, tenant_b, f"{receiver.url}/b{n}")
        # 25 events x 20 endpoints: B has 500 deliveries before A has any
        emit_events(
            tenant_b["X-Tenant-ID"],
            [("order.updated", f"ord_{n}", {"n": n}) for n in range(25)],
        )
        worker = start_command(["worker", "--concurrency", "1"], database_url, **WORKER_CONFIG)
        try:
            # B's hanging sends take every thread they may (all but one)
            assert wait_for(lambda: sum(receiver.in_flight.values()) >= 7, timeout=60)
            b_pending = WebhookDelivery.select().where(
                (WebhookDelivery.tenant_id == tenant_b["X-Tenant-ID"])
                & (WebhookDelivery.status == "pending")
            )
            assert b_pending.count() == 500
            a_ids = []
            for n in range(20):  # A's events come while B's hangs go on
                a_ids += emit_events(headers["X-Tenant-ID"], [("order.created", f"ord_{n}", {})])
                time.sleep(0.15)
            assert wait_for(
                lambda: sum(r["path"] == "/hooks/a" for r in receiver.requests) >= 20, timeout=60
            )
            assert b_pending.count() == 500  # B's backlog was there all along
        finally:
            stop_process(worker)
        requests = list(receiver.requests)
        most = dict(receiver.max_in_flight)

    a_requests = [r for r in requests if r["path"] == "/hooks/a"]
    bodies = [json.loads(r["body"]) for r in a_requests]
    assert sorted(b["id"] for b in bodies) == sorted(a_ids)  # each once
    delays = [r["received_at"] - event_time(b) for r, b in zip(a_requests, bodies, strict=True)]
    assert max(delays) < TIMEOUT, sorted(delays)
    # B's sends went to its endpoints in turn, never more than the concurrency to one
    b_paths = {r["path"] for r in requests if r["path"].startswith("/hooks/b")}
    assert len(b_paths) >= 7
    assert max(most.values()) <= CONCURRENCY, most
    print(f"A's delays: max {max(delays):.2f} s; B attempts {len(requests) - len(a_requests)}")
