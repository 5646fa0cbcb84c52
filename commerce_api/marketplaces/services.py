"""Marketplace connections and the sync history (calling a marketplace: ``calls.py``)."""

import json
import logging
import re
from collections.abc import Iterable, Sequence
from typing import Any
from urllib.parse import urlparse

from peewee import IntegrityError

from ..auth.models import Tenant
from ..db import row_getter, write_transaction
from ..errors import ApiError, validation_error
from ..ids import new_id
from ..netguard import check_public_host
from ..pagination import filter_equal, paginate_args
from ..shapes import Row, compile_serializer, field_names
from ..timeutil import now_ms
from .models import CONNECTORS, MarketplaceConnection, SyncAttempt
from .shapes import ConnectionSchema, SyncAttemptSchema
from .shopify_locations import check_shopify_locations

log = logging.getLogger("commerce_api.marketplaces")

MARKETPLACE_PATTERN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")
SANDBOX_SETTINGS = {
    # name: (default, minimum, maximum)
    "initial_orders": (8, 0, 100),
    "orders_per_pull": (2, 0, 50),
    "max_orders": (500, 0, 100_000),
}
# sandbox: the SKUs its FBA warehouse holds (unset: every active product); a list, apart
FBA_SKUS = "fba_skus"
MAX_FBA_SKUS = 200
CONNECTION_FIELDS = field_names(ConnectionSchema)
ATTEMPT_FIELDS = field_names(SyncAttemptSchema)


# Connections ----------------------------------------------------------------------------


serialize_connection = compile_serializer(ConnectionSchema)


def check_base_url(base_url: str, allow_private: bool) -> str:
    try:
        parsed = urlparse(base_url)
        parsed.port  # noqa: B018 (raises ValueError for a port out of range)
    except ValueError:  # e.g. "http://[::1": an unclosed IPv6 literal
        raise validation_error({"base_url": ["Not a valid URL."]}) from None
    if parsed.username is not None or parsed.password is not None:
        raise validation_error(
            {"base_url": ["Credentials in the URL are refused; use the api_token."]}
        )
    if parsed.scheme not in ("http", "https") or not parsed.hostname:
        raise validation_error({"base_url": ["An http(s) URL with a host is required."]})
    if parsed.query or parsed.fragment:
        raise validation_error({"base_url": ["The base URL takes no query or fragment."]})
    if not allow_private:
        try:
            check_public_host(parsed.hostname)
        except ValueError as exc:
            raise validation_error({"base_url": [str(exc)]}) from None
    return base_url.rstrip("/")


AMAZON_REGIONS = ("na", "eu", "fe")
# Amazon's marketplace ids (ATVPDKIKX0DER, A1PA6795UKMFR9...) and seller (merchant) ids
AMAZON_MARKETPLACE_ID = re.compile(r"^A[0-9A-Z]{9,15}$")
AMAZON_SELLER_ID = re.compile(r"^A[0-9A-Z]{5,20}$")
AMAZON_CREDENTIALS = ("lwa_client_id", "lwa_client_secret", "refresh_token")
HTTP_MAX_BATCH = 1000
SHOPIFY_DOMAIN = re.compile(r"^[a-z0-9][a-z0-9-]{0,59}\.myshopify\.com$")
SHOPIFY_API_VERSION = re.compile(r"^20[2-9][0-9]-(01|04|07|10)$")
SHOPIFY_LOCATION = re.compile(r"^gid://shopify/Location/[0-9]{1,20}$")
SHOPIFY_MAX_LOCATIONS = 50
# the secrets each connector takes: (required, optional)
CREDENTIALS = {
    "amazon": (AMAZON_CREDENTIALS, ()),
    "shopify": (("access_token", "webhook_secret"), ()),
}


