"""Inventory: warehouses, stock rows, inventory records, the adjustments ledger, reservations."""

from peewee import (
    BigIntegerField,
    BooleanField,
    CharField,
    ForeignKeyField,
    TextField,
)

from commerce_api.migrations.frozen import Frozen, stub

# The tables as this migration creates them, frozen: see migrations/frozen.py.

# Created by an earlier migration; only the key is referenced:
Tenant = stub("tenant", 36)
Product = stub("product", 40)


class Warehouse(Frozen):
    id = CharField(max_length=40, primary_key=True)
    tenant = ForeignKeyField(Tenant, on_delete="CASCADE", index=False)
    name = CharField(max_length=200)
    type = CharField(max_length=8)
    marketplace = CharField(max_length=64, null=True)
    address = TextField(null=True)
    is_active = BooleanField()
    created_at = BigIntegerField()
    updated_at = BigIntegerField()

    class Meta:
        table_name = "warehouse"
        indexes = ((("tenant", "created_at", "id"), False),)


class InventorySummary(Frozen):
    product = ForeignKeyField(Product, on_delete="CASCADE", primary_key=True)
    tenant = ForeignKeyField(Tenant, on_delete="CASCADE", index=False)
    sku = CharField(max_length=64)
    total_on_hand = BigIntegerField()
    total_reserved = BigIntegerField()
    total_available = BigIntegerField()
    safety_stock = BigIntegerField()
    status = CharField(max_length=16)
    created_at = BigIntegerField()
    updated_at = BigIntegerField()

    class Meta:
        table_name = "inventory_summary"
        indexes = (
            (("tenant", "sku"), True),
            (("tenant", "status", "sku"), False),
            (("tenant", "updated_at", "sku"), False),
            (("tenant", "total_available", "sku"), False),
        )


class Stock(Frozen):
    id = CharField(max_length=40, primary_key=True)
    tenant = ForeignKeyField(Tenant, on_delete="CASCADE", index=False)
    product = ForeignKeyField(Product, on_delete="CASCADE", index=False)
    sku = CharField(max_length=64)
    warehouse = ForeignKeyField(Warehouse, on_delete="CASCADE")
    on_hand = BigIntegerField()
    reserved = BigIntegerField()
    version = BigIntegerField()
    last_adjusted_at = BigIntegerField()
    created_at = BigIntegerField()
    updated_at = BigIntegerField()

    class Meta:
        table_name = "stock"
        indexes = ((("product", "warehouse"), True),)


class Adjustment(Frozen):
    id = CharField(max_length=40, primary_key=True)
    tenant = ForeignKeyField(Tenant, on_delete="CASCADE", index=False)
    product = ForeignKeyField(Product, on_delete="CASCADE", index=False)
    sku = CharField(max_length=64)
    warehouse = ForeignKeyField(Warehouse, on_delete="CASCADE", index=False)
    stock = ForeignKeyField(Stock, on_delete="CASCADE", index=False)
    sequence = BigIntegerField()
    quantity_type = CharField(max_length=8)
    before_quantity = BigIntegerField()
    after_quantity = BigIntegerField()
    delta = BigIntegerField()
    reason = CharField(max_length=32)
    note = TextField(null=True)
    reference = CharField(max_length=200, null=True)
    created_by = CharField(max_length=320, null=True)
    created_at = BigIntegerField()

    class Meta:
        table_name = "adjustment"
        indexes = (
            (("stock", "sequence"), True),
            (("tenant", "product", "created_at", "id"), False),
        )


class Reservation(Frozen):
    id = CharField(max_length=40, primary_key=True)
    tenant = ForeignKeyField(Tenant, on_delete="CASCADE", index=False)
    reference = CharField(max_length=200)
    product = ForeignKeyField(Product, on_delete="CASCADE", index=False)
    sku = CharField(max_length=64)
    warehouse = ForeignKeyField(Warehouse, on_delete="CASCADE", index=False)
    quantity = BigIntegerField()
    consumed = BigIntegerField()
    released = BigIntegerField()
    created_at = BigIntegerField()
    updated_at = BigIntegerField()

    class Meta:
        table_name = "reservation"
        indexes = ((("tenant", "reference", "product", "warehouse"), True),)


MODELS = [Warehouse, InventorySummary, Stock, Adjustment, Reservation]


def up(migrator, db):
    with db.bind_ctx(MODELS):
        db.create_tables(MODELS)
