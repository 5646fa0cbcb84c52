"""Logs: plain text or one JSON object per line (``COMMERCE_LOG_FORMAT=json``), and the
per-request observer that writes the JSON access log and feeds the request metrics.

In JSON every record carries the request id and tenant of the request it was written in,
so an error's traceback and the access line of its response are found together. In text,
``commerce-api serve`` leaves the access log to gunicorn (with the request id in it).
"""

import json
import logging
import re
import sys
import time

from flask import g, has_request_context, request

ACCESS_LOGGER = "commerce_api.access"
_STANDARD_ATTRS = frozenset(logging.makeLogRecord({}).__dict__) | {"message", "asctime"}


class JsonFormatter(logging.Formatter):
    """One JSON object per record: time, level, logger, message, the request's ids, and
    whatever ``extra=`` the call passed."""

    def format(self, record):
        entry = {
            "time": self.formatTime(record, "%Y-%m-%dT%H:%M:%S") + f".{int(record.msecs):03d}Z",
            "level": record.levelname.lower(),
            "logger": record.name,
            "message": record.getMessage(),
        }
        if has_request_context():
            entry["request_id"] = g.get("request_id")
            auth = g.get("auth")
            entry["tenant_id"] = auth.tenant_id if auth is not None else None
        for key, value in record.__dict__.items():
            if key not in _STANDARD_ATTRS and not key.startswith("_"):
                entry[key] = value
        if record.exc_info:
            entry["exception"] = self.formatException(record.exc_info)
        return json.dumps(entry, default=str)


JsonFormatter.converter = time.gmtime


class StderrHandler(logging.StreamHandler):
    """Writes to whatever ``sys.stderr`` is at the time of the record (not at setup)."""

    @property
    def stream(self):
        return sys.stderr

    @stream.setter
    def stream(self, _value):
        pass


def configure_logging(config):
    """The root logger's level and format, set once per process (later apps reuse it)."""
    level = getattr(logging, str(config["LOG_LEVEL"]).upper(), logging.INFO)
    root = logging.getLogger()
    if str(config["LOG_FORMAT"]).lower() != "json":
        logging.basicConfig(level=level)
        return False
    root.setLevel(level)
    if not any(isinstance(h.formatter, JsonFormatter) for h in root.handlers):
        for handler in list(root.handlers):
            if type(handler) is logging.StreamHandler:  # basicConfig's plain text one
                root.removeHandler(handler)
        handler = StderrHandler()
        handler.setFormatter(JsonFormatter())
        root.addHandler(handler)
    return True


_TEMPLATES = {}
UNMATCHED = "<unmatched>"  # the route label of a path no route matches (404)


def route_of():
    """The route template of the request as the API document writes it
    (``/api/products/{sku}``), not its path: a bounded set of label values."""
    rule = request.url_rule
    if rule is None:
        return UNMATCHED
    template = _TEMPLATES.get(rule.rule)
    if template is None:
        template = _TEMPLATES[rule.rule] = re.sub(r"<(?:[^:<>]+:)?([^<>]+)>", r"{\1}", rule.rule)
    return template


def install_request_observer(app, metrics, access_log):
    """Time every request; at its end feed ``metrics`` and write the JSON access line.

    Registered before the request pipeline, so its clock starts first and its
    ``after_request`` (Flask runs them last-registered first) sees the final response.
    """
    if metrics is None and not access_log:
        return
    access = logging.getLogger(ACCESS_LOGGER)
    clock = time.perf_counter

    @app.before_request
    def _start_clock():
        g.started = clock()

    @app.after_request
    def _observe(response):
        started = g.get("started")
        seconds = clock() - started if started is not None else 0.0
        route = route_of()
        status = response.status_code
        if metrics is not None:
            metrics.observe(route, request.method, status, seconds, _rate_limited(response))
        if access_log:
            access.info(
                "%s %s %s",
                request.method,
                request.full_path.rstrip("?"),
                status,
                extra={
                    "method": request.method,
                    "route": route,
                    "path": request.path,
                    "status": status,
                    "duration_ms": round(seconds * 1000, 2),
                    "remote_addr": request.remote_addr,
                },
            )
        return response


def _rate_limited(response):
    if response.status_code != 429:
        return False
    try:
        return json.loads(response.get_data())["error"]["code"] == "RATE_LIMITED"
    except (ValueError, KeyError, TypeError):
        return False
