"""Orders and their lines (the Orders issue fills in the rest of this domain)."""

from peewee import BigIntegerField, CharField, ForeignKeyField, IntegerField

from ..auth.models import Tenant
from ..db import BaseModel, JSONField, MoneyField
from ..timeutil import now_ms

ORDER_STATUSES = (
    "pending",
    "confirmed",
    "processing",
    "shipped",
    "delivered",
    "completed",
    "cancelled",
)
OPEN_STATUSES = ("pending", "confirmed", "processing")
FULFILLMENT_METHODS = ("FBM", "FBA", "FBS")


class Order(BaseModel):
    id = CharField(primary_key=True, max_length=40)
    tenant = ForeignKeyField(Tenant, on_delete="CASCADE", index=False)
    connection_id = CharField(max_length=40, null=True)
    marketplace = CharField(max_length=64)
    external_order_id = CharField(max_length=200)
    status = CharField(max_length=16, default="pending")
    fulfillment_method = CharField(max_length=3, default="FBM")
    total_amount = MoneyField(default=0)
    currency = CharField(max_length=3, default="USD")
    placed_at = BigIntegerField()  # the API's created_at: when the order was placed
    shipping_address = JSONField(null=True)
    shipment = JSONField(null=True)
    cancellation = JSONField(null=True)
    has_returns = IntegerField(default=0)
    created_at = BigIntegerField(default=now_ms)
    updated_at = BigIntegerField(default=now_ms)

    class Meta:
        indexes = (
            (("tenant", "marketplace", "external_order_id"), True),
            (("tenant", "placed_at", "id"), False),
            (("tenant", "status", "placed_at"), False),
        )


class OrderLine(BaseModel):
    id = CharField(primary_key=True, max_length=40)
    order = ForeignKeyField(Order, backref="lines", on_delete="CASCADE")
    tenant = ForeignKeyField(Tenant, on_delete="CASCADE", index=False)
    position = IntegerField()
    external_line_item_id = CharField(max_length=200)
    sku = CharField(max_length=64)
    title = CharField(max_length=500, null=True)
    quantity = IntegerField()
    unit_price = MoneyField(default=0)
    line_total = MoneyField(default=0)
    shipped_quantity = IntegerField(default=0)

    class Meta:
        indexes = ((("tenant", "sku"), False),)
