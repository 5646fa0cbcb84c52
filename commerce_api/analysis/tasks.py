"""The analysis job types (not built yet: they fail with JOB_TYPE_NOT_IMPLEMENTED)."""

import marshmallow as ma

from ..jobs.registry import declare_job_type
from ..jobs.schemas import MARKETPLACE, StrictSchema, skus_field


class ReviewSentimentParams(StrictSchema):
    skus = skus_field(required=False, maximum=1000)
    marketplace = ma.fields.String(validate=MARKETPLACE)
    since = ma.fields.AwareDateTime(metadata={"description": "Only reviews since this time."})


class ReturnClassifyParams(StrictSchema):
    skus = skus_field(required=False, maximum=1000)
    marketplace = ma.fields.String(validate=MARKETPLACE)
    start_date = ma.fields.Date()
    end_date = ma.fields.Date()

    @ma.validates_schema
    def _dates(self, data, **kwargs):
        if (
            data.get("start_date")
            and data.get("end_date")
            and data["start_date"] > data["end_date"]
        ):
            raise ma.ValidationError("Must not be after end_date.", "start_date")


class LlmVisibilityScoreParams(StrictSchema):
    skus = skus_field(required=True, maximum=100)
    queries = ma.fields.List(
        ma.fields.String(validate=ma.validate.Length(min=1, max=500)),
        validate=ma.validate.Length(min=1, max=20),
    )
    assistants = ma.fields.List(
        ma.fields.String(validate=ma.validate.Length(min=1, max=64)),
        validate=ma.validate.Length(min=1, max=10),
    )


class ListingOptimizeParams(StrictSchema):
    skus = skus_field(required=True, maximum=100)
    marketplace = ma.fields.String(validate=MARKETPLACE)


declare_job_type("review_sentiment", params=ReviewSentimentParams, typical_seconds=75)
declare_job_type("return_classify", params=ReturnClassifyParams, typical_seconds=55)
declare_job_type("llm_visibility_score", params=LlmVisibilityScoreParams, typical_seconds=180)
declare_job_type("listing_optimize", params=ListingOptimizeParams, typical_seconds=75)
