"""The merchant console at /console (DESIGN 15): server-rendered pages over the API."""

from flask import Flask

from . import pages_auth, pages_catalog, pages_jobs, pages_orders, pages_settings  # noqa: F401
from .models import ConsoleSession  # noqa: F401  (its encrypted column joins key rotation)
from .web import bp, is_console_request

__all__ = ["init_app", "is_console_request"]


def init_app(app: Flask) -> None:
    app.register_blueprint(bp)
