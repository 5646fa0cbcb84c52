"""Signing in and out of the console: server-side sessions, cookie flags, expiry, CSRF,
security headers (DESIGN 15)."""

import pytest

from commerce_api.auth.services import revoke_key
from commerce_api.console.models import ConsoleSession
from commerce_api.console.sessions import token_hash
from commerce_api.db import write_transaction
from tests.support.console_support import csrf_of, post_form, sign_in
from tests.support.factories import make_key


def _cookie(response, name):
    for header in response.headers.getlist("Set-Cookie"):
        if header.startswith(name + "="):
            return header
    return None


def test_sign_in_opens_a_server_side_session_with_a_strict_cookie(app, tenant):
    client = app.test_client()
    key, secret = make_key(tenant)
    answer = sign_in(client, secret)
    assert answer.status_code == 303
    assert answer.headers["Location"] == "/console/"
    cookie = _cookie(answer, "console_session")
    assert "HttpOnly" in cookie and "SameSite=Lax" in cookie and "Path=/console" in cookie
    assert "Secure" not in cookie  # plain HTTP on 127.0.0.1
    token = cookie.split(";")[0].split("=", 1)[1]
    row = ConsoleSession.get_by_id(token_hash(token))
    assert (row.tenant_id, row.kind, row.principal) == (tenant.id, "api_key", key.id)
    assert secret not in token
    page = client.get("/console/")
    assert page.status_code == 200
    assert tenant.id in page.text


def test_the_stored_credential_is_encrypted(app, tenant):
    client = app.test_client()
    _, secret = make_key(tenant)
    sign_in(client, secret)
    from commerce_api.db import db

    stored = db.execute_sql("SELECT credential FROM console_session").fetchone()[0]
    assert stored.startswith("fernet:") and secret not in stored


def test_the_cookie_is_secure_behind_https(app, tenant):
    client = app.test_client()
    _, secret = make_key(tenant)
    page = client.get("/console/sign-in", base_url="https://localhost")
    answer = client.post(
        "/console/sign-in",
        data={"api_key": secret, "csrf_token": csrf_of(page.text)},
        base_url="https://localhost",
    )
    assert "Secure" in _cookie(answer, "console_session")


@pytest.mark.parametrize(
    "secret, reason",
    [("ck_" + "x" * 40, "invalid"), ("not a key", "invalid"), ("", "invalid")],
)
def test_a_bad_key_is_refused_with_the_apis_code(app, secret, reason):
    client = app.test_client()
    answer = sign_in(client, secret)
    assert answer.status_code == 401
    assert "UNAUTHENTICATED" in answer.text and "The API key is not valid." in answer.text
    assert _cookie(answer, "console_session") is None
    assert ConsoleSession.select().count() == 0


def test_a_revoked_or_expired_key_cannot_sign_in(app, tenant):
    client = app.test_client()
    key, secret = make_key(tenant)
    revoke_key(key.id)
    answer = sign_in(client, secret)
    assert answer.status_code == 401 and "The API key has been revoked." in answer.text


def test_a_key_outside_its_ip_allowlist_cannot_sign_in(app, tenant):
    client = app.test_client()
    _, secret = make_key(tenant, allowed_ips=["10.9.9.0/24"])
    answer = sign_in(client, secret)
    assert answer.status_code == 403 and "IP_NOT_ALLOWED" in answer.text


def test_pages_need_a_session(app):
    client = app.test_client()
    answer = client.get("/console/orders?status=pending")
    assert answer.status_code == 303
    assert answer.headers["Location"].startswith("/console/sign-in?next=")
    answer = client.get("/console/", headers={"Cookie": "console_session=forged"})
    assert answer.status_code == 303


def test_sign_in_returns_to_the_page_asked_for_and_never_elsewhere(app, tenant):
    _, secret = make_key(tenant)
    for target, expected in [
        ("/console/orders?status=pending", "/console/orders?status=pending"),
        ("//evil.example/console/", "/console/"),
        ("https://evil.example/", "/console/"),
        ("/console/\\evil", "/console/"),
    ]:
        client = app.test_client()
        page = client.get("/console/sign-in")
        answer = client.post(
            "/console/sign-in",
            data={"api_key": secret, "csrf_token": csrf_of(page.text), "next": target},
        )
        assert answer.headers["Location"] == expected


