"""ApiError and the whole error-code catalogue: one place knows every code and its status.

``@raises(...)`` declares the codes a service function may raise; a view's documentation
takes them from the functions it names (``blp.errors(services.create_product)``), so the
document follows the declarations, and a declared function that raises a code it does not
declare is recorded in ``UNDECLARED`` (the suite fails on any, the client's answer is the
same).
"""

import functools
from collections.abc import Callable
from typing import Any, TypeVar

# code -> (HTTP status, default message)
CATALOGUE = {
    # request layer
    "VALIDATION_ERROR": (422, "The request is not valid."),
    "INVALID_JSON": (400, "The request body is not valid JSON."),
    "UNSUPPORTED_MEDIA_TYPE": (415, "Request bodies must be application/json."),
    "PAYLOAD_TOO_LARGE": (413, "The request body is too large."),
    "INVALID_CURSOR": (400, "The cursor is not valid."),
    "RESOURCE_NOT_FOUND": (404, "The resource was not found."),
    "METHOD_NOT_ALLOWED": (405, "The method is not allowed for this resource."),
    "BAD_REQUEST": (400, "The request could not be understood."),
    "EMPTY_PATCH": (400, "A PATCH needs a JSON object with at least one field to change."),
    "URI_TOO_LONG": (414, "The request line is too long."),
    "HEADERS_TOO_LARGE": (431, "The request headers are too large."),
    "INTERNAL_ERROR": (500, "An unexpected error occurred."),
    "SERVICE_UNAVAILABLE": (503, "The service is temporarily unavailable."),
    "SECRET_KEY_MISMATCH": (503, "A stored secret cannot be decrypted with the service's keys."),
    "IDEMPOTENCY_KEY_REUSED": (422, "The idempotency key was used with another request."),
    "IDEMPOTENCY_KEY_IN_USE": (409, "A request with this idempotency key is in progress."),
    "CONCURRENT_UPDATE": (409, "Another request is changing this resource; retry shortly."),
    "INVALID_IDEMPOTENCY_KEY": (400, "Idempotency-Key must be 1 to 255 printable characters."),
    # authentication and tenancy
    "UNAUTHENTICATED": (401, "Authentication is required."),
    "INVALID_TENANT_HEADER": (400, "X-Tenant-ID must be a tenant UUID."),
    "TENANT_ACCESS_DENIED": (403, "The token has no access to this tenant."),
    "IP_NOT_ALLOWED": (403, "The request comes from an address outside the key's allowlist."),
    "INSUFFICIENT_SCOPE": (403, "The token lacks the required scope."),
    "RATE_LIMITED": (429, "Rate limit exceeded."),
    # products
    "PRODUCT_NOT_FOUND": (404, "The product does not exist."),
    "DUPLICATE_SKU": (409, "A product with this SKU already exists."),
    "INVALID_GTIN": (422, "The GTIN/EAN/UPC is not valid."),
    "OPEN_ORDERS_EXIST": (409, "The product has open orders."),
    # orders and marketplaces
    "ORDER_NOT_FOUND": (404, "The order does not exist."),
    "INVALID_STATUS_TRANSITION": (422, "The order cannot move to the requested status."),
    "ALREADY_SHIPPED": (409, "The order already has a confirmed shipment."),
    "MARKETPLACE_REJECTION": (422, "The marketplace rejected the request."),
    "MARKETPLACE_UNAVAILABLE": (503, "The marketplace could not be reached."),
    "MARKETPLACE_NOT_CONNECTED": (422, "The marketplace is not connected for this tenant."),
    "MARKETPLACE_ALREADY_CONNECTED": (409, "The marketplace is already connected."),
    "CONNECTION_NOT_FOUND": (404, "The marketplace connection does not exist."),
    # marketplace notifications (POST /api/marketplaces/:id/notifications)
    "NOTIFICATION_SIGNATURE_INVALID": (401, "The notification's signature is missing or wrong."),
    "NOTIFICATION_BODY_INVALID": (400, "The notification is not the marketplace's JSON."),
    "NOTIFICATIONS_UNSUPPORTED": (422, "This connection takes no notifications."),
    # inventory
    "INVENTORY_NOT_FOUND": (404, "The SKU has no inventory record."),
    "WAREHOUSE_NOT_FOUND": (404, "The warehouse does not exist."),
    "READONLY_WAREHOUSE": (403, "Marketplace-operated warehouses are read-only."),
    "NEGATIVE_QUANTITY": (422, "The resulting quantity would be negative."),
    "INSUFFICIENT_STOCK": (409, "Not enough available stock."),
    "WAREHOUSE_INACTIVE": (409, "The warehouse is inactive."),
    "WAREHOUSE_NOT_EMPTY": (409, "The warehouse still holds stock."),
    # transfers between warehouses
    "TRANSFER_NOT_FOUND": (404, "The transfer does not exist."),
    "SAME_WAREHOUSE_TRANSFER": (422, "A transfer moves stock between two different warehouses."),
    "INVALID_TRANSFER_STATUS": (409, "The transfer's status does not allow this action."),
    "TRANSFER_LINE_NOT_FOUND": (422, "The transfer has no line for that SKU."),
    "RECEIPT_EXCEEDS_SHIPPED": (422, "More would be received than is in transit."),
    # bundles and allocation (DESIGN 14)
    "BUNDLE_STOCK_IS_DERIVED": (409, "A bundle's stock is derived from its components."),
    "INVALID_BUNDLE_COMPONENT": (422, "A bundle component is not valid."),
    "INVALID_ALLOCATION": (422, "The listing's allocation rules contradict each other."),
    # jobs
    "JOB_NOT_FOUND": (404, "The job does not exist."),
    "INVALID_JOB_TYPE": (422, "Unknown job type."),
    "QUEUE_FULL": (429, "The job queue is at capacity; retry later."),
    "JOB_NOT_CANCELLABLE": (409, "The job is not queued and cannot be cancelled."),
    "JOB_TYPE_NOT_IMPLEMENTED": (422, "This job type has no handler yet."),
    # AI jobs' providers (error codes of failed jobs)
    "LLM_NOT_CONFIGURED": (422, "No LLM provider is configured."),
    "LLM_UNAVAILABLE": (503, "The LLM provider could not answer."),
    "LLM_REQUEST_REJECTED": (502, "The LLM provider refused the request."),
    # pricing
    "RULE_NOT_FOUND": (404, "The pricing rule does not exist."),
    "RULE_CONFLICT": (409, "The rule conflicts with an existing rule at the same priority."),
    "RECOMMENDATION_NOT_FOUND": (404, "The recommendation does not exist."),
    "RECOMMENDATION_ALREADY_APPLIED": (409, "The recommendation has already been applied."),
    "RECOMMENDATION_NOT_PENDING": (409, "The recommendation is not pending."),
    "RECOMMENDATION_OUTDATED": (
        409,
        "The listing took a newer price since the recommendation was computed.",
    ),
    "LISTING_NOT_FOUND": (404, "The product is not listed on that marketplace."),
    "LISTING_PRICE_MISSING": (422, "The listing has no price: it is pushed once one is set."),
    # webhooks
    "WEBHOOK_NOT_FOUND": (404, "The webhook endpoint does not exist."),
    "DELIVERY_NOT_FOUND": (404, "The delivery does not exist."),
    "WEBHOOK_URL_NOT_ALLOWED": (422, "The webhook URL points to an address that is not allowed."),
    "WEBHOOK_LIMIT_REACHED": (409, "The tenant has as many webhook endpoints as allowed."),
    "WEBHOOK_DISABLED": (409, "The webhook endpoint is disabled."),
    # settings over HTTP: API keys and the events feed
    "API_KEY_NOT_FOUND": (404, "The API key does not exist."),
    "API_KEY_REVOKED": (409, "The API key is revoked and cannot be changed."),
    "SCOPE_ESCALATION": (403, "A key cannot be given scopes the caller does not hold."),
    "RESTRICTION_ESCALATION": (
        403,
        "A key cannot be given a later expiry, more IP ranges or a higher rate limit than"
        " the caller's own.",
    ),
    "PLAN_REQUIRED": (422, "The tenant's plan does not include this feature."),
    "CONFIRMATION_REQUIRED": (409, "This request revokes the calling key; confirm it."),
    "EVENT_NOT_FOUND": (404, "The event does not exist."),
    # the merchant console (/console)
    "CSRF_TOKEN_INVALID": (403, "The form's CSRF token is missing or does not match."),
    "OIDC_NOT_CONFIGURED": (404, "Sign-in through an identity provider is not configured."),
    "OIDC_SIGN_IN_FAILED": (401, "Sign-in through the identity provider failed."),
    "IDENTITY_PROVIDER_UNAVAILABLE": (503, "The identity provider could not be reached."),
    # files: imports and exports (DESIGN 14)
    "CSV_INVALID": (422, "The file cannot be read as CSV (UTF-8)."),
    "CSV_EMPTY": (422, "The file has no header row."),
    "CSV_UNKNOWN_COLUMN": (422, "The file has columns this import does not know."),
    "CSV_MISSING_COLUMN": (422, "The file lacks a column this import requires."),
    "CSV_DUPLICATE_COLUMN": (422, "The file names a column twice."),
    "IMPORT_NOT_FOUND": (404, "The import does not exist."),
}


