"""What a job looks like in answers: documented and serialized from here.

Which of its fields a job shows depends on its status (DESIGN 8) and on what the caller
may read (``redacted``); ``store.serialize_job`` says which.
"""

import marshmallow as ma

from .models import JOB_STATUSES, PRIORITIES

# What every job shows (``params`` left out when ``redacted``); the rest depends on its status.
JOB_HEAD = (
    "id",
    "type",
    "status",
    "priority",
    "params",
    "attempts",
    "created_at",
    "estimated_completion_at",
)


class JobErrorSchema(ma.Schema):
    code = ma.fields.String(metadata={"example": "WORKER_TIMEOUT"})
    message = ma.fields.String()
    retry_count = ma.fields.Integer()
    details = ma.fields.Dict()


class JobProgressSchema(ma.Schema):
    done = ma.fields.Integer(metadata={"description": "Items processed so far."})
    total = ma.fields.Integer(metadata={"description": "Items to process in this attempt."})


class JobSchema(ma.Schema):
    id = ma.fields.String(metadata={"example": "job_01JD3Q9Z7G0000000000000000"})
    type = ma.fields.String()
    status = ma.fields.String(validate=ma.validate.OneOf(JOB_STATUSES))
    priority = ma.fields.String(validate=ma.validate.OneOf(list(PRIORITIES)))
    params = ma.fields.Dict()
    attempts = ma.fields.Integer()
    created_at = ma.fields.DateTime(metadata={"example": "2026-11-22T10:04:05.123Z"})
    estimated_completion_at = ma.fields.DateTime(allow_none=True)
    started_at = ma.fields.DateTime()
    progress = ma.fields.Nested(JobProgressSchema)
    completed_at = ma.fields.DateTime()
    duration_seconds = ma.fields.Integer()
    result = ma.fields.Dict()
    error = ma.fields.Nested(JobErrorSchema)
    failed_at = ma.fields.DateTime()
    cancelled_at = ma.fields.DateTime()
    cancel_reason = ma.fields.String()
    batch_id = ma.fields.String()
    batch_index = ma.fields.Integer()
    redacted = ma.fields.Boolean(
        metadata={
            "description": "Present (true) when `params`, `result` and `error.details` are "
            "left out: they need `ai-jobs:read` or the job's domain read scope."
        }
    )
