"""Inventory: warehouses, stock rows, inventory records, the adjustments ledger, reservations."""


def up(migrator, db):
    from commerce_api.inventory.models import (
        Adjustment,
        InventorySummary,
        Reservation,
        Stock,
        Warehouse,
    )

    db.create_tables([Warehouse, InventorySummary, Stock, Adjustment, Reservation])
