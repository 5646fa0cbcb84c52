"""The pricing job types: ``pricing_recalculate`` and ``competitor_scan`` (DESIGN 6)."""

from typing import Any

import marshmallow as ma

from ..config import current_config
from ..jobs.errors import JobFailed
from ..jobs.models import Job
from ..jobs.registry import job_type, register_marked
from ..jobs.runtime import JobContext
from ..jobs.schemas import MARKETPLACE, StrictBoolean, StrictSchema, skus_field
from .competitors import FetchFailed, scan_competitors
from .recalculate import JobProblem, listed_skus, run_recalculation
from .schemas import MAX_RECALCULATE_SKUS


class PricingRecalculateParams(StrictSchema):
    skus = skus_field(required=False, maximum=MAX_RECALCULATE_SKUS)
    marketplace = ma.fields.String(required=True, validate=MARKETPLACE)
    apply = StrictBoolean(load_default=False)


class CompetitorScanParams(StrictSchema):
    marketplace = ma.fields.String(required=True, validate=MARKETPLACE)
    skus = skus_field(required=False, maximum=MAX_RECALCULATE_SKUS)


class PushError(ma.Schema):
    code = ma.fields.String(required=True)
    marketplace_code = ma.fields.String(required=True, allow_none=True)
    message = ma.fields.String(required=True)


class RecalculatedPrice(ma.Schema):
    id = ma.fields.String(required=True)
    sku = ma.fields.String(required=True)
    current_price = ma.fields.Float(required=True)
    recommended_price = ma.fields.Float(required=True)
    confidence = ma.fields.Float(required=True)
    applied = ma.fields.Boolean(required=True)
    reasoning = ma.fields.String(required=True)
    error = ma.fields.Nested(PushError)  # with apply, when the push failed


class SkippedSku(ma.Schema):
    sku = ma.fields.String(required=True)
    reason = ma.fields.String(required=True)


class FetchError(ma.Schema):
    code = ma.fields.String(required=True)
    message = ma.fields.String(required=True)


class CompetitorFetch(ma.Schema):
    skus_requested = ma.fields.Integer(required=True)
    offers_stored = ma.fields.Integer(required=True)
    error = ma.fields.Nested(FetchError, required=True, allow_none=True)


class PricingRecalculateResult(ma.Schema):
    marketplace = ma.fields.String(required=True)
    processed_count = ma.fields.Integer(required=True)
    updated_count = ma.fields.Integer(required=True)
    applied_count = ma.fields.Integer(required=True)
    recommendations = ma.fields.List(ma.fields.Nested(RecalculatedPrice), required=True)
    skipped_count = ma.fields.Integer(required=True)
    skipped = ma.fields.List(ma.fields.Nested(SkippedSku), required=True)
    competitor_fetch = ma.fields.Nested(CompetitorFetch, required=True)
    # with apply only: prices a killed attempt of this job had pushed without recording
    # the outcome, settled by this run before it went on (DESIGN 9)
    resumed_count = ma.fields.Integer(
        metadata={"description": "With `apply`: pushes a stopped attempt left unrecorded."}
    )


class CompetitorScanResult(ma.Schema):
    marketplace = ma.fields.String(required=True)
    sku_count = ma.fields.Integer(required=True)
    offer_count = ma.fields.Integer(required=True)
    skus_without_offers = ma.fields.List(ma.fields.String(), required=True)


# with apply, one price push per SKU: up to 10,000 requests to the marketplace
@job_type(
    "pricing_recalculate",
    scope="pricing:write",
    params=PricingRecalculateParams,
    result=PricingRecalculateResult,
    typical_seconds=35,
    timeout=1800,
)
def pricing_recalculate(job: Job, ctx: JobContext) -> dict[str, Any]:
    """Recompute prices for the SKUs (default: every SKU listed on the marketplace).

    Result: ``processed_count``, ``updated_count``, ``recommendations`` [{id, sku,
    current_price, recommended_price, confidence, applied, reasoning}], plus
    ``applied_count``, ``skipped``, ``competitor_fetch``.
    """
    try:
        return run_recalculation(
            job,
            progress=getattr(ctx, "progress", None),
            heartbeat=getattr(ctx, "heartbeat", None),
        )
    except JobProblem as problem:
        raise JobFailed(
            problem.code, problem.message, retryable=problem.retryable, details=problem.details
        ) from None


@job_type(
    "competitor_scan",
    scope="pricing:write",
    params=CompetitorScanParams,
    result=CompetitorScanResult,
    typical_seconds=37,
    timeout=600,
)
def competitor_scan(job: Job, ctx: JobContext) -> dict[str, Any]:
    """Fetch competitor offers for the SKUs (default: every SKU listed on the marketplace).

    Result: ``{sku_count, offer_count, skus_without_offers}``. An unreachable marketplace
    fails the attempt as retryable; a refusal fails the job.
    """
    params = job.params or {}
    marketplace = params.get("marketplace")
    if not isinstance(marketplace, str) or not marketplace:
        raise JobFailed("VALIDATION_ERROR", "The job has no marketplace.")
    if params.get("skus") is not None:
        skus = list(dict.fromkeys(params["skus"]))
    else:
        skus = listed_skus(job.tenant_id, marketplace, limit=MAX_RECALCULATE_SKUS)
    try:
        return scan_competitors(
            job.tenant_id,
            marketplace,
            skus,
            max(1, int(current_config()["PRICING_CHUNK_SIZE"])),
            progress=getattr(ctx, "progress", None),
        )
    except FetchFailed as failure:
        if failure.code == "MARKETPLACE_NOT_CONNECTED":
            raise JobFailed(failure.code, failure.message) from None
        code = "MARKETPLACE_UNAVAILABLE" if failure.retryable else "MARKETPLACE_REJECTION"
        raise JobFailed(
            code,
            f"{marketplace}: {failure.message}",
            retryable=failure.retryable,
            details={"marketplace": marketplace, "marketplace_code": failure.code},
        ) from None


def register() -> None:
    """Register this domain's background work and checks (``commerce_api.tasks``)."""
    register_marked(__name__)
