"""Return and review signals per SKU, for other analyses (``listing_optimize``).

Both read what is already in the database and call no marketplace: the returns of the
tenant's orders (classified as ``return_classify`` does) and the reviews kept by earlier
``review_sentiment`` jobs.
"""

from collections.abc import Iterable
from typing import Any

from .return_reasons import CATEGORIES
from .returns import classify_rows, return_rows, units_sold
from .reviews import stored_review_stats
from .sentiment import ASPECTS, average


def return_signals(tenant_id: str, skus: Iterable[str]) -> dict[str, dict[str, Any]]:
    """``{sku: {"units_sold", "units_returned", "categories": {category: count}}}`` for
    every SKU of ``skus`` (zeros when it has no orders), over all non-cancelled orders."""
    skus = list(dict.fromkeys(skus))
    signals = {sku: {"units_sold": 0, "units_returned": 0, "categories": {}} for sku in skus}
    if not skus:
        return signals
    for sku, (units, _) in units_sold(tenant_id, skus=skus).items():
        signals[sku]["units_sold"] = units
    rows = return_rows(tenant_id, skus=skus)
    for row, (category, _) in zip(rows, classify_rows(rows), strict=True):
        entry = signals[row[2]]
        entry["units_returned"] += row[3]
        entry["categories"][category] = entry["categories"].get(category, 0) + 1
    for entry in signals.values():
        entry["categories"] = {
            c: entry["categories"][c] for c in CATEGORIES if c in entry["categories"]
        }
    return signals


def review_signals(tenant_id: str, skus: Iterable[str]) -> dict[str, dict[str, Any]]:
    """``{sku: {"review_count", "average_score", "average_rating", "aspects": {aspect:
    {"mentions", "average_score"}}}}`` from the stored reviews (averages None without
    any)."""
    skus = list(dict.fromkeys(skus))
    stats = stored_review_stats(tenant_id, skus) if skus else {}
    signals = {}
    for sku in skus:
        scores, aspects, ratings = stats.get(sku, ([], {}, []))
        signals[sku] = {
            "review_count": len(scores),
            "average_score": average(scores),
            "average_rating": average(ratings),
            "aspects": {
                aspect: {
                    "mentions": len(aspects[aspect]),
                    "average_score": average(aspects[aspect]),
                }
                for aspect in ASPECTS
                if aspect in aspects
            },
        }
    return signals
