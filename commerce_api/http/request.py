"""Request hygiene: request ids, body size, content type, JSON syntax, unknown query params."""

import json

from flask import current_app, g, request
from ulid import ULID

from ..errors import ApiError, validation_error

BODY_METHODS = frozenset(("POST", "PUT", "PATCH"))
MAX_REQUEST_ID = 200


def assign_request_id():
    incoming = request.headers.get("X-Request-ID")
    if incoming and len(incoming) <= MAX_REQUEST_ID and incoming.isprintable():
        g.request_id = incoming
    else:
        g.request_id = f"req_{ULID()}"


def check_body():
    """Refuse oversized, non-JSON and malformed bodies before any view runs."""
    if request.method not in BODY_METHODS:
        return
    limit = current_app.config["MAX_BODY_BYTES"]
    length = request.content_length
    if length is not None and length > limit:
        raise ApiError("PAYLOAD_TOO_LARGE", details={"max_bytes": limit})
    raw = request.get_data(cache=True)
    if len(raw) > limit:
        raise ApiError("PAYLOAD_TOO_LARGE", details={"max_bytes": limit})
    if not raw:
        return
    if request.mimetype != "application/json":
        raise ApiError(
            "UNSUPPORTED_MEDIA_TYPE", details={"content_type": request.content_type or None}
        )
    try:
        json.loads(raw)
    except (ValueError, UnicodeDecodeError) as exc:
        raise ApiError("INVALID_JSON", details={"reason": str(exc)[:200]}) from None


def check_query_args():
    """Views that declare no query arguments accept none (webargs checks the others)."""
    if not request.args or request.url_rule is None:
        return
    view = current_app.view_functions.get(request.endpoint)
    view_class = getattr(view, "view_class", None)
    handler = getattr(view_class, request.method.lower(), None) if view_class else view
    apidoc = getattr(handler, "_apidoc", None)
    if apidoc is None:
        return
    arguments = apidoc.get("arguments", {}).get("parameters", [])
    if any(p.get("in") == "query" for p in arguments):
        return
    raise validation_error({name: ["Unknown field."] for name in request.args})


def finish_response(response):
    response.headers["X-Request-ID"] = g.get("request_id", "")
    if response.status_code == 204:
        response.headers.pop("Content-Type", None)
    return response
