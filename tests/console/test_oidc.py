"""Console sign-in through an OpenID Connect identity provider (authorization code + PKCE),
against a fake provider on 127.0.0.1; the token is then checked as the API checks a user
JWT, and a user of several tenants picks one."""

import time

import pytest
import requests

from commerce_api.console.models import ConsoleLogin, ConsoleSession
from tests.support.console_support import post_form
from tests.support.factories import make_tenant
from tests.support.fake_idp import FakeIdentityProvider
from tests.support.orders_support import make_products


@pytest.fixture
def idp(app, jwt_keys, monkeypatch):
    with FakeIdentityProvider(jwt_keys) as provider:
        monkeypatch.setitem(app.config, "OIDC_ISSUER", provider.url)
        monkeypatch.setitem(app.config, "OIDC_CLIENT_ID", "console")
        monkeypatch.setitem(app.config, "OIDC_CLIENT_SECRET", "s3cret")
        yield provider


def start(client):
    """Press "Sign in with your identity provider": the provider's URL, after its redirect
    back (it signs the user in at once), as a path of the console with code and state."""
    answer = client.get("/console/oidc/start")
    assert answer.status_code == 303, answer.text[:1000]
    back = requests.get(answer.headers["Location"], allow_redirects=False, timeout=10)
    assert back.status_code == 302
    return back.headers["Location"].replace("http://localhost", "")


def test_sign_in_through_the_provider(app, client, headers, tenant, idp):
    make_products(client, headers, "MUG-1")
    idp.user = {"tenant": tenant.id, "scope": "products:read"}
    browser = app.test_client()
    assert "Sign in with your identity provider" in browser.get("/console/sign-in").text
    callback = start(browser)
    assert callback.startswith("/console/oidc/callback?code=")
    answer = browser.get(callback)
    assert answer.status_code == 303 and answer.headers["Location"] == "/console/"
    session = ConsoleSession.get()
    assert (session.kind, session.principal, session.tenant_id) == ("user", "user-123", tenant.id)
    assert session.expires_at <= (int(time.time()) + 3600) * 1000
    assert "MUG-1" in browser.get("/console/products").text
    # the user's scopes are the token's: no orders:read here
    orders = browser.get("/console/orders")
    assert orders.status_code == 403 and "orders:read" in orders.text
    (request,) = idp.token_requests
    assert request["code_verifier"] and request["grant_type"] == "authorization_code"
    assert ConsoleLogin.select().count() == 0  # the state was used up


def test_a_state_works_once(app, tenant, idp):
    idp.user = {"tenant": tenant.id}
    browser = app.test_client()
    callback = start(browser)
    assert browser.get(callback).status_code == 303
    again = app.test_client()
    again.set_cookie("console_login", "x", path="/console")
    replay = again.get(callback)
    assert replay.status_code == 401 and "OIDC_SIGN_IN_FAILED" in replay.text
    assert ConsoleSession.select().count() == 1


def test_an_answer_brought_to_another_browser_is_refused(app, tenant, idp):
    idp.user = {"tenant": tenant.id}
    attacker = app.test_client()
    callback = start(attacker)
    victim = app.test_client()
    answer = victim.get(callback)
    assert answer.status_code == 401 and "another browser" in answer.text
    assert ConsoleSession.select().count() == 0


@pytest.mark.parametrize(
    "user, id_overrides, code, reason",
    [
        ({"aud": "someone-else"}, {}, "UNAUTHENTICATED", "The token audience is not accepted."),
        ({"exp": 1}, {}, "UNAUTHENTICATED", "The token has expired."),
        ({}, {"nonce": "another"}, "OIDC_SIGN_IN_FAILED", "another sign-in"),
        ({}, {"aud": "another-client"}, "OIDC_SIGN_IN_FAILED", "The ID token is not valid"),
        ({"tenants": []}, {}, "TENANT_ACCESS_DENIED", "no tenant"),
    ],
)
def test_tokens_the_api_would_refuse_open_no_session(app, tenant, idp, user, id_overrides,
                                                     code, reason):  # fmt: skip
    idp.user = {"tenant": tenant.id, **user}
    idp.id_overrides = id_overrides
    browser = app.test_client()
    answer = browser.get(start(browser))
    assert 400 <= answer.status_code < 500
    assert code in answer.text and reason in answer.text
    assert ConsoleSession.select().count() == 0


def test_a_user_of_several_tenants_picks_one(app, client, headers, tenant, idp):
    other = make_tenant()
    stranger = make_tenant()
    make_products(client, headers, "MUG-1")
    idp.user = {"tenant": tenant.id, "tenants": [other.id, tenant.id], "scope": "products:read"}
    browser = app.test_client()
    answer = browser.get(start(browser))
    assert answer.headers["Location"] == "/console/tenants"
    assert browser.get("/console/products").headers["Location"] == "/console/tenants"
    picker = browser.get("/console/tenants")
    assert other.id in picker.text and tenant.id in picker.text
    refused = post_form(browser, "/console/tenants", "/console/tenants", {"tenant_id": stranger.id})
    assert refused.status_code == 403 and "TENANT_ACCESS_DENIED" in refused.text
    chosen = post_form(browser, "/console/tenants", "/console/tenants", {"tenant_id": tenant.id})
    assert chosen.status_code == 303
    assert "MUG-1" in browser.get("/console/products").text
    post_form(browser, "/console/tenants", "/console/tenants", {"tenant_id": other.id})
    assert "MUG-1" not in browser.get("/console/products").text


def test_a_provider_that_is_down_is_named(app, monkeypatch):
    from tests.support.servers import free_port

    monkeypatch.setitem(app.config, "OIDC_ISSUER", f"http://127.0.0.1:{free_port()}")
    monkeypatch.setitem(app.config, "OIDC_CLIENT_ID", "console")
    answer = app.test_client().get("/console/oidc/start")
    assert answer.status_code == 503 and "IDENTITY_PROVIDER_UNAVAILABLE" in answer.text


def test_without_configuration_there_is_no_provider_sign_in(app):
    browser = app.test_client()
    assert "identity provider" not in browser.get("/console/sign-in").text
    answer = browser.get("/console/oidc/start")
    assert answer.status_code == 404 and "OIDC_NOT_CONFIGURED" in answer.text
