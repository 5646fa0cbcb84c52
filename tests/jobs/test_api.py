"""The AI jobs API: dispatch, read, list, cancel, batches; every error code."""

import json
import os
import subprocess
import sys

import pytest

from commerce_api.jobs import completion, registry
from commerce_api.jobs import queue as jobqueue
from commerce_api.jobs.models import Job
from commerce_api.jobs.services import enqueue_job
from commerce_api.timeutil import now_ms, parse_timestamp
from tests.support import jobs_support
from tests.support.factories import headers_for, make_tenant
from tests.support.jobs_support import dispatch, job_count

jobs_app = jobs_support.jobs_app  # the fixture

SPEC_JOB_TYPES = [
    "pricing_recalculate",
    "review_sentiment",
    "return_classify",
    "llm_visibility_score",
    "competitor_scan",
    "listing_optimize",
]
PRICING = {"skus": ["MUG-1", "MUG-2"], "marketplace": "amazon_de"}
SCAN = {"marketplace": "amazon", "skus": ["A"]}


def claim_one(app, worker_id="test-worker"):
    with app.app_context():
        jobs = jobqueue.claim_jobs(worker_id, 1, 30_000)
    assert len(jobs) == 1
    return jobs[0]


# Dispatch -------------------------------------------------------------------------------


def test_dispatch_queues_a_job(client, headers, jobs_app):
    before = now_ms()
    response = client.post(
        "/api/ai-jobs",
        json={"type": "pricing_recalculate", "params": PRICING, "priority": "high"},
        headers=headers,
    )
    assert response.status_code == 201
    job = response.get_json()["data"]
    assert job["id"].startswith("job_")
    assert response.headers["Location"] == f"/api/ai-jobs/{job['id']}"
    assert job["type"] == "pricing_recalculate"
    assert job["status"] == "queued"
    assert job["priority"] == "high"
    assert job["params"] == {**PRICING, "apply": False}  # the default filled in
    assert job["attempts"] == 0
    assert "started_at" not in job and "result" not in job and "error" not in job
    created = parse_timestamp(job["created_at"])
    assert before - 1 <= created <= now_ms()
    estimate = parse_timestamp(job["estimated_completion_at"])
    # nothing ahead: the type's typical duration
    assert estimate - created == registry.typical_seconds("pricing_recalculate") * 1000
    fetched = client.get(f"/api/ai-jobs/{job['id']}", headers=headers).get_json()["data"]
    assert fetched == job


def test_priority_defaults_to_normal(client, headers, jobs_app):
    job = dispatch(client, headers, "competitor_scan", SCAN)
    assert job["priority"] == "normal"


def test_estimate_counts_the_queue_ahead(client, headers, jobs_app):
    first = dispatch(client, headers, "pricing_recalculate", PRICING)
    second = dispatch(client, headers, "pricing_recalculate", PRICING)
    third = dispatch(client, headers, "pricing_recalculate", PRICING)
    urgent = dispatch(client, headers, "pricing_recalculate", PRICING, priority="high")

    def wait(job):
        return parse_timestamp(job["estimated_completion_at"]) - parse_timestamp(job["created_at"])

    typical = registry.typical_seconds("pricing_recalculate") * 1000
    assert wait(first) == typical
    assert typical < wait(second) < wait(third)
    assert wait(urgent) == typical  # high priority: nothing ahead of it


@pytest.mark.parametrize(
    "body, field",
    [
        ({"params": PRICING}, "type"),
        ({"type": 7, "params": PRICING}, "type"),
        ({"type": "pricing_recalculate", "params": ["x"]}, "params"),
        ({"type": "pricing_recalculate", "params": PRICING, "priority": "urgent"}, "priority"),
        ({"type": "pricing_recalculate", "params": PRICING, "colour": "red"}, "colour"),
    ],
)
def test_dispatch_body_errors(client, headers, jobs_app, body, field):
    response = client.post("/api/ai-jobs", json=body, headers=headers)
    assert response.status_code == 422
    error = response.get_json()["error"]
    assert error["code"] == "VALIDATION_ERROR"
    assert field in error["details"]["fields"]
    with jobs_app.app_context():
        assert job_count() == 0


