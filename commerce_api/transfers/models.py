"""A transfer moves stock from one own warehouse to another: ``draft -> in_transit ->
received | cancelled``.

Invariants (kept by ``services``, each step in one transaction with its ledger entries):
- a line's ``received_quantity + returned_quantity <= quantity``; while the transfer is
  ``in_transit`` the rest is in transit, counted in the destination stock row's
  ``incoming``;
- a ``received`` transfer has every line received in full; a ``cancelled`` one has nothing
  in transit (what was shipped and not received was returned to the source).
"""

from peewee import BigIntegerField, CharField, ForeignKeyField, IntegerField

from ..auth.models import Tenant
from ..db import BaseModel
from ..inventory.models import Warehouse
from ..products.models import Product
from ..timeutil import now_ms

TRANSFER_STATUSES = ("draft", "in_transit", "received", "cancelled")
MAX_LINES = 500


class Transfer(BaseModel):
    id = CharField(primary_key=True, max_length=40)
    tenant = ForeignKeyField(Tenant, on_delete="CASCADE", index=False)
    from_warehouse = ForeignKeyField(
        Warehouse, on_delete="CASCADE", index=False, backref="outgoing_transfers"
    )
    to_warehouse = ForeignKeyField(
        Warehouse, on_delete="CASCADE", index=False, backref="incoming_transfers"
    )
    status = CharField(max_length=16, default="draft")
    reference = CharField(max_length=200, null=True)
    created_by = CharField(max_length=320, null=True)
    created_at = BigIntegerField(default=now_ms)
    updated_at = BigIntegerField(default=now_ms)
    shipped_at = BigIntegerField(null=True)
    received_at = BigIntegerField(null=True)
    cancelled_at = BigIntegerField(null=True)

    class Meta:
        table_name = "transfer"


class TransferLine(BaseModel):
    id = CharField(primary_key=True, max_length=40)
    transfer = ForeignKeyField(Transfer, on_delete="CASCADE", index=False, backref="lines")
    tenant = ForeignKeyField(Tenant, on_delete="CASCADE", index=False)
    product = ForeignKeyField(Product, on_delete="CASCADE", index=False)
    sku = CharField(max_length=64)
    position = IntegerField()
    quantity = BigIntegerField()
    received_quantity = BigIntegerField(default=0)
    returned_quantity = BigIntegerField(default=0)

    class Meta:
        table_name = "transfer_line"

    @property
    def outstanding(self) -> int:
        """Shipped (or to be shipped) and neither received nor returned."""
        return self.quantity - self.received_quantity - self.returned_quantity
