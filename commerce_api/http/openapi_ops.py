"""Operation-level parts of the OpenAPI document that flask-smorest cannot say.

- ``operationId``: derived from the path and method (``GET /api/products`` is
  ``listProducts``, ``PATCH /api/pricing/rules/{rule_id}`` is ``updatePricingRule``); an
  action (a POST that does not create, a singleton GET) is named in ``ACTIONS``. An
  operation that is neither gets no id, and tests/http/test_openapi_clients.py fails.
- a description for every operation: the summary, the scope it needs, and for a POST that
  it may be retried with ``Idempotency-Key``;
- ``Idempotency-Key`` as a header parameter of every POST, with its three error codes;
- response headers: ``X-Request-ID`` on every response, ``X-RateLimit-*`` on every response
  of an authenticated operation, ``Retry-After`` where an error code sends it,
  ``Location`` on the creates that send it, ``Idempotent-Replayed`` on every POST's answers.
"""

import re

from . import idempotency

# Path segments named otherwise in an operationId.
SEGMENT_WORDS = {"ai-jobs": "jobs"}

# Operations whose id is not derived: actions, singletons, creates named by their verb.
ACTIONS = {
    ("get", "/api/health"): "getHealth",
    ("get", "/api/health/ready"): "getReadiness",
    ("delete", "/api/api-keys/{key_id}"): "revokeApiKey",
    ("post", "/api/products/bulk"): "bulkUpdateProducts",
    ("delete", "/api/products/{sku}"): "archiveProduct",
    ("post", "/api/products/{sku}/sync"): "syncProduct",
    ("post", "/api/inventory/bulk"): "bulkSetInventory",
    ("put", "/api/inventory/{sku}"): "setInventoryStock",
    ("patch", "/api/inventory/{sku}"): "setSafetyStock",
    ("get", "/api/inventory/{sku}/adjustments"): "listSkuAdjustments",
    ("post", "/api/inventory/transfers/{transfer_id}/ship"): "shipInventoryTransfer",
    ("post", "/api/inventory/transfers/{transfer_id}/receive"): "receiveInventoryTransfer",
    ("post", "/api/inventory/transfers/{transfer_id}/cancel"): "cancelInventoryTransfer",
    ("post", "/api/orders/bulk-shipment"): "bulkConfirmOrderShipments",
    ("post", "/api/orders/{order_id}/shipment"): "confirmOrderShipment",
    ("post", "/api/orders/{order_id}/cancel"): "cancelOrder",
    ("post", "/api/marketplaces"): "connectMarketplace",
    ("get", "/api/marketplaces/sync-history"): "listSyncHistory",
    ("post", "/api/marketplaces/{connection_id}/notifications"): "receiveMarketplaceNotification",
    ("post", "/api/pricing/recalculate"): "recalculatePrices",
    ("post", "/api/pricing/recommendations/{recommendation_id}/apply"): (
        "applyPricingRecommendation"
    ),
    ("post", "/api/pricing/recommendations/{recommendation_id}/dismiss"): (
        "dismissPricingRecommendation"
    ),
    ("post", "/api/ai-jobs"): "dispatchJob",
    ("post", "/api/ai-jobs/batch"): "dispatchJobBatch",
    ("delete", "/api/ai-jobs/{job_id}"): "cancelJob",
    ("post", "/api/imports"): "importFile",
    ("get", "/api/exports/products.csv"): "exportProducts",
    ("get", "/api/exports/inventory.csv"): "exportInventory",
    ("get", "/api/exports/adjustments.csv"): "exportAdjustments",
    ("get", "/api/exports/orders.csv"): "exportOrders",
    ("post", "/api/webhooks/{webhook_id}/rotate-secret"): "rotateWebhookSecret",
    ("post", "/api/webhooks/{webhook_id}/test"): "sendWebhookTestEvent",
    ("post", "/api/webhooks/{webhook_id}/recover"): "recoverWebhook",
    ("post", "/api/webhooks/{webhook_id}/deliveries/{delivery_id}/redeliver"): (
        "redeliverWebhookDelivery"
    ),
}

ITEM_VERBS = {"get": "get", "patch": "update", "put": "replace", "delete": "delete"}

# Creates that answer with the new resource's address.
LOCATION = {("post", "/api/ai-jobs"), ("post", "/api/webhooks"), ("post", "/api/api-keys")}
# Error codes whose responses carry Retry-After (seconds).
RETRY_AFTER_CODES = (
    "RATE_LIMITED",
    "QUEUE_FULL",
    "SERVICE_UNAVAILABLE",
    "MARKETPLACE_UNAVAILABLE",
    "IDEMPOTENCY_KEY_IN_USE",
)
IDEMPOTENCY_ERRORS = ("INVALID_IDEMPOTENCY_KEY", "IDEMPOTENCY_KEY_IN_USE", "IDEMPOTENCY_KEY_REUSED")

HEADERS = {
    "X-Request-ID": {
        "description": "The request's id (the client's `X-Request-ID` when printable and at "
        "most 128 characters, else a new one); also in the server's log.",
        "schema": {"type": "string"},
    },
    "X-RateLimit-Limit": {
        "description": "Requests allowed per window for this API key and tenant.",
        "schema": {"type": "integer"},
    },
    "X-RateLimit-Remaining": {
        "description": "Requests left in the current window.",
        "schema": {"type": "integer"},
    },
    "X-RateLimit-Reset": {
        "description": "Unix time (seconds) at which the window resets.",
        "schema": {"type": "integer"},
    },
    "Retry-After": {
        "description": "Seconds to wait before retrying.",
        "schema": {"type": "integer", "minimum": 0},
    },
    "Location": {
        "description": "The path of the created resource.",
        "schema": {"type": "string"},
    },
    "Idempotent-Replayed": {
        "description": "`true` when this is the stored answer to an earlier request with the "
        "same `Idempotency-Key`.",
        "schema": {"type": "string", "enum": ["true"]},
    },
}
RATE_LIMIT_HEADERS = ("X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset")

