"""Tenants and API keys: create, list, revoke; no Flask here."""

import hashlib
import ipaddress
import secrets
import uuid
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from peewee import fn

from ..db import for_update, write_transaction
from ..errors import ApiError, raises, validation_error
from ..ids import new_id
from ..pagination import paginate_args
from ..shapes import compile_serializer
from ..timeutil import format_ms, now_ms
from .models import ALL_SCOPES, PLANS, SCOPES, ApiKey, Tenant
from .shapes import ApiKeySchema

KEY_PREFIX = "ck_"


def hash_key(secret: str) -> str:
    # Keys carry 240 random bits, so a fast hash is as strong as a slow one here.
    return hashlib.sha256(secret.encode()).hexdigest()


def normalize_scopes(scopes: Iterable[str]) -> list[str]:
    """Known scopes, de-duplicated, in catalogue order; or ``["all"]`` (which stands alone)."""
    scopes = [s for s in scopes if s]
    if ALL_SCOPES in scopes:
        if len(set(scopes)) > 1:
            raise validation_error({"scopes": ["`all` grants every scope; give it alone."]})
        return [ALL_SCOPES]
    unknown = [s for s in scopes if s not in SCOPES]
    if unknown or not scopes:
        raise validation_error({"scopes": [f"Unknown scope: {s}." for s in unknown] or ["Empty."]})
    return sorted(set(scopes), key=SCOPES.index)


def parse_scopes(text: str) -> list[str]:
    """A comma or space list of scopes, or ``all`` (every scope, present and future)."""
    return normalize_scopes(text.replace(",", " ").split())


def check_grant(held: Sequence[str] | None, wanted: Sequence[str]) -> None:
    """Refuse to give a key scopes its creator does not hold (403 ``SCOPE_ESCALATION``).

    ``held`` is the caller's scopes (None: the operator, who may grant anything); ``all``
    can only be granted by a holder of ``all``, since it covers scopes added later."""
    if held is None or ALL_SCOPES in held:
        return
    missing = [ALL_SCOPES] if ALL_SCOPES in wanted else [s for s in wanted if s not in held]
    if missing:
        raise ApiError(
            "SCOPE_ESCALATION",
            "A key cannot be given scopes the caller does not hold: " + ", ".join(missing) + ".",
            details={"scopes": missing},
        )


@dataclass(frozen=True)
class KeyLimits:
    """The restrictions of the caller making or changing a key over HTTP: a key it makes
    or changes ends up within them (the caller cannot lend a key more than it has).

    ``expires_at``: the calling key's expiry (None: never); ``networks``: its IP allowlist
    (None: anywhere); ``per_minute`` / ``per_hour``: the caller's own rate limit."""

    expires_at: int | None = None
    networks: tuple[str, ...] | None = None
    per_minute: int | None = None
    per_hour: int | None = None


def _escalation(field, message, **details):
    return ApiError("RESTRICTION_ESCALATION", message, details={"field": field, **details})


def _check_expiry(limits, expires_at):
    if limits.expires_at is None:
        return
    if expires_at is None or expires_at > limits.expires_at:
        raise _escalation(
            "expires_at",
            "A key cannot outlive the key that makes or changes it: give an expiry no later"
            " than the calling key's.",
            limit=limits.expires_at,
        )


def _within(network, allowed):
    return any(network.version == net.version and network.subnet_of(net) for net in allowed)


def _check_networks(limits, networks):
    if limits.networks is None:
        return
    allowed = [ipaddress.ip_network(c) for c in limits.networks]
    outside = [n for n in networks or [] if not _within(ipaddress.ip_network(n), allowed)]
    if not networks or outside:
        raise _escalation(
            "allowed_ips",
            "A key cannot be used from more addresses than the key that makes or changes"
            " it: give IP ranges within the calling key's.",
            limit=list(limits.networks),
            outside=outside,
        )


def _check_rates(limits, per_minute, per_hour, plan_minute, plan_hour):
    """The new key's limits (its overrides, else the plan's) are within the caller's."""
    for field, own, plan, bound in (
        ("rate_limit_per_minute", per_minute, plan_minute, limits.per_minute),
        ("rate_limit_per_hour", per_hour, plan_hour, limits.per_hour),
    ):
        if bound is not None and (own or plan or 0) > bound:
            raise _escalation(
                field,
                f"A key cannot be given a higher rate limit than the caller's ({bound});"
                f" give {field} of at most {bound}.",
                limit=bound,
            )


def _check_name(name):
    """A display name: 1-200 characters once trimmed."""
    name = name.strip() if isinstance(name, str) else ""
    if not name or len(name) > 200 or not name.isprintable():
        raise validation_error({"name": ["1 to 200 printable characters."]})
    return name


