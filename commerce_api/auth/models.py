"""Tenants and API keys."""

from peewee import BigIntegerField, CharField, ForeignKeyField, IntegerField, TextField

from ..db import BaseModel, JSONField
from ..timeutil import now_ms

PLANS = ("starter", "growth", "enterprise")

SCOPES = (
    "products:read",
    "products:write",
    "orders:read",
    "orders:write",
    "inventory:read",
    "inventory:write",
    "pricing:read",
    "pricing:write",
    "ai-jobs:read",
    "ai-jobs:write",
    "marketplaces:read",
    "marketplaces:write",
    "webhooks:read",
    "webhooks:write",
    "api-keys:read",
    "api-keys:write",
)
# What an API key made with ``--scopes all`` holds: every scope, present and future (a
# scope added later needs no change to the key). Only API keys can hold it.
ALL_SCOPES = "all"


class Tenant(BaseModel):
    id = CharField(primary_key=True, max_length=36)  # a UUID, as X-Tenant-ID carries it
    name = CharField(max_length=200)
    plan = CharField(max_length=20, default="starter")
    # Bumped with every change to the tenant's keys or plan, in the same transaction: each
    # request reads it (one primary-key read), so a process's cached key row is dropped
    # the moment it is out of date, on every process and host.
    auth_version = IntegerField(default=0)
    created_at = BigIntegerField(default=now_ms)


class ApiKey(BaseModel):
    id = CharField(primary_key=True, max_length=40)
    tenant = ForeignKeyField(Tenant, backref="api_keys", on_delete="CASCADE")
    name = CharField(max_length=200)
    key_hash = CharField(max_length=64, unique=True)
    key_prefix = CharField(max_length=16)  # the first characters, to recognise a key in lists
    scopes = TextField()  # space-separated
    allowed_ips = JSONField(null=True)  # list of CIDRs
    expires_at = BigIntegerField(null=True)
    revoked_at = BigIntegerField(null=True)
    rate_limit_per_minute = IntegerField(null=True)
    rate_limit_per_hour = IntegerField(null=True)
    created_at = BigIntegerField(default=now_ms)
    # when the key last authenticated a request; written at most once a minute (migration 0035)
    last_used_at = BigIntegerField(null=True)
