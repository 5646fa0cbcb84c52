"""Properties of the price computation (hypothesis): bounds, scores, monotonicity, determinism."""

import random
from decimal import ROUND_CEILING, Decimal

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from commerce_api.pricing.engine import RuleSet, compute_price
from commerce_api.pricing.probability import buy_box_probability
from commerce_api.pricing.types import Offer, PriceInput, Rule

pytestmark = pytest.mark.engine_free  # the same on either engine: the SQLite pass runs it

NOW = 1_800_000_000_000
DAY_MS = 86_400_000
CENT = Decimal("0.01")

PROPERTIES = settings(
    max_examples=200,
    deadline=None,
    # the same examples on every run (CI never flakes) and no .hypothesis/ directory
    derandomize=True,
    database=None,
)


def cents(low, high):
    """Decimals with two places in [low, high] (drawn as integers: much faster)."""
    return st.integers(int(low * 100), int(high * 100)).map(lambda c: Decimal(c).scaleb(-2))


money = cents(Decimal("0.01"), 5000)
signed = cents(-200, 200)
percents = cents(-99, 99)
marketplaces = st.sampled_from(["amazon", "ebay", "all"])


@st.composite
def rules(draw, types, index, scoped=True):
    type_ = draw(st.sampled_from(types))
    value_type = draw(st.sampled_from(["fixed", "percent"]))
    if type_ in ("floor", "ceiling") and value_type == "fixed":
        value = draw(money)
    else:
        value = draw(percents if value_type == "percent" else signed)
    applies_to = draw(st.sampled_from(["all", "category", "sku"])) if scoped else "all"
    return Rule(
        id=f"rule_{index:03d}",
        name=f"{type_} {index}",
        type=type_,
        value=value,
        value_type=value_type,
        applies_to=applies_to,
        category=draw(st.sampled_from(["mugs", "plates"])) if applies_to == "category" else None,
        skus=frozenset(draw(st.sets(st.sampled_from(["SKU-1", "SKU-2"]), min_size=1)))
        if applies_to == "sku"
        else frozenset(),
        marketplace=draw(marketplaces) if scoped else "all",
        priority=draw(st.integers(0, 3)) * 100,
        created_at=draw(st.integers(0, 5)),
        is_active=draw(st.booleans()) if scoped else True,
    )


@st.composite
def rule_lists(draw, types, max_size=6):
    count = draw(st.integers(0, max_size))
    return [draw(rules(types, index)) for index in range(count)]


@st.composite
def offers(draw):
    landed = draw(money)
    return Offer(
        competitor=draw(st.text("abcdefgh", min_size=1, max_size=3)),
        price=landed,
        shipping=Decimal("0.00"),
        landed_price=landed,
        is_buy_box_winner=draw(st.booleans()),
        condition=draw(st.sampled_from(["new", "new", "used"])),
        observed_at=NOW - draw(st.integers(-1000, 2 * DAY_MS)),
    )


@st.composite
def offer_lists(draw):
    found = draw(st.lists(offers(), max_size=6))
    # the latest offer per competitor, as the caller passes them
    return tuple({offer.competitor: offer for offer in found}.values())


@st.composite
def inputs(draw):
    return PriceInput(
        sku="SKU-1",
        marketplace="amazon",
        category=draw(st.sampled_from(["mugs", None])),
        current_price=draw(cents(0, 5000)),
        cost_price=draw(st.none() | money),
        offers=draw(offer_lists()),
        now=NOW,
    )


TARGETS = ["competitor_match", "buy_box_target", "margin_target"]
ALL_TYPES = [*TARGETS, "floor", "ceiling"]


def _bound_value(rule, inp):
    if rule.value_type == "percent":
        return inp.cost_price * (1 + rule.value / 100)
    return rule.value


@st.composite
def single_bound_cases(draw, kind):
    """Input, rules with exactly one matching, computable bound of ``kind``, and that rule."""
    inp = draw(inputs())
    others = [r for r in draw(rule_lists(TARGETS + ["floor", "ceiling"])) if r.type != kind]
    bound = draw(rules([kind], 900, scoped=False))
    if bound.value_type == "percent" and inp.cost_price is None:
        bound = Rule(**{**bound.__dict__, "value_type": "fixed", "value": draw(money)})
    return inp, [*others, bound], bound


