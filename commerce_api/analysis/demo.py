"""Demo data for ``return_classify`` (and ``review_sentiment``).

Reviews need nothing here: the demo's sandbox marketplace (``amazon``) writes them for
every product (``marketplaces/sandbox_reviews.py``; the wool blanket is the least liked).
Returns come with ten weeks of delivered orders imported as ``amazon`` orders: most SKUs
come back at about 4 % with the usual mix of reasons, the blue enamel mug comes back far
more often (chipped enamel: the anomaly ``return_classify`` reports), and the wool blanket
is sent back for its size now and then (a ``size_fit`` signal for ``listing_optimize``).
"""

import random

from ..orders.ingest import import_orders
from ..products.models import Product
from ..timeutil import format_ms, now_ms

DAY_MS = 86_400_000
DEMO_MARKETPLACE = "amazon"
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


def demo_orders(skus, now, seed=2026):
    """Delivered orders in the import shape, with their returns (deterministic)."""
    rng = random.Random(seed)
    orders = []
    for n in range(ORDERS):
        placed = now - 70 * DAY_MS + n * (69 * DAY_MS // ORDERS) + rng.randint(0, DAY_MS // 2)
        chosen = rng.sample(skus, rng.choice((1, 1, 2)))
        lines, returns = [], []
        for position, sku in enumerate(chosen, start=1):
            quantity = rng.choice((1, 1, 1, 2))
            lines.append({"external_line_item_id": str(position), "sku": sku, "quantity": quantity})
            back = sum(rng.random() < RATES.get(sku, BASE_RATE) for _ in range(quantity))
            if back:
                specific = SPECIFIC.get(sku)
                reason, text = rng.choice(specific or REASONS)
                returned = min(placed + rng.randint(3, 12) * DAY_MS, now - 3_600_000)
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


def seed_demo_returns(tenant_id):
    """Import the demo's delivered orders and their returns (no stock moves: they arrive
    closed)."""
    skus = [
        sku
        for (sku,) in Product.select(Product.sku)
        .where(
            (Product.tenant == tenant_id)
            & (Product.status == "active")
            & (Product.sku.in_([*RATES, *_CATALOGUE]))
        )
        .order_by(Product.sku)
        .tuples()
    ]
    if not skus:
        return None
    return import_orders(tenant_id, demo_orders(skus, now_ms()), created_by="demo")


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
