"""Request line and header limits, answered in the JSON error envelope (414 and 431).

gunicorn refuses a request over its own limits with a plain HTML page before the app sees
it. So ``serve.py`` gives gunicorn limits above these, and this WSGI middleware answers
anything between ours and gunicorn's with ``{error: {code, message, details}}``. Only a
request over gunicorn's limits too (a request line over ``GUNICORN_LIMIT_REQUEST_LINE``,
its maximum, a header line over ``GUNICORN_LIMIT_REQUEST_FIELD_SIZE`` or more than
``GUNICORN_LIMIT_REQUEST_FIELDS`` headers) still gets gunicorn's page.
"""

from urllib.parse import quote

from ..errors import ApiError
from .envelope import dumps

MAX_REQUEST_LINE = 8000  # bytes of "METHOD URI PROTOCOL"
MAX_HEADER_FIELDS = 100  # header lines
MAX_HEADER_FIELD_SIZE = 8190  # bytes of one "Name: value" line

# gunicorn's own limits (serve.py): 8190 is the largest request line gunicorn accepts.
GUNICORN_LIMIT_REQUEST_LINE = 8190
GUNICORN_LIMIT_REQUEST_FIELDS = 2 * MAX_HEADER_FIELDS
GUNICORN_LIMIT_REQUEST_FIELD_SIZE = 2 * MAX_HEADER_FIELD_SIZE

_STATUS_LINES = {414: "414 URI Too Long", 431: "431 Request Header Fields Too Large"}


def _request_line_length(environ):
    uri = environ.get("RAW_URI") or environ.get("REQUEST_URI")
    if uri is None:
        uri = quote(environ.get("SCRIPT_NAME", "") + environ.get("PATH_INFO", ""), safe="/")
        if environ.get("QUERY_STRING"):
            uri += "?" + environ["QUERY_STRING"]
    method = environ.get("REQUEST_METHOD", "")
    protocol = environ.get("SERVER_PROTOCOL", "HTTP/1.1")
    return len(method) + 1 + len(uri.encode("latin-1", "replace")) + 1 + len(protocol)


def _header_lines(environ):
    for key, value in environ.items():
        if key.startswith("HTTP_"):
            name = key[5:]
        elif key in ("CONTENT_TYPE", "CONTENT_LENGTH") and value:
            name = key
        else:
            continue
        yield name, value


def check_limits(environ):
    """None, or the ApiError a request over our limits gets."""
    length = _request_line_length(environ)
    if length > MAX_REQUEST_LINE:
        return ApiError(
            "URI_TOO_LONG", details={"max_bytes": MAX_REQUEST_LINE, "request_line_bytes": length}
        )
    count = 0
    for name, value in _header_lines(environ):
        count += 1
        size = len(name) + 2 + len(str(value).encode("latin-1", "replace"))
        if size > MAX_HEADER_FIELD_SIZE:
            header = name.replace("_", "-").title()
            return ApiError(
                "HEADERS_TOO_LARGE",
                details={"header": header[:100], "max_bytes": MAX_HEADER_FIELD_SIZE},
            )
    if count > MAX_HEADER_FIELDS:
        return ApiError("HEADERS_TOO_LARGE", details={"max_fields": MAX_HEADER_FIELDS})
    return None


class RequestLimits:
    """WSGI middleware: 414 / 431 in the envelope before the app reads anything."""

    def __init__(self, app):
        self.app = app

    def __call__(self, environ, start_response):
        error = check_limits(environ)
        if error is None:
            return self.app(environ, start_response)
        body = dumps(error.to_dict()).encode()
        start_response(
            _STATUS_LINES[error.status],
            [
                ("Content-Type", "application/json"),
                ("Content-Length", str(len(body))),
                ("Connection", "close"),
            ],
        )
        return [body]