def test_sign_out_revokes_the_session_for_good(console):
    cookie = console.get_cookie("console_session", path="/console").value
    answer = post_form(console, "/console/", "/console/sign-out")
    assert answer.status_code == 303
    assert ConsoleSession.get_by_id(token_hash(cookie)).revoked_at is not None
    # replaying the old cookie gets nothing
    console.set_cookie("console_session", cookie, path="/console")
    assert console.get("/console/").status_code == 303


def test_an_idle_session_ends(console):
    cookie = console.get_cookie("console_session", path="/console").value
    with write_transaction():
        ConsoleSession.update(last_seen_at=ConsoleSession.last_seen_at - 1801 * 1000).execute()
    assert console.get("/console/").status_code == 303
    assert ConsoleSession.get_by_id(token_hash(cookie)).revoked_at is None  # just over


def test_a_session_ends_at_its_absolute_expiry_however_active(console):
    with write_transaction():
        ConsoleSession.update(expires_at=ConsoleSession.created_at).execute()
    assert console.get("/console/").status_code == 303


def test_revoking_the_key_ends_the_session_on_the_next_page(app, tenant):
    client = app.test_client()
    key, secret = make_key(tenant)
    sign_in(client, secret)
    assert client.get("/console/products").status_code == 200
    revoke_key(key.id)
    answer = client.get("/console/products")
    assert answer.status_code == 303 and answer.headers["Location"].endswith("ended=1")
    assert ConsoleSession.get().revoked_at is not None
    assert client.get("/console/").status_code == 303


def test_the_sign_in_form_needs_its_csrf_token(app, tenant):
    client = app.test_client()
    _, secret = make_key(tenant)
    client.get("/console/sign-in")
    for token in (None, "forged"):
        data = {"api_key": secret} | ({"csrf_token": token} if token else {})
        answer = client.post("/console/sign-in", data=data)
        assert answer.status_code == 403 and "CSRF_TOKEN_INVALID" in answer.text
    assert ConsoleSession.select().count() == 0


def test_every_page_carries_the_security_headers(console, app):
    for path in ("/console/", "/console/sign-in", "/console/products"):
        headers = console.get(path).headers
        csp = headers["Content-Security-Policy"]
        assert "script-src 'self'" in csp and "frame-ancestors 'none'" in csp
        assert "unsafe-inline" not in csp
        assert headers["X-Frame-Options"] == "DENY"
        assert headers["Cache-Control"] == "no-store"
        assert "text/html" in headers["Content-Type"]
    page = console.get("/console/").text
    assert "<script>" not in page and " on" + "click=" not in page  # no inline script


def test_the_api_is_untouched_by_the_console(client, headers):
    # a console cookie is no credential for the API
    answer = client.get("/api/products", headers={"Cookie": "console_session=x"})
    assert answer.status_code == 401
    assert client.get("/api/products", headers=headers).status_code == 200


def test_ended_sessions_are_purged_by_the_fleet(console, app, tenant):
    from commerce_api.console.tasks import purge_console_sessions
    from commerce_api.jobs import registry

    assert "console_session_purge" in registry.PERIODIC_TASKS
    live = ConsoleSession.get()
    client = app.test_client()
    _, secret = make_key(tenant)
    sign_in(client, secret)
    post_form(client, "/console/", "/console/sign-out")
    week = 7 * 86_400_000 + 1000
    with write_transaction():
        ConsoleSession.update(
            revoked_at=ConsoleSession.revoked_at - week,
            last_seen_at=ConsoleSession.last_seen_at - week,
            created_at=ConsoleSession.created_at - week,
        ).where(ConsoleSession.revoked_at.is_null(False)).execute()
    assert purge_console_sessions() == 1
    assert [s.id for s in ConsoleSession.select()] == [live.id]
    assert console.get("/console/").status_code == 200


def test_a_form_over_the_body_limit_is_refused(console, app, monkeypatch):
    monkeypatch.setitem(app.config, "MAX_BODY_BYTES", 1000)
    answer = console.post("/console/settings/api-keys", data={"name": "x" * 5000})
    assert answer.status_code == 413
    from commerce_api.auth.models import ApiKey

    assert ApiKey.select().count() == 1  # only the signed-in key
