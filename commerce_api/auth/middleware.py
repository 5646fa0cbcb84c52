"""Per-request authentication: who is calling, for which tenant, with which scopes."""

import functools
import ipaddress
import json
import logging
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

from flask import current_app, g, request
from peewee import DatabaseError

from ..db import write_transaction
from ..errors import ApiError
from ..sql import Statement
from ..timeutil import now_ms
from .jwt_tokens import decode_user_token
from .models import ALL_SCOPES, ApiKey, Tenant
from .services import KEY_PREFIX, hash_key

_View = TypeVar("_View")  # a view function or MethodView class, returned as given


@dataclass(frozen=True)
class AuthContext:
    tenant_id: str
    plan: str
    kind: str  # "api_key" or "user"
    principal_id: str  # key id, or the JWT's sub
    scopes: frozenset
    created_by: str
    rate_limit_per_minute: int | None = None
    rate_limit_per_hour: int | None = None
    extra: dict = field(default_factory=dict)
    # an API key's own restrictions (a key it makes or changes must stay within them)
    expires_at: int | None = None
    networks: tuple[str, ...] | None = None

    def has_scope(self, scope: str) -> bool:
        return scope in self.scopes or ALL_SCOPES in self.scopes


class _TTLCache:
    """A tiny per-process cache: what every request needs, for a few seconds."""

    def __init__(self):
        self._items = {}
        self._lock = threading.Lock()

    def get(self, key):
        item = self._items.get(key)
        if item is None or item[0] < time.monotonic():
            return None
        return item[1]

    def put(self, key, value, ttl):
        with self._lock:
            if len(self._items) > 10_000:
                self._items.clear()
            self._items[key] = (time.monotonic() + ttl, value)

    def clear(self):
        with self._lock:
            self._items.clear()


key_cache = _TTLCache()
_MISSING = ("missing",)
MAX_CREATED_BY = 200  # the narrowest created_by column (jobs)
LAST_USED_INTERVAL_MS = 60_000  # api_key.last_used_at is written at most this often
_last_used = {}  # key id -> when this process last wrote its last_used_at (epoch ms)
log = logging.getLogger("commerce_api.auth")


_KEY = Statement(
    "SELECT k.{K.id}, k.{K.tenant}, k.{K.scopes}, k.{K.allowed_ips}, k.{K.expires_at},"
    " k.{K.revoked_at}, k.{K.rate_limit_per_minute}, k.{K.rate_limit_per_hour},"
    " t.{T.auth_version}"
    " FROM {K} k JOIN {T} t ON t.{T.id} = k.{K.tenant} WHERE k.{K.key_hash} = {p:key_hash}",
    K=ApiKey,
    T=Tenant,
)
_TENANT_STATE = Statement(
    "SELECT {T.plan}, {T.auth_version} FROM {T} WHERE {T.id} = {p:tenant}", T=Tenant
)
_STAMP_USE = Statement(
    "UPDATE {K} SET {K.last_used_at} = {p:now} WHERE {K.id} = {p:key}"
    " AND ({K.last_used_at} IS NULL OR {K.last_used_at} <= {p:stale})",
    K=ApiKey,
)


def _unauthenticated(reason, message):
    return ApiError("UNAUTHENTICATED", message, details={"reason": reason})


def _fetch_key(key_hash):
    row = _KEY.execute({"key_hash": key_hash}).fetchone()
    if row is None:
        return _MISSING
    allowed = json.loads(row[3]) if row[3] else None
    networks = tuple(ipaddress.ip_network(c) for c in allowed) if allowed else None
    return {
        "id": row[0],
        "tenant_id": row[1],
        "scopes": frozenset(row[2].split()),
        "networks": networks,
        "expires_at": row[4],
        "revoked_at": row[5],
        "rate_limit_per_minute": row[6],
        "rate_limit_per_hour": row[7],
        "auth_version": row[8],
    }


