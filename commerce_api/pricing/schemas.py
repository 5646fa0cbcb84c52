"""Pricing request and response schemas."""

import marshmallow as ma

from ..http.lists import (
    FieldsArgsSchema,
    ListArgsSchema,
    envelope_schema,
    fields_arg,
    list_schema,
)
from ..http.schemas import FullMatch, StrictBoolean, StrictDecimal, StrictInteger, StrictSchema
from ..shapes import field_names
from .models import APPLIES_TO, RECOMMENDATION_STATUSES, RULE_TYPES, VALUE_TYPES
from .recommendations import RECOMMENDATION_FIELDS
from .rules import RULE_FIELDS
from .shapes import CompetitorPriceSchema, RecommendationSchema, RuleSchema

COMPETITOR_FIELDS = field_names(CompetitorPriceSchema)

SKU_PATTERN = r"^[A-Za-z0-9._-]{1,64}$"
MAX_RULE_SKUS = 1000
MAX_RECALCULATE_SKUS = 10_000

SKU = ma.fields.String(
    validate=FullMatch(SKU_PATTERN, error="1-64 of A-Z a-z 0-9 . _ -"),
)
MARKETPLACE = ma.validate.Length(min=1, max=64)


# Rules ----------------------------------------------------------------------------------


class RuleWritableFields(StrictSchema):
    name = ma.fields.String(validate=ma.validate.Length(min=1, max=200))
    type = ma.fields.String(validate=ma.validate.OneOf(RULE_TYPES))
    value = StrictDecimal(
        places=2,
        metadata={
            "description": "A price (`fixed`) or a percentage (`percent`); negative values "
            "undercut for `competitor_match` and `buy_box_target`.",
            "example": -0.5,
        },
    )
    value_type = ma.fields.String(validate=ma.validate.OneOf(VALUE_TYPES))
    applies_to = ma.fields.String(validate=ma.validate.OneOf(APPLIES_TO))
    category = ma.fields.String(allow_none=True, validate=ma.validate.Length(min=1, max=100))
    skus = ma.fields.List(
        SKU,
        allow_none=True,
        validate=ma.validate.Length(min=1, max=MAX_RULE_SKUS),
        metadata={"description": "1 to 1,000 SKUs; with `applies_to` = `sku` only."},
    )
    marketplace = ma.fields.String(
        validate=MARKETPLACE,
        metadata={"description": "`all` or a marketplace the tenant has connected."},
    )
    priority = StrictInteger(
        validate=ma.validate.Range(min=0, max=1000),
        metadata={"description": "0-1000; the highest matching rule decides."},
    )
    is_active = StrictBoolean()


class RuleCreateSchema(RuleWritableFields):
    name = ma.fields.String(required=True, validate=ma.validate.Length(min=1, max=200))
    type = ma.fields.String(
        required=True,
        validate=ma.validate.OneOf(RULE_TYPES),
        metadata={"description": ", ".join(f"`{name}`" for name in RULE_TYPES)},
    )
    value = StrictDecimal(places=2, required=True, metadata={"example": -0.5})
    value_type = ma.fields.String(load_default="fixed", validate=ma.validate.OneOf(VALUE_TYPES))
    applies_to = ma.fields.String(load_default="all", validate=ma.validate.OneOf(APPLIES_TO))
    marketplace = ma.fields.String(load_default="all", validate=MARKETPLACE)
    priority = StrictInteger(load_default=100, validate=ma.validate.Range(min=0, max=1000))
    is_active = StrictBoolean(load_default=True)


class RuleUpdateSchema(RuleWritableFields):
    """Only the fields present change."""


class RuleListArgsSchema(ListArgsSchema):
    fields = fields_arg(RULE_FIELDS)
    type = ma.fields.String(validate=ma.validate.OneOf(RULE_TYPES))
    marketplace = ma.fields.String(
        validate=MARKETPLACE,
        metadata={"description": "Exact match; `all` finds the rules for every marketplace."},
    )
    is_active = ma.fields.Boolean()
    sort = ma.fields.String(
        load_default="created_at", validate=ma.validate.OneOf(["created_at", "priority"])
    )


class RuleFieldsArgsSchema(FieldsArgsSchema):
    fields = fields_arg(RULE_FIELDS)


RuleEnvelopeSchema = envelope_schema("RuleEnvelopeSchema", RuleSchema)


RuleListSchema = list_schema("RuleListSchema", RuleSchema)


# Recalculation --------------------------------------------------------------------------


class RecalculateSchema(StrictSchema):
    skus = ma.fields.List(
        SKU,
        validate=ma.validate.Length(min=1, max=MAX_RECALCULATE_SKUS),
        metadata={"description": "1 to 10,000 SKUs; omitted: every SKU listed there."},
    )
    marketplace = ma.fields.String(required=True, validate=MARKETPLACE)
    apply = StrictBoolean(
        load_default=False,
        metadata={"description": "Apply every recommendation at once (default false)."},
    )


class RecalculateResultSchema(ma.Schema):
    job_id = ma.fields.String()
    status = ma.fields.String()
    sku_count = ma.fields.Integer()
    estimated_completion_seconds = ma.fields.Integer()


RecalculateEnvelopeSchema = envelope_schema("RecalculateEnvelopeSchema", RecalculateResultSchema)


# Recommendations ------------------------------------------------------------------------


class RecommendationListArgsSchema(ListArgsSchema):
    fields = fields_arg(RECOMMENDATION_FIELDS)
    status = ma.fields.String(validate=ma.validate.OneOf(RECOMMENDATION_STATUSES))
    marketplace = ma.fields.String(validate=MARKETPLACE)
    sku = ma.fields.String(validate=ma.validate.Length(min=1, max=64))
    min_confidence = ma.fields.Float(
        allow_nan=False,
        validate=ma.validate.Range(min=0, max=1),
        metadata={"description": "0.0-1.0"},
    )


class RecommendationFieldsArgsSchema(FieldsArgsSchema):
    fields = fields_arg(RECOMMENDATION_FIELDS)


RecommendationEnvelopeSchema = envelope_schema("RecommendationEnvelopeSchema", RecommendationSchema)


RecommendationListSchema = list_schema("RecommendationListSchema", RecommendationSchema)


# Competitor prices ----------------------------------------------------------------------


class CompetitorListArgsSchema(ListArgsSchema):
    fields = fields_arg(COMPETITOR_FIELDS)
    sku = ma.fields.String(validate=ma.validate.Length(min=1, max=64))
    marketplace = ma.fields.String(validate=MARKETPLACE)


CompetitorListSchema = list_schema("CompetitorListSchema", CompetitorPriceSchema)
