"""Turn every error, from every layer, into ``{error: {code, message, details}}``."""

import logging

from flask import g, request
from werkzeug.exceptions import HTTPException

from .. import db_errors
from ..errors import ApiError
from .envelope import json_response
from .request import allowed_methods

log = logging.getLogger("commerce_api")

_HTTP_CODES = {
    400: "BAD_REQUEST",
    401: "UNAUTHENTICATED",
    404: "RESOURCE_NOT_FOUND",
    405: "METHOD_NOT_ALLOWED",
    413: "PAYLOAD_TOO_LARGE",
    415: "UNSUPPORTED_MEDIA_TYPE",
    422: "VALIDATION_ERROR",
    429: "RATE_LIMITED",
    500: "INTERNAL_ERROR",
    503: "SERVICE_UNAVAILABLE",
}


def error_response(error):
    response = json_response(error.to_dict(), error.status, error.headers)
    if error.status == 401:
        response.headers.setdefault("WWW-Authenticate", 'Bearer realm="commerce-api"')
    return response


def _fields_from_webargs(messages):
    """webargs reports ``{location: {field: [msg]}}``; the envelope wants ``{field: [msg]}``."""
    fields = {}
    for location_messages in messages.values():
        if isinstance(location_messages, dict):
            fields.update(location_messages)
        else:
            fields["_schema"] = location_messages
    return fields


def handle_api_error(error):
    return error_response(error)


def handle_http_exception(error):
    data = getattr(error, "data", None) or {}
    if error.code == 422 and "messages" in data:
        fields = _fields_from_webargs(data["messages"])
        api_error = ApiError("VALIDATION_ERROR", details={"fields": fields})
    elif error.code == 400 and "messages" in data:
        # webargs could not decode the body
        api_error = ApiError("INVALID_JSON")
    else:
        code = _HTTP_CODES.get(error.code, "BAD_REQUEST" if error.code < 500 else "INTERNAL_ERROR")
        status = error.code if error.code in _HTTP_CODES or error.code >= 400 else 400
        message = None
        if error.code == 404:
            message = "The requested URL was not found."
        elif error.code == 405:
            message = f"The method {request.method} is not allowed for this resource."
        api_error = ApiError(code, message=message, status=status)
        if error.code == 405:
            allowed = allowed_methods()
            if allowed:
                api_error.headers["Allow"] = ", ".join(allowed)
                api_error.details = {"allowed_methods": allowed}
    headers = data.get("headers")
    if headers:
        api_error.headers.update(headers)
    return error_response(api_error)


def handle_unexpected(error):
    if isinstance(error, HTTPException):
        return handle_http_exception(error)
    if isinstance(error, ApiError):
        return error_response(error)
    failure = db_errors.classify(error)
    if failure is not None:
        return database_failure_response(failure, error)
    log.exception("unhandled error (request %s)", getattr(g, "request_id", "-"))
    return error_response(ApiError("INTERNAL_ERROR"))


_FAILURE_MESSAGES = {
    db_errors.BUSY: "The database is busy; retry.",
    db_errors.UNAVAILABLE: "The database is unavailable; retry.",
}


def database_failure_response(failure, error):
    """503 with Retry-After for lock contention or an outage: nothing was changed."""
    log.warning("database %s (request %s): %s", failure, getattr(g, "request_id", "-"), error)
    if failure == db_errors.UNAVAILABLE:
        db_errors.discard_connections()
    return error_response(
        ApiError("SERVICE_UNAVAILABLE", _FAILURE_MESSAGES[failure], headers={"Retry-After": "1"})
    )


def register_error_handlers(app):
    app.register_error_handler(ApiError, handle_api_error)
    app.register_error_handler(HTTPException, handle_http_exception)
    app.register_error_handler(Exception, handle_unexpected)