def _fetch_tenant_state(tenant_id):
    """``(plan, auth_version)`` of the tenant, read on every request (one primary-key read):
    plan changes, revocations and key changes are in force from the very next request."""
    row = _TENANT_STATE.execute({"tenant": tenant_id}).fetchone()
    return row if row else _MISSING


def client_ip() -> str | None:
    """The peer address; X-Forwarded-For only from a declared trusted proxy.

    An X-Forwarded-For from a trusted proxy that cannot be parsed gives None: the caller
    is unknown, and an IP allowlist then denies (never the proxy's own address)."""
    remote = request.remote_addr or "0.0.0.0"
    trusted = current_app.extensions["commerce"]["trusted_proxies"]
    if not trusted:
        return remote
    try:
        chain = [remote]
        forwarded = request.headers.get("X-Forwarded-For", "")
        chain = [a.strip() for a in forwarded.split(",") if a.strip()] + [remote]
        # walk from the nearest hop back while the hop is one of our proxies
        for address in reversed(chain):
            ip = ipaddress.ip_address(address)
            if not any(ip in net for net in trusted):
                return address
        return chain[0]
    except ValueError:
        return None


def _tenant_header():
    raw = request.headers.get("X-Tenant-ID")
    if not raw:
        raise ApiError("INVALID_TENANT_HEADER", "The X-Tenant-ID header is required.")
    try:
        return str(uuid.UUID(raw.strip()))
    except ValueError:
        raise ApiError("INVALID_TENANT_HEADER", "X-Tenant-ID must be a UUID.") from None


def _authenticate_key(token, config):
    key_hash = hash_key(token)
    row = key_cache.get(key_hash)
    if row is None:
        row = _fetch_key(key_hash)
        key_cache.put(key_hash, row, config["AUTH_CACHE_SECONDS"])
    if row is _MISSING:
        raise _unauthenticated("invalid", "The API key is not valid.")
    state = _fetch_tenant_state(row["tenant_id"])
    if state is not _MISSING and state[1] != row["auth_version"]:
        row = _fetch_key(key_hash)  # the tenant's keys changed since we cached this one
        key_cache.put(key_hash, row, config["AUTH_CACHE_SECONDS"])
        if row is _MISSING:
            raise _unauthenticated("invalid", "The API key is not valid.")
    if state is _MISSING:
        raise _unauthenticated("invalid", "The API key is not valid.")
    now = time.time() * 1000
    if row["revoked_at"] is not None:
        raise _unauthenticated("revoked", "The API key has been revoked.")
    if row["expires_at"] is not None and row["expires_at"] <= now:
        raise _unauthenticated("expired", "The API key has expired.")
    # the token is valid: only now does the tenant header matter (401 before 400)
    tenant_id = _tenant_header()
    if row["tenant_id"] != tenant_id:
        raise ApiError("TENANT_ACCESS_DENIED")
    if row["networks"] is not None:
        address = client_ip()
        try:
            ip = ipaddress.ip_address(address) if address is not None else None
        except ValueError:
            ip = None
        if ip is not None and ip.version == 6 and ip.ipv4_mapped:
            ip = ip.ipv4_mapped  # an IPv4 peer on a dual-stack socket
        if ip is None or not any(ip in net for net in row["networks"]):
            raise ApiError("IP_NOT_ALLOWED", details={"ip": address})
    _record_use(row["id"])
    return AuthContext(
        tenant_id=tenant_id,
        plan=state[0],
        kind="api_key",
        principal_id=row["id"],
        scopes=row["scopes"],
        created_by=f"key:{row['id']}",
        rate_limit_per_minute=row["rate_limit_per_minute"],
        rate_limit_per_hour=row["rate_limit_per_hour"],
        expires_at=row["expires_at"],
        networks=tuple(str(n) for n in row["networks"]) if row["networks"] else None,
    )