def create_tenant(name: str, plan: str = "starter", tenant_id: str | None = None) -> Tenant:
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


def set_plan(tenant_id: str, plan: str) -> Tenant:
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


def get_tenant(tenant_id: str) -> Tenant:
    tenant = Tenant.get_or_none(Tenant.id == tenant_id)
    if tenant is None:
        raise ApiError("RESOURCE_NOT_FOUND", "The tenant does not exist.")
    return tenant


def create_key(
    tenant_id: str,
    name: str,
    scopes: Iterable[str],
    expires_at: int | None = None,
    allowed_ips: Iterable[str] | None = None,
    rate_limit_per_minute: int | None = None,
    rate_limit_per_hour: int | None = None,
    granted_by: Sequence[str] | None = None,
    limits: KeyLimits | None = None,
    plan_limits: tuple[int, int] | None = None,
) -> tuple[ApiKey, str]:
    """Create an API key; returns ``(ApiKey, secret)``. The secret is never stored.

    ``granted_by``: the scopes of the caller creating it (None: the operator's CLI);
    ``limits``: the caller's restrictions, which the key must stay within (None: the
    operator), with ``plan_limits`` the tenant plan's (per minute, per hour)."""
    name = _check_name(name)
    scopes = normalize_scopes(scopes)
    check_grant(granted_by, scopes)
    if expires_at is not None and expires_at <= now_ms():
        raise validation_error({"expires_at": ["Must be in the future."]})
    tenant = get_tenant(tenant_id)
    if (rate_limit_per_minute or rate_limit_per_hour) and tenant.plan != "enterprise":
        raise ApiError(
            "PLAN_REQUIRED",
            "Per-key rate limit overrides need the enterprise plan.",
            details={"plan": tenant.plan, "required_plan": "enterprise"},
        )
    networks = _networks(allowed_ips)
    if limits is not None:
        _check_expiry(limits, expires_at)
        _check_networks(limits, networks)
        _check_rates(limits, rate_limit_per_minute, rate_limit_per_hour, *(plan_limits or (0, 0)))
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


def _get_key(key_id, tenant_id=None):
    """The key; with ``tenant_id``, only that tenant's (another tenant's is not found)."""
    query = ApiKey.select().where(ApiKey.id == key_id)
    if tenant_id is not None:
        query = query.where(ApiKey.tenant == tenant_id)
    key = query.first()
    if key is None:
        raise ApiError("API_KEY_NOT_FOUND", details={"id": key_id})
    return key


@raises("API_KEY_NOT_FOUND")
def get_key(tenant_id: str, key_id: str) -> ApiKey:
    return _get_key(key_id, tenant_id)


def _check_all_key(key, granted_by):
    """A key holding ``all`` is changed (or revoked) only by a holder of ``all``: else a
    key that may manage keys could take the tenant's strongest key away or narrow it."""
    if granted_by is None or ALL_SCOPES in granted_by:
        return
    if ALL_SCOPES in key.scopes.split():
        raise ApiError(
            "SCOPE_ESCALATION",
            "A key holding `all` can be changed or revoked only by a caller holding `all`.",
            details={"scopes": [ALL_SCOPES], "id": key.id},
        )


@raises("API_KEY_NOT_FOUND", "SCOPE_ESCALATION")
def revoke_key(
    key_id: str, tenant_id: str | None = None, granted_by: Sequence[str] | None = None
) -> ApiKey:
    """Revoke a key; every process refuses it from the next request on.

    ``granted_by``: the caller's scopes over HTTP (a key holding ``all`` needs ``all``)."""
    key = _get_key(key_id, tenant_id)
    _check_all_key(key, granted_by)
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


