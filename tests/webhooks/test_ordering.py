"""Per-(endpoint, resource) order: a later delivery waits, spending no attempts, while an
earlier one is retried, and goes on once it succeeded or failed for good; other resources
keep flowing meanwhile. And outbox retention."""

import json

from commerce_api.db import db
from commerce_api.events.models import Event
from commerce_api.timeutil import now_ms
from commerce_api.webhooks import retention
from commerce_api.webhooks.models import WebhookAttempt, WebhookDelivery
from tests.support import webhooks_support
from tests.support.waiting import wait_for
from tests.support.webhooks_support import (
    create_webhook,
    deliver,
    delivering,
    emit_events,
)

hooks_app = webhooks_support.hooks_app
receiver = webhooks_support.receiver


def receipts(receiver):
    """``[(event id, resource, status answered)]`` in arrival order."""
    rows = []
    for request in receiver.requests:
        body = json.loads(request["body"])
        rows.append((body["id"], body["data"]["resource"]))
    return rows


def test_a_retried_delivery_holds_back_its_resource_only(hooks_app, client, headers, receiver):
    # A's first retry waits 3 s: time for B's five deliveries even on a loaded machine
    hooks_app.config["WEBHOOK_RETRY_SCHEDULE"] = "3,1,1"
    create_webhook(client, headers, receiver.url)
    plan = ["A", "B", "A", "B", "B", "A", "B", "B"]
    ids = emit_events(
        headers["X-Tenant-ID"],
        [("order.updated", f"ord_{r}", {"resource": r, "n": i}) for i, r in enumerate(plan)],
    )
    a_ids = [i for i, r in zip(ids, plan, strict=True) if r == "A"]
    b_ids = [i for i, r in zip(ids, plan, strict=True) if r == "B"]
    receiver.script[a_ids[0]] = [500, 500]  # A's first event: two failures, then 200
    with delivering(hooks_app):
        assert wait_for(lambda: len(receiver.requests) == len(ids) + 2, timeout=30)
    arrivals = [event_id for event_id, _ in receipts(receiver)]
    # A: its first event three times, then the later ones, in event order
    assert [e for e in arrivals if e in a_ids] == [a_ids[0]] * 3 + a_ids[1:]
    # B kept flowing while A waited: all of B arrived, in order, before A's retry
    assert [e for e in arrivals if e in b_ids] == b_ids
    # senders run concurrently: B's first delivery may arrive before A's first attempt
    second_a_attempt = arrivals.index(a_ids[0], arrivals.index(a_ids[0]) + 1)
    labels = ["A" if e in a_ids else "B" for e in arrivals]
    assert all(arrivals.index(e) < second_a_attempt for e in b_ids), labels
    rows = {d.event_id: d for d in WebhookDelivery.select()}
    assert rows[a_ids[0]].attempt_count == 3
    assert all(rows[e].attempt_count == 1 and rows[e].status == "succeeded" for e in ids[1:])


def test_a_failed_for_good_delivery_lets_the_next_go(hooks_app, client, headers, receiver):
    hook = create_webhook(client, headers, receiver.url)
    first, second = emit_events(
        headers["X-Tenant-ID"],
        [
            ("order.updated", "ord_A", {"resource": "A"}),
            ("order.shipped", "ord_A", {"resource": "A"}),
        ],
    )
    receiver.script[first] = [500] * 10
    deliver(hooks_app)
    arrivals = [event_id for event_id, _ in receipts(receiver)]
    assert arrivals == [first] * 4 + [second]
    rows = {d.event_id: d for d in WebhookDelivery.select()}
    assert rows[first].status == "failed" and rows[second].status == "succeeded"
    assert rows[second].attempt_count == 1
    assert hook["id"] == rows[second].endpoint_id


def test_order_is_per_endpoint(hooks_app, client, headers, receiver):
    other = webhooks_support.Receiver()
    with other:
        create_webhook(client, headers, receiver.url)
        create_webhook(client, headers, other.url)
        first, second = emit_events(
            headers["X-Tenant-ID"],
            [
                ("order.updated", "ord_A", {"resource": "A"}),
                ("order.updated", "ord_A", {"resource": "A"}),
            ],
        )
        receiver.script[first] = [500] * 10
        deliver(hooks_app)
        assert [e for e, _ in receipts(other)] == [first, second]
    assert [e for e, _ in receipts(receiver)] == [first] * 4 + [second]


def test_retention_purges_old_finished_work_only(hooks_app, client, headers, receiver):
    hook = create_webhook(client, headers, receiver.url)
    old, pending, recent = emit_events(
        headers["X-Tenant-ID"],
        [("order.updated", f"ord_{n}", {"resource": n}) for n in ("old", "pending", "recent")],
    )
    receiver.script[pending] = [500] * 10
    hooks_app.config["WEBHOOK_RETRY_SCHEDULE"] = "3600"
    deliver(hooks_app)
    day = 86_400_000
    long_ago = now_ms() - 40 * day
    # age the first two events and their deliveries by 40 days
    for event_id in (old, pending):
        Event.update(created_at=long_ago).where(Event.id == event_id).execute()
        db.execute_sql(
            f"UPDATE event SET fanned_out_at = {db.param} WHERE id = {db.param}",
            (long_ago, event_id),
        )
        WebhookDelivery.update(created_at=long_ago).where(
            WebhookDelivery.event_id == event_id
        ).execute()
    WebhookDelivery.update(finished_at=long_ago).where(
        (WebhookDelivery.event_id == old) & (WebhookDelivery.status == "succeeded")
    ).execute()
    unrelated = emit_events(headers["X-Tenant-ID"], [("order.created", "ord_x", {})])[0]
    Event.update(created_at=long_ago).where(Event.id == unrelated).execute()
    db.execute_sql(
        f"UPDATE event SET fanned_out_at = {db.param} WHERE id = {db.param}", (long_ago, unrelated)
    )
    counts = retention.purge(30)
    assert counts == {"deliveries": 1, "events": 2}
    remaining = {e.id for e in Event.select()}
    assert remaining == {pending, recent}  # the pending delivery keeps its event
    assert {d.event_id for d in WebhookDelivery.select()} == {pending, recent}
    assert (
        WebhookAttempt.select()
        .where(WebhookAttempt.delivery_id.not_in(WebhookDelivery.select(WebhookDelivery.id)))
        .count()
        == 0
    )
    assert hook["id"]
