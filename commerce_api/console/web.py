"""The console's blueprint: sessions on every request, CSRF on every form, security headers,
and the helpers the pages share (DESIGN 15)."""

import ipaddress
import logging
import secrets
from typing import Any
from urllib.parse import urlencode

from flask import (
    Blueprint,
    Response,
    current_app,
    g,
    make_response,
    redirect,
    render_template,
    request,
    url_for,
)
from werkzeug.exceptions import HTTPException

from ..auth.models import SCOPES
from ..errors import ApiError
from ..files.imports import MAX_IMPORT_BYTES
from . import gateway, sessions
from .gateway import Answer

bp = Blueprint(
    "console",
    __name__,
    url_prefix="/console",
    template_folder="templates",
    static_folder="static",
    static_url_path="/static",
)

log = logging.getLogger("commerce_api.console")
COOKIE = "console_session"
PRE_COOKIE = "console_csrf"  # the sign-in form's double-submit token (no session yet)
PUBLIC_ENDPOINTS = {"console.static", "console.sign_in", "console.oidc_start", "console.oidc_done"}
CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
)
# What a successful action says on the page it lands on (never text from the request)
NOTICES = {
    "pushed": "The listings are queued for a push to their marketplaces.",
    "stock-set": "The stock level is set.",
    "stock-adjusted": "The stock level is adjusted.",
    "transfer-created": "The transfer is drafted.",
    "transfer-shipped": "The transfer is shipped: its stock is in transit.",
    "transfer-received": "The receipt is recorded.",
    "transfer-cancelled": "The transfer is cancelled.",
    "listing-updated": "The listing is changed; it is pushed to its marketplace.",
    "components-set": "The bundle's components are set.",
    "import-queued": "The file is uploaded; its import runs as this job.",
    "safety-stock": "The safety stock is set.",
    "shipped": "The shipment is confirmed.",
    "cancelled": "The cancellation is requested; the marketplace decides.",
    "applied": "The recommendation is applied.",
    "dismissed": "The recommendation is dismissed.",
    "dispatched": "The job is dispatched.",
    "narrowed": "The key's scopes are changed.",
    "revoked": "The key is revoked.",
    "tested": "A test event is queued for delivery.",
    "redelivered": "The delivery is queued again.",
    "recovered": "The missed events are queued again.",
    "disabled": "The endpoint is disabled.",
    "enabled": "The endpoint is enabled.",
    "connected": "The marketplace is connected.",
    "status-changed": "The connection's status is changed.",
    "rule-created": "The pricing rule is created.",
    "tenant": "The tenant is chosen.",
}


def is_console_request() -> bool:
    """True for the console's paths: the API's own authentication and body rules (JSON
    bodies, bearer tokens) do not apply; the console checks its session and CSRF token."""
    return request.blueprint == "console" or request.path.startswith("/console/")


def settings() -> dict[str, Any]:
    return current_app.config


def _behind_https() -> bool:
    if request.is_secure:
        return True
    trusted = current_app.extensions["commerce"]["trusted_proxies"]
    try:
        peer = ipaddress.ip_address(request.remote_addr or "")
    except ValueError:
        return False
    proto = request.headers.get("X-Forwarded-Proto", "").split(",")[0].strip().lower()
    return proto == "https" and any(peer in net for net in trusted)


def set_cookie(response: Response, name: str, value: str, max_age: int | None) -> None:
    response.set_cookie(
        name,
        value,
        max_age=max_age,
        path="/console",
        httponly=True,
        samesite="Lax",
        secure=_behind_https(),
    )


def clear_cookie(response: Response, name: str) -> None:
    response.delete_cookie(
        name, path="/console", httponly=True, samesite="Lax", secure=_behind_https()
    )


def _refuse_csrf() -> Response:
    error = {
        "code": "CSRF_TOKEN_INVALID",
        "message": "The form's CSRF token is missing or does not match; reload the page.",
        "details": {},
    }
    return make_response(render_template("console/error.html", error=error), 403)


@bp.before_request
def _load_session():
    g.console_session = None
    # the API's body limit holds for the console's forms too (413 past it); an import's
    # upload has the import's own (the API checks the file again)
    request.max_content_length = (
        MAX_IMPORT_BYTES + 64 * 1024
        if request.endpoint == "console.create_import"
        else int(settings()["MAX_BODY_BYTES"])
    )
    if request.endpoint in PUBLIC_ENDPOINTS:
        if request.method == "POST" and not sessions.csrf_matches(
            request.cookies.get(PRE_COOKIE), request.form.get("csrf_token")
        ):
            return _refuse_csrf()
        return None
    session = sessions.find_session(
        request.cookies.get(COOKIE), int(settings()["CONSOLE_SESSION_IDLE_SECONDS"])
    )
    if session is None:
        target = url_for("console.sign_in")
        if request.method == "GET" and request.path != url_for("console.overview"):
            target += "?" + urlencode({"next": request.full_path.rstrip("?")})
        if request.headers.get("HX-Request"):
            response = make_response("", 204)
            response.headers["HX-Redirect"] = target
            return response
        return redirect(target, 303)
    g.console_session = session
    if request.method == "POST" and not sessions.csrf_matches(
        session.csrf_token, request.form.get("csrf_token")
    ):
        return _refuse_csrf()
    if not session.tenant_id and request.endpoint not in ("console.tenants", "console.sign_out"):
        return redirect(url_for("console.tenants"), 303)
    return None


