"""One module per job type: ``handlers/<job_type>.py``.

A handler module defines:
- ``run(job, ctx) -> dict``: do the work and return the JSON-able result; raise
  ``commerce_api.jobs.errors.JobFailed`` to fail (``retryable=True`` to be tried again);
- ``PARAMS_SCHEMA``: a marshmallow schema class checked at dispatch (may be None for
  internal job types that the API never dispatches);
- ``TIMEOUT_SECONDS``: the per-type time-out after which a hung job fails.
``ctx`` gives the handler ``ctx.heartbeat()`` (renews the lease) and ``ctx.worker_id``.
"""

import importlib

JOB_TYPES = (
    "pricing_recalculate",
    "review_sentiment",
    "return_classify",
    "llm_visibility_score",
    "competitor_scan",
    "listing_optimize",
)
INTERNAL_JOB_TYPES = ("marketplace_sync", "order_cancellation")


def load_handler(job_type):
    """The handler module of ``job_type``, or None when it is not built yet."""
    if job_type not in JOB_TYPES + INTERNAL_JOB_TYPES:
        return None
    try:
        return importlib.import_module(f"{__name__}.{job_type}")
    except ModuleNotFoundError as exc:
        if exc.name != f"{__name__}.{job_type}":
            raise
        return None