def check_amazon_settings(settings: dict[str, Any], allow_private: bool) -> dict[str, Any]:
    """``{region, marketplace_id, seller_id}`` and the optional ``endpoint`` and
    ``token_endpoint`` URLs (public through the API, like ``base_url``)."""
    errors = {}
    for name in settings:
        if name not in ("region", "marketplace_id", "seller_id", "endpoint", "token_endpoint"):
            errors[name] = ["Unknown setting."]
    if settings.get("region") not in AMAZON_REGIONS:
        errors["region"] = [f"One of: {', '.join(AMAZON_REGIONS)}."]
    for name, pattern, example in (
        ("marketplace_id", AMAZON_MARKETPLACE_ID, "ATVPDKIKX0DER"),
        ("seller_id", AMAZON_SELLER_ID, "A2EXAMPLESELLER"),
    ):
        value = settings.get(name)
        if not isinstance(value, str) or not pattern.fullmatch(value):
            errors[name] = [f"An Amazon {name.replace('_', ' ')} such as {example}."]
    checked = {name: settings.get(name) for name in ("region", "marketplace_id", "seller_id")}
    for name in ("endpoint", "token_endpoint"):
        value = settings.get(name)
        if value is None:
            continue
        if not isinstance(value, str) or not 1 <= len(value) <= 2048:
            errors[name] = ["A URL of at most 2048 characters."]
            continue
        try:
            checked[name] = check_base_url(value, allow_private)
        except ApiError as exc:
            errors[name] = exc.details.get("fields", {}).get("base_url", ["Not a valid URL."])
    if errors:
        raise validation_error({"settings": errors})
    return checked


def check_shopify_settings(settings: dict[str, Any], allow_private: bool) -> dict[str, Any]:
    """``{shop_domain, api_version, locations}`` and the optional ``endpoint`` (public
    through the API). Whether the warehouses are the tenant's and the locations the
    shop's: ``check_shopify_locations``."""
    errors = {}
    for name in settings:
        if name not in ("shop_domain", "api_version", "locations", "endpoint"):
            errors[name] = ["Unknown setting."]
    domain = settings.get("shop_domain")
    if isinstance(domain, str):
        domain = domain.strip().lower()
    if not isinstance(domain, str) or not SHOPIFY_DOMAIN.fullmatch(domain):
        errors["shop_domain"] = ["The shop's myshopify domain, such as example-shop.myshopify.com."]
    version = settings.get("api_version") or "2025-01"
    if not isinstance(version, str) or not SHOPIFY_API_VERSION.fullmatch(version):
        errors["api_version"] = ["An Admin API version such as 2025-01."]
    locations = settings.get("locations")
    if (
        not isinstance(locations, dict)
        or not 1 <= len(locations) <= SHOPIFY_MAX_LOCATIONS
        or not all(isinstance(key, str) and 1 <= len(key) <= 40 for key in locations)
    ):
        errors["locations"] = [
            f"An object of 1 to {SHOPIFY_MAX_LOCATIONS} own warehouse ids, each to the Shopify "
            "location (gid://shopify/Location/...) it sells from."
        ]
    else:
        bad = {
            key: ["A Shopify location gid such as gid://shopify/Location/123."]
            for key, value in locations.items()
            if not isinstance(value, str) or not SHOPIFY_LOCATION.fullmatch(value)
        }
        if bad:
            errors["locations"] = bad
    checked = {"shop_domain": domain, "api_version": version, "locations": locations}
    endpoint = settings.get("endpoint")
    if endpoint is not None:
        if not isinstance(endpoint, str) or not 1 <= len(endpoint) <= 2048:
            errors["endpoint"] = ["A URL of at most 2048 characters."]
        else:
            try:
                checked["endpoint"] = check_base_url(endpoint, allow_private)
            except ApiError as exc:
                errors["endpoint"] = exc.details.get("fields", {}).get(
                    "base_url", ["Not a valid URL."]
                )
    if errors:
        raise validation_error({"settings": errors})
    return checked


def check_credentials(connector: str, credentials: Any) -> str | None:
    """The connector's secrets as the stored (then encrypted) JSON text."""
    names = CREDENTIALS.get(connector)
    if credentials is None:
        if names is not None:
            raise validation_error({"credentials": [f"Required: {', '.join(names[0])}."]})
        return None
    if connector == "sandbox":
        return _sandbox_credentials(credentials)
    if names is None:
        raise validation_error(
            {"credentials": ["Only the amazon, shopify and sandbox connectors take credentials."]}
        )
    if not isinstance(credentials, dict):
        raise validation_error({"credentials": ["An object."]})
    required, optional = names
    errors = {}
    for name in credentials:
        if name not in required and name not in optional:
            errors[name] = ["Unknown credential."]
    for name in (*required, *optional):
        value = credentials.get(name)
        if value is None and name in optional:
            continue
        if not isinstance(value, str) or not 1 <= len(value) <= 2000 or unstorable_text(value):
            errors[name] = ["Required: a string of 1 to 2000 characters."]
    if errors:
        raise validation_error({"credentials": errors})
    return json.dumps(
        {name: credentials[name] for name in (*required, *optional) if name in credentials}
    )


