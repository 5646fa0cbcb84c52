"""The sandbox marketplace's product reviews: deterministic, realistic, mixed sentiment.

Review ``n`` of a SKU on a marketplace is written from a random stream seeded by
(marketplace, SKU, n), so a catalogue always gets the same reviews (and its ids are the
connection's own). How well a SKU is liked is fixed per SKU: its share of positive reviews
is drawn from a hash of the SKU (0.3 to 0.9).

The marketplace's clock: the first ``fetch_reviews`` of a connection shows
``INITIAL_REVIEWS`` reviews per SKU, written over the past 60 days; every later fetch is a
tick that adds ``REVIEWS_PER_FETCH`` per SKU, up to ``MAX_REVIEWS``.
"""

import hashlib
import random
from collections.abc import Sequence
from typing import Any

from ..timeutil import format_ms
from .models import MarketplaceConnection

DAY_MS = 86_400_000
INITIAL_REVIEWS = 4
REVIEWS_PER_FETCH = 1
MAX_REVIEWS = 40

POSITIVE = {
    "quality": (
        "The {noun} feels sturdy and well made.",
        "Great quality for the price.",
        "Really solid build, no complaints.",
        "Still looks brand new after months of daily use.",
        "Not flimsy at all, it feels like it will last for years.",
    ),
    "shipping": (
        "Fast shipping, it arrived two days early.",
        "Arrived quickly and in perfect condition.",
        "Delivery was quick and the tracking was accurate.",
    ),
    "packaging": (
        "Nicely packaged, nothing was damaged.",
        "Came well packed in a sturdy box, perfect as a gift.",
    ),
    "description": (
        "Exactly as described.",
        "Looks just like the photos, the colour is lovely.",
    ),
    "value": ("Great value for money.", "Worth every penny."),
    "size_fit": ("The size is perfect.", "True to size and fits well on the shelf."),
    "service": (
        "The seller answered my question within an hour.",
        "Helpful customer service when I had a question.",
    ),
    "general": (
        "I love it!",
        "Would definitely buy again.",
        "Highly recommend this {noun}.",
        "Very happy with this purchase.",
    ),
}
NEGATIVE = {
    "quality": (
        "Feels flimsy and is made of cheap plastic.",
        "It stopped working after a week.",
        "Broke on the second day.",
        "Poor quality, the finish is already chipping.",
        "The {noun} fell apart after a few uses.",
    ),
    "shipping": (
        "Shipping was slow, it took almost three weeks.",
        "Arrived late and the tracking never updated.",
    ),
    "packaging": (
        "The box was crushed and the {noun} arrived damaged.",
        "Badly packed, it was just thrown in a bag.",
    ),
    "description": (
        "Not as described at all.",
        "The colour is nothing like the photos.",
    ),
    "value": ("Overpriced for what you get.", "Not worth the money."),
    "size_fit": ("Much smaller than I expected.", "Too small for what I needed."),
    "service": (
        "The seller never replied to my messages.",
        "Customer service was useless.",
    ),
    "general": (
        "Very disappointed.",
        "Would not buy again.",
        "I am returning it.",
    ),
}
NEUTRAL = (
    "Bought this as a replacement for my old {noun}.",
    "Ordered the standard version.",
    "It is a {noun}.",
    "Haven't used it much yet.",
    "Got it last week.",
)
TITLES = {
    "positive": ("Love it", "Great {noun}", "Excellent", "Very pleased", "Five stars"),
    "negative": ("Disappointed", "Not great", "Poor quality", "Would not recommend", "Meh"),
    "neutral": ("OK", "{Noun}", "As expected", "Average"),
    "mixed": ("Mixed feelings", "Good and bad", "Almost there"),
}
RATINGS = {"positive": (4, 5, 5), "negative": (1, 1, 2), "neutral": (3,), "mixed": (3, 3, 4)}
ASPECTS = tuple(a for a in POSITIVE if a != "general")


