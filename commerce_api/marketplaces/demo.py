"""Demo data: a sandbox marketplace connection and its first orders."""

from .models import MarketplaceConnection
from .pulls import pull_connection
from .services import connect_marketplace

DEMO_MARKETPLACE = "amazon"


def seed_demo_marketplace(tenant_id):
    """Connect the sandbox as ``amazon`` and pull twice: a week of orders, then a tick in
    which the first ones move on (FBA shipped by the marketplace, FBM confirmed)."""
    connection = connect_marketplace(
        tenant_id, DEMO_MARKETPLACE, "sandbox", created_by="demo", settings={"initial_orders": 12}
    )
    for _ in range(2):
        pull_connection(MarketplaceConnection.get_by_id(connection.id))
    return connection
