"""Connector classes by name."""

import requests

from ..errors import ApiError
from .amazon import AmazonConnector
from .answers import CheckedConnector
from .http_connector import HttpConnector
from .models import MarketplaceConnection
from .sandbox import SandboxConnector
from .shopify import ShopifyConnector

CONNECTOR_CLASSES = {
    "sandbox": SandboxConnector,
    "http": HttpConnector,
    "amazon": AmazonConnector,
    "shopify": ShopifyConnector,
}


def get_connector(
    connection: MarketplaceConnection, session: requests.Session | None = None
) -> CheckedConnector:
    """The connector object for a MarketplaceConnection; its answers are checked
    (``answers.CheckedConnector``). ``session``: the keep-alive pool an ``http`` connector
    sends through (``gateway.session_for``); without it, one Session per call."""
    cls = CONNECTOR_CLASSES.get(connection.connector)
    if cls is None:
        raise ApiError(
            "MARKETPLACE_UNAVAILABLE",
            f"Unknown connector {connection.connector!r}.",
            details={"marketplace": connection.marketplace},
        )
    connector = cls(connection, connection.settings or {})
    connector.session = session
    return CheckedConnector(connector)
