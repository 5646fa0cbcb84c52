"""The analysis job types: review_sentiment, return_classify, listing_optimize and
llm_visibility_score."""

from typing import Any

import marshmallow as ma

from ..config import current_config
from ..errors import ApiError
from ..jobs.errors import JobFailed
from ..jobs.models import Job
from ..jobs.registry import job_type, register_marked
from ..jobs.runtime import JobContext
from ..jobs.schemas import MARKETPLACE, NotBlank, StrictSchema, skus_field
from .listing import optimize_listings
from .llm import (
    CONFIG_VARIABLES,
    ChatClient,
    LlmNotConfigured,
    LlmOutOfTime,
    LlmRejected,
    LlmSettings,
    LlmUnavailable,
)
from .results import (
    ListingOptimizeResult,
    LlmVisibilityScoreResult,
    ReturnClassifyResult,
    ReviewSentimentResult,
)
from .returns import analyze_returns
from .review_sentiment import run_review_sentiment, to_ms
from .visibility import DEFAULT_QUERY_COUNT, MAX_CALLS, job_deadline, score_visibility

MAX_INLINE_REVIEWS = 10_000


_not_blank = NotBlank("Must not be empty.")  # its pattern documents it


class InlineReviewSchema(StrictSchema):
    id = ma.fields.String(
        validate=ma.validate.Length(min=1, max=200),
        metadata={"description": "Your id of the review; recognises it in later jobs."},
    )
    sku = ma.fields.String(required=True, validate=ma.validate.Length(min=1, max=64))
    rating = ma.fields.Integer(strict=True, allow_none=True, validate=ma.validate.Range(1, 5))
    title = ma.fields.String(allow_none=True, validate=ma.validate.Length(max=500))
    text = ma.fields.String(
        required=True,
        validate=[ma.validate.Length(max=10_000), _not_blank],
    )


class ReviewSentimentParams(StrictSchema):
    skus = skus_field(required=False, maximum=1000)
    marketplace = ma.fields.String(validate=MARKETPLACE)
    since = ma.fields.AwareDateTime(metadata={"description": "Only reviews since this time."})
    reviews = ma.fields.List(
        ma.fields.Nested(InlineReviewSchema),
        validate=ma.validate.Length(min=1, max=MAX_INLINE_REVIEWS),
        metadata={"description": "Up to 10,000 reviews `{id?, sku, rating?, title?, text}`."},
    )

    @ma.validates_schema
    def _one_source(self, data, **kwargs):
        if "reviews" not in data:
            return
        for name in ("marketplace", "skus", "since"):
            if name in data:
                raise ma.ValidationError(
                    f"Inline reviews are analysed as given; {name} applies to marketplace "
                    "reviews only.",
                    name,
                )
        seen = {}
        for index, review in enumerate(data["reviews"]):
            if "id" in review and review["id"] in seen:
                raise ma.ValidationError(
                    {index: {"id": [f"Same id as review {seen[review['id']]}."]}}, "reviews"
                )
            seen.setdefault(review.get("id"), index)


class ReturnClassifyParams(StrictSchema):
    skus = skus_field(required=False, maximum=1000)
    marketplace = ma.fields.String(validate=MARKETPLACE)
    since = ma.fields.AwareDateTime(
        metadata={"description": "Only orders placed since this time, and their returns."}
    )


class LlmVisibilityScoreParams(StrictSchema):
    skus = skus_field(required=True, maximum=100)
    queries = ma.fields.List(
        ma.fields.String(validate=[ma.validate.Length(min=1, max=500), _not_blank]),
        validate=ma.validate.Length(min=1, max=20),
        metadata={
            "description": "Questions put to every assistant for every SKU (`{title}` and "
            "`{category}` are filled in); default: three built from title and category."
        },
    )
    assistants = ma.fields.List(
        ma.fields.String(validate=[ma.validate.Length(min=1, max=64), _not_blank]),
        validate=ma.validate.Length(min=1, max=10),
        metadata={"description": "Models to ask; default: COMMERCE_LLM_MODELS."},
    )
    brand = ma.fields.String(
        validate=[ma.validate.Length(min=1, max=100), _not_blank],
        metadata={"description": "Brand words to look for; default: the tenant's name."},
    )

    @ma.post_load
    def _configured(self, data, **kwargs):
        # refused at dispatch (DESIGN 8), not accepted to fail later in the worker; after
        # every params check, so that bad params are a VALIDATION_ERROR whatever the setup
        settings = LlmSettings.from_config(current_config())
        if not llm_configured(settings, data):
            raise ApiError(
                "LLM_NOT_CONFIGURED",
                str(LlmNotConfigured()),
                details={"variables": list(CONFIG_VARIABLES)},
            )
        return data

    @ma.validates_schema
    def _size(self, data, **kwargs):
        per_sku = len(data.get("queries") or ()) or DEFAULT_QUERY_COUNT
        calls = len(data.get("skus") or ()) * per_sku * len(data.get("assistants") or (1,))
        if calls > MAX_CALLS:
            raise ma.ValidationError(
                f"At most {MAX_CALLS} questions per job (skus x queries x assistants); "
                f"this asks {calls}.",
                "skus",
            )


