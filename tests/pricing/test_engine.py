"""Unit tests of the pure price computation (DESIGN 6, steps 1-4)."""

from dataclasses import replace
from decimal import Decimal as D

import pytest

from commerce_api.pricing.engine import RuleSet, compute_price, find_conflict, matching_rules
from commerce_api.pricing.probability import buy_box_probability
from commerce_api.pricing.types import Offer, PriceInput, Rule

pytestmark = pytest.mark.engine_free  # the same on either engine: the SQLite pass runs it

NOW = 1_800_000_000_000
HOUR_MS = 3_600_000


def rule(id="rule_1", type="floor", value="10", value_type="fixed", applies_to="all", **kw):
    return Rule(
        id=id,
        name=kw.pop("name", f"{type} {id}"),
        type=type,
        value=D(str(value)),
        value_type=value_type,
        applies_to=applies_to,
        category=kw.pop("category", None),
        skus=frozenset(kw.pop("skus", ())),
        marketplace=kw.pop("marketplace", "all"),
        priority=kw.pop("priority", 100),
        created_at=kw.pop("created_at", 1_000),
        is_active=kw.pop("is_active", True),
    )


def offer(landed, competitor="acme", winner=False, condition="new", age_ms=HOUR_MS):
    landed = D(str(landed))
    return Offer(
        competitor=competitor,
        price=landed,
        shipping=D("0.00"),
        landed_price=landed,
        is_buy_box_winner=winner,
        condition=condition,
        observed_at=NOW - age_ms,
    )


def price_input(current="20.00", cost="10.00", offers=(), sku="SKU-1", **kw):
    return PriceInput(
        sku=sku,
        marketplace=kw.pop("marketplace", "amazon"),
        category=kw.pop("category", "mugs"),
        current_price=D(current),
        cost_price=None if cost is None else D(cost),
        offers=tuple(offers),
        now=NOW,
        **kw,
    )


THREE_OFFERS = (offer("18.00", "a"), offer("19.00", "b", winner=True), offer("21.00", "c"))


# --- matching_rules ----------------------------------------------------------------------


def test_matching_rules_scope_marketplace_and_activity():
    rules = [
        rule("rule_all"),
        rule("rule_cat", applies_to="category", category="mugs"),
        rule("rule_othercat", applies_to="category", category="plates"),
        rule("rule_sku", applies_to="sku", skus={"SKU-1", "SKU-2"}),
        rule("rule_othersku", applies_to="sku", skus={"SKU-9"}),
        rule("rule_amazon", marketplace="amazon"),
        rule("rule_ebay", marketplace="ebay"),
        rule("rule_off", is_active=False),
    ]
    found = matching_rules(rules, sku="SKU-1", category="mugs", marketplace="amazon")
    assert [r.id for r in found] == ["rule_all", "rule_cat", "rule_sku", "rule_amazon"]


def test_matching_rules_product_without_category_matches_no_category_rule():
    rules = [rule("rule_cat", applies_to="category", category="mugs"), rule("rule_all")]
    found = matching_rules(rules, sku="SKU-1", category=None, marketplace="ebay")
    assert [r.id for r in found] == ["rule_all"]


# --- find_conflict ---------------------------------------------------------------------


def test_conflict_same_type_priority_and_overlapping_scope():
    existing = [rule("rule_old", applies_to="category", category="mugs")]
    candidate = rule("rule_new", applies_to="all", created_at=5_000)
    assert find_conflict(candidate, existing).id == "rule_old"


@pytest.mark.parametrize(
    "other",
    [
        rule("rule_x", type="ceiling"),  # another type
        rule("rule_x", priority=101),  # another priority
        rule("rule_x", is_active=False),  # inactive
        rule("rule_x", marketplace="ebay"),  # another marketplace
        rule("rule_x", applies_to="category", category="plates"),  # another category
        rule("rule_x", applies_to="sku", skus={"SKU-3"}),  # disjoint SKUs
        rule("rule_x", applies_to="category", category="mugs"),  # category vs SKU rule
    ],
)
def test_no_conflict(other):
    candidate = rule("rule_new", applies_to="sku", skus={"SKU-1", "SKU-2"}, marketplace="amazon")
    assert find_conflict(candidate, [other]) is None


