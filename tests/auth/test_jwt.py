"""User JWTs: real RS256 and ES256 tokens made here, and every way a token can be wrong."""

import base64
import hashlib
import hmac
import json
import time
import uuid

import jwt
import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa

from commerce_api.jobs.models import Job
from tests.support.auth_support import LIST, bearer, claims_for, token, unauthenticated
from tests.support.factories import create_product, make_tenant, product_body
from tests.support.http_support import assert_refused
from tests.support.products_support import connect


def b64(data):
    raw = data if isinstance(data, bytes) else json.dumps(data).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


# Valid tokens ---------------------------------------------------------------------------


@pytest.mark.parametrize("alg", ["RS256", "ES256"])
def test_valid_token_reads_and_writes(client, jwt_keys, tenant, alg):
    headers = bearer(token(jwt_keys, tenant.id, alg), tenant.id)
    created = client.post(LIST, json=product_body("JWT-1"), headers=headers)
    assert created.status_code == 201
    listed = client.get(LIST, headers=headers)
    assert listed.status_code == 200
    assert [p["sku"] for p in listed.get_json()["data"]] == ["JWT-1"]


def test_created_by_is_the_users_email(client, jwt_keys, tenant):
    connect(tenant.id, "amazon_us")
    headers = bearer(token(jwt_keys, tenant.id), tenant.id)
    create_product(client, headers, sku="JWT-SYNC")
    response = client.post("/api/products/JWT-SYNC/sync", headers=headers)
    assert response.status_code == 202
    job = Job.get_by_id(response.get_json()["data"]["job_id"])
    assert job.created_by == "ann@example.com"


@pytest.mark.parametrize(
    "email,expected",
    [
        (None, "user:user-123"),  # no email claim
        ("", "user:user-123"),
        (12345, "user:user-123"),
        ("x" * 250 + "@example.com", "user:user-123"),  # longer than any created_by column
    ],
)
def test_created_by_without_a_usable_email(client, jwt_keys, tenant, email, expected):
    connect(tenant.id, "amazon_us")
    headers = bearer(token(jwt_keys, tenant.id, email=email), tenant.id)
    create_product(client, headers, sku="JWT-SYNC2")
    if email is None:
        claims = jwt.decode(headers["Authorization"][7:], options={"verify_signature": False})
        assert "email" not in claims
    response = client.post("/api/products/JWT-SYNC2/sync", headers=headers)
    assert response.status_code == 202, response.get_json()
    assert Job.get_by_id(response.get_json()["data"]["job_id"]).created_by == expected


def test_token_for_several_tenants_acts_for_the_one_named(client, jwt_keys):
    first, second = make_tenant(), make_tenant()
    value = token(jwt_keys, first.id, tenants=[first.id, second.id])
    assert (
        client.post(LIST, json=product_body("ONE"), headers=bearer(value, first.id)).status_code
        == 201
    )
    listed = client.get(LIST, headers=bearer(value, second.id)).get_json()
    assert listed["data"] == [] and listed["meta"]["total"] == 0


def test_tenant_claim_is_case_insensitive(client, jwt_keys, tenant):
    value = token(jwt_keys, tenant.id, tenants=[tenant.id.upper()])
    assert client.get(LIST, headers=bearer(value, tenant.id)).status_code == 200


# 401 ----------------------------------------------------------------------------------


@pytest.mark.parametrize("alg", ["RS256", "ES256"])
def test_expired_token(client, jwt_keys, tenant, alg):
    now = int(time.time())
    value = token(jwt_keys, tenant.id, alg, iat=now - 7200, exp=now - 3600)
    unauthenticated(client, bearer(value, tenant.id), "expired")


def test_expiry_leeway_is_small(client, jwt_keys, tenant):
    now = int(time.time())
    just_expired = token(jwt_keys, tenant.id, exp=now - 5)  # within the 30 s leeway
    assert client.get(LIST, headers=bearer(just_expired, tenant.id)).status_code == 200
    long_expired = token(jwt_keys, tenant.id, exp=now - 120)
    unauthenticated(client, bearer(long_expired, tenant.id), "expired")


def test_wrong_issuer(client, jwt_keys, tenant):
    value = token(jwt_keys, tenant.id, iss="https://evil.example/")
    unauthenticated(client, bearer(value, tenant.id), "invalid_issuer")


