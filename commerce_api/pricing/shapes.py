"""What a pricing rule, a price recommendation and a competitor offer look like in answers:
documented and serialized from here."""

import marshmallow as ma

from .models import APPLIES_TO, RECOMMENDATION_STATUSES, RULE_TYPES, VALUE_TYPES


class RuleSchema(ma.Schema):
    id = ma.fields.String(metadata={"example": "rule_01JD3Q9Z7G0000000000000000"})
    name = ma.fields.String()
    type = ma.fields.String(validate=ma.validate.OneOf(RULE_TYPES))
    value = ma.fields.Float()
    value_type = ma.fields.String(validate=ma.validate.OneOf(VALUE_TYPES))
    applies_to = ma.fields.String(validate=ma.validate.OneOf(APPLIES_TO))
    category = ma.fields.String(allow_none=True)
    skus = ma.fields.List(ma.fields.String(), allow_none=True)
    marketplace = ma.fields.String()
    priority = ma.fields.Integer()
    is_active = ma.fields.Boolean()
    created_at = ma.fields.DateTime(metadata={"example": "2026-11-22T10:04:05.123Z"})
    updated_at = ma.fields.DateTime()


class RecommendationSchema(ma.Schema):
    id = ma.fields.String(metadata={"example": "rec_01JD3Q9Z7G0000000000000000"})
    sku = ma.fields.String()
    marketplace = ma.fields.String()
    current_price = ma.fields.Float()
    recommended_price = ma.fields.Float()
    delta = ma.fields.Float()
    delta_pct = ma.fields.Float()
    buy_box_win_probability = ma.fields.Float()
    estimated_margin = ma.fields.Float(allow_none=True)
    confidence = ma.fields.Float()
    reasoning = ma.fields.String()
    status = ma.fields.String(validate=ma.validate.OneOf(RECOMMENDATION_STATUSES))
    reference_price = ma.fields.Float(allow_none=True)
    rule_ids = ma.fields.List(ma.fields.String())
    job_id = ma.fields.String(allow_none=True)
    created_at = ma.fields.DateTime()
    applied_at = ma.fields.DateTime(allow_none=True)
    dismissed_at = ma.fields.DateTime(allow_none=True)


class CompetitorPriceSchema(ma.Schema):
    id = ma.fields.String(metadata={"example": "cpr_01JD3Q9Z7G0000000000000000"})
    sku = ma.fields.String()
    marketplace = ma.fields.String()
    competitor = ma.fields.String()
    price = ma.fields.Float()
    shipping = ma.fields.Float()
    landed_price = ma.fields.Float()
    currency = ma.fields.String()
    is_buy_box_winner = ma.fields.Boolean()
    condition = ma.fields.String()
    observed_at = ma.fields.DateTime()
