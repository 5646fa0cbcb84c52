"""Connector classes by name, and the settings they read."""

from ..errors import ApiError


def connector_classes():
    from .http_connector import HttpConnector
    from .sandbox import SandboxConnector

    return {"sandbox": SandboxConnector, "http": HttpConnector}


def get_connector(connection):
    """The connector object for a MarketplaceConnection."""
    cls = connector_classes().get(connection.connector)
    if cls is None:
        raise ApiError(
            "MARKETPLACE_UNAVAILABLE",
            f"Unknown connector {connection.connector!r}.",
            details={"marketplace": connection.marketplace},
        )
    return cls(connection, connection.settings or {})