@PROPERTIES
@given(single_bound_cases("floor"))
def test_never_below_the_floor(case):
    inp, rule_list, floor = case
    result = compute_price(inp, rule_list)
    assert result.recommended_price >= _bound_value(floor, inp)
    assert result.recommended_price >= CENT


def _floor_won(result, inp, rule_list):
    """True when a floor decided the price and the price is that floor (rounded up)."""
    floors = [r for r in rule_list if r.type == "floor" and r.id in result.rule_ids]
    return bool(floors) and result.recommended_price == _bound_value(floors[0], inp).quantize(
        CENT, rounding=ROUND_CEILING
    )


@PROPERTIES
@given(single_bound_cases("ceiling"))
def test_never_above_the_ceiling_unless_the_floor_wins(case):
    inp, rule_list, ceiling = case
    result = compute_price(inp, rule_list)
    if result.recommended_price > _bound_value(ceiling, inp):
        # a price is never below one cent, even under a ceiling of less
        assert _floor_won(result, inp, rule_list) or result.recommended_price == CENT


@PROPERTIES
@given(inputs(), rule_lists(TARGETS + ["floor"]))
def test_without_a_ceiling_one_run_rises_at_most_fifty_percent_unless_the_floor_wins(inp, rls):
    result = compute_price(inp, rls)
    if inp.current_price > 0 and result.recommended_price > inp.current_price * Decimal("1.5"):
        assert _floor_won(result, inp, rls) or result.recommended_price == CENT


@PROPERTIES
@given(inputs(), rule_lists(ALL_TYPES))
def test_every_score_is_in_the_unit_interval_and_money_has_cents(inp, rls):
    result = compute_price(inp, rls)
    assert 0.0 <= result.buy_box_win_probability <= 1.0
    assert 0.0 <= result.confidence <= 1.0
    assert result.recommended_price >= CENT
    assert result.recommended_price == result.recommended_price.quantize(CENT)
    assert result.delta == result.recommended_price - result.current_price
    assert result.delta_pct == result.delta_pct.quantize(CENT)
    if inp.cost_price is None:
        assert result.estimated_margin is None
    else:
        assert result.estimated_margin <= 1
    for rule_id in result.rule_ids:
        assert f"({rule_id})" in result.reasoning


@PROPERTIES
@given(offer_lists(), money, money)
def test_probability_never_rises_with_the_price(offer_list, a, b):
    fresh = [o for o in offer_list if o.condition == "new"]
    low, high = min(a, b), max(a, b)
    assert buy_box_probability(low, fresh) >= buy_box_probability(high, fresh)


@PROPERTIES
@given(offer_lists(), money)
def test_probability_is_at_least_half_at_or_below_the_buy_box(offer_list, price):
    fresh = [o for o in offer_list if o.condition == "new"]
    if fresh:
        winners = [o for o in fresh if o.is_buy_box_winner]
        reference = max(winners, key=lambda o: o.observed_at) if winners else None
        buy_box = reference.landed_price if reference else min(o.landed_price for o in fresh)
        if price <= buy_box:
            assert buy_box_probability(price, fresh) >= 0.5


@PROPERTIES
@given(inputs(), signed, signed)
def test_probability_never_rises_as_the_recommended_price_rises(inp, a, b):
    def priced(value):
        rule = Rule("rule_m", "m", "margin_target", value, "fixed", "all", None, frozenset(),
                    "all", 100, 0)  # fmt: skip
        return compute_price(inp, [rule])

    if inp.cost_price is None:
        return
    low, high = priced(min(a, b)), priced(max(a, b))
    assert low.recommended_price <= high.recommended_price
    assert low.buy_box_win_probability >= high.buy_box_win_probability


@PROPERTIES
@given(inputs(), rule_lists(ALL_TYPES), st.integers(0, 1000))
def test_deterministic_whatever_the_order_of_rules_and_offers(inp, rls, seed):
    first = compute_price(inp, rls)
    assert compute_price(inp, rls) == first
    shuffler = random.Random(seed)
    shuffled_rules, shuffled_offers = list(rls), list(inp.offers)
    shuffler.shuffle(shuffled_rules)
    shuffler.shuffle(shuffled_offers)
    other = PriceInput(**{**inp.__dict__, "offers": tuple(shuffled_offers)})
    assert compute_price(other, shuffled_rules) == first
    assert compute_price(other, RuleSet(shuffled_rules)) == first