def sku_quality(sku: str) -> float:
    """The share of positive reviews a SKU gets."""
    digest = int(hashlib.sha256(f"review-quality:{sku}".encode()).hexdigest()[:8], 16)
    return 0.3 + 0.6 * (digest % 1000) / 999


def _noun(title, sku):
    return (title or sku).split(",")[0].strip().lower() or sku.lower()


def _review_text(rng, kind, noun):
    if kind == "neutral":
        sentences = rng.sample(NEUTRAL, 2)
    elif kind == "mixed":
        good = rng.choice(ASPECTS)
        bad = rng.choice([a for a in ASPECTS if a != good])
        downside = rng.choice(NEGATIVE[bad])
        sentences = [rng.choice(POSITIVE[good]), "But " + downside[0].lower() + downside[1:]]
    else:
        pool = POSITIVE if kind == "positive" else NEGATIVE
        aspects = rng.sample(ASPECTS, rng.randint(1, 2))
        sentences = [rng.choice(pool[a]) for a in aspects]
        if rng.random() < 0.6:
            sentences.append(rng.choice(pool["general"]))
    return " ".join(sentences).replace("{noun}", noun)


def make_review(
    connection_id: str, marketplace: str, sku: str, title: str, n: int
) -> dict[str, Any]:
    """Review number ``n`` (1-based) of ``sku``, without its time."""
    rng = random.Random(f"{marketplace}:review:{sku}:{n}")
    quality = sku_quality(sku)
    roll = rng.random()
    if roll < quality:
        kind = "positive"
    elif roll < quality + (1 - quality) * 0.65:
        kind = "negative"
    else:
        kind = rng.choice(("neutral", "mixed"))
    noun = _noun(title, sku)
    title_text = rng.choice(TITLES[kind]).replace("{noun}", noun).replace("{Noun}", noun.title())
    digest = hashlib.sha256(f"{connection_id}:{sku}:{n}".encode()).hexdigest()
    return {
        "id": "SBXR-" + digest[:14].upper(),
        "sku": sku,
        "rating": rng.choice(RATINGS[kind]),
        "title": title_text,
        "text": _review_text(rng, kind, noun),
        "offset_ms": rng.randint(3_600_000, 60 * DAY_MS),  # backfill: how long before tick 0
        "jitter_ms": rng.randint(0, 600_000),  # later ticks: minutes before the tick
    }


def visible_count(ticks: int) -> int:
    """How many reviews per SKU the marketplace shows after ``ticks`` ticks."""
    if ticks <= 0:
        return 0
    return min(MAX_REVIEWS, INITIAL_REVIEWS + REVIEWS_PER_FETCH * (ticks - 1))


def tick_of(n: int) -> int:
    """The tick (0-based) at which review ``n`` appears."""
    return 0 if n <= INITIAL_REVIEWS else -(-(n - INITIAL_REVIEWS) // REVIEWS_PER_FETCH)


def reviews_for(
    connection: MarketplaceConnection,
    titles: dict[str, str],
    tick_times: Sequence[int],
    since_ms: int | None,
) -> list[dict[str, Any]]:
    """The reviews of the SKUs in ``titles`` (``{sku: title}``) the marketplace shows after
    the ticks at ``tick_times``, created at or after ``since_ms``, in the wire shape."""
    count = visible_count(len(tick_times))
    out = []
    for sku in sorted(titles):
        for n in range(1, count + 1):
            review = make_review(connection.id, connection.marketplace, sku, titles[sku], n)
            tick = tick_of(n)
            if tick == 0:
                created = tick_times[0] - review.pop("offset_ms")
                review.pop("jitter_ms")
            else:
                created = tick_times[tick] - review.pop("jitter_ms")
                review.pop("offset_ms")
            if since_ms is not None and created < since_ms:
                continue
            review["created_at"] = format_ms(created)
            out.append(review)
    return out