def _record_use(key_id):
    """Stamp the key's ``last_used_at``, at most once a minute per key and process: one
    conditional UPDATE a minute, never a write per request (the auth path is the hottest
    path there is). A failure to stamp never fails the request."""
    now = now_ms()
    if now - _last_used.get(key_id, 0) < LAST_USED_INTERVAL_MS:
        return
    if len(_last_used) > 10_000:
        _last_used.clear()
    _last_used[key_id] = now
    try:
        with write_transaction():
            _STAMP_USE.execute({"now": now, "key": key_id, "stale": now - LAST_USED_INTERVAL_MS})
    except DatabaseError:
        log.warning("could not record the use of API key %s", key_id, exc_info=True)


def _authenticate_user(token, config):
    claims = decode_user_token(token, config)
    tenant_id = _tenant_header()
    tenants = claims.get("tenants") or []
    if not isinstance(tenants, list) or tenant_id not in [str(t).lower() for t in tenants]:
        raise ApiError("TENANT_ACCESS_DENIED")
    state = _fetch_tenant_state(tenant_id)
    if state is _MISSING:
        raise ApiError("TENANT_ACCESS_DENIED")
    plan = state[0]
    scope_claim = claims.get("scope") or ""
    scopes = frozenset(scope_claim.split()) if isinstance(scope_claim, str) else frozenset()
    scopes -= {ALL_SCOPES}  # only API keys may hold "all"
    sub = str(claims["sub"])
    return AuthContext(
        tenant_id=tenant_id,
        plan=plan,
        kind="user",
        principal_id=sub,
        scopes=scopes,
        created_by=_user_created_by(claims.get("email"), sub),
        extra={"claims": claims},
    )


def _user_created_by(email, sub):
    """The user's email, or ``user:<sub>`` when the token has none that fits a record."""
    if isinstance(email, str) and 0 < len(email) <= MAX_CREATED_BY and email.isprintable():
        return email
    return f"user:{sub}"[:MAX_CREATED_BY]


def authenticate() -> AuthContext:
    """Set ``g.auth`` for the request, or raise the 401/400/403 the caller deserves."""
    header = request.headers.get("Authorization")
    if not header:
        raise _unauthenticated("missing", "The Authorization header is required.")
    scheme, _, token = header.partition(" ")
    token = token.strip()
    if scheme.lower() != "bearer" or not token:
        raise _unauthenticated("malformed", "Use 'Authorization: Bearer <token>'.")
    config = current_app.config
    if token.startswith(KEY_PREFIX):
        g.auth = _authenticate_key(token, config)
    elif token.count(".") == 2:
        g.auth = _authenticate_user(token, config)
    else:
        raise _unauthenticated("malformed", "The token is neither an API key nor a JWT.")
    return g.auth


def is_public_endpoint() -> bool:
    view = current_app.view_functions.get(request.endpoint)
    return (
        view is None
        or getattr(view, "is_public", False)
        or getattr(getattr(view, "view_class", None), "is_public", False)
    )


def public(view: _View) -> _View:
    """Mark a view (function or MethodView class) as needing no authentication."""
    view.is_public = True
    return view


def _check_scopes(auth, scopes):
    if ALL_SCOPES not in auth.scopes and not any(s in auth.scopes for s in scopes):
        raise ApiError(
            "INSUFFICIENT_SCOPE",
            f"This request needs the {scopes[0]} scope.",
            details={"required_scope": scopes[0]},
        )


def check_view_scope() -> None:
    """The scope check of the request's view (``require_scope``), for an answer given
    without running the view (an idempotent replay): 403 when the caller lacks it now."""
    view = current_app.view_functions.get(request.endpoint)
    handler = getattr(getattr(view, "view_class", None), request.method.lower(), None)
    scopes = getattr(handler or view, "required_scopes", None)
    if scopes:
        _check_scopes(g.auth, scopes)


def require_scope(*scopes: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Allow the request when the caller holds any of ``scopes``; else 403."""

    def decorator(func):
        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            _check_scopes(g.auth, scopes)
            return func(*args, **kwargs)

        doc = wrapper.__dict__.setdefault("_apidoc", {})
        doc.setdefault("manual_doc", {}).setdefault(
            "security", [{"bearerAuth": [], "tenantId": []}]
        )
        wrapper.required_scopes = scopes
        return wrapper

    return decorator
