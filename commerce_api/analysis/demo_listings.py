"""Demo data for ``listing_optimize``: kitchen listings, one of them deliberately weak."""

from decimal import Decimal

from ..products.models import Product
from ..products.services import create_product

DEMO_LISTINGS = (
    {
        # shouting, promotional, repeated, short; a thin description, one http image
        "sku": "MUG-ENAMEL-PROMO",
        "title": "BEST SELLER!!! MUG mug",
        "description": "Mug. Enamel, 350 ml, for coffee and tea.",
        "status": "active",
        "category": "kitchen",
        "gtin": "4006389000026",
        "cost_price": Decimal("3.40"),
        "images": ["http://images.example.com/mug-enamel-promo.jpg"],
    },
    {
        "sku": "MUG-ENAMEL-CAMP",
        "title": "Enamel camping mug with stainless steel rim, green, 500 ml",
        "description": (
            "A sturdy enamel camping mug with a stainless steel rim. Holds 500 ml of coffee, "
            "tea or soup, goes on a camping stove and into the dishwasher. Enamel over steel, "
            "chip-resistant, 9 cm high."
        ),
        "status": "active",
        "category": "kitchen",
        "gtin": "4006389000019",
        "cost_price": Decimal("4.10"),
        "images": [f"https://images.example.com/mug-enamel-camp-{n}.jpg" for n in range(1, 7)],
    },
)


def seed_demo_listings(tenant_id: str) -> None:
    """Add the demo listings (skipping any the tenant already has)."""
    for data in DEMO_LISTINGS:
        exists = (
            Product.select()
            .where((Product.tenant == tenant_id) & (Product.sku == data["sku"]))
            .exists()
        )
        if not exists:
            create_product(tenant_id, dict(data))
