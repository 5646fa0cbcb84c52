"""Marketplace connections, the sync history and the sandbox marketplace's own state."""

from peewee import (
    AutoField,
    BigIntegerField,
    BooleanField,
    CharField,
    CompositeKey,
    FloatField,
    ForeignKeyField,
    IntegerField,
    TextField,
)

from ..auth.models import Tenant
from ..crypto import EncryptedTextField
from ..db import BaseModel, JSONField
from ..timeutil import now_ms

CONNECTORS = ("sandbox", "http", "amazon", "shopify")
CONNECTION_STATUSES = ("active", "disabled")
ATTEMPT_STATUSES = ("succeeded", "rejected", "unavailable", "failed")


class MarketplaceConnection(BaseModel):
    """One marketplace connected for one tenant, and how to reach it."""

    id = CharField(primary_key=True, max_length=40)
    tenant = ForeignKeyField(Tenant, on_delete="CASCADE", index=False)
    marketplace = CharField(max_length=64)
    connector = CharField(max_length=16)
    base_url = CharField(max_length=2048, null=True)
    api_token = EncryptedTextField(null=True)  # sent to the http marketplace; never shown
    # Connections made by the operator (CLI) may target private or loopback addresses;
    # those made through the API may not (a tenant must not reach our internal network).
    allow_private = BooleanField(default=False)
    status = CharField(max_length=16, default="active")
    # why an active connection cannot be used now: its secrets are unreadable (0052), or
    # the marketplace refused its credentials (AUTH: ..., 0060)
    status_reason = TextField(null=True)
    settings = JSONField(default=dict)
    state = JSONField(default=dict)  # connector-private state (the sandbox's counters)
    # a real marketplace's secrets (Amazon: LWA client id, secret, refresh token): an
    # encrypted JSON object, write-only through the API
    credentials = EncryptedTextField(null=True)
    pull_cursor = TextField(null=True)  # where the next order pull continues
    last_pull_at = BigIntegerField(null=True)
    last_pull_status = CharField(max_length=16, null=True)
    last_pull_error = TextField(null=True)
    created_by = CharField(max_length=320, null=True)
    created_at = BigIntegerField(default=now_ms)
    updated_at = BigIntegerField(default=now_ms)

    class Meta:
        table_name = "marketplace_connection"
        indexes = (
            (("tenant", "marketplace"), True),
            (("tenant", "created_at", "id"), False),
        )


class SyncAttempt(BaseModel):
    """One exchange with a marketplace about one order or product, successful or not."""

    id = CharField(primary_key=True, max_length=40)
    tenant = ForeignKeyField(Tenant, on_delete="CASCADE", index=False)
    connection_id = CharField(max_length=40, null=True)
    marketplace = CharField(max_length=64)
    resource_type = CharField(max_length=16)  # order, product
    resource_id = CharField(max_length=80)  # ord_..., prod_...
    sku = CharField(max_length=64, null=True)  # products: lets the history be found by SKU
    operation = CharField(max_length=32)
    direction = CharField(max_length=8, default="outbound")  # outbound push, inbound receipt
    status = CharField(max_length=16)
    error_code = CharField(max_length=64, null=True)
    error_message = TextField(null=True)
    details = JSONField(null=True)
    duration_ms = IntegerField(null=True)
    created_by = CharField(max_length=320, null=True)
    created_at = BigIntegerField(default=now_ms)

    class Meta:
        table_name = "sync_attempt"
        indexes = (
            (("tenant", "resource_type", "resource_id", "created_at"), False),
            (("tenant", "created_at", "id"), False),
        )


class SandboxOrder(BaseModel):
    """An order the sandbox marketplace has emitted, as the marketplace sees it."""

    id = AutoField()
    connection_id = CharField(max_length=40)
    external_order_id = CharField(max_length=200)
    sequence = IntegerField()
    revision = BigIntegerField()  # the connection's change counter at its last change
    status = CharField(max_length=16)
    fulfillment_method = CharField(max_length=3)
    payload = JSONField()  # the order in the import shape, as pulls return it
    created_at = BigIntegerField(default=now_ms)
    updated_at = BigIntegerField(default=now_ms)

    class Meta:
        table_name = "sandbox_order"
        indexes = (
            (("connection_id", "external_order_id"), True),
            (("connection_id", "revision"), False),
        )


class RateBudget(BaseModel):
    """One token bucket per connection and marketplace operation, shared by every worker
    process (``budgets``): the operation's usage plan, fleet-wide."""

    connection_id = CharField(max_length=40)
    operation = CharField(max_length=64)
    tokens = FloatField()
    rate = FloatField()  # tokens per second
    burst = FloatField()
    updated_at = FloatField()  # epoch seconds of the last refill
    # priced calls (Shopify): the points drawn and not answered yet, and the number of the
    # newest draw (migration 0120)
    in_flight = FloatField(default=0.0)
    draws = IntegerField(default=0)

    class Meta:
        table_name = "marketplace_rate_budget"
        primary_key = CompositeKey("connection_id", "operation")
