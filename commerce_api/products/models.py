"""Products and their per-marketplace listings."""

from peewee import (
    AutoField,
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
# submitted: accepted by the marketplace for processing, its result awaited; held: never
# pushed as it is (no price yet); hold_reason in the API says why
SYNC_STATUSES = ("in_sync", "pending", "submitted", "error", "held")
HOLD_REASONS = ("price_missing",)
FULFILLED_BY = ("merchant", "marketplace")


class Listing(BaseModel):
    """A product's listing on one marketplace, and how far the marketplace has caught up.

    The listing's desired state is its ``price``, ``status``, its allocation (``stock_buffer``,
    ``max_quantity``, ``allocation_pct``, ``fixed_quantity``, ``warehouse_ids``) and the
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
    # allocation (DESIGN 14): a cap, a share of the stock, a fixed quantity, the own
    # warehouses that feed the listing (None: every active own one)
    max_quantity = IntegerField(null=True)
    allocation_pct = IntegerField(default=100)
    fixed_quantity = IntegerField(null=True)
    warehouse_ids = JSONField(null=True)
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
    # sync_status ``submitted``: a push the marketplace accepted for processing, whose
    # result is read later ({id, version, payload, ...}; marketplaces.submissions)
    submission = JSONField(null=True)
    # the marketplace-side ids the listing is pushed by besides ``external_id`` (Shopify:
    # product, variant, inventory item) and what the marketplace last took of it
    external_refs = JSONField(null=True)

    class Meta:
        indexes = (
            (("product", "marketplace"), True),
            (("tenant", "marketplace"), False),
        )


class BundleComponent(BaseModel):
    """One component of a bundle product: ``quantity`` units of ``component`` per bundle.

    A bundle holds no stock of its own (DESIGN 14): its availability is derived from its
    components', and its orders reserve, ship and release the components.
    """

    id = AutoField()
    tenant = ForeignKeyField(Tenant, on_delete="CASCADE", index=False)
    bundle = ForeignKeyField(Product, on_delete="CASCADE", index=False)
    component = ForeignKeyField(Product, on_delete="CASCADE")
    sku = CharField(max_length=64)  # the component's
    quantity = IntegerField()
    created_at = BigIntegerField(default=now_ms)

    class Meta:
        table_name = "bundle_component"
        indexes = ((("bundle", "component"), True),)
