"""Scopes follow the data (DESIGN 3): dispatching a job needs the scope of what it touches,
and a job's params, result and error details need ai-jobs:read or the job's domain read
scope; internal jobs are readable with their domain's read scope only."""

import pytest

from commerce_api.auth.models import SCOPES
from commerce_api.jobs import registry
from commerce_api.jobs.models import Job
from commerce_api.jobs.services import enqueue_job
from tests.support.factories import headers_for
from tests.support.pricing_support import connect_sandbox

# Written out by hand (not read from the registry): a new job type must be added here.
DOMAIN_SCOPE = {
    "pricing_recalculate": "pricing:write",
    "competitor_scan": "pricing:write",
    "review_sentiment": "products:read",
    "listing_optimize": "products:read",
    "llm_visibility_score": "products:read",
    "return_classify": "orders:read",
    "marketplace_sync": "products:read",  # internal
    "order_pull": "orders:read",  # internal
    "order_cancellation": "orders:read",  # internal
    "products_import": "products:read",  # internal
    "inventory_import": "inventory:read",  # internal
    "listings_import": "products:read",  # internal
}
INTERNAL = {
    "marketplace_sync",
    "order_pull",
    "order_cancellation",
    "products_import",
    "inventory_import",
    "listings_import",
}
VALID_PARAMS = {
    "pricing_recalculate": {"marketplace": "amazon", "apply": True},
    "competitor_scan": {"marketplace": "amazon"},
    "review_sentiment": {},
    "listing_optimize": {"skus": ["MUG-1"]},
    "llm_visibility_score": {"skus": ["MUG-1"]},
    "return_classify": {},
}
READ_SCOPES = [s for s in SCOPES if s.endswith(":read")]


def queued(app):
    with app.app_context():
        return Job.select().count()


def test_every_registered_type_declares_the_scope_the_table_expects(app):
    built_in = {
        name
        for name in registry.known_types()
        if getattr(registry.get(name).run, "__module__", "").startswith("commerce_api.")
    }
    assert built_in == set(DOMAIN_SCOPE)
    for name, scope in DOMAIN_SCOPE.items():
        assert registry.get(name).scope == scope
        assert registry.get(name).internal == (name in INTERNAL)


@pytest.mark.parametrize("job_type", ["pricing_recalculate", "competitor_scan"])
def test_ai_jobs_write_alone_cannot_dispatch_pricing_jobs(app, client, tenant, job_type):
    headers = headers_for(tenant, ["ai-jobs:write"])
    body = {"type": job_type, "params": VALID_PARAMS[job_type]}
    response = client.post("/api/ai-jobs", json=body, headers=headers)
    assert response.status_code == 403
    error = response.get_json()["error"]
    assert error["code"] == "INSUFFICIENT_SCOPE"
    assert error["details"]["required_scope"] == "pricing:write"
    batch = {"jobs": [{"type": "review_sentiment", "params": {}}, body]}
    response = client.post(
        "/api/ai-jobs/batch",
        json=batch,
        headers=headers_for(tenant, ["ai-jobs:write", "products:read"]),
    )
    assert response.status_code == 403
    error = response.get_json()["error"]
    assert error["code"] == "INSUFFICIENT_SCOPE"
    assert error["details"] == {"required_scope": "pricing:write", "type": job_type, "index": 1}
    assert queued(app) == 0

    allowed = headers_for(tenant, ["ai-jobs:write", "pricing:write"])
    assert client.post("/api/ai-jobs", json=body, headers=allowed).status_code == 201
    batch = {"jobs": [body, body]}
    assert client.post("/api/ai-jobs/batch", json=batch, headers=allowed).status_code == 201
    assert queued(app) == 3


def test_the_pricing_route_still_dispatches_with_pricing_write(app, client, tenant):
    with app.app_context():
        connect_sandbox(tenant, "amazon")
    headers = headers_for(tenant, ["pricing:write"])
    response = client.post(
        "/api/pricing/recalculate", json={"marketplace": "amazon", "skus": ["X-1"]}, headers=headers
    )
    assert response.status_code == 200, response.get_json()
    assert queued(app) == 1


@pytest.mark.parametrize("scope", SCOPES)
@pytest.mark.parametrize("job_type", sorted(VALID_PARAMS))
def test_dispatch_table(app, client, tenant, job_type, scope, monkeypatch):
    """Every public type with ai-jobs:write plus one other scope: accepted exactly when that
    scope is the type's own (a write scope never stands in for a read scope)."""
    # an LLM is configured (never called: nothing runs the job), so llm_visibility_score
    # is not refused at dispatch with LLM_NOT_CONFIGURED
    monkeypatch.setitem(app.config, "LLM_BASE_URL", "http://127.0.0.1:9/v1")
    monkeypatch.setitem(app.config, "LLM_MODELS", "model-a")
    headers = headers_for(tenant, sorted({"ai-jobs:write", scope}))
    body = {"type": job_type, "params": VALID_PARAMS[job_type]}
    response = client.post("/api/ai-jobs", json=body, headers=headers)
    if scope == DOMAIN_SCOPE[job_type]:
        assert response.status_code == 201, response.get_json()
        assert queued(app) == 1
    else:
        assert response.status_code == 403
        assert response.get_json()["error"]["details"]["required_scope"] == DOMAIN_SCOPE[job_type]
        assert queued(app) == 0


