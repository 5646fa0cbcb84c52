"""Gauges of the whole fleet, read from the database when Prometheus scrapes.

Any API host shows the same numbers (the queue, the webhook backlog, listings waiting for
a push, marketplace outcomes, the workers' heartbeats), whichever process did the work.
Every query is bounded by an index: queued and running jobs and pending deliveries have
partial indexes; windows of one hour read ``finished_at`` / ``created_at`` indexes.
Plain SQL, the same on both engines, its names from the models (``sql.Statement``): a
query that fails reports the gauge absent and counts in ``commerce_metrics_query_errors``.
"""

import logging
import math

from ..db import db
from ..jobs import registry
from ..jobs.models import Job, WorkerProcess
from ..marketplaces.models import SyncAttempt
from ..products.models import Listing
from ..sql import Statement
from ..timeutil import now_ms
from ..totals import finished_jobs
from ..webhooks.models import WebhookDelivery
from .readiness import worker_loops

log = logging.getLogger(__name__)

WINDOW_MS = 3600 * 1000  # "last hour" gauges
JOB_STATUSES_COUNTED = ("queued", "running")  # from the queue's partial indexes
JOB_STATUSES_SHOWN = ("queued", "running", "completed", "failed", "cancelled")
LISTING_STATES = ("pending", "error", "held")


# a literal status: SQLite sees that the partial index applies
_JOBS_BY_TYPE = {
    status: Statement(
        f"SELECT {{Job.type}}, COUNT(*) FROM {{Job}} WHERE {{Job.status}} = '{status}'"
        " GROUP BY {Job.type}",
        Job=Job,
    )
    for status in JOB_STATUSES_COUNTED
}
_OLDEST_QUEUED = Statement(
    "SELECT MIN({Job.run_at}) FROM {Job} WHERE {Job.status} = 'queued' AND {Job.run_at} <= {p:now}",
    Job=Job,
)
_LISTINGS_WAITING = Statement(
    "SELECT {L.sync_status}, COUNT(*) FROM {L}"
    " WHERE {L.sync_status} IN ('pending', 'error', 'held') GROUP BY {L.sync_status}",
    L=Listing,
)
_DELIVERIES_PENDING = Statement(
    "SELECT COUNT(*) FROM {D} WHERE {D.status} = 'pending'", D=WebhookDelivery
)
_DELIVERIES_FAILED = Statement(
    "SELECT COUNT(*) FROM {D} WHERE {D.finished_at} >= {p:since} AND {D.status} = 'failed'",
    D=WebhookDelivery,
)
_MARKETPLACE_CALLS = Statement(
    "SELECT {S.marketplace}, {S.status}, COUNT(*) FROM {S} WHERE {S.created_at} >= {p:since}"
    " GROUP BY {S.marketplace}, {S.status}",
    S=SyncAttempt,
)
_WORKERS = Statement("SELECT COUNT(*), MAX({W.last_seen_at}) FROM {W}", W=WorkerProcess)


def _listing_rows(_now):
    # ``listing.sync_status`` comes with the listing push work (DESIGN section 9); on a
    # schema without it there is nothing waiting to be pushed.
    if "sync_status" not in {c.name for c in db.get_columns(Listing._meta.table_name)}:
        return []
    return _LISTINGS_WAITING.execute().fetchall()


def _job_rows(_now):
    """(type, status, n) for every known type and every status (0 when none), and any
    other type found: live jobs from the queue's partial indexes, finished ones from the
    counts kept by the job table's triggers (``totals.finished_jobs``), no job table scan."""
    counts = {}
    for job_type in registry.known_types():
        for status in JOB_STATUSES_SHOWN:
            counts[job_type, status] = 0
    for status in JOB_STATUSES_COUNTED:
        for job_type, n in _JOBS_BY_TYPE[status].execute().fetchall():
            counts[job_type, status] = n
    for job_type, status, n in finished_jobs():
        counts[job_type, status] = n
    for job_type in {job_type for job_type, _ in counts}:  # a type no longer registered
        for status in JOB_STATUSES_SHOWN:
            counts.setdefault((job_type, status), 0)
    return [(job_type, status, n) for (job_type, status), n in sorted(counts.items())]


def _oldest_queued(now):
    # how long the job that has been due longest has waited (a retry waiting out its
    # backoff, or a held batch step, is not late)
    (oldest,) = _OLDEST_QUEUED.execute({"now": now}).fetchone()
    return 0.0 if oldest is None else max(0, now - oldest) / 1000


def _deliveries(now):
    (pending,) = _DELIVERIES_PENDING.execute().fetchone()
    (failed,) = _DELIVERIES_FAILED.execute({"since": now - WINDOW_MS}).fetchone()
    return pending, failed


