"""The console's one way to the data: the API itself, called inside the process.

Every read and write of a page is an ordinary API request (the same routes, validation,
services, tenant isolation, scope checks, rate limits and error envelope), made with the
session's credential as its Bearer token and the session's tenant as X-Tenant-ID, from the
browser's own address (IP allowlists apply). So a page can neither see nor do more than
the same key could with curl, and every refusal carries the API's code and message.
"""

import json
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote

from flask import current_app, g, request
from werkzeug.test import EnvironBuilder, run_wsgi_app


@dataclass(frozen=True)
class Answer:
    status: int
    body: dict[str, Any] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return self.status < 400

    @property
    def data(self) -> Any:
        return self.body.get("data") if self.ok else None

    @property
    def meta(self) -> dict[str, Any]:
        return self.body.get("meta") or {}

    @property
    def error(self) -> dict[str, Any] | None:
        if self.ok:
            return None
        error = self.body.get("error") if isinstance(self.body, dict) else None
        if not isinstance(error, dict):
            return {"code": "INTERNAL_ERROR", "message": "The API gave no answer.", "details": {}}
        return error

    @property
    def missing_scope(self) -> str | None:
        error = self.error
        if error and error.get("code") == "INSUFFICIENT_SCOPE":
            return (error.get("details") or {}).get("required_scope")
        return None


def segment(value: str) -> str:
    """A value for a path segment (an SKU may hold any character)."""
    return quote(str(value), safe="")


def call(
    method: str,
    path: str,
    *,
    credential: str,
    tenant_id: str,
    query: dict[str, Any] | None = None,
    body: Any = None,
    form: dict[str, Any] | None = None,
) -> Answer:
    """Make one API request inside the process and return its answer: a JSON ``body``, or a
    multipart ``form`` (values, and files as ``(stream, filename, content type)``)."""
    app = current_app._get_current_object()
    headers = {
        "Authorization": f"Bearer {credential}",
        "X-Tenant-ID": tenant_id,
        "X-Request-ID": g.get("request_id", ""),
        "Accept": "application/json",
    }
    forwarded = request.headers.get("X-Forwarded-For")
    if forwarded:
        headers["X-Forwarded-For"] = forwarded
    args = {k: v for k, v in (query or {}).items() if v not in (None, "")}
    data, content_type = None, None
    if form is not None:  # multipart even without a file (the API says which part is missing)
        data, content_type = form, "multipart/form-data"
    elif body is not None:
        data, content_type = json.dumps(body), "application/json"
    builder = EnvironBuilder(
        path=path,
        method=method,
        query_string=args,
        headers=headers,
        data=data,
        content_type=content_type,
        environ_base={"REMOTE_ADDR": request.remote_addr or "127.0.0.1"},
    )
    environ = builder.get_environ()
    builder.close()
    # a fresh application context: the inner request has its own ``g`` (auth, request id,
    # idempotency claim), and the page's own is back untouched afterwards
    with app.app_context():
        chunks, status, _ = run_wsgi_app(app.wsgi_app, environ, buffered=True)
        raw = b"".join(chunks)
        close = getattr(chunks, "close", None)
        if close:
            close()
    code = int(status.split(" ", 1)[0])
    try:
        parsed = json.loads(raw) if raw else {}
    except ValueError:
        parsed = {}
    return Answer(status=code, body=parsed if isinstance(parsed, dict) else {})
