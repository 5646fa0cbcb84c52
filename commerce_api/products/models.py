"""Products and their per-marketplace listings."""

from peewee import (
    BigIntegerField,
    CharField,
    DecimalField,
    ForeignKeyField,
    IntegerField,
    TextField,
)

from ..auth.models import Tenant
from ..db import BaseModel, JSONField, MoneyField
from ..timeutil import now_ms

PRODUCT_STATUSES = ("active", "inactive", "draft", "archived")


class Product(BaseModel):
    id = CharField(primary_key=True, max_length=40)
    tenant = ForeignKeyField(Tenant, on_delete="CASCADE", index=False)
    sku = CharField(max_length=64)
    title = CharField(max_length=500)
    description = TextField(null=True)
    status = CharField(max_length=16, default="draft")
    gtin = CharField(max_length=14, null=True)
    category = CharField(max_length=100, null=True)
    cost_price = MoneyField(null=True)
    weight_kg = DecimalField(max_digits=12, decimal_places=3, auto_round=True, null=True)
    images = JSONField(default=list)
    created_at = BigIntegerField(default=now_ms)
    updated_at = BigIntegerField(default=now_ms)

    class Meta:
        indexes = (
            (("tenant", "sku"), True),
            (("tenant", "created_at", "id"), False),
            (("tenant", "updated_at", "id"), False),
            (("tenant", "title", "id"), False),
            (("tenant", "status", "created_at", "id"), False),
            (("tenant", "gtin"), False),
        )


LISTING_STATUSES = ("active", "inactive")
SYNC_STATUSES = ("in_sync", "pending", "error")


class Listing(BaseModel):
    """A product's listing on one marketplace, and how far the marketplace has caught up.

    The listing's desired state is its ``price``, ``status``, ``stock_buffer`` and the
    product's content and stock; every change of it bumps ``version`` and makes the
    listing ``pending`` in the changing transaction. The push service (``marketplaces``)
    claims pending listings under a lease, pushes the latest state and records the outcome:
    ``synced_version`` is the version the marketplace last accepted.
    """

    id = CharField(primary_key=True, max_length=40)
    tenant = ForeignKeyField(Tenant, on_delete="CASCADE", index=False)
    product = ForeignKeyField(Product, backref="listings", on_delete="CASCADE", index=False)
    marketplace = CharField(max_length=64)
    external_id = CharField(max_length=200, null=True)
    price = MoneyField(null=True)
    currency = CharField(max_length=3, null=True)
    quantity = IntegerField(default=0)  # the quantity the marketplace last accepted
    status = CharField(max_length=32, default="active")
    last_synced_at = BigIntegerField(null=True)
    created_at = BigIntegerField(default=now_ms)
    updated_at = BigIntegerField(default=now_ms)
    stock_buffer = IntegerField(default=0)
    sync_status = CharField(max_length=16, default="in_sync")
    version = IntegerField(default=0)
    synced_version = IntegerField(default=0)
    last_sync_error = TextField(null=True)
    next_push_at = BigIntegerField(null=True)  # a pending listing is due from then on
    push_failures = IntegerField(default=0)  # unavailable answers in a row (backoff)
    lease_until = BigIntegerField(null=True)  # a push is under way until then
    lease_token = CharField(max_length=80, null=True)
    # grows with every price the listing takes (migration 0055): a price push computed
    # from an older one is outdated (pricing.applying)
    price_version = IntegerField(default=0)
    pushing_version = IntegerField(null=True)  # the intent: the version being pushed

    class Meta:
        indexes = (
            (("product", "marketplace"), True),
            (("tenant", "marketplace"), False),
        )
