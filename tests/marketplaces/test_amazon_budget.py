"""The Amazon connector's rate budget (``amazon_client.budget_plan`` over
``marketplaces.budgets``) against Amazon's usage plans, on a simulated clock.

A call's token leaves the budget when the call is sent, but Amazon's bucket (rate and
burst per operation, as the contract fake keeps it) only when the call arrives, and a full
bucket restores nothing meanwhile. The soak on PostgreSQL, with a full CI beside it, saw
one 429 from a usage plan: with the budget one token below the plan's burst, calls that
reached Amazon more than one token's time late (0.21 s for ``patchListingsItem``) arrived
together with later calls that were on time. The budget now keeps the headroom the Shopify
budget keeps (``budgets.terms``).
"""

import heapq
import types
import uuid

import pytest

from commerce_api.marketplaces import amazon, budgets
from commerce_api.marketplaces.amazon_client import USAGE_PLANS, budget_plan
from commerce_api.marketplaces.base import MarketplaceUnavailable
from tests.marketplaces.test_amazon import connect_amazon, fake  # noqa: F401 (the fixture)
from tests.marketplaces.test_budgets import store  # noqa: F401 (the fixture)
from tests.support.amazon_fake import Bucket


def Plan(rate, burst):  # noqa: N802 (stands for the class it was)
    """An operation's usage plan as the contract fake enforces it, on the test's clock."""
    return Bucket(rate, burst, at=0.0)


def run(operation, calls, monkeypatch, waits=None):
    """Send ``calls`` ((time it is wanted, seconds from its due time to its arrival[, time
    before which it cannot leave])) of ``operation`` through the budget; returns the ones
    Amazon's plan throttled (``waits``: each draw's wait is added)."""
    waits = [] if waits is None else waits
    clock = types.SimpleNamespace(now=0.0)
    monkeypatch.setattr(
        budgets, "time", types.SimpleNamespace(time=lambda: 1_000_000.0 + clock.now)
    )
    connection, plan, throttled = "mkc_" + uuid.uuid4().hex, Plan(*USAGE_PLANS[operation]), []
    terms = budget_plan(*USAGE_PLANS[operation])
    events = [(call[0], n, "draw", call[1:]) for n, call in enumerate(calls)]
    heapq.heapify(events)
    while events:
        clock.now, n, kind, what = heapq.heappop(events)
        if kind == "draw":
            late, held = what[0], what[1] if len(what) > 1 else 0.0
            wait = budgets.reserve(connection, operation, *terms, 600)
            waits.append(wait)
            heapq.heappush(events, (max(clock.now + wait, held) + late, n, "arrive", ()))
        elif not plan.take(clock.now):
            throttled.append(n)
    return throttled


def test_calls_held_up_by_the_token_exchange_arrive_within_the_plan(store, monkeypatch):  # noqa: F811
    # a worker's first moments: eight single-listing patches are drawn at once; the first
    # exchanges the refresh token and the others wait for it, so every call whose token
    # was due meanwhile leaves when the token comes, 0.45 s on (a loaded machine), together
    # with the next ones, which leave on time
    calls = [(0.0, 0.005, 0.45)] * 8
    assert run("patchListingsItem", calls, monkeypatch) == []


@pytest.mark.parametrize("operation", sorted(USAGE_PLANS))
@pytest.mark.parametrize("late", [0.1, 0.3, 0.45])
def test_a_saturating_stream_with_late_arrivals_is_never_throttled(
    store,  # noqa: F811
    monkeypatch,
    operation,
    late,
):
    # more calls than the plan allows, wanted at once and then steadily; every third
    # arrives on time, the others up to ``late`` seconds after their token was due
    rate, burst = USAGE_PLANS[operation]
    count = burst + 3 * max(2, int(rate * 10))
    calls = [(i / (2 * rate) if i > burst else 0.0, late * (i % 3) / 2) for i in range(count)]
    assert run(operation, calls, monkeypatch) == []


def test_the_headroom_costs_the_top_of_the_bucket_only(store, monkeypatch):  # noqa: F811
    # in steady state the budget gives the plan's rate less 5 %: 200 patches wanted 4 a
    # second (below its 4.75) go at once, each: nothing queues behind a headroom
    waits = []
    calls = [(i / 4, 0.0) for i in range(200)]
    assert run("patchListingsItem", calls, monkeypatch, waits) == []
    assert waits == [0.0] * 200


def test_every_exchange_draws_again_after_a_429_a_5xx_or_a_refused_token(
    app,
    tenant,
    fake,  # noqa: F811
    monkeypatch,
):
    # a call tried again (after a 429, a refused token, or a 5xx left to the job's retry)
    # takes a token of its own: no exchange reaches Amazon without a draw
    draws = []
    take = budgets.take
    monkeypatch.setattr(
        budgets, "take", lambda *args, **kw: draws.append(args[1]) or take(*args, **kw)
    )
    connection = connect_amazon(tenant, fake)
    connector = amazon.AmazonConnector(connection, connection.settings)
    fake.throttle_next(1)
    assert connector.check()["ok"] is True
    fake.expire_tokens()
    assert connector.check()["ok"] is True
    fake.fail_next(1, 503)
    with pytest.raises(MarketplaceUnavailable):
        connector.check()
    assert connector.check()["ok"] is True
    # six exchanges (429, 200, 403, 200, 503, 200), six draws; the fake counts the calls
    # its plan saw: all but the refused token
    assert len(draws) == 6 and fake.calls["getInventorySummaries"] == 5
    assert fake.throttled == 0
