"""What the inventory domain registers (``commerce_api.tasks``): no background work yet,
two answers to products' bundle questions."""

from ..products.bundles import register_becoming_bundle, register_component_check
from .bundles import check_components, drop_own_record


def register() -> None:
    """A bundle's new components are checked against stock, and a product that becomes a
    bundle drops its own inventory record (inventory is above products)."""
    register_component_check(check_components)
    register_becoming_bundle(drop_own_record)
