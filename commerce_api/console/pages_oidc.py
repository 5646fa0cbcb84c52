"""Sign-in through the identity provider (OpenID Connect) and the tenant it lands on."""

import uuid

from flask import redirect, request, url_for

from ..errors import ApiError
from . import oidc, sessions
from .pages_auth import safe_next, sign_in_page
from .web import COOKIE, PRE_COOKIE, bp, clear_cookie, set_cookie, settings

LOGIN_COOKIE = "console_login"  # ties the provider's answer to the browser that asked


def _redirect_uri() -> str:
    return settings().get("OIDC_REDIRECT_URI") or url_for("console.oidc_done", _external=True)


def _tenants(claims) -> list[str]:
    """The claim's tenants that are UUIDs, as the API compares them (lower case)."""
    found = []
    for value in claims.get("tenants") or []:
        try:
            found.append(str(uuid.UUID(str(value))))
        except ValueError:
            continue
    return list(dict.fromkeys(found))


@bp.route("/oidc/start")
def oidc_start():
    """Send the browser to the identity provider (authorization code + PKCE)."""
    config = settings()
    if not oidc.configured(config):
        error = ApiError("OIDC_NOT_CONFIGURED")
        return sign_in_page(error.to_dict()["error"], error.status)
    try:
        started = oidc.begin(config, _redirect_uri(), request.args.get("next"))
    except ApiError as error:
        return sign_in_page(error.to_dict()["error"], error.status)
    response = redirect(started.url, 303)
    set_cookie(response, LOGIN_COOKIE, started.nonce, 600)
    return response


@bp.route("/oidc/callback")
def oidc_done():
    """The provider's answer: check it, open the session, pick the tenant."""
    config = settings()
    if not oidc.configured(config):
        error = ApiError("OIDC_NOT_CONFIGURED")
        return sign_in_page(error.to_dict()["error"], error.status)
    try:
        signed_in = oidc.finish(
            config,
            _redirect_uri(),
            request.args.get("code"),
            request.args.get("state"),
            request.args.get("error"),
            request.cookies.get(LOGIN_COOKIE),
        )
        tenants = _tenants(signed_in.claims)
        if not tenants:
            raise ApiError("TENANT_ACCESS_DENIED", "The user has no tenant to act for.")
    except ApiError as error:
        return sign_in_page(error.to_dict()["error"], error.status)
    opened = sessions.open_session(
        tenant_id=tenants[0] if len(tenants) == 1 else "",
        kind="user",
        principal=str(signed_in.claims["sub"]),
        credential=signed_in.token,
        tenants=tenants,
        max_seconds=int(config["CONSOLE_SESSION_MAX_SECONDS"]),
        expires_at=int(signed_in.claims["exp"]) * 1000,
    )
    target = safe_next(signed_in.next_path) if len(tenants) == 1 else url_for("console.tenants")
    response = redirect(target, 303)
    set_cookie(response, COOKIE, opened.token, int(config["CONSOLE_SESSION_MAX_SECONDS"]))
    clear_cookie(response, PRE_COOKIE)
    clear_cookie(response, LOGIN_COOKIE)
    return response
