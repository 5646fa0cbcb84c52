"""Gauges of the whole fleet, read from the database when Prometheus scrapes.

Any API host shows the same numbers (the queue, the webhook backlog, listings waiting for
a push, marketplace outcomes, the workers' heartbeats), whichever process did the work.
Every query is bounded by an index: queued and running jobs and pending deliveries have
partial indexes; windows of one hour read ``finished_at`` / ``created_at`` indexes.
Raw SQL on table names, the same on both engines, so that a model change elsewhere does
not break a scrape silently: a query that fails reports the gauge absent and counts in
``commerce_metrics_query_errors``.
"""

import logging
import math

from ..db import db
from ..jobs import registry
from ..timeutil import now_ms

log = logging.getLogger(__name__)

WINDOW_MS = 3600 * 1000  # "last hour" gauges
JOB_STATUSES_COUNTED = ("queued", "running")  # finished jobs are history, not state
LISTING_STATES = ("pending", "error")


def _rows(sql, params=()):
    return db.execute_sql(sql.replace("?", db.param), params).fetchall()


def _listing_rows(_now):
    # ``listing.sync_status`` comes with the listing push work (DESIGN section 9); on a
    # schema without it there is nothing waiting to be pushed.
    if "sync_status" not in {c.name for c in db.get_columns("listing")}:
        return []
    return _rows(
        "SELECT sync_status, COUNT(*) FROM listing"
        " WHERE sync_status IN ('pending', 'error') GROUP BY sync_status"
    )


def _job_rows(_now):
    """(type, status, n) for every known type (0 when none), and any other type found."""
    counts = {}
    for status in JOB_STATUSES_COUNTED:
        for job_type in registry.known_types():
            counts[job_type, status] = 0
        # a literal status: SQLite sees that the partial index applies
        sql = f"SELECT type, COUNT(*) FROM job WHERE status = '{status}' GROUP BY type"
        for job_type, n in _rows(sql):
            counts[job_type, status] = n
    return [(job_type, status, n) for (job_type, status), n in sorted(counts.items())]


def _oldest_queued(now):
    # how long the job that has been due longest has waited (a retry waiting out its
    # backoff, or a held batch step, is not late)
    (oldest,) = _rows(
        "SELECT MIN(run_at) FROM job WHERE status = 'queued' AND run_at <= ?", (now,)
    )[0]
    return 0.0 if oldest is None else max(0, now - oldest) / 1000


def _deliveries(now):
    (pending,) = _rows("SELECT COUNT(*) FROM webhook_delivery WHERE status = 'pending'")[0]
    (failed,) = _rows(
        "SELECT COUNT(*) FROM webhook_delivery WHERE finished_at >= ? AND status = 'failed'",
        (now - WINDOW_MS,),
    )[0]
    return pending, failed


def _marketplace_rows(now):
    return _rows(
        "SELECT marketplace, status, COUNT(*) FROM sync_attempt WHERE created_at >= ?"
        " GROUP BY marketplace, status",
        (now - WINDOW_MS,),
    )


def _workers(now):
    count, newest = _rows("SELECT COUNT(*), MAX(last_seen_at) FROM worker_process")[0]
    # no live worker at all: the heartbeat is infinitely old, so "age > N" alerts fire
    age = math.inf if newest is None else max(0, now - newest) / 1000
    return count, age


class FleetCollector:
    """A prometheus_client collector; ``collect()`` runs the queries of one scrape."""

    def __init__(self, metric_families):
        self.families = metric_families  # prometheus_client.core, imported by the caller

    def describe(self):
        return []  # no description: collect() queries the database, only at scrape time

    def collect(self):
        core = self.families
        now = now_ms()
        errors = 0
        up = 1
        gauges = []

        def gauge(name, documentation, labels=None):
            family = core.GaugeMetricFamily(name, documentation, labels=labels)
            gauges.append(family)
            return family

        def run(query):
            nonlocal errors
            try:
                return query(now)
            except Exception:
                log.warning("metrics: %s failed", query.__name__, exc_info=True)
                errors += 1
                return None

        try:
            with db.connection_context():
                jobs = run(_job_rows)
                oldest = run(_oldest_queued)
                deliveries = run(_deliveries)
                listings = run(_listing_rows)
                calls = run(_marketplace_rows)
                workers = run(_workers)
        except Exception:  # could not even connect
            log.warning("metrics: the database did not answer", exc_info=True)
            up = 0
            jobs = oldest = deliveries = listings = calls = workers = None
        g = gauge("commerce_database_up", "1 when the database answered this scrape.")
        g.add_metric([], up)
        if jobs is not None:
            g = gauge("commerce_jobs", "Jobs queued or running, by type.", ["type", "status"])
            for job_type, status, n in jobs:
                g.add_metric([job_type, status], n)
        if oldest is not None:
            gauge(
                "commerce_jobs_oldest_queued_age_seconds",
                "How long the job due longest has waited for a worker.",
            ).add_metric([], oldest)
        if deliveries is not None:
            pending, failed = deliveries
            gauge(
                "commerce_webhook_deliveries_pending", "Webhook deliveries not sent yet."
            ).add_metric([], pending)
            gauge(
                "commerce_webhook_deliveries_failed_last_hour",
                "Webhook deliveries that failed for good in the last hour.",
            ).add_metric([], failed)
        if listings is not None:
            g = gauge(
                "commerce_listings", "Listings waiting for a push, or refused.", ["sync_status"]
            )
            counts = dict(listings)
            for state in LISTING_STATES:
                g.add_metric([state], counts.get(state, 0))
        if calls is not None:
            g = gauge(
                "commerce_marketplace_calls_last_hour",
                "Marketplace calls of the last hour (sync history), by outcome.",
                ["marketplace", "status"],
            )
            for marketplace, status, n in calls:
                g.add_metric([marketplace, status], n)
        if workers is not None:
            count, age = workers
            gauge("commerce_workers", "Job worker processes alive.").add_metric([], count)
            gauge(
                "commerce_worker_heartbeat_age_seconds",
                "Seconds since the newest worker heartbeat (+Inf: no worker).",
            ).add_metric([], age)
        gauge(
            "commerce_metrics_query_errors", "Fleet queries that failed in this scrape."
        ).add_metric([], errors)
        return gauges
