"""AI jobs API: /api/ai-jobs."""

from flask import g
from flask.views import MethodView

from ..auth.middleware import require_scope
from ..auth.models import SCOPES
from ..http.blueprint import Blueprint
from ..http.envelope import list_page, no_content, one, resource_page
from . import services, store
from .schemas import (
    BatchCreateSchema,
    BatchEnvelopeSchema,
    JobCreateSchema,
    JobEnvelopeSchema,
    JobFieldsArgsSchema,
    JobListArgsSchema,
    JobListSchema,
)

blp = Blueprint(
    "ai_jobs",
    __name__,
    url_prefix="/api/ai-jobs",
    description="Asynchronous AI jobs: dispatch, poll, list, cancel, batches.",
)

# ai-jobs:read, or any other read scope, may query jobs (SPEC: AI jobs)
READ_SCOPES = ("ai-jobs:read",) + tuple(
    s for s in SCOPES if s.endswith(":read") and s != "ai-jobs:read"
)


@blp.route("")
class JobViews(MethodView):
    @require_scope(*READ_SCOPES)
    @blp.arguments(JobListArgsSchema, location="query")
    @blp.returns(200, JobListSchema)
    @blp.errors("INVALID_CURSOR", "VALIDATION_ERROR")
    def get(self, args):
        """List jobs (internal jobs only when `type` names them)"""
        return list_page(
            args, store.JOB_FIELDS, services.list_jobs, g.auth.tenant_id, g.auth.has_scope
        )

    @require_scope("ai-jobs:write")
    @blp.arguments(JobCreateSchema)
    @blp.returns(201, JobEnvelopeSchema)
    @blp.errors(
        "INVALID_JOB_TYPE", "INSUFFICIENT_SCOPE", "LLM_NOT_CONFIGURED", "QUEUE_FULL", body=True
    )
    def post(self, data):
        """Dispatch a job"""
        job = services.dispatch_job(
            g.auth.tenant_id, data, g.auth.created_by, holds=g.auth.has_scope
        )
        return one(job, 201, headers={"Location": f"/api/ai-jobs/{job['id']}"})


@blp.route("/batch")
class JobBatchViews(MethodView):
    @require_scope("ai-jobs:write")
    @blp.arguments(BatchCreateSchema)
    @blp.returns(201, BatchEnvelopeSchema)
    @blp.errors(
        "INVALID_JOB_TYPE", "INSUFFICIENT_SCOPE", "LLM_NOT_CONFIGURED", "QUEUE_FULL", body=True
    )
    def post(self, data):
        """Dispatch up to 20 jobs, in parallel or one after another"""
        batch = services.dispatch_batch(
            g.auth.tenant_id,
            data["jobs"],
            data["sequential"],
            g.auth.created_by,
            holds=g.auth.has_scope,
        )
        return one(batch, 201)


@blp.route("/<string:job_id>")
class JobByIdViews(MethodView):
    @require_scope(*READ_SCOPES)
    @blp.arguments(JobFieldsArgsSchema, location="query")
    @blp.returns(200, JobEnvelopeSchema)
    @blp.errors("JOB_NOT_FOUND", "VALIDATION_ERROR")
    def get(self, args, job_id):
        """Get a job's status, and its result or error"""
        return resource_page(
            args, store.JOB_FIELDS, services.get_job, g.auth.tenant_id, job_id, g.auth.has_scope
        )

    @require_scope("ai-jobs:write")
    @blp.returns(204)
    @blp.errors("JOB_NOT_FOUND", "JOB_NOT_CANCELLABLE")
    def delete(self, job_id):
        """Cancel a queued job"""
        services.cancel_job(g.auth.tenant_id, job_id)
        return no_content()