def _finished_jobs(app, tenant):
    """One job of every type: the public ones completed with a result, the internal ones
    failed with error details."""
    ids = {}
    with app.app_context():
        for job_type in DOMAIN_SCOPE:
            job = enqueue_job(
                tenant.id, job_type, {"secret_param": job_type}, internal=job_type in INTERNAL
            )
            if job_type in INTERNAL:
                values = {
                    "status": "failed",
                    "error": {"code": "X", "message": "m", "details": {"order_id": "ord_1"}},
                }
            else:
                values = {"status": "completed", "result": {"secret_result": 1}}
            Job.update(completed_at=job.created_at + 1, **values).where(Job.id == job.id).execute()
            ids[job_type] = job.id
    return ids


@pytest.mark.parametrize("scope", SCOPES)
def test_read_table(app, client, tenant, scope):
    """Each scope alone, reading a job of every type by id and by type."""
    ids = _finished_jobs(app, tenant)
    headers = headers_for(tenant, [scope])
    for job_type, job_id in ids.items():
        domain_read = DOMAIN_SCOPE[job_type].partition(":")[0] + ":read"
        one = client.get(f"/api/ai-jobs/{job_id}", headers=headers)
        listed = client.get(f"/api/ai-jobs?type={job_type}", headers=headers)
        if scope not in READ_SCOPES or (job_type in INTERNAL and scope != domain_read):
            for response in (one, listed):
                assert response.status_code == 403, (job_type, scope)
                error = response.get_json()["error"]
                assert error["code"] == "INSUFFICIENT_SCOPE"
            if scope in READ_SCOPES:
                assert error["details"]["required_scope"] == domain_read
            continue
        assert one.status_code == 200 and listed.status_code == 200, (job_type, scope)
        shown = one.get_json()["data"]
        assert listed.get_json()["data"] == [shown]
        if scope in ("ai-jobs:read", domain_read):
            assert "redacted" not in shown
            assert shown["params"] == {"secret_param": job_type}
            if job_type in INTERNAL:
                assert shown["error"]["details"] == {"order_id": "ord_1"}
            else:
                assert shown["result"] == {"secret_result": 1}
        else:
            assert shown["redacted"] is True
            assert "params" not in shown and "result" not in shown
            assert "secret_" not in str(shown)
            assert shown["status"] == "completed" and shown["type"] == job_type


def test_a_webhooks_read_key_sees_return_jobs_redacted(app, client, tenant):
    ids = _finished_jobs(app, tenant)
    headers = headers_for(tenant, ["webhooks:read"])
    body = client.get("/api/ai-jobs?type=return_classify", headers=headers).get_json()
    assert [job["id"] for job in body["data"]] == [ids["return_classify"]]
    assert body["data"][0]["redacted"] is True
    assert "secret" not in str(body)
    # the unfiltered list (public jobs) is redacted row by row
    body = client.get("/api/ai-jobs", headers=headers).get_json()
    assert len(body["data"]) == len(VALID_PARAMS)
    assert all(job["redacted"] is True for job in body["data"])
    assert "secret" not in str(body)
    assert client.get("/api/orders", headers=headers).status_code == 403
    # orders:read sees the return jobs whole, and the pricing ones redacted
    headers = headers_for(tenant, ["orders:read"])
    jobs = {j["type"]: j for j in client.get("/api/ai-jobs", headers=headers).get_json()["data"]}
    assert jobs["return_classify"]["result"] == {"secret_result": 1}
    assert jobs["pricing_recalculate"]["redacted"] is True


def test_a_redacted_failed_job_keeps_its_error_code_not_its_details(app, client, tenant):
    with app.app_context():
        job = enqueue_job(tenant.id, "return_classify", {"skus": ["A"]})
        error = {"code": "X", "message": "m", "retry_count": 0, "details": {"order": "ord_1"}}
        Job.update(status="failed", error=error, completed_at=job.created_at + 1).where(
            Job.id == job.id
        ).execute()
    shown = client.get(
        f"/api/ai-jobs/{job.id}", headers=headers_for(tenant, ["pricing:read"])
    ).get_json()["data"]
    assert shown["redacted"] is True
    assert shown["error"] == {"code": "X", "message": "m", "retry_count": 0}


def test_fields_cannot_bring_redacted_data_back(app, client, tenant):
    ids = _finished_jobs(app, tenant)
    headers = headers_for(tenant, ["inventory:read"])
    response = client.get(
        f"/api/ai-jobs/{ids['pricing_recalculate']}?fields=params,result,redacted", headers=headers
    )
    assert response.get_json()["data"] == {"id": ids["pricing_recalculate"], "redacted": True}
