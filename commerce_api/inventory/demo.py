"""Demo stock: an own warehouse and an FBA warehouse with stock for the demo products.

Most demo SKUs are shipped by the merchant from "Main warehouse" (their listings offer that
stock); the marketplace's warehouse holds the rest (``FBA_SKUS``: their listings are
fulfilled by the marketplace, which reports their stock), so the demo shows both kinds."""

from typing import Any

from ..products.models import Product
from .reservations import set_marketplace_stock
from .services import bulk_set_stock, create_warehouse, set_safety_stock

# sku -> (on hand in the main warehouse or None, safety stock, on hand at FBA or None)
DEMO_STOCK = {
    "MUG-ENAMEL-WHT": (140, 20, None),
    "MUG-ENAMEL-BLU": (18, 20, None),  # low
    "TEA-TOWEL-LIN": (75, 10, None),
    "CANDLE-SOY-S": (6, 15, None),  # critical
    "CANDLE-SOY-L": (0, 10, None),  # out of stock
    "BLANKET-WOOL": (12, 4, None),
    "NOTEBOOK-A5": (None, 50, 100),  # at the marketplace only
    "PEN-BRASS": (40, 10, None),
    "TOTE-CANVAS": (9, 10, None),  # low
    "BOTTLE-STEEL": (55, 12, None),
}
# what the marketplace's warehouse holds: the SKUs above with FBA stock and the listing
# demo's products (analysis/demo_listings.py), which have no stock of the merchant's own
FBA_SKUS = ("MUG-ENAMEL-CAMP", "MUG-ENAMEL-PROMO", "NOTEBOOK-A5")
DEMO_BY = "demo"


def seed_demo_inventory(tenant_id: str) -> dict[str, Any]:
    """Create "Main warehouse" (own) and "Amazon FBA" (read-only), and stock them."""
    main = create_warehouse(
        tenant_id,
        {"name": "Main warehouse", "type": "own", "address": "1 Demo Street, Springfield"},
    )
    fba = create_warehouse(
        tenant_id, {"name": "Amazon FBA", "type": "FBA", "marketplace": "amazon"}
    )
    known = {
        sku
        for (sku,) in Product.select(Product.sku)
        .where((Product.tenant == tenant_id) & Product.sku.in_(list(DEMO_STOCK)))
        .tuples()
    }
    items = [
        {
            "index": index,
            "sku": sku,
            "warehouse_id": main["id"],
            "quantity": on_hand,
            "reason": "supplier_receipt",
            "note": "Opening stock",
        }
        for index, (sku, (on_hand, _, _)) in enumerate(DEMO_STOCK.items())
        if sku in known and on_hand is not None
    ]
    if items:
        bulk_set_stock(tenant_id, items, DEMO_BY)
    for sku, (_, safety_stock, fba_on_hand) in DEMO_STOCK.items():
        if sku not in known:
            continue
        set_safety_stock(tenant_id, sku, safety_stock, DEMO_BY)
        if fba_on_hand is not None:
            set_marketplace_stock(tenant_id, fba["id"], sku, fba_on_hand, created_by=DEMO_BY)
    return {"warehouses": [main["id"], fba["id"]], "skus": sorted(known)}