@pytest.mark.parametrize(
    "job_type, params, path",
    [
        ("pricing_recalculate", {"skus": ["A"]}, "marketplace"),
        ("pricing_recalculate", {"skus": []}, "skus"),
        ("pricing_recalculate", {"skus": ["A"], "apply": "yes"}, "apply"),
        ("pricing_recalculate", {"skus": ["A"], "dry_run": True}, "dry_run"),
        ("competitor_scan", {"skus": "A"}, "skus"),
        ("return_classify", {"start_date": "2026-02-01", "end_date": "2026-01-01"}, "start_date"),
        ("llm_visibility_score", {"skus": ["A"], "queries": []}, "queries"),
        ("test_task", {"sleep": 99}, "sleep"),
    ],
)
def test_dispatch_checks_params_against_the_type_schema(
    client, headers, jobs_app, job_type, params, path
):
    response = client.post(
        "/api/ai-jobs", json={"type": job_type, "params": params}, headers=headers
    )
    assert response.status_code == 422, response.get_json()
    error = response.get_json()["error"]
    assert error["code"] == "VALIDATION_ERROR"
    assert path in error["details"]["fields"]["params"]
    with jobs_app.app_context():
        assert job_count() == 0


@pytest.mark.parametrize(
    "job_type", ["no_such_type", "marketplace_sync", "order_cancellation", "PRICING_RECALCULATE"]
)
def test_unknown_and_internal_types_are_invalid(client, headers, jobs_app, job_type):
    response = client.post("/api/ai-jobs", json={"type": job_type, "params": {}}, headers=headers)
    assert response.status_code == 422
    error = response.get_json()["error"]
    assert error["code"] == "INVALID_JOB_TYPE"
    assert error["details"]["type"] == job_type
    assert "pricing_recalculate" in error["details"]["allowed"]
    assert "marketplace_sync" not in error["details"]["allowed"]
    with jobs_app.app_context():
        assert job_count() == 0


def test_the_package_registers_no_test_job_types(tmp_path):
    """Without EXTRA_TASK_MODULES a deployment knows only the service's own job types."""
    script = (
        "import json; from commerce_api import create_app; from commerce_api.jobs import registry;"
        f"create_app({{'DATABASE_URL': 'sqlite:///{tmp_path}/x.db'}});"
        "print(json.dumps([registry.public_types(), registry.known_types()]))"
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("COMMERCE_")}
    out = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, env=env, check=True
    ).stdout
    public, known = json.loads(out.splitlines()[-1])
    assert sorted(public) == sorted(SPEC_JOB_TYPES)
    internal = ["marketplace_sync", "order_cancellation", "order_pull"]
    internal += ["products_import", "inventory_import", "listings_import"]
    assert sorted(known) == sorted([*SPEC_JOB_TYPES, *internal])
    assert not any(name.startswith("test_") for name in known)


def test_dispatch_needs_the_write_scope(client, app, tenant, jobs_app):
    for scopes in (["ai-jobs:read"], ["products:write", "pricing:write"]):
        headers = headers_for(tenant, scopes=scopes)
        response = client.post(
            "/api/ai-jobs", json={"type": "pricing_recalculate", "params": PRICING}, headers=headers
        )
        assert response.status_code == 403
        error = response.get_json()["error"]
        assert error["code"] == "INSUFFICIENT_SCOPE"
        assert error["details"]["required_scope"] == "ai-jobs:write"
    with app.app_context():
        assert job_count() == 0


