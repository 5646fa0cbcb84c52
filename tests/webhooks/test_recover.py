"""``POST /api/webhooks/:id/recover``: a receiver that was down gets each event it missed
since a time once, and nothing it already received."""

import threading
import time
from collections import Counter

from commerce_api.webhooks.models import WebhookDelivery
from tests.support import webhooks_support
from tests.support.factories import headers_for, make_tenant
from tests.support.servers import free_port
from tests.support.waiting import wait_for
from tests.support.webhooks_support import (
    Receiver,
    create_webhook,
    deliver,
    delivering,
    emit_events,
)

hooks_app = webhooks_support.hooks_app  # the fixture


def recover(client, headers, webhook_id, since, status=202):
    response = client.post(
        f"/api/webhooks/{webhook_id}/recover", json={"since": since}, headers=headers
    )
    assert response.status_code == status, response.get_json()
    return response.get_json()


def statuses(webhook_id):
    return Counter(
        d.status for d in WebhookDelivery.select().where(WebhookDelivery.endpoint_id == webhook_id)
    )


def pause():
    time.sleep(0.01)  # distinct milliseconds on either side of ``since``


def test_a_receiver_that_was_down_gets_each_missed_event_once(
    hooks_app, client, headers, tenant, monkeypatch
):
    port = free_port()  # nothing listens there yet: the receiver is down
    hook = create_webhook(client, headers, f"http://127.0.0.1:{port}/hooks")
    monkeypatch.setitem(hooks_app.config, "WEBHOOK_RETRY_SCHEDULE", "0,0")
    (before,) = emit_events(tenant.id, [("order.created", "ord_0", {"n": 0})])
    deliver(hooks_app)
    pause()
    since = time.time_ns() // 1_000_000
    pause()
    # failed for good while the receiver was down (two events of one resource among them)
    failed = emit_events(
        tenant.id,
        [
            ("order.created", "ord_1", {"n": 1}),
            ("order.created", "ord_2", {"n": 2}),
            ("order.updated", "ord_2", {"n": 3}),
        ],
    )
    deliver(hooks_app)
    assert statuses(hook["id"]) == {"failed": 4}
    # still being retried, their next attempt an hour away
    monkeypatch.setitem(hooks_app.config, "WEBHOOK_RETRY_SCHEDULE", "3600")
    retrying = emit_events(
        tenant.id,
        [("product.created", "prod_1", {"n": 4}), ("product.updated", "prod_1", {"n": 5})],
    )
    deliver(hooks_app)
    assert statuses(hook["id"]) == {"failed": 4, "pending": 2}

    with Receiver(port=port) as receiver:
        (received,) = emit_events(tenant.id, [("inventory.adjusted", "stk_1", {"n": 6})])
        deliver(hooks_app)  # the receiver is back: this one arrives on the first try
        assert [b["id"] for b in receiver.bodies()] == [received]

        since_text = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(since // 1000))
        since_text += f".{since % 1000:03d}Z"
        summary = recover(client, headers, hook["id"], since_text)["data"]
        assert summary == {
            "webhook_id": hook["id"],
            "since": since_text,
            "queued": 3,
            "pending": 2,
        }
        deliver(hooks_app)
        got = Counter(b["id"] for b in receiver.bodies())
        assert got == Counter([received, *failed, *retrying])  # each once, `before` never
        assert before not in got
        # the retrying ones were made due, not doubled: nothing is left to arrive later
        assert statuses(hook["id"]) == {"failed": 4, "succeeded": 6}
        order = [b["id"] for b in receiver.bodies()]
        assert order.index(failed[1]) < order.index(failed[2])  # one resource, in order

        # nothing is left to recover, and nothing more arrives
        again = recover(client, headers, hook["id"], since_text)["data"]
        assert (again["queued"], again["pending"]) == (0, 0)
        deliver(hooks_app)
        assert len(receiver.bodies()) == 6


def test_recover_follows_the_endpoints_subscription_and_lifetime(
    hooks_app, client, headers, tenant, monkeypatch
):
    monkeypatch.setitem(hooks_app.config, "WEBHOOK_RETRY_SCHEDULE", "")
    (earlier,) = emit_events(tenant.id, [("order.created", "ord_e", {})])
    deliver(hooks_app)
    pause()
    port = free_port()
    hook = create_webhook(client, headers, f"http://127.0.0.1:{port}/h", events=["order.created"])
    pause()
    wanted, _ = emit_events(
        tenant.id, [("order.created", "ord_1", {}), ("product.created", "prod_1", {})]
    )
    deliver(hooks_app)
    with Receiver(port=port) as receiver:
        summary = recover(client, headers, hook["id"], "2020-01-01T00:00:00Z")["data"]
        assert (summary["queued"], summary["pending"]) == (1, 0)
        deliver(hooks_app)
        assert [b["id"] for b in receiver.bodies()] == [wanted]
    assert earlier not in {d.event_id for d in WebhookDelivery.select()}


def test_an_event_never_fanned_out_to_the_endpoint_is_recovered(hooks_app, client, headers, tenant):
    with Receiver() as receiver:
        hook = create_webhook(client, headers, receiver.url)
        response = client.patch(
            f"/api/webhooks/{hook['id']}", json={"is_active": False}, headers=headers
        )
        assert response.status_code == 200
        (missed,) = emit_events(tenant.id, [("order.created", "ord_1", {})])
        deliver(hooks_app)  # the endpoint was off: no delivery at all
        error = recover(client, headers, hook["id"], "2020-01-01T00:00:00Z", status=409)
        assert error["error"]["code"] == "WEBHOOK_DISABLED"
        client.patch(f"/api/webhooks/{hook['id']}", json={"is_active": True}, headers=headers)
        assert recover(client, headers, hook["id"], "2020-01-01T00:00:00Z")["data"]["queued"] == 1
        deliver(hooks_app)
        assert [b["id"] for b in receiver.bodies()] == [missed]


def test_recover_refuses_bad_requests_and_changes_nothing(hooks_app, client, headers, tenant):
    hook = create_webhook(client, headers, "http://127.0.0.1:9/h")
    emit_events(tenant.id, [("order.created", "ord_1", {})])
    deliver(hooks_app)
    before = sorted((d.id, d.status, d.next_attempt_at) for d in WebhookDelivery.select())
    path = f"/api/webhooks/{hook['id']}/recover"
    for body, status, code in (
        ({}, 422, "VALIDATION_ERROR"),
        ({"since": "yesterday"}, 422, "VALIDATION_ERROR"),
        ({"since": "2026-01-01T00:00:00Z", "extra": 1}, 422, "VALIDATION_ERROR"),
    ):
        response = client.post(path, json=body, headers=headers)
        assert (response.status_code, response.get_json()["error"]["code"]) == (status, code)
    reader = headers_for(tenant, ["webhooks:read"])
    response = client.post(path, json={"since": "2026-01-01T00:00:00Z"}, headers=reader)
    assert response.get_json()["error"]["details"]["required_scope"] == "webhooks:write"
    other = headers_for(make_tenant())
    response = client.post(path, json={"since": "2026-01-01T00:00:00Z"}, headers=other)
    assert response.status_code == 404
    assert response.get_json()["error"]["code"] == "WEBHOOK_NOT_FOUND"
    after = sorted((d.id, d.status, d.next_attempt_at) for d in WebhookDelivery.select())
    assert after == before


def test_recover_while_the_delivery_loop_runs_and_events_keep_coming(
    hooks_app, client, headers, tenant, monkeypatch
):
    """Recover meets the running fan-out and sends: every event arrives once."""
    down = threading.Event()
    down.set()
    answered = Counter()  # event id -> 2xx answers given
    lock = threading.Lock()

    def respond(record):
        if down.is_set():
            return 503, {}
        with lock:
            answered[record["headers"]["webhook-id"]] += 1
        return 200, {}

    with Receiver(respond=respond) as receiver:
        hook = create_webhook(client, headers, receiver.url)
        since = "2020-01-01T00:00:00Z"
        monkeypatch.setitem(hooks_app.config, "WEBHOOK_RETRY_SCHEDULE", "0")
        failed = emit_events(
            tenant.id, [("order.created", f"ord_{i}", {"i": i}) for i in range(10)]
        )
        deliver(hooks_app)  # two attempts each, then failed for good
        monkeypatch.setitem(hooks_app.config, "WEBHOOK_RETRY_SCHEDULE", "3600")
        with delivering(hooks_app):
            retrying = emit_events(
                tenant.id, [("product.updated", f"prod_{i}", {"i": i}) for i in range(10)]
            )
            assert wait_for(lambda: len(receiver.requests) == 30, timeout=30)  # 20 + 10 firsts
            down.clear()  # the receiver is back
            later = []

            def keep_emitting():
                for i in range(20):
                    later.extend(emit_events(tenant.id, [("inventory.adjusted", f"stk_{i}", {})]))

            emitter = threading.Thread(target=keep_emitting)
            emitter.start()
            summary = recover(client, headers, hook["id"], since)["data"]
            emitter.join(30)
            # the later events may be pending (just fanned out) as recover looks
            assert summary["queued"] == 10 and summary["pending"] >= 10
            expected = set(failed + retrying + later)
            ok = wait_for(lambda: set(answered) >= expected, timeout=30)
            missing = expected - set(answered)
            rows = [
                (
                    d.event_id in missing,
                    d.event_type,
                    d.status,
                    d.attempt_count,
                    d.next_attempt_at,
                    d.lease_until,
                )
                for d in WebhookDelivery.select()
                if d.event_id in missing
            ]
            assert ok, (len(later), len(missing), rows[:10])
            time.sleep(0.5)  # anything sent twice would arrive by now
        assert answered == Counter(expected)  # each once
        assert not WebhookDelivery.select().where(WebhookDelivery.status == "pending").exists()


def test_a_delivery_in_flight_during_recover_is_due_at_once_if_it_fails(
    hooks_app, client, headers, tenant
):
    """The attempt being sent as recover runs is left to its outcome: success ends it (no
    second send); a failure makes it due at once instead of an hour away."""
    from commerce_api.db import write_transaction
    from commerce_api.timeutil import now_ms
    from commerce_api.webhooks import dispatch, fanout
    from commerce_api.webhooks.service import parse_schedule
    from commerce_api.webhooks.signing import event_body

    hook = create_webhook(client, headers, "http://127.0.0.1:9/h")
    emit_events(tenant.id, [("order.created", "ord_1", {}), ("order.created", "ord_2", {})])
    fanout.fan_out(10, now_ms())
    now = now_ms()
    with write_transaction():
        first, second = dispatch.claim({hook["id"]: 10}, 60_000, "worker:1", now, event_body)
    summary = recover(client, headers, hook["id"], "2020-01-01T00:00:00Z")["data"]
    assert (summary["queued"], summary["pending"]) == (0, 2)  # both in flight: left alone
    assert WebhookDelivery.select().count() == 2
    schedule = parse_schedule("3600")
    failed = dispatch.Outcome(first, now, 5, status_code=503)
    succeeded = dispatch.Outcome(second, now, 5, status_code=200)
    later = now_ms()
    with write_transaction():
        assert dispatch.record([failed, succeeded], schedule, later) == 2
    rows = {d.id: d for d in WebhookDelivery.select()}
    assert rows[first.id].status == "pending" and rows[first.id].next_attempt_at == later
    assert rows[second.id].status == "succeeded"
    # the mark is spent: the next failure goes back on the schedule
    with write_transaction():
        (again,) = dispatch.claim({hook["id"]: 10}, 60_000, "worker:2", later, event_body)
        dispatch.record([dispatch.Outcome(again, later, 5, status_code=503)], schedule, later)
    assert WebhookDelivery.get_by_id(first.id).status == "failed"  # two attempts: over


def test_two_recoveries_at_once_queue_each_event_once(hooks_app, client, headers, tenant):
    from concurrent.futures import ThreadPoolExecutor

    from commerce_api.db import db

    hook = create_webhook(client, headers, "http://127.0.0.1:9/h")
    emit_events(tenant.id, [("order.created", f"ord_{i}", {}) for i in range(30)])
    deliver(hooks_app)  # connection refused: failed for good
    barrier = threading.Barrier(2)

    def one(_):
        with hooks_app.test_client() as own:
            barrier.wait(5)
            try:
                return recover(own, headers, hook["id"], "2020-01-01T00:00:00Z")["data"]
            finally:
                if not db.is_closed():
                    db.close()

    with ThreadPoolExecutor(2) as pool:
        summaries = list(pool.map(one, range(2)))
    assert sorted(s["queued"] for s in summaries) == [0, 30]  # the second saw them pending
    assert sorted(s["pending"] for s in summaries) == [0, 30]
    pending = WebhookDelivery.select().where(WebhookDelivery.status == "pending")
    assert pending.count() == 30 and len({d.event_id for d in pending}) == 30