def _sandbox_credentials(credentials: Any) -> str:
    """The sandbox's one secret: ``notification_secret``, which signs its notifications."""
    if not isinstance(credentials, dict):
        raise validation_error({"credentials": ["An object."]})
    errors = {
        name: ["Unknown credential."] for name in credentials if name != "notification_secret"
    }
    secret = credentials.get("notification_secret")
    if not isinstance(secret, str) or not 16 <= len(secret) <= 2000 or unstorable_text(secret):
        errors["notification_secret"] = ["Required: a string of 16 to 2000 characters."]
    if errors:
        raise validation_error({"credentials": errors})
    return json.dumps({"notification_secret": secret})


def unstorable_text(value: str) -> bool:
    return "\x00" in value or any("\ud800" <= char <= "\udfff" for char in value)


def check_settings(
    connector: str, settings: dict[str, Any] | None, allow_private: bool = False
) -> dict[str, Any]:
    settings = dict(settings or {})
    if connector == "amazon":
        return check_amazon_settings(settings, allow_private)
    if connector == "shopify":
        return check_shopify_settings(settings, allow_private)
    if connector == "http":
        batch = settings.pop("batch_size", None)
        if settings:
            raise validation_error({"settings": ["The http connector takes only batch_size."]})
        if batch is None:
            return {}
        if (
            isinstance(batch, bool)
            or not isinstance(batch, int)
            or not 1 <= batch <= HTTP_MAX_BATCH
        ):
            raise validation_error(
                {"settings": {"batch_size": [f"An integer from 1 to {HTTP_MAX_BATCH}."]}}
            )
        return {"batch_size": batch}
    if connector != "sandbox":
        if settings:
            raise validation_error({"settings": ["Only the sandbox connector takes settings."]})
        return {}
    errors = {}
    fba_skus = settings.pop(FBA_SKUS, None)
    if fba_skus is not None and not _sku_list(fba_skus):
        errors[FBA_SKUS] = [f"A list of at most {MAX_FBA_SKUS} distinct SKUs (1-64 characters)."]
    for name, value in settings.items():
        if name not in SANDBOX_SETTINGS:
            errors[name] = ["Unknown setting."]
            continue
        _, low, high = SANDBOX_SETTINGS[name]
        if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
            errors[name] = [f"An integer from {low} to {high}."]
    if errors:
        raise validation_error({"settings": errors})
    checked = {
        name: settings.get(name, default) for name, (default, _, _) in SANDBOX_SETTINGS.items()
    }
    if fba_skus is not None:
        checked[FBA_SKUS] = list(fba_skus)
    return checked


def _sku_list(value):
    return (
        isinstance(value, list)
        and len(value) <= MAX_FBA_SKUS
        and len(set(value)) == len(value)
        and all(isinstance(sku, str) and 1 <= len(sku) <= 64 for sku in value)
    )


def _check_unconnected(tenant_id, marketplace):
    """The tenant exists and has no connection to ``marketplace`` yet (404, 409)."""
    if not Tenant.select().where(Tenant.id == tenant_id).exists():
        raise ApiError("RESOURCE_NOT_FOUND", "The tenant does not exist.")
    if (
        MarketplaceConnection.select()
        .where(
            (MarketplaceConnection.tenant == tenant_id)
            & (MarketplaceConnection.marketplace == marketplace)
        )
        .exists()
    ):
        raise ApiError("MARKETPLACE_ALREADY_CONNECTED", details={"marketplace": marketplace})


