"""Connector classes by name, and the settings they read."""

from ..config import load_config
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


def setting(key):
    """A configuration value: the app's when there is one, else the environment's."""
    try:
        from flask import current_app

        return current_app.config[key]
    except (RuntimeError, KeyError):
        return load_config()[key]
