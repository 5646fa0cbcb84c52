"""Demo data: a sandbox marketplace connection (``commerce_api.demo`` pulls its orders)."""

from ..inventory.demo import FBA_SKUS
from .models import MarketplaceConnection
from .services import connect_marketplace

DEMO_MARKETPLACE = "amazon"


def seed_demo_marketplace(tenant_id: str) -> MarketplaceConnection:
    """Connect the sandbox as ``amazon`` with a week of orders waiting to be pulled; its
    warehouse (FBA) holds ``FBA_SKUS`` and ships their orders, the merchant the others'."""
    return connect_marketplace(
        tenant_id,
        DEMO_MARKETPLACE,
        "sandbox",
        created_by="demo",
        settings={"initial_orders": 12, "fba_skus": list(FBA_SKUS)},
    )
