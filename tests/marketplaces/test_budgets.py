"""Rate budgets (``marketplaces.budgets``): a token bucket per connection and operation,
shared by every process, in the database or in Redis."""

import uuid

import pytest

from commerce_api.marketplaces import budgets
from tests.support.http_support import redis_only


@pytest.fixture(params=["database", pytest.param("redis", marks=redis_only)])
def store(request, app):
    if request.param == "redis":
        app.config["REDIS_URL"] = "redis://127.0.0.1:6379/0"
    with app.app_context():
        yield request.param
    app.config["REDIS_URL"] = None


def key():
    return "mkc_" + uuid.uuid4().hex


def test_the_burst_goes_at_once_then_calls_wait_their_turn(store):
    connection = key()
    waits = [budgets.reserve(connection, "op", 1.0, 3, max_wait=60) for _ in range(3)]
    assert waits == [0.0, 0.0, 0.0]
    fourth = budgets.reserve(connection, "op", 1.0, 3, max_wait=60)
    fifth = budgets.reserve(connection, "op", 1.0, 3, max_wait=60)
    assert 0 < fourth <= 1.0 and fourth < fifth <= 2.0  # reserved one after the other


def test_a_reservation_past_the_wait_is_not_taken(store):
    connection = key()
    assert budgets.reserve(connection, "op", 0.001, 1, max_wait=5) == 0.0
    with pytest.raises(budgets.BudgetExhausted) as refused:
        budgets.reserve(connection, "op", 0.001, 1, max_wait=5)
    assert refused.value.wait > 900
    # nothing was taken: a later caller that may wait long enough gets the same turn
    assert budgets.reserve(connection, "op", 0.001, 1, max_wait=2000) == pytest.approx(
        refused.value.wait, rel=0.01
    )


def test_the_marketplace_rate_replaces_the_plan_and_a_429_empties_the_bucket(store):
    connection = key()
    assert budgets.reserve(connection, "op", 0.001, 1, max_wait=5000) == 0.0
    budgets.adjust(connection, "op", 0.001, 1, new_rate=100.0)
    assert budgets.reserve(connection, "op", 0.001, 1, max_wait=5000) <= 0.01
    other = key()
    assert budgets.reserve(other, "op", 1.0, 5, max_wait=60) == 0.0
    budgets.drain(other, "op", 1.0, 5)
    assert budgets.reserve(other, "op", 1.0, 5, max_wait=60) > 0


def test_budgets_off_never_wait(app):
    app.config["MARKETPLACE_RATE_BUDGETS"] = False
    try:
        with app.app_context():
            connection = key()
            assert [budgets.reserve(connection, "op", 0.001, 1, 5) for _ in range(3)] == [0.0] * 3
    finally:
        app.config["MARKETPLACE_RATE_BUDGETS"] = True


def test_a_priced_call_draws_its_cost_and_the_marketplace_bucket_is_taken(store):
    connection = key()
    # a bucket of 100 points restoring 50/s: 60 + 30 go at once, 20 more wait for 10 points
    assert budgets.reserve(connection, "graphql", 50.0, 100, 60, amount=60) == 0.0
    assert budgets.reserve(connection, "graphql", 50.0, 100, 60, amount=30) == 0.0
    wait = budgets.reserve(connection, "graphql", 50.0, 100, 60, amount=20)
    assert 0 < wait <= 0.2  # (less the points restored while the calls were made)
    # Shopify says its bucket is 1000 restoring 100/s and only 5 points are left: the budget
    # holds no more than that, and a call of 105 points waits a second
    other = key()
    assert budgets.reserve(other, "graphql", 50.0, 100, 60, amount=1) == 0.0
    budgets.observe(other, "graphql", 50.0, 100, new_rate=100.0, new_burst=1000, left=5)
    assert 0.5 < budgets.reserve(other, "graphql", 50.0, 100, 60, amount=105) <= 1.0
    # what is left never goes up by what the marketplace says (reservations in flight)
    third = key()
    assert budgets.reserve(third, "graphql", 50.0, 100, 60, amount=100) == 0.0
    budgets.observe(third, "graphql", 50.0, 100, new_rate=50.0, new_burst=100, left=100)
    assert budgets.reserve(third, "graphql", 50.0, 100, 60, amount=50) > 0.5


def test_an_unpriced_bucket_takes_the_size_of_the_plan_it_is_drawn_with(store):
    # a bucket made under an older plan (one token below Amazon's burst of 5) follows the
    # connector's plan at the next draw: it holds no more than the new size
    connection = key()
    assert budgets.reserve(connection, "op", 1.0, 4, max_wait=60) == 0.0
    waits = [budgets.reserve(connection, "op", 1.0, 2.5, max_wait=60) for _ in range(3)]
    assert waits[:2] == [0.0, 0.0] and 0.4 < waits[2] <= 0.5
