"""Periodic marketplace work the worker fleet runs."""

from ..config import load_config
from ..jobs.periodic import periodic
from .pulls import pull_all

# Read when the worker imports this module: COMMERCE_ORDER_PULL_INTERVAL_SECONDS.
ORDER_PULL_INTERVAL_SECONDS = int(load_config()["ORDER_PULL_INTERVAL_SECONDS"])


@periodic("pull_orders", ORDER_PULL_INTERVAL_SECONDS)
def pull_orders():
    """Pull new and changed orders (and marketplace stock) from every active connection."""
    return pull_all()
