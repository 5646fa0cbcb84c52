"""Buy-box win probability and confidence of a recommendation (DESIGN 6, step 4).

Pure functions of the fresh offers; the model and every penalty are described in
``docs/decisions.md`` ("Pricing engine: buy-box probability and confidence").
"""

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from decimal import Decimal

from .types import Offer

CENT = Decimal("0.01")

# With no fresh offer there is no evidence either way: a neutral value.
NO_OFFERS_PROBABILITY = 0.5
# The logistic slope per unit of relative gap: 10, plus 5 per competitor (counted up to 10),
# so a crowded listing loses the buy box faster as the price rises above W.
BASE_STEEPNESS = 10.0
STEEPNESS_PER_COMPETITOR = 5.0
MAX_COUNTED_COMPETITORS = 10
# exp() overflows past ~709; +-60 already rounds the probability to 0 or 1 at 4 places.
MAX_EXPONENT = 60.0

MISSING_COST_FACTOR = 0.8
# Evidence grows with the number of competitors observed: one offer is a thin market.
OFFER_COUNT_FACTORS = {0: 0.5, 1: 0.7, 2: 0.85, 3: 0.92, 4: 0.97}  # 5 or more: 1.0
FULL_EVIDENCE_OFFERS = 5
MAX_AGE_PENALTY = 0.5  # offers at the age limit on average: x 0.5
# Offers that disagree leave the market price uncertain: x (1 - their coefficient of
# variation), at most MAX_DISPERSION_PENALTY off.
MAX_DISPERSION_PENALTY = 0.3
NOTICED_DISPERSION = 0.02  # spreads below 2 % of the mean are not worth a word
PASSED_OVER_FACTOR = 0.85  # per rule passed over, counted up to 3
MAX_COUNTED_PASSED_OVER = 3
CAP_FACTOR = 0.7


def buy_box_reference(offers: Sequence[Offer]) -> tuple[Decimal, Decimal, bool]:
    """(L, W, has_winner): the lowest landed price, and the buy-box winner's, else L."""
    lowest = min(offer.landed_price for offer in offers)
    winners = [offer for offer in offers if offer.is_buy_box_winner]
    if not winners:
        return lowest, lowest, False
    # Two winners should not happen; the latest observation is the current one.
    winner = min(winners, key=lambda o: (-o.observed_at, o.landed_price, o.competitor))
    return lowest, winner.landed_price, True


def buy_box_probability(price: Decimal, offers: Sequence[Offer]) -> float:
    """Chance that ``price`` wins the buy box against ``offers`` (the fresh new ones).

    Logistic in the relative gap g = (R - W) / W: p = 1 / (1 + exp(k g - b)), with
    b = ln(1 + 2 / n) so that p(W) = 0.5 + 0.5 / (n + 1) >= 0.5 and k = 10 + 5 min(n, 10).
    Non-increasing in ``price``; a neutral 0.5 without offers.
    """
    count = len(offers)
    if count == 0:
        return NO_OFFERS_PROBABILITY
    _, reference, _ = buy_box_reference(offers)
    reference = max(reference, CENT)
    gap = float((price - reference) / reference)
    steepness = BASE_STEEPNESS + STEEPNESS_PER_COMPETITOR * min(count, MAX_COUNTED_COMPETITORS)
    bias = math.log1p(2.0 / count)
    exponent = min(max(steepness * gap - bias, -MAX_EXPONENT), MAX_EXPONENT)
    return round(1.0 / (1.0 + math.exp(exponent)), 4)


@dataclass(frozen=True)
class Confidence:
    """A recommendation's confidence in [0, 1] and what lowered it (for the reasoning)."""

    value: float
    lowered_by: tuple  # of str, in the order applied

    def explain(self) -> str:
        if not self.lowered_by:
            return (
                f"Confidence {self.value}: fresh offers from {FULL_EVIDENCE_OFFERS} or more "
                "competitors."
            )
        return f"Confidence {self.value}, lowered by: {'; '.join(self.lowered_by)}."


def dispersion(landed_prices: Iterable[Decimal]) -> float:
    """The coefficient of variation (population) of the offers' landed prices; 0 below 2."""
    values = [float(p) for p in landed_prices]
    if len(values) < 2:
        return 0.0
    mean = sum(values) / len(values)
    if mean <= 0:
        return 0.0
    variance = sum((v - mean) ** 2 for v in values) / len(values)
    return math.sqrt(variance) / mean


def confidence_score(
    *,
    has_cost: bool,
    offer_count: int,
    age_fractions: Sequence[float],
    passed_over: int,
    capped: bool,
    spread: float = 0.0,
    max_age_hours: float = 24,
) -> Confidence:
    """How far to trust a recommendation: 1.0 times a factor per missing or weak datum.

    ``age_fractions`` are the fresh offers' ages as fractions of the age limit
    (``max_age_hours``); ``spread`` the offers' coefficient of variation (``dispersion``).
    """
    score, lowered = 1.0, []
    if not has_cost:
        score *= MISSING_COST_FACTOR
        lowered.append("no cost price")
    count_factor = OFFER_COUNT_FACTORS.get(offer_count, 1.0)
    if count_factor < 1.0:
        score *= count_factor
        lowered.append(
            "no fresh competitor offer"
            if offer_count == 0
            else f"only {offer_count} competitor offer{'' if offer_count == 1 else 's'}"
        )
    if age_fractions:
        mean_age = sum(min(max(f, 0.0), 1.0) for f in age_fractions) / len(age_fractions)
        score *= 1.0 - MAX_AGE_PENALTY * mean_age
        if mean_age >= 0.05:
            lowered.append(f"offers {mean_age * max_age_hours:.0f} h old on average")
    if spread > 0:
        score *= 1.0 - min(spread, MAX_DISPERSION_PENALTY)
        if spread >= NOTICED_DISPERSION:
            lowered.append(f"offers disagree (spread {spread:.0%} of their mean)")
    if passed_over:
        score *= PASSED_OVER_FACTOR ** min(passed_over, MAX_COUNTED_PASSED_OVER)
        lowered.append(f"{passed_over} rule{'' if passed_over == 1 else 's'} passed over")
    if capped:
        score *= CAP_FACTOR
        lowered.append("the 50 % rise cap decided the price")
    return Confidence(round(min(max(score, 0.0), 1.0), 4), tuple(lowered))
