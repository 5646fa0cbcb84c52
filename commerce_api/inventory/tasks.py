"""What the inventory domain registers (``commerce_api.tasks``): no background work yet,
one domain check."""

from ..products.bundles import register_component_check
from .bundles import check_components


def register() -> None:
    """A bundle's new components are checked against stock (inventory is above products)."""
    register_component_check(check_components)
