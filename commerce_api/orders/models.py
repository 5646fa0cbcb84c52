"""Orders, their lines and their returns."""

from peewee import (
    AutoField,
    BigIntegerField,
    BooleanField,
    CharField,
    ForeignKeyField,
    IntegerField,
    TextField,
)

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
# Orders we fulfil from our own warehouses, so their stock is reserved while they are open.
RESERVING_METHODS = ("FBM", "FBS")
CANCELLATION_REASONS = (
    "customer_request",
    "out_of_stock",
    "pricing_error",
    "fraud_suspected",
    "other",
)


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
    has_returns = BooleanField(default=False)
    # An open FBM/FBS order whose lines could not all be reserved (not enough stock when
    # it arrived); the order is recorded all the same, see docs/decisions.md.
    stock_shortage = BooleanField(default=False)
    reserved = JSONField(default=dict)  # {sku: quantity} held for this order (reference = id)
    source = CharField(max_length=16, default="pull")  # pull, import
    created_at = BigIntegerField(default=now_ms)
    updated_at = BigIntegerField(default=now_ms)

    class Meta:
        indexes = (
            (("tenant", "marketplace", "external_order_id"), True),
            (("tenant", "placed_at", "id"), False),
            (("tenant", "updated_at", "id"), False),
            (("tenant", "status", "placed_at", "id"), False),
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
        indexes = (
            (("tenant", "sku"), False),
            (("order", "external_line_item_id"), True),
        )


class OrderReturn(BaseModel):
    """A return reported by the marketplace with its order (``ret_`` ids)."""

    id = CharField(primary_key=True, max_length=40)
    order = ForeignKeyField(Order, backref="returns", on_delete="CASCADE")
    tenant = ForeignKeyField(Tenant, on_delete="CASCADE", index=False)
    # what identifies the same return when the order arrives again (no external id)
    dedupe_key = CharField(max_length=64)
    sku = CharField(max_length=64)
    quantity = IntegerField()
    reason = CharField(max_length=64, null=True)
    reason_text = TextField(null=True)
    returned_at = BigIntegerField()  # the return's created_at in the API
    created_at = BigIntegerField(default=now_ms)

    class Meta:
        table_name = "order_return"
        indexes = (
            (("order", "dedupe_key"), True),
            (("tenant", "created_at"), False),
        )


class MarketplaceNotification(BaseModel):
    """A marketplace notification taken (its signature held), once per (connection, event
    id): a replayed one finds its row and queues nothing again."""

    id = AutoField()
    tenant_id = CharField(max_length=64)
    connection_id = CharField(max_length=64)
    event_id = CharField(max_length=200)
    topic = CharField(max_length=64)
    order_ids = JSONField()  # the external ids it named
    received_at = BigIntegerField(default=now_ms)

    class Meta:
        table_name = "marketplace_notification"
        indexes = ((("connection_id", "event_id"), True),)


class OrderPullRequest(BaseModel):
    """One order to pull now (a notification named it), claimed under a lease by a worker's
    ``order_notified_pull`` loop; one row per (connection, order): notifications of an
    order being pulled bump ``requested``, so it is pulled once more afterwards."""

    id = AutoField()
    tenant_id = CharField(max_length=64)
    connection_id = CharField(max_length=64)
    external_order_id = CharField(max_length=200)
    topic = CharField(max_length=64)  # of the latest notification
    requested = IntegerField(default=1)  # notifications so far (the claim's fence)
    due_at = BigIntegerField()
    attempts = IntegerField(default=0)  # failed pulls in a row
    lease_until = BigIntegerField(null=True)
    holder = CharField(max_length=255, null=True)
    last_error = TextField(null=True)
    notified_at = BigIntegerField(default=now_ms)  # the first notification not yet pulled
    created_at = BigIntegerField(default=now_ms)

    class Meta:
        table_name = "order_pull_request"
        indexes = (
            (("connection_id", "external_order_id"), True),
            (("due_at",), False),
        )
