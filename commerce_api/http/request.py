"""Request hygiene: request ids, body size, content type, JSON syntax, unknown query params."""

import json

from flask import current_app, g, request
from werkzeug.exceptions import HTTPException, RequestEntityTooLarge

from ..errors import ApiError, validation_error
from ..ids import new_id

BODY_METHODS = frozenset(("POST", "PUT", "PATCH"))
VIEW_METHODS = ("GET", "POST", "PUT", "PATCH", "DELETE")
MAX_REQUEST_ID = 200


def assign_request_id():
    incoming = request.headers.get("X-Request-ID")
    if incoming and len(incoming) <= MAX_REQUEST_ID and incoming.isprintable():
        g.request_id = incoming
    else:
        g.request_id = new_id("request")


def upload_limit() -> int | None:
    """The upload size of the request's view when it takes a file (a view class with
    ``upload_max_bytes``: multipart/form-data, not JSON), else None."""
    view = current_app.view_functions.get(request.endpoint or "")
    return getattr(getattr(view, "view_class", None), "upload_max_bytes", None)


def raw_body_limit() -> int | None:
    """The body size of the request's view when it reads its body raw (a view class with
    ``raw_body_max_bytes``: a signed marketplace notification, whose signature is over the
    exact bytes), else None."""
    view = current_app.view_functions.get(request.endpoint or "")
    return getattr(getattr(view, "view_class", None), "raw_body_max_bytes", None)


def _check_upload(limit):
    """A file upload within its own size; werkzeug parses it (files over 500 kB spool to a
    temporary file) when the view reads ``request.files`` (``upload_form``)."""
    length = request.content_length
    if length is not None and length > limit:
        raise ApiError("PAYLOAD_TOO_LARGE", details={"max_bytes": limit})
    request.max_content_length = limit + UPLOAD_FORM_OVERHEAD


def upload_form(limit: int):
    """The form fields and files of a multipart/form-data upload (after the query checks,
    so an unknown query parameter is still a 422)."""
    if request.mimetype != "multipart/form-data":
        raise ApiError(
            "UNSUPPORTED_MEDIA_TYPE",
            "Send the file as multipart/form-data.",
            details={"content_type": request.content_type or None},
        )
    try:
        return request.form, request.files
    except RequestEntityTooLarge:
        raise ApiError("PAYLOAD_TOO_LARGE", details={"max_bytes": limit}) from None


UPLOAD_FORM_OVERHEAD = 64 * 1024  # the form's other fields and part headers


def check_body():
    """Refuse oversized, non-JSON and malformed bodies before any view runs."""
    if request.method not in BODY_METHODS or request.routing_exception is not None:
        # an unknown path or a wrong method is answered as such (404/405), whatever the body
        return
    upload = upload_limit()
    if upload is not None:
        _check_upload(upload)
        return
    raw_limit = raw_body_limit()
    limit = raw_limit or current_app.config["MAX_BODY_BYTES"]
    length = request.content_length
    if length is not None and length > limit:
        raise ApiError("PAYLOAD_TOO_LARGE", details={"max_bytes": limit})
    # A body without Content-Length (chunked) is read only up to one byte past the limit,
    # never whole: werkzeug's stream stops at its maximum without an error, so a body cut
    # at exactly the limit would pass as complete; the extra byte tells it was longer.
    request.max_content_length = limit + 1
    try:
        raw = request.get_data(cache=True)
    except RequestEntityTooLarge:
        raise ApiError("PAYLOAD_TOO_LARGE", details={"max_bytes": limit}) from None
    if len(raw) > limit:
        raise ApiError("PAYLOAD_TOO_LARGE", details={"max_bytes": limit})
    if raw_limit is not None:
        return  # the view checks the bytes as they came (signature first), then parses them
    if not raw:
        g.empty_patch = request.method == "PATCH"
        return
    if request.mimetype != "application/json":
        raise ApiError(
            "UNSUPPORTED_MEDIA_TYPE", details={"content_type": request.content_type or None}
        )
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ApiError("INVALID_JSON", details={"reason": f"Not UTF-8: {exc}"[:200]}) from None
    try:
        document = json.loads(text)
    except RecursionError:
        raise ApiError("INVALID_JSON", details={"reason": "Nested too deeply."}) from None
    except ValueError as exc:
        raise ApiError("INVALID_JSON", details={"reason": str(exc)[:200]}) from None
    g.empty_patch = request.method == "PATCH" and document == {}
    if "\\u" in text:  # NUL and lone surrogates can only arrive as \u escapes
        _check_storable_text(document)


