"""Marketplace connections, the sync history, the sandbox's state and order returns."""

from peewee import (
    AutoField,
    BigIntegerField,
    BooleanField,
    CharField,
    ForeignKeyField,
    IntegerField,
    TextField,
)

from commerce_api.migrations.frozen import Frozen, stub

# The tables as this migration creates them, frozen: see migrations/frozen.py.

# Created by an earlier migration; only the key is referenced:
Tenant = stub("tenant", 36)
Order = stub("order", 40)


class MarketplaceConnection(Frozen):
    id = CharField(max_length=40, primary_key=True)
    tenant = ForeignKeyField(Tenant, on_delete="CASCADE", index=False)
    marketplace = CharField(max_length=64)
    connector = CharField(max_length=16)
    base_url = CharField(max_length=2048, null=True)
    api_token = TextField(null=True)
    allow_private = BooleanField()
    status = CharField(max_length=16)
    settings = TextField()
    state = TextField()
    pull_cursor = TextField(null=True)
    last_pull_at = BigIntegerField(null=True)
    last_pull_status = CharField(max_length=16, null=True)
    last_pull_error = TextField(null=True)
    created_by = CharField(max_length=320, null=True)
    created_at = BigIntegerField()
    updated_at = BigIntegerField()

    class Meta:
        table_name = "marketplace_connection"
        indexes = (
            (("tenant", "marketplace"), True),
            (("tenant", "created_at", "id"), False),
        )


class SyncAttempt(Frozen):
    id = CharField(max_length=40, primary_key=True)
    tenant = ForeignKeyField(Tenant, on_delete="CASCADE", index=False)
    connection_id = CharField(max_length=40, null=True)
    marketplace = CharField(max_length=64)
    resource_type = CharField(max_length=16)
    resource_id = CharField(max_length=80)
    sku = CharField(max_length=64, null=True)
    operation = CharField(max_length=32)
    direction = CharField(max_length=8)
    status = CharField(max_length=16)
    error_code = CharField(max_length=64, null=True)
    error_message = TextField(null=True)
    details = TextField(null=True)
    duration_ms = IntegerField(null=True)
    created_by = CharField(max_length=320, null=True)
    created_at = BigIntegerField()

    class Meta:
        table_name = "sync_attempt"
        indexes = (
            (("tenant", "resource_type", "resource_id", "created_at"), False),
            (("tenant", "created_at", "id"), False),
        )


class SandboxOrder(Frozen):
    id = AutoField()
    connection_id = CharField(max_length=40)
    external_order_id = CharField(max_length=200)
    sequence = IntegerField()
    revision = BigIntegerField()
    status = CharField(max_length=16)
    fulfillment_method = CharField(max_length=3)
    payload = TextField()
    created_at = BigIntegerField()
    updated_at = BigIntegerField()

    class Meta:
        table_name = "sandbox_order"
        indexes = (
            (("connection_id", "external_order_id"), True),
            (("connection_id", "revision"), False),
        )


class OrderReturn(Frozen):
    id = CharField(max_length=40, primary_key=True)
    order = ForeignKeyField(Order, on_delete="CASCADE")
    tenant = ForeignKeyField(Tenant, on_delete="CASCADE", index=False)
    dedupe_key = CharField(max_length=64)
    sku = CharField(max_length=64)
    quantity = IntegerField()
    reason = CharField(max_length=64, null=True)
    reason_text = TextField(null=True)
    returned_at = BigIntegerField()
    created_at = BigIntegerField()

    class Meta:
        table_name = "order_return"
        indexes = (
            (("order", "dedupe_key"), True),
            (("tenant", "created_at"), False),
        )


MODELS = [MarketplaceConnection, SyncAttempt, SandboxOrder, OrderReturn]


def up(migrator, db):
    with db.bind_ctx(MODELS):
        db.create_tables(MODELS)
