"""Changing and removing a marketplace connection (creating one: ``services``)."""

from typing import Any

from ..db import for_update, write_transaction
from ..errors import ApiError, validation_error
from ..timeutil import now_ms
from . import gateway
from .amazon_client import TOKENS
from .models import CONNECTION_STATUSES, MarketplaceConnection
from .services import (
    check_base_url,
    check_credentials,
    check_settings,
)
from .shopify_locations import check_shopify_locations


def _locked(tenant_id, connection_id):
    query = MarketplaceConnection.select().where(
        (MarketplaceConnection.id == connection_id) & (MarketplaceConnection.tenant == tenant_id)
    )
    connection = for_update(query).first()
    if connection is None:
        raise ApiError("CONNECTION_NOT_FOUND", details={"id": connection_id})
    return connection


def _checked_fields(connection, changes, allow_private):
    """The connection's fields to write for ``changes``, each checked (422 otherwise)."""
    fields = {}
    if "status" in changes:
        if changes["status"] not in CONNECTION_STATUSES:
            raise validation_error({"status": [f"One of: {', '.join(CONNECTION_STATUSES)}."]})
        fields["status"] = changes["status"]
    if connection.connector == "http":
        if "base_url" in changes:
            if not changes["base_url"]:
                raise validation_error({"base_url": ["Required for the http connector."]})
            fields["base_url"] = check_base_url(changes["base_url"], allow_private)
            # the new address is the caller's: only the operator may make it private
            fields["allow_private"] = allow_private
        if "api_token" in changes:
            fields["api_token"] = changes["api_token"] or None
    else:
        for name in ("base_url", "api_token"):
            if changes.get(name):
                raise validation_error(
                    {name: [f"The {connection.connector} connector takes none."]}
                )
    if "settings" in changes:
        settings = dict(changes["settings"] or {})
        if connection.connector in ("sandbox", "amazon", "shopify"):  # named ones change
            settings = {**(connection.settings or {}), **settings}
        fields["settings"] = check_settings(connection.connector, settings, allow_private)
        if connection.connector in ("amazon", "shopify"):
            # endpoints are checked as the caller may set them (a private one kept from
            # the operator is refused through the API); the new ones are the caller's
            fields["allow_private"] = allow_private
    if changes.get("credentials") is not None:
        fields["credentials"] = check_credentials(connection.connector, changes["credentials"])
        fields["status_reason"] = None
    return fields


# a change of any of these replaces the connection's keep-alive pool and access token
_SESSION_FIELDS = {
    "base_url",
    "api_token",
    "allow_private",
    "status",
    "settings",
    "credentials",
    "status_reason",
}


def update_connection(
    tenant_id: str, connection_id: str, changes: dict[str, Any], allow_private: bool = False
) -> MarketplaceConnection:
    """Change a connection's ``base_url``, ``api_token``, ``settings`` or ``status``
    (``active`` or ``disabled``); returns it.

    The rules of ``connect_marketplace`` hold: through the API (``allow_private`` False) a
    base URL must reach a public address (422 otherwise); the sandbox takes settings but no
    URL or token. A disabled connection is neither pulled nor pushed to; its listings wait,
    pending, until it is active again. A new URL or token takes effect at the next call
    (each process's keep-alive pool is replaced, ``gateway.session_for``). A Shopify
    connection's new settings or credentials are checked with the shop first (its
    locations), with no transaction open.
    """
    _check_shop(tenant_id, connection_id, changes, allow_private)
    with write_transaction():
        connection = _locked(tenant_id, connection_id)
        fields = _checked_fields(connection, changes, allow_private)
        fields = {
            name: value for name, value in fields.items() if getattr(connection, name) != value
        }
        if fields:
            fields["updated_at"] = now_ms()
            MarketplaceConnection.update(**fields).where(
                MarketplaceConnection.id == connection.id
            ).execute()
            for name, value in fields.items():
                setattr(connection, name, value)
    if _SESSION_FIELDS & set(fields):
        gateway.forget_session(connection.id)
        TOKENS.forget(connection.id)  # new credentials are tried at once
    return connection


def _check_shop(tenant_id, connection_id, changes, allow_private):
    """``check_shopify_locations`` for the settings and credentials a PATCH would leave."""
    if changes.get("settings") is None and changes.get("credentials") is None:
        return
    connection = MarketplaceConnection.get_or_none(
        (MarketplaceConnection.id == connection_id) & (MarketplaceConnection.tenant == tenant_id)
    )
    if connection is None or connection.connector != "shopify":
        return
    settings = connection.settings
    if changes.get("settings") is not None:
        merged = {**(connection.settings or {}), **dict(changes["settings"])}
        settings = check_settings("shopify", merged, allow_private)
    credentials = connection.credentials
    if changes.get("credentials") is not None:
        credentials = check_credentials("shopify", changes["credentials"])
    check_shopify_locations(
        MarketplaceConnection(
            id=connection.id,
            tenant=connection.tenant_id,
            marketplace=connection.marketplace,
            connector=connection.connector,
            allow_private=allow_private
            if changes.get("settings") is not None
            else connection.allow_private,
            settings=settings,
            credentials=credentials,
        )
    )


def delete_connection(tenant_id: str, connection_id: str) -> MarketplaceConnection:
    """Remove a connection: its pulls and pushes stop; its listings and the sync history
    stay (a listing waits, pending, until the marketplace is connected again)."""
    with write_transaction():
        connection = _locked(tenant_id, connection_id)
        MarketplaceConnection.delete().where(MarketplaceConnection.id == connection.id).execute()
    gateway.forget_session(connection.id)
    return connection