@pytest.mark.parametrize(
    "other",
    [
        rule("rule_x", marketplace="all"),
        rule("rule_x", marketplace="amazon"),
        rule("rule_x", applies_to="sku", skus={"SKU-2", "SKU-7"}),
        rule("rule_x", applies_to="sku", skus={"SKU-2"}, marketplace="amazon"),
    ],
)
def test_conflict_cases(other):
    candidate = rule("rule_new", applies_to="sku", skus={"SKU-1", "SKU-2"}, marketplace="amazon")
    assert find_conflict(candidate, [other]) == other


def test_conflict_either_marketplace_all_and_category_pairs():
    candidate = rule("rule_new", applies_to="category", category="mugs", marketplace="all")
    same_cat = rule("rule_a", applies_to="category", category="mugs", marketplace="ebay")
    assert find_conflict(candidate, [same_cat]) == same_cat


def test_conflict_ignores_the_candidates_own_id():
    stored = rule("rule_1", is_active=True)
    patched = replace(stored, value=D("12"))
    assert find_conflict(patched, [stored]) is None


def test_conflict_checks_an_inactive_candidate_as_if_active():
    # re-activation: the stored copy is inactive, the candidate comes in with is_active False
    candidate = rule("rule_1", is_active=False)
    assert find_conflict(candidate, [rule("rule_2", created_at=2_000)]).id == "rule_2"


def test_conflict_returns_the_oldest():
    newer = rule("rule_a", created_at=3_000)
    older = rule("rule_b", created_at=2_000)
    same_time = rule("rule_c", created_at=2_000)
    assert find_conflict(rule("rule_new"), [newer, same_time, older]).id == "rule_b"


# --- compute_price: targets ------------------------------------------------------------


def test_no_rule_keeps_the_current_price():
    result = compute_price(price_input(offers=THREE_OFFERS), [])
    assert result.recommended_price == D("20.00")
    assert result.delta == D("0.00") and result.delta_pct == D("0.00")
    assert result.rule_ids == () and result.reference_price is None
    assert "No target rule" in result.reasoning
    assert result.offers_used == 3


@pytest.mark.parametrize(
    "value, value_type, expected",
    [("-0.50", "fixed", "17.50"), ("1", "fixed", "19.00"), ("-5", "percent", "17.10")],
)
def test_competitor_match_on_the_lowest_landed_price(value, value_type, expected):
    r = rule("rule_cm", "competitor_match", value, value_type, name="Beat the lowest")
    result = compute_price(price_input(offers=THREE_OFFERS), [r])
    assert result.recommended_price == D(expected)
    assert result.reference_price == D("18.00")
    assert result.rule_ids == ("rule_cm",)
    assert "'Beat the lowest' (rule_cm)" in result.reasoning
    assert "L = 18.00" in result.reasoning


@pytest.mark.parametrize(
    "value, value_type, expected",
    [("0", "fixed", "19.00"), ("-0.01", "fixed", "18.99"), ("-1", "percent", "18.81")],
)
def test_buy_box_target_on_the_winner(value, value_type, expected):
    r = rule("rule_bb", "buy_box_target", value, value_type)
    result = compute_price(price_input(offers=THREE_OFFERS), [r])
    assert result.recommended_price == D(expected)
    assert result.reference_price == D("19.00")
    assert "W = 19.00" in result.reasoning


def test_buy_box_target_without_a_winner_uses_the_lowest():
    offers = (offer("18.00", "a"), offer("21.00", "c"))
    result = compute_price(price_input(offers=offers), [rule("rule_bb", "buy_box_target", "0")])
    assert result.recommended_price == D("18.00")
    assert result.reference_price == D("18.00")
    assert "no buy-box winner" in result.reasoning


@pytest.mark.parametrize(
    "value, value_type, expected",
    [("5", "fixed", "15.00"), ("20", "percent", "12.50"), ("33", "percent", "14.93")],
)
def test_margin_target(value, value_type, expected):
    result = compute_price(price_input(), [rule("rule_m", "margin_target", value, value_type)])
    assert result.recommended_price == D(expected)
    assert result.reference_price is None
    assert result.rule_ids == ("rule_m",)


def test_percent_margin_is_a_margin_on_the_price():
    result = compute_price(price_input(), [rule("rule_m", "margin_target", "20", "percent")])
    assert result.estimated_margin == D("0.2000")


