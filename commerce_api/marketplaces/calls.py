"""Calling a marketplace from a request handler: the gateway's failures as API errors.

``call_marketplace`` is ``gateway.call`` for code that answers an API request (or a job
that reports the API's error codes): a rejection becomes 422 ``MARKETPLACE_REJECTION`` and
an unreachable marketplace 503 ``MARKETPLACE_UNAVAILABLE`` with ``Retry-After``; in both
cases the attempt row is the only thing written. A tenant at its cap of outbound calls is
refused at once while serving a request (503, reason ``TENANT_CONCURRENCY``, nothing
written); background work waits for a slot instead (``gateway``).
"""

from collections.abc import Callable
from typing import Any

from ..errors import ApiError
from .base import ConnectorError, MarketplaceRejection, MarketplaceUnavailable
from .gateway import call
from .models import MarketplaceConnection, SyncAttempt

DEFAULT_RETRY_AFTER = 30  # seconds, when the marketplace gives no Retry-After of its own


def call_marketplace(
    connection: MarketplaceConnection,
    operation: str,
    fn: Callable[[Any], Any],
    *,
    resource_type: str,
    resource_id: str,
    sku: str | None = None,
    created_by: str | None = None,
    details: dict[str, Any] | None = None,
) -> tuple[Any, SyncAttempt | None]:
    """Run ``fn(connector)`` through the gateway and record the attempt; returns
    ``(result, attempt)``, or raises the ``ApiError`` of the failure."""
    try:
        answer = call(
            connection,
            operation,
            fn,
            resource_type=resource_type,
            resource_id=resource_id,
            sku=sku,
            created_by=created_by,
            details=details,
        )
    except ConnectorError as exc:
        raise api_error(connection, operation, exc) from None
    return answer.result, answer.attempt


def api_error(connection: MarketplaceConnection, operation: str, exc: ConnectorError) -> ApiError:
    """The ``ApiError`` a request handler answers for a gateway failure ``exc``."""
    marketplace = connection.marketplace
    attempt = {"attempt_id": exc.attempt_id} if getattr(exc, "attempt_id", None) else {}
    if isinstance(exc, MarketplaceRejection):
        return ApiError(
            "MARKETPLACE_REJECTION",
            f"{marketplace} rejected the request: {exc.message}",
            details={
                "marketplace": marketplace,
                "operation": operation,
                "marketplace_code": exc.code,
                "marketplace_message": exc.message,
                **({"marketplace_details": exc.details} if exc.details else {}),
                **attempt,
            },
        )
    if isinstance(exc, MarketplaceUnavailable) and exc.code == "TENANT_CONCURRENCY":
        return ApiError(
            "MARKETPLACE_UNAVAILABLE",
            exc.message,
            details={
                "marketplace": marketplace,
                "operation": operation,
                "reason": "TENANT_CONCURRENCY",
                "limit": exc.details.get("limit"),
                "retry_after": exc.retry_after,
            },
            headers={"Retry-After": str(exc.retry_after)},
        )
    if isinstance(exc, MarketplaceUnavailable):
        retry_after = int(exc.retry_after or DEFAULT_RETRY_AFTER)
        return ApiError(
            "MARKETPLACE_UNAVAILABLE",
            f"{marketplace} could not be reached: {exc.message}",
            details={
                "marketplace": marketplace,
                "operation": operation,
                "reason": exc.code,
                "retry_after": retry_after,
                **attempt,
            },
            headers={"Retry-After": str(retry_after)},
        )
    return ApiError(  # a ConnectorError subclass we do not know: treat as unavailable
        "MARKETPLACE_UNAVAILABLE",
        f"{marketplace}: {exc.message}",
        details={"marketplace": marketplace, "operation": operation, **attempt},
        headers={"Retry-After": str(DEFAULT_RETRY_AFTER)},
    )
