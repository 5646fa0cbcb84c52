"""CORS: configured origins get their preflight answered without auth and the headers on
every answer; other origins, and every origin without configuration, get none."""

import pytest

from commerce_api import create_app

ORIGIN = "https://console.example.com"
PREFLIGHT = {
    "Origin": ORIGIN,
    "Access-Control-Request-Method": "POST",
    "Access-Control-Request-Headers": "authorization, content-type, x-tenant-id, idempotency-key",
}


def cors_headers(response):
    return {k: v for k, v in response.headers.items() if k.lower().startswith("access-control")}


@pytest.fixture
def cors_client(make_app, app):
    return make_app(CORS_ORIGINS=f"{ORIGIN}, http://localhost:3000").test_client()


def test_a_configured_origins_preflight_is_answered_without_auth(cors_client):
    response = cors_client.options("/api/products", headers=PREFLIGHT)
    assert response.status_code == 204 and response.data == b""
    headers = response.headers
    assert headers["Access-Control-Allow-Origin"] == ORIGIN
    assert set(headers["Access-Control-Allow-Methods"].split(", ")) >= {"GET", "POST", "PATCH"}
    allowed = {h.strip().lower() for h in headers["Access-Control-Allow-Headers"].split(",")}
    assert allowed >= {"authorization", "content-type", "x-tenant-id", "idempotency-key"}
    assert int(headers["Access-Control-Max-Age"]) > 0
    assert "Access-Control-Allow-Credentials" not in headers
    assert "Origin" in headers.get("Vary", "")
    assert headers["X-Request-ID"]
    # a path with a variable, and the second origin
    second = {**PREFLIGHT, "Origin": "http://localhost:3000"}
    other = cors_client.options("/api/api-keys/key_1", headers=second)
    assert other.status_code == 204
    assert other.headers["Access-Control-Allow-Origin"] == "http://localhost:3000"


def test_a_configured_origin_gets_the_headers_on_answers_and_errors(cors_client, tenant, headers):
    ok = cors_client.get("/api/products", headers={**headers, "Origin": ORIGIN})
    assert ok.status_code == 200
    assert ok.headers["Access-Control-Allow-Origin"] == ORIGIN
    exposed = {h.strip() for h in ok.headers["Access-Control-Expose-Headers"].split(",")}
    assert {"X-Request-ID", "X-RateLimit-Remaining", "Retry-After", "Location"} <= exposed
    # the browser must be able to read an error too
    denied = cors_client.get("/api/products", headers={"Origin": ORIGIN})
    assert denied.status_code == 401
    assert denied.headers["Access-Control-Allow-Origin"] == ORIGIN
    missing = cors_client.get("/api/nope", headers={**headers, "Origin": ORIGIN})
    assert missing.status_code == 404
    assert missing.headers["Access-Control-Allow-Origin"] == ORIGIN


def test_an_origin_not_configured_gets_no_cors_headers(cors_client, headers):
    evil = {**PREFLIGHT, "Origin": "https://evil.example.com"}
    assert cors_headers(cors_client.options("/api/products", headers=evil)) == {}
    answer = cors_client.get("/api/products", headers={**headers, "Origin": evil["Origin"]})
    assert answer.status_code == 200 and cors_headers(answer) == {}
    lookalike = {**PREFLIGHT, "Origin": ORIGIN + ".evil.example.com"}
    assert cors_headers(cors_client.options("/api/products", headers=lookalike)) == {}


def test_without_configuration_no_origin_gets_cors_headers(client, headers):
    preflight = client.options("/api/products", headers=PREFLIGHT)
    assert preflight.status_code == 204  # OPTIONS needs no auth, but says nothing to browsers
    assert cors_headers(preflight) == {}
    answer = client.get("/api/products", headers={**headers, "Origin": ORIGIN})
    assert answer.status_code == 200 and cors_headers(answer) == {}


def test_options_changes_nothing_and_reads_nothing(cors_client):
    response = cors_client.options("/api/api-keys", headers=PREFLIGHT)
    assert response.status_code == 204
    assert response.headers["Allow"] == "GET, POST, HEAD, OPTIONS"
    assert "Content-Type" not in response.headers


@pytest.mark.parametrize("setting", ["https://*.example.com", "console.example.com", "https://a/b"])
def test_a_setting_that_is_not_an_origin_stops_the_start(base_config, setting):
    with pytest.raises(ValueError, match="COMMERCE_CORS_ORIGINS"):
        create_app({**base_config, "CORS_ORIGINS": setting})


@pytest.mark.parametrize("origin", [None, ORIGIN, "https://evil.example.com"])
def test_a_single_configured_origin_answers_vary_origin(make_app, app, headers, origin):
    # one origin: flask-cors alone echoes it without Vary, and a cache would serve that
    # answer to every origin (issue 31)
    client = make_app(CORS_ORIGINS=ORIGIN).test_client()
    sent = {**headers, **({"Origin": origin} if origin else {})}
    for response in (
        client.get("/api/products", headers=sent),
        client.get("/api/products", headers={"Origin": origin} if origin else {}),
        client.options("/api/products", headers={**PREFLIGHT, "Origin": origin or ORIGIN}),
    ):
        assert "Origin" in {v.strip() for v in response.headers.get("Vary", "").split(",")}
    allowed = client.get("/api/products", headers=sent).headers.get("Access-Control-Allow-Origin")
    if origin is not None:
        assert allowed == (ORIGIN if origin == ORIGIN else None)
