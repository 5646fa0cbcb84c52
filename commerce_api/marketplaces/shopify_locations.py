"""A Shopify connection's location mapping checked against the tenant's warehouses and the
shop's own locations (one call to the shop)."""

from ..errors import ApiError, validation_error
from ..inventory.models import Warehouse
from .base import MarketplaceRejection, MarketplaceUnavailable
from .models import MarketplaceConnection
from .shopify import ShopifyConnector


def check_shopify_locations(connection: MarketplaceConnection) -> None:
    """A Shopify connection's ``settings.locations`` map the tenant's own warehouses to
    locations the shop has (it is asked: one call); 422 naming each one that is not, and
    the shop's locations. A shop that refuses the token is a 422 on ``access_token``."""
    locations = (connection.settings or {}).get("locations") or {}
    errors = {}
    own = {
        row.id: row.type
        for row in Warehouse.select(Warehouse.id, Warehouse.type).where(
            (Warehouse.tenant == connection.tenant_id) & (Warehouse.id.in_(list(locations)))
        )
    }
    for warehouse_id in locations:
        if warehouse_id not in own:
            errors[warehouse_id] = ["Not a warehouse of the tenant."]
        elif own[warehouse_id] != "own":
            errors[warehouse_id] = ["Only own warehouses are sold from Shopify locations."]
    if errors:
        raise validation_error({"settings": {"locations": errors}})
    connector = ShopifyConnector(connection, connection.settings or {})
    try:
        known = connector.shop_locations()
    except MarketplaceUnavailable as exc:
        if exc.code == "AUTH":
            raise validation_error({"credentials": {"access_token": [exc.message]}}) from None
        raise ApiError(
            "MARKETPLACE_UNAVAILABLE",
            f"The shop's locations could not be read: {exc.message}",
            details={"reason": exc.code},
        ) from None
    except MarketplaceRejection as exc:
        raise ApiError(
            "MARKETPLACE_REJECTION",
            f"The shop's locations could not be read: {exc.message}",
            details={"marketplace_code": exc.code},
        ) from None
    listed = ", ".join(f"{gid} ({name})" for gid, name in sorted(known.items())) or "none"
    for warehouse_id, gid in locations.items():
        if gid not in known:
            errors[warehouse_id] = [
                f"Not a location of the shop {connection.settings['shop_domain']}"
                f"; its locations: {listed}."
            ]
    if errors:
        raise validation_error({"settings": {"locations": errors}})