@bp.after_request
def _security_headers(response: Response) -> Response:
    headers = response.headers
    headers["Content-Security-Policy"] = CSP
    headers["X-Frame-Options"] = "DENY"
    headers["X-Content-Type-Options"] = "nosniff"
    headers["Referrer-Policy"] = "same-origin"
    if request.endpoint != "console.static":
        headers["Cache-Control"] = "no-store"
    return response


@bp.app_template_global()
def csrf_token() -> str:
    session = g.get("console_session")
    if session is not None:
        return session.csrf_token
    token = g.get("pre_csrf")
    if token is None:
        token = g.pre_csrf = request.cookies.get(PRE_COOKIE) or secrets.token_urlsafe(32)
    return token


@bp.app_template_global()
def page_url(endpoint: str, **values: Any) -> str:
    """``url_for`` without empty values (filters left blank stay out of the URL)."""
    return url_for(endpoint, **{k: v for k, v in values.items() if v not in (None, "")})


def api(
    method: str,
    path: str,
    query: dict[str, Any] | None = None,
    body: Any = None,
    form: dict[str, Any] | None = None,
) -> Answer:
    """An API request as the signed-in key or user, for the session's tenant."""
    session = g.console_session
    answer = gateway.call(
        method,
        path,
        credential=session.credential,
        tenant_id=session.tenant_id,
        query=query,
        body=body,
        form=form,
    )
    if answer.status == 401:
        g.signed_out = answer.error  # the key was revoked or has expired: the session ends
        sessions.end_session(session.id)
    return answer


def args_of(*names: str) -> dict[str, str]:
    """The named query arguments that hold a value (a page's filters and cursor)."""
    return {n: request.args[n].strip() for n in names if request.args.get(n, "").strip()}


def render(template: str, status: int = 200, **context: Any) -> Response:
    """A page; a 401 from the API on the way (revoked key) sends the user to sign in."""
    if g.get("signed_out") is not None:
        response = redirect(url_for("console.sign_in", ended="1"), 303)
        clear_cookie(response, COOKIE)
        return response
    notice = NOTICES.get(request.args.get("notice", ""))
    errors = [e for e in context.pop("errors", []) if e]
    response = make_response(
        render_template(
            template,
            notice=notice,
            errors=errors,
            session=g.get("console_session"),
            scopes=SCOPES,
            **context,
        ),
        status,
    )
    return response


def first_error(*answers: Answer) -> dict[str, Any] | None:
    for answer in answers:
        if answer is not None and answer.error:
            return answer.error
    return None


def status_of(*answers: Answer) -> int:
    """The page's status: the first refusal's (a page never shows a 500 of its own)."""
    for answer in answers:
        if answer is not None and not answer.ok:
            return answer.status
    return 200


def done(endpoint: str, notice: str, **values: Any) -> Response:
    """After a successful action: back to a page (303), with a fixed notice."""
    return redirect(url_for(endpoint, notice=notice, **values), 303)


def form_text(name: str) -> str | None:
    value = request.form.get(name, "").strip()
    return value or None


def form_int(name: str) -> int | str | None:
    """An integer from a form field; text that is not one goes to the API as it is, so that
    the API's own validation names the field."""
    value = form_text(name)
    if value is None:
        return None
    try:
        return int(value)
    except ValueError:
        return value


def form_number(name: str) -> float | str | None:
    value = form_text(name)
    if value is None:
        return None
    try:
        return float(value)
    except ValueError:
        return value


def present(**fields: Any) -> dict[str, Any]:
    """A request body of the fields the form filled (a blank field is left out, so the API
    says which required one is missing)."""
    return {k: v for k, v in fields.items() if v is not None}


@bp.app_template_filter("money")
def money(value: Any) -> str:
    """An amount with its two places (the API's JSON number drops a trailing zero)."""
    if isinstance(value, int | float) and not isinstance(value, bool):
        return f"{value:.2f}"
    return "—" if value is None else str(value)


@bp.errorhandler(ApiError)
def _refused(error: ApiError) -> Response:
    """A refusal raised on the way (a stored secret no key decrypts, ...): the error page."""
    return make_response(
        render_template("console/error.html", error=error.to_dict()["error"]), error.status
    )


@bp.errorhandler(Exception)
def _unexpected(error: Exception) -> Response:
    """A bug: logged with the request id, shown as a page (never a trace or a JSON body)."""
    if isinstance(error, HTTPException):
        return error
    log.exception("console page failed (request %s)", g.get("request_id"))
    body = ApiError("INTERNAL_ERROR").to_dict()["error"]
    return make_response(render_template("console/error.html", error=body), 500)


@bp.route("/<path:unknown>")
def not_found(unknown: str) -> Response:
    """A console path that is no page."""
    body = ApiError("RESOURCE_NOT_FOUND", "There is no such page.").to_dict()["error"]
    return make_response(render_template("console/error.html", error=body), 404)


@bp.app_template_filter("columns")
def columns(rows: list[Any]) -> list[str]:
    """The keys of a list of objects, in first-seen order (a row may lack some)."""
    seen: dict[str, None] = {}
    for row in rows[:50]:
        if isinstance(row, dict):
            seen.update(dict.fromkeys(row))
    return list(seen)