def test_queue_full_per_tenant(client, headers, tenant, jobs_app, monkeypatch):
    monkeypatch.setitem(jobs_app.config, "JOB_QUEUE_CAPACITY", 3)
    jobs = [dispatch(client, headers, "competitor_scan", SCAN) for _ in range(3)]
    with jobs_app.app_context():  # internal jobs never count against the capacity
        enqueue_job(tenant.id, "marketplace_sync", {"sku": "A"}, internal=True)
    response = client.post(
        "/api/ai-jobs", json={"type": "competitor_scan", "params": SCAN}, headers=headers
    )
    assert response.status_code == 429
    error = response.get_json()["error"]
    assert error["code"] == "QUEUE_FULL"
    assert error["details"]["capacity"] == 3 and error["details"]["queued"] == 3
    retry_after = int(response.headers["Retry-After"])
    assert 1 <= retry_after <= 60
    assert error["details"]["retry_after_seconds"] == retry_after
    with jobs_app.app_context():
        assert Job.select().where(Job.internal == False).count() == 3  # noqa: E712
    # another tenant has its own capacity
    other = headers_for(make_tenant())
    dispatch(client, other, "competitor_scan", SCAN)
    # a running job is no longer queued: room for one more
    claim_one(jobs_app)
    dispatch(client, headers, "competitor_scan", SCAN)
    # cancelling frees a place as well
    assert client.delete(f"/api/ai-jobs/{jobs[2]['id']}", headers=headers).status_code == 204
    dispatch(client, headers, "competitor_scan", SCAN)


# Read -----------------------------------------------------------------------------------


def test_get_job_of_another_tenant_is_not_found(client, headers, jobs_app):
    job = dispatch(client, headers, "competitor_scan", SCAN)
    other = headers_for(make_tenant())
    for path in (f"/api/ai-jobs/{job['id']}", "/api/ai-jobs/job_01J00000000000000000000000"):
        response = client.get(path, headers=other)
        assert response.status_code == 404
        assert response.get_json()["error"]["code"] == "JOB_NOT_FOUND"
    response = client.delete(f"/api/ai-jobs/{job['id']}", headers=other)
    assert response.status_code == 404
    assert response.get_json()["error"]["code"] == "JOB_NOT_FOUND"
    assert (
        client.get(f"/api/ai-jobs/{job['id']}", headers=headers).get_json()["data"]["status"]
        == "queued"
    )


def test_any_read_scope_may_query(client, tenant, jobs_app):
    writer = headers_for(tenant, scopes=["ai-jobs:write", "pricing:write"])
    job = dispatch(client, writer, "competitor_scan", SCAN)
    for scope in ("ai-jobs:read", "products:read", "orders:read", "inventory:read", "pricing:read"):
        reader = headers_for(tenant, scopes=[scope])
        assert client.get(f"/api/ai-jobs/{job['id']}", headers=reader).status_code == 200
        assert client.get("/api/ai-jobs", headers=reader).status_code == 200
    writer_only = client.get("/api/ai-jobs", headers=writer)
    assert writer_only.status_code == 403
    assert writer_only.get_json()["error"]["code"] == "INSUFFICIENT_SCOPE"


def test_get_job_fields(client, headers, jobs_app):
    job = dispatch(client, headers, "competitor_scan", SCAN)
    response = client.get(f"/api/ai-jobs/{job['id']}?fields=status,type", headers=headers)
    assert response.get_json()["data"] == {
        "id": job["id"],
        "status": "queued",
        "type": "competitor_scan",
    }
    bad = client.get(f"/api/ai-jobs/{job['id']}?fields=colour", headers=headers)
    assert bad.status_code == 422


