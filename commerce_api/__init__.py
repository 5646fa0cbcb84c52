"""The Commerce API: a multi-tenant REST API for selling across marketplaces."""

import inspect
import ipaddress

from flask import Flask, request
from flask_smorest import Api

from . import console
from .auth.middleware import authenticate, is_public_endpoint
from .auth.routes import blp as api_keys
from .config import check_drivers, load_config
from .db import db, init_database, is_postgres
from .events.routes import blp as events
from .files.routes import blp as files
from .health import metrics as health_metrics
from .health.routes import blp as health
from .http import cors, docs, idempotency, ratelimit
from .http import request as http_request
from .http.envelope import JSONProvider
from .http.errors import register_error_handlers
from .http.limits import RequestLimits
from .http.logs import configure_logging, install_request_observer
from .http.openapi import bulk_item_properties, decimal_properties, register_job_params
from .http.schemas import ErrorSchema, StrictDecimal, StrictInteger
from .inventory.routes import blp as inventory
from .jobs.routes import blp as jobs
from .marketplaces import limits as marketplace_limits
from .marketplaces.routes import blp as marketplaces
from .orders.routes import blp as orders
from .pricing.routes import blp as pricing
from .products.routes import blp as products
from .products.routes import listings_blp as listings
from .tasks import register_all
from .transfers.routes import blp as transfers
from .webhooks.routes import blp as webhooks

API_DESCRIPTION = """A multi-tenant, multi-marketplace commerce API.

Every endpoint except `GET /api/health` (liveness) and `GET /api/health/ready` (readiness)
needs `Authorization: Bearer <API key or user JWT>` and `X-Tenant-ID: <tenant UUID>`.
Every error has the shape `{"error": {"code": "...", "message": "...", "details": {}}}`.
"""


class CommerceApi(Api):
    ERROR_SCHEMA = ErrorSchema

    def _register_error_handlers(self):
        register_error_handlers(self._app)


def _blueprints():
    return [
        health,
        products,
        listings,
        inventory,
        transfers,
        orders,
        marketplaces,
        pricing,
        jobs,
        webhooks,
        events,
        api_keys,
        files,
    ]


class CommerceFlask(Flask):
    def ensure_sync(self, func):
        # Flask asks this of every hook and view on every request; inspect's general check
        # costs about 1 us a call (8 a request). A plain function or method is answered from
        # its code flags; anything else gets Flask's own check.
        code = getattr(getattr(func, "__func__", func), "__code__", None)
        if code is not None and not code.co_flags & inspect.CO_COROUTINE:
            return func
        return super().ensure_sync(func)

    def make_default_options_response(self):
        # OPTIONS (a CORS preflight among them) has nothing to say in a body: 204, like
        # every empty answer of the API; Allow names the resource's methods
        response = super().make_default_options_response()
        response.status_code = 204
        return response


def create_app(test_config=None):
    """Build the Flask app: configuration, database, API, blueprints, error handling."""
    app = CommerceFlask(__name__, instance_relative_config=True)
    config = load_config()
    if test_config:
        config.update(test_config)
    check_drivers(config)
    app.config.update(config)
    app.config.update(
        API_TITLE="Commerce API",
        API_VERSION="v1",
        OPENAPI_VERSION="3.1.0",
        OPENAPI_URL_PREFIX=None,  # served by our own route, with the envelope conventions
        JSON_SORT_KEYS=False,
        MAX_CONTENT_LENGTH=None,  # checked by http.request.check_body with our envelope
    )
    json_logs = configure_logging(config)
    app.json = JSONProvider(app)
    register_all(config)  # job types, periodic tasks, loops, domain checks (every domain)

    database = init_database(config["DATABASE_URL"])

    api = _create_api(app)
    app.register_blueprint(docs.bp)
    console.init_app(app)  # the merchant console at /console (DESIGN 15)

    app.extensions["commerce"] = {
        "api": api,
        "database": database,
        "trusted_proxies": _trusted_proxies(config),
    }
    # the observer first: its clock starts before, and its after_request runs after, all else
    install_request_observer(app, health_metrics.init_app(app), access_log=json_logs)
    _install_request_pipeline(app)
    cors.init_app(app)  # after the pipeline: its headers go on every answer, errors included
    # 414 / 431 in the envelope, before Flask parses anything (limits: http/limits.py)
    app.wsgi_app = RequestLimits(app.wsgi_app)
    if is_postgres(database):

        @app.teardown_request
        def _release_connection(exc):
            # return the connection to the pool; SQLite keeps one per thread (page cache)
            if not db.is_closed():
                db.close()

    return app


def _create_api(app):
    """The flask-smorest API: the OpenAPI document's fields and security schemes, every
    blueprint and the job types' parameter schemas."""
    api = CommerceApi(
        app,
        spec_kwargs={
            "info": {
                "description": API_DESCRIPTION,
                "license": {"name": "MIT", "identifier": "MIT"},
                "contact": {"name": "Commerce API maintainers"},
            },
            "servers": [{"url": "/"}],
        },
    )
    api.register_field(StrictDecimal, "number", None)
    api.register_field(StrictInteger, "integer", None)
    api.ma_plugin.converter.add_attribute_function(decimal_properties)
    api.ma_plugin.converter.add_attribute_function(bulk_item_properties)
    api.spec.components.security_scheme(
        "bearerAuth", {"type": "http", "scheme": "bearer", "description": "API key or user JWT"}
    )
    api.spec.components.security_scheme(
        "tenantId", {"type": "apiKey", "in": "header", "name": "X-Tenant-ID"}
    )
    for blueprint in _blueprints():
        api.register_blueprint(blueprint)
    register_job_params(api)
    return api


def _trusted_proxies(config):
    """The networks of ``TRUSTED_PROXIES`` (comma-separated)."""
    return tuple(
        ipaddress.ip_network(c.strip(), strict=False)
        for c in str(config["TRUSTED_PROXIES"]).split(",")
        if c.strip()
    )


def _install_request_pipeline(app):
    ratelimit.init_app(app)  # the limiter (when enabled), used by enforce_rate_limit
    idempotency.init_app(app)

    @app.before_request
    def _before():
        # a marketplace call made for a request is refused when the tenant is at its cap
        marketplace_limits.start_serving()
        http_request.assign_request_id()
        if console.is_console_request():
            return None  # pages with a session cookie and CSRF tokens, not bearer tokens
        # OPTIONS (a browser's CORS preflight) carries no credentials and reveals no data
        if request.method != "OPTIONS" and not is_public_endpoint():
            authenticate()
            ratelimit.enforce_rate_limit()
        http_request.check_body()
        http_request.check_query_args()
        http_request.check_empty_patch()
        return idempotency.begin_idempotent_request()  # None, or the stored response

    @app.teardown_request
    def _done(exc):
        marketplace_limits.stop_serving()

    @app.after_request
    def _after(response):
        idempotency.finish_idempotent_request(response)
        ratelimit.add_rate_limit_headers(response)
        return http_request.finish_response(response)
