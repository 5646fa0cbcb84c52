"""The one gateway to the identity provider: OpenID Connect authorization code + PKCE
(Authlib's requests client), for the console's sign-in. No Flask here.

The provider is the operator's (``COMMERCE_OIDC_*``), never a tenant's input. A sign-in
under way is a ``console_login`` row found by the SHA-256 of its ``state`` and deleted
when used, so a ``state`` works once and for ten minutes at most. The token the console
then forwards to the API is checked exactly as the API checks a user JWT
(``auth.jwt_tokens.decode_user_token``); the ID token's ``nonce`` ties the answer to this
sign-in.
"""

import hashlib
import hmac
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import jwt
import requests
from authlib.common.security import generate_token
from authlib.integrations.requests_client import OAuth2Session
from authlib.oauth2.rfc6749.errors import OAuth2Error

from ..auth.jwt_tokens import decode_user_token
from ..db import write_transaction
from ..errors import ApiError
from ..timeutil import now_ms
from .models import ConsoleLogin

LOGIN_TTL_MS = 600_000  # a sign-in must come back within ten minutes
TIMEOUT = (3.0, 10.0)  # connect, read: the provider is a person's wait
METADATA_TTL = 300.0
_metadata = {}  # issuer -> (fetched at, document)
_jwks = {}  # jwks_uri -> PyJWKClient
_lock = threading.Lock()


@dataclass(frozen=True)
class SignedIn:
    token: str  # what the console sends the API as Bearer
    claims: dict[str, Any]  # the API's reading of it
    next_path: str | None


def configured(config: Mapping[str, Any]) -> bool:
    return bool(config.get("OIDC_ISSUER") and config.get("OIDC_CLIENT_ID"))


def _failed(reason: str, message: str | None = None) -> ApiError:
    return ApiError("OIDC_SIGN_IN_FAILED", message, details={"reason": reason})


def _unavailable(exc: Exception) -> ApiError:
    return ApiError("IDENTITY_PROVIDER_UNAVAILABLE", details={"reason": type(exc).__name__})


def provider_metadata(issuer: str) -> dict[str, Any]:
    """The provider's discovery document (cached for five minutes)."""
    with _lock:
        cached = _metadata.get(issuer)
    if cached and time.monotonic() - cached[0] < METADATA_TTL:
        return cached[1]
    url = issuer.rstrip("/") + "/.well-known/openid-configuration"
    try:
        response = requests.get(url, timeout=TIMEOUT)
        response.raise_for_status()
        document = response.json()
    except (requests.RequestException, ValueError) as exc:
        raise _unavailable(exc) from None
    if not isinstance(document, dict) or document.get("issuer") != issuer:
        raise _failed("issuer_mismatch", "The provider's discovery document names another issuer.")
    for name in ("authorization_endpoint", "token_endpoint", "jwks_uri"):
        if not isinstance(document.get(name), str):
            raise _failed("bad_metadata", f"The provider's discovery document lacks {name}.")
    with _lock:
        _metadata[issuer] = (time.monotonic(), document)
    return document


def _client(config: Mapping[str, Any], redirect_uri: str) -> OAuth2Session:
    return OAuth2Session(
        client_id=config["OIDC_CLIENT_ID"],
        client_secret=config.get("OIDC_CLIENT_SECRET"),
        scope=config.get("OIDC_SCOPES") or "openid",
        redirect_uri=redirect_uri,
        code_challenge_method="S256",
        token_endpoint_auth_method=(
            "client_secret_basic" if config.get("OIDC_CLIENT_SECRET") else "none"
        ),
    )


def _state_hash(state: str) -> str:
    return hashlib.sha256(state.encode()).hexdigest()


@dataclass(frozen=True)
class Started:
    url: str  # the provider's authorization page
    nonce: str  # also kept in the browser's cookie: the answer must come back to it


