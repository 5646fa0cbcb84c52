"""Warehouses, stock per (SKU, warehouse), the per-SKU inventory record, the ledger and
reservations.

Invariants (kept by ``ledger.StockLedger``, the only writer of quantities):
- for every stock row, ``on_hand`` is the sum of its ``on_hand`` adjustments' deltas and
  ``reserved`` the sum of its ``reserved`` adjustments' deltas; ``version`` is the number of
  its adjustments, and each adjustment carries its place in that chain (``sequence``);
- ``0 <= reserved <= on_hand`` on every row;
- an inventory record (``InventorySummary``) holds the totals of its SKU's stock rows and
  the status derived from them, updated in the same transaction as the rows.
"""

from peewee import BigIntegerField, BooleanField, CharField, ForeignKeyField, TextField

from ..auth.models import Tenant
from ..db import BaseModel
from ..products.models import Product
from ..timeutil import now_ms

MAX_QUANTITY = 1_000_000_000  # per stock row; far below the 64-bit columns
WAREHOUSE_TYPES = ("own", "FBA", "FBS")
MARKETPLACE_TYPES = ("FBA", "FBS")
INVENTORY_STATUSES = ("normal", "low", "critical", "out_of_stock")
QUANTITY_TYPES = ("on_hand", "reserved")
# Reasons an API caller may give for setting on_hand.
CALLER_REASONS = (
    "supplier_receipt",
    "cycle_count",
    "damage",
    "loss",
    "return_restock",
    "transfer_in",
    "transfer_out",
    "correction",
)
# Reasons only the system writes: shipments, marketplace reports, reservations.
SYSTEM_REASONS = ("sale", "marketplace_sync", "reservation", "release")
REASONS = CALLER_REASONS + SYSTEM_REASONS


class Warehouse(BaseModel):
    id = CharField(primary_key=True, max_length=40)
    tenant = ForeignKeyField(Tenant, on_delete="CASCADE", index=False)
    name = CharField(max_length=200)
    type = CharField(max_length=8, default="own")
    marketplace = CharField(max_length=64, null=True)
    address = TextField(null=True)
    is_active = BooleanField(default=True)
    created_at = BigIntegerField(default=now_ms)
    updated_at = BigIntegerField(default=now_ms)

    class Meta:
        indexes = ((("tenant", "created_at", "id"), False),)

    @property
    def is_readonly(self) -> bool:
        return self.type in MARKETPLACE_TYPES


class InventorySummary(BaseModel):
    """The inventory record of one SKU: totals over its stock rows, and its status."""

    product = ForeignKeyField(Product, primary_key=True, on_delete="CASCADE")
    tenant = ForeignKeyField(Tenant, on_delete="CASCADE", index=False)
    sku = CharField(max_length=64)
    total_on_hand = BigIntegerField(default=0)
    total_reserved = BigIntegerField(default=0)
    total_available = BigIntegerField(default=0)
    safety_stock = BigIntegerField(default=0)
    status = CharField(max_length=16, default="out_of_stock")
    created_at = BigIntegerField(default=now_ms)
    updated_at = BigIntegerField(default=now_ms)

    class Meta:
        table_name = "inventory_summary"
        indexes = (
            (("tenant", "sku"), True),
            (("tenant", "status", "sku"), False),
            (("tenant", "updated_at", "sku"), False),
            (("tenant", "total_available", "sku"), False),
        )


class Stock(BaseModel):
    """On hand and reserved quantities of one SKU in one warehouse."""

    id = CharField(primary_key=True, max_length=40)
    tenant = ForeignKeyField(Tenant, on_delete="CASCADE", index=False)
    product = ForeignKeyField(Product, on_delete="CASCADE", index=False)
    sku = CharField(max_length=64)
    warehouse = ForeignKeyField(Warehouse, on_delete="CASCADE")
    on_hand = BigIntegerField(default=0)
    reserved = BigIntegerField(default=0)
    # in transit into this warehouse (transfers shipped, not yet received or returned);
    # not part of on_hand, so not in the ledger: the transfer lines account for it
    incoming = BigIntegerField(default=0)
    version = BigIntegerField(default=0)  # the number of adjustments of this row
    last_adjusted_at = BigIntegerField(default=0)
    created_at = BigIntegerField(default=now_ms)
    updated_at = BigIntegerField(default=now_ms)

    class Meta:
        indexes = ((("product", "warehouse"), True),)


class Adjustment(BaseModel):
    """One change of one quantity (``on_hand`` or ``reserved``) of one stock row."""

    id = CharField(primary_key=True, max_length=40)
    tenant = ForeignKeyField(Tenant, on_delete="CASCADE", index=False)
    product = ForeignKeyField(Product, on_delete="CASCADE", index=False)
    sku = CharField(max_length=64)
    warehouse = ForeignKeyField(Warehouse, on_delete="CASCADE", index=False)
    stock = ForeignKeyField(Stock, on_delete="CASCADE", index=False)
    sequence = BigIntegerField()  # 1, 2, 3... per stock row: the ledger order
    quantity_type = CharField(max_length=8, default="on_hand")
    before_quantity = BigIntegerField()
    after_quantity = BigIntegerField()
    delta = BigIntegerField()
    reason = CharField(max_length=32)
    note = TextField(null=True)
    reference = CharField(max_length=200, null=True)
    created_by = CharField(max_length=320, null=True)
    created_at = BigIntegerField(default=now_ms)

    class Meta:
        indexes = (
            (("stock", "sequence"), True),
            (("tenant", "product", "created_at", "id"), False),
        )


class Reservation(BaseModel):
    """Stock held in one warehouse for one (reference, SKU), e.g. an order's line."""

    id = CharField(primary_key=True, max_length=40)
    tenant = ForeignKeyField(Tenant, on_delete="CASCADE", index=False)
    reference = CharField(max_length=200)
    product = ForeignKeyField(Product, on_delete="CASCADE", index=False)
    sku = CharField(max_length=64)
    warehouse = ForeignKeyField(Warehouse, on_delete="CASCADE", index=False)
    quantity = BigIntegerField()  # allocated
    consumed = BigIntegerField(default=0)  # shipped: turned into an on_hand decrease
    released = BigIntegerField(default=0)  # given back to available
    created_at = BigIntegerField(default=now_ms)
    updated_at = BigIntegerField(default=now_ms)

    class Meta:
        indexes = ((("tenant", "reference", "product", "warehouse"), True),)

    @property
    def remaining(self) -> int:
        return self.quantity - self.consumed - self.released