def check_empty_patch():
    """A PATCH without a body, or with ``{}``, changes nothing: 400 (after the query check,
    so that an unknown query parameter is still a 422)."""
    if g.get("empty_patch"):
        raise ApiError("EMPTY_PATCH")


def _check_storable_text(document):
    """Strings the databases can store: no lone UTF-16 surrogates (400), no NUL (422)."""
    stack = [("", document)]
    while stack:
        path, value = stack.pop()
        if isinstance(value, dict):
            items = value.items()
        elif isinstance(value, list):
            items = enumerate(value)
        else:
            _check_string(path, value)
            continue
        for name, item in items:
            _check_string(path or "_schema", name)
            stack.append((f"{path}.{name}" if path else str(name), item))


def _check_string(path, value):
    if not isinstance(value, str) or value.isascii() and "\x00" not in value:
        return
    if any("\ud800" <= char <= "\udfff" for char in value):
        raise ApiError(
            "INVALID_JSON", details={"reason": f"Lone UTF-16 surrogate in {path or 'the body'}."}
        )
    if "\x00" in value:
        raise validation_error({path or "_schema": ["Must not contain the NUL character."]})


def _refuses_query_args(view, method):
    """True when the view's ``method`` is documented and declares no query arguments."""
    view_class = getattr(view, "view_class", None)
    handler = getattr(view_class, method.lower(), None) if view_class else view
    apidoc = getattr(handler, "_apidoc", None)
    if apidoc is None:
        return False
    arguments = apidoc.get("arguments", {}).get("parameters", [])
    return not any(p.get("in") == "query" for p in arguments)


def check_query_args():
    """Views that declare no query arguments accept none (webargs checks the others).

    No text in the path or the query may hold NUL, which no database stores or matches.
    """
    if request.url_rule is None:
        return
    if any(
        "\x00" in value for value in (request.view_args or {}).values() if isinstance(value, str)
    ):
        raise ApiError("RESOURCE_NOT_FOUND", "The requested URL was not found.")
    if not request.args:
        return
    nul = [name for name, value in request.args.items(multi=True) if "\x00" in name + value]
    if nul:
        raise validation_error({name: ["Must not contain the NUL character."] for name in nul})
    view = current_app.view_functions.get(request.endpoint)
    # decided once per view and method (views do not change once the app is built)
    decided = getattr(view, "refuses_query_args", None)
    if decided is None:
        decided = {}
        try:
            view.refuses_query_args = decided
        except AttributeError:
            pass
    refuses = decided.get(request.method)
    if refuses is None:
        refuses = decided[request.method] = _refuses_query_args(view, request.method)
    if refuses:
        raise validation_error({name: ["Unknown field."] for name in request.args})


def allowed_methods():
    """The methods of the resource at this path, as documented, or None (no such path).

    A path may match several rules (``/api/ai-jobs/batch`` is also ``/api/ai-jobs/<id>``);
    the resource is the most specific one (fewest variable parts), and werkzeug's union of
    them would name methods the resource does not have.
    """
    adapter = current_app.create_url_adapter(request)
    rules = []
    for method in VIEW_METHODS:
        try:
            rule, _ = adapter.match(method=method, return_rule=True)
        except HTTPException:
            continue
        rules.append(rule)
    if not rules:
        return None
    resource = min(rules, key=lambda rule: len(rule.arguments))
    methods = [m for m in VIEW_METHODS if m in resource.methods]
    # HEAD (with GET) and OPTIONS are answered by Flask itself
    return methods + (["HEAD"] if "GET" in methods else []) + ["OPTIONS"]


def finish_response(response):
    if "Allow" in response.headers:  # 405, and the automatic answer to OPTIONS
        methods = allowed_methods()
        if methods:
            response.headers["Allow"] = ", ".join(methods)
    response.headers["X-Request-ID"] = g.get("request_id", "")
    if response.status_code == 204:
        response.headers.pop("Content-Type", None)
    return response