def test_internal_jobs_are_readable_but_not_listed(client, headers, tenant, jobs_app):
    with jobs_app.app_context():
        sync = enqueue_job(tenant.id, "marketplace_sync", {"sku": "A"}, internal=True)
    public = dispatch(client, headers, "competitor_scan", SCAN)
    fetched = client.get(f"/api/ai-jobs/{sync.id}", headers=headers)
    assert fetched.status_code == 200
    assert fetched.get_json()["data"]["type"] == "marketplace_sync"
    listed = client.get("/api/ai-jobs", headers=headers).get_json()
    assert [j["id"] for j in listed["data"]] == [public["id"]]
    assert listed["meta"]["total"] == 1
    only_sync = client.get("/api/ai-jobs?type=marketplace_sync", headers=headers).get_json()
    assert [j["id"] for j in only_sync["data"]] == [sync.id]
    cancel = client.delete(f"/api/ai-jobs/{sync.id}", headers=headers)
    assert cancel.status_code == 409
    assert cancel.get_json()["error"]["code"] == "JOB_NOT_CANCELLABLE"
    assert (
        client.get(f"/api/ai-jobs/{sync.id}", headers=headers).get_json()["data"]["status"]
        == "queued"
    )


# List -----------------------------------------------------------------------------------


def test_list_filters_and_pages(client, headers, jobs_app):
    a = dispatch(client, headers, "competitor_scan", SCAN, priority="low")
    b = dispatch(client, headers, "pricing_recalculate", PRICING)
    c = dispatch(
        client,
        headers,
        "competitor_scan",
        {"marketplace": "amazon", "skus": ["B"]},
        priority="high",
    )
    d = dispatch(client, headers, "listing_optimize", {"skus": ["C"]})
    assert client.delete(f"/api/ai-jobs/{d['id']}", headers=headers).status_code == 204
    other = headers_for(make_tenant())
    dispatch(client, other, "competitor_scan", SCAN)

    listed = client.get("/api/ai-jobs", headers=headers).get_json()
    assert [j["id"] for j in listed["data"]] == [d["id"], c["id"], b["id"], a["id"]]
    assert listed["meta"] == {"total": 4, "page": 1, "limit": 50, "nextCursor": None}

    def ids(query):
        response = client.get(f"/api/ai-jobs?{query}", headers=headers)
        assert response.status_code == 200, response.get_json()
        return [j["id"] for j in response.get_json()["data"]]

    assert ids("type=competitor_scan") == [c["id"], a["id"]]
    assert ids("status=cancelled") == [d["id"]]
    assert ids("status=queued&type=competitor_scan&priority=high") == [c["id"]]
    assert ids("order=asc") == [a["id"], b["id"], c["id"], d["id"]]
    assert ids("fields=status")[0] == d["id"]

    seen, cursor, pages = [], None, 0
    while True:
        query = "limit=3" + (f"&cursor={cursor}" if cursor else "")
        body = client.get(f"/api/ai-jobs?{query}", headers=headers).get_json()
        pages += 1
        assert body["meta"]["page"] == pages and body["meta"]["total"] == 4
        seen += [j["id"] for j in body["data"]]
        cursor = body["meta"]["nextCursor"]
        if cursor is None:
            break
    assert pages == 2 and seen == [d["id"], c["id"], b["id"], a["id"]]


def test_list_date_filters_are_inclusive(client, headers, jobs_app):
    jobs = [dispatch(client, headers, "competitor_scan", SCAN) for _ in range(3)]
    days = ["2026-03-01T00:00:00.000Z", "2026-03-02T23:59:59.999Z", "2026-03-03T00:00:00.000Z"]
    with jobs_app.app_context():
        for job, moment in zip(jobs, days, strict=True):
            Job.update(created_at=parse_timestamp(moment)).where(Job.id == job["id"]).execute()

    def ids(query):
        response = client.get(f"/api/ai-jobs?{query}&order=asc", headers=headers)
        assert response.status_code == 200, response.get_json()
        return [j["id"] for j in response.get_json()["data"]]

    assert ids("start_date=2026-03-02") == [jobs[1]["id"], jobs[2]["id"]]
    assert ids("end_date=2026-03-02") == [jobs[0]["id"], jobs[1]["id"]]
    assert ids("start_date=2026-03-02&end_date=2026-03-02") == [jobs[1]["id"]]
    assert ids("start_date=2026-03-01&end_date=2026-03-03") == [j["id"] for j in jobs]


