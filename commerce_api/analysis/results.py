"""The results of the analysis job types, as the OpenAPI document shows them.

Each job type in ``tasks.py`` registers its result schema (``job_type(result=...)``); the
document lists them under ``JobResult_<type>``, and ``tests/test_demo_results.py`` loads
every result the demo gives through them (unknown fields refused). The worker stores each
result through its schema's compiled shape (``shapes.compile_shape``): a field the document
requires is always there (an empty list or object when the job had none), so a result
cannot drift from its document.
"""

import marshmallow as ma

N = ma.fields.Float
NULLABLE = {"allow_none": True}


def _nested_list(schema, **kwargs):
    return ma.fields.List(ma.fields.Nested(schema), **kwargs)


# review_sentiment -----------------------------------------------------------------------


class _Overall(ma.Schema):
    positive = ma.fields.Integer()
    neutral = ma.fields.Integer()
    negative = ma.fields.Integer()
    average_score = N(**NULLABLE)


class _Aspect(ma.Schema):
    aspect = ma.fields.String()
    mentions = ma.fields.Integer()
    average_score = N(**NULLABLE)


class _SkuSentiment(ma.Schema):
    sku = ma.fields.String()
    review_count = ma.fields.Integer()
    average_score = N(**NULLABLE)
    label = ma.fields.String(validate=ma.validate.OneOf(("positive", "neutral", "negative")))
    average_rating = N(**NULLABLE)
    rating_mismatch_count = ma.fields.Integer()
    aspects = _nested_list(_Aspect)


class _ScoredReview(ma.Schema):
    id = ma.fields.String()
    sku = ma.fields.String()
    rating = ma.fields.Integer(**NULLABLE)
    title = ma.fields.String(**NULLABLE)
    text = ma.fields.String()
    score = N(metadata={"description": "In [-1, 1]."})
    label = ma.fields.String(validate=ma.validate.OneOf(("positive", "neutral", "negative")))
    rating_mismatch = ma.fields.Boolean(
        metadata={"description": "1-2 stars with a positive text, or 4-5 with a negative one."}
    )
    aspects = ma.fields.List(ma.fields.String())


class ReviewSentimentResult(ma.Schema):
    review_count = ma.fields.Integer()
    new_review_count = ma.fields.Integer()
    skipped_count = ma.fields.Integer()
    sources = ma.fields.List(ma.fields.String())
    overall = ma.fields.Nested(_Overall)
    rating_mismatch_count = ma.fields.Integer()
    by_sku = _nested_list(_SkuSentiment)
    reviews = _nested_list(_ScoredReview)
    reviews_truncated = ma.fields.Boolean()


# return_classify ------------------------------------------------------------------------


class _ClassifiedReturn(ma.Schema):
    id = ma.fields.String()
    order_id = ma.fields.String()
    sku = ma.fields.String()
    quantity = ma.fields.Integer()
    reason = ma.fields.String(**NULLABLE)
    category = ma.fields.String()
    confidence = N()
    returned_at = ma.fields.String()


class _SkuReturns(ma.Schema):
    sku = ma.fields.String()
    units_sold = ma.fields.Integer()
    units_returned = ma.fields.Integer()
    return_rate = N(**NULLABLE)
    top_category = ma.fields.String(**NULLABLE)
    categories = ma.fields.Dict(keys=ma.fields.String(), values=ma.fields.Integer())


class _Anomaly(ma.Schema):
    sku = ma.fields.String()
    kind = ma.fields.String(validate=ma.validate.OneOf(("high_return_rate", "return_spike")))
    return_rate = N(**NULLABLE)
    baseline_rate = N(**NULLABLE)
    score = N()
    p_value = N()
    q_value = N()
    units_sold = ma.fields.Integer(
        allow_none=True, metadata={"description": "high_return_rate: units sold (else null)."}
    )
    units_returned = ma.fields.Integer(
        allow_none=True, metadata={"description": "high_return_rate: units returned (else null)."}
    )
    week_start = ma.fields.String(
        allow_none=True,
        metadata={"description": "return_spike: the week's Monday (null for high_return_rate)."},
    )
    week_returns = ma.fields.Integer(
        allow_none=True, metadata={"description": "return_spike: units returned that week."}
    )
    weekly_median = N(
        allow_none=True, metadata={"description": "return_spike: the SKU's weekly median."}
    )
    message = ma.fields.String()