@raises("API_KEY_NOT_FOUND", "API_KEY_REVOKED", "SCOPE_ESCALATION", "RESTRICTION_ESCALATION")
def update_key(
    key_id: str,
    *,
    tenant_id: str | None = None,
    name: str | object = _UNSET,
    scopes: Iterable[str] | object = _UNSET,
    allowed_ips: Iterable[str] | None | object = _UNSET,
    expires_at: int | None | object = _UNSET,
    granted_by: Sequence[str] | None = None,
    limits: KeyLimits | None = None,
) -> ApiKey:
    """Change a key's name, scopes, IP allowlist (None: any address) or expiry (None:
    never); in force on every process from the next request on.

    With ``granted_by`` (the caller's scopes: an HTTP request) scopes may only narrow,
    and the key must end up within what the caller holds; with ``limits`` a new expiry
    or allowlist must be within the caller's own.

    The key is read, checked and written in one transaction holding its row: two
    changes at once are applied one after the other, each checked against what the
    other left (two narrowing PATCHes never lose a removal)."""
    changes = {}
    if name is not _UNSET:
        changes["name"] = _check_name(name)
    if scopes is not _UNSET:
        scopes = normalize_scopes(scopes)
        changes["scopes"] = " ".join(scopes)
    if allowed_ips is not _UNSET:
        changes["allowed_ips"] = _networks(allowed_ips) or None
        if limits is not None:
            _check_networks(limits, changes["allowed_ips"])
    if expires_at is not _UNSET:
        if granted_by is not None and expires_at is not None and expires_at <= now_ms():
            raise validation_error({"expires_at": ["Must be in the future."]})
        if limits is not None:
            _check_expiry(limits, expires_at)
        changes["expires_at"] = expires_at
    _get_key(key_id, tenant_id)  # 404 before taking the write lock
    with write_transaction():
        key = _locked_key(key_id, tenant_id)
        if granted_by is not None:
            _check_all_key(key, granted_by)
            _check_change(key, scopes, granted_by)
        if changes:
            ApiKey.update(**changes).where(ApiKey.id == key_id).execute()
            _bump_auth_version(key.tenant_id)
    return ApiKey.get_by_id(key_id)


def _locked_key(key_id, tenant_id):
    query = ApiKey.select().where(ApiKey.id == key_id)
    if tenant_id is not None:
        query = query.where(ApiKey.tenant == tenant_id)
    key = for_update(query).first()
    if key is None:
        raise ApiError("API_KEY_NOT_FOUND", details={"id": key_id})
    return key


def _check_change(key, scopes, granted_by):
    """A change over HTTP: the key is live, its scopes only narrow, and it ends up within
    the caller's own scopes (loosening the expiry or allowlist of a key that can do more
    than the caller would be an escalation too)."""
    if key.revoked_at is not None:
        raise ApiError("API_KEY_REVOKED", details={"id": key.id})
    current = key.scopes.split()
    if scopes is _UNSET:
        check_grant(granted_by, current)
        return
    if ALL_SCOPES not in current:
        wider = [ALL_SCOPES] if ALL_SCOPES in scopes else [s for s in scopes if s not in current]
        if wider:
            raise validation_error(
                {"scopes": [f"Scopes can only be narrowed; the key lacks: {', '.join(wider)}."]}
            )
    check_grant(granted_by, scopes)


def key_scopes(stored: str) -> list[str]:
    """The scopes a stored key grants today (``all`` stands for every scope there is)."""
    scopes = stored.split()
    return list(SCOPES) if ALL_SCOPES in scopes else scopes


def list_keys(tenant_id: str) -> list[ApiKey]:
    return list(ApiKey.select().where(ApiKey.tenant == tenant_id).order_by(ApiKey.created_at))


def key_state(key: ApiKey, now: int | None = None) -> str:
    """``revoked``, ``expired`` or ``active``: whether the key authenticates now (as the
    middleware decides: revoked first, then an expiry at or before now)."""
    if key.revoked_at is not None:
        return "revoked"
    if key.expires_at is not None and key.expires_at <= (now_ms() if now is None else now):
        return "expired"
    return "active"


def list_tenants() -> list[dict[str, Any]]:
    """Every tenant, oldest first, with its number of usable keys (the operator's view)."""
    usable = (
        ApiKey.select(ApiKey.tenant, fn.COUNT(ApiKey.id))
        .where(
            ApiKey.revoked_at.is_null()
            & (ApiKey.expires_at.is_null() | (ApiKey.expires_at > now_ms()))
        )
        .group_by(ApiKey.tenant)
        .tuples()
    )
    counts = dict(usable)
    return [
        {
            "id": tenant.id,
            "name": tenant.name,
            "plan": tenant.plan,
            "created_at": format_ms(tenant.created_at),
            "active_keys": counts.get(tenant.id, 0),
        }
        for tenant in Tenant.select().order_by(Tenant.created_at, Tenant.id)
    ]


@raises("INVALID_CURSOR")
def page_keys(tenant_id: str, args: dict[str, Any]) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """One page of the tenant's keys (the standard list), newest first by default."""
    query = ApiKey.select().where(ApiKey.tenant == tenant_id)
    if args.get("revoked") is not None:
        revoked = ApiKey.revoked_at.is_null(False)
        query = query.where(revoked if args["revoked"] else ~revoked)
    rows, meta = paginate_args(
        query,
        args,
        sort_field=ApiKey.created_at,
        tiebreak=ApiKey.id,
        kind="api_keys",
        scope=[tenant_id, args.get("revoked")],
    )
    return [serialize_key(row) for row in rows], meta


# The stored space-separated scopes are shown as a list (``all`` as every scope).
serialize_key = compile_serializer(ApiKeySchema, convert={"scopes": key_scopes})
