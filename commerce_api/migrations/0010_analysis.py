"""The analysis jobs' tables: the per-tenant review store."""

from peewee import (
    AutoField,
    BigIntegerField,
    CharField,
    DoubleField,
    ForeignKeyField,
    IntegerField,
    Model,
    TextField,
)

# The tables as this migration creates them on a new database, frozen here (no live
# model is imported): see migrations/__init__.py.
# JSON and encrypted fields are TEXT columns, money a DECIMAL(14, 2) (the live fields'
# column types); defaults are the code's, not the database's, and are left out.


class Frozen(Model):
    class Meta:
        legacy_table_names = False  # index names start with the table name, as the models'


class Tenant(Frozen):  # created by an earlier migration; only its key is referenced
    id = CharField(max_length=36, primary_key=True)

    class Meta:
        table_name = "tenant"


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
