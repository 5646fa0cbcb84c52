"""AI job request and response schemas, and field helpers for the job types' params.

Each job type's params schema lives with its domain's ``tasks.py`` (see ``registry.py``).
"""

import marshmallow as ma

from ..http.lists import (
    FieldsArgsSchema,
    ListArgsSchema,
    envelope_schema,
    fields_arg,
    list_schema,
)
from ..http.schemas import NotBlank, StrictBoolean, StrictSchema  # noqa: F401 (job types use NotBlank)
from .models import JOB_STATUSES, PRIORITIES
from .shapes import JobSchema
from .store import JOB_FIELDS

MARKETPLACE = ma.validate.Length(min=1, max=64)


def skus_field(required, maximum):
    """A list of 1..maximum SKUs."""
    return ma.fields.List(
        ma.fields.String(validate=ma.validate.Length(min=1, max=64)),
        required=required,
        validate=ma.validate.Length(min=1, max=maximum),
    )


# Requests -----------------------------------------------------------------------------

PRIORITY = ma.fields.String(
    load_default="normal",
    validate=ma.validate.OneOf(list(PRIORITIES)),
    metadata={"description": "`high` jobs are taken first, then `normal`, then `low`."},
)


class JobCreateSchema(StrictSchema):
    type = ma.fields.String(
        required=True,
        validate=ma.validate.Length(min=1, max=64),
        metadata={"example": "pricing_recalculate"},
    )
    params = ma.fields.Dict(
        keys=ma.fields.String(),
        load_default=dict,
        metadata={"description": "Type-specific input, checked against the type's schema."},
    )
    priority = PRIORITY


class BatchItemSchema(JobCreateSchema):
    pass


class BatchCreateSchema(StrictSchema):
    jobs = ma.fields.List(
        ma.fields.Nested(BatchItemSchema),
        required=True,
        validate=ma.validate.Length(min=1, max=20),
        metadata={"description": "1 to 20 jobs of `{type, params, priority}`."},
    )
    sequential = StrictBoolean(
        load_default=False,
        metadata={
            "description": "Run the jobs one after another; a failure or cancellation "
            "cancels the jobs after it."
        },
    )


class JobListArgsSchema(ListArgsSchema):
    fields = fields_arg(JOB_FIELDS)
    type = ma.fields.String(validate=ma.validate.Length(min=1, max=64))
    status = ma.fields.String(validate=ma.validate.OneOf(JOB_STATUSES))
    priority = ma.fields.String(validate=ma.validate.OneOf(list(PRIORITIES)))
    batch_id = ma.fields.String(validate=ma.validate.Length(min=1, max=40))
    start_date = ma.fields.Date(metadata={"description": "Created on or after (UTC date)."})
    end_date = ma.fields.Date(metadata={"description": "Created on or before (UTC date)."})

    @ma.validates_schema
    def _dates(self, data, **kwargs):
        if (
            data.get("start_date")
            and data.get("end_date")
            and data["start_date"] > data["end_date"]
        ):
            raise ma.ValidationError("Must not be after end_date.", "start_date")


class JobFieldsArgsSchema(FieldsArgsSchema):
    fields = fields_arg(JOB_FIELDS)


# Response documentation ---------------------------------------------------------------


JobEnvelopeSchema = envelope_schema("JobEnvelopeSchema", JobSchema)


JobListSchema = list_schema("JobListSchema", JobSchema)


class BatchJobSchema(ma.Schema):
    id = ma.fields.String()
    type = ma.fields.String()
    status = ma.fields.String(validate=ma.validate.OneOf(JOB_STATUSES))
    priority = ma.fields.String(validate=ma.validate.OneOf(list(PRIORITIES)))
    estimated_completion_at = ma.fields.String()


class BatchSchema(ma.Schema):
    batch_id = ma.fields.String(metadata={"example": "batch_01JD3Q9Z7G0000000000000000"})
    sequential = ma.fields.Boolean()
    jobs = ma.fields.List(ma.fields.Nested(BatchJobSchema))


BatchEnvelopeSchema = envelope_schema("BatchEnvelopeSchema", BatchSchema)
