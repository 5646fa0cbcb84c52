"""One module per job type: ``handlers/<job_type>.py``.

A handler module defines:
- ``run(job, ctx) -> dict``: do the work and return the JSON-able result; raise
  ``commerce_api.jobs.errors.JobFailed`` to fail (``retryable=True`` to be tried again);
  any other exception is logged and counts as a retryable ``INTERNAL_ERROR`` attempt;
- ``PARAMS_SCHEMA``: a marshmallow schema class checked at dispatch (may be None for
  internal job types that the API never dispatches; public types without a handler module
  yet are checked against the default schema in ``jobs/schemas.py``);
- ``TIMEOUT_SECONDS``: the per-attempt time-out after which a hung job counts as a failed
  attempt with ``WORKER_TIMEOUT`` (default ``COMMERCE_JOB_DEFAULT_TIMEOUT_SECONDS``).
``ctx`` gives the handler ``ctx.heartbeat()`` (renews the lease at once; raises
``JobLost`` when the worker no longer holds the job, so the handler can stop early),
``ctx.worker_id``, ``ctx.attempt``, ``ctx.lost`` (True once the lease was lost),
``ctx.config`` (the app's settings) and ``ctx.log``. Handlers run in a worker thread with
an app context and their own database connection.
The worker renews leases by itself every third of the lease; ``heartbeat()`` is for
handlers that want to stop promptly when their job was taken away.

Test-only job types (``test_noop``, ``test_task``) exist only when the ``ENABLE_TEST_JOBS``
setting is on; ``register_handler`` lets in-process tests add a handler for a type of their
own. Neither is reachable through the API of a production deployment.
"""

import importlib

from flask import current_app, has_app_context

JOB_TYPES = (
    "pricing_recalculate",
    "review_sentiment",
    "return_classify",
    "llm_visibility_score",
    "competitor_scan",
    "listing_optimize",
)
INTERNAL_JOB_TYPES = ("marketplace_sync", "order_cancellation")
TEST_JOB_TYPES = ("test_noop", "test_task")

# job type -> (handler, internal); filled only by tests through register_handler().
_OVERRIDES = {}


def register_handler(job_type, handler, internal=False):
    """Test hook: run ``handler`` (a module or object with ``run``) for ``job_type``.

    Only tests call this, in their own process; a registered type becomes dispatchable
    (or, with ``internal=True``, known but refused by ``POST /api/ai-jobs``).
    """
    _OVERRIDES[job_type] = (handler, internal)


def unregister_handler(job_type):
    _OVERRIDES.pop(job_type, None)


def testing_enabled(config=None):
    if config is None:
        config = current_app.config if has_app_context() else {}
    return bool(config.get("ENABLE_TEST_JOBS"))


def public_job_types(config=None):
    """The types ``POST /api/ai-jobs`` accepts."""
    types = list(JOB_TYPES)
    if testing_enabled(config):
        types += TEST_JOB_TYPES
    types += [t for t, (_, internal) in _OVERRIDES.items() if not internal and t not in types]
    return tuple(types)


def internal_job_types():
    return INTERNAL_JOB_TYPES + tuple(
        t for t, (_, internal) in _OVERRIDES.items() if internal and t not in INTERNAL_JOB_TYPES
    )


def known_job_types(config=None):
    """Every type a job row may have (the list filter accepts these)."""
    return public_job_types(config) + internal_job_types()


def load_handler(job_type, config=None):
    """The handler module of ``job_type``, or None when it is not built yet."""
    override = _OVERRIDES.get(job_type)
    if override is not None:
        return override[0]
    if job_type in TEST_JOB_TYPES and not testing_enabled(config):
        return None
    if job_type not in JOB_TYPES + INTERNAL_JOB_TYPES + TEST_JOB_TYPES:
        return None
    try:
        return importlib.import_module(f"{__name__}.{job_type}")
    except ModuleNotFoundError as exc:
        if exc.name != f"{__name__}.{job_type}":
            raise
        return None
