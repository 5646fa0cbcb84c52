"""Calling a marketplace safely, and recording the attempt in the sync history.

A marketplace is always called with no database transaction open (on SQLite a write
transaction held over a network call would block every other writer): callers read, call
through ``call_marketplace``, then apply the outcome in a transaction that re-checks the
state. The attempt itself is recorded in its own short transaction, so the sync history
keeps failed attempts even though the change they were for was not made.
"""

import contextlib
import time

from ..config import current_config
from ..db import db
from ..errors import ApiError
from .base import ConnectorError, MarketplaceRejection, MarketplaceUnavailable
from .limits import TenantBusy, tenant_slot
from .registry import get_connector
from .services import record_attempt

DEFAULT_RETRY_AFTER = 30  # seconds, when the marketplace gives no Retry-After of its own
BUSY_RETRY_AFTER = 2  # seconds, when the tenant's outbound calls are at their cap


def call_marketplace(
    connection,
    operation,
    call,
    *,
    resource_type,
    resource_id,
    sku=None,
    created_by=None,
    details=None,
):
    """Run ``call(connector)`` and record the attempt; returns ``(result, attempt)``.

    A rejection becomes 422 ``MARKETPLACE_REJECTION`` and an unreachable marketplace 503
    ``MARKETPLACE_UNAVAILABLE`` with ``Retry-After``; in both cases the attempt row is the
    only thing written. A tenant with ``MARKETPLACE_TENANT_CONCURRENCY`` calls in flight in
    this process is refused at once with 503 ``MARKETPLACE_UNAVAILABLE`` (reason
    ``TENANT_CONCURRENCY``), and nothing is written.
    """
    if db.transaction_depth() > 0:
        # a write transaction held over a network call blocks every writer on SQLite
        raise RuntimeError("call_marketplace() must not run inside a database transaction")
    connector = get_connector(connection)
    started = time.monotonic()

    def record(**outcome):
        return record_attempt(
            connection,
            resource_type=resource_type,
            resource_id=resource_id,
            sku=sku,
            operation=operation,
            created_by=created_by,
            details=details,
            duration_ms=int((time.monotonic() - started) * 1000),
            **outcome,
        )

    outcome = {"status": "succeeded", "error_code": None, "error_message": None}
    slot = contextlib.nullcontext()
    if connector.remote:
        cap = int(current_config()["MARKETPLACE_TENANT_CONCURRENCY"])
        slot = tenant_slot(connection.tenant_id, cap)
    try:
        with slot:
            result = call(connector)
    except TenantBusy as exc:
        raise ApiError(
            "MARKETPLACE_UNAVAILABLE",
            f"Too many calls to marketplaces are in flight for this tenant: {exc}",
            details={
                "marketplace": connection.marketplace,
                "operation": operation,
                "reason": "TENANT_CONCURRENCY",
                "limit": exc.cap,
                "retry_after": BUSY_RETRY_AFTER,
            },
            headers={"Retry-After": str(BUSY_RETRY_AFTER)},
        ) from None
    except MarketplaceRejection as exc:
        outcome = {"status": "rejected", "error_code": exc.code, "error_message": exc.message}
        error = ApiError(
            "MARKETPLACE_REJECTION",
            f"{connection.marketplace} rejected the request: {exc.message}",
            details={
                "marketplace": connection.marketplace,
                "operation": operation,
                "marketplace_code": exc.code,
                "marketplace_message": exc.message,
                **({"marketplace_details": exc.details} if exc.details else {}),
            },
        )
    except MarketplaceUnavailable as exc:
        outcome = {"status": "unavailable", "error_code": exc.code, "error_message": exc.message}
        retry_after = int(exc.retry_after or DEFAULT_RETRY_AFTER)
        error = ApiError(
            "MARKETPLACE_UNAVAILABLE",
            f"{connection.marketplace} could not be reached: {exc.message}",
            details={
                "marketplace": connection.marketplace,
                "operation": operation,
                "reason": exc.code,
                "retry_after": retry_after,
            },
            headers={"Retry-After": str(retry_after)},
        )
    except ConnectorError as exc:  # a subclass we do not know: treat as unavailable
        outcome = {"status": "failed", "error_code": exc.code, "error_message": exc.message}
        error = ApiError(
            "MARKETPLACE_UNAVAILABLE",
            f"{connection.marketplace}: {exc.message}",
            details={"marketplace": connection.marketplace, "operation": operation},
            headers={"Retry-After": str(DEFAULT_RETRY_AFTER)},
        )
    except Exception as exc:
        # a bug in a connector: keep the trace of the attempt, then let it surface
        record(status="failed", error_code="INTERNAL_ERROR", error_message=type(exc).__name__)
        raise
    else:
        error = None
    attempt = record(**outcome)
    if error is not None:
        error.details["attempt_id"] = attempt.id
        raise error
    return result, attempt
