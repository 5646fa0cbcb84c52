"""The pricing job types (not built yet: they fail with JOB_TYPE_NOT_IMPLEMENTED)."""

import marshmallow as ma

from ..jobs.registry import declare_job_type
from ..jobs.schemas import MARKETPLACE, StrictBoolean, StrictSchema, skus_field


class PricingRecalculateParams(StrictSchema):
    skus = skus_field(required=True, maximum=1000)
    marketplace = ma.fields.String(validate=MARKETPLACE)
    apply = StrictBoolean(load_default=False)


class CompetitorScanParams(StrictSchema):
    skus = skus_field(required=True, maximum=500)
    marketplace = ma.fields.String(validate=MARKETPLACE)


declare_job_type("pricing_recalculate", params=PricingRecalculateParams, typical_seconds=35)
declare_job_type("competitor_scan", params=CompetitorScanParams, typical_seconds=37)