class ReturnClassifyResult(ma.Schema):
    return_count = ma.fields.Integer()
    units_sold = ma.fields.Integer()
    units_returned = ma.fields.Integer()
    baseline_rate = N(**NULLABLE)
    categories = ma.fields.Dict(keys=ma.fields.String(), values=ma.fields.Integer())
    returns = _nested_list(_ClassifiedReturn)
    returns_truncated = ma.fields.Boolean()
    by_sku = _nested_list(_SkuReturns)
    anomalies = _nested_list(_Anomaly)


# listing_optimize -----------------------------------------------------------------------


class _Issue(ma.Schema):
    code = ma.fields.String()
    field = ma.fields.String()
    severity = ma.fields.String(validate=ma.validate.OneOf(("error", "warning", "info")))
    message = ma.fields.String()
    evidence = ma.fields.Dict(
        metadata={
            "description": "The return and review figures behind an issue from those signals; "
            "empty for an issue found in the listing itself."
        }
    )


class _Keyword(ma.Schema):
    term = ma.fields.String()
    score = N()
    share = N(metadata={"description": "Share of the same kind's titles that use it."})


class _Suggestion(ma.Schema):
    kind = ma.fields.String(validate=ma.validate.OneOf(("title", "keywords")))
    field = ma.fields.String()
    message = ma.fields.String()
    changes = ma.fields.List(
        ma.fields.String(), metadata={"description": "`title`: what the proposed title changes."}
    )
    keywords = _nested_list(
        _Keyword, metadata={"description": "`keywords`: the terms to consider (else empty)."}
    )


class _Proposal(ma.Schema):
    sku = ma.fields.String()
    score = ma.fields.Integer(validate=ma.validate.Range(0, 100))
    issues = _nested_list(_Issue)
    proposed_title = ma.fields.String(**NULLABLE)
    suggestions = _nested_list(_Suggestion)


class ListingOptimizeResult(ma.Schema):
    profile = ma.fields.String()
    marketplace = ma.fields.String(**NULLABLE)
    proposals = _nested_list(_Proposal)
    skus_not_found = ma.fields.List(ma.fields.String())


# llm_visibility_score -------------------------------------------------------------------


class _Mention(ma.Schema):
    assistant = ma.fields.String()
    query = ma.fields.String()
    mentioned = ma.fields.Boolean()
    position = ma.fields.Integer(**NULLABLE)
    excerpt = ma.fields.String(**NULLABLE)
    match = ma.fields.String(validate=ma.validate.OneOf(("gtin", "sku", "title")), **NULLABLE)
    visibility = N()
    brand_mentioned = ma.fields.Boolean()


class _AssistantVisibility(ma.Schema):
    assistant = ma.fields.String()
    score = N()
    mention_rate = N()
    average_position = N(**NULLABLE)
    brand_mentions = ma.fields.Integer(
        metadata={"description": "Answers that named the brand but not the SKU asked about."}
    )


class _SkuVisibility(ma.Schema):
    sku = ma.fields.String()
    score = N()
    mention_rate = N()
    average_position = N(**NULLABLE)
    mentions = _nested_list(_Mention)


class LlmVisibilityScoreResult(ma.Schema):
    score = N(metadata={"description": "0-100."})
    mention_rate = N()
    average_position = N(**NULLABLE)
    answer_count = ma.fields.Integer()
    by_assistant = _nested_list(_AssistantVisibility)
    by_sku = _nested_list(_SkuVisibility)
    brand = ma.fields.String(**NULLABLE)
    skus_not_found = ma.fields.List(ma.fields.String())
