"""Marketplace notifications (DESIGN 13): who sent one, and whether its signature holds.

``POST /api/marketplaces/:id/notifications`` carries no API key: the marketplace signs the
raw body with the connection's secret, and the connector checks that signature
(``Connector.verify_notification``) before anything of the body is read. Only an active
connection takes notifications; an unknown, disabled or deleted one is the same 404
whatever tenant it may belong to. Verifying never calls the marketplace.
"""

from collections.abc import Mapping

from ..errors import ApiError
from .base import MarketplaceRejection, Notification
from .models import MarketplaceConnection
from .registry import get_connector

# the connector's rejection code -> ours (errors.CATALOGUE)
REJECTIONS = {
    "NOTIFICATION_SIGNATURE_INVALID": "NOTIFICATION_SIGNATURE_INVALID",
    "NOTIFICATION_BODY_INVALID": "NOTIFICATION_BODY_INVALID",
    "NOTIFICATIONS_UNSUPPORTED": "NOTIFICATIONS_UNSUPPORTED",
}
MAX_ORDERS_PER_NOTIFICATION = 100
MAX_ID_LENGTH = 200


def notified_connection(connection_id: str) -> MarketplaceConnection:
    """The active connection a notification is addressed to, else CONNECTION_NOT_FOUND."""
    connection = MarketplaceConnection.get_or_none(
        (MarketplaceConnection.id == connection_id) & (MarketplaceConnection.status == "active")
    )
    if connection is None:
        raise ApiError("CONNECTION_NOT_FOUND", details={"id": connection_id})
    return connection


def verify_notification(
    connection: MarketplaceConnection, headers: Mapping[str, str], raw_body: bytes
) -> Notification:
    """The connector's verification of a notification, its refusals as ApiErrors."""
    try:
        notification = get_connector(connection).verify_notification(headers, raw_body)
    except MarketplaceRejection as exc:
        code = REJECTIONS.get(exc.code or "", "NOTIFICATION_BODY_INVALID")
        raise ApiError(code, exc.message, details={"connection_id": connection.id}) from None
    return _checked(notification)


def _checked(notification):
    """What a connector read must be storable: ids as short strings, a few orders."""
    ids = getattr(notification, "order_ids", None)
    if (
        not isinstance(notification, Notification)
        or not _short(notification.event_id)
        or not _short(notification.topic)
        or not isinstance(ids, list)
        or len(ids) > MAX_ORDERS_PER_NOTIFICATION
        or not all(_short(value) for value in ids)
    ):
        raise ApiError("NOTIFICATION_BODY_INVALID", "The notification names no order we can read.")
    return notification


def _short(value):
    return isinstance(value, str) and 1 <= len(value) <= MAX_ID_LENGTH and value.isprintable()