def begin(config: Mapping[str, Any], redirect_uri: str, next_path: str | None) -> Started:
    """Start a sign-in: the URL of the provider's authorization page."""
    document = provider_metadata(config["OIDC_ISSUER"])
    state, nonce, verifier = generate_token(43), generate_token(32), generate_token(64)
    with write_transaction():
        ConsoleLogin.delete().where(ConsoleLogin.created_at < now_ms() - LOGIN_TTL_MS).execute()
        ConsoleLogin.create(
            id=_state_hash(state),
            code_verifier=verifier,
            nonce=nonce,
            next_path=next_path,
            created_at=now_ms(),
        )
    with _client(config, redirect_uri) as client:
        url, _ = client.create_authorization_url(
            document["authorization_endpoint"], state=state, code_verifier=verifier, nonce=nonce
        )
    return Started(url=url, nonce=nonce)


def _take_login(state: str | None) -> ConsoleLogin:
    """The sign-in of ``state``, deleted as it is read (one use)."""
    if not state or len(state) > 200:
        raise _failed("state", "The sign-in is unknown or was already used; start again.")
    with write_transaction():
        login = ConsoleLogin.get_or_none(ConsoleLogin.id == _state_hash(state))
        if login is not None:
            ConsoleLogin.delete().where(ConsoleLogin.id == login.id).execute()
    if login is None or login.created_at < now_ms() - LOGIN_TTL_MS:
        raise _failed("state", "The sign-in is unknown or was already used; start again.")
    return login


def _check_nonce(id_token: str, document: dict[str, Any], config: Mapping[str, Any], nonce: str):
    with _lock:
        client = _jwks.get(document["jwks_uri"])
        if client is None:
            client = _jwks[document["jwks_uri"]] = jwt.PyJWKClient(
                document["jwks_uri"], cache_keys=True, lifespan=300, timeout=10
            )
    try:
        key = client.get_signing_key_from_jwt(id_token).key
        claims = jwt.decode(
            id_token,
            key,
            algorithms=["RS256", "ES256"],
            audience=config["OIDC_CLIENT_ID"],
            issuer=config["OIDC_ISSUER"],
            leeway=config.get("JWT_LEEWAY_SECONDS", 0),
        )
    except jwt.PyJWKClientConnectionError as exc:
        raise _unavailable(exc) from None
    except jwt.PyJWTError as exc:
        raise _failed("id_token", f"The ID token is not valid: {exc}"[:300]) from None
    if claims.get("nonce") != nonce:
        raise _failed("nonce", "The ID token belongs to another sign-in.")


def finish(
    config: Mapping[str, Any],
    redirect_uri: str,
    code: str | None,
    state: str | None,
    error: str | None = None,
    browser_nonce: str | None = None,
) -> SignedIn:
    """Complete a sign-in: exchange the code (with the PKCE verifier), check the tokens.

    ``browser_nonce`` (the cookie set by ``begin``'s page) must be this sign-in's: an
    answer carried to another browser (a forged sign-in) is refused."""
    login = _take_login(state)
    if not browser_nonce or not hmac.compare_digest(browser_nonce, login.nonce):
        raise _failed("browser", "The sign-in was started in another browser; start again.")
    if error or not code:
        raise _failed("denied", f"The identity provider refused: {error or 'no code'}."[:300])
    document = provider_metadata(config["OIDC_ISSUER"])
    try:
        with _client(config, redirect_uri) as client:
            token = client.fetch_token(
                document["token_endpoint"],
                code=code,
                code_verifier=login.code_verifier,
                timeout=TIMEOUT,
            )
    except OAuth2Error as exc:
        raise _failed("token", f"The identity provider refused the code: {exc.error}.") from None
    except (requests.RequestException, ValueError) as exc:
        raise _unavailable(exc) from None
    id_token = token.get("id_token")
    if not isinstance(id_token, str):
        raise _failed("id_token", "The identity provider sent no ID token.")
    _check_nonce(id_token, document, config, login.nonce)
    credential = token.get(config.get("OIDC_TOKEN") or "access_token")
    if not isinstance(credential, str):
        raise _failed("token", "The identity provider sent no token for the API.")
    claims = decode_user_token(credential, config)  # the API's own check (401 as it gives)
    return SignedIn(token=credential, claims=claims, next_path=login.next_path)