def test_cents_are_rounded_half_up():
    # 10.10 x 1.05 = 10.605: half up gives 10.61 (banker's rounding would give 10.60)
    r = rule("rule_cm", "competitor_match", "5", "percent")
    result = compute_price(price_input(current="10.00", offers=(offer("10.10"),)), [r])
    assert result.recommended_price == D("10.61")


def test_price_is_at_least_one_cent():
    r = rule("rule_cm", "competitor_match", "-100", "fixed")
    result = compute_price(price_input(offers=THREE_OFFERS), [r])
    assert result.recommended_price == D("0.01")


def test_target_that_cannot_compute_is_passed_over():
    rules = [
        rule("rule_cm", "competitor_match", "-1", priority=300),
        rule("rule_bb", "buy_box_target", "0", priority=200),
        rule("rule_m", "margin_target", "5", priority=100),
    ]
    result = compute_price(price_input(), rules)
    assert result.recommended_price == D("15.00")
    assert result.rule_ids == ("rule_m",)
    assert "(rule_cm) passed over: no fresh new competitor offers" in result.reasoning
    assert "(rule_bb) passed over" in result.reasoning
    alone = compute_price(price_input(), [rules[2]])
    assert result.confidence < alone.confidence


def test_margin_target_without_cost_is_passed_over():
    rules = [
        rule("rule_m", "margin_target", "5", priority=200),
        rule("rule_cm", "competitor_match", "0", priority=100),
    ]
    result = compute_price(price_input(cost=None, offers=THREE_OFFERS), rules)
    assert result.recommended_price == D("18.00")
    assert "(rule_m) passed over: no cost price" in result.reasoning
    assert result.estimated_margin is None


# --- compute_price: precedence ---------------------------------------------------------


def test_higher_priority_target_wins():
    rules = [
        rule("rule_lo", "margin_target", "5", priority=100),
        rule("rule_hi", "margin_target", "8", priority=101),
    ]
    assert compute_price(price_input(), rules).rule_ids == ("rule_hi",)


def test_priority_tie_narrower_scope_wins_then_older():
    everyone = rule("rule_all", "margin_target", "1", created_at=1)
    category = rule("rule_cat", "margin_target", "2", "fixed", "category", category="mugs")
    sku = rule("rule_sku", "margin_target", "3", "fixed", "sku", skus={"SKU-1"}, created_at=9)
    older = rule("rule_old", "margin_target", "4", created_at=0)
    assert compute_price(price_input(), [everyone, category, sku]).rule_ids == ("rule_sku",)
    assert compute_price(price_input(), [everyone, category]).rule_ids == ("rule_cat",)
    assert compute_price(price_input(), [everyone, older]).rule_ids == ("rule_old",)
    assert compute_price(price_input(), [everyone, older]).recommended_price == D("14.00")


def test_the_first_bound_in_precedence_decides():
    rules = [
        rule("rule_f1", "floor", "25", priority=100),
        rule("rule_f2", "floor", "22", priority=200),
        rule("rule_c1", "ceiling", "5", priority=100, applies_to="sku", skus={"SKU-1"}),
        rule("rule_c2", "ceiling", "6", priority=100, created_at=0),
    ]
    # T = P = 20; the priority-200 floor (22) wins over the priority-100 floor
    result = compute_price(price_input(), rules[:2])
    assert result.recommended_price == D("22.00")
    assert result.rule_ids == ("rule_f2",)
    # at equal priority the SKU ceiling beats the older all-ceiling
    result = compute_price(price_input(), rules[2:])
    assert result.recommended_price == D("5.00")
    assert result.rule_ids == ("rule_c1",)


def test_rules_of_other_marketplaces_and_inactive_rules_do_not_apply():
    rules = [
        rule("rule_ebay", "margin_target", "9", marketplace="ebay", priority=900),
        rule("rule_off", "margin_target", "8", priority=800, is_active=False),
        rule("rule_amz", "margin_target", "5", marketplace="amazon"),
    ]
    result = compute_price(price_input(), rules)
    assert result.rule_ids == ("rule_amz",)
    assert compute_price(price_input(), RuleSet(rules)) == result
    other = compute_price(price_input(marketplace="ebay"), RuleSet(rules))
    assert other.rule_ids == ("rule_ebay",)


# --- compute_price: bounds -------------------------------------------------------------


