"""The price computation of DESIGN section 6: data in, price and reasoning out.

Pure and framework-free: no database, no Flask, no clock, no randomness. The same input
always gives the same output. Money is ``Decimal`` throughout, cents rounded half up.
"""

from collections.abc import Iterable
from dataclasses import dataclass
from decimal import ROUND_CEILING, ROUND_FLOOR, ROUND_HALF_UP, Decimal

from .probability import buy_box_probability, buy_box_reference, confidence_score, dispersion
from .types import PriceInput, PriceResult, Rule

TARGET_TYPES = ("competitor_match", "buy_box_target", "margin_target")
BOUND_TYPES = ("floor", "ceiling")
ALL = "all"

CENT = Decimal("0.01")
BASIS = Decimal("0.0001")
HUNDRED = Decimal(100)
ZERO = Decimal(0)
MIN_PRICE = CENT
# Without a ceiling one run never raises a price by more than 50 %.
MAX_RISE = Decimal("1.5")

# Narrower scope wins a priority tie: sku, then category, then all.
_SCOPE_RANK = {"sku": 0, "category": 1, "all": 2}


# --- Matching and conflicts ------------------------------------------------------------


def _in_scope(rule, sku, category):
    if rule.applies_to == ALL:
        return True
    if rule.applies_to == "category":
        return category is not None and rule.category == category
    if rule.applies_to == "sku":
        return sku in rule.skus
    return False


def precedence(rule: Rule) -> tuple:
    """Sort key: higher priority first, then the narrower scope, then the older rule."""
    return (-rule.priority, _SCOPE_RANK.get(rule.applies_to, 3), rule.created_at, rule.id)


def matching_rules(
    rules: Iterable[Rule], *, sku: str, category: str | None, marketplace: str
) -> list[Rule]:
    """Active rules whose marketplace is this one or "all" and whose scope holds the SKU."""
    return [
        rule
        for rule in rules
        if rule.is_active
        and (rule.marketplace == marketplace or rule.marketplace == ALL)
        and _in_scope(rule, sku, category)
    ]


def _scopes_overlap(a, b):
    if a.applies_to == ALL or b.applies_to == ALL:
        return True
    if a.applies_to == "category" and b.applies_to == "category":
        return a.category is not None and a.category == b.category
    if a.applies_to == "sku" and b.applies_to == "sku":
        return not a.skus.isdisjoint(b.skus)
    # A category rule and a SKU rule: DESIGN names only "same category, a shared SKU, or
    # either is all", and a rule does not know which SKUs its category holds; no conflict
    # (the SKU rule is narrower and wins the tie in compute_price).
    return False


def rules_conflict(a: Rule, b: Rule) -> bool:
    """True when two rules of the same type and priority overlap (both taken as active)."""
    return (
        a.id != b.id
        and a.type == b.type
        and a.priority == b.priority
        and (a.marketplace == b.marketplace or a.marketplace == ALL or b.marketplace == ALL)
        and _scopes_overlap(a, b)
    )


def find_conflict(candidate: Rule, existing: Iterable[Rule]) -> Rule | None:
    """The oldest active rule conflicting with ``candidate`` (taken as active), else None."""
    conflicts = [rule for rule in existing if rule.is_active and rules_conflict(candidate, rule)]
    if not conflicts:
        return None
    return min(conflicts, key=lambda rule: (rule.created_at, rule.id))


# --- Rule sets -------------------------------------------------------------------------


class RuleSet:
    """Rules sorted once by precedence and grouped by marketplace, for many computations.

    ``compute_price`` accepts a plain iterable of rules too; a RuleSet only saves the
    sorting and the marketplace filter on every SKU of a large run.
    """

    __slots__ = ("_by_marketplace", "_general")

    def __init__(self, rules):
        ordered = sorted((rule for rule in rules if rule.is_active), key=precedence)
        self._general = tuple(rule for rule in ordered if rule.marketplace == ALL)
        self._by_marketplace = {}
        for rule in ordered:
            if rule.marketplace != ALL:
                self._by_marketplace.setdefault(rule.marketplace, []).append(rule)
        for marketplace, own in self._by_marketplace.items():
            merged = sorted(own + list(self._general), key=precedence)
            self._by_marketplace[marketplace] = tuple(merged)

    def for_marketplace(self, marketplace: str) -> tuple[Rule, ...]:
        """Active rules of this marketplace and of "all", in precedence order."""
        return self._by_marketplace.get(marketplace, self._general)


def _ordered_matches(rules, inp):
    """The matching rules in precedence order."""
    sku, category = inp.sku, inp.category
    if not isinstance(rules, RuleSet):
        found = matching_rules(rules, sku=sku, category=category, marketplace=inp.marketplace)
        return sorted(found, key=precedence)
    ordered = rules.for_marketplace(inp.marketplace)
    return [rule for rule in ordered if _in_scope(rule, sku, category)]


# --- Computation -----------------------------------------------------------------------


def _money(value):
    return value.quantize(CENT, rounding=ROUND_HALF_UP)


def _decimal(value):
    return value if type(value) is Decimal else Decimal(str(value))


