"""Unit tests of the pure price computation (DESIGN 6, steps 1-4)."""

from dataclasses import replace
from decimal import Decimal as D

import pytest

from commerce_api.pricing.engine import (
    Offer,
    PriceInput,
    Rule,
    find_conflict,
    matching_rules,
)

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