def test_wrong_audience(client, jwt_keys, tenant):
    value = token(jwt_keys, tenant.id, aud="another-api")
    unauthenticated(client, bearer(value, tenant.id), "invalid_audience")


@pytest.mark.parametrize("claim", ["exp", "sub"])
def test_missing_required_claim(client, jwt_keys, tenant, claim):
    value = token(jwt_keys, tenant.id, **{claim: None})
    unauthenticated(client, bearer(value, tenant.id), "missing_claim")


@pytest.mark.parametrize("claim", ["iss", "aud"])
def test_missing_issuer_or_audience(client, jwt_keys, tenant, claim):
    value = token(jwt_keys, tenant.id, **{claim: None})
    error = assert_refused(client, "GET", LIST, bearer(value, tenant.id), 401, "UNAUTHENTICATED")
    assert error["details"]["reason"] == "missing_claim"


def test_not_yet_valid_token(client, jwt_keys, tenant):
    now = int(time.time())
    value = token(jwt_keys, tenant.id, nbf=now + 3600)
    error = assert_refused(client, "GET", LIST, bearer(value, tenant.id), 401, "UNAUTHENTICATED")
    assert error["details"]["reason"] == "invalid"


def test_alg_none_is_refused(client, jwt_keys, tenant):
    value = f"{b64({'alg': 'none', 'typ': 'JWT'})}.{b64(claims_for(tenant.id))}."
    unauthenticated(client, bearer(value, tenant.id), "unsupported_algorithm")
    for variant in ("None", "NONE", "nOnE"):
        value = f"{b64({'alg': variant, 'typ': 'JWT'})}.{b64(claims_for(tenant.id))}."
        unauthenticated(client, bearer(value, tenant.id), "unsupported_algorithm")


@pytest.mark.parametrize("alg,digest", [("HS256", hashlib.sha256), ("HS512", hashlib.sha512)])
def test_hmac_signed_with_the_public_key_is_refused(client, jwt_keys, tenant, alg, digest):
    """The classic key-confusion attack: HMAC keyed with the (public) RSA key in PEM form."""
    public_pem = (
        jwt_keys["rsa"]
        .public_key()
        .public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
    )
    signing_input = f"{b64({'alg': alg, 'typ': 'JWT'})}.{b64(claims_for(tenant.id))}"
    signature = hmac.new(public_pem, signing_input.encode(), digest).digest()
    value = f"{signing_input}.{b64(signature)}"
    unauthenticated(client, bearer(value, tenant.id), "unsupported_algorithm")


@pytest.mark.parametrize("alg", ["RS256", "ES256"])
def test_signed_by_another_key(client, jwt_keys, tenant, alg):
    other = (
        rsa.generate_private_key(public_exponent=65537, key_size=2048)
        if alg == "RS256"
        else ec.generate_private_key(ec.SECP256R1())
    )
    value = token(jwt_keys, tenant.id, alg, key=other)
    unauthenticated(client, bearer(value, tenant.id), "invalid_signature")


def test_tampered_claims(client, jwt_keys, tenant):
    header, _, signature = token(jwt_keys, tenant.id).split(".")
    forged = claims_for(tenant.id, scope="products:read products:write orders:write")
    value = f"{header}.{b64(forged)}.{signature}"
    unauthenticated(client, bearer(value, tenant.id), "invalid_signature")


@pytest.mark.parametrize(
    "value",
    ["a.b.c", "eyJhbGciOiJSUzI1NiJ9.e30.", "e30.e30.e30", "%%%.%%%.%%%"],
)
def test_garbage_jwt(client, tenant, value):
    error = assert_refused(client, "GET", LIST, bearer(value, tenant.id), 401, "UNAUTHENTICATED")
    assert error["details"]["reason"] in ("malformed", "unsupported_algorithm", "invalid_signature")


def test_payload_that_is_not_an_object(client, jwt_keys, tenant):
    signing_input = f"{b64({'alg': 'RS256', 'typ': 'JWT'})}.{b64([1, 2])}"
    from cryptography.hazmat.primitives import hashes
    from cryptography.hazmat.primitives.asymmetric import padding

    signature = jwt_keys["rsa"].sign(signing_input.encode(), padding.PKCS1v15(), hashes.SHA256())
    value = f"{signing_input}.{b64(signature)}"
    error = assert_refused(client, "GET", LIST, bearer(value, tenant.id), 401, "UNAUTHENTICATED")
    assert error["details"]["reason"] == "invalid"