def _label(rule):
    return f"{rule.type} '{rule.name}' ({rule.id})"


def _fresh_offers(inp):
    """Offers in "new" condition observed within the age limit, with their ages in ms."""
    limit_ms = inp.max_offer_age_seconds * 1000
    fresh = []
    for offer in inp.offers:
        age = max(inp.now - offer.observed_at, 0)
        if age <= limit_ms and (offer.condition or "").lower() == "new":
            fresh.append((offer, age))
    return fresh


def _target(rule, value, lowest, buy_box, has_winner, cost):
    """(T, reference, how) for a target rule, or (None, None, why-not) when it cannot compute."""
    percent = rule.value_type == "percent"
    if rule.type in ("competitor_match", "buy_box_target"):
        if lowest is None:
            return None, None, "no fresh new competitor offers"
        if rule.type == "competitor_match":
            base, name, what = lowest, "L", "the lowest competitor landed price"
        elif has_winner:
            base, name, what = buy_box, "W", "the buy-box winner's landed price"
        else:
            base, name, what = lowest, "L", "no buy-box winner, so the lowest landed price"
        sign, size = ("-", -value) if value < 0 else ("+", value)
        if percent:
            target, formula = base * (1 + value / HUNDRED), f"{name} x (1 {sign} {size}/100)"
        else:
            target, formula = base + value, f"{name} {sign} {size}"
        return target, base, f"{what} {name} = {base}, T = {formula}"
    if rule.type == "margin_target":
        if cost is None:
            return None, None, "no cost price"
        if not percent:
            sign, size = ("-", -value) if value < 0 else ("+", value)
            return cost + value, None, f"the cost C = {cost}, T = C {sign} {size}"
        if value >= HUNDRED:
            return None, None, "a percent margin of 100 or more"
        how = f"a {value} % margin on the price over the cost C = {cost}, T = C / (1 - {value}/100)"
        return cost / (1 - value / HUNDRED), None, how
    return None, None, f"unknown rule type {rule.type!r}"


def _bound(rule, value, cost):
    """The bound's value, or None with why-not when a percent bound has no cost."""
    if rule.value_type == "percent":
        if cost is None:
            return None, "a percent bound needs the cost price"
        return cost * (1 + value / HUNDRED), f": {value} % over the cost C = {cost}"
    return value, ""


@dataclass
class _Chosen:
    """What steps 1-2 chose: the target and the bounds, with the rules they came from."""

    target_rule: Rule | None = None
    target: Decimal | None = None
    reference: Decimal | None = None
    floor_rule: Rule | None = None
    floor: Decimal | None = None
    ceiling_rule: Rule | None = None
    ceiling: Decimal | None = None
    passed_over: int = 0


def _choose_rules(inp, rules, cost, lowest, buy_box, has_winner, notes):
    """Steps 1-2: the first target rule in precedence order that can compute, and the first
    floor and ceiling that can."""
    chosen = _Chosen()
    for rule in _ordered_matches(rules, inp):
        value = _decimal(rule.value)
        if rule.type in TARGET_TYPES:
            if chosen.target_rule is not None:
                continue
            computed, ref, why = _target(rule, value, lowest, buy_box, has_winner, cost)
            if computed is None:
                chosen.passed_over += 1
                notes.append(f"{_label(rule)} passed over: {why}.")
                continue
            chosen.target_rule, chosen.target, chosen.reference = rule, computed, ref
            notes.append(f"Target from {_label(rule)}: {why} = {_money(computed)}.")
        elif rule.type in BOUND_TYPES:
            if (chosen.floor_rule if rule.type == "floor" else chosen.ceiling_rule) is not None:
                continue
            bound, why = _bound(rule, value, cost)
            if bound is None:
                chosen.passed_over += 1
                notes.append(f"{_label(rule)} passed over: {why}.")
                continue
            if rule.type == "floor":
                # Rounded up to a cent so that R never falls below the floor.
                chosen.floor_rule = rule
                chosen.floor = bound.quantize(CENT, rounding=ROUND_CEILING)
                notes.append(f"Floor F = {chosen.floor} from {_label(rule)}{why}.")
            else:
                # Rounded down to a cent so that R never rises above the ceiling.
                chosen.ceiling_rule = rule
                chosen.ceiling = bound.quantize(CENT, rounding=ROUND_FLOOR)
                notes.append(f"Ceiling U = {chosen.ceiling} from {_label(rule)}{why}.")
    return chosen


def _bounded(target, current, chosen, notes):
    """Step 3: R = min(T, U), then max(R, F); the floor wins when they cross. Returns
    (price, capped by the 50 % rise, the floor decided, the ceiling decided)."""
    floor, ceiling = chosen.floor, chosen.ceiling
    price = target
    capped = floor_bound = ceiling_bound = False
    if ceiling is not None:
        if price > ceiling:
            price, ceiling_bound = ceiling, True
            notes.append(f"The ceiling limits the price to {ceiling}.")
    elif current > ZERO:
        cap = (current * MAX_RISE).quantize(CENT, rounding=ROUND_FLOOR)
        if price > cap:
            price, capped = cap, True
            notes.append(
                f"No ceiling applies: the 50 % rise cap limits T to {cap} (1.5 x P, P = {current})."
            )
    else:
        notes.append("The current price is 0.00: no 50 % rise cap applies.")
    if floor is not None and price < floor:
        price, floor_bound = floor, True
        if ceiling is not None and floor > ceiling:
            notes.append(f"The floor {floor} is above the ceiling {ceiling}: the floor wins.")
        else:
            notes.append(f"The floor raises the price to {floor}.")
    return price, capped, floor_bound, ceiling_bound


