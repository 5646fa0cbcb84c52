"""Demo data for ``return_classify`` (and ``review_sentiment``).

Reviews need nothing here: the demo's sandbox marketplace (``amazon``) writes them for
every product (``marketplaces/sandbox_reviews.py``; the wool blanket is the least liked).
Returns come with ten weeks of delivered orders imported as ``amazon`` orders: most SKUs
come back at about 4 % with the usual mix of reasons, the blue enamel mug comes back far
more often (chipped enamel: the anomaly ``return_classify`` reports), and the wool blanket
is sent back for its size now and then (a ``size_fit`` signal for ``listing_optimize``).
Three weeks ago a batch of steel bottles with leaky lids went out: most of the bottles sold
in those two weeks came back within days of each other (the ``return_spike``). Each line
carries the price the product is listed at (twice its cost, as the sandbox lists it), and
each return its own date, a few days to two weeks after the order.
"""

import random
from collections.abc import Sequence
from decimal import Decimal
from typing import Any

from ..marketplaces.demo import DEMO_MARKETPLACE
from ..orders.ingest import import_orders
from ..products.models import Product
from ..timeutil import DAY_MS, format_ms, now_ms
from .returns import week_of, week_start_ms

ORDERS = 240  # over ten weeks
BASE_RATE = 0.04  # returned units per unit sold
RATES = {"MUG-ENAMEL-BLU": 0.30, "BLANKET-WOOL": 0.10}
REASONS = (
    ("damaged", "Arrived damaged, the box was crushed."),
    (None, "Arrived broken, the glass was shattered in the parcel."),
    ("not_as_described", "Colour differs from the photos."),
    (None, "Looks nothing like the listing photos, much duller."),
    ("no_longer_needed", "Bought by mistake."),
    (None, "Changed my mind, I found one at home."),
    ("wrong_item", "Received another item."),
    (None, "Found it cheaper elsewhere."),
    (None, "Arrived too late for the birthday."),
    (None, "The lid was missing from the box."),
)
SPECIFIC = {
    "MUG-ENAMEL-BLU": (
        ("defective", "The enamel chipped after a week and it started to rust."),
        (None, "Enamel chipping off around the rim after two washes."),
        ("quality_unacceptable", "Chipped enamel, stopped using it."),
    ),
    "BLANKET-WOOL": (
        (None, "Too small for a double bed."),
        ("APPAREL_TOO_SMALL", "Smaller than I expected from the size given."),
    ),
}


# The bad batch: orders placed in these days (before now) come back at BATCH_RATE, all
# within BATCH_RETURN_DAYS of the batch's discovery.
BATCH_SKU = "BOTTLE-STEEL"
BATCH_PLACED_DAYS = (35, 21)
BATCH_RATE = 0.8
BATCH_RETURNED_DAYS_AGO = 20  # the returns arrive from the Monday after then
BATCH_RETURN_DAYS = 4
BATCH_REASON = ("defective", "The lid leaks, water all over my bag. Sent it back.")


def _returned_at(rng, sku, placed, now):
    """``(returned_at, reason, text)`` of one return of ``sku`` from an order ``placed``."""
    if sku == BATCH_SKU and _in_batch(placed, now):
        start = batch_returns_start(now)
        return start + rng.randint(0, BATCH_RETURN_DAYS * DAY_MS - 1), *BATCH_REASON
    reason, text = rng.choice(SPECIFIC.get(sku) or REASONS)
    return min(placed + rng.randint(3 * DAY_MS, 14 * DAY_MS), now - 3_600_000), reason, text


def batch_returns_start(now: int) -> int:
    """When the batch's returns start: the first Monday after ``BATCH_RETURNED_DAYS_AGO``
    days ago, so that they all fall in one week (Monday to Thursday) of the weeks
    ``return_classify`` counts in, whatever day the demo is seeded (13 to 20 days ago:
    after the batch's last order, and more than a week before ``now``)."""
    return week_start_ms(week_of(now - BATCH_RETURNED_DAYS_AGO * DAY_MS) + 1)


def _in_batch(placed, now):
    oldest, newest = BATCH_PLACED_DAYS
    return now - oldest * DAY_MS <= placed < now - newest * DAY_MS


def demo_orders(
    skus: Sequence[str], now: int, prices: dict[str, float] | None = None, seed: int = 2026
) -> list[dict[str, Any]]:
    """Delivered orders in the import shape, with their returns (deterministic);
    ``prices``: ``{sku: unit price}``."""
    rng = random.Random(seed)
    prices = prices or {}
    orders = []
    for n in range(ORDERS):
        placed = now - 70 * DAY_MS + n * (69 * DAY_MS // ORDERS) + rng.randint(0, DAY_MS // 2)
        chosen = rng.sample(skus, rng.choice((1, 1, 2)))
        lines, returns = [], []
        for position, sku in enumerate(chosen, start=1):
            quantity = rng.choice((1, 1, 1, 2))
            line = {"external_line_item_id": str(position), "sku": sku, "quantity": quantity}
            if sku in prices:
                line["unit_price"] = prices[sku]
            lines.append(line)
            rate = BATCH_RATE if sku == BATCH_SKU and _in_batch(placed, now) else None
            rate = rate if rate is not None else RATES.get(sku, BASE_RATE)
            back = sum(rng.random() < rate for _ in range(quantity))
            if back:
                returned, reason, text = _returned_at(rng, sku, placed, now)
                returns.append(
                    {
                        "sku": sku,
                        "quantity": back,
                        "reason": reason,
                        "reason_text": text,
                        "created_at": format_ms(returned),
                    }
                )
        orders.append(
            {
                "external_order_id": f"DEMO-{n + 1:04d}",
                "marketplace": DEMO_MARKETPLACE,
                "status": "completed" if placed < now - 14 * DAY_MS else "delivered",
                "fulfillment_method": "FBA",
                "currency": "USD",
                "created_at": format_ms(placed),
                "line_items": lines,
                "returns": returns,
            }
        )
    return orders


def seed_demo_returns(tenant_id: str) -> dict[str, Any] | None:
    """Import the demo's delivered orders and their returns (no stock moves: they arrive
    closed)."""
    rows = (
        Product.select(Product.sku, Product.cost_price)
        .where(
            (Product.tenant == tenant_id)
            & (Product.status == "active")
            & (Product.sku.in_([*RATES, *_CATALOGUE]))
        )
        .order_by(Product.sku)
        .tuples()
    )
    # the price the sandbox lists a product at: twice its cost
    prices = {sku: float(Decimal(cost) * 2) for sku, cost in rows if cost is not None}
    skus = [sku for sku, _ in rows]
    if not skus:
        return None
    return import_orders(tenant_id, demo_orders(skus, now_ms(), prices), created_by="demo")


# the demo catalogue's SKUs (commerce_api/demo.py) that sell in these orders
_CATALOGUE = (
    "MUG-ENAMEL-WHT",
    "MUG-ENAMEL-BLU",
    "TEA-TOWEL-LIN",
    "CANDLE-SOY-S",
    "CANDLE-SOY-L",
    "BLANKET-WOOL",
    "NOTEBOOK-A5",
    "PEN-BRASS",
    "TOTE-CANVAS",
    "BOTTLE-STEEL",
)