@pytest.mark.parametrize(
    "query, status, code",
    [
        ("limit=0", 422, "VALIDATION_ERROR"),
        ("limit=201", 422, "VALIDATION_ERROR"),
        ("status=done", 422, "VALIDATION_ERROR"),
        ("type=no_such_type", 422, "VALIDATION_ERROR"),
        ("priority=urgent", 422, "VALIDATION_ERROR"),
        ("start_date=yesterday", 422, "VALIDATION_ERROR"),
        ("start_date=2026-03-02&end_date=2026-03-01", 422, "VALIDATION_ERROR"),
        ("colour=red", 422, "VALIDATION_ERROR"),
        ("cursor=not-a-cursor", 400, "INVALID_CURSOR"),
    ],
)
def test_list_query_errors(client, headers, jobs_app, query, status, code):
    response = client.get(f"/api/ai-jobs?{query}", headers=headers)
    assert response.status_code == status
    assert response.get_json()["error"]["code"] == code


def test_list_limit_maximum_is_200(client, headers, jobs_app):
    response = client.get("/api/ai-jobs?limit=200", headers=headers)
    assert response.status_code == 200
    assert response.get_json()["meta"]["limit"] == 200


# Cancel ---------------------------------------------------------------------------------


def test_cancel_a_queued_job(client, headers, jobs_app):
    job = dispatch(client, headers, "competitor_scan", SCAN)
    response = client.delete(f"/api/ai-jobs/{job['id']}", headers=headers)
    assert response.status_code == 204
    assert response.data == b""
    fetched = client.get(f"/api/ai-jobs/{job['id']}", headers=headers).get_json()["data"]
    assert fetched["status"] == "cancelled"
    assert fetched["cancel_reason"] == "requested"
    assert parse_timestamp(fetched["cancelled_at"]) >= parse_timestamp(fetched["created_at"])
    again = client.delete(f"/api/ai-jobs/{job['id']}", headers=headers)
    assert again.status_code == 409
    assert again.get_json()["error"]["details"]["status"] == "cancelled"
    # a cancelled job is never claimed
    with jobs_app.app_context():
        assert jobqueue.claim_jobs("w", 5, 30_000) == []


def test_running_and_finished_jobs_are_not_cancellable(client, headers, jobs_app):
    job = dispatch(client, headers, "test_task", {})
    claimed = claim_one(jobs_app)
    response = client.delete(f"/api/ai-jobs/{job['id']}", headers=headers)
    assert response.status_code == 409
    error = response.get_json()["error"]
    assert error["code"] == "JOB_NOT_CANCELLABLE"
    assert error["details"]["status"] == "running"
    running = client.get(f"/api/ai-jobs/{job['id']}", headers=headers).get_json()["data"]
    assert running["status"] == "running" and running["attempts"] == 1 and running["started_at"]
    with jobs_app.app_context():
        assert completion.complete_job(claimed, "test-worker", {"ok": True})
    response = client.delete(f"/api/ai-jobs/{job['id']}", headers=headers)
    assert response.status_code == 409
    assert response.get_json()["error"]["details"]["status"] == "completed"
    done = client.get(f"/api/ai-jobs/{job['id']}", headers=headers).get_json()["data"]
    assert done["status"] == "completed" and done["result"] == {"ok": True}
    assert done["duration_seconds"] == 0
    assert parse_timestamp(done["completed_at"]) >= parse_timestamp(done["started_at"])


def test_cancel_needs_the_write_scope(client, tenant, jobs_app):
    writer = headers_for(tenant, scopes=["ai-jobs:write", "pricing:write"])
    job = dispatch(client, writer, "competitor_scan", SCAN)
    reader = headers_for(tenant, scopes=["ai-jobs:read"])
    response = client.delete(f"/api/ai-jobs/{job['id']}", headers=reader)
    assert response.status_code == 403
    assert response.get_json()["error"]["code"] == "INSUFFICIENT_SCOPE"
    assert (
        client.get(f"/api/ai-jobs/{job['id']}", headers=reader).get_json()["data"]["status"]
        == "queued"
    )


