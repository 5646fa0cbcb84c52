"""Buy-box win probability and confidence of a recommendation (DESIGN 6, step 4).

Pure functions of the fresh offers; the model and every penalty are described in
``docs/decisions.md`` ("Pricing engine: buy-box probability and confidence").
"""

import math
from decimal import Decimal

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
OFFER_COUNT_FACTORS = {0: 0.5, 1: 0.75, 2: 0.9}  # 3 or more offers: 1.0
MAX_AGE_PENALTY = 0.4  # offers at the age limit on average: x 0.6
PASSED_OVER_FACTOR = 0.85  # per rule passed over, counted up to 3
MAX_COUNTED_PASSED_OVER = 3
CAP_FACTOR = 0.7


def buy_box_reference(offers):
    """(L, W, has_winner): the lowest landed price, and the buy-box winner's, else L."""
    lowest = min(offer.landed_price for offer in offers)
    winners = [offer for offer in offers if offer.is_buy_box_winner]
    if not winners:
        return lowest, lowest, False
    # Two winners should not happen; the latest observation is the current one.
    winner = min(winners, key=lambda o: (-o.observed_at, o.landed_price, o.competitor))
    return lowest, winner.landed_price, True


def buy_box_probability(price, offers):
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


def confidence_score(*, has_cost, offer_count, age_fractions, passed_over, capped):
    """How far to trust a recommendation, in [0, 1]: 1.0 less a factor per missing datum.

    ``age_fractions`` are the fresh offers' ages as fractions of the age limit.
    """
    score = 1.0
    if not has_cost:
        score *= MISSING_COST_FACTOR
    score *= OFFER_COUNT_FACTORS.get(offer_count, 1.0)
    if age_fractions:
        mean_age = sum(min(max(f, 0.0), 1.0) for f in age_fractions) / len(age_fractions)
        score *= 1.0 - MAX_AGE_PENALTY * mean_age
    score *= PASSED_OVER_FACTOR ** min(passed_over, MAX_COUNTED_PASSED_OVER)
    if capped:
        score *= CAP_FACTOR
    return round(min(max(score, 0.0), 1.0), 4)
