"""Helpers of the orders and marketplaces tests: order files, connections, stock checks."""

import json
from collections import defaultdict
from types import SimpleNamespace

from commerce_api.cli import cli
from commerce_api.events.models import Event
from commerce_api.inventory.models import Adjustment, Reservation, Stock
from commerce_api.inventory.services import create_warehouse, set_stock
from commerce_api.jobs.models import Job
from commerce_api.marketplaces.models import MarketplaceConnection, SyncAttempt
from commerce_api.marketplaces.services import connect_marketplace
from commerce_api.orders.models import Order, OrderLine, OrderReturn

from .factories import product_body


def order_body(external_order_id="EXT-1", marketplace="amazon", **overrides):
    """One order in the import shape."""
    body = {
        "external_order_id": external_order_id,
        "marketplace": marketplace,
        "status": "pending",
        "fulfillment_method": "FBM",
        "total_amount": 25.0,
        "currency": "USD",
        "created_at": "2026-03-10T12:00:00.000Z",
        "line_items": [
            {
                "external_line_item_id": f"{external_order_id}-L1",
                "sku": "MUG-1",
                "title": "Enamel mug",
                "quantity": 2,
                "unit_price": 7.5,
                "line_total": 15.0,
            },
            {
                "external_line_item_id": f"{external_order_id}-L2",
                "sku": "TOWEL-1",
                "title": "Tea towel",
                "quantity": 1,
                "unit_price": 10.0,
                "line_total": 10.0,
            },
        ],
        "shipping_address": {
            "name": "Ada Lovelace",
            "line1": "12 St James's Square",
            "line2": None,
            "city": "London",
            "region": "LND",
            "postal_code": "SW1Y 4JH",
            "country": "GB",
        },
    }
    body.update(overrides)
    return body


def write_orders(tmp_path, orders, name="orders.json"):
    path = tmp_path / name
    path.write_text(json.dumps(orders))
    return str(path)


def import_orders(runner, tenant, tmp_path, orders, name="orders.json", expect_ok=True):
    """Run ``commerce-api orders import --json``; returns the result (or the CliResult)."""
    path = write_orders(tmp_path, orders, name)
    result = runner.invoke(
        cli, ["orders", "import", "--tenant", tenant.id, "--file", path, "--json"]
    )
    if not expect_ok:
        return result
    assert result.exit_code == 0, result.output
    return json.loads(result.output)


def make_products(client, headers, *skus):
    for sku in skus:
        response = client.post("/api/products", json=product_body(sku=sku), headers=headers)
        assert response.status_code == 201, response.get_json()


def make_own_warehouse(tenant, name="Main warehouse"):
    return create_warehouse(tenant.id, {"name": name, "type": "own", "address": "1 Road"})["id"]


def stock_up(tenant, warehouse_id, levels):
    """Set on_hand per SKU: ``{sku: quantity}``."""
    for sku, quantity in levels.items():
        set_stock(
            tenant.id,
            sku,
            {"warehouse_id": warehouse_id, "quantity": quantity, "reason": "supplier_receipt"},
            "test",
        )


def connect(tenant, marketplace="amazon", connector="sandbox", **kwargs):
    kwargs.setdefault("allow_private", True)
    return connect_marketplace(tenant.id, marketplace, connector, created_by="test", **kwargs)


def levels(tenant_id, sku):
    """(on_hand, reserved) of a SKU summed over its stock rows."""
    rows = list(
        Stock.select(Stock.on_hand, Stock.reserved)
        .where((Stock.tenant == tenant_id) & (Stock.sku == sku))
        .tuples()
    )
    return sum(r[0] for r in rows), sum(r[1] for r in rows)


def ledger_totals(tenant_id, sku):
    """What the adjustments ledger says: {(quantity_type, reason): sum of deltas}."""
    totals = defaultdict(int)
    for quantity_type, reason, delta in (
        Adjustment.select(Adjustment.quantity_type, Adjustment.reason, Adjustment.delta)
        .where((Adjustment.tenant == tenant_id) & (Adjustment.sku == sku))
        .tuples()
    ):
        totals[(quantity_type, reason)] += delta
    return dict(totals)


def assert_ledger_matches_stock(tenant_id, sku):
    """Every stock row's quantities equal the sum of its adjustments."""
    for stock in Stock.select().where((Stock.tenant == tenant_id) & (Stock.sku == sku)):
        sums = defaultdict(int)
        for quantity_type, delta in (
            Adjustment.select(Adjustment.quantity_type, Adjustment.delta)
            .where(Adjustment.stock == stock.id)
            .tuples()
        ):
            sums[quantity_type] += delta
        assert (stock.on_hand, stock.reserved) == (sums["on_hand"], sums["reserved"])


def open_reserved(tenant_id, sku):
    """What reservations of a SKU still hold."""
    return sum(
        r.quantity - r.consumed - r.released
        for r in Reservation.select().where(
            (Reservation.tenant == tenant_id) & (Reservation.sku == sku)
        )
    )


def snapshot():
    """Everything an order change writes, to assert that a refused request wrote nothing."""
    return {
        "orders": sorted(
            Order.select(
                Order.id,
                Order.status,
                Order.shipment,
                Order.cancellation,
                Order.reserved,
                Order.updated_at,
            ).tuples(),
            key=str,
        ),
        "lines": sorted(OrderLine.select(OrderLine.id, OrderLine.shipped_quantity).tuples()),
        "returns": OrderReturn.select().count(),
        "events": Event.select().count(),
        "stock": sorted(Stock.select(Stock.id, Stock.on_hand, Stock.reserved).tuples()),
        "adjustments": Adjustment.select().count(),
        "reservations": sorted(
            Reservation.select(
                Reservation.id, Reservation.quantity, Reservation.consumed, Reservation.released
            ).tuples()
        ),
        "jobs": Job.select().count(),
        "connections": sorted(
            MarketplaceConnection.select(
                MarketplaceConnection.id, MarketplaceConnection.pull_cursor
            ).tuples()
        ),
    }


def attempts(order_id=None):
    query = SyncAttempt.select().order_by(SyncAttempt.created_at, SyncAttempt.id)
    if order_id:
        query = query.where(SyncAttempt.resource_id == order_id)
    return list(query)


def events_of(resource_id):
    return [
        e.type
        for e in Event.select()
        .where(Event.resource_id == resource_id)
        .order_by(Event.created_at, Event.id)
    ]


def find_order(client, headers, external_order_id):
    body = client.get("/api/orders?limit=200", headers=headers).get_json()
    for item in body["data"]:
        if item["external_order_id"] == external_order_id:
            return item
    raise AssertionError(f"no order {external_order_id}")


class Ctx(SimpleNamespace):
    """A minimal worker context for calling handlers directly."""

    def __init__(self):
        super().__init__(worker_id="test-worker", attempt=1, lost=False, config={}, beats=0)

    def heartbeat(self):
        self.beats += 1


def run_job(job_id):
    """Run a queued job's handler in-process, as the worker would; returns (result, error)."""
    from commerce_api.jobs import registry
    from commerce_api.jobs.errors import JobFailed

    job = Job.get_by_id(job_id)
    handler = registry.get(job.type)
    try:
        return handler.run(job, Ctx()), None
    except JobFailed as failure:
        return None, failure
