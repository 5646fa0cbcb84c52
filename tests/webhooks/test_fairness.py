"""Fair sharing on a running ``commerce-api worker``: one tenant's hanging receivers and
backlog do not hold back another tenant's deliveries, and no endpoint ever has more than
``WEBHOOK_ENDPOINT_CONCURRENCY`` sends in flight (counted by the receiver)."""

import datetime
import json
import time

from commerce_api.db import write_transaction
from commerce_api.timeutil import now_ms
from commerce_api.webhooks import dispatch, fanout
from commerce_api.webhooks.fairness import Slots
from commerce_api.webhooks.models import WebhookAttempt, WebhookDelivery
from commerce_api.webhooks.service import DeliveryService
from tests.support import webhooks_support
from tests.support.factories import headers_for
from tests.support.servers import start_command, stop_process
from tests.support.waiting import wait_for
from tests.support.webhooks_support import HANG, Receiver, create_webhook, emit_events

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


# The rules of one process, without HTTP -------------------------------------------------------


def claimed(tenant, endpoint, n, lease_until=10**15):
    return dispatch.Claimed(
        f"dlv_{endpoint}_{n}", "w:1", 0, endpoint, tenant, "http://127.0.0.1:9/x", "whsec_",
        None, True, f"evt_{n}", "order.updated", b"{}", lease_until,
    )  # fmt: skip


def test_slots_plan_takes_tenants_then_endpoints_in_turn():
    slots = Slots(threads=8, capacity=16, endpoint_limit=2)
    candidates = {f"whk_b{n}": "B" for n in range(20)} | {"whk_a": "A"}
    quotas = slots.plan(16, candidates)
    assert quotas["whk_a"] == 8  # the tenants take turns: half each
    b_quotas = [q for e, q in quotas.items() if e != "whk_a"]
    assert sum(b_quotas) == 8 and max(b_quotas) == 1  # and B's endpoints take turns
    # B alone may not hold every slot: room stays for another tenant
    slots.add([claimed("B", f"whk_b{n}", n) for n in range(20)][: slots.tenant_claims])
    assert slots.plan(16, {f"whk_b{n}": "B" for n in range(20)}) == {}
    assert slots.plan(4, candidates) == {"whk_a": 4}


def test_slots_send_at_most_the_endpoint_limit_and_keep_a_thread_for_others():
    slots = Slots(threads=4, capacity=8, endpoint_limit=2)
    slots.add([claimed("B", "whk_b1", n) for n in range(3)])
    slots.add([claimed("B", "whk_b2", n) for n in range(3)])
    taken = [slots.take() for _ in range(3)]  # B may use 3 of the 4 threads
    assert [d.endpoint_id for d in taken] == ["whk_b1", "whk_b2", "whk_b1"]
    assert slots._next() is None  # B is at threads - 1; whk_b1 at its limit
    slots.add([claimed("A", "whk_a", 0)])
    assert slots.take().tenant_id == "A"  # the thread kept free goes to A
    slots.done(taken[0])
    assert slots.take().endpoint_id == "whk_b2"  # the endpoint served least recently
    assert slots._next() is None  # B at threads - 1 again
    assert len(slots.close()) == 2 and slots.take() is None


def test_a_delivery_whose_lease_runs_short_in_the_queue_is_given_back(
    hooks_app, client, headers, monkeypatch
):
    create_webhook(client, headers, "http://127.0.0.1:9/never")
    emit_events(headers["X-Tenant-ID"], [("order.created", "ord_1", {})])
    monkeypatch.setitem(hooks_app.config, "WEBHOOK_TIMEOUT_SECONDS", 1.0)
    monkeypatch.setitem(hooks_app.config, "WEBHOOK_LEASE_SECONDS", 1)
    service = DeliveryService(hooks_app.config)  # the shortest lease: twice the time-out
    now = now_ms()
    with hooks_app.app_context():
        fanout.fan_out(10, now)
        with write_transaction():
            (delivery,) = service._claim(1, f"{service.worker}:1")
        assert service._send(delivery).sent  # claimed just now: sent (and refused)
        delivery.lease_until = now_ms() + int(service.timeout * 1000)  # too short to send
        outcome = service._send(delivery)
        assert outcome.given_back and not outcome.sent
        assert dispatch.record([outcome], service.schedule, now_ms()) == 1
    row = WebhookDelivery.get()
    assert (row.status, row.attempt_count, row.lease_until, row.lease_token) == (
        "pending",
        0,
        None,
        None,
    )
    assert WebhookAttempt.select().count() == 0