@pytest.mark.parametrize(
    "bound, target_value, expected",
    [
        (rule("rule_f", "floor", "16"), "2", "16.00"),
        (rule("rule_f", "floor", "25", "percent"), "2", "12.50"),  # 10 x 1.25
        (rule("rule_c", "ceiling", "13"), "8", "13.00"),
        (rule("rule_c", "ceiling", "10", "percent"), "8", "11.00"),  # 10 x 1.10
    ],
)
def test_floor_and_ceiling_fixed_and_percent_of_cost(bound, target_value, expected):
    target = rule("rule_m", "margin_target", target_value)
    result = compute_price(price_input(), [target, bound])
    assert result.recommended_price == D(expected)
    assert result.rule_ids == ("rule_m", bound.id)
    assert f"({bound.id})" in result.reasoning


def test_a_bound_that_does_not_bind_is_not_a_deciding_rule():
    rules = [rule("rule_m", "margin_target", "5"), rule("rule_f", "floor", "1")]
    assert compute_price(price_input(), rules).rule_ids == ("rule_m",)


def test_bounds_round_toward_the_inside():
    # floor 10.01 x 1.033 = 10.34033 rounds up; ceiling 10.01 x 1.036 = 10.37036 rounds down
    target = rule("rule_m", "margin_target", "0")
    floor = rule("rule_f", "floor", "3.3", "percent")
    ceiling = rule("rule_c", "ceiling", "3.6", "percent")
    low = compute_price(price_input(cost="10.01"), [target, floor])
    assert low.recommended_price == D("10.35")
    high = compute_price(price_input(cost="10.01"), [rule("rule_m", "margin_target", "5"), ceiling])
    assert high.recommended_price == D("10.37")


def test_floor_beats_ceiling_when_they_cross():
    rules = [
        rule("rule_m", "margin_target", "10"),  # T = 20
        rule("rule_f", "floor", "15"),
        rule("rule_c", "ceiling", "12"),
    ]
    result = compute_price(price_input(), rules)
    assert result.recommended_price == D("15.00")
    assert result.rule_ids == ("rule_m", "rule_f", "rule_c")
    assert "the floor wins" in result.reasoning


def test_percent_bound_without_cost_is_passed_over_for_the_next():
    rules = [
        rule("rule_cm", "competitor_match", "-5"),  # T = 13.00
        rule("rule_fp", "floor", "50", "percent", priority=200),
        rule("rule_ff", "floor", "14", priority=100),
    ]
    result = compute_price(price_input(cost=None, offers=(offer("18.00"),)), rules)
    assert result.recommended_price == D("14.00")
    assert result.rule_ids == ("rule_cm", "rule_ff")
    assert "(rule_fp) passed over: a percent bound needs the cost price" in result.reasoning


def test_fifty_percent_rise_cap_without_ceiling():
    rules = [rule("rule_m", "margin_target", "20")]  # T = 30 against P = 10
    result = compute_price(price_input(current="10.00"), rules)
    assert result.recommended_price == D("15.00")
    assert "50 % rise cap" in result.reasoning
    assert result.delta_pct == D("50.00")
    uncapped = compute_price(price_input(current="10.00"), [rule("rule_m", "margin_target", "4")])
    assert result.confidence < uncapped.confidence
    assert "50 %" not in uncapped.reasoning


def test_fifty_percent_cap_rounds_down():
    result = compute_price(price_input(current="0.03"), [rule("rule_m", "margin_target", "1")])
    assert result.recommended_price == D("0.04")  # 1.5 x 0.03 = 0.045, never 0.05


def test_a_ceiling_replaces_the_cap():
    rules = [rule("rule_m", "margin_target", "20"), rule("rule_c", "ceiling", "40")]
    result = compute_price(price_input(current="10.00"), rules)
    assert result.recommended_price == D("30.00")
    assert "50 %" not in result.reasoning


def test_a_floor_above_the_cap_wins():
    rules = [rule("rule_m", "margin_target", "20"), rule("rule_f", "floor", "25")]
    result = compute_price(price_input(current="10.00"), rules)
    assert result.recommended_price == D("25.00")
    assert "50 % rise cap" in result.reasoning
    capped = compute_price(price_input(current="10.00"), rules[:1])
    assert result.confidence > capped.confidence  # the floor decided, not the cap


def test_zero_current_price():
    result = compute_price(price_input(current="0"), [rule("rule_m", "margin_target", "5")])
    assert result.recommended_price == D("15.00")
    assert result.delta == D("15.00") and result.delta_pct == D("0.00")
    assert "no 50 % rise cap" in result.reasoning
    assert "delta_pct is undefined" in result.reasoning