def test_jwt_not_configured(make_app, jwt_keys):
    client = make_app(JWT_PUBLIC_KEY_FILE=None).test_client()
    tenant = make_tenant()
    value = token(jwt_keys, tenant.id)
    error = assert_refused(client, "GET", LIST, bearer(value, tenant.id), 401, "UNAUTHENTICATED")
    assert error["details"]["reason"] == "jwt_not_configured"


def test_bad_token_is_401_even_without_a_tenant_header(client, jwt_keys, tenant):
    value = token(jwt_keys, tenant.id, exp=int(time.time()) - 3600)
    response = client.get(LIST, headers={"Authorization": f"Bearer {value}"})
    assert response.status_code == 401
    assert response.get_json()["error"]["details"]["reason"] == "expired"


def test_valid_token_without_a_tenant_header_is_400(client, jwt_keys, tenant):
    value = token(jwt_keys, tenant.id)
    assert_refused(
        client, "GET", LIST, {"Authorization": f"Bearer {value}"}, 400, "INVALID_TENANT_HEADER"
    )


# 403 ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "tenants",
    [
        lambda own, other: [other],
        lambda own, other: [],
        lambda own, other: None,  # no tenants claim
        lambda own, other: own,  # a string, not a list
        lambda own, other: {"id": own},
    ],
)
def test_tenant_not_in_the_tenants_claim(client, jwt_keys, tenant, tenants):
    other = make_tenant()
    value = token(jwt_keys, tenant.id, tenants=tenants(tenant.id, other.id))
    assert_refused(
        client,
        "POST",
        LIST,
        bearer(value, tenant.id),
        403,
        "TENANT_ACCESS_DENIED",
        json=product_body("JWT-T"),
    )


def test_unknown_tenant(client, jwt_keys, tenant):
    ghost = str(uuid.uuid4())
    value = token(jwt_keys, tenant.id, tenants=[tenant.id, ghost])
    assert_refused(client, "GET", LIST, bearer(value, ghost), 403, "TENANT_ACCESS_DENIED")


@pytest.mark.parametrize(
    "scope,method,required",
    [
        ("products:read", "POST", "products:write"),
        ("products:write", "GET", "products:read"),
        ("orders:read orders:write", "GET", "products:read"),
        ("", "GET", "products:read"),
        (None, "GET", "products:read"),
        (["products:read"], "GET", "products:read"),  # scope must be a space-separated string
        ("products:read,products:write", "GET", "products:read"),
    ],
)
def test_missing_scope(client, jwt_keys, tenant, scope, method, required):
    value = token(jwt_keys, tenant.id, scope=scope)
    kwargs = {"json": product_body("JWT-S")} if method == "POST" else {}
    error = assert_refused(
        client, method, LIST, bearer(value, tenant.id), 403, "INSUFFICIENT_SCOPE", **kwargs
    )
    assert error["details"] == {"required_scope": required}


def test_read_scope_token_reads(client, jwt_keys, tenant):
    value = token(jwt_keys, tenant.id, alg="ES256", scope="products:read")
    assert client.get(LIST, headers=bearer(value, tenant.id)).status_code == 200


def test_a_token_without_iat_is_refused(client, jwt_keys, tenant):
    headers = bearer(token(jwt_keys, tenant.id, iat=None), tenant.id)
    unauthenticated(client, headers, "missing_claim")


@pytest.mark.parametrize(
    ("lifetime", "accepted"), [(3600, True), (86400, True), (86460, True), (86461, False)]
)
def test_tokens_live_at_most_a_day(client, jwt_keys, tenant, lifetime, accepted):
    now = int(time.time())
    headers = bearer(token(jwt_keys, tenant.id, iat=now - 10, exp=now - 10 + lifetime), tenant.id)
    if accepted:
        assert client.get(LIST, headers=headers).status_code == 200
    else:
        unauthenticated(client, headers, "lifetime_too_long")


def test_the_lifetime_limit_is_configurable(make_app, jwt_keys, tenant):
    client = make_app(JWT_MAX_LIFETIME_SECONDS=600).test_client()
    now = int(time.time())
    headers = bearer(token(jwt_keys, tenant.id, iat=now, exp=now + 601), tenant.id)
    response = client.get(LIST, headers=headers)
    assert response.status_code == 401
    assert response.get_json()["error"]["details"]["reason"] == "lifetime_too_long"