# Batch ----------------------------------------------------------------------------------


def test_batch_dispatch(client, headers, jobs_app):
    body = {
        "jobs": [
            {"type": "pricing_recalculate", "params": PRICING},
            {"type": "competitor_scan", "params": SCAN, "priority": "high"},
            {"type": "listing_optimize", "params": {"skus": ["A"]}},
        ]
    }
    response = client.post("/api/ai-jobs/batch", json=body, headers=headers)
    assert response.status_code == 201
    batch = response.get_json()["data"]
    assert batch["batch_id"].startswith("batch_")
    assert batch["sequential"] is False
    assert [(j["type"], j["status"], j["priority"]) for j in batch["jobs"]] == [
        ("pricing_recalculate", "queued", "normal"),
        ("competitor_scan", "queued", "high"),
        ("listing_optimize", "queued", "normal"),
    ]
    for index, item in enumerate(batch["jobs"]):
        job = client.get(f"/api/ai-jobs/{item['id']}", headers=headers).get_json()["data"]
        assert job["batch_id"] == batch["batch_id"] and job["batch_index"] == index
        assert job["estimated_completion_at"] == item["estimated_completion_at"]
    listed = client.get(f"/api/ai-jobs?batch_id={batch['batch_id']}&order=asc", headers=headers)
    assert [j["id"] for j in listed.get_json()["data"]] == [j["id"] for j in batch["jobs"]]
    # parallel: all three claimable at once
    with jobs_app.app_context():
        assert len(jobqueue.claim_jobs("w", 10, 30_000)) == 3


def test_sequential_batch_holds_all_but_the_first(client, headers, jobs_app):
    body = {
        "sequential": True,
        "jobs": [
            {"type": "competitor_scan", "params": {"marketplace": "amazon", "skus": [s]}}
            for s in "ABC"
        ],
    }
    batch = client.post("/api/ai-jobs/batch", json=body, headers=headers).get_json()["data"]
    assert batch["sequential"] is True
    estimates = [parse_timestamp(j["estimated_completion_at"]) for j in batch["jobs"]]
    typical = registry.typical_seconds("competitor_scan") * 1000
    assert estimates[1] - estimates[0] == typical and estimates[2] - estimates[1] == typical
    with jobs_app.app_context():
        claimed = jobqueue.claim_jobs("w", 10, 30_000)
        assert [j.id for j in claimed] == [batch["jobs"][0]["id"]]
        assert completion.complete_job(claimed[0], "w", {})
        claimed = jobqueue.claim_jobs("w", 10, 30_000)
        assert [j.id for j in claimed] == [batch["jobs"][1]["id"]]


def test_cancelling_a_sequential_job_cancels_the_rest(client, headers, jobs_app):
    body = {
        "sequential": True,
        "jobs": [
            {"type": "competitor_scan", "params": {"marketplace": "amazon", "skus": [s]}}
            for s in "ABCD"
        ],
    }
    batch = client.post("/api/ai-jobs/batch", json=body, headers=headers).get_json()["data"]
    ids = [j["id"] for j in batch["jobs"]]
    assert client.delete(f"/api/ai-jobs/{ids[1]}", headers=headers).status_code == 204
    states = [client.get(f"/api/ai-jobs/{i}", headers=headers).get_json()["data"] for i in ids]
    assert [s["status"] for s in states] == ["queued", "cancelled", "cancelled", "cancelled"]
    assert [s.get("cancel_reason") for s in states] == [
        None,
        "requested",
        "batch_predecessor_cancelled",
        "batch_predecessor_cancelled",
    ]


