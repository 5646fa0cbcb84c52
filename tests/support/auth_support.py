"""User JWTs signed with the session's test keys (``jwt_keys``), and bursts of requests
against a two-process server to see a key or plan change on every process."""

import time
from concurrent.futures import ThreadPoolExecutor

import jwt
import requests

from .factories import product_body
from .http_support import assert_refused

JWT_ISSUER = "https://idp.test/"
JWT_AUDIENCE = "commerce-api"
LIST = "/api/products"
ALL_PRODUCT_SCOPES = "products:read products:write"


def claims_for(tenant_id, **overrides):
    now = int(time.time())
    claims = {
        "sub": "user-123",
        "email": "ann@example.com",
        "iss": JWT_ISSUER,
        "aud": JWT_AUDIENCE,
        "iat": now,
        "exp": now + 3600,
        "tenants": [tenant_id],
        "scope": ALL_PRODUCT_SCOPES,
    }
    claims.update(overrides)
    return {k: v for k, v in claims.items() if v is not None}


def token(jwt_keys, tenant_id, alg="RS256", key=None, headers=None, **overrides):
    signing_key = key or (jwt_keys["rsa"] if alg == "RS256" else jwt_keys["ec"])
    return jwt.encode(claims_for(tenant_id, **overrides), signing_key, alg, headers=headers)


def bearer(value, tenant_id):
    return {"Authorization": f"Bearer {value}", "X-Tenant-ID": tenant_id}


def unauthenticated(client, headers, reason):
    error = assert_refused(
        client, "POST", LIST, headers, 401, "UNAUTHENTICATED", json=product_body("JWT-X")
    )
    assert error["details"]["reason"] == reason, error
    response = client.get(LIST, headers=headers)
    assert response.status_code == 401
    assert response.headers["WWW-Authenticate"].startswith("Bearer")


def burst(base, headers, count=24):
    """``count`` GETs from 4 threads at once, so both server processes answer (and cache)."""

    def get(_):
        return requests.get(base + "/api/products", headers=headers, timeout=10)

    with ThreadPoolExecutor(max_workers=4) as pool:
        return list(pool.map(get, range(count)))


def codes(responses):
    return {(r.status_code, r.json().get("error", {}).get("code")) for r in responses}
