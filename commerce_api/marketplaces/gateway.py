"""The one door to the marketplaces: every connector call of the service goes through it.

``call(connection, operation, fn, ...)`` runs ``fn(connector)`` and gives each call the
same treatment, whoever makes it (product and listing pushes, price pushes, shipments,
cancellations, order pulls, marketplace stock, competitor prices, reviews):

- **no transaction open**: a write transaction held over a network call would block every
  other writer on SQLite; callers read, call, then apply the outcome in a transaction of
  their own that checks the state again;
- **a deadline**: the ``http`` connector ends every exchange by
  ``MARKETPLACE_DEADLINE_SECONDS`` of wall clock, or by an outer ``limits.deadline_scope``;
- **the per-tenant cap** (``MARKETPLACE_TENANT_CONCURRENCY`` calls in flight per process):
  a call made while serving an API request is refused at once (``MarketplaceUnavailable``
  with code ``TENANT_CONCURRENCY``, nothing written); background work (jobs, the listing
  push service, the CLI) waits for a slot (``MARKETPLACE_SLOT_WAIT_SECONDS``);
- **checked answers**: the connector is wrapped in ``answers.CheckedConnector``;
- **the sync history**: with ``resource_type``/``resource_id`` given, one ``SyncAttempt``
  row per call, in its own short transaction, also when the call failed;
- **one keep-alive pool per connection per process** (``session_for``): a requests Session
  whose every request is still checked by ``netguard`` (resolved, checked, pinned); it is
  replaced when the connection's ``base_url``, ``api_token`` or ``allow_private`` change.

Failures are the connector's own two exceptions (``base.MarketplaceRejection``,
``base.MarketplaceUnavailable``), with ``attempt_id`` set when an attempt was recorded.
``calls.call_marketplace`` maps them to the API's 422/503 for request handlers.

Listings (``listing_push``, ``product_sync.update_listing``) and prices (``prices.push_price``,
``prices.record_pushed_prices``) are written only by this package (marking a listing
pending is the one exception: ``products.desired_state``).
"""

import contextlib
import hashlib
import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import requests

from .. import netguard
from ..config import current_config
from ..crypto import SecretUnreadable, readable
from ..db import db, write_transaction
from .answers import CheckedConnector
from .base import ConnectorError, MarketplaceRejection, MarketplaceUnavailable
from .limits import TenantBusy, serving, tenant_slot
from .models import MarketplaceConnection
from .registry import get_connector
from .services import record_attempt

log = logging.getLogger("commerce_api.marketplaces")

BUSY_RETRY_AFTER = 2  # seconds, when the tenant's outbound calls are at their cap
SECRET_RETRY_SECONDS = 10  # a connection whose token cannot be decrypted, tried again after
SECRET_REASON = "SECRET_KEY_MISMATCH: the connection's API token cannot be decrypted"
BY_SCOPE = object()  # ``slot_wait`` default: refuse while serving a request, else wait
SESSION_POOL_SIZE = 16  # keep-alive sockets per connection and process


@dataclass(frozen=True)
class Answer:
    """What a call gave: the connector's (checked) result and the sync-history row."""

    result: Any
    attempt: Any = None  # the SyncAttempt, when the call was recorded


# Keep-alive pools -------------------------------------------------------------------------

_sessions_lock = threading.Lock()
_sessions = {}  # connection id -> (fingerprint, requests.Session)


def _fingerprint(connection):
    token = readable(connection.api_token) or ""  # SecretUnreadable: this connection fails
    return (
        connection.base_url,
        bool(connection.allow_private),
        hashlib.sha256(token.encode("utf-8")).hexdigest(),
    )


def session_for(connection: MarketplaceConnection) -> requests.Session:
    """The process's keep-alive Session for ``connection`` (netguard-checked).

    A connection whose base URL, token or private-address permission changed gets a new
    Session (the old one is closed), so a changed connection never reuses a socket to its
    old address.
    """
    fingerprint = _fingerprint(connection)
    with _sessions_lock:
        kept = _sessions.get(connection.id)
        if kept is not None and kept[0] == fingerprint:
            return kept[1]
        session = netguard.guarded_session(
            allow_private=bool(connection.allow_private), pool_maxsize=SESSION_POOL_SIZE
        )
        _sessions[connection.id] = (fingerprint, session)
    if kept is not None:
        kept[1].close()
    return session


def forget_session(connection_id: str) -> None:
    """Close and drop the connection's pool (its connection was changed or deleted)."""
    with _sessions_lock:
        kept = _sessions.pop(connection_id, None)
    if kept is not None:
        kept[1].close()


def connector_for(connection: MarketplaceConnection) -> CheckedConnector:
    """The checked connector of ``connection``, on the connection's keep-alive pool."""
    session = session_for(connection) if connection.connector in ("http", "amazon") else None
    return get_connector(connection, session=session)


# The call ---------------------------------------------------------------------------------


def slot_wait_seconds() -> float | None:
    """How long this thread may wait for a tenant slot: None (refuse at once) while it
    serves an API request, else ``MARKETPLACE_SLOT_WAIT_SECONDS``."""
    if serving():
        return None
    return float(current_config()["MARKETPLACE_SLOT_WAIT_SECONDS"])


