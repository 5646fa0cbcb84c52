"""Sign-in with an API key, sign-out, and the tenant picker."""

from flask import current_app, g, make_response, redirect, render_template, request, url_for

from ..auth.middleware import authenticate
from ..auth.models import ApiKey
from ..auth.services import KEY_PREFIX, hash_key
from ..errors import ApiError
from . import sessions
from .oidc import configured as oidc_configured
from .web import (
    COOKIE,
    PRE_COOKIE,
    bp,
    clear_cookie,
    csrf_token,
    done,
    render,
    set_cookie,
    settings,
)


def safe_next(target: str | None) -> str:
    """Only a console path of this site (never ``//host`` or a scheme)."""
    if target and target.startswith("/console/") and "\\" not in target and "//" not in target:
        return target
    return url_for("console.overview")


def sign_in_page(error: dict | None = None, status: int = 200):
    ended = request.args.get("ended") == "1"
    response = make_response(
        render_template(
            "console/sign_in.html",
            error=error,
            ended=ended,
            next=request.values.get("next", ""),
            oidc=oidc_configured(settings()),
        ),
        status,
    )
    set_cookie(response, PRE_COOKIE, csrf_token(), None)
    response.headers["Cache-Control"] = "no-store"
    return response


def check_key(secret: str) -> tuple[str, str]:
    """``(tenant id, key id)`` of a key the API would accept from this browser, or the
    API's own refusal (ApiError): the very check of ``authenticate``."""
    if not secret.startswith(KEY_PREFIX) or len(secret) > 200:
        raise ApiError("UNAUTHENTICATED", "The API key is not valid.", {"reason": "invalid"})
    key = ApiKey.get_or_none(ApiKey.key_hash == hash_key(secret))
    if key is None:
        raise ApiError("UNAUTHENTICATED", "The API key is not valid.", {"reason": "invalid"})
    app = current_app._get_current_object()
    headers = {"Authorization": f"Bearer {secret}", "X-Tenant-ID": key.tenant_id}
    forwarded = request.headers.get("X-Forwarded-For")
    if forwarded:
        headers["X-Forwarded-For"] = forwarded
    environ = {"REMOTE_ADDR": request.remote_addr or "127.0.0.1"}
    with app.app_context(), app.test_request_context(headers=headers, environ_base=environ):
        auth = authenticate()
    return auth.tenant_id, auth.principal_id


@bp.route("/sign-in", methods=["GET", "POST"])
def sign_in():
    """Sign in with an API key (or start the identity provider's sign-in)."""
    if request.method == "GET":
        return sign_in_page()
    secret = request.form.get("api_key", "").strip()
    try:
        tenant_id, key_id = check_key(secret)
    except ApiError as error:
        return sign_in_page(error.to_dict()["error"], error.status)
    config = settings()
    opened = sessions.open_session(
        tenant_id=tenant_id,
        kind="api_key",
        principal=key_id,
        credential=secret,
        max_seconds=int(config["CONSOLE_SESSION_MAX_SECONDS"]),
    )
    response = redirect(safe_next(request.form.get("next")), 303)
    set_cookie(response, COOKIE, opened.token, int(config["CONSOLE_SESSION_MAX_SECONDS"]))
    clear_cookie(response, PRE_COOKIE)
    return response


@bp.route("/sign-out", methods=["POST"])
def sign_out():
    """End the session (the cookie is worthless from now on, on every process)."""
    sessions.end_session(g.console_session.id)
    response = redirect(url_for("console.sign_in"), 303)
    clear_cookie(response, COOKIE)
    return response


@bp.route("/tenants", methods=["GET", "POST"])
def tenants():
    """Pick the tenant to work on (a user of several tenants)."""
    session = g.console_session
    choices = session.tenants or []
    if request.method == "POST":
        if sessions.choose_tenant(session, request.form.get("tenant_id", "")):
            return done("console.overview", "tenant")
        error = {
            "code": "TENANT_ACCESS_DENIED",
            "message": "The token has no access to this tenant.",
            "details": {},
        }
        return render("console/tenants.html", 403, choices=choices, errors=[error])
    return render("console/tenants.html", choices=choices)
