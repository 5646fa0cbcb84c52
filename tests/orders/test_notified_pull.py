"""The immediate pull of notified orders (``orders.notified``): claims, retries, a
notification during a pull, and a race with the cursor pull."""

import threading

from commerce_api.marketplaces.base import Notification
from commerce_api.marketplaces.models import MarketplaceConnection
from commerce_api.orders.models import Order, OrderPullRequest
from commerce_api.orders.notified import claim_pulls, pull_claimed, take_notification
from commerce_api.orders.pulls import pull_one
from commerce_api.timeutil import now_ms
from tests.support.notifications import connect_notified, place_order
from tests.support.orders_support import (
    events_of,
    levels,
    make_own_warehouse,
    make_products,
    stock_up,
)

LEASE_MS = 30_000


def setup_shop(client, headers, tenant):
    make_products(client, headers, "MUG-1")
    stock_up(tenant, make_own_warehouse(tenant), {"MUG-1": 50})
    return connect_notified(tenant.id)


def notify(connection, external_id, event_id, topic="orders/create"):
    return take_notification(connection, Notification(event_id, topic, [external_id]))


def test_two_claims_never_hold_one_order(client, headers, tenant):
    connection = setup_shop(client, headers, tenant)
    for n in range(3):
        notify(connection, place_order(connection.id)["external_order_id"], f"evt-{n}")
    notify(connection, "SBX-000001", "evt-again")  # the same order again: one row
    assert OrderPullRequest.select().count() == 3
    first = claim_pulls("worker-a", 2, LEASE_MS)
    second = claim_pulls("worker-b", 5, LEASE_MS)
    assert len(first) == 2 and len(second) == 1
    assert not {p.id for p in first} & {p.id for p in second}
    assert claim_pulls("worker-c", 5, LEASE_MS) == []
    # a lease that ran out is claimable again
    assert len(claim_pulls("worker-c", 5, LEASE_MS, now=now_ms() + LEASE_MS + 1)) == 3


def test_a_notification_during_the_pull_brings_one_more_pull(client, headers, tenant):
    connection = setup_shop(client, headers, tenant)
    external_id = place_order(connection.id, [{"sku": "MUG-1", "quantity": 1}])["external_order_id"]
    notify(connection, external_id, "evt-1")
    (claimed,) = claim_pulls("worker-a", 5, LEASE_MS)
    notify(connection, external_id, "evt-2", topic="orders/updated")  # while it is pulled
    assert pull_claimed(claimed).status == "created"
    row = OrderPullRequest.get()  # kept, due again, not held
    assert (row.requested, row.holder, row.lease_until) == (2, None, None)
    (again,) = claim_pulls("worker-b", 5, LEASE_MS)
    assert pull_claimed(again).status == "unchanged"
    assert OrderPullRequest.select().count() == 0
    assert Order.select().count() == 1


def test_an_unreachable_marketplace_is_retried_after_a_backoff(client, headers, tenant):
    connection = setup_shop(client, headers, tenant)
    notify(connection, "UNAVAILABLE-1", "evt-1")  # the sandbox simulates an outage
    (claimed,) = claim_pulls("worker-a", 5, LEASE_MS)
    before = now_ms()
    outcome = pull_claimed(claimed)
    assert outcome.status == "retry" and "SIMULATED_OUTAGE" in outcome.error
    row = OrderPullRequest.get()
    assert row.attempts == 1 and row.holder is None
    assert row.due_at >= before + 5_000  # the sandbox's Retry-After (5 s) honoured
    assert claim_pulls("worker-a", 5, LEASE_MS) == []
    assert Order.select().count() == 0


def test_an_order_the_marketplace_does_not_know_is_dropped(client, headers, tenant):
    connection = setup_shop(client, headers, tenant)
    notify(connection, "SBX-999999", "evt-1")
    (claimed,) = claim_pulls("worker-a", 5, LEASE_MS)
    assert pull_claimed(claimed).status == "unknown"
    assert OrderPullRequest.select().count() == 0 and Order.select().count() == 0


def test_a_disabled_connection_is_not_pulled(client, headers, tenant):
    connection = setup_shop(client, headers, tenant)
    notify(connection, place_order(connection.id)["external_order_id"], "evt-1")
    MarketplaceConnection.update(status="disabled").execute()
    (claimed,) = claim_pulls("worker-a", 5, LEASE_MS)
    assert pull_claimed(claimed).status == "gone"
    assert OrderPullRequest.select().count() == 0 and Order.select().count() == 0


def test_the_notified_and_the_cursor_pull_race_for_the_same_orders(client, headers, tenant):
    """Each order arrives by both ways at once: imported once, reserved once."""
    connection = setup_shop(client, headers, tenant)
    external_ids = [
        place_order(connection.id, [{"sku": "MUG-1", "quantity": 1}])["external_order_id"]
        for _ in range(5)
    ]
    for n, external_id in enumerate(external_ids):
        notify(connection, external_id, f"evt-{n}")
    claimed = claim_pulls("worker-a", 10, LEASE_MS)
    assert len(claimed) == 5
    start = threading.Barrier(2)
    errors = []

    def cursor_pull():
        try:
            start.wait(10)
            pull_one(tenant.id, connection.id)
        except Exception as error:  # reported below
            errors.append(error)

    def notified_pulls():
        try:
            start.wait(10)
            for pull in claimed:
                pull_claimed(pull)
        except Exception as error:
            errors.append(error)

    threads = [threading.Thread(target=cursor_pull), threading.Thread(target=notified_pulls)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert errors == []
    orders = list(Order.select())
    assert sorted(o.external_order_id for o in orders) == sorted(external_ids)
    for order in orders:
        assert events_of(order.id).count("order.created") == 1
    assert levels(tenant.id, "MUG-1") == (50, 5)
    assert OrderPullRequest.select().count() == 0


def test_a_connector_that_cannot_read_one_order_gets_a_cursor_pull(
    client, headers, tenant, monkeypatch
):
    from commerce_api.jobs.models import Job
    from commerce_api.marketplaces.sandbox import SandboxConnector

    connection = setup_shop(client, headers, tenant)
    monkeypatch.setattr(SandboxConnector, "fetch_order", lambda self, external_id: NotImplemented)
    for n in range(2):
        notify(connection, f"SBX-00000{n + 1}", f"evt-{n}")
    outcomes = [pull_claimed(pull).status for pull in claim_pulls("worker-a", 5, LEASE_MS)]
    assert outcomes == ["cursor_pull", "cursor_pull"]
    jobs = list(Job.select().where(Job.type == "order_pull"))
    assert len(jobs) == 1  # one queued pull of the connection, not one per order
    assert jobs[0].params == {"connection_id": connection.id}
    assert OrderPullRequest.select().count() == 0