@pytest.mark.parametrize(
    "body, field",
    [
        ({}, "jobs"),
        ({"jobs": []}, "jobs"),
        ({"jobs": [{"type": "competitor_scan", "params": SCAN}] * 21}, "jobs"),
        ({"jobs": [{"type": "competitor_scan", "colour": 1}]}, "jobs"),
        ({"jobs": ["competitor_scan"]}, "jobs"),
        (
            {"jobs": [{"type": "competitor_scan", "params": SCAN}], "sequential": "y"},
            "sequential",
        ),
        ({"jobs": [{"type": "competitor_scan", "params": SCAN}], "extra": 1}, "extra"),
    ],
)
def test_batch_body_errors(client, headers, jobs_app, body, field):
    response = client.post("/api/ai-jobs/batch", json=body, headers=headers)
    assert response.status_code == 422, response.get_json()
    error = response.get_json()["error"]
    assert error["code"] == "VALIDATION_ERROR"
    assert field in error["details"]["fields"]
    with jobs_app.app_context():
        assert job_count() == 0


def test_batch_of_twenty_is_accepted(client, headers, jobs_app):
    body = {"jobs": [{"type": "competitor_scan", "params": SCAN}] * 20}
    response = client.post("/api/ai-jobs/batch", json=body, headers=headers)
    assert response.status_code == 201
    assert len(response.get_json()["data"]["jobs"]) == 20


def test_batch_with_an_invalid_type_queues_nothing(client, headers, jobs_app):
    body = {
        "jobs": [
            {"type": "competitor_scan", "params": SCAN},
            {"type": "marketplace_sync", "params": {}},
        ]
    }
    response = client.post("/api/ai-jobs/batch", json=body, headers=headers)
    assert response.status_code == 422
    error = response.get_json()["error"]
    assert error["code"] == "INVALID_JOB_TYPE"
    assert error["details"]["index"] == 1 and error["details"]["type"] == "marketplace_sync"
    with jobs_app.app_context():
        assert job_count() == 0


def test_batch_with_bad_params_names_the_item(client, headers, jobs_app):
    body = {
        "jobs": [
            {"type": "competitor_scan", "params": SCAN},
            {"type": "competitor_scan", "params": {"skus": 5}},
        ]
    }
    response = client.post("/api/ai-jobs/batch", json=body, headers=headers)
    assert response.status_code == 422
    fields = response.get_json()["error"]["details"]["fields"]
    assert list(fields["jobs"]) == ["1"] and "skus" in fields["jobs"]["1"]["params"]
    with jobs_app.app_context():
        assert job_count() == 0


def test_batch_over_capacity_queues_nothing(client, headers, jobs_app, monkeypatch):
    monkeypatch.setitem(jobs_app.config, "JOB_QUEUE_CAPACITY", 5)
    dispatch(client, headers, "competitor_scan", SCAN)
    body = {"jobs": [{"type": "competitor_scan", "params": SCAN}] * 5}
    response = client.post("/api/ai-jobs/batch", json=body, headers=headers)
    assert response.status_code == 429
    assert response.get_json()["error"]["code"] == "QUEUE_FULL"
    assert int(response.headers["Retry-After"]) >= 1
    with jobs_app.app_context():
        assert job_count() == 1
    body["jobs"] = body["jobs"][:4]
    assert client.post("/api/ai-jobs/batch", json=body, headers=headers).status_code == 201


def test_batch_needs_the_write_scope(client, tenant, jobs_app):
    reader = headers_for(tenant, scopes=["ai-jobs:read"])
    body = {"jobs": [{"type": "competitor_scan", "params": SCAN}]}
    response = client.post("/api/ai-jobs/batch", json=body, headers=reader)
    assert response.status_code == 403
    assert response.get_json()["error"]["code"] == "INSUFFICIENT_SCOPE"


def test_requests_without_credentials_are_refused(client, jobs_app):
    assert client.get("/api/ai-jobs").status_code == 401
    assert client.post("/api/ai-jobs", json={"type": "competitor_scan"}).status_code == 401