def _marketplace_rows(now):
    return _MARKETPLACE_CALLS.execute({"since": now - WINDOW_MS}).fetchall()


def _workers(now):
    count, newest = _WORKERS.execute().fetchone()
    # no live worker at all: the heartbeat is infinitely old, so "age > N" alerts fire
    age = math.inf if newest is None else max(0, now - newest) / 1000
    return count, age


def _loops(_now):
    """{loop name: the longest time since a pass of that loop among running workers}."""
    oldest = {}
    for age in worker_loops():
        oldest[age.loop] = max(oldest.get(age.loop, 0.0), age.seconds_since_pass)
    return oldest


class FleetCollector:
    """A prometheus_client collector; ``collect()`` runs the queries of one scrape."""

    def __init__(self, metric_families):
        self.families = metric_families  # prometheus_client.core, imported by the caller

    def describe(self) -> list:
        return []  # no description: collect() queries the database, only at scrape time

    def collect(self) -> list:
        core = self.families
        gauges = []

        def gauge(name, documentation, labels=None):
            family = core.GaugeMetricFamily(name, documentation, labels=labels)
            gauges.append(family)
            return family

        up, errors, found = _run_queries(now_ms())
        gauge("commerce_database_up", "1 when the database answered this scrape.").add_metric(
            [], up
        )
        _work_gauges(gauge, found)
        _worker_gauges(gauge, found)
        gauge(
            "commerce_metrics_query_errors", "Fleet queries that failed in this scrape."
        ).add_metric([], errors)
        return gauges


_QUERIES = {
    "jobs": _job_rows,
    "oldest": _oldest_queued,
    "deliveries": _deliveries,
    "listings": _listing_rows,
    "calls": _marketplace_rows,
    "workers": _workers,
    "loops": _loops,
}


def _run_queries(now):
    """``(database up, queries failed, {name: result or None})`` of one scrape."""
    errors = 0
    found = dict.fromkeys(_QUERIES)
    try:
        with db.connection_context():
            for name, query in _QUERIES.items():
                try:
                    found[name] = query(now)
                except Exception:
                    log.warning("metrics: %s failed", query.__name__, exc_info=True)
                    errors += 1
    except Exception:  # could not even connect
        log.warning("metrics: the database did not answer", exc_info=True)
        return 0, errors, dict.fromkeys(_QUERIES)
    return 1, errors, found


def _work_gauges(gauge, found):
    """Jobs, webhook deliveries, listings and marketplace calls."""
    if found["jobs"] is not None:
        g = gauge(
            "commerce_jobs",
            "Jobs by type and status (queued, running, completed, failed, cancelled).",
            ["type", "status"],
        )
        for job_type, status, n in found["jobs"]:
            g.add_metric([job_type, status], n)
    if found["oldest"] is not None:
        gauge(
            "commerce_jobs_oldest_queued_age_seconds",
            "How long the job due longest has waited for a worker.",
        ).add_metric([], found["oldest"])
    if found["deliveries"] is not None:
        pending, failed = found["deliveries"]
        gauge("commerce_webhook_deliveries_pending", "Webhook deliveries not sent yet.").add_metric(
            [], pending
        )
        gauge(
            "commerce_webhook_deliveries_failed_last_hour",
            "Webhook deliveries that failed for good in the last hour.",
        ).add_metric([], failed)
    if found["listings"] is not None:
        g = gauge(
            "commerce_listings",
            "Listings waiting for a push, refused, or held (no price).",
            ["sync_status"],
        )
        counts = dict(found["listings"])
        for state in LISTING_STATES:
            g.add_metric([state], counts.get(state, 0))
    if found["calls"] is not None:
        g = gauge(
            "commerce_marketplace_calls_last_hour",
            "Marketplace calls of the last hour (sync history), by outcome.",
            ["marketplace", "status"],
        )
        for marketplace, status, n in found["calls"]:
            g.add_metric([marketplace, status], n)


def _worker_gauges(gauge, found):
    """Worker processes, their heartbeats and their loops."""
    if found["workers"] is not None:
        count, age = found["workers"]
        gauge("commerce_workers", "Job worker processes alive.").add_metric([], count)
        gauge(
            "commerce_worker_heartbeat_age_seconds",
            "Seconds since the newest worker heartbeat (+Inf: no worker).",
        ).add_metric([], age)
    if found["loops"] is not None:
        g = gauge(
            "commerce_worker_loop_last_pass_age_seconds",
            "Seconds since the last successful pass of a worker loop (the longest among"
            " running workers), as their heartbeats last wrote it.",
            ["loop"],
        )
        for name, age in sorted(found["loops"].items()):
            g.add_metric([name], age)
