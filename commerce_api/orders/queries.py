"""Read-only questions other domains ask about orders (``create_app`` registers them)."""

from .models import OPEN_STATUSES, Order, OrderLine


def sku_has_open_orders(tenant_id: str, sku: str) -> bool:
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
