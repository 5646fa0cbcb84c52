"""Product sync: push a product to marketplaces and keep its listings."""

from ..db import write_transaction
from ..errors import ApiError
from ..ids import new_id
from ..products.models import Listing, Product
from ..timeutil import now_ms
from . import services


def _available(tenant_id, sku):
    try:
        from ..inventory.reservations import available_quantity
    except ModuleNotFoundError:  # the inventory domain is not installed
        return 0
    return available_quantity(tenant_id, sku)


def _payload(product, listing, quantity):
    def number(value):
        return None if value is None else float(value)

    return {
        "sku": product.sku,
        "title": product.title,
        "description": product.description,
        "status": product.status,
        "gtin": product.gtin,
        "category": product.category,
        "cost_price": number(product.cost_price),
        "weight_kg": number(product.weight_kg),
        "images": product.images or [],
        "price": number(listing.price) if listing is not None else None,
        "currency": listing.currency if listing is not None else None,
        "quantity": quantity,
    }


def _save_listing(tenant_id, product, marketplace, answer):
    now = now_ms()
    with write_transaction():
        listing = Listing.get_or_none(
            (Listing.product == product.id) & (Listing.marketplace == marketplace)
        )
        fields = {
            "external_id": answer.get("external_id"),
            "price": answer.get("price"),
            "currency": answer.get("currency"),
            "quantity": int(answer.get("quantity") or 0),
            "status": answer.get("status") or "active",
            "last_synced_at": now,
            "updated_at": now,
        }
        if listing is None:
            Listing.create(
                id=new_id("listing"),
                tenant=tenant_id,
                product=product.id,
                marketplace=marketplace,
                created_at=now,
                **fields,
            )
        else:
            Listing.update(**fields).where(Listing.id == listing.id).execute()


def sync_product(tenant_id, sku, marketplaces, created_by, heartbeat=None):
    """Push the product to each marketplace (each on its own) and record every attempt.

    Returns ``{sku, succeeded, failed, unavailable, marketplaces: [{marketplace, status,
    external_id | error}]}``.
    """
    product = Product.get_or_none((Product.tenant == tenant_id) & (Product.sku == sku))
    if product is None:
        raise ApiError("PRODUCT_NOT_FOUND", details={"sku": sku})
    if marketplaces is None:
        marketplaces = services.connected_marketplaces(tenant_id)
    results = []
    for marketplace in marketplaces:
        if heartbeat is not None:
            heartbeat()
        connection = services.connection_for(tenant_id, marketplace)
        if connection is None:
            results.append(
                {
                    "marketplace": marketplace,
                    "status": "failed",
                    "error": {"code": "MARKETPLACE_NOT_CONNECTED", "message": "Not connected."},
                }
            )
            continue
        listing = Listing.get_or_none(
            (Listing.product == product.id) & (Listing.marketplace == marketplace)
        )
        payload = _payload(product, listing, _available(tenant_id, sku))
        try:
            answer, _ = services.call_marketplace(
                connection,
                "push_product",
                lambda connector, payload=payload: connector.push_product(payload),
                resource_type="product",
                resource_id=product.id,
                sku=product.sku,
                created_by=created_by,
            )
        except ApiError as error:
            status = "unavailable" if error.code == "MARKETPLACE_UNAVAILABLE" else "rejected"
            results.append(
                {
                    "marketplace": marketplace,
                    "status": status,
                    "error": {"code": error.code, "message": error.message},
                }
            )
            continue
        _save_listing(tenant_id, product, marketplace, answer)
        results.append(
            {
                "marketplace": marketplace,
                "status": "succeeded",
                "external_id": answer.get("external_id"),
            }
        )
    return {
        "sku": product.sku,
        "succeeded": sum(1 for r in results if r["status"] == "succeeded"),
        "failed": sum(1 for r in results if r["status"] != "succeeded"),
        "marketplaces": results,
    }
