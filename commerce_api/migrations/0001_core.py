"""Tenants, API keys and the event outbox."""

from peewee import BigIntegerField, CharField, ForeignKeyField, IntegerField, TextField

from commerce_api.migrations.frozen import Frozen


# The tables as this migration creates them, frozen: see migrations/frozen.py.
class Tenant(Frozen):
    id = CharField(max_length=36, primary_key=True)
    name = CharField(max_length=200)
    plan = CharField(max_length=20)
    auth_version = IntegerField()
    created_at = BigIntegerField()

    class Meta:
        table_name = "tenant"


class ApiKey(Frozen):
    id = CharField(max_length=40, primary_key=True)
    tenant = ForeignKeyField(Tenant, on_delete="CASCADE")
    name = CharField(max_length=200)
    key_hash = CharField(max_length=64, unique=True)
    key_prefix = CharField(max_length=16)
    scopes = TextField()
    allowed_ips = TextField(null=True)
    expires_at = BigIntegerField(null=True)
    revoked_at = BigIntegerField(null=True)
    rate_limit_per_minute = IntegerField(null=True)
    rate_limit_per_hour = IntegerField(null=True)
    created_at = BigIntegerField()
    last_used_at = BigIntegerField(null=True)

    class Meta:
        table_name = "api_key"


class Event(Frozen):
    id = CharField(max_length=40, primary_key=True)
    tenant_id = CharField(max_length=36)
    type = CharField(max_length=64)
    resource_type = CharField(max_length=32)
    resource_id = CharField(max_length=80)
    data = TextField()
    created_at = BigIntegerField()

    class Meta:
        table_name = "event"
        indexes = ((("tenant_id", "created_at"), False),)


MODELS = [Tenant, ApiKey, Event]


def up(migrator, db):
    with db.bind_ctx(MODELS):
        db.create_tables(MODELS)
