"""Fixtures the orders tests share."""

import pytest

from tests.support.orders_support import connect, make_own_warehouse, make_products, stock_up


@pytest.fixture
def shop(client, headers, tenant):
    """Products MUG-1 (10 on hand) and TOWEL-1 (5), a quiet sandbox connection 'amazon'."""
    make_products(client, headers, "MUG-1", "TOWEL-1")
    warehouse = make_own_warehouse(tenant)
    stock_up(tenant, warehouse, {"MUG-1": 10, "TOWEL-1": 5})
    connect(tenant, "amazon", settings={"initial_orders": 0, "orders_per_pull": 0})
    return warehouse
