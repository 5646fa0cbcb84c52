"""Demo pricing: the demo products listed on the sandbox marketplace, their competitor
offers, and three rules, so that ``POST /api/pricing/recalculate`` gives real
recommendations on a new install."""

from decimal import Decimal
from typing import Any

from ..config import current_config
from ..marketplaces.product_sync import hold_listing, sync_product, update_listing
from ..products.models import Product
from ..products.services import find_product
from .competitors import scan_competitors
from .recalculate import listed_skus
from .rules import create_rule

DEMO_BY = "demo"
DEMO_RULES = (
    {
        "name": "Undercut the lowest offer by 0.25",
        "type": "competitor_match",
        "value": Decimal("-0.25"),
        "value_type": "fixed",
        "applies_to": "all",
        "priority": 100,
    },
    {
        "name": "Keep a 45 % margin on home goods",
        "type": "margin_target",
        "value": Decimal("45"),
        "value_type": "percent",
        "applies_to": "category",
        "category": "home",
        "priority": 200,
    },
    {
        "name": "Never below cost + 30 %",
        "type": "floor",
        "value": Decimal("30"),
        "value_type": "percent",
        "applies_to": "all",
        "priority": 100,
    },
)


def list_price(cost: Decimal | None) -> Decimal | None:
    """The demo merchant's list price: twice the cost (what the demo's delivered orders
    were sold at, analysis/demo.py)."""
    return None if cost is None else (Decimal(cost) * 2).quantize(Decimal("0.01"))


def seed_demo_pricing(tenant_id: str, marketplace: str) -> dict[str, Any]:
    """List the active demo products on ``marketplace`` (a sandbox connection), each at
    the price the merchant chose before anything is pushed, scan their competitors and
    create the demo rules."""
    rows = list(
        Product.select(Product.sku, Product.cost_price)
        .where((Product.tenant == tenant_id) & (Product.status == "active"))
        .order_by(Product.sku)
        .tuples()
    )
    for sku, cost in rows:
        # as a merchant would through the API: the listing first (held: no price yet),
        # then its price, then the push, which carries that price
        hold_listing(tenant_id, find_product(tenant_id, sku), marketplace)
        price = list_price(cost)
        if price is not None:
            update_listing(tenant_id, sku, marketplace, {"price": price})
        sync_product(tenant_id, sku, [marketplace], created_by=DEMO_BY)
    listed = listed_skus(tenant_id, marketplace)
    scan = scan_competitors(
        tenant_id, marketplace, listed, int(current_config()["PRICING_CHUNK_SIZE"])
    )
    defaults = {"marketplace": "all", "is_active": True, "category": None, "skus": None}
    rules = [create_rule(tenant_id, {**defaults, **rule}) for rule in DEMO_RULES]
    return {"listed": listed, "offers": scan["offer_count"], "rules": [r["id"] for r in rules]}