# --- compute_price: offers -------------------------------------------------------------


def test_stale_and_used_offers_are_ignored():
    offers = (
        offer("12.00", "old", age_ms=24 * HOUR_MS + 1),
        offer("13.00", "used", condition="used"),
        offer("18.00", "fresh", age_ms=24 * HOUR_MS),  # exactly at the limit: still fresh
    )
    result = compute_price(price_input(offers=offers), [rule("rule_cm", "competitor_match", "0")])
    assert result.recommended_price == D("18.00")
    assert result.offers_used == 1


def test_the_age_limit_is_the_inputs():
    offers = (offer("12.00", "a", age_ms=2 * HOUR_MS), offer("18.00", "b", age_ms=HOUR_MS // 2))
    inp = price_input(offers=offers, max_offer_age_seconds=3600)
    result = compute_price(inp, [rule("rule_cm", "competitor_match", "0")])
    assert result.recommended_price == D("18.00")


def test_only_stale_offers_pass_a_competitor_rule_over():
    offers = (offer("12.00", age_ms=48 * HOUR_MS),)
    result = compute_price(price_input(offers=offers), [rule("rule_cm", "competitor_match", "0")])
    assert result.recommended_price == D("20.00")
    assert result.offers_used == 0
    assert "passed over" in result.reasoning


def test_a_stale_winner_is_not_the_buy_box():
    offers = (offer("15.00", "a", winner=True, age_ms=30 * HOUR_MS), offer("18.00", "b"))
    result = compute_price(price_input(offers=offers), [rule("rule_bb", "buy_box_target", "0")])
    assert result.recommended_price == D("18.00")


# --- margin, delta, probability, confidence --------------------------------------------


def test_delta_margin_and_reference():
    r = rule("rule_cm", "competitor_match", "-0.50")
    result = compute_price(price_input(offers=THREE_OFFERS), [r])
    assert result.current_price == D("20.00")
    assert result.delta == D("-2.50")
    assert result.delta_pct == D("-12.50")
    assert result.estimated_margin == D("0.4286")  # (17.50 - 10) / 17.50
    assert compute_price(price_input(cost=None, offers=THREE_OFFERS), [r]).estimated_margin is None


def test_negative_margin_when_the_price_is_below_cost():
    result = compute_price(price_input(cost="20.00"), [rule("rule_m", "margin_target", "-10")])
    assert result.recommended_price == D("10.00")
    assert result.estimated_margin == D("-1.0000")


def test_probability_at_or_below_the_buy_box_is_at_least_half():
    assert buy_box_probability(D("19.00"), THREE_OFFERS) >= 0.5
    assert buy_box_probability(D("15.00"), THREE_OFFERS) > buy_box_probability(
        D("19.00"), THREE_OFFERS
    )
    assert buy_box_probability(D("25.00"), THREE_OFFERS) < 0.5
    assert buy_box_probability(D("1000000"), THREE_OFFERS) == 0.0
    assert buy_box_probability(D("25.00"), ()) == 0.5


def test_more_competitors_lose_the_buy_box_faster():
    one = (offer("19.00", winner=True),)
    many = one + tuple(offer("20.00", f"c{i}") for i in range(6))
    assert buy_box_probability(D("21.00"), many) < buy_box_probability(D("21.00"), one)


def test_result_probability_is_the_models():
    r = rule("rule_bb", "buy_box_target", "0")
    result = compute_price(price_input(offers=THREE_OFFERS), [r])
    offers = [o for o in THREE_OFFERS]
    assert result.buy_box_win_probability == buy_box_probability(D("19.00"), offers)


def test_confidence_falls_with_missing_or_stale_data():
    r = [rule("rule_cm", "competitor_match", "0")]
    full = compute_price(price_input(offers=THREE_OFFERS), r).confidence
    no_cost = compute_price(price_input(cost=None, offers=THREE_OFFERS), r).confidence
    one_offer = compute_price(price_input(offers=THREE_OFFERS[:1]), r).confidence
    no_offer = compute_price(price_input(), r).confidence
    aged = tuple(replace(o, observed_at=NOW - 23 * HOUR_MS) for o in THREE_OFFERS)
    old = compute_price(price_input(offers=aged), r).confidence
    assert 0 <= no_offer < one_offer < full <= 1
    assert no_cost < full and old < full
