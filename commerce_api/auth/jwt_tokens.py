"""User JWTs from an external identity provider: RS256/ES256 only."""

import os
import re
import threading
from collections.abc import Mapping
from typing import Any

import jwt
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from cryptography.hazmat.primitives.serialization import load_pem_public_key

from ..errors import ApiError

ALGORITHMS = ("RS256", "ES256")
_PEM_BLOCK = re.compile(rb"-----BEGIN PUBLIC KEY-----.+?-----END PUBLIC KEY-----", re.DOTALL)
_lock = threading.Lock()
_keys_cache = {}  # path -> (mtime, [keys])
_jwks_clients = {}


def _unauthenticated(reason, message="The token is not valid."):
    return ApiError("UNAUTHENTICATED", message, details={"reason": reason})


def load_public_keys(path: str) -> list[Any]:
    """All PEM public keys in ``path`` (a file may hold an RSA and an EC key)."""
    mtime = _mtime(path)
    with _lock:
        cached = _keys_cache.get(path)
        if cached and cached[0] == mtime:
            return cached[1]
    with open(path, "rb") as handle:
        blocks = _PEM_BLOCK.findall(handle.read())
    keys = [load_pem_public_key(block) for block in blocks]
    with _lock:
        _keys_cache[path] = (mtime, keys)
    return keys


def _mtime(path):
    try:
        return os.stat(path).st_mtime
    except OSError:
        return None


def _candidate_keys(token, alg, config):
    if config.get("JWT_JWKS_URL"):
        url = config["JWT_JWKS_URL"]
        client = _jwks_clients.get(url)
        if client is None:
            client = _jwks_clients[url] = jwt.PyJWKClient(url, cache_keys=True, lifespan=300)
        try:
            return [client.get_signing_key_from_jwt(token).key]
        except jwt.PyJWKClientError:
            raise _unauthenticated("unknown_key", "No signing key matches the token.") from None
    path = config.get("JWT_PUBLIC_KEY_FILE")
    if not path:
        raise _unauthenticated("jwt_not_configured", "User tokens are not accepted here.")
    wanted = rsa.RSAPublicKey if alg == "RS256" else ec.EllipticCurvePublicKey
    try:
        return [key for key in load_public_keys(path) if isinstance(key, wanted)]
    except (OSError, ValueError):
        raise _unauthenticated("jwt_not_configured", "The JWT public key is unreadable.") from None


def decode_user_token(token: str, config: Mapping[str, Any]) -> dict[str, Any]:
    """Verify signature, ``exp``, ``iss``, ``aud``; return the claims."""
    try:
        header = jwt.get_unverified_header(token)
    except jwt.PyJWTError:
        raise _unauthenticated("malformed", "The token is malformed.") from None
    alg = header.get("alg")
    if alg not in ALGORITHMS:
        raise _unauthenticated("unsupported_algorithm", f"Algorithm {alg!r} is not accepted.")
    audience = config.get("JWT_AUDIENCE")
    issuer = config.get("JWT_ISSUER")
    options = {"require": ["exp", "iat", "sub"], "verify_aud": bool(audience)}
    last_error = _unauthenticated("invalid_signature", "The token signature is not valid.")
    for key in _candidate_keys(token, alg, config):
        try:
            claims = jwt.decode(
                token,
                key,
                algorithms=[alg],
                audience=audience,
                issuer=issuer,
                leeway=config.get("JWT_LEEWAY_SECONDS", 0),
                options=options,
            )
        except jwt.ExpiredSignatureError:
            raise _unauthenticated("expired", "The token has expired.") from None
        except jwt.InvalidAudienceError:
            raise _unauthenticated(
                "invalid_audience", "The token audience is not accepted."
            ) from None
        except jwt.InvalidIssuerError:
            raise _unauthenticated("invalid_issuer", "The token issuer is not accepted.") from None
        except jwt.MissingRequiredClaimError as exc:
            raise _unauthenticated("missing_claim", str(exc)) from None
        except jwt.InvalidSignatureError:
            continue
        except jwt.PyJWTError as exc:
            last_error = _unauthenticated("invalid", str(exc))
            break
        _check_lifetime(claims, config)
        return claims
    raise last_error


def _check_lifetime(claims, config):
    """User tokens live 24 hours (SPEC): refuse one the identity provider made longer."""
    for name in ("exp", "iat", "nbf"):
        # RFC 7519 NumericDate: a JSON number. PyJWT reads "1700000000" as one too.
        value = claims.get(name, 0)
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise _unauthenticated("invalid_claim", f"The {name} claim must be a JSON number.")
    lifetime = claims["exp"] - claims["iat"]
    if lifetime > int(config.get("JWT_MAX_LIFETIME_SECONDS", 86460)):
        raise _unauthenticated(
            "lifetime_too_long",
            f"The token is valid for {int(lifetime)} s, more than the "
            f"{int(config.get('JWT_MAX_LIFETIME_SECONDS', 86460))} s allowed.",
        )


def clear_caches():
    with _lock:
        _keys_cache.clear()
    _jwks_clients.clear()