def connect_marketplace(
    tenant_id: str,
    marketplace: str,
    connector: str,
    *,
    base_url: str | None = None,
    api_token: str | None = None,
    settings: dict[str, Any] | None = None,
    created_by: str | None = None,
    allow_private: bool = False,
    credentials: dict[str, Any] | None = None,
) -> MarketplaceConnection:
    """Register a marketplace connection for the tenant; one per marketplace.

    ``credentials`` (the ``amazon`` connector's secrets) are stored encrypted and never
    shown; settings are checked per connector (``check_settings``)."""
    base_url = _checked_address(marketplace, connector, base_url, api_token, allow_private)
    settings = check_settings(connector, settings, allow_private)
    stored_credentials = check_credentials(connector, credentials)
    connection_id = new_id("connection")
    if connector == "shopify":
        check_shopify_locations(
            MarketplaceConnection(
                id=connection_id,
                tenant=tenant_id,
                marketplace=marketplace,
                connector=connector,
                allow_private=allow_private,
                settings=settings,
                credentials=stored_credentials,
            )
        )
    now = now_ms()
    try:
        with write_transaction():
            _check_unconnected(tenant_id, marketplace)
            connection = MarketplaceConnection.create(
                id=connection_id,
                tenant=tenant_id,
                marketplace=marketplace,
                connector=connector,
                base_url=base_url,
                api_token=api_token or None,
                allow_private=allow_private,
                status="active",
                settings=settings,
                credentials=stored_credentials,
                state={},
                created_by=created_by,
                created_at=now,
                updated_at=now,
            )
    except IntegrityError:
        raise ApiError(
            "MARKETPLACE_ALREADY_CONNECTED", details={"marketplace": marketplace}
        ) from None
    return connection


def _checked_address(marketplace, connector, base_url, api_token, allow_private):
    """The marketplace name and connector checked; the ``base_url`` to store (only the
    ``http`` connector takes one, and a token)."""
    if not isinstance(marketplace, str) or not MARKETPLACE_PATTERN.fullmatch(marketplace):
        raise validation_error(
            {"marketplace": ["1-64 of A-Z a-z 0-9 . _ -, not starting with . _ -"]}
        )
    if connector not in CONNECTORS:
        raise validation_error({"connector": [f"One of: {', '.join(CONNECTORS)}."]})
    if connector == "http":
        if not base_url:
            raise validation_error({"base_url": ["Required for the http connector."]})
        base_url = check_base_url(base_url, allow_private)
    else:
        if base_url:
            raise validation_error({"base_url": [f"The {connector} connector takes no base URL."]})
        if api_token:
            raise validation_error({"api_token": [f"The {connector} connector takes no token."]})
    return base_url