class ApiError(Exception):
    """An error with a catalogue code; the error handler turns it into the envelope."""

    def __init__(self, code, message=None, details=None, status=None, headers=None):
        default_status, default_message = CATALOGUE[code]
        super().__init__(message or default_message)
        self.code = code
        self.message = message or default_message
        self.details = details or {}
        self.status = status or default_status
        self.headers = headers or {}

    def to_dict(self):
        return {"error": {"code": self.code, "message": self.message, "details": self.details}}


def validation_error(fields, message="The request is not valid."):
    """A VALIDATION_ERROR naming fields: ``{field: [message, ...]}``."""
    normalized = {k: (v if isinstance(v, list | dict) else [v]) for k, v in fields.items()}
    return ApiError("VALIDATION_ERROR", message, {"fields": normalized})


F = TypeVar("F", bound=Callable[..., Any])

# Codes any service may raise without declaring them: the request layer documents them on
# every operation (``http.blueprint.Blueprint.errors``).
AMBIENT = frozenset({"VALIDATION_ERROR"})
# "module.function raised CODE" for each undeclared code seen; the tests assert it stays empty
UNDECLARED: list[str] = []


def declared_codes(*items: Any) -> tuple[str, ...]:
    """The codes ``items`` stand for, in order, each once: catalogue codes, or functions
    declared ``@raises``."""
    return tuple(dict.fromkeys(code for item in items for code in _codes_of(item)))


def _codes_of(item: Any) -> tuple[str, ...]:
    if isinstance(item, str):
        if item not in CATALOGUE:
            raise KeyError(f"{item} is not in the error catalogue")
        return (item,)
    codes = getattr(item, "__raises__", None)
    if codes is None:
        raise TypeError(f"{item!r} declares no error codes (decorate it with @raises)")
    return codes


def raises(*codes: Any) -> Callable[[F], F]:
    """Declare the error codes a function may raise: catalogue codes, or functions it calls
    whose own declarations are included (``@raises("DUPLICATE_SKU", check_gtin)``)."""
    declared = declared_codes(*codes)

    def decorator(func: F) -> F:
        name = f"{func.__module__}.{func.__qualname__}"
        allowed = AMBIENT.union(declared)

        @functools.wraps(func)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            try:
                return func(*args, **kwargs)
            except ApiError as error:
                if error.code not in allowed:
                    UNDECLARED.append(f"{name} raised {error.code}")
                raise

        wrapper.__raises__ = declared  # type: ignore[attr-defined]
        return wrapper  # type: ignore[return-value]

    return decorator
