"""Tenants and API keys: create, list, revoke; no Flask here."""

import hashlib
import ipaddress
import secrets
import uuid

from ..db import write_transaction
from ..errors import ApiError, validation_error
from ..ids import new_id
from ..timeutil import format_ms, now_ms
from .models import ALL_SCOPES, PLANS, SCOPES, ApiKey, Tenant

KEY_PREFIX = "ck_"


def hash_key(secret):
    # Keys carry 240 random bits, so a fast hash is as strong as a slow one here.
    return hashlib.sha256(secret.encode()).hexdigest()


def parse_scopes(text):
    """A comma or space list of scopes, or ``all`` (every scope, present and future)."""
    if text.strip() == ALL_SCOPES:
        return [ALL_SCOPES]
    scopes = [s for s in text.replace(",", " ").split() if s]
    unknown = [s for s in scopes if s not in SCOPES]
    if unknown or not scopes:
        raise validation_error({"scopes": [f"Unknown scope: {s}." for s in unknown] or ["Empty."]})
    return sorted(set(scopes), key=SCOPES.index)


def _check_name(name):
    """A display name: 1-200 characters once trimmed."""
    name = name.strip() if isinstance(name, str) else ""
    if not name or len(name) > 200 or not name.isprintable():
        raise validation_error({"name": ["1 to 200 printable characters."]})
    return name


def create_tenant(name, plan="starter", tenant_id=None):
    name = _check_name(name)
    if plan not in PLANS:
        raise validation_error({"plan": [f"Must be one of {', '.join(PLANS)}."]})
    tenant_id = tenant_id or str(uuid.uuid4())
    with write_transaction():
        tenant = Tenant.create(id=tenant_id, name=name, plan=plan, created_at=now_ms())
    return tenant


def _bump_auth_version(tenant_id):
    """Make every process drop what it cached of the tenant's keys (call in the change's
    transaction)."""
    Tenant.update(auth_version=Tenant.auth_version + 1).where(Tenant.id == tenant_id).execute()


def set_plan(tenant_id, plan):
    if plan not in PLANS:
        raise validation_error({"plan": [f"Must be one of {', '.join(PLANS)}."]})
    with write_transaction():
        updated = (
            Tenant.update(plan=plan, auth_version=Tenant.auth_version + 1)
            .where(Tenant.id == tenant_id)
            .execute()
        )
    if not updated:
        raise ApiError("RESOURCE_NOT_FOUND", "The tenant does not exist.")
    return Tenant.get_by_id(tenant_id)


def get_tenant(tenant_id):
    tenant = Tenant.get_or_none(Tenant.id == tenant_id)
    if tenant is None:
        raise ApiError("RESOURCE_NOT_FOUND", "The tenant does not exist.")
    return tenant


def create_key(
    tenant_id,
    name,
    scopes,
    expires_at=None,
    allowed_ips=None,
    rate_limit_per_minute=None,
    rate_limit_per_hour=None,
):
    """Create an API key; returns ``(ApiKey, secret)``. The secret is never stored."""
    name = _check_name(name)
    if expires_at is not None and expires_at <= now_ms():
        raise validation_error({"expires_at": ["Must be in the future."]})
    tenant = get_tenant(tenant_id)
    if (rate_limit_per_minute or rate_limit_per_hour) and tenant.plan != "enterprise":
        raise validation_error(
            {"rate_limit": ["Per-key rate limit overrides need the enterprise plan."]}
        )
    networks = _networks(allowed_ips)
    secret = KEY_PREFIX + secrets.token_urlsafe(30)
    with write_transaction():
        key = ApiKey.create(
            id=new_id("key"),
            tenant=tenant.id,
            name=name,
            key_hash=hash_key(secret),
            key_prefix=secret[:10],
            scopes=" ".join(scopes),
            allowed_ips=networks or None,
            expires_at=expires_at,
            rate_limit_per_minute=rate_limit_per_minute,
            rate_limit_per_hour=rate_limit_per_hour,
            created_at=now_ms(),
        )
    return key, secret


def _networks(allowed_ips):
    networks = []
    for cidr in allowed_ips or []:
        try:
            networks.append(str(ipaddress.ip_network(cidr, strict=False)))
        except ValueError:
            raise validation_error({"allowed_ips": [f"Not a CIDR: {cidr}."]}) from None
    return networks


def _get_key(key_id):
    key = ApiKey.get_or_none(ApiKey.id == key_id)
    if key is None:
        raise ApiError("RESOURCE_NOT_FOUND", "The API key does not exist.")
    return key


def revoke_key(key_id):
    """Revoke a key; every process refuses it from the next request on."""
    key = _get_key(key_id)
    with write_transaction():
        updated = (
            ApiKey.update(revoked_at=now_ms())
            .where((ApiKey.id == key_id) & ApiKey.revoked_at.is_null())
            .execute()
        )
        if updated:
            _bump_auth_version(key.tenant_id)
    return ApiKey.get_by_id(key_id)


_UNSET = object()


def update_key(key_id, *, scopes=_UNSET, allowed_ips=_UNSET, expires_at=_UNSET):
    """Change a key's scopes, IP allowlist (None: any address) or expiry (None: never);
    in force on every process from the next request on."""
    key = _get_key(key_id)
    changes = {}
    if scopes is not _UNSET:
        changes["scopes"] = " ".join(scopes)
    if allowed_ips is not _UNSET:
        changes["allowed_ips"] = _networks(allowed_ips) or None
    if expires_at is not _UNSET:
        changes["expires_at"] = expires_at
    if changes:
        with write_transaction():
            ApiKey.update(**changes).where(ApiKey.id == key_id).execute()
            _bump_auth_version(key.tenant_id)
    return ApiKey.get_by_id(key_id)


def key_scopes(stored):
    """The scopes a stored key grants today (``all`` stands for every scope there is)."""
    scopes = stored.split()
    return list(SCOPES) if ALL_SCOPES in scopes else scopes


def list_keys(tenant_id):
    return list(ApiKey.select().where(ApiKey.tenant == tenant_id).order_by(ApiKey.created_at))


def serialize_key(key):
    return {
        "id": key.id,
        "name": key.name,
        "tenant_id": key.tenant_id,
        "prefix": key.key_prefix,
        "scopes": key_scopes(key.scopes),
        "allowed_ips": key.allowed_ips or [],
        "expires_at": format_ms(key.expires_at),
        "revoked_at": format_ms(key.revoked_at),
        "rate_limit_per_minute": key.rate_limit_per_minute,
        "rate_limit_per_hour": key.rate_limit_per_hour,
        "created_at": format_ms(key.created_at),
    }