IDEMPOTENCY_PARAMETER = {
    "name": idempotency.HEADER,
    "in": "header",
    "required": False,
    "description": "Makes the POST safe to retry: within 24 hours the same key with the same "
    "path and body answers the first response again (with `Idempotent-Replayed: true`); the "
    "same key with another request is 422 `IDEMPOTENCY_KEY_REUSED`, and while the first "
    "runs, 409 `IDEMPOTENCY_KEY_IN_USE`.",
    # printable ASCII; no space at either end (HTTP drops it)
    "schema": {
        "type": "string",
        "minLength": 1,
        "maxLength": idempotency.MAX_KEY_LENGTH,
        "pattern": "^[!-~](?:[ -~]*[!-~])?$",
    },
}


def _camel(words):
    out = []
    for word in words:
        out.extend(part for part in re.split(r"[-_]", word) if part)
    return out[0].lower() + "".join(w[:1].upper() + w[1:] for w in out[1:]) if out else ""


def _singular(word):
    if word.endswith("ies"):
        return word[:-3] + "y"
    if word.endswith(("sses", "xes")):
        return word[:-2]
    if word.endswith("s") and not word.endswith("ss"):
        return word[:-1]
    return word


def operation_id(method, path, paths):
    """``listProducts``-style id of an operation; None when it must be named in ACTIONS."""
    if (method, path) in ACTIONS:
        return ACTIONS[(method, path)]
    segments = [s for s in path.split("/") if s][1:]  # without "api"
    nouns = []
    for index, segment in enumerate(segments):
        if segment.startswith("{"):
            continue
        word = SEGMENT_WORDS.get(segment, segment)
        followed_by_param = index + 1 < len(segments) and segments[index + 1].startswith("{")
        nouns.append(_singular(word) if followed_by_param else word)
    if not nouns:
        return None
    if segments[-1].startswith("{"):
        verb = ITEM_VERBS.get(method)
        return _camel([verb, *nouns]) if verb else None
    if method == "get":
        return _camel(["list", *nouns])
    if method == "post" and "get" in paths.get(path, {}):
        return _camel(["create", *nouns[:-1], _singular(nouns[-1])])
    return None


def _scopes_by_operation(app):
    """(method, OpenAPI path) -> the scopes its view needs (``require_scope``)."""
    found = {}
    for rule in app.url_map.iter_rules():
        view = app.view_functions.get(rule.endpoint)
        view_class = getattr(view, "view_class", None)
        if view_class is None:
            continue
        path = re.sub(r"<(?:[^:<>]+:)?([^<>]+)>", r"{\1}", rule.rule)
        for method in rule.methods - {"HEAD", "OPTIONS"}:
            func = getattr(view_class, method.lower(), None)
            scopes = getattr(func, "required_scopes", None)
            if scopes:
                found[(method.lower(), path)] = scopes
    return found


def _describe(operation, method, path, scopes):
    summary = operation.get("summary", "").rstrip(".")
    parts = [operation["description"]] if operation.get("description") else [summary + "."]
    if (method, path) in scopes:
        needed = " or ".join(f"`{s}`" for s in scopes[(method, path)])
        parts.append(f"Needs the {needed} scope.")
    elif operation.get("security") == []:
        parts.append("Needs no authentication.")
    if method == "post":
        parts.append("Safe to retry with an `Idempotency-Key`.")
    operation["description"] = "\n\n".join(parts)


def _ref(name):
    return {"$ref": "#/components/headers/" + name}


def _response_headers(method, path, operation):
    authenticated = operation.get("security") != []
    for status, response in operation["responses"].items():
        if "$ref" in response:  # a shared response: its headers are on the component
            continue
        headers = response.setdefault("headers", {})
        headers["X-Request-ID"] = _ref("X-Request-ID")
        if authenticated:
            for name in RATE_LIMIT_HEADERS:
                headers[name] = _ref(name)
        codes = re.findall(r"`([A-Z_]+)`", response.get("description", ""))
        # every 503 sends it: the error codes above and the readiness probe's own shape
        if set(codes) & set(RETRY_AFTER_CODES) or status == "503":
            headers["Retry-After"] = _ref("Retry-After")
        if method == "post" and authenticated:
            headers["Idempotent-Replayed"] = _ref("Idempotent-Replayed")
        if status == "201" and (method, path) in LOCATION:
            headers["Location"] = _ref("Location")


def add_operation_details(document, app, add_error):
    """operationId, description, Idempotency-Key and response headers of every operation."""
    scopes = _scopes_by_operation(app)
    components = document.setdefault("components", {})
    components.setdefault("headers", {}).update(HEADERS)
    components.setdefault("parameters", {})["IdempotencyKey"] = IDEMPOTENCY_PARAMETER
    for response in components.get("responses", {}).values():
        response.setdefault("headers", {})["X-Request-ID"] = _ref("X-Request-ID")
    paths = document["paths"]
    for path, item in paths.items():
        for method, operation in item.items():
            if not isinstance(operation, dict) or "responses" not in operation:
                continue
            name = operation_id(method, path, paths)
            if name:
                operation["operationId"] = name
            _describe(operation, method, path, scopes)
            if method == "post" and operation.get("security") != []:
                operation.setdefault("parameters", []).append(
                    {"$ref": "#/components/parameters/IdempotencyKey"}
                )
                for code in IDEMPOTENCY_ERRORS:
                    add_error(operation, code)
            if operation.get("security") != []:
                add_error(operation, "SERVICE_UNAVAILABLE")
            _response_headers(method, path, operation)