def compute_price(inp: PriceInput, rules: "Iterable[Rule] | RuleSet") -> PriceResult:
    """Recommend a price for one SKU on one marketplace (DESIGN 6, steps 1-4)."""
    current = _money(_decimal(inp.current_price))
    cost = None if inp.cost_price is None else _decimal(inp.cost_price)
    fresh = _fresh_offers(inp)
    offers = [offer for offer, _ in fresh]
    if offers:
        lowest, buy_box, has_winner = buy_box_reference(offers)
    else:
        lowest = buy_box = None
        has_winner = False

    notes = []
    chosen = _choose_rules(inp, rules, cost, lowest, buy_box, has_winner, notes)
    target = chosen.target
    if chosen.target_rule is None:
        target = current
        notes.append(f"No target rule applies: T = the current price P = {current}.")
    price, capped, floor_bound, ceiling_bound = _bounded(target, current, chosen, notes)
    recommended = max(_money(price), MIN_PRICE)
    rule_ids = _deciding_rule_ids(chosen, floor_bound, ceiling_bound)

    # Step 4: margin, delta, probability, confidence.
    delta = recommended - current
    delta_pct = _delta_pct(delta, current, notes)
    margin = None
    if cost is not None:
        margin = ((recommended - cost) / recommended).quantize(BASIS, rounding=ROUND_HALF_UP)
    confidence = confidence_score(
        has_cost=cost is not None,
        offer_count=len(offers),
        age_fractions=[age / (inp.max_offer_age_seconds * 1000 or 1) for _, age in fresh],
        passed_over=chosen.passed_over,
        # a floor above the cap decided the price, not the cap
        capped=capped and not floor_bound,
        spread=dispersion(offer.landed_price for offer in offers),
        max_age_hours=inp.max_offer_age_seconds / 3600,
    )
    notes.append(
        f"Recommended {recommended} against the current {current} ({len(offers)} fresh new "
        f"offer{'' if len(offers) == 1 else 's'}"
        + (f", L = {lowest}, W = {buy_box}" if offers else "")
        + ")."
    )
    notes.append(confidence.explain())
    return PriceResult(
        sku=inp.sku,
        marketplace=inp.marketplace,
        current_price=current,
        recommended_price=recommended,
        delta=delta,
        delta_pct=delta_pct,
        buy_box_win_probability=buy_box_probability(recommended, offers),
        estimated_margin=margin,
        confidence=confidence.value,
        reasoning=" ".join(notes),
        rule_ids=rule_ids,
        reference_price=chosen.reference,
        offers_used=len(offers),
    )


def _deciding_rule_ids(chosen, floor_bound, ceiling_bound):
    """The rules that decided: the target, and a bound only when it moved the price."""
    deciding = (
        (chosen.target_rule, True),
        (chosen.floor_rule, floor_bound),
        (chosen.ceiling_rule, ceiling_bound),
    )
    return tuple(rule.id for rule, decided in deciding if rule is not None and decided)


def _delta_pct(delta, current, notes):
    """The change in percent of the current price (0, with a note, for a price of 0)."""
    if current > ZERO:
        return _money(delta * HUNDRED / current)
    notes.append("delta_pct is undefined for a current price of 0.00 and shown as 0.")
    return Decimal("0.00")


# --- The smallest change worth recommending ---------------------------------------------


@dataclass(frozen=True)
class MinChange:
    """``COMMERCE_PRICING_MIN_CHANGE``: a percent of the current price (``"0.5%"``) or an
    absolute amount (``"0.05"``); a smaller change is not recommended."""

    amount: Decimal | None = None
    percent: Decimal | None = None

    @classmethod
    def parse(cls, text: str | None) -> "MinChange":
        raw = str(text if text is not None else "").strip()
        try:
            if raw.endswith("%"):
                value = Decimal(raw[:-1].strip())
                percent = True
            else:
                value = Decimal(raw)
                percent = False
        except ArithmeticError:
            value = None
        if value is None or not value.is_finite() or value < 0:
            raise ValueError(
                f"PRICING_MIN_CHANGE must be a percent such as 0.5% or an amount such as "
                f"0.05, not {text!r}"
            )
        return cls(percent=value) if percent else cls(amount=value)

    def allows(self, current: Decimal, recommended: Decimal) -> bool:
        """True when moving ``current`` to ``recommended`` is a change worth making."""
        change = abs(recommended - current)
        if not change:
            return False
        if self.amount is not None:
            return change >= self.amount
        if current <= ZERO:
            return True
        return change * HUNDRED >= self.percent * current
