"""Read-only questions other domains ask about orders."""

from ..products.services import open_order_check
from .models import OPEN_STATUSES, Order, OrderLine


@open_order_check
def sku_has_open_orders(tenant_id, sku):
    """True when a pending, confirmed or processing order has a line with ``sku``."""
    return (
        OrderLine.select(OrderLine.id)
        .join(Order)
        .where(
            (OrderLine.tenant == tenant_id)
            & (OrderLine.sku == sku)
            & (Order.status.in_(OPEN_STATUSES))
        )
        .exists()
    )
