"""Pricing rules, price recommendations and competitor offers (history and latest)."""

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

from ..auth.models import Tenant
from ..db import BaseModel, JSONField, MoneyField
from ..timeutil import now_ms

RULE_TYPES = ("floor", "ceiling", "competitor_match", "buy_box_target", "margin_target")
VALUE_TYPES = ("fixed", "percent")
APPLIES_TO = ("all", "category", "sku")
RECOMMENDATION_STATUSES = ("pending", "applied", "dismissed")


class PricingRule(BaseModel):
    id = CharField(primary_key=True, max_length=40)
    tenant = ForeignKeyField(Tenant, on_delete="CASCADE", index=False)
    name = CharField(max_length=200)
    type = CharField(max_length=32)
    value = MoneyField()  # a price or a percentage, two places
    value_type = CharField(max_length=16)
    applies_to = CharField(max_length=16)
    category = CharField(max_length=100, null=True)
    skus = JSONField(null=True)  # list of SKUs when applies_to is "sku"
    marketplace = CharField(max_length=64)  # an identifier or "all"
    priority = IntegerField()
    is_active = BooleanField(default=True)
    created_at = BigIntegerField(default=now_ms)
    updated_at = BigIntegerField(default=now_ms)

    class Meta:
        table_name = "pricing_rule"
        indexes = (
            (("tenant", "created_at", "id"), False),
            (("tenant", "type", "priority"), False),
        )


class Recommendation(BaseModel):
    id = CharField(primary_key=True, max_length=40)
    tenant = ForeignKeyField(Tenant, on_delete="CASCADE", index=False)
    job_id = CharField(max_length=40, null=True)
    sku = CharField(max_length=64)
    marketplace = CharField(max_length=64)
    current_price = MoneyField()
    recommended_price = MoneyField()
    delta = MoneyField()
    delta_pct = DecimalField(max_digits=14, decimal_places=2, auto_round=True)
    buy_box_win_probability = FloatField()
    estimated_margin = DecimalField(max_digits=14, decimal_places=4, auto_round=True, null=True)
    confidence = FloatField()
    reasoning = TextField()
    rule_ids = JSONField(default=list)
    reference_price = MoneyField(null=True)
    status = CharField(max_length=16, default="pending")
    created_at = BigIntegerField(default=now_ms)
    updated_at = BigIntegerField(default=now_ms)
    applied_at = BigIntegerField(null=True)
    dismissed_at = BigIntegerField(null=True)
    # the listing's ``price_version`` it was computed from (migration 0055; null: older)
    listing_price_version = IntegerField(null=True)

    class Meta:
        table_name = "pricing_recommendation"
        indexes = (
            (("tenant", "created_at", "id"), False),
            (("tenant", "marketplace", "sku", "status"), False),
            (("tenant", "status", "created_at", "id"), False),
        )


class _OfferColumns(BaseModel):
    """One competitor's offer for one SKU on one marketplace, as the connector saw it."""

    id = CharField(primary_key=True, max_length=40)  # cpr_...
    tenant = ForeignKeyField(Tenant, on_delete="CASCADE", index=False)
    marketplace = CharField(max_length=64)
    sku = CharField(max_length=64)
    competitor = CharField(max_length=200)
    price = MoneyField()
    shipping = MoneyField()
    landed_price = MoneyField()
    currency = CharField(max_length=3)
    is_buy_box_winner = BooleanField(default=False)
    condition = CharField(max_length=32)
    observed_at = BigIntegerField()
    created_at = BigIntegerField(default=now_ms)  # when we stored it


class CompetitorOffer(_OfferColumns):
    """The history: every offer record ever fetched."""

    class Meta:
        table_name = "competitor_price"
        indexes = ((("tenant", "marketplace", "sku", "observed_at"), False),)


class CompetitorLatest(_OfferColumns):
    """The latest record of each competitor per (SKU, marketplace): what repricing reads."""

    class Meta:
        table_name = "competitor_price_latest"
        indexes = (
            (("tenant", "marketplace", "sku", "competitor"), True),
            (("tenant", "observed_at", "id"), False),
            (("tenant", "sku"), False),
        )
