"""Helpers of the inventory tests: warehouses, stock, and checks on what the database holds."""

from collections import defaultdict

from commerce_api.events.models import Event
from commerce_api.inventory.models import (
    Adjustment,
    InventorySummary,
    Reservation,
    Stock,
    Warehouse,
)
from commerce_api.inventory.services import create_warehouse


def make_warehouse(client, headers, **overrides):
    body = {"name": "Main warehouse", "address": "1 Road, Town"}
    body.update(overrides)
    response = client.post("/api/inventory/warehouses", json=body, headers=headers)
    assert response.status_code == 201, response.get_json()
    return response.get_json()["data"]


def make_marketplace_warehouse(tenant_id, kind="FBA", marketplace="amazon", name=None):
    """FBA/FBS warehouses are registered by the operator or the connector, not the API."""
    return create_warehouse(
        tenant_id,
        {"name": name or f"{marketplace} {kind}", "type": kind, "marketplace": marketplace},
    )


def put_stock(client, headers, sku, warehouse_id, quantity, reason="supplier_receipt", **extra):
    body = {"warehouse_id": warehouse_id, "quantity": quantity, "reason": reason, **extra}
    return client.put(f"/api/inventory/{sku}", json=body, headers=headers)


def set_stock(client, headers, sku, warehouse_id, quantity, reason="supplier_receipt", **extra):
    response = put_stock(client, headers, sku, warehouse_id, quantity, reason, **extra)
    assert response.status_code == 200, response.get_json()
    return response.get_json()["data"]


def snapshot():
    """Everything a stock change writes, to assert that a refused change wrote nothing."""
    return {
        "stock": sorted(
            Stock.select(Stock.id, Stock.on_hand, Stock.reserved, Stock.version).tuples()
        ),
        "records": sorted(
            InventorySummary.select(
                InventorySummary.product,
                InventorySummary.total_on_hand,
                InventorySummary.total_reserved,
                InventorySummary.safety_stock,
                InventorySummary.status,
            ).tuples()
        ),
        "adjustments": Adjustment.select().count(),
        "reservations": sorted(
            Reservation.select(
                Reservation.id, Reservation.quantity, Reservation.consumed, Reservation.released
            ).tuples()
        ),
        "warehouses": sorted(
            Warehouse.select(Warehouse.id, Warehouse.name, Warehouse.is_active).tuples()
        ),
        "events": Event.select().where(Event.type.startswith("inventory.")).count(),
    }


def inventory_events(event_type=None):
    query = Event.select().where(Event.type.startswith("inventory.")).order_by(Event.created_at)
    if event_type:
        query = query.where(Event.type == event_type)
    return [{"type": e.type, "resource_id": e.resource_id, "data": e.data} for e in query]


def check_ledger():
    """Every stock row equals the sum of its ledger, in one unbroken chain; every record
    equals the sum of its rows. Returns the number of adjustments checked."""
    chains = defaultdict(list)
    for adjustment in Adjustment.select().order_by(Adjustment.stock, Adjustment.sequence):
        chains[adjustment.stock_id].append(adjustment)
    stocks = {row.id: row for row in Stock.select()}
    assert set(chains) <= set(stocks)
    for stock_id, row in stocks.items():
        entries = chains.get(stock_id, [])
        assert [a.sequence for a in entries] == list(range(1, len(entries) + 1)), stock_id
        assert row.version == len(entries)
        values = {"on_hand": 0, "reserved": 0}
        for a in entries:
            assert a.before_quantity == values[a.quantity_type], (stock_id, a.sequence)
            assert a.delta == a.after_quantity - a.before_quantity
            values[a.quantity_type] = a.after_quantity
        assert (row.on_hand, row.reserved) == (values["on_hand"], values["reserved"])
        assert 0 <= row.reserved <= row.on_hand
    totals = defaultdict(lambda: [0, 0])
    for row in stocks.values():
        totals[row.product_id][0] += row.on_hand
        totals[row.product_id][1] += row.reserved
    for record in InventorySummary.select():
        on_hand, reserved = totals.get(record.product_id, (0, 0))
        assert (record.total_on_hand, record.total_reserved) == (on_hand, reserved)
        assert record.total_available == on_hand - reserved
    return sum(len(v) for v in chains.values())
