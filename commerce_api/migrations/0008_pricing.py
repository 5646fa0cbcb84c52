"""Pricing: rules, recommendations, competitor offer history and the latest offer table."""

from peewee import (
    BigIntegerField,
    BooleanField,
    CharField,
    DecimalField,
    FloatField,
    ForeignKeyField,
    IntegerField,
    TextField,
)

from commerce_api.migrations.frozen import Frozen, stub

# The tables as this migration creates them, frozen: see migrations/frozen.py.

# Created by an earlier migration; only the key is referenced:
Tenant = stub("tenant", 36)


class PricingRule(Frozen):
    id = CharField(max_length=40, primary_key=True)
    tenant = ForeignKeyField(Tenant, on_delete="CASCADE", index=False)
    name = CharField(max_length=200)
    type = CharField(max_length=32)
    value = DecimalField(max_digits=14, decimal_places=2)
    value_type = CharField(max_length=16)
    applies_to = CharField(max_length=16)
    category = CharField(max_length=100, null=True)
    skus = TextField(null=True)
    marketplace = CharField(max_length=64)
    priority = IntegerField()
    is_active = BooleanField()
    created_at = BigIntegerField()
    updated_at = BigIntegerField()

    class Meta:
        table_name = "pricing_rule"
        indexes = (
            (("tenant", "created_at", "id"), False),
            (("tenant", "type", "priority"), False),
        )


class Recommendation(Frozen):
    id = CharField(max_length=40, primary_key=True)
    tenant = ForeignKeyField(Tenant, on_delete="CASCADE", index=False)
    job_id = CharField(max_length=40, null=True)
    sku = CharField(max_length=64)
    marketplace = CharField(max_length=64)
    current_price = DecimalField(max_digits=14, decimal_places=2)
    recommended_price = DecimalField(max_digits=14, decimal_places=2)
    delta = DecimalField(max_digits=14, decimal_places=2)
    delta_pct = DecimalField(max_digits=14, decimal_places=2)
    buy_box_win_probability = FloatField()
    estimated_margin = DecimalField(max_digits=14, decimal_places=4, null=True)
    confidence = FloatField()
    reasoning = TextField()
    rule_ids = TextField()
    reference_price = DecimalField(max_digits=14, decimal_places=2, null=True)
    status = CharField(max_length=16)
    created_at = BigIntegerField()
    updated_at = BigIntegerField()
    applied_at = BigIntegerField(null=True)
    dismissed_at = BigIntegerField(null=True)

    class Meta:
        table_name = "pricing_recommendation"
        indexes = (
            (("tenant", "created_at", "id"), False),
            (("tenant", "marketplace", "sku", "status"), False),
            (("tenant", "status", "created_at", "id"), False),
        )


class CompetitorOffer(Frozen):
    id = CharField(max_length=40, primary_key=True)
    tenant = ForeignKeyField(Tenant, on_delete="CASCADE", index=False)
    marketplace = CharField(max_length=64)
    sku = CharField(max_length=64)
    competitor = CharField(max_length=200)
    price = DecimalField(max_digits=14, decimal_places=2)
    shipping = DecimalField(max_digits=14, decimal_places=2)
    landed_price = DecimalField(max_digits=14, decimal_places=2)
    currency = CharField(max_length=3)
    is_buy_box_winner = BooleanField()
    condition = CharField(max_length=32)
    observed_at = BigIntegerField()
    created_at = BigIntegerField()

    class Meta:
        table_name = "competitor_price"
        indexes = ((("tenant", "marketplace", "sku", "observed_at"), False),)


class CompetitorLatest(Frozen):
    id = CharField(max_length=40, primary_key=True)
    tenant = ForeignKeyField(Tenant, on_delete="CASCADE", index=False)
    marketplace = CharField(max_length=64)
    sku = CharField(max_length=64)
    competitor = CharField(max_length=200)
    price = DecimalField(max_digits=14, decimal_places=2)
    shipping = DecimalField(max_digits=14, decimal_places=2)
    landed_price = DecimalField(max_digits=14, decimal_places=2)
    currency = CharField(max_length=3)
    is_buy_box_winner = BooleanField()
    condition = CharField(max_length=32)
    observed_at = BigIntegerField()
    created_at = BigIntegerField()

    class Meta:
        table_name = "competitor_price_latest"
        indexes = (
            (("tenant", "marketplace", "sku", "competitor"), True),
            (("tenant", "observed_at", "id"), False),
            (("tenant", "sku"), False),
        )


MODELS = [PricingRule, Recommendation, CompetitorOffer, CompetitorLatest]


def up(migrator, db):
    with db.bind_ctx(MODELS):
        db.create_tables(MODELS)
