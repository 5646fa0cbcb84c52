"""The analysis jobs' tables: the per-tenant review store."""

from peewee import (
    AutoField,
    BigIntegerField,
    CharField,
    DoubleField,
    ForeignKeyField,
    IntegerField,
    TextField,
)

from commerce_api.migrations.frozen import Frozen, stub

# The tables as this migration creates them, frozen: see migrations/frozen.py.

# Created by an earlier migration; only the key is referenced:
Tenant = stub("tenant", 36)


class Review(Frozen):
    id = AutoField()
    tenant = ForeignKeyField(Tenant, on_delete="CASCADE", index=False)
    source = CharField(max_length=64)
    external_id = CharField(max_length=200)
    sku = CharField(max_length=64)
    rating = IntegerField(null=True)
    title = TextField(null=True)
    text = TextField()
    content_hash = CharField(max_length=32)
    reviewed_at = BigIntegerField(null=True)
    score = DoubleField()
    label = CharField(max_length=8)
    aspects = TextField()
    scorer_version = CharField(max_length=16)
    scored_at = BigIntegerField()
    created_at = BigIntegerField()

    class Meta:
        table_name = "analysis_review"
        indexes = (
            (("tenant", "source", "external_id"), True),
            (("tenant", "sku"), False),
        )


MODELS = [Review]


def up(migrator, db):
    with db.bind_ctx(MODELS):
        db.create_tables(MODELS)
