"""The merchant console at /console (DESIGN 15): server-rendered pages over the API."""

from flask import Flask

from . import (  # noqa: F401  (each registers its pages on the blueprint)
    pages_auth,
    pages_catalog,
    pages_jobs,
    pages_oidc,
    pages_orders,
    pages_settings,
    pages_stock,
)
from .models import ConsoleLogin, ConsoleSession  # noqa: F401  (encrypted columns: rotation)
from .web import bp, is_console_request

__all__ = ["init_app", "is_console_request"]


def init_app(app: Flask) -> None:
    app.register_blueprint(bp)
