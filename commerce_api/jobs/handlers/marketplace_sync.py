"""``marketplace_sync`` (internal): push one product to marketplaces and update its listings.

Outcome: completed when at least one push succeeded, or when the only failures are
rejections next to successes (the result lists each marketplace). An unreachable
marketplace fails the attempt as retryable (pushes are idempotent, so a retry pushes to
every marketplace again); when every push was rejected the job fails with
``MARKETPLACE_REJECTION`` (not retried).
"""

from ...errors import ApiError
from ...marketplaces.listings import sync_product
from ..errors import JobFailed

PARAMS_SCHEMA = None  # internal: queued by POST /api/products/:sku/sync only
TIMEOUT_SECONDS = 120


def run(job, ctx):
    params = job.params or {}
    sku = params.get("sku")
    if not isinstance(sku, str) or not sku:
        raise JobFailed("VALIDATION_ERROR", "The job has no sku.")
    try:
        result = sync_product(
            job.tenant_id,
            sku,
            params.get("marketplaces"),
            created_by=f"job:{job.id}",
            heartbeat=getattr(ctx, "heartbeat", None),
        )
    except ApiError as error:
        raise JobFailed(error.code, error.message, details=error.details) from None
    statuses = [item["status"] for item in result["marketplaces"]]
    if "unavailable" in statuses:
        raise JobFailed(
            "MARKETPLACE_UNAVAILABLE",
            "A marketplace could not be reached; the sync will be tried again.",
            retryable=True,
            details=result,
        )
    if statuses and all(status != "succeeded" for status in statuses):
        raise JobFailed(
            "MARKETPLACE_REJECTION", "Every marketplace refused the product.", details=result
        )
    return result
