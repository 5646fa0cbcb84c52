"""The metrics a scrape must show: the series, the parser, and a seeded fleet to check."""

from prometheus_client.parser import text_string_to_metric_families

from commerce_api.jobs.models import Job, WorkerProcess
from commerce_api.marketplaces.models import SyncAttempt
from commerce_api.timeutil import now_ms
from commerce_api.webhooks.models import WebhookDelivery

# every series DESIGN section 11 names (the job and listing ones with their labels)
FLEET_SERIES = (
    "commerce_jobs",
    "commerce_jobs_oldest_queued_age_seconds",
    "commerce_webhook_deliveries_pending",
    "commerce_webhook_deliveries_failed_last_hour",
    "commerce_listings",
    "commerce_marketplace_calls_last_hour",
    "commerce_worker_heartbeat_age_seconds",
)
REQUEST_SERIES = (
    "commerce_http_requests",
    "commerce_http_request_duration_seconds",
    "commerce_rate_limit_refusals",
)


def scrape(text):
    """``{family name: {(sample name, labels): value}}`` via prometheus_client's parser."""
    families = {}
    for family in text_string_to_metric_families(text):
        families[family.name] = {
            (s.name, tuple(sorted(s.labels.items()))): s.value for s in family.samples
        }
    return families


def seed_fleet(tenant_id):
    """Jobs, deliveries, sync history and a heartbeat; returns what the gauges must say."""
    now = now_ms()
    moves = (
        [("a_type", "queued"), ("a_type", "queued"), ("a_type", "running"), ("b_type", "queued")]
        + [("a_type", "completed")] * 3
        + [("b_type", "failed"), ("b_type", "cancelled"), ("b_type", "completed")]
        + [("b_type", "running")]
    )
    for i, (job_type, status) in enumerate(moves):
        # inserted queued and moved on, as every job is (the counts follow the moves)
        Job.create(id=f"job_{i}", tenant_id=tenant_id, type=job_type, run_at=now - 30_000 - i)
        if status != "queued":
            Job.update(status="running").where(Job.id == f"job_{i}").execute()
        if status not in ("queued", "running"):
            done = {"status": status, "completed_at": now}
            Job.update(**done).where(Job.id == f"job_{i}").execute()
    # a job that failed and was put back (a retry): counted once, where it is now
    Job.update(status="failed", completed_at=now).where(Job.id == "job_10").execute()
    Job.update(status="queued", completed_at=None).where(Job.id == "job_10").execute()
    for i, (status, finished) in enumerate(
        [("pending", None)] * 3
        + [("failed", now - 60_000), ("failed", now - 7_200_000)]
        + [("succeeded", now)]
    ):
        WebhookDelivery.create(
            id=f"dlv_{i}",
            tenant_id=tenant_id,
            endpoint_id="whk_1",
            event_id=f"evt_{i}",
            event_type="order.created",
            event_seq=i,
            status=status,
            finished_at=finished,
        )
    for i, status in enumerate(["succeeded", "succeeded", "failed"]):
        SyncAttempt.create(
            id=f"syn_{i}",
            tenant=tenant_id,
            marketplace="amazon",
            resource_type="product",
            resource_id="prod_1",
            operation="push",
            status=status,
        )
    WorkerProcess.create(id="w-1", hostname="h", pid=1, concurrency=1, last_seen_at=now - 4_000)
    return {
        ("a_type", "queued"): 2,
        ("a_type", "running"): 1,
        ("a_type", "completed"): 3,
        ("a_type", "failed"): 0,
        ("a_type", "cancelled"): 0,
        ("b_type", "queued"): 2,  # one of them back from failed
        ("b_type", "running"): 0,
        ("b_type", "completed"): 1,
        ("b_type", "failed"): 1,
        ("b_type", "cancelled"): 1,
    }


def check_fleet(families, expected_jobs):
    jobs = {
        (dict(labels)["type"], dict(labels)["status"]): value
        for (_, labels), value in families["commerce_jobs"].items()
    }
    for key, n in expected_jobs.items():
        assert jobs[key] == n, (key, jobs)
    statuses = ("queued", "running", "completed", "failed", "cancelled")
    for job_type in {t for t, _ in jobs}:  # every status of every type, 0 when none
        assert {s for t, s in jobs if t == job_type} == set(statuses), job_type

    def value(name, **labels):
        return families[name][(name, tuple(sorted(labels.items())))]

    assert 29 <= value("commerce_jobs_oldest_queued_age_seconds") < 120
    assert value("commerce_webhook_deliveries_pending") == 3
    assert value("commerce_webhook_deliveries_failed_last_hour") == 1
    assert (
        value("commerce_marketplace_calls_last_hour", marketplace="amazon", status="succeeded") == 2
    )
    assert value("commerce_marketplace_calls_last_hour", marketplace="amazon", status="failed") == 1
    assert value("commerce_listings", sync_status="pending") >= 0
    assert 3 <= value("commerce_worker_heartbeat_age_seconds") < 60
    assert value("commerce_database_up") == 1
    assert value("commerce_metrics_query_errors") == 0
