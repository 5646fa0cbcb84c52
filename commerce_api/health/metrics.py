"""``GET /metrics`` in the Prometheus text format (``COMMERCE_METRICS_ENABLED=1``).

Two kinds of series:
- per process, counted as requests finish: requests by route template and status, their
  latency by route template, rate-limit refusals. Under gunicorn these live in
  prometheus_client's multi-process files (``PROMETHEUS_MULTIPROC_DIR``, set up by
  ``commerce-api serve``) so that a scrape, whichever process answers it, adds up all.
- read from the database at scrape time (``fleet.FleetCollector``): the same on every host.

prometheus_client chooses its storage when it is first imported, from the environment, so
it is imported here only once metrics are enabled, after ``serve`` has set the folder.
"""

import hmac
import os

from flask import Blueprint, current_app, request

from ..auth.middleware import public
from ..errors import ApiError
from .fleet import FleetCollector

MULTIPROC_ENV = "PROMETHEUS_MULTIPROC_DIR"
# the ``method`` label takes these values, and ``other`` for any other method name a client
# sends (unauthenticated: a label per invented name would grow the series without bound)
KNOWN_METHODS = frozenset(("GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"))
LATENCY_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0)

bp = Blueprint("metrics", __name__)


class RequestMetrics:
    """The per-process series, and the registry a scrape reads."""

    def __init__(self):
        import prometheus_client
        from prometheus_client import core, multiprocess

        self._client = prometheus_client
        prometheus_client.disable_created_metrics()  # no *_created series beside each total
        self.multiprocess = bool(os.environ.get(MULTIPROC_ENV))
        # Per-process series go to the default registry (or, in multi-process mode, to
        # the folder's files): created once per process, even when tests build many apps.
        self.requests = _metric(
            prometheus_client.Counter,
            "commerce_http_requests",
            "HTTP requests answered, by route template, method and status.",
            ["route", "method", "status"],
        )
        self.latency = _metric(
            prometheus_client.Histogram,
            "commerce_http_request_duration_seconds",
            "Time to answer a request, by route template and method.",
            ["route", "method"],
            buckets=LATENCY_BUCKETS,
        )
        self.refusals = _metric(
            prometheus_client.Counter,
            "commerce_rate_limit_refusals",
            "Requests refused with 429 RATE_LIMITED.",
            [],
        )
        self._series = {}
        self.registry = prometheus_client.CollectorRegistry(auto_describe=False)
        if self.multiprocess:
            multiprocess.MultiProcessCollector(self.registry)
        else:
            self.registry.register(_DefaultRegistry(prometheus_client.REGISTRY))
        self.registry.register(FleetCollector(core))

    def observe(self, route, method, status, seconds, rate_limited):
        # labels() builds and looks up its key on every call; the pair is kept per key
        # (a bounded set: route templates x known methods x statuses)
        if method not in KNOWN_METHODS:
            method = "other"
        series = self._series.get((route, method, status))
        if series is None:
            series = self._series[route, method, status] = (
                self.requests.labels(route, method, status),
                self.latency.labels(route, method),
            )
        series[0].inc()
        series[1].observe(seconds)
        if rate_limited:
            self.refusals.inc()

    def exposition(self):
        return self._client.generate_latest(self.registry), self._client.CONTENT_TYPE_LATEST


_METRICS = {}


def _metric(kind, name, documentation, labels, **kwargs):
    metric = _METRICS.get(name)
    if metric is None:
        metric = _METRICS[name] = kind(name, documentation, labels, **kwargs)
    return metric


class _DefaultRegistry:
    """The process's own series (single process: the Flask dev server, tests)."""

    def __init__(self, registry):
        self.source = registry

    def collect(self):
        return self.source.collect()


def init_app(app):
    """Register ``/metrics`` and the per-request counting, when metrics are enabled."""
    if not app.config["METRICS_ENABLED"]:
        return None
    metrics = RequestMetrics()
    app.extensions["commerce"]["metrics"] = metrics
    app.register_blueprint(bp)
    return metrics


def _authorized():
    token = current_app.config["METRICS_TOKEN"]
    if not token:
        return True
    scheme, _, given = request.headers.get("Authorization", "").partition(" ")
    # as bytes: compare_digest refuses str with non-ASCII characters (a 500 otherwise)
    return scheme.lower() == "bearer" and hmac.compare_digest(
        _wire_bytes(given.strip()), token.encode("utf-8")
    )


def _wire_bytes(header_value):
    """A header as the bytes that came on the wire (WSGI decodes them as Latin-1)."""
    try:
        return header_value.encode("latin-1")
    except UnicodeEncodeError:  # not from a real socket: whatever a caller put in
        return header_value.encode("utf-8", "surrogateescape")


@bp.route("/metrics")
@public
def metrics_view():
    if not _authorized():
        raise ApiError("UNAUTHENTICATED", details={"reason": "invalid_metrics_token"})
    body, content_type = current_app.extensions["commerce"]["metrics"].exposition()
    return current_app.response_class(body, 200, {"Content-Type": content_type})


def gunicorn_child_exit(server, worker):
    """gunicorn's ``child_exit`` hook: the dead worker's live gauges stop counting."""
    if os.environ.get(MULTIPROC_ENV):
        from prometheus_client import multiprocess

        multiprocess.mark_process_dead(worker.pid)