def call(
    connection: MarketplaceConnection,
    operation: str,
    fn: Callable[[Any], Any],
    *,
    resource_type: str | None = None,
    resource_id: str | None = None,
    sku: str | None = None,
    created_by: str | None = None,
    details: dict | None = None,
    slot_wait: float | None | object = BY_SCOPE,
) -> Answer:
    """Run ``fn(connector)`` for ``connection`` through the gateway; returns an ``Answer``.

    ``operation`` names the call in the sync history (``push_product``, ``push_listing``,
    ``push_price``, ``confirm_shipment``, ``request_cancellation``, ``fetch_orders``...).
    With ``resource_type`` and ``resource_id`` (``product``/``prod_...``,
    ``order``/``ord_...``) the attempt is recorded, succeeded or not.

    Raises ``MarketplaceRejection`` (a final no) or ``MarketplaceUnavailable`` (try later;
    ``retry_after`` when known; code ``TENANT_CONCURRENCY`` when an API request found the
    tenant at its cap, ``CONNECTION_DISABLED`` for a connection that is not active).
    Any other exception is a connector bug: recorded as ``failed``, then raised.

    ``slot_wait``: seconds to wait for a tenant slot (None: refuse at once); by default
    ``slot_wait_seconds()`` decides.
    """
    if db.transaction_depth() > 0:
        raise RuntimeError("A marketplace must not be called inside a database transaction")
    if connection.status != "active":
        raise MarketplaceUnavailable(
            f"The connection to {connection.marketplace} is {connection.status}.",
            code="CONNECTION_DISABLED",
        )
    attempt = _Attempt(
        connection,
        resource_type=resource_type,
        resource_id=resource_id,
        sku=sku,
        operation=operation,
        created_by=created_by,
        details=details,
    )
    connector = _readable_connector(connection, attempt)
    slot = contextlib.nullcontext()
    if connector.remote:  # the sandbox answers in-process: nothing leaves it
        cap = int(current_config()["MARKETPLACE_TENANT_CONCURRENCY"])
        wait = slot_wait_seconds() if slot_wait is BY_SCOPE else slot_wait
        slot = tenant_slot(connection.tenant_id, cap, wait=wait)
    result = _run(connection, connector, fn, slot, attempt)
    if getattr(connection, "status_reason", None):
        _set_status_reason(connection, None)  # it works again
    return Answer(result, attempt.record("succeeded"))


class _Attempt:
    """One call's entry in the sync history, written only when the call names a resource
    (``resource_type`` and ``resource_id``); its duration runs from the connector's call."""

    def __init__(self, connection, **fields):
        self.connection = connection
        self.fields = fields
        self.recorded = fields["resource_type"] is not None and fields["resource_id"] is not None
        self.started = time.monotonic()

    def record(self, status, error_code=None, error_message=None):
        if not self.recorded:
            return None
        return record_attempt(
            self.connection,
            **self.fields,
            duration_ms=int((time.monotonic() - self.started) * 1000),
            status=status,
            error_code=error_code,
            error_message=error_message,
        )


def _readable_connector(connection, attempt):
    """The connection's connector; ``MarketplaceUnavailable`` when its secrets cannot be
    decrypted."""
    try:
        connector = connector_for(connection)
    except SecretUnreadable as exc:
        # this connection's token was written with a key the service no longer has: this
        # connection fails, visibly (sync history, the listing's error), and no other
        message = f"The connection's API token cannot be decrypted: {exc.message}"
        _set_status_reason(connection, SECRET_REASON)
        recorded = attempt.record("unavailable", "SECRET_KEY_MISMATCH", message)
        error = MarketplaceUnavailable(
            message, code="SECRET_KEY_MISMATCH", retry_after=SECRET_RETRY_SECONDS
        )
        error.attempt_id = recorded.id if recorded is not None else None
        raise error from None
    if connection.status_reason is not None:
        _set_status_reason(connection, None)  # it works again (the key is back, or a new token)
    return connector


def _run(connection, connector, fn, slot, attempt):
    """``fn(connector)`` inside the tenant ``slot``; a failure is recorded, then raised."""
    try:
        with slot:
            attempt.started = time.monotonic()
            return fn(connector)
    except TenantBusy as exc:
        raise MarketplaceUnavailable(
            f"Too many calls to marketplaces are in flight for this tenant: {exc}",
            code="TENANT_CONCURRENCY",
            details={"limit": exc.cap},
            retry_after=BUSY_RETRY_AFTER,
        ) from None
    except ConnectorError as exc:
        status = "failed"  # a subclass we do not know
        if isinstance(exc, MarketplaceRejection):
            status = "rejected"
        elif isinstance(exc, MarketplaceUnavailable):
            status = "unavailable"
            if exc.code == "AUTH":
                _set_status_reason(connection, f"AUTH: {exc.message}"[:2000])
        recorded = attempt.record(status, exc.code, exc.message)
        exc.attempt_id = recorded.id if recorded is not None else None
        raise
    except Exception as exc:
        attempt.record("failed", "INTERNAL_ERROR", type(exc).__name__)
        raise


def _set_status_reason(connection: MarketplaceConnection, reason: str | None) -> None:
    """Why the connection does not work now (credentials), shown on the connection."""
    if getattr(connection, "status_reason", None) == reason:
        return
    try:
        with write_transaction():
            MarketplaceConnection.update(status_reason=reason).where(
                MarketplaceConnection.id == connection.id
            ).execute()
        connection.status_reason = reason
    except Exception:  # a busy database must not turn the call's outcome into another error
        log.exception("connection %s: recording status_reason failed", connection.id)
