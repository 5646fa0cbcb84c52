"""Connector classes by name."""

from ..errors import ApiError
from .answers import CheckedConnector
from .http_connector import HttpConnector
from .sandbox import SandboxConnector

CONNECTOR_CLASSES = {"sandbox": SandboxConnector, "http": HttpConnector}


def get_connector(connection):
    """The connector object for a MarketplaceConnection; its answers are checked
    (``answers.CheckedConnector``)."""
    cls = CONNECTOR_CLASSES.get(connection.connector)
    if cls is None:
        raise ApiError(
            "MARKETPLACE_UNAVAILABLE",
            f"Unknown connector {connection.connector!r}.",
            details={"marketplace": connection.marketplace},
        )
    return CheckedConnector(cls(connection, connection.settings or {}))
