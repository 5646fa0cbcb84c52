"""Webhook endpoints: create, read, list, update, delete, rotate the secret. No Flask here."""

from collections.abc import Callable
from typing import Any
from urllib.parse import urlsplit

from .. import netguard
from ..config import current_config
from ..crypto import UnreadableSecret
from ..db import first_or_error, write_transaction
from ..errors import ApiError, raises, validation_error
from ..ids import new_id
from ..pagination import paginate_args
from ..shapes import compile_serializer, field_names
from ..timeutil import now_ms
from . import deliveries
from .models import WebhookAttempt, WebhookDelivery, WebhookEndpoint
from .shapes import WebhookSchema, WebhookWithSecretSchema
from .signing import new_secret
from .subscriptions import check_events, require_event_scopes

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


@raises("WEBHOOK_URL_NOT_ALLOWED")
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


# Reads ------------------------------------------------------------------------------------


@raises("WEBHOOK_NOT_FOUND")
def _get(tenant_id, endpoint_id, lock=False):
    query = WebhookEndpoint.select().where(
        (WebhookEndpoint.id == endpoint_id) & (WebhookEndpoint.tenant_id == tenant_id)
    )
    return first_or_error(query, "WEBHOOK_NOT_FOUND", {"id": endpoint_id}, lock)


@raises(_get)
def get_endpoint(tenant_id: str, endpoint_id: str) -> dict[str, Any]:
    return serialize_endpoint(_get(tenant_id, endpoint_id))


@raises("INVALID_CURSOR")
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


# SECRET_KEY_MISMATCH: the key reads none of the stored secrets, so no new one is written
@raises(check_url, "WEBHOOK_LIMIT_REACHED", "INSUFFICIENT_SCOPE", "SECRET_KEY_MISMATCH")
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


@raises(_get, check_url, "INSUFFICIENT_SCOPE")
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


@raises(_get)
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


@raises(_get, "SECRET_KEY_MISMATCH")
def rotate_secret(tenant_id: str, endpoint_id: str) -> dict[str, Any]:
    """A new secret signs from now on; the old one also signs ``webhook-signature``
    during the grace period. Returns the endpoint with the new secret."""
    secret = new_secret()
    now = now_ms()
    grace_ms = int(current_config()["WEBHOOK_SECRET_GRACE_SECONDS"]) * 1000
    with write_transaction():
        endpoint = _get(tenant_id, endpoint_id, lock=True)
        # an old secret no key decrypts cannot sign: the new one alone (the repair)
        keep_old = grace_ms > 0 and not isinstance(endpoint.secret, UnreadableSecret)
        (
            WebhookEndpoint.update(
                secret=secret,
                previous_secret=endpoint.secret if keep_old else None,
                previous_secret_expires_at=now + grace_ms if keep_old else None,
                updated_at=now,
            )
            .where(WebhookEndpoint.id == endpoint.id)
            .execute()
        )
        endpoint = _get(tenant_id, endpoint_id)
    return serialize_endpoint(endpoint, secret=secret)
