"""Rows the products tests set up directly: listings, open orders, sandbox connections."""

import uuid
from decimal import Decimal

from commerce_api.ids import new_id
from commerce_api.orders.models import Order, OrderLine
from commerce_api.products.models import Listing
from commerce_api.timeutil import now_ms


def add_listing(tenant_id, product_id, marketplace, **fields):
    values = {
        "external_id": f"EXT-{marketplace}",
        "price": Decimal("19.99"),
        "currency": "USD",
        "quantity": 4,
        "status": "active",
        "last_synced_at": 1_795_000_000_123,
    }
    values.update(fields)
    return Listing.create(
        id=new_id("listing"),
        tenant=tenant_id,
        product=product_id,
        marketplace=marketplace,
        **values,
    )


def add_order(tenant_id, sku, status="pending"):
    order = Order.create(
        id=new_id("order"),
        tenant=tenant_id,
        marketplace="amazon_us",
        external_order_id=f"111-{uuid.uuid4().hex[:8]}",
        status=status,
        placed_at=now_ms(),
    )
    OrderLine.create(
        id=f"line_{uuid.uuid4().hex}",
        order=order.id,
        tenant=tenant_id,
        position=1,
        external_line_item_id="1",
        sku=sku,
        quantity=1,
    )
    return order


def connect(tenant_id, *marketplaces):
    from commerce_api.marketplaces.services import connect_marketplace

    for marketplace in marketplaces:
        connect_marketplace(tenant_id, marketplace, "sandbox")


def price_listing(client, headers, sku, marketplace, price=12.5):
    """Set the price of ``sku``'s listing on ``marketplace`` (creating the listing, held
    until then): nothing is pushed without a price someone chose."""
    response = client.patch(
        f"/api/products/{sku}/listings/{marketplace}", json={"price": price}, headers=headers
    )
    assert response.status_code == 200, response.get_json()
    return response.get_json()["data"]


def price_listing_now(tenant_id, sku, marketplace, price="12.50"):
    """``price_listing`` through the service, for tests that call services directly."""
    from commerce_api.marketplaces.product_sync import update_listing

    return update_listing(tenant_id, sku, marketplace, {"price": Decimal(price)})
