"""Webhook endpoints: create, read, list, update, delete, rotate the secret. No Flask here."""

from collections.abc import Callable, Iterable
from typing import Any
from urllib.parse import urlsplit

from .. import netguard
from ..config import current_config
from ..db import first_or_error, write_transaction
from ..errors import ApiError, validation_error
from ..events.catalogue import SUBSCRIBABLE
from ..events.feed import scope_of
from ..ids import new_id
from ..pagination import paginate_args
from ..shapes import compile_serializer, field_names
from ..timeutil import now_ms
from . import deliveries
from .models import WebhookAttempt, WebhookDelivery, WebhookEndpoint
from .shapes import WebhookSchema, WebhookWithSecretSchema
from .signing import new_secret

WILDCARD = "*"
ENDPOINT_FIELDS = field_names(WebhookSchema)
MAX_URL_LENGTH = 2048


_endpoint = compile_serializer(WebhookSchema)
_endpoint_with_secret = compile_serializer(WebhookWithSecretSchema)


def serialize_endpoint(endpoint: WebhookEndpoint, secret: str | None = None) -> dict[str, Any]:
    """An endpoint as the API shows it; its secret only at creation and rotation."""
    if secret is None:
        return _endpoint(endpoint)
    return _endpoint_with_secret(endpoint, secret=secret)


# Checks -----------------------------------------------------------------------------------


def check_url(url: str) -> str:
    """An http(s) URL whose host resolves to public addresses only (unless the operator
    allows private targets); else VALIDATION_ERROR or WEBHOOK_URL_NOT_ALLOWED naming url."""
    if not isinstance(url, str) or not 0 < len(url) <= MAX_URL_LENGTH:
        raise validation_error({"url": [f"An http(s) URL of at most {MAX_URL_LENGTH} characters."]})
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 (raises ValueError when the port is not a number in range)
    except ValueError:
        raise validation_error({"url": ["Not a valid URL."]}) from None
    if parts.scheme not in ("http", "https"):
        raise validation_error({"url": ["The URL must start with https:// or http://."]})
    if not parts.hostname:
        raise validation_error({"url": ["The URL has no host."]})
    if parts.username is not None or parts.password is not None:
        raise validation_error({"url": ["The URL may not carry credentials."]})
    if parts.fragment:
        raise validation_error({"url": ["The URL may not have a fragment."]})
    if any(ch.isspace() for ch in url):
        raise validation_error({"url": ["The URL may not contain spaces."]})
    if not current_config()["WEBHOOK_ALLOW_PRIVATE_TARGETS"]:
        try:
            netguard.check_url(url)
        except ValueError as exc:  # AddressNotAllowed, HostNotResolved
            raise ApiError(
                "WEBHOOK_URL_NOT_ALLOWED",
                str(exc),
                details={"fields": {"url": [str(exc)]}},
            ) from None
    return url


def check_events(events: Iterable[str]) -> list[str]:
    """A non-empty list of known event types, or ``["*"]``; returned as given."""
    if not isinstance(events, list) or not events:
        raise validation_error({"events": ['At least one event type, or ["*"] for all.']})
    problems = []
    for item in events:
        if item == WILDCARD:
            if len(events) > 1:
                problems.append('"*" stands alone: it already means every event type.')
        elif item not in SUBSCRIBABLE:
            problems.append(f"Unknown event type: {item}.")
    if len(set(events)) != len(events):
        problems.append("An event type is listed twice.")
    if problems:
        raise validation_error({"events": sorted(set(problems))})
    return list(events)


def require_event_scopes(events: Iterable[str], has_scope: Callable[[str], bool] | None) -> None:
    """Receiving events of a domain needs that domain's read scope, as the events feed
    does (``"*"``: every domain's): subscribing an endpoint, pointing it elsewhere and
    recovering its events would otherwise read what the caller's scopes do not cover.
    ``has_scope`` None: the operator (no check)."""
    if has_scope is None:
        return
    events = list(events)
    types = SUBSCRIBABLE if WILDCARD in events else events
    missing = sorted(
        {scope for scope in map(scope_of, types) if scope is None or not has_scope(scope)},
        key=str,
    )
    if missing:
        raise ApiError(
            "INSUFFICIENT_SCOPE",
            "Receiving these events needs the read scope of each of their domains: "
            + ", ".join(str(scope) for scope in missing)
            + ".",
            details={"required_scope": missing[0], "required_scopes": missing},
        )


def matches(events: Iterable[str], event_type: str) -> bool:
    return WILDCARD in events or event_type in events


# Reads ------------------------------------------------------------------------------------


def _get(tenant_id, endpoint_id, lock=False):
    query = WebhookEndpoint.select().where(
        (WebhookEndpoint.id == endpoint_id) & (WebhookEndpoint.tenant_id == tenant_id)
    )
    return first_or_error(query, "WEBHOOK_NOT_FOUND", {"id": endpoint_id}, lock)


def get_endpoint(tenant_id: str, endpoint_id: str) -> dict[str, Any]:
    return serialize_endpoint(_get(tenant_id, endpoint_id))


