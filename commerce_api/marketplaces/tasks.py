"""Marketplace background work: the ``marketplace_sync`` job and the listing push loop."""

import threading
from typing import Any

from ..config import current_config
from ..errors import ApiError
from ..jobs.errors import JobFailed
from ..jobs.models import Job
from ..jobs.registry import background_loop, job_type, register_marked
from ..jobs.runtime import JobContext
from ..products.services import register_fulfilment_check
from .listing_push import fulfilling_marketplaces
from .listing_push_loop import run_loop
from .product_sync import PRICE_MISSING, sync_product


@background_loop("listing_push")
def listing_push(stop: threading.Event) -> None:
    """Push pending listings (coalesced, connections in turn) until ``stop``."""
    run_loop(current_config(), stop)


@job_type("marketplace_sync", scope="products:read", internal=True, typical_seconds=5, timeout=120)
def marketplace_sync(job: Job, ctx: JobContext) -> dict[str, Any]:
    """Push one product to marketplaces and update its listings.

    Queued by ``POST /api/products/:sku/sync`` only. Completed when at least one push
    succeeded, or when the only failures are rejections next to successes (the result lists
    each marketplace). An unreachable marketplace fails the attempt as retryable (pushes are
    idempotent, so a retry pushes to every marketplace again); when every push was rejected
    the job fails with ``MARKETPLACE_REJECTION`` (not retried); when no listing has a price
    (nothing pushed, each kept ``held``), with ``LISTING_PRICE_MISSING``.
    """
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
    if statuses and all(status == "held" for status in statuses):
        code, message = PRICE_MISSING  # nothing was pushed: no listing has a price
        raise JobFailed(code, message.format(sku=sku, marketplace="<marketplace>"), details=result)
    if statuses and all(status != "succeeded" for status in statuses):
        raise JobFailed(
            "MARKETPLACE_REJECTION", "Every marketplace refused the product.", details=result
        )
    return result


def register() -> None:
    """Register this domain's background work and checks (``commerce_api.tasks``)."""
    register_marked(__name__)
    # a listing's fulfilled_by follows the marketplace's warehouse stock (DESIGN 9)
    register_fulfilment_check(fulfilling_marketplaces)