class ListingOptimizeParams(StrictSchema):
    skus = skus_field(required=True, maximum=100)
    marketplace = ma.fields.String(validate=MARKETPLACE)


def llm_configured(settings: LlmSettings, params: dict[str, Any]) -> bool:
    """A base URL and a model to ask (``COMMERCE_LLM_MODELS`` or the job's ``assistants``)."""
    return bool(settings.base_url and (settings.models or params.get("assistants")))


@job_type(
    "listing_optimize",
    scope="products:read",
    params=ListingOptimizeParams,
    result=ListingOptimizeResult,
    typical_seconds=75,
    timeout=600,
)
def listing_optimize(job: Job, ctx: JobContext) -> dict[str, Any]:
    """Check the listings of ``skus`` against the marketplace's profile and propose fixes."""
    params = job.params or {}
    return optimize_listings(
        job.tenant_id, params["skus"], params.get("marketplace"), progress=ctx.progress
    )


@job_type(
    "llm_visibility_score",
    scope="products:read",
    params=LlmVisibilityScoreParams,
    result=LlmVisibilityScoreResult,
    typical_seconds=180,
    timeout=900,
)
def llm_visibility_score(job: Job, ctx: JobContext) -> dict[str, Any]:
    """Ask the configured assistants about the SKUs and score how visible they are.

    Unconfigured: fails at once with LLM_NOT_CONFIGURED (not retried). A provider that
    keeps failing (429, 5xx, network) after the per-request retries is a retryable failure;
    one that refuses the request (other 4xx) is not.
    """
    params = job.params or {}
    settings = LlmSettings.from_config(ctx.config)
    if not llm_configured(settings, params):  # queued before the provider was removed
        raise JobFailed("LLM_NOT_CONFIGURED", str(LlmNotConfigured()), retryable=False)
    client = ChatClient(settings)
    try:
        return score_visibility(
            job.tenant_id,
            params,
            client,
            settings.models,
            deadline=job_deadline(job.timeout_seconds),
            progress=ctx.progress,
            heartbeat=ctx.heartbeat,
        )
    except LlmRejected as error:
        raise JobFailed(
            "LLM_REQUEST_REJECTED", str(error), details={"status": error.status}
        ) from None
    except LlmUnavailable as error:
        raise JobFailed(
            "LLM_UNAVAILABLE",
            str(error),
            retryable=True,
            details={"status": error.status, "attempts": error.attempts},
        ) from None
    except LlmOutOfTime as error:
        raise JobFailed(
            "WORKER_TIMEOUT",
            f"{error} Ask fewer questions per job (skus x queries x assistants).",
        ) from None


@job_type(
    "review_sentiment",
    scope="products:read",
    params=ReviewSentimentParams,
    result=ReviewSentimentResult,
    typical_seconds=75,
    timeout=900,
)
def review_sentiment(job: Job, ctx: JobContext) -> dict[str, Any]:
    """Score the new reviews of the tenant's marketplaces (or the inline ones) and sum up
    every review in scope; a marketplace that cannot be reached is a retryable failure."""
    return run_review_sentiment(job.tenant_id, job.params or {}, ctx)


@job_type(
    "return_classify",
    scope="orders:read",
    params=ReturnClassifyParams,
    result=ReturnClassifyResult,
    typical_seconds=55,
    timeout=900,
)
def return_classify(job: Job, ctx: JobContext) -> dict[str, Any]:
    """Classify the returns of the tenant's orders and look for anomalies."""
    params = job.params or {}
    return analyze_returns(
        job.tenant_id,
        skus=params.get("skus"),
        marketplace=params.get("marketplace"),
        since_ms=to_ms(params.get("since")),
        progress=ctx.progress,
    )


def register() -> None:
    """Register this domain's background work and checks (``commerce_api.tasks``)."""
    register_marked(__name__)
