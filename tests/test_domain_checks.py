"""Cross-domain checks are registered by ``create_app``, never by importing a domain.

Archiving a product (products) asks whether open orders (orders, a higher domain) hold its
SKU. ``create_app`` hands products that question (``tasks.register_all``); importing
``commerce_api.orders`` registers nothing.
"""

import subprocess
import sys
import textwrap

from commerce_api.ids import new_id
from commerce_api.orders import queries
from commerce_api.orders.models import Order, OrderLine
from commerce_api.products import services
from commerce_api.tasks import register_all
from commerce_api.timeutil import now_ms
from tests.support.factories import create_product


def _run(code):
    result = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stderr
    return result.stdout


def test_importing_orders_registers_nothing_and_create_app_registers_the_check(tmp_path):
    out = _run(
        f"""
        import commerce_api.orders
        import commerce_api.orders.queries
        import commerce_api.orders.routes
        from commerce_api.products import services

        print(len(services._OPEN_ORDER_CHECKS))

        from commerce_api import create_app
        from commerce_api.orders.queries import sku_has_open_orders

        config = {{"DATABASE_URL": "sqlite:///{tmp_path}/app.db", "RATE_LIMIT_ENABLED": False}}
        create_app(config)
        create_app(config)  # a second app registers nothing twice
        print(services._OPEN_ORDER_CHECKS == [sku_has_open_orders])
        """
    )
    assert out.split() == ["0", "True"]


def test_registering_again_changes_nothing(app):
    register_all(app.config)
    register_all(app.config)
    assert [queries.sku_has_open_orders] == services._OPEN_ORDER_CHECKS


def _order(tenant_id, sku, status):
    order = Order.create(
        id=new_id("order"),
        tenant=tenant_id,
        marketplace="amazon_us",
        external_order_id=new_id("order"),
        status=status,
        placed_at=now_ms(),
    )
    OrderLine.create(
        id=new_id("order"),
        order=order.id,
        tenant=tenant_id,
        position=1,
        external_line_item_id="1",
        sku=sku,
        quantity=1,
    )
    return order


def test_the_app_refuses_to_archive_a_product_with_open_orders(client, headers, tenant):
    create_product(client, headers, sku="HOOK-1")
    order = _order(tenant.id, "HOOK-1", "processing")
    response = client.delete("/api/products/HOOK-1", headers=headers)
    assert response.status_code == 409, response.get_json()
    assert response.get_json()["error"]["code"] == "OPEN_ORDERS_EXIST"
    Order.update(status="shipped").where(Order.id == order.id).execute()
    assert client.delete("/api/products/HOOK-1", headers=headers).status_code == 204