def list_connections(
    tenant_id: str, args: dict[str, Any]
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    query = MarketplaceConnection.select().where(MarketplaceConnection.tenant == tenant_id)
    query = filter_equal(query, MarketplaceConnection, args, ("connector", "status"))
    rows, meta = paginate_args(
        query,
        args,
        sort_field=MarketplaceConnection.created_at,
        tiebreak=MarketplaceConnection.id,
        kind="marketplaces",
        scope=[tenant_id, args.get("connector"), args.get("status")],
    )
    return [serialize_connection(row) for row in rows], meta


def get_connection(tenant_id: str, connection_id: str) -> MarketplaceConnection:
    connection = MarketplaceConnection.get_or_none(
        (MarketplaceConnection.id == connection_id) & (MarketplaceConnection.tenant == tenant_id)
    )
    if connection is None:
        raise ApiError("CONNECTION_NOT_FOUND", details={"id": connection_id})
    return connection


def connection_for(
    tenant_id: str, marketplace: str, active_only: bool = True
) -> MarketplaceConnection | None:
    """The tenant's connection to ``marketplace``, or None."""
    query = MarketplaceConnection.select().where(
        (MarketplaceConnection.tenant == tenant_id)
        & (MarketplaceConnection.marketplace == marketplace)
    )
    if active_only:
        query = query.where(MarketplaceConnection.status == "active")
    return query.first()


def require_connection(tenant_id: str, marketplace: str) -> MarketplaceConnection:
    connection = connection_for(tenant_id, marketplace)
    if connection is None:
        raise ApiError(
            "MARKETPLACE_NOT_CONNECTED",
            f"The marketplace {marketplace} is not connected for this tenant.",
            details={"marketplaces": [marketplace]},
        )
    return connection


def tenant_connections(tenant_id: str, active_only: bool = False) -> list[MarketplaceConnection]:
    """The tenant's connections: oldest first, or by marketplace when ``active_only``."""
    query = MarketplaceConnection.select().where(MarketplaceConnection.tenant == tenant_id)
    if active_only:
        query = query.where(MarketplaceConnection.status == "active")
        return list(query.order_by(MarketplaceConnection.marketplace))
    return list(query.order_by(MarketplaceConnection.created_at, MarketplaceConnection.id))


def connected_marketplaces(tenant_id: str) -> list[str]:
    """The tenant's active marketplaces, sorted."""
    return [
        row.marketplace
        for row in MarketplaceConnection.select(MarketplaceConnection.marketplace)
        .where(
            (MarketplaceConnection.tenant == tenant_id) & (MarketplaceConnection.status == "active")
        )
        .order_by(MarketplaceConnection.marketplace)
    ]


def resolve_sync_marketplaces(tenant_id: str, requested: Iterable[str] | None) -> list[str]:
    """The marketplaces a product sync pushes to: the requested ones (each must be
    connected) or, when none are named, every connected one."""
    connected = connected_marketplaces(tenant_id)
    if requested is None:
        if not connected:
            raise ApiError(
                "MARKETPLACE_NOT_CONNECTED",
                "The tenant has no connected marketplace to sync to.",
                details={"marketplaces": []},
            )
        return connected
    wanted = list(dict.fromkeys(requested))
    missing = [name for name in wanted if name not in connected]
    if missing:
        raise ApiError(
            "MARKETPLACE_NOT_CONNECTED",
            "Not connected for this tenant: " + ", ".join(missing) + ".",
            details={"marketplaces": missing, "connected": connected},
        )
    return wanted


# The sync history ---------------------------------------------------------------------


def record_attempt(
    connection: MarketplaceConnection | None,
    *,
    tenant_id: str | None = None,
    marketplace: str | None = None,
    resource_type: str,
    resource_id: str,
    operation: str,
    status: str,
    sku: str | None = None,
    direction: str = "outbound",
    error_code: str | None = None,
    error_message: str | None = None,
    details: dict[str, Any] | None = None,
    duration_ms: int | None = None,
    created_by: str | None = None,
) -> SyncAttempt:
    """Write one sync-history row (inside the caller's transaction, or its own)."""
    with write_transaction():
        return SyncAttempt.create(
            id=new_id("sync"),
            tenant=tenant_id or connection.tenant_id,
            connection_id=connection.id if connection is not None else None,
            marketplace=marketplace or connection.marketplace,
            resource_type=resource_type,
            resource_id=resource_id,
            sku=sku,
            operation=operation,
            direction=direction,
            status=status,
            error_code=error_code,
            error_message=(error_message or None) and str(error_message)[:2000],
            details=details,
            duration_ms=duration_ms,
            created_by=created_by,
            created_at=now_ms(),
        )


_attempt = compile_serializer(SyncAttemptSchema)


def serialize_attempt(row: Row) -> dict[str, Any]:
    """A sync attempt as the API shows it; its error code and message as one ``error``."""
    get = row_getter(row)
    error = None
    if get("error_code") or get("error_message"):
        error = {"code": get("error_code"), "message": get("error_message")}
    return _attempt(row, error=error)


def attempts_for(
    tenant_id: str, resource_type: str, resource_id: str, limit: int = 50
) -> list[dict[str, Any]]:
    """The latest sync-history rows of one order or product, newest first."""
    rows = (
        SyncAttempt.select()
        .where(
            (SyncAttempt.tenant == tenant_id)
            & (SyncAttempt.resource_type == resource_type)
            & (SyncAttempt.resource_id == resource_id)
        )
        .order_by(SyncAttempt.created_at.desc(), SyncAttempt.id.desc())
        .limit(limit)
    )
    return [serialize_attempt(row) for row in rows]


def list_attempts(
    tenant_id: str, args: dict[str, Any], resource_types: Sequence[str] = ("order", "product")
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """The sync history, limited to the ``resource_types`` the caller may read."""
    query = SyncAttempt.select().where(
        (SyncAttempt.tenant == tenant_id) & SyncAttempt.resource_type.in_(list(resource_types))
    )
    names = ("resource_type", "marketplace", "status", "operation", "sku")
    query = filter_equal(query, SyncAttempt, args, names)
    if args.get("order_id"):
        query = query.where(
            (SyncAttempt.resource_type == "order") & (SyncAttempt.resource_id == args["order_id"])
        )
    rows, meta = paginate_args(
        query,
        args,
        sort_field=SyncAttempt.created_at,
        tiebreak=SyncAttempt.id,
        kind="sync_history",
        scope=[tenant_id, sorted(resource_types)]
        + [
            args.get(name)
            for name in ("resource_type", "marketplace", "status", "operation", "sku", "order_id")
        ],
    )
    return [serialize_attempt(row) for row in rows], meta