def list_endpoints(
    tenant_id: str, args: dict[str, Any]
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    query = WebhookEndpoint.select().where(WebhookEndpoint.tenant_id == tenant_id)
    if args.get("is_active") is not None:
        query = query.where(WebhookEndpoint.is_active == args["is_active"])
    rows, meta = paginate_args(
        query,
        args,
        sort_field=WebhookEndpoint.created_at,
        tiebreak=WebhookEndpoint.id,
        kind="webhooks",
        scope={"tenant": tenant_id, "is_active": args.get("is_active")},
    )
    return [serialize_endpoint(row) for row in rows], meta


# Changes ----------------------------------------------------------------------------------


def create_endpoint(
    tenant_id: str, data: dict[str, Any], has_scope: Callable[[str], bool] | None = None
) -> dict[str, Any]:
    """Register an endpoint; returns it with its secret (the only time it is shown).

    ``has_scope``: the caller's scope check (``require_event_scopes``)."""
    events = check_events(data.get("events"))
    require_event_scopes(events, has_scope)
    url = check_url(data.get("url"))  # resolves the host: before the transaction
    secret = new_secret()
    now = now_ms()
    limit = int(current_config()["WEBHOOK_MAX_ENDPOINTS"])
    with write_transaction():
        count = WebhookEndpoint.select().where(WebhookEndpoint.tenant_id == tenant_id).count()
        if count >= limit:
            raise ApiError(
                "WEBHOOK_LIMIT_REACHED",
                f"A tenant may have at most {limit} webhook endpoints.",
                details={"limit": limit},
            )
        endpoint = WebhookEndpoint.create(
            id=new_id("webhook"),
            tenant_id=tenant_id,
            url=url,
            events=events,
            description=data.get("description"),
            is_active=True,
            secret=secret,
            created_at=now,
            updated_at=now,
        )
    return serialize_endpoint(endpoint, secret=secret)


def update_endpoint(
    tenant_id: str,
    endpoint_id: str,
    data: dict[str, Any],
    has_scope: Callable[[str], bool] | None = None,
) -> dict[str, Any]:
    """Change url, events, is_active, description; only the fields given.

    The caller must be able to read every event the endpoint receives once changed
    (``require_event_scopes``): else it could point another's endpoint at itself."""
    changes = {}
    if "events" in data:
        changes["events"] = check_events(data["events"])
    if has_scope is not None:
        current = _get(tenant_id, endpoint_id).events  # 404 first
        require_event_scopes(changes.get("events", current), has_scope)
    if "description" in data:
        changes["description"] = data["description"]
    if "url" in data:
        _get(tenant_id, endpoint_id)  # 404 before any DNS lookup
        changes["url"] = check_url(data["url"])
    now = now_ms()
    with write_transaction():
        endpoint = _get(tenant_id, endpoint_id, lock=True)
        if "is_active" in data and data["is_active"] != endpoint.is_active:
            changes["is_active"] = data["is_active"]
            changes["disabled_reason"] = None
            changes["failing_since"] = None  # a re-activated endpoint starts afresh
        if changes:
            changes["updated_at"] = now
            WebhookEndpoint.update(changes).where(WebhookEndpoint.id == endpoint.id).execute()
            if changes.get("is_active") is False:
                deliveries.fail_pending(endpoint.id, "The endpoint was deactivated.", now)
        endpoint = _get(tenant_id, endpoint_id)
    return serialize_endpoint(endpoint)


def delete_endpoint(tenant_id: str, endpoint_id: str) -> None:
    """Delete the endpoint with its delivery log; a delivery being sent is not recorded."""
    with write_transaction():
        endpoint = _get(tenant_id, endpoint_id, lock=True)
        owned = WebhookDelivery.select(WebhookDelivery.id).where(
            WebhookDelivery.endpoint_id == endpoint.id
        )
        WebhookAttempt.delete().where(WebhookAttempt.delivery_id.in_(owned)).execute()
        WebhookDelivery.delete().where(WebhookDelivery.endpoint_id == endpoint.id).execute()
        endpoint.delete_instance()


def rotate_secret(tenant_id: str, endpoint_id: str) -> dict[str, Any]:
    """A new secret signs from now on; the old one also signs ``webhook-signature``
    during the grace period. Returns the endpoint with the new secret."""
    secret = new_secret()
    now = now_ms()
    grace_ms = int(current_config()["WEBHOOK_SECRET_GRACE_SECONDS"]) * 1000
    with write_transaction():
        endpoint = _get(tenant_id, endpoint_id, lock=True)
        (
            WebhookEndpoint.update(
                secret=secret,
                previous_secret=endpoint.secret if grace_ms > 0 else None,
                previous_secret_expires_at=now + grace_ms if grace_ms > 0 else None,
                updated_at=now,
            )
            .where(WebhookEndpoint.id == endpoint.id)
            .execute()
        )
        endpoint = _get(tenant_id, endpoint_id)
    return serialize_endpoint(endpoint, secret=secret)
